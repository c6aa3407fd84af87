//! Failing-first evidence, as state: each criterion of a sprint goes pending → red → green →
//! surfaced, and the only way back is a reopen that archives the cycle.
//!
//! The state lives in `refs/rails/evidence/<sprint>`: one commit per transition, its tree
//! holding `state.json` and `cycles/<criterion>/<n>/…` (every record and captured log, archived
//! cycles included). Writers hold the sprint's lock and move the ref by compare-and-swap.

pub mod chain;
pub mod gate;
pub mod kept;
pub mod merge;
pub mod verify;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::contract::checks::{self, Status as CheckStatus};
use crate::contract::schema::{Check, CheckKind};
use crate::contract::SprintId;
use crate::contract::{self, Frozen};
use crate::error::{Error, Result};
use crate::store::{self, refs, ObjectId, Store};

pub const STATE_FILE: &str = "state.json";
/// Where the evidence tree keeps the trees its records observed, each at `trees/<tree id>`.
pub const TREES_DIR: &str = "trees";
pub const SCHEMA: &str = "rails-evidence/v1";

/// The ref of a sprint's evidence chain.
pub fn evidence_ref(sprint: &str) -> String {
    refs::Namespace::Evidence.name(sprint)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Proof {
    /// The criterion's check runs.
    Check,
    /// A person reads and judges (`manual_checklist`).
    Review,
}

impl Proof {
    pub fn of(kind: CheckKind) -> Proof {
        if kind == CheckKind::ManualChecklist {
            Proof::Review
        } else {
            Proof::Check
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CriterionStatus {
    Pending,
    Red,
    Green,
    Surfaced,
}

impl CriterionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CriterionStatus::Pending => "pending",
            CriterionStatus::Red => "red",
            CriterionStatus::Green => "green",
            CriterionStatus::Surfaced => "surfaced",
        }
    }
}

/// One observation: a RED, GREEN, SURFACE, RECHECK, CLEANUP or REOPEN record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub transition: String,
    /// The blob id of this record's JSON file in the evidence tree (its short form is what
    /// `status` shows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_status: Option<CheckStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The contract version in force when the record was made.
    pub contract_version: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub evidence: Value,
    /// A GREEN on the same tracked tree as its RED: what changed outside the tree (`--because`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub because: Option<String>,
    /// The paths git did not track when the check ran, by name only (for the audit; their
    /// content is never recorded, and they never decide staleness).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub untracked: Vec<String>,
}

/// Where a criterion is bound: the tree it was proven on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    pub tree: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    pub dirty: bool,
    pub by: String,
}

/// One criterion's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Criterion {
    pub proof: Proof,
    pub status: CriterionStatus,
    /// The cycle number (1, then +1 at each reopen).
    pub cycle: u32,
    /// The check's kind and spec the current cycle proves (set at RED, or at SURFACE for a
    /// review proof); a newer contract version that changes them means the subject changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proven_spec: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red: Option<Record>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub green: Option<Record>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<Record>,
    /// How many rechecks this cycle holds; each is its own `recheck-N.json` in the cycle's folder.
    #[serde(default, skip_serializing_if = "is_zero", deserialize_with = "count")]
    pub rechecks: usize,
    /// How many cleanup receipts this cycle holds; each is its own `cleanup-N.json` in the
    /// cycle's folder. Only the count lives in `state.json`, which every hook reads: a sprint
    /// can hold thousands of receipts.
    #[serde(default, skip_serializing_if = "is_zero", deserialize_with = "count")]
    pub cleanup_receipts: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<Binding>,
    /// How many cycles were archived by reopen (their records stay under `cycles/`).
    #[serde(default)]
    pub archived_cycles: u32,
}

impl Criterion {
    fn new(proof: Proof) -> Criterion {
        Criterion {
            proof,
            status: CriterionStatus::Pending,
            cycle: 1,
            proven_spec: None,
            red: None,
            green: None,
            surface: None,
            rechecks: 0,
            cleanup_receipts: 0,
            binding: None,
            archived_cycles: 0,
        }
    }
}

/// The whole evidence state of a sprint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    pub schema: String,
    pub sprint: String,
    pub criteria: BTreeMap<String, Criterion>,
}

impl State {
    fn new(sprint: &SprintId) -> State {
        State {
            schema: SCHEMA.to_string(),
            sprint: sprint.to_string(),
            criteria: BTreeMap::new(),
        }
    }
}

/// The kind and spec of a check as one value, to notice a changed subject.
pub fn spec_value(check: &Check) -> Value {
    serde_json::json!({"kind": check.kind, "spec": check.spec})
}

