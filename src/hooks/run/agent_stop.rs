//! `agent-stop`: an agent harness's Stop event (Claude Code's hook JSON on stdin) is refused
//! while the sprint is unproven, so an agent cannot end its turn on unproven work.

use super::*;

/// The fields of a Claude Code hook event that agent-stop reads.
#[derive(Debug, Default, serde::Deserialize)]
struct AgentEvent {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    stop_hook_active: bool,
    #[serde(default)]
    hook_event_name: Option<String>,
}

/// The working directory a hook event names (`cwd`), when it has one.
pub fn event_cwd(event: &str) -> Option<std::path::PathBuf> {
    serde_json::from_str::<serde_json::Value>(event)
        .ok()?
        .get("cwd")?
        .as_str()
        .filter(|c| !c.is_empty())
        .map(std::path::PathBuf::from)
}

const DEFAULT_AGENT_STOP_LIMIT: u32 = 3;

/// `rails.agentStopLimit`: how many Stops in a row with nothing moved are blocked.
fn agent_stop_limit(store: &Store, out: &mut HookResult) -> u32 {
    match store.config_string("rails.agentStopLimit") {
        None => DEFAULT_AGENT_STOP_LIMIT,
        Some(v) => match v.trim().parse::<u32>() {
            Ok(n) if n >= 1 => n,
            _ => {
                out.say(format!(
                    "git-rails: rails.agentStopLimit = {v:?} is not a whole number of at least 1; using {DEFAULT_AGENT_STOP_LIMIT}"
                ));
                DEFAULT_AGENT_STOP_LIMIT
            }
        },
    }
}

/// The sprint HEAD's own commit names in a `Rails-Sprint:` trailer.
fn head_trailer_sprint(store: &Store) -> Result<Option<String>> {
    let Some(head) = store.head_commit()? else {
        return Ok(None);
    };
    Ok(trailers(&store.commit_info(head)?.message, "Rails-Sprint")
        .into_iter()
        .last())
}

/// `agent-stop`: a Claude Code Stop or PreToolUse hook. Exit 2 with the gate's report while
/// the session's sprint is unproven, 0 when it is done or no sprint is named.
///
/// The sprint is the one this session was last blocked on (kept under the common git dir,
/// whatever branch HEAD is on now), else the branch's binding, else HEAD's `Rails-Sprint:`.
/// A Stop with `stop_hook_active` after a block where nothing moved (same evidence tip, same
/// tracked tree) counts; after `rails.agentStopLimit` of them in a row the turn is let end
/// (exit 0), said on stderr and recorded. A PreToolUse event blocks the tool call (exit 2).
pub fn agent_stop(store: &Store, event: &str) -> Result<HookResult> {
    use crate::hooks::agent;
    let mut out = HookResult::default();
    let ev: AgentEvent = if event.trim().is_empty() {
        AgentEvent::default()
    } else {
        serde_json::from_str(event).map_err(|e| {
            Error::refused(format!("agent-stop: stdin is not a hook event (JSON): {e}"))
        })?
    };
    let session = ev.session_id.as_deref().filter(|s| !s.is_empty());
    let pre_tool = ev.hook_event_name.as_deref() == Some("PreToolUse");
    let head = store.head_commit()?;
    let mut kept = match session {
        Some(id) => agent::load(store, id)?,
        None => None,
    };
    let mut sprint = kept.as_ref().map(|k| k.sprint.clone());
    // A kept sprint that is done now releases the session; the branch's sprint is next.
    if let (Some(id), Some(s)) = (session, sprint.as_deref()) {
        if gate::evaluate(store, &SprintId::recorded(s), gate::Judged::commit(head))
            .is_ok_and(|r| r.done)
        {
            agent::forget(store, id)?;
            out.say(format!("git-rails: {s} is done; session {id} is released"));
            kept = None;
            sprint = None;
        }
    }
    if sprint.is_none() {
        sprint = match bound_sprint(store)? {
            Some(s) => Some(s),
            None => head_trailer_sprint(store)?,
        };
    }
    let Some(sprint) = sprint else {
        out.say("git-rails: no sprint is bound to the branch or named by HEAD; nothing to gate");
        return Ok(out);
    };
    let checked = SprintId::parse(&sprint)
        .and_then(|s| Ok((gate::evaluate(store, &s, gate::Judged::commit(head))?, s)));
    let (report, sprint) = match checked {
        Ok(r) => r,
        Err(e) => {
            out.code = 2;
            out.say(format!(
                "The verification gate could not run; completion remains blocked: {}",
                e.message
            ));
            return Ok(out);
        }
    };
    if report.done {
        if let Some(id) = session {
            agent::forget(store, id)?;
        }
        out.say(format!("git-rails: {sprint} {} is done", report.version));
        return Ok(out);
    }
    let unproven = |out: &mut HookResult| {
        out.code = 2;
        out.say(format!(
            "The contract {sprint} {} still has unproven criteria. Prove each before you {}:",
            report.version,
            if pre_tool { "use this tool" } else { "stop" }
        ));
        gate_lines(&report, out);
    };
    let Some(id) = session else {
        unproven(&mut out);
        return Ok(out);
    };
    let evidence_tip = store
        .ref_target(&Namespace::Evidence.name(&sprint))?
        .map(|t| t.to_string());
    let tree = store.tracked_tree().ok().map(|t| t.to_string());
    let still = kept.as_ref().is_some_and(|k| {
        sprint == k.sprint.as_str() && k.evidence_tip == evidence_tip && k.tree == tree
    });
    let mut state = agent::Session {
        sprint: sprint.to_string(),
        blocks: 1,
        evidence_tip,
        tree,
    };
    if pre_tool {
        // A tool call is blocked while unproven; it does not count toward the Stop limit.
        state.blocks = kept.as_ref().map(|k| k.blocks).unwrap_or(0);
        agent::save(store, id, &state)?;
        unproven(&mut out);
        return Ok(out);
    }
    if ev.stop_hook_active && still {
        let limit = agent_stop_limit(store, &mut out);
        let blocks = kept.as_ref().map(|k| k.blocks).unwrap_or(0);
        if blocks >= limit {
            let message = agent::record_ended_turn(store, &sprint, id, head)?;
            state.blocks = 0;
            agent::save(store, id, &state)?;
            out.say(format!(
                "git-rails: {sprint} {} is still unproven, but nothing moved in {blocks} blocked stops in a row (rails.agentStopLimit = {limit}); the turn ends here",
                report.version
            ));
            out.say(format!("git-rails: recorded: {message}"));
            out.say(format!("  see `git rails status {sprint}`"));
            return Ok(out);
        }
        state.blocks = blocks + 1;
    }
    agent::save(store, id, &state)?;
    unproven(&mut out);
    Ok(out)
}
