//! `git rails contract validate`: the seed's order, exactly.
//!
//! 1. Environment prerequisites; the first missing one ends the run (ABORT_PRECHECK) before any
//!    runtime command or check runs.
//! 2. Runtime commands, in order.
//! 3. DoD checks, in order; then non-goals with paths ("if present, FAIL").
//!
//! Verdict PASS when no blocking result failed, else FAIL; non-blocking failures are warnings.
//!
//! `--jobs N` runs up to N DoD checks of step 3 at once (they read the work tree and do not depend
//! on each other); prerequisites and runtime commands stay sequential because a runtime command may
//! build what a check reads. Results are reported in contract order whatever order they finish in,
//! so the output, the note and the JSON do not depend on N.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

use super::checks::{self, Status};
use super::schema::{Contract, NonGoal};
use crate::contract::SprintId;
use crate::error::{Error, Result};
use crate::store::{ObjectId, Store};

pub const SCHEMA: &str = "rails-validation/v1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Phase {
    Prerequisite,
    Runtime,
    Check,
    NonGoal,
}

impl Phase {
    pub fn label(self) -> &'static str {
        match self {
            Phase::Prerequisite => "prereq",
            Phase::Runtime => "runtime",
            Phase::Check => "check",
            Phase::NonGoal => "non-goal",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    #[serde(rename = "PASS")]
    Pass,
    #[serde(rename = "FAIL")]
    Fail,
    #[serde(rename = "ABORT_PRECHECK")]
    AbortPrecheck,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::AbortPrecheck => "ABORT_PRECHECK",
        }
    }
}

/// One prerequisite, runtime command, check or non-goal as it came out.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub phase: Phase,
    pub id: String,
    pub kind: String,
    pub description: String,
    pub blocking: bool,
    pub status: Status,
    pub summary: String,
    pub evidence: Value,
    pub duration_ms: u64,
}

impl Entry {
    /// A failure that does not block the verdict.
    pub fn is_warning(&self) -> bool {
        self.status != Status::Pass && !self.blocking
    }
    pub fn is_blocking_failure(&self) -> bool {
        self.status != Status::Pass && self.blocking
    }
}

/// The `rails-validation/v1` document.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub schema: &'static str,
    pub sprint: String,
    /// `v1`, `v1.1`, … or `draft`.
    pub version: String,
    pub contract_commit: Option<String>,
    pub head: Option<String>,
    pub verdict: Verdict,
    pub started_at: String,
    pub duration_ms: u64,
    pub results: Vec<Entry>,
    /// Ids of the blocking results that did not pass.
    pub failed: Vec<String>,
    /// Ids of the non-blocking results that did not pass.
    pub warnings: Vec<String>,
    /// The prerequisite that ended the run, for ABORT_PRECHECK.
    pub aborted_by: Option<String>,
}

/// What to validate.
pub struct Target<'a> {
    pub sprint: &'a SprintId,
    pub version: String,
    pub contract: &'a Contract,
    pub contract_commit: Option<ObjectId>,
    /// Non-goal paths are judged on the change since this commit.
    pub base: Option<ObjectId>,
}

/// The contract a validation runs, chosen as every caller chooses it: the draft in the work tree,
/// or a frozen version (the newest unless one is named).
pub struct Chosen {
    pub contract: Contract,
    pub version: String,
    pub commit: Option<ObjectId>,
    pub base: Option<ObjectId>,
}

impl Chosen {
    pub fn of(
        store: &Store,
        sprint: &SprintId,
        version: Option<&str>,
        draft: bool,
    ) -> Result<Chosen> {
        if draft {
            let root = store.workdir()?.to_path_buf();
            let (_, contract) = super::load_draft(&root, sprint)?;
            return Ok(Chosen {
                contract,
                version: "draft".to_string(),
                commit: None,
                base: None,
            });
        }
        let f = super::find(store, sprint, version)?;
        Ok(Chosen {
            contract: f.contract,
            version: f.version,
            commit: Some(f.commit),
            base: f.base,
        })
    }