/// What the gate reads of a criterion: statuses, record ids and the receipts' count, without
/// building every receipt (a sprint can hold thousands; the hooks read this on every push).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CriterionView {
    pub proof: Proof,
    pub status: CriterionStatus,
    pub cycle: u32,
    #[serde(default)]
    pub proven_spec: Option<Value>,
    #[serde(default)]
    pub red: Option<RecordId>,
    #[serde(default)]
    pub green: Option<RecordId>,
    #[serde(default)]
    pub surface: Option<RecordId>,
    #[serde(default, deserialize_with = "count")]
    pub cleanup_receipts: usize,
    #[serde(default)]
    pub binding: Option<Binding>,
}

/// A record's id (and the contract version it was made under), the rest of it skipped.
#[derive(Debug, Clone, Deserialize)]
pub struct RecordId {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default, rename = "contractVersion")]
    pub contract_version: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A count of records: a number, or (in states written before receipts moved to their own
/// files) the array of the records themselves.
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<usize, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Count {
        Number(usize),
        Items(Vec<serde::de::IgnoredAny>),
    }
    Ok(match Count::deserialize(d)? {
        Count::Number(n) => n,
        Count::Items(items) => items.len(),
    })
}

#[derive(Debug, Clone, Deserialize)]
struct StateView {
    criteria: BTreeMap<String, CriterionView>,
}

/// The criteria as the gate reads them (see [`CriterionView`]); empty when nothing was recorded.
pub fn load_view(store: &Store, sprint: &SprintId) -> Result<BTreeMap<String, CriterionView>> {
    Ok(read_state::<StateView>(store, sprint)?
        .map(|(v, _)| v.criteria)
        .unwrap_or_default())
}

/// The state as of the tip of the evidence ref (empty when nothing was recorded), with its tip.
pub fn load(store: &Store, sprint: &SprintId) -> Result<(State, Option<ObjectId>)> {
    Ok(match read_state::<State>(store, sprint)? {
        Some((state, tip)) => (state, Some(tip)),
        None => (State::new(sprint), None),
    })
}

/// `state.json` at the tip of the evidence ref, read as `T`; None when nothing was recorded.
fn read_state<T: serde::de::DeserializeOwned>(
    store: &Store,
    sprint: &SprintId,
) -> Result<Option<(T, ObjectId)>> {
    let Some(tip) = store.ref_target(&evidence_ref(sprint))? else {
        return Ok(None);
    };
    let bytes = store.read_file(tip, STATE_FILE)?.ok_or_else(|| {
        Error::internal(format!(
            "{} at {tip} has no {STATE_FILE}; the record is damaged",
            evidence_ref(sprint)
        ))
    })?;
    let state: T = serde_json::from_slice(&bytes).map_err(|e| {
        Error::internal(format!(
            "{} at {tip}: {STATE_FILE} is not a rails-evidence/v1 state: {e}",
            evidence_ref(sprint)
        ))
    })?;
    Ok(Some((state, tip)))
}

/// True when the criterion's proven subject differs from the contract's check.
pub fn spec_changed(proven_spec: Option<&Value>, check: &Check) -> bool {
    match proven_spec {
        Some(v) => *v != spec_value(check),
        None => false,
    }
}

/// What a transition was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    Red,
    Green,
    Surface,
    Cleanup,
    Reopen,
    Recheck,
}

impl Transition {
    pub fn as_str(self) -> &'static str {
        match self {
            Transition::Red => "red",
            Transition::Green => "green",
            Transition::Surface => "surface",
            Transition::Cleanup => "cleanup",
            Transition::Reopen => "reopen",
            Transition::Recheck => "recheck",
        }
    }
}

/// The request.
pub struct Request<'a> {
    pub sprint: &'a SprintId,
    pub criterion: &'a str,
    pub transition: Transition,
    pub note: Option<&'a str>,
    pub path: Option<&'a str>,
    /// For a GREEN on the same tracked tree as its RED: what changed outside the tree.
    pub because: Option<&'a str>,
}

/// What a transition recorded.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Recorded {
    pub sprint: String,
    pub criterion: String,
    pub transition: String,
    pub status: CriterionStatus,
    pub record: Record,
    pub commit: String,
    pub contract_version: String,
}

fn q(s: &str) -> String {
    format!("\"{s}\"")
}

