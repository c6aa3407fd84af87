//! `run`, `resume` and `abort`, and the loop that drives a pipeline: spawn the actor of the
//! current state, parse its answer strictly, commit the transition, then announce it; failed
//! attempts up to `maxAttempts`, then an escalation.
//!
//! Kept apart from the record ([`super::state`]) and from what a verdict moves the pipeline to
//! (`verdict`): this is the only part that spawns processes.

use std::path::Path;
use std::time::Duration;

use super::announce::{announce, finish_notices};
use super::config::{self, PipelineConfig};
use super::handoff::{self, Actor, HandoffMessage};
use super::lock::take_lock;
use super::state::{commit, load, Event, PState, State};
use super::verdict::transition_for;
use super::{notify, now, pipeline_ref, Progress, SCHEMA};
use crate::contract;
use crate::contract::SprintId;
use crate::error::{Error, Result};
use crate::store::{ObjectId, Store};

/// Starts a new pipeline for `sprint` and runs it.
pub fn run(store: &Store, sprint: &SprintId, progress: &mut dyn Progress) -> Result<State> {
    let root = store.workdir()?.to_path_buf();
    let cfg = config::load_for(store, &root)?;
    let _lock = take_lock(store, sprint)?;
    if let Some((s, _)) = load(store, sprint)? {
        return Err(Error::refused(format!(
            "a pipeline for {sprint} already exists (state {})",
            s.state.as_str()
        ))
        .hint(match s.state {
            PState::Done | PState::Aborted => format!("its record stays in {}; see `git rails pipeline status {sprint}`", pipeline_ref(sprint)),
            _ => format!("continue it with `git rails pipeline resume {sprint}`, or end it with `git rails pipeline abort {sprint} --reason …`"),
        }));
    }
    let mut state = State {
        schema: SCHEMA.into(),
        sprint: sprint.to_string(),
        state: PState::Planning,
        attempts: 0,
        review_round: 0,
        review_round_base: 0,
        escalated_from: None,
        last_message: None,
        seq: 0,
        started_at: now(),
        updated_at: now(),
    };
    let start = Event::new("START", PState::Planning, PState::Planning);
    let (c, e) = commit(store, sprint, None, &mut state, start)?;
    progress.line(&format!(
        "pipeline {sprint}: started in planning ({})",
        &c.to_string()[..7]
    ));
    let bridge = notify::Bridge::start(&cfg.notify);
    announce(store, &bridge, sprint, &state, &e, c, progress);
    let end = drive(store, &root, &cfg, &bridge, sprint, progress);
    finish_notices(bridge, progress);
    end
}

/// Continues a pipeline from its last committed state (an escalated one goes back to the state
/// it was escalated from, with fresh attempts).
pub fn resume(store: &Store, sprint: &SprintId, progress: &mut dyn Progress) -> Result<State> {
    let root = store.workdir()?.to_path_buf();
    let cfg = config::load_for(store, &root)?;
    let _lock = take_lock(store, sprint)?;
    let bridge = notify::Bridge::start(&cfg.notify);
    let end = resume_locked(store, &root, &cfg, &bridge, sprint, progress);
    finish_notices(bridge, progress);
    end
}

fn resume_locked(
    store: &Store,
    root: &Path,
    cfg: &PipelineConfig,
    bridge: &notify::Bridge,
    sprint: &SprintId,
    progress: &mut dyn Progress,
) -> Result<State> {
    let (mut state, tip) = load_existing(store, sprint)?;
    if state.state.is_final() {
        return Err(Error::refused(format!(
            "the pipeline of {sprint} is {}; there is nothing to resume",
            state.state.as_str()
        ))
        .hint(format!("see `git rails pipeline status {sprint}`")));
    }
    if state.state == PState::Escalated {
        let back = state.escalated_from.unwrap_or(PState::Planning);
        state.state = back;
        state.attempts = 0;
        state.review_round_base = state.review_round;
        state.escalated_from = None;
        let ev = Event::new("RESUME", PState::Escalated, back)
            .reason("resumed by the user after escalation");
        let (c, e) = commit(store, sprint, Some(tip), &mut state, ev)?;
        progress.line(&format!("pipeline {sprint}: resumed in {}", back.as_str()));
        announce(store, bridge, sprint, &state, &e, c, progress);
    } else {
        progress.line(&format!(
            "pipeline {sprint}: resuming in {} (attempts so far: {})",
            state.state.as_str(),
            state.attempts
        ));
    }
    drive(store, root, cfg, bridge, sprint, progress)
}