    pub fn target<'a>(&'a self, sprint: &'a SprintId) -> Target<'a> {
        Target {
            sprint,
            version: self.version.clone(),
            contract: &self.contract,
            contract_commit: self.commit,
            base: self.base,
        }
    }
}

/// Runs the validation one check at a time, calling `progress` as each result is known.
pub fn run(store: &Store, target: &Target<'_>, progress: &mut dyn FnMut(&Entry)) -> Result<Report> {
    run_with_jobs(store, target, 1, progress)
}

/// Runs the validation with up to `jobs` DoD checks at once (1 = sequential); `progress` is called
/// in contract order as soon as every earlier result is known.
pub fn run_with_jobs(
    store: &Store,
    target: &Target<'_>,
    jobs: usize,
    progress: &mut dyn FnMut(&Entry),
) -> Result<Report> {
    let root = store.workdir()?.to_path_buf();
    let started = Instant::now();
    let started_at = jiff::Timestamp::now().to_string();
    let head = store.head_commit()?;
    let c = target.contract;
    let mut results = Vec::new();
    let mut aborted_by = None;

    for p in &c.environment_prerequisites {
        let outcome = match p.typed_spec() {
            Ok(spec) => checks::run_prerequisite(&spec, &root),
            Err(problem) => spec_error(&problem.to_string()),
        };
        let e = Entry {
            phase: Phase::Prerequisite,
            id: p.name.clone(),
            kind: p.check.as_str().to_string(),
            description: p.reason.clone(),
            blocking: true,
            status: outcome.status,
            summary: outcome.summary,
            evidence: outcome.evidence,
            duration_ms: outcome.duration_ms,
        };
        progress(&e);
        let missing = e.status != Status::Pass;
        results.push(e);
        if missing {
            aborted_by = Some(p.name.clone());
            break;
        }
    }

    if aborted_by.is_none() {
        for cmd in &c.runtime_validation.commands {
            let o = checks::run_runtime_command(cmd, &root);
            let e = Entry {
                phase: Phase::Runtime,
                id: cmd.name.clone(),
                kind: "command".into(),
                description: cmd.command.clone(),
                blocking: true,
                status: o.status,
                summary: o.summary,
                evidence: o.evidence,
                duration_ms: o.duration_ms,
            };
            progress(&e);
            results.push(e);
        }
        // A frozen version's checks read what was frozen with it (see `pinned`); a draft's
        // read the work tree.
        let frozen_tree = match target.contract_commit {
            Some(commit) => Some(store.tree_of(commit)?),
            None => None,
        };
        let pins = match frozen_tree {
            Some(t) => super::pinned::load(store, t)?,
            None => None,
        };
        let files = match (frozen_tree, &pins) {
            (Some(t), Some(p)) => Some(super::pinned::schema_files(store, t, p)?),
            _ => None,
        };
        let checks = &c.dod.checks;
        let mut emit = |i: usize, o: checks::Outcome| {
            let check = &checks[i];
            let e = Entry {
                phase: Phase::Check,
                id: check.id.clone(),
                kind: check.kind.as_str().to_string(),
                description: check.description.clone(),
                blocking: check.blocking,
                status: o.status,
                summary: o.summary,
                evidence: o.evidence,
                duration_ms: o.duration_ms,
            };
            progress(&e);
            results.push(e);
        };
        let run_one = |i: usize| {
            let reads = checks::Reads {
                files: files.as_ref(),
                checklist_items: pins
                    .as_ref()
                    .and_then(|p| p.checklists.get(&checks[i].id))
                    .map(Vec::as_slice),
                checklist_text: None,
            };
            match checks[i].typed_spec() {
                Ok(spec) => checks::run_check_reading(&spec, &root, reads),
                Err(problem) => spec_error(&problem.to_string()),
            }
        };
        let jobs = jobs.clamp(1, checks.len().max(1));
        if jobs == 1 {
            for i in 0..checks.len() {
                emit(i, run_one(i));
            }
        } else {
            // Workers take the next check by index; the results wait here until every earlier
            // one is in, so they come out in contract order.
            let next = AtomicUsize::new(0);
            let (tx, rx) = mpsc::channel::<(usize, checks::Outcome)>();
            std::thread::scope(|scope| {
                for _ in 0..jobs {
                    let tx = tx.clone();
                    let (next, run_one) = (&next, &run_one);
                    scope.spawn(move || loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        if i >= checks.len() || tx.send((i, run_one(i))).is_err() {
                            break;
                        }
                    });
                }
                drop(tx);
                let mut done: Vec<Option<checks::Outcome>> = Vec::new();
                done.resize_with(checks.len(), || None);
                let mut shown = 0;
                for (i, o) in rx {
                    done[i] = Some(o);
                    while let Some(o) = done.get_mut(shown).and_then(Option::take) {
                        emit(shown, o);
                        shown += 1;
                    }
                }
            });
        }
        let with_paths: Vec<(usize, &NonGoal)> = c
            .non_goals
            .iter()
            .enumerate()
            .filter(|(_, g)| matches!(g, NonGoal::Paths(_)))
            .collect();
        if !with_paths.is_empty() {
            let changed = changed_since(store, target.base.or(head), &root)?;
            for (i, goal) in with_paths {
                let e = non_goal_entry(i, goal, &changed)?;
                progress(&e);
                results.push(e);
            }
        }
    }

    let failed: Vec<String> = results
        .iter()
        .filter(|e| e.is_blocking_failure())
        .map(|e| e.id.clone())
        .collect();
    let warnings: Vec<String> = results
        .iter()
        .filter(|e| e.is_warning())
        .map(|e| e.id.clone())
        .collect();
    let verdict = if aborted_by.is_some() {
        Verdict::AbortPrecheck
    } else if failed.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    Ok(Report {
        schema: SCHEMA,
        sprint: target.sprint.to_string(),
        version: target.version.clone(),
        contract_commit: target.contract_commit.map(|c| c.to_string()),
        head: head.map(|h| h.to_string()),
        verdict,
        started_at,
        duration_ms: started.elapsed().as_millis() as u64,
        results,
        failed,
        warnings,
        aborted_by,
    })
}