/// The command that moves a criterion on from where it is.
pub fn next_command(sprint: &SprintId, id: &str, status: CriterionStatus, proof: Proof) -> String {
    match (status, proof) {
        (CriterionStatus::Pending, Proof::Review) => format!(
            "git rails evidence surface {sprint} {id} --note \"<where a person sees it>\""
        ),
        (CriterionStatus::Pending, Proof::Check) => format!("git rails evidence red {sprint} {id}"),
        (CriterionStatus::Red, _) => format!("git rails evidence green {sprint} {id}"),
        (CriterionStatus::Green, _) => format!(
            "git rails evidence surface {sprint} {id} --note \"<where a person sees it>\""
        ),
        (CriterionStatus::Surfaced, _) => format!(
            "git rails evidence cleanup {sprint} {id} --note \"<what was started and stopped, or: nothing was started>\""
        ),
    }
}

/// Refuses a transition the table does not allow, in the seed's words.
fn check_allowed(req: &Request<'_>, c: &Criterion, check: &Check) -> Result<()> {
    use CriterionStatus::*;
    let (sprint, id) = (req.sprint, req.criterion);
    let status = c.status;
    let surfaced_msg = || {
        Error::refused(format!(
            "Criterion {} is already surfaced. If its subject changed, reopen it with git rails evidence reopen {sprint} {id} --note \"<what changed>\" and earn RED again; overwriting GREEN here would reuse the old RED as cover.",
            q(id)
        ))
    };
    let failing_first = || {
        Error::refused(format!(
            "Failing-first violation: criterion {} is {}. Capture the failure before implementing: git rails evidence red {sprint} {id}",
            q(id),
            status.as_str()
        ))
    };
    match req.transition {
        Transition::Red => {
            if c.proof == Proof::Review {
                return Err(Error::refused(format!(
                    "Criterion {} has a review proof ({}): a person's judgement has no RED. Surface it when its checklist is ticked: git rails evidence surface {sprint} {id} --note \"<where a person sees it>\"",
                    q(id),
                    check.kind.as_str()
                )));
            }
            match status {
                Pending | Red => Ok(()),
                Green => Err(Error::refused(format!(
                    "Criterion {} is green; its RED is recorded and a new one would cover nothing. Surface it: git rails evidence surface {sprint} {id} --note \"<where a person sees it>\"",
                    q(id)
                ))),
                Surfaced => Err(surfaced_msg()),
            }
        }
        Transition::Green => {
            if c.proof == Proof::Review {
                return Err(Error::refused(format!(
                    "Criterion {} has a review proof ({}): it goes straight to surfaced once its checklist is ticked: git rails evidence surface {sprint} {id} --note \"<where a person sees it>\"",
                    q(id),
                    check.kind.as_str()
                )));
            }
            match status {
                Red => Ok(()),
                Pending => Err(failing_first()),
                Green => Err(Error::refused(format!(
                    "Criterion {} is already green. Surface it: git rails evidence surface {sprint} {id} --note \"<where a person sees it>\"",
                    q(id)
                ))),
                Surfaced => Err(surfaced_msg()),
            }
        }
        Transition::Surface => {
            if req.note.is_none() && req.path.is_none() {
                return Err(Error::refused(format!(
                    "Surface needs --note or --path saying where a person can see the result (a screenshot, a PR comment, a report): git rails evidence surface {sprint} {id} --note \"<where>\""
                )));
            }
            match (status, c.proof) {
                (Green, Proof::Check) | (Pending, Proof::Review) => Ok(()),
                (Surfaced, _) => Err(Error::refused(format!(
                    "Criterion {} is already surfaced. If its subject changed, reopen it with git rails evidence reopen {sprint} {id} --note \"<what changed>\" and earn it again.",
                    q(id)
                ))),
                (Pending, Proof::Check) => Err(failing_first()),
                (Red, _) => Err(Error::refused(format!(
                    "Criterion {} is red: GREEN comes before SURFACE. Make it pass, then: git rails evidence green {sprint} {id}",
                    q(id)
                ))),
                (Green, Proof::Review) => Err(Error::internal("a review proof cannot be green")),
            }
        }
        Transition::Cleanup => {
            if req.note.is_none() && req.path.is_none() {
                return Err(Error::refused(format!(
                    "A cleanup receipt needs --note or --path: what the verification started and that it was stopped, or \"nothing was started\": git rails evidence cleanup {sprint} {id} --note \"nothing was started\""
                )));
            }
            Ok(())
        }
        Transition::Reopen => {
            if req.note.is_none_or(|n| n.trim().is_empty()) {
                return Err(Error::refused(format!(
                    "Reopen needs a note saying what changed, so the archived cycle explains itself: git rails evidence reopen {sprint} {id} --note \"<what changed>\""
                )));
            }
            let changed = spec_changed(c.proven_spec.as_ref(), check);
            match status {
                Surfaced => Ok(()),
                Red | Green if changed => Ok(()),
                _ => Err(Error::refused(format!(
                    "Criterion {} is {}; only a surfaced criterion is reopened (or one whose check changed in a newer contract version). Next: {}",
                    q(id),
                    status.as_str(),
                    next_command(sprint, id, c.status, c.proof)
                ))),
            }
        }
        Transition::Recheck => match status {
            Surfaced if spec_changed(c.proven_spec.as_ref(), check) => Err(Error::refused(format!(
                "The check of criterion {} changed in a newer contract version: its subject changed, so a recheck would prove something else. Reopen it and earn RED again: git rails evidence reopen {sprint} {id} --note \"<what changed>\"",
                q(id)
            ))),
            Surfaced => Ok(()),
            _ => Err(Error::refused(format!(
                "Criterion {} is {}; recheck re-binds a surfaced criterion to a newer tree. Next: {}",
                q(id),
                status.as_str(),
                next_command(sprint, id, c.status, c.proof)
            ))),
        },
    }
}

