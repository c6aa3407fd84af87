//! The pipeline's record: its states, the events that move it, the state as of the last
//! commit, and reading and committing them on `refs/rails/pipeline/<sprint>`.
//!
//! Kept apart from the run loop because it is a record format: `status`, `sync`'s merge and
//! the reports read it without running anything, and every write goes through `commit`.

use serde::{Deserialize, Serialize};

use super::handoff::{Actor, HandoffMessage};
use super::{now, pipeline_ref, SCHEMA};
use crate::contract::SprintId;
use crate::error::{Error, Result};
use crate::store::{self, ObjectId, Store};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PState {
    Planning,
    Implementing,
    Reviewing,
    Deploying,
    Done,
    Escalated,
    Aborted,
}

impl PState {
    pub fn as_str(self) -> &'static str {
        match self {
            PState::Planning => "planning",
            PState::Implementing => "implementing",
            PState::Reviewing => "reviewing",
            PState::Deploying => "deploying",
            PState::Done => "done",
            PState::Escalated => "escalated",
            PState::Aborted => "aborted",
        }
    }
    /// The actor whose turn it is.
    pub fn actor(self) -> Option<Actor> {
        match self {
            PState::Planning => Some(Actor::Harang),
            PState::Implementing => Some(Actor::Narang),
            PState::Reviewing => Some(Actor::Darang),
            PState::Deploying => Some(Actor::Erang),
            _ => None,
        }
    }
    pub fn is_final(self) -> bool {
        matches!(self, PState::Done | PState::Aborted)
    }
}

/// One committed event.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub seq: u64,
    pub at: String,
    /// `START`, `HANDOFF`, `ERROR`, `TIMEOUT`, `ESCALATED`, `RESUME`, `ABORT`.
    pub event: String,
    pub from: PState,
    pub to: PState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<Actor>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub attempt: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<HandoffMessage>,
}

impl Event {
    /// An event of `kind` from one state to another; the other fields start empty.
    pub(super) fn new(kind: &str, from: PState, to: PState) -> Event {
        Event {
            seq: 0,
            at: String::new(),
            event: kind.to_string(),
            from,
            to,
            actor: None,
            verdict: None,
            reason: None,
            attempt: 0,
            message: None,
        }
    }

    pub(super) fn reason(mut self, why: impl Into<String>) -> Event {
        self.reason = Some(why.into());
        self
    }
}

/// The pipeline's state as of its last commit.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    pub schema: String,
    pub sprint: String,
    pub state: PState,
    /// Failed attempts in the current state.
    pub attempts: u32,
    /// REQUEST_CHANGES rounds so far.
    pub review_round: u32,
    /// Review rounds already allowed by an earlier resume (escalation counts from here).
    #[serde(default)]
    pub review_round_base: u32,
    /// The state an escalation interrupted (resume continues there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalated_from: Option<PState>,
    /// The last valid hand-off message (the next actor's stdin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_message: Option<HandoffMessage>,
    pub seq: u64,
    pub started_at: String,
    pub updated_at: String,
}

impl State {
    /// The review round the reviewer is on, counted as the seed counts them: the first
    /// review is round 1, each REQUEST_CHANGES starts the next.
    pub fn reviewer_round(&self) -> u32 {
        self.review_round + 1
    }
}

/// Reads the state and the event history (oldest first).
pub fn load(store: &Store, sprint: &SprintId) -> Result<Option<(State, ObjectId)>> {
    let Some(tip) = store.ref_target(&pipeline_ref(sprint))? else {
        return Ok(None);
    };
    let bytes = store.read_file(tip, "state.json")?.ok_or_else(|| {
        Error::internal(format!(
            "{} at {tip} has no state.json",
            pipeline_ref(sprint)
        ))
    })?;
    let state: State = serde_json::from_slice(&bytes).map_err(|e| {
        Error::internal(format!(
            "{} at {tip}: state.json is not a {SCHEMA} state: {e}",
            pipeline_ref(sprint)
        ))
    })?;
    Ok(Some((state, tip)))
}

/// Every event, oldest first, read from the chain.
pub fn history(store: &Store, sprint: &SprintId) -> Result<Vec<Event>> {
    let Some(tip) = store.ref_target(&pipeline_ref(sprint))? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let chain = store.chain(tip)?;
    if chain.iter().any(|c| c.parents.len() > 1) {
        // `git rails sync` merged another clone's events: the tip's tree holds them all,
        // renumbered in the merged order.
        let mut names = store.list_dir(tip, "events")?;
        names.sort();
        for name in names {
            if let Some(bytes) = store.read_file(tip, &format!("events/{name}"))? {
                if let Ok(e) = serde_json::from_slice::<Event>(&bytes) {
                    out.push(e);
                }
            }
        }
        return Ok(out);
    }
    for info in chain {
        if let Some(seq) = info.trailer("Rails-Pipeline-Seq") {
            let path = format!("events/{:06}.json", seq.parse::<u64>().unwrap_or(0));
            if let Some(bytes) = store.read_file_in_tree(info.tree, &path)? {
                if let Ok(e) = serde_json::from_slice::<Event>(&bytes) {
                    out.push(e);
                }
            }
        }
    }
    Ok(out)
}

/// Commits a new state with its event; returns the commit.
pub(super) fn commit(
    store: &Store,
    sprint: &SprintId,
    tip: Option<ObjectId>,
    state: &mut State,
    mut event: Event,
) -> Result<(ObjectId, Event)> {
    state.seq += 1;
    state.updated_at = now();
    event.seq = state.seq;
    event.at = state.updated_at.clone();
    let mut sb = serde_json::to_vec_pretty(&state).map_err(|e| Error::internal(e.to_string()))?;
    sb.push(b'\n');
    let mut eb = serde_json::to_vec_pretty(&event).map_err(|e| Error::internal(e.to_string()))?;
    eb.push(b'\n');
    let files = vec![
        ("state.json".to_string(), sb),
        (format!("events/{:06}.json", state.seq), eb),
    ];
    let subject = format!(
        "pipeline {sprint} {} {} -> {}",
        event.event,
        event.from.as_str(),
        event.to.as_str()
    );
    let msg = store::message(
        &subject,
        event.reason.as_deref().unwrap_or(""),
        &[
            ("Rails-Sprint", sprint.to_string()),
            ("Rails-Pipeline-Event", event.event.clone()),
            ("Rails-Pipeline-State", event.to.as_str().to_string()),
            ("Rails-Pipeline-Seq", state.seq.to_string()),
        ],
    );
    match store.append_commit(&pipeline_ref(sprint), tip, &files, &msg)? {
        Some(id) => Ok((id, event)),
        None => Err(Error::refused(format!(
            "{} moved while this transition was written; nothing was recorded",
            pipeline_ref(sprint)
        ))
        .hint(format!("see `git rails pipeline status {sprint}`"))),
    }
}