fn spec_error(problem: &str) -> checks::Outcome {
    checks::Outcome::error(format!("the spec cannot be used: {problem}"), Value::Null)
}

/// Paths changed since `base`, committed or not, plus untracked files (ignored ones excluded).
fn changed_since(store: &Store, base: Option<ObjectId>, _root: &Path) -> Result<Vec<String>> {
    let mut paths = Vec::new();
    if let Some(base) = base {
        paths.extend(store.changed_since_commit(base)?);
    }
    paths.extend(store.untracked_files()?);
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// Builds a matcher where `*` stays inside one path segment and `**` crosses them (git-like).
pub fn glob_matcher(globs: &[String]) -> Result<globset::GlobSet> {
    let mut b = globset::GlobSetBuilder::new();
    for g in globs {
        let glob = globset::GlobBuilder::new(g)
            .literal_separator(true)
            .build()
            .map_err(|e| Error::refused(format!("invalid glob {g:?}: {e}")))?;
        b.add(glob);
    }
    b.build()
        .map_err(|e| Error::internal(format!("building the glob set: {e}")))
}

fn non_goal_entry(i: usize, goal: &NonGoal, changed: &[String]) -> Result<Entry> {
    let NonGoal::Paths(p) = goal else {
        return Err(Error::internal("non-goal without paths"));
    };
    let set = glob_matcher(&p.paths)?;
    let touched: Vec<&String> = changed
        .iter()
        .filter(|c| set.is_match(c.as_str()))
        .collect();
    let (status, summary) = if touched.is_empty() {
        (Status::Pass, "no change touches its paths".to_string())
    } else {
        let shown: Vec<&str> = touched.iter().take(5).map(|s| s.as_str()).collect();
        (
            Status::Fail,
            format!(
                "the change touches {} path{} it rules out: {}{}",
                touched.len(),
                if touched.len() == 1 { "" } else { "s" },
                shown.join(", "),
                if touched.len() > 5 { ", …" } else { "" }
            ),
        )
    };
    Ok(Entry {
        phase: Phase::NonGoal,
        id: format!("nonGoals[{i}]"),
        kind: "non_goal".into(),
        description: p.text.clone(),
        blocking: true,
        status,
        summary,
        evidence: serde_json::json!({ "paths": touched }),
        duration_ms: 0,
    })
}

/// One line per result, as printed while validation runs.
pub fn entry_line(e: &Entry) -> String {
    let mark = match (e.status, e.blocking) {
        (Status::Pass, _) => "ok  ",
        (_, false) => "WARN",
        (Status::Fail, true) => "FAIL",
        (Status::Error, true) => "ERR ",
    };
    format!(
        "{:<8} {mark} {} ({}): {}",
        e.phase.label(),
        e.id,
        e.kind,
        e.summary
    )
}

/// The closing line: `verdict: PASS (4 passed, 0 failed, 1 warning)`.
pub fn verdict_line(r: &Report) -> String {
    // Each phase is counted on its own: a met prerequisite is not a passed check.
    let count = |phase: Phase| {
        let of: Vec<&Entry> = r.results.iter().filter(|e| e.phase == phase).collect();
        let passed = of.iter().filter(|e| e.status == Status::Pass).count();
        let failed = of.iter().filter(|e| e.is_blocking_failure()).count();
        let warned = of.iter().filter(|e| e.is_warning()).count();
        (of.len(), passed, failed, warned)
    };
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = Vec::new();
    let (n, passed, failed, warned) = count(Phase::Check);
    if n == 0 && r.aborted_by.is_some() {
        parts.push("checks: not run".to_string());
    } else {
        parts.push(format!(
            "checks: {passed} passed, {failed} failed, {}",
            plural(warned, "warning", "warnings")
        ));
    }
    let (n, passed, failed, _) = count(Phase::Runtime);
    if n > 0 {
        parts.push(format!(
            "runtime commands: {passed} passed, {failed} failed"
        ));
    }
    let (n, passed, failed, _) = count(Phase::Prerequisite);
    if n > 0 {
        parts.push(format!("prerequisites: {passed} met, {failed} missing"));
    }
    let (n, passed, failed, _) = count(Phase::NonGoal);
    if n > 0 {
        parts.push(format!("non-goals: {passed} kept, {failed} touched"));
    }
    let mut s = format!("verdict: {} ({})", r.verdict.as_str(), parts.join("; "));
    if let Some(p) = &r.aborted_by {
        s.push_str(&format!(
            "; prerequisite {p} is missing, so nothing else was run"
        ));
    }
    s
}

/// The human report, as added to `refs/notes/rails`; its last line is the JSON document so a
/// machine can read the note too.
pub fn note_text(r: &Report) -> String {
    let mut s = format!(
        "rails validate {} {} at {}: {}\n",
        r.sprint,
        r.version,
        r.started_at,
        r.verdict.as_str()
    );
    for e in &r.results {
        s.push_str(&entry_line(e));
        s.push('\n');
    }
    s.push_str(&verdict_line(r));
    s.push('\n');
    let mut compact = r.clone();
    for e in &mut compact.results {
        // Output tails stay in the JSON printed by --json; the note keeps the summary.
        if let Value::Object(m) = &mut e.evidence {
            m.remove("stdoutTail");
            m.remove("stderrTail");
        }
    }
    s.push_str(&format!(
        "{SCHEMA}: {}\n",
        serde_json::to_string(&compact).unwrap_or_default()
    ));
    s
}