/// Runs the contract's prerequisites; a missing one means a failure now would not be the
/// criterion failing.
fn prerequisites_hold(frozen: &Frozen, root: &std::path::Path) -> Result<()> {
    for p in &frozen.contract.environment_prerequisites {
        let Ok(spec) = p.typed_spec() else { continue };
        let o = checks::run_prerequisite(&spec, root);
        if o.status != CheckStatus::Pass {
            return Err(Error::refused(format!(
                "prerequisite {} ({}) is missing: {}. A failure now would not be the criterion failing, so nothing was recorded.",
                p.name,
                p.check.as_str(),
                o.summary
            ))
            .hint(format!(
                "provide it ({}) and check with `git rails contract validate {}`",
                p.reason, frozen.sprint
            )));
        }
    }
    Ok(())
}

/// How many untracked paths a record lists by name at most.
const UNTRACKED_LISTED: usize = 200;

/// The kinds that judge the repository's content: their GREEN must follow a change to it.
pub fn judges_tree(kind: CheckKind) -> bool {
    matches!(
        kind,
        CheckKind::FileExists
            | CheckKind::CommandSuccess
            | CheckKind::RegexInFile
            | CheckKind::ArtifactSchema
    )
}

/// A GREEN whose tracked tree is its RED's proves nothing changed: refused unless it says what
/// changed outside the tree (`because`). The runtime kinds are exempt.
pub fn unchanged_green(
    id: &str,
    c: &Criterion,
    check: &Check,
    green: &Record,
    because: bool,
) -> Option<Error> {
    if because || !judges_tree(check.kind) {
        return None;
    }
    let red_tree = c.red.as_ref().and_then(|r| r.tree.as_deref())?;
    (green.tree.as_deref() == Some(red_tree)).then(|| {
        Error::refused(format!(
            "GREEN of {} is on the same tracked tree as its RED ({}): nothing git tracks changed, so this pass proves no change made it pass.",
            q(id),
            &red_tree[..12.min(red_tree.len())]
        ))
    })
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

/// Carries out one transition: checks the table, runs the check when the transition needs an
/// observation, and appends one commit to the evidence chain.
/// Where a transition's record goes in the evidence tree: `cycles/<id>/<cycle>/<name>` without
/// `.json`/`.log` (receipts and rechecks numbered from 1).
fn record_stem(c: &Criterion, id: &str, t: Transition) -> String {
    let base = format!("cycles/{id}/{}", c.cycle);
    match t {
        Transition::Cleanup => format!("{base}/cleanup-{}", c.cleanup_receipts + 1),
        Transition::Recheck => format!("{base}/recheck-{}", c.rechecks + 1),
        t => format!("{base}/{}", t.as_str()),
    }
}

/// The state machine's step, once `check_allowed` let the transition through: the new status,
/// the binding to the observed tree, and the record (or, for a reopen, a fresh cycle).
fn apply(c: &mut Criterion, t: Transition, check: &Check, record: Record) {
    let mut binding_by = None;
    match t {
        Transition::Red => {
            c.status = CriterionStatus::Red;
            c.proven_spec = Some(spec_value(check));
        }
        Transition::Green => {
            c.status = CriterionStatus::Green;
            binding_by = Some("green");
        }
        Transition::Surface => {
            c.status = CriterionStatus::Surfaced;
            if c.proof == Proof::Review {
                c.proven_spec = Some(spec_value(check));
                binding_by = Some("surface");
            }
        }
        Transition::Recheck => binding_by = Some("recheck"),
        Transition::Cleanup | Transition::Reopen => {}
    }
    if let (Some(by), Some(tree)) = (binding_by, &record.tree) {
        c.binding = Some(Binding {
            tree: tree.clone(),
            head: record.head.clone(),
            dirty: record.dirty.unwrap_or(false),
            by: by.to_string(),
        });
    }
    match t {
        Transition::Red => c.red = Some(record),
        Transition::Green => c.green = Some(record),
        Transition::Surface => c.surface = Some(record),
        Transition::Recheck => c.rechecks += 1,
        Transition::Cleanup => c.cleanup_receipts += 1,
        Transition::Reopen => {
            // The cycle stays in the tree under cycles/<id>/<n>/; the state starts anew.
            let archived = c.archived_cycles + 1;
            *c = Criterion::new(c.proof);
            c.cycle = archived + 1;
            c.archived_cycles = archived;
        }
    }
}

/// The reason a GREEN gives for passing on its RED's tracked tree (`because`), checked: for
/// green only, and never empty. `name` is how the caller spells it (`--because`, `because`).
pub fn checked_because<'a>(
    t: Transition,
    because: Option<&'a str>,
    name: &str,
) -> Result<Option<&'a str>> {
    match because {
        Some(_) if t != Transition::Green => Err(Error::usage(format!(
            "{name} is for green only (what changed outside the tree between RED and GREEN), not for {}",
            t.as_str()
        ))),
        Some(b) if b.trim().is_empty() => Err(Error::usage(format!(
            "{name} needs the text of what changed outside the tree"
        ))),
        b => Ok(b.map(str::trim)),
    }
}

