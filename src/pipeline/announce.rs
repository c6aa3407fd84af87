//! What each committed event says to people (the seed's messages, with a mention when the user
//! is needed) and handing it to the notification bridge ([`super::notify`]).
//!
//! Kept apart from the run loop because notifications follow the commit and never decide
//! anything: a failed delivery is logged, the pipeline goes on.

use super::state::{Event, PState, State};
use super::{notify, Progress};
use crate::contract::SprintId;
use crate::store::{ObjectId, Store};

/// The seed's message for an event, and whether it mentions the user.
fn message_for(
    sprint: &SprintId,
    e: &Event,
    state: &State,
    branch: Option<&str>,
) -> (String, bool) {
    match (e.event.as_str(), e.to) {
        ("ERROR" | "TIMEOUT", to) if to == e.from => (
            format!(
                "⚠️ {} {} in {} on {sprint} (attempt {}): {}",
                e.actor.map(|a| a.as_str()).unwrap_or("the actor"),
                if e.event == "TIMEOUT" { "timed out" } else { "failed" },
                e.from.as_str(),
                e.attempt,
                e.reason.clone().unwrap_or_default()
            ),
            false,
        ),
        ("ESCALATED", _) => (
            format!(
                "🚨 {sprint}: {} in {}. Your attention is needed: `git rails pipeline resume {sprint}` or `abort`",
                e.reason.clone().unwrap_or_else(|| "escalated".into()),
                e.from.as_str()
            ),
            true,
        ),
        (_, PState::Done) => (
            format!("✅ {sprint} is done. Please approve the deploy."),
            true,
        ),
        ("HANDOFF", PState::Implementing) if e.verdict.as_deref() == Some("REQUEST_CHANGES") => (
            // The seed counts rounds from 1 (the first review): after the first change request
            // the reviewer is on round 2.
            format!(
                "🔁 darang requested changes on {sprint} (round {})",
                state.reviewer_round()
            ),
            false,
        ),
        (_, PState::Planning) => (format!("🦊 harang started planning {sprint}"), false),
        (_, PState::Implementing) => {
            let branch = branch.map(|b| format!(" ({b})")).unwrap_or_default();
            (format!("⚙️ narang started implementing {sprint}{branch}"), false)
        }
        (_, PState::Reviewing) => (format!("🔎 darang started reviewing {sprint}"), false),
        (_, PState::Deploying) => (format!("🚀 erang started deploying {sprint}"), false),
        (_, PState::Aborted) => (
            format!(
                "🛑 {sprint} aborted: {}",
                e.reason.clone().unwrap_or_default()
            ),
            false,
        ),
        _ => (
            format!(
                "{sprint}: {} in {} ({})",
                e.event,
                e.from.as_str(),
                e.reason.clone().unwrap_or_default()
            ),
            false,
        ),
    }
}

pub(super) fn announce(
    store: &Store,
    bridge: &notify::Bridge,
    sprint: &SprintId,
    state: &State,
    e: &Event,
    commit: ObjectId,
    progress: &mut dyn Progress,
) {
    for f in bridge.take_failures() {
        progress.line(&f);
    }
    let branch = store.current_branch().ok().flatten();
    let (message, mention) = message_for(sprint, e, state, branch.as_deref());
    let ev = notify::Event {
        schema: "rails-pipeline-event/v1",
        sprint: sprint.to_string(),
        seq: e.seq,
        event: e.event.clone(),
        from: e.from.as_str().to_string(),
        to: e.to.as_str().to_string(),
        actor: e.actor.map(|a| a.as_str().to_string()),
        verdict: e.verdict.clone(),
        reason: e.reason.clone(),
        review_round: state.reviewer_round(),
        attempts: state.attempts,
        message,
        mention,
        commit: commit.to_string(),
    };
    bridge.send(&ev);
}

/// Ends a run's notifications: waits briefly for deliveries in flight and logs what failed.
pub(super) fn finish_notices(bridge: notify::Bridge, progress: &mut dyn Progress) {
    for f in bridge.finish(notify::GRACE) {
        progress.line(&f);
    }
}
