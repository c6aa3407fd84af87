//! `agent-stop`: an agent harness's Stop event (Claude Code's hook JSON on stdin) is refused
//! while a sprint of the session is unproven, so an agent cannot end its turn on unproven work.
//!
//! The session is judged, not the folder: its repository is fixed at its first event seen
//! inside a rails repository and its sprints only grow ([`crate::hooks::agent`]); a later event
//! is judged there whatever its `cwd`. Claude Code blocks a Stop only on exit 2, so anything
//! that cannot be decided for a held session (an unreadable repository or session, a malformed
//! event, a gate that cannot run) is exit 2 with the reason, bounded by the
//! `rails.agentStopLimit` run of stops where nothing moved. A session never seen in a rails
//! repository is not held (exit 0); a subagent's stop is not gated (the parent's Stop holds).

use super::*;
use crate::hooks::agent::{self, Session};

/// The fields of a Claude Code hook event that agent-stop reads.
#[derive(Debug, Default, serde::Deserialize)]
struct AgentEvent {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    stop_hook_active: bool,
    #[serde(default)]
    hook_event_name: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
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

/// The sprints HEAD's own commit names in `Rails-Sprint:` trailers.
fn head_trailer_sprints(store: &Store) -> Result<Vec<String>> {
    let Some(head) = store.head_commit()? else {
        return Ok(Vec::new());
    };
    Ok(trailers(&store.commit_info(head)?.message, "Rails-Sprint"))
}

/// Whether `store` is a rails repository: it holds a frozen contract, or its branch is bound.
fn is_rails_repository(store: &Store) -> Result<bool> {
    Ok(!store.refs_under(Namespace::Contracts.prefix())?.is_empty()
        || bound_sprint(store)?.is_some())
}

/// The repository an event names (its `cwd`, else the current directory), if it is one.
fn repository_of(ev: &AgentEvent) -> Option<Store> {
    match ev.cwd.as_deref().filter(|c| !c.is_empty()) {
        Some(c) => Store::discover_from(std::path::Path::new(c)).ok(),
        None => Store::discover().ok(),
    }
}

/// `agent-stop`: a Claude Code Stop or PreToolUse hook. Exit 2 with the gate's report while a
/// sprint of the session is unproven, 0 when every one is done, none is named, or the session
/// is not held. Never an error: what cannot be decided for a held session is exit 2.
///
/// A Stop with `stop_hook_active` after a block where nothing moved (same evidence tips, same
/// tracked tree) counts; after `rails.agentStopLimit` of them in a row the turn is let end
/// (exit 0), said on stderr and recorded. A PreToolUse event blocks the tool call (exit 2).
pub fn agent_stop(event: &str) -> HookResult {
    let mut out = HookResult::default();
    let ev: AgentEvent = if event.trim().is_empty() {
        AgentEvent::default()
    } else {
        match serde_json::from_str(event) {
            Ok(ev) => ev,
            Err(e) => {
                out.code = 2;
                out.say(format!(
                    "git-rails: agent-stop: stdin is not a hook event (JSON: {e}), so the session cannot be judged; the stop is refused"
                ));
                return out;
            }
        }
    };
    if ev.hook_event_name.as_deref() == Some("SubagentStop") {
        out.say("git-rails: a subagent's stop is not gated; the parent's Stop holds the turn");
        return out;
    }
    match judge(&ev, &mut out) {
        Ok(()) => out,
        Err(e) => {
            out.code = 2;
            out.say(format!(
                "The verification gate could not run; completion remains blocked: {}",
                e.message
            ));
            if let Some(h) = e.hint {
                out.say(format!("  {h}"));
            }
            out
        }
    }
}

fn judge(ev: &AgentEvent, out: &mut HookResult) -> Result<()> {
    let pre_tool = ev.hook_event_name.as_deref() == Some("PreToolUse");
    let Some(id) = ev.session_id.as_deref().filter(|s| !s.is_empty()) else {
        // No session to hold: the event's repository, as it stands.
        let Some(store) = repository_of(ev) else {
            out.say("git-rails: the event names no session and no repository; nothing to gate");
            return Ok(());
        };
        let mut session = Session::default();
        grow(&store, &mut session)?;
        return judge_session(&store, None, session, None, ev, pre_tool, out);
    };
    let Some((store, session, kept)) = hold(id, ev, out)? else {
        return Ok(());
    };
    if ev.hook_event_name.as_deref() == Some("SessionStart") {
        out.say(format!(
            "git-rails: session {id} is held to {} ({})",
            session.repo,
            if session.sprints.is_empty() {
                "no sprint yet".to_string()
            } else {
                session.sprints.join(", ")
            }
        ));
        return Ok(());
    }
    judge_session(&store, Some(id), session, kept, ev, pre_tool, out)
}

/// The session `id` held (its repository, its sprints grown and saved, and what was kept
/// before this event), or None when it is not held: never seen in a rails repository.
fn hold(
    id: &str,
    ev: &AgentEvent,
    out: &mut HookResult,
) -> Result<Option<(Store, Session, Option<Session>)>> {
    let kept = agent::load(id)?;
    let (store, mut session) = match &kept {
        Some(k) => {
            let store = Store::open(std::path::Path::new(&k.repo)).map_err(|e| {
                e.context(format!(
                    "session {id} is held to the repository {}, which cannot be read",
                    k.repo
                ))
            })?;
            (store, k.clone())
        }
        None => {
            let Some(store) = repository_of(ev).filter(|s| is_rails_repository(s).unwrap_or(false))
            else {
                out.say(format!(
                    "git-rails: session {id} has not been seen in a rails repository; it is not held"
                ));
                return Ok(None);
            };
            let repo = match store.workdir() {
                Ok(w) => w.to_path_buf(),
                Err(_) => store.git_dir().to_path_buf(),
            };
            let session = Session {
                repo: repo.display().to_string(),
                ..Session::default()
            };
            (store, session)
        }
    };
    grow(&store, &mut session)?;
    agent::save(id, &session)?;
    Ok(Some((store, session, kept)))
}

/// Holds the session an event names (a PreToolUse call the guard lets through, say) without
/// judging it: its repository is fixed and its sprints grow. Quiet; what it cannot do, the
/// session's next Stop refuses.
pub fn agent_hold(event: &str) {
    let Ok(ev) = serde_json::from_str::<AgentEvent>(event) else {
        return;
    };
    if let Some(id) = ev.session_id.as_deref().filter(|s| !s.is_empty()) {
        let _ = hold(id, &ev, &mut HookResult::default());
    }
}

/// Every sprint bound to the session repository's branch or named by HEAD joins the session.
fn grow(store: &Store, session: &mut Session) -> Result<()> {
    let mut found: Vec<String> = bound_sprint(store)?.into_iter().collect();
    found.extend(head_trailer_sprints(store)?);
    for s in found {
        if !session.sprints.contains(&s) {
            session.sprints.push(s);
        }
    }
    Ok(())
}

fn judge_session(
    store: &Store,
    id: Option<&str>,
    mut session: Session,
    kept: Option<Session>,
    ev: &AgentEvent,
    pre_tool: bool,
    out: &mut HookResult,
) -> Result<()> {
    if session.sprints.is_empty() {
        out.say("git-rails: no sprint is bound to the branch or named by HEAD; nothing to gate");
        return Ok(());
    }
    let head = store.head_commit()?;
    let mut unproven = Vec::new();
    for name in &session.sprints {
        let sprint = SprintId::parse(name)
            .map_err(|e| e.context(format!("the session's sprint {name:?}")))?;
        let report = gate::evaluate(store, &sprint, gate::Judged::commit(head))?;
        if report.done {
            out.say(format!("git-rails: {sprint} {} is done", report.version));
        } else {
            unproven.push((sprint, report));
        }
    }
    if unproven.is_empty() {
        session.blocks = 0;
        if let Some(id) = id {
            agent::save(id, &session)?;
        }
        return Ok(());
    }
    let say_unproven = |out: &mut HookResult| {
        out.code = 2;
        for (sprint, report) in &unproven {
            out.say(format!(
                "The contract {sprint} {} still has unproven criteria. Prove each before you {}:",
                report.version,
                if pre_tool { "use this tool" } else { "stop" }
            ));
            gate_lines(report, out);
        }
    };
    let Some(id) = id else {
        say_unproven(out);
        return Ok(());
    };
    let mut tips = Vec::new();
    for (sprint, _) in &unproven {
        tips.push(
            store
                .ref_target(&Namespace::Evidence.name(sprint))?
                .map(|t| t.to_string()),
        );
    }
    let tree = store.tracked_tree().ok().map(|t| t.to_string());
    let still = kept
        .as_ref()
        .is_some_and(|k| k.evidence_tips == tips && k.tree == tree && k.blocks > 0);
    let before = kept.as_ref().map(|k| k.blocks).unwrap_or(0);
    session.evidence_tips = tips;
    session.tree = tree;
    if pre_tool {
        // A tool call is blocked while unproven; it does not count toward the Stop limit.
        session.blocks = before;
        agent::save(id, &session)?;
        say_unproven(out);
        return Ok(());
    }
    session.blocks = 1;
    if ev.stop_hook_active && still {
        let limit = agent_stop_limit(store, out);
        if before >= limit {
            for (sprint, report) in &unproven {
                let message = agent::record_ended_turn(store, sprint, id, head)?;
                out.say(format!(
                    "git-rails: {sprint} {} is still unproven, but nothing moved in {before} blocked stops in a row (rails.agentStopLimit = {limit}); the turn ends here",
                    report.version
                ));
                out.say(format!("git-rails: recorded: {message}"));
                out.say(format!("  see `git rails status {sprint}`"));
            }
            session.blocks = 0;
            agent::save(id, &session)?;
            return Ok(());
        }
        session.blocks = before + 1;
    }
    agent::save(id, &session)?;
    say_unproven(out);
    Ok(())
}