pub fn transition(store: &Store, req: &Request<'_>) -> Result<Recorded> {
    let sprint = req.sprint;
    let id = req.criterion;
    let root = store.workdir()?.to_path_buf();
    let _lock = store.lock(&store::LockName::evidence(sprint), || {})?;
    let frozen = contract::require_newest(store, sprint)?;
    let check = frozen.contract.check(id).cloned().ok_or_else(|| {
        let ids: Vec<&str> = frozen
            .contract
            .dod
            .checks
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        Error::refused(format!(
            "{sprint} {} has no criterion {}; its criteria are: {}",
            frozen.version,
            q(id),
            ids.join(", ")
        ))
        .hint(format!("see `git rails status {sprint}`"))
    })?;

    // Re-read under the lock, and retry if another clone's writer moved the ref anyway.
    for _ in 0..20 {
        let derived = chain::derive(store, sprint)?;
        if let Some(p) = &derived.problem {
            return Err(p.refusal(sprint));
        }
        let (mut state, tip) = (derived.state, derived.tip);
        let proof = Proof::of(check.kind);
        let criterion = state
            .criteria
            .entry(id.to_string())
            .or_insert_with(|| Criterion::new(proof))
            .clone();
        check_allowed(req, &criterion, &check)?;
        let mut c = criterion;
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        let mut record = Record {
            transition: req.transition.as_str().to_string(),
            id: None,
            at: now(),
            head: store.head_commit()?.map(|h| h.to_string()),
            tree: None,
            dirty: None,
            check_status: None,
            summary: None,
            exit_code: None,
            duration_ms: None,
            note: req.note.map(str::to_string),
            path: req.path.map(str::to_string),
            contract_version: frozen.version.clone(),
            evidence: Value::Null,
            because: None,
            untracked: Vec::new(),
        };

        let mut captured_log = None;
        let runs_check = matches!(
            req.transition,
            Transition::Red | Transition::Green | Transition::Recheck
        ) || (req.transition == Transition::Surface && c.proof == Proof::Review);
        if runs_check {
            prerequisites_hold(&frozen, &root)?;
            let spec = check
                .typed_spec()
                .map_err(|p| Error::refused(format!("the check's spec is broken: {p}")))?;
            let (tree, dirty) = store.worktree_tree()?;
            let reads = frozen_reads(store, &frozen, &check, &spec, req.transition, tree)?;
            let mut outcome = checks::run_check_reading(&spec, &root, reads.reads());
            if let Some(note) = &reads.uncommitted {
                outcome.summary = format!("{}; {note}", outcome.summary);
            }
            record.tree = Some(tree.to_string());
            record.dirty = Some(dirty);
            record.check_status = Some(outcome.status);
            record.summary = Some(outcome.summary.clone());
            record.exit_code = outcome.evidence.get("exitCode").and_then(Value::as_i64);
            record.duration_ms = Some(outcome.duration_ms);
            let mut ev = outcome.evidence.clone();
            let mut log = String::new();
            if let Value::Object(m) = &mut ev {
                for (key, name) in [("stdoutTail", "stdout"), ("stderrTail", "stderr")] {
                    if let Some(Value::String(t)) = m.remove(key) {
                        if !t.is_empty() {
                            log.push_str(&format!("--- {name} (tail) ---\n{t}"));
                            if !t.ends_with('\n') {
                                log.push('\n');
                            }
                        }
                    }
                }
            }
            record.evidence = ev;
            refuse_outcome(req, &check, &outcome)?;
            if req.transition == Transition::Green {
                if let Some(e) = unchanged_green(id, &c, &check, &record, req.because.is_some()) {
                    return Err(e.hint(format!(
                        "change the tracked files (a new file counts once added: `git add <file>`), then run `git rails evidence green {sprint} {id}` again; if what changed is outside the tree (a service, a tool), say what: `git rails evidence green {sprint} {id} --because \"<what changed>\"`"
                    )));
                }
                record.because = req.because.map(str::to_string);
            }
            record.untracked = store.untracked_paths(UNTRACKED_LISTED)?;
            // Written even when empty, so a re-capture never sits beside an older run's log.
            captured_log = Some(log);
        }

        // The record's own file, and its blob id as its short name.
        let stem = record_stem(&c, id, req.transition);
        if let Some(log) = captured_log {
            files.push((format!("{stem}.log"), log.into_bytes()));
        }
        let file = format!("{stem}.json");
        let mut bytes = serde_json::to_vec_pretty(&record)
            .map_err(|e| Error::internal(format!("rendering the record: {e}")))?;
        bytes.push(b'\n');
        let blob = store.blob_id(&bytes)?;
        record.id = Some(blob.to_string());
        files.push((file, bytes));

        apply(&mut c, req.transition, &check, record.clone());
        let status = c.status;
        state.criteria.insert(id.to_string(), c);
        let mut state_bytes = serde_json::to_vec_pretty(&state)
            .map_err(|e| Error::internal(format!("rendering the state: {e}")))?;
        state_bytes.push(b'\n');
        files.push((STATE_FILE.to_string(), state_bytes));

        let subject = format!("evidence {sprint} {} {id}", req.transition.as_str());
        let mut body = record.summary.clone().unwrap_or_default();
        if let Some(n) = &record.note {
            body.push_str(&format!("\n{n}"));
        }
        let msg = store::message(
            &subject,
            &body,
            &[
                ("Rails-Sprint", sprint.to_string()),
                (
                    "Rails-Transition",
                    format!("{} {id}", req.transition.as_str()),
                ),
                ("Rails-Contract-Version", frozen.version.clone()),
                ("Rails-Status", status.as_str().to_string()),
            ],
        );
        // The tree this record observed travels with the evidence ref (`trees/<id>`): another
        // clone, CI or the server judges staleness against it after a fetch, even when it was
        // a work tree that was never committed.
        let observed: Vec<(String, ObjectId)> = record
            .tree
            .as_deref()
            .and_then(|t| ObjectId::from_hex(t.as_bytes()).ok())
            .map(|id| (format!("{TREES_DIR}/{id}"), id))
            .into_iter()
            .collect();
        if let Some(commit) =
            store.append_commit_with_trees(&evidence_ref(sprint), tip, &files, &observed, &msg)?
        {
            return Ok(Recorded {
                sprint: sprint.to_string(),
                criterion: id.to_string(),
                transition: req.transition.as_str().to_string(),
                status,
                record,
                commit: commit.to_string(),
                contract_version: frozen.version.clone(),
            });
        }
    }
    Err(Error::internal(format!(
        "{} kept moving while this transition was written; nothing was recorded, try again",
        evidence_ref(sprint)
    )))
}