/// Ends a pipeline with a reason.
pub fn abort(
    store: &Store,
    sprint: &SprintId,
    reason: &str,
    progress: &mut dyn Progress,
) -> Result<State> {
    let _lock = take_lock(store, sprint)?;
    let (mut state, tip) = load_existing(store, sprint)?;
    if state.state.is_final() {
        return Err(Error::refused(format!(
            "the pipeline of {sprint} is already {}",
            state.state.as_str()
        )));
    }
    let from = state.state;
    state.state = PState::Aborted;
    let mut ev = Event::new("ABORT", from, PState::Aborted).reason(reason);
    ev.attempt = state.attempts;
    let (c, e) = commit(store, sprint, Some(tip), &mut state, ev)?;
    let root = store.workdir()?.to_path_buf();
    if let Ok(cfg) = config::load_for(store, &root) {
        let bridge = notify::Bridge::start(&cfg.notify);
        announce(store, &bridge, sprint, &state, &e, c, progress);
        finish_notices(bridge, progress);
    }
    Ok(state)
}

/// How one spawn came out.
enum Answer {
    Message(HandoffMessage),
    Error(String),
    Timeout(String),
}

fn spawn_actor(
    root: &Path,
    cfg: &PipelineConfig,
    actor: Actor,
    sprint: &SprintId,
    contract_id: &str,
    attempt: u32,
    stdin: &[u8],
) -> Answer {
    let ac = cfg.actor(actor);
    let attempt = attempt.to_string();
    let vars: [(&str, &std::ffi::OsStr); 5] = [
        ("role", actor.as_str().as_ref()),
        ("sprint", sprint.as_str().as_ref()),
        ("contract", contract_id.as_ref()),
        ("workdir", root.as_os_str()),
        ("attempt", attempt.as_ref()),
    ];
    let argv: Vec<String> = ac
        .command
        .iter()
        .map(|a| {
            crate::process::substitute_placeholders(a, &vars)
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut r = crate::process::run_argv(
        &argv,
        root,
        &[],
        stdin,
        Duration::from_secs(ac.timeout_seconds),
    );
    // An actor's words go into the pipeline's records: redacted first (`crate::redact`).
    let redactor = crate::redact::Redactor::from_env();
    redactor.in_place(&mut r.stdout_tail);
    redactor.in_place(&mut r.stderr_tail);
    if r.timed_out {
        return Answer::Timeout(format!(
            "{} gave no answer within {} s; its process group was killed",
            actor.as_str(),
            ac.timeout_seconds
        ));
    }
    if let Some(e) = &r.spawn_error {
        return Answer::Error(format!("spawn failed: {e}"));
    }
    if r.exit_code != Some(0) {
        let tail = r
            .stderr_tail
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Answer::Error(format!(
            "{} exited with {}{}",
            actor.as_str(),
            r.describe(),
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            }
        ));
    }
    match handoff::parse(&r.stdout_tail) {
        Ok(m) => Answer::Message(m),
        Err(e) => Answer::Error(e),
    }
}

/// The loop: one actor at a time until a final or escalated state.
fn drive(
    store: &Store,
    root: &Path,
    cfg: &PipelineConfig,
    bridge: &notify::Bridge,
    sprint: &SprintId,
    progress: &mut dyn Progress,
) -> Result<State> {
    loop {
        let Some((mut state, tip)) = load(store, sprint)? else {
            return Err(Error::internal(format!(
                "{} vanished",
                pipeline_ref(sprint)
            )));
        };
        let Some(actor) = state.state.actor() else {
            return Ok(state);
        };
        if state.attempts >= cfg.retry.max_attempts {
            // A run killed between its last failed attempt and the escalation: escalate now
            // instead of spawning past maxAttempts.
            return escalate(store, bridge, sprint, state, tip, actor, progress);
        }
        let attempt = state.attempts + 1;
        let contract_id = contract::newest(store, sprint)?
            .map(|f| f.contract.id)
            .unwrap_or_default();
        progress.line(&format!(
            "pipeline {sprint}: {}: spawning {} (attempt {attempt}/{})",
            state.state.as_str(),
            actor.as_str(),
            cfg.retry.max_attempts
        ));
        let stdin = state
            .last_message
            .as_ref()
            .and_then(|m| serde_json::to_vec(m).ok())
            .unwrap_or_default();
        let answer = spawn_actor(root, cfg, actor, sprint, &contract_id, attempt, &stdin);
        let from = state.state;
        let mut ev = Event::new("", from, from);
        ev.actor = Some(actor);
        ev.attempt = attempt;
        // What the answer means: a transition, a failed attempt, or an abort.
        let outcome: std::result::Result<(PState, Option<String>), (String, String, bool)> =
            match answer {
                Answer::Timeout(why) => Err(("TIMEOUT".into(), why, false)),
                Answer::Error(why) => Err(("ERROR".into(), why, false)),
                Answer::Message(m) if m.actor() != actor => {
                    ev.verdict = Some(m.verdict());
                    ev.message = Some(m.clone());
                    Err((
                        "ERROR".into(),
                        format!(
                            "{} answered in {} (it is {}'s turn): an illegal transition",
                            m.actor().as_str(),
                            from.as_str(),
                            actor.as_str()
                        ),
                        true,
                    ))
                }
                Answer::Message(m) => {
                    ev.verdict = Some(m.verdict());
                    let r = transition_for(store, root, sprint, &mut state, &m, cfg);
                    ev.message = Some(m.clone());
                    match r {
                        Ok(next) => {
                            state.last_message = Some(m);
                            Ok(next)
                        }
                        Err(why) => Err(("ERROR".into(), why, false)),
                    }
                }
            };
        match outcome {
            Ok((next, reason)) => {
                ev.event = "HANDOFF".into();
                ev.to = next;
                ev.reason = reason;
                state.attempts = 0;
                if next == PState::Escalated {
                    state.escalated_from = Some(from);
                    ev.event = "ESCALATED".into();
                }
                state.state = next;
                let (c, e) = commit(store, sprint, Some(tip), &mut state, ev)?;
                progress.line(&format!(
                    "pipeline {sprint}: {} answered {} → {}",
                    actor.as_str(),
                    e.verdict.clone().unwrap_or_default(),
                    next.as_str()
                ));
                announce(store, bridge, sprint, &state, &e, c, progress);
            }
            Err((kind, why, fatal)) => {
                state.attempts += 1;
                ev.event = kind.clone();
                ev.reason = Some(why.clone());
                progress.line(&format!(
                    "pipeline {sprint}: {}: {kind}: {why}",
                    from.as_str()
                ));
                if fatal {
                    ev.to = PState::Aborted;
                    state.state = PState::Aborted;
                }
                let (c, e) = commit(store, sprint, Some(tip), &mut state, ev)?;
                announce(store, bridge, sprint, &state, &e, c, progress);
                if state.state.is_final() {
                    return Ok(state);
                }
                if state.attempts >= cfg.retry.max_attempts {
                    return escalate(store, bridge, sprint, state, c, actor, progress);
                }
                let backoff = cfg
                    .retry
                    .backoff_seconds
                    .saturating_mul(1u64 << (state.attempts - 1).min(16));
                if backoff > 0 {
                    progress.line(&format!("pipeline {sprint}: retrying in {backoff} s"));
                    std::thread::sleep(Duration::from_secs(backoff));
                }
            }
        }
    }
}

/// Commits the escalation after `maxAttempts` failures: its own event, notified with a mention.
fn escalate(
    store: &Store,
    bridge: &notify::Bridge,
    sprint: &SprintId,
    mut state: State,
    tip: ObjectId,
    actor: Actor,
    progress: &mut dyn Progress,
) -> Result<State> {
    let from = state.state;
    state.state = PState::Escalated;
    state.escalated_from = Some(from);
    let mut esc = Event::new("ESCALATED", from, PState::Escalated)
        .reason(format!("{} failed attempts", state.attempts));
    esc.actor = Some(actor);
    esc.attempt = state.attempts;
    let (c, e) = commit(store, sprint, Some(tip), &mut state, esc)?;
    announce(store, bridge, sprint, &state, &e, c, progress);
    progress.line(&format!(
        "pipeline {sprint}: escalated after {} failed attempts in {}; resume with `git rails pipeline resume {sprint}` or end it with `git rails pipeline abort {sprint} --reason …`",
        state.attempts,
        from.as_str()
    ));
    Ok(state)
}

/// The pipeline of `sprint` and its tip, or the refusal that names how to start one (resume and
/// abort need one to exist).
fn load_existing(store: &Store, sprint: &SprintId) -> Result<(State, ObjectId)> {
    load(store, sprint)?.ok_or_else(|| {
        Error::refused(format!("no pipeline for {sprint}"))
            .hint(format!("start one with `git rails pipeline run {sprint}`"))
    })
}
