//! `git rails pipeline status`: the state and its history, as the `rails-pipeline-status/v1`
//! document and as text for a person.
//!
//! Kept apart because it only reads the record; the CLI renders, this decides what is shown.

use std::io::Write;

use serde_json::Value;

use super::state::{Event, State};

/// The `rails-pipeline-status/v1` document.
pub fn status_json(state: &State, events: &[Event]) -> Value {
    serde_json::json!({
        "schema": "rails-pipeline-status/v1",
        "sprint": state.sprint,
        "state": state.state,
        "attempts": state.attempts,
        "reviewRound": state.reviewer_round(),
        "changesRequested": state.review_round,
        "escalatedFrom": state.escalated_from,
        "startedAt": state.started_at,
        "updatedAt": state.updated_at,
        "history": events,
    })
}

/// Writes a person's view of the pipeline.
pub fn render_status(state: &State, events: &[Event], out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "pipeline {}: {} (attempts {}, review round {})",
        state.sprint,
        state.state.as_str(),
        state.attempts,
        state.reviewer_round()
    )?;
    for e in events {
        writeln!(
            out,
            "  #{:<3} {} {:<9} {:>12} -> {:<12} {}{}{}",
            e.seq,
            e.at.get(..19).unwrap_or(&e.at),
            e.event,
            e.from.as_str(),
            e.to.as_str(),
            e.actor
                .map(|a| format!("{} ", a.as_str()))
                .unwrap_or_default(),
            e.verdict
                .clone()
                .map(|v| format!("{v} "))
                .unwrap_or_default(),
            e.reason.clone().unwrap_or_default()
        )?;
    }
    Ok(())
}