/// What a check of the frozen contract reads from its records: the schema files frozen with
/// it, a checklist's frozen items and its committed text.
struct FrozenReads {
    files: Option<BTreeMap<String, Vec<u8>>>,
    items: Option<Vec<String>>,
    committed: Option<Vec<u8>>,
    /// Said with the outcome when the checklist has ticks that are not committed.
    uncommitted: Option<String>,
}

impl FrozenReads {
    fn reads(&self) -> checks::Reads<'_> {
        checks::Reads {
            files: self.files.as_ref(),
            checklist_items: self.items.as_deref(),
            checklist_text: self.committed.as_deref(),
        }
    }
}

fn frozen_reads(
    store: &Store,
    frozen: &Frozen,
    check: &Check,
    spec: &crate::contract::schema::CheckSpec,
    t: Transition,
    tree: ObjectId,
) -> Result<FrozenReads> {
    use crate::contract::pinned;
    let pins = pinned::load(store, frozen.tree)?;
    let (sprint, id) = (frozen.sprint.as_str(), check.id.as_str());
    // A test file of checkPaths that differs from what was frozen: the check would run
    // something else than what the contract froze.
    if matches!(t, Transition::Red | Transition::Green | Transition::Recheck) {
        let changed = pinned::changed_check_paths(store, &frozen.contract, pins.as_ref(), tree)?;
        if pinned::runs_any(check, &changed) {
            return Err(Error::refused(format!(
                "{} differ{} from what {} froze (checkPaths); a check that runs changed test files proves nothing, so nothing was recorded",
                changed.join(", "),
                if changed.len() == 1 { "s" } else { "" },
                frozen.version
            ))
            .hint(format!(
                "restore {} (`git checkout -- <path>`), or freeze the change as a new version (`git rails contract edit {sprint} --next`, then `git rails contract freeze {sprint} --bump`) and reopen the criteria that run it",
                if changed.len() == 1 { "it" } else { "them" }
            )));
        }
    }
    let files = match &pins {
        Some(p) => Some(pinned::schema_files(store, frozen.tree, p)?),
        None => None,
    };
    let items = pins.as_ref().and_then(|p| p.checklists.get(id).cloned());
    let mut committed = None;
    let mut uncommitted = None;
    if let crate::contract::schema::CheckSpec::ManualChecklist(c) = spec {
        // A checklist's ticks count once committed: the gate judges commits, and `.rails/`
        // never makes a proof stale, so a tick only in the work tree would prove nothing.
        let path = pinned::normalize(&c.path).unwrap_or_else(|| c.path.clone());
        let root = store.workdir()?;
        let on_disk = std::fs::read(root.join(&path)).ok();
        let in_head = match store.head_commit()? {
            Some(h) => store.read_file(h, &path)?,
            None => None,
        };
        match (&in_head, &on_disk) {
            (None, Some(_)) => {
                return Err(Error::refused(format!(
                    "the checklist {path} of {} is not committed; a checklist's ticks count only once they are committed",
                    q(id)
                ))
                .hint(format!(
                    "`git add {path} && git commit -m \"tick {id}\"`, then `git rails evidence surface {sprint} {id} --note \"<where>\"` again"
                )))
            }
            (Some(h), Some(d)) if h != d => {
                uncommitted = Some(format!(
                    "{path} has uncommitted changes, which do not count: ticks count only once committed (`git add {path} && git commit`)"
                ));
            }
            _ => {}
        }
        committed = in_head;
    }
    Ok(FrozenReads {
        files,
        items,
        committed,
        uncommitted,
    })
}

