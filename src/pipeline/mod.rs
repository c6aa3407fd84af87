//! The planner → implementer → reviewer → deployer hand-offs as one persisted state machine.
//!
//! A hand-off **is** a state transition: the orchestrator spawns the actor of the current state,
//! parses its answer strictly ([`handoff`]), and commits the transition to
//! `refs/rails/pipeline/<sprint>` before anything else happens; notifications follow the commit
//! ([`notify`]). A run killed at any point resumes from the last committed state.

pub mod config;
pub mod handoff;
pub mod merge;
pub mod notify;

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::contract;
use crate::contract::SprintId;
use crate::error::{Error, Result};
use crate::store::{self, refs, ObjectId, Store};
use config::PipelineConfig;
use handoff::{Actor, HandoffMessage};

pub const SCHEMA: &str = "rails-pipeline/v1";

pub fn pipeline_ref(sprint: &str) -> String {
    refs::Namespace::Pipeline.name(sprint)
}

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
    fn new(kind: &str, from: PState, to: PState) -> Event {
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

    fn reason(mut self, why: impl Into<String>) -> Event {
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

/// What the run loop reports as it goes (progress for a person or a log).
pub trait Progress {
    fn line(&mut self, text: &str);
}

impl<F: FnMut(&str)> Progress for F {
    fn line(&mut self, text: &str) {
        self(text)
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

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

/// Holds the one-pipeline-per-repository lock; the holder file beside it says who holds it.
pub struct RunLock {
    _lock: store::Lock,
    holder: std::path::PathBuf,
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.holder);
    }
}

/// Takes the repository's pipeline lock without waiting, or refuses naming the holder: a
/// second run must not queue silently behind a long one.
pub fn take_lock(store: &Store, sprint: &SprintId) -> Result<RunLock> {
    let name = store::LockName::pipeline();
    let holder = store.lock_path(&name).with_extension("holder");
    let Some(lock) = store.try_lock(&name)? else {
        let who = std::fs::read_to_string(&holder).unwrap_or_default();
        let who = if who.trim().is_empty() {
            "holder unknown".to_string()
        } else {
            who.trim().to_string()
        };
        return Err(Error::refused(format!(
            "another pipeline is running in this repository ({who})"
        ))
        .hint("wait for it to end, or see `git rails pipeline status <sprint>`; one pipeline runs per repository"));
    };
    let _ = std::fs::write(
        &holder,
        format!(
            "sprint {sprint}, pid {}, since {}",
            std::process::id(),
            now()
        ),
    );
    Ok(RunLock {
        _lock: lock,
        holder,
    })
}

/// Commits a new state with its event; returns the commit.
fn commit(
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

fn announce(
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
fn finish_notices(bridge: notify::Bridge, progress: &mut dyn Progress) {
    for f in bridge.finish(notify::GRACE) {
        progress.line(&f);
    }
}

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
    let Some((mut state, tip)) = load(store, sprint)? else {
        return Err(Error::refused(format!("no pipeline for {sprint}"))
            .hint(format!("start one with `git rails pipeline run {sprint}`")));
    };
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
    let Some((mut state, tip)) = load(store, sprint)? else {
        return Err(Error::refused(format!("no pipeline for {sprint}"))
            .hint(format!("start one with `git rails pipeline run {sprint}`")));
    };
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
    let r = crate::process::run_argv(
        &argv,
        root,
        &[],
        stdin,
        Duration::from_secs(ac.timeout_seconds),
    );
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

/// The transition a valid message of the right actor asks for, or why it cannot be taken
/// (a failed attempt).
fn transition_for(
    store: &Store,
    root: &Path,
    sprint: &SprintId,
    state: &mut State,
    m: &HandoffMessage,
    cfg: &PipelineConfig,
) -> std::result::Result<(PState, Option<String>), String> {
    use handoff::{DeployVerdict, ImplVerdict, PlanVerdict, ReviewVerdict};
    match m {
        HandoffMessage::Harang {
            verdict: PlanVerdict::Abort,
            abort_reason,
            ..
        } => Ok((
            PState::Aborted,
            Some(
                abort_reason
                    .clone()
                    .unwrap_or_else(|| "harang aborted".into()),
            ),
        )),
        HandoffMessage::Harang {
            verdict: PlanVerdict::PlanReady,
            payload,
            ..
        } => {
            let Some(p) = payload else {
                return Err("PLAN_READY without payload.contractId".into());
            };
            let versions = contract::versions(store, sprint).map_err(|e| e.message)?;
            if versions.iter().any(|f| f.contract.id == p.contract_id) {
                Ok((PState::Implementing, None))
            } else {
                Err(format!(
                    "PLAN_READY names contract {:?}, which is not a frozen contract of {sprint} (freeze it with `git rails contract freeze {sprint}`)",
                    p.contract_id
                ))
            }
        }
        HandoffMessage::Narang {
            verdict: ImplVerdict::Error,
            error_reason,
            ..
        } => Err(format!(
            "narang reported ERROR: {}",
            error_reason.clone().unwrap_or_default()
        )),
        HandoffMessage::Narang {
            verdict: ImplVerdict::ImplDone,
            ..
        } => {
            let frozen = contract::require_newest(store, sprint).map_err(|e| e.message)?;
            if frozen.contract.approval_gates.implementation {
                let target = contract::validate::Target {
                    sprint,
                    version: frozen.version.clone(),
                    contract: &frozen.contract,
                    contract_commit: Some(frozen.commit),
                    base: frozen.base,
                };
                let report = contract::validate::run(
                    store,
                    &target,
                    &mut |_: &contract::validate::Entry| {},
                )
                .map_err(|e| e.message)?;
                if report.verdict != contract::validate::Verdict::Pass {
                    let _ = root;
                    return Err(format!(
                        "IMPL_DONE, but `git rails contract validate {sprint}` says {} (failed: {}); the turn goes back to narang",
                        report.verdict.as_str(),
                        report.failed.join(", ")
                    ));
                }
            }
            Ok((PState::Reviewing, None))
        }
        HandoffMessage::Darang {
            verdict: ReviewVerdict::Approve,
            ..
        } => {
            let frozen = contract::require_newest(store, sprint).map_err(|e| e.message)?;
            if frozen.contract.approval_gates.deploy {
                Ok((PState::Deploying, None))
            } else {
                Ok((
                    PState::Done,
                    Some("approved; approvalGates.deploy is false".into()),
                ))
            }
        }
        HandoffMessage::Darang {
            verdict: ReviewVerdict::RequestChanges,
            payload,
            ..
        } => {
            state.review_round += 1;
            let rounds = state.review_round - state.review_round_base;
            if rounds > cfg.retry.max_review_rounds {
                Ok((
                    PState::Escalated,
                    Some(format!(
                        "{rounds} REQUEST_CHANGES rounds, more than retry.maxReviewRounds ({})",
                        cfg.retry.max_review_rounds
                    )),
                ))
            } else {
                Ok((
                    PState::Implementing,
                    Some(format!(
                        "review round {}: {} issue(s)",
                        state.review_round,
                        payload.issues.len()
                    )),
                ))
            }
        }
        HandoffMessage::Darang {
            verdict: ReviewVerdict::Abort,
            ..
        } => Ok((PState::Aborted, Some("darang aborted".into()))),
        HandoffMessage::Erang {
            verdict: DeployVerdict::DeployDone,
            ..
        } => Ok((PState::Done, None)),
        HandoffMessage::Erang {
            verdict: DeployVerdict::DeployFailed,
            ..
        } => Err("erang reported DEPLOY_FAILED".into()),
    }
}

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
