//! What `agent-stop` remembers about an agent's session, and the record it leaves when a
//! session ends its turn with its sprint unproven.
//!
//! A session is kept by its `session_id` under `$XDG_STATE_HOME/git-rails/sessions/` (else
//! `~/.local/state/git-rails/sessions/`), outside every repository: the hooks judge the
//! session, not the folder an event names. Its repository is fixed at the first event of the
//! session seen inside a rails repository, and its sprints only grow: every sprint bound or
//! named there during the session joins it. A later event is judged there whatever its `cwd`
//! (a fresh nested repository, a folder outside any) or branch. The PreToolUse guard refuses
//! commands and edits that touch these files. The record of an ended turn is a commit on
//! `refs/rails/agent-stops/<sprint>`, which `status`, `gate --json` and the hooks read.

use serde::{Deserialize, Serialize};

use crate::contract::SprintId;
use crate::error::{Context, Error, Result};
use crate::store::refs::{self, Namespace};
use crate::store::{ObjectId, Store};

/// Where agent stops are kept (`evidence::kept` reads it by this name).
pub const STOPS: &str = refs::AGENT_STOPS;

/// What is kept for one session.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// The repository the session is held to (its work tree, or git dir when bare).
    pub repo: String,
    /// Every sprint bound or named there during the session, in the order they joined.
    pub sprints: Vec<String>,
    /// Stops blocked in a row with nothing moved.
    pub blocks: u32,
    /// What "nothing moved" compares: the unproven sprints' evidence tips and the tracked
    /// tree at the last block.
    #[serde(default)]
    pub evidence_tips: Vec<Option<String>>,
    #[serde(default)]
    pub tree: Option<String>,
}

/// The folder sessions are kept in: `$XDG_STATE_HOME/git-rails/sessions`, else
/// `$HOME/.local/state/git-rails/sessions` (an unset or relative `XDG_STATE_HOME` is ignored,
/// as its specification says).
pub fn sessions_dir() -> Result<std::path::PathBuf> {
    let base = match std::env::var_os("XDG_STATE_HOME")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
    {
        Some(d) => d,
        None => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| std::path::PathBuf::from(h).join(".local").join("state"))
            .ok_or_else(|| {
                Error::refused("agent-stop: neither XDG_STATE_HOME nor HOME is set, so sessions cannot be kept")
            })?,
    };
    Ok(base.join("git-rails").join("sessions"))
}

/// A session id as a file name: letters, digits, '-', '_' and '.', else refused.
fn session_file(id: &str) -> Result<std::path::PathBuf> {
    let ok = !id.is_empty()
        && id.len() <= 200
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        return Err(Error::refused(format!(
            "agent-stop: session_id {id:?} must be letters, digits, '-', '_' and '.'"
        )));
    }
    Ok(sessions_dir()?.join(format!("{id}.json")))
}

/// The kept session `id`, or None when it was never held. A file that does not read as a
/// session is an error: a held session is never silently let go.
pub fn load(id: &str) -> Result<Option<Session>> {
    let path = session_file(id)?;
    match std::fs::read(&path) {
        Ok(b) => serde_json::from_slice(&b).map(Some).map_err(|e| {
            Error::refused(format!(
                "agent-stop: the kept session {} does not read ({e})",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::internal(format!("reading {}: {e}", path.display()))),
    }
}

pub fn save(id: &str, s: &Session) -> Result<()> {
    let path = session_file(id)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).ctx(format!("creating {}", dir.display()))?;
    }
    let bytes = serde_json::to_vec_pretty(s).ctx("writing the session state")?;
    crate::store::atomic_write(&path, &bytes)
}

/// One turn an agent ended with its sprint unproven.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndedTurn {
    pub message: String,
    pub session: String,
    pub head: Option<String>,
    pub at: i64,
    pub record: String,
}

/// Appends the record of a turn ended unproven.
pub fn record_ended_turn(
    store: &Store,
    sprint: &SprintId,
    session: &str,
    head: Option<ObjectId>,
) -> Result<String> {
    let message = format!("agent ended its turn with {sprint} unproven (session {session})");
    let body = serde_json::json!({
        "schema": "rails-agent-stop/v1",
        "sprint": sprint,
        "session": session,
        "head": head.map(|h| h.to_string()),
        "message": message,
    });
    let refname = Namespace::AgentStops.name(sprint);
    let commit_msg = format!(
        "{message}\n\nRails-Session: {session}\nRails-Head: {}\n",
        head.map(|h| h.to_string()).unwrap_or_default()
    );
    for _ in 0..5 {
        let tip = store.ref_target(&refname)?;
        let file = (
            "stop.json".to_string(),
            serde_json::to_vec_pretty(&body).ctx("writing the record")?,
        );
        if store
            .append_commit(&refname, tip, &[file], &commit_msg)?
            .is_some()
        {
            return Ok(message);
        }
    }
    Err(Error::internal(format!(
        "{refname} kept moving; the record of the ended turn was not written"
    )))
}

/// Every turn ended unproven on `sprint`, oldest first.
pub fn ended_turns(store: &Store, sprint: &SprintId) -> Result<Vec<EndedTurn>> {
    let Some(tip) = store.ref_target(&Namespace::AgentStops.name(sprint))? else {
        return Ok(Vec::new());
    };
    let mut out: Vec<EndedTurn> = store
        .chain(tip)?
        .into_iter()
        .map(|c| EndedTurn {
            message: c.message.lines().next().unwrap_or("").to_string(),
            session: c.trailer("Rails-Session").unwrap_or_default(),
            head: c.trailer("Rails-Head").filter(|h| !h.is_empty()),
            at: c.time,
            record: c.id.to_string(),
        })
        .collect();
    out.sort_by_key(|t| t.at);
    Ok(out)
}