/// Refuses an observation that does not prove what the transition claims.
fn refuse_outcome(req: &Request<'_>, check: &Check, o: &checks::Outcome) -> Result<()> {
    let (sprint, id) = (req.sprint, req.criterion);
    if o.status == CheckStatus::Error {
        return Err(Error::refused(format!(
            "the check of {} could not run ({}): a failure that is not the criterion failing does not count, so nothing was recorded.",
            q(id),
            o.summary
        ))
        .hint(format!(
            "fix the environment or the check (a new contract version: `git rails contract edit {sprint} --next`), then run `git rails evidence {} {sprint} {id}` again",
            req.transition.as_str()
        )));
    }
    match req.transition {
        Transition::Red if o.status == CheckStatus::Pass => Err(Error::refused(format!(
            "{id} already passes, so this RED would prove nothing. Write the check so that it fails before the change, or bump the contract ({}).",
            o.summary
        ))
        .hint(format!(
            "`git rails contract edit {sprint} --next` and `git rails contract freeze {sprint} --bump`"
        ))),
        Transition::Green if o.status != CheckStatus::Pass => Err(Error::refused(format!(
            "{id} still fails ({}); GREEN records only an observed pass.",
            o.summary
        ))
        .hint(format!(
            "make it pass, then run `git rails evidence green {sprint} {id}` again"
        ))),
        Transition::Surface if o.status != CheckStatus::Pass => Err(Error::refused(format!(
            "the checklist of {} is not fully ticked ({}); a review proof is surfaced only when it is.",
            q(id),
            o.summary
        ))
        .hint(format!(
            "tick every item once a person has checked it, then run `git rails evidence surface {sprint} {id} --note \"<where>\"` again"
        ))),
        Transition::Recheck if o.status != CheckStatus::Pass => Err(Error::refused(format!(
            "{id} fails on this tree ({}); a recheck re-binds only an observed pass.",
            o.summary
        ))
        .hint(format!(
            "if the change broke it, fix it and recheck; if its subject changed, `git rails evidence reopen {sprint} {id} --note \"<what changed>\"`"
        ))),
        _ => {
            let _ = check;
            Ok(())
        }
    }
}

// ---- Replay: used by `git rails sync` to merge evidence chains that diverged between clones.
// Kept apart from `transition` on purpose: it applies a transition that was already observed
// (its record is given) through the same table (`check_allowed`), without running anything.

impl Transition {
    /// The transition a `Rails-Transition:` trailer names.
    pub fn parse(s: &str) -> Option<Transition> {
        Some(match s {
            "red" => Transition::Red,
            "green" => Transition::Green,
            "surface" => Transition::Surface,
            "cleanup" => Transition::Cleanup,
            "reopen" => Transition::Reopen,
            "recheck" => Transition::Recheck,
            _ => return None,
        })
    }
}

/// An empty state of a sprint (what a chain starts from).
pub fn empty_state(sprint: &SprintId) -> State {
    State::new(sprint)
}

/// Applies one already-recorded transition to `state`, refused exactly when `transition` would
/// refuse it from this state. Returns the stem of the record's files in the evidence tree
/// (`cycles/<criterion>/<n>/<name>`, without `.json`/`.log`), derived as `transition` derives it.
pub fn replay(
    state: &mut State,
    req: &Request<'_>,
    check: &Check,
    record: Record,
) -> Result<String> {
    let id = req.criterion;
    let proof = Proof::of(check.kind);
    let mut c = state
        .criteria
        .get(id)
        .cloned()
        .unwrap_or_else(|| Criterion::new(proof));
    check_allowed(req, &c, check)?;
    check_record(req, &c, check, &record)?;
    let stem = record_stem(&c, id, req.transition);
    apply(&mut c, req.transition, check, record);
    state.criteria.insert(id.to_string(), c);
    Ok(stem)
}

/// Refuses a recorded transition whose record does not prove what the transition claims: a
/// RED without an observed failure of that check, a GREEN (or recheck, or a review's surface)
/// without an observed pass, an observation bound to no tree, or a GREEN on its RED's tree with
/// no reason given. What `transition` refuses before writing, said of a record already written.
pub fn check_record(
    req: &Request<'_>,
    c: &Criterion,
    check: &Check,
    record: &Record,
) -> Result<()> {
    let t = req.transition;
    if record.transition != t.as_str() {
        return Err(Error::refused(format!(
            "its record says it is a {} record, not a {} one",
            record.transition,
            t.as_str()
        )));
    }
    let observes = matches!(t, Transition::Red | Transition::Green | Transition::Recheck)
        || (t == Transition::Surface && c.proof == Proof::Review);
    if !observes {
        return Ok(());
    }
    let want = if t == Transition::Red {
        CheckStatus::Fail
    } else {
        CheckStatus::Pass
    };
    if record.check_status != Some(want) {
        return Err(Error::refused(format!(
            "its {} record holds no {} observation of the check (it says {})",
            t.as_str().to_uppercase(),
            if want == CheckStatus::Pass {
                "passing"
            } else {
                "failing"
            },
            record
                .check_status
                .map(|s| format!("{s:?}").to_lowercase())
                .unwrap_or_else(|| "nothing".into())
        )));
    }
    if record.tree.is_none() {
        return Err(Error::refused(format!(
            "its {} record names no tree the check ran on",
            t.as_str().to_uppercase()
        )));
    }
    if t == Transition::Green {
        if let Some(e) = unchanged_green(req.criterion, c, check, record, record.because.is_some())
        {
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipts_and_rechecks_are_counts_and_older_arrays_still_read() {
        let older = r#"{"schema":"rails-evidence/v1","sprint":"S","criteria":{"c1":{
            "proof":"check","status":"surfaced","cycle":1,
            "rechecks":[{"transition":"recheck","at":"t","contractVersion":"v1"}],
            "cleanupReceipts":[{"transition":"cleanup","at":"t","contractVersion":"v1"},
                               {"transition":"cleanup","at":"t","contractVersion":"v1"}]}}}"#;
        let state: State = serde_json::from_str(older).unwrap();
        let c1 = &state.criteria["c1"];
        assert_eq!((c1.rechecks, c1.cleanup_receipts), (1, 2));
        let view: StateView = serde_json::from_str(older).unwrap();
        assert_eq!(view.criteria["c1"].cleanup_receipts, 2);

        let written = serde_json::to_value(&state).unwrap();
        assert_eq!(written["criteria"]["c1"]["cleanupReceipts"], 2);
        assert_eq!(written["criteria"]["c1"]["rechecks"], 1);
        let again: State = serde_json::from_value(written).unwrap();
        assert_eq!(again, state);

        let mut fresh = Criterion::new(Proof::Check);
        assert!(serde_json::to_value(&fresh)
            .unwrap()
            .get("cleanupReceipts")
            .is_none());
        fresh.cleanup_receipts = 3;
        let view: CriterionView =
            serde_json::from_value(serde_json::to_value(&fresh).unwrap()).unwrap();
        assert_eq!(view.cleanup_receipts, 3);
    }
}
