//! `git rails verify`: the gate's verdict with its account, from the objects alone (the chain
//! replayed without the local cache), and with `--rerun` the proof itself re-earned: each
//! proven check run again on the judged commit, and each RED on its tree rebuilt from its base
//! commit and the contract's frozen test files (`evidence::base`; never the tree the record
//! names), in a clean temporary checkout (never the user's work tree or index). A record
//! written by hand cannot survive it: what CI runs.
//!
//! Three answers, kept apart in text, `--json` and `--junit`: done (0); not done (2), when a
//! step is missing or a re-run does not come out as recorded; and could not run (3), when a
//! re-run needs what this machine lacks — a prerequisite the contract names, a base commit
//! this clone does not have, a RED recorded before it named its base — which says nothing
//! about the proof and never asks to reopen it. A re-run needs nothing from the machine but git
//! and the tools the contract names: no identity, no global configuration, no network.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::chain::Problem;
use super::gate::{self, Step};
use super::red::{not_red, NotRed};
use super::{base, CriterionStatus, Proof, Record};
use crate::contract::checks::{self, Status as CheckStatus};
use crate::contract::schema::{CheckKind, PrereqKind};
use crate::contract::SprintId;
use crate::contract::{self};
use crate::error::{Context, Error, Result};
use crate::store::{ObjectId, Store};

pub const SCHEMA: &str = "rails-verify/v1";

/// How a re-run came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RerunResult {
    /// As recorded: the GREEN passed again, or the RED failed again as the check failing.
    Holds,
    /// Not as recorded: the proof does not hold.
    DoesNotHold,
    /// This machine could not run it (a prerequisite missing, the runner failing, a RED that
    /// cannot be rebuilt): nothing is said of the proof.
    CouldNotRun,
}

/// One check run again.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rerun {
    /// `green` (on the judged commit), `surface` (a review's checklist), or `red` (on the
    /// RED's tree rebuilt from its base commit).
    pub of: String,
    /// The tree it ran on (None when it could not be built).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// None when it did not run at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<CheckStatus>,
    pub summary: String,
    pub result: RerunResult,
    /// The GREEN passed again, or the RED failed again (`result` is `holds`).
    pub ok: bool,
}

/// One criterion, told.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Account {
    pub id: String,
    pub kind: String,
    pub status: CriterionStatus,
    /// What its records say, one line each.
    pub account: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub because: Option<String>,
    pub reruns: Vec<Rerun>,
    /// Why a proven check was not run again (a runtime check needs its service).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_rerun: Option<String>,
    /// `verified`, `not done` or `could not run`.
    pub verdict: &'static str,
    /// Nothing is missing for it and every re-run came out as recorded.
    pub ok: bool,
}

/// The `rails-verify/v1` document.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub schema: &'static str,
    pub sprint: String,
    pub version: String,
    pub commit: String,
    pub done: bool,
    /// `done`, `not done` (exit 2) or `could not run` (exit 3).
    pub verdict: &'static str,
    pub rerun: bool,
    /// The first commit of the chain that does not replay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_problem: Option<Problem>,
    pub criteria: Vec<Account>,
    pub missing: Vec<Step>,
    /// The re-runs this machine could not run, each with what it lacks: never a verdict on
    /// the proof.
    pub could_not_run: Vec<Step>,
    /// What non-blocking criteria lack: reported, never blocking.
    pub not_blocking: Vec<Step>,
    /// Criteria that a later version dropped on purpose, with why.
    pub dropped: Vec<gate::DroppedReport>,
    /// Turns an agent ended with the sprint unproven.
    pub agent_turns_ended: Vec<crate::hooks::agent::EndedTurn>,
    /// Who signed the frozen version, checked against the signing policy ([`judge_signer`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<String>,
}

/// Checks who signed the frozen version against `policy` (verify checks the signatures itself):
/// under a policy, a version no allowed planner signed leaves the sprint not done.
pub fn judge_signer(
    store: &Store,
    report: &mut Report,
    policy: Option<&crate::policy::Policy>,
) -> Result<()> {
    let sprint = SprintId::recorded(&report.sprint);
    let (words, step) = gate::signer_of_version(store, &sprint, policy)?;
    report.signed_by = Some(words);
    if let Some(step) = step {
        report.missing.insert(0, step);
        report.done = false;
        report.verdict = "not done";
    }
    Ok(())
}

fn short(s: &str) -> &str {
    &s[..7.min(s.len())]
}

fn record_line(label: &str, r: &Record) -> String {
    let mut s = format!("{label} {}", r.id.as_deref().map(short).unwrap_or("-"));
    if let Some(st) = r.check_status {
        s.push_str(&format!(
            " {}",
            match st {
                CheckStatus::Pass => "passed",
                CheckStatus::Fail => "failed",
                CheckStatus::Error => "could not run",
            }
        ));
    }
    if let Some(t) = &r.tree {
        s.push_str(&format!(" on tree {}", &t[..12.min(t.len())]));
    }
    s.push_str(&format!(" at {} ({})", r.at, r.contract_version));
    if let Some(x) = &r.summary {
        s.push_str(&format!(": {x}"));
    }
    if let Some(n) = &r.note {
        s.push_str(&format!(" — {n}"));
    }
    if let Some(p) = &r.path {
        s.push_str(&format!(" [{p}]"));
    }
    s
}

/// Temporary checkouts, removed when dropped.
struct Checkouts<'a> {
    store: &'a Store,
    dir: tempfile::TempDir,
    made: BTreeMap<ObjectId, PathBuf>,
}

impl Checkouts<'_> {
    fn of(&mut self, tree: ObjectId) -> Result<PathBuf> {
        if let Some(p) = self.made.get(&tree) {
            return Ok(p.clone());
        }
        let path = self
            .dir
            .path()
            .join(format!("checkout-{}", self.made.len() + 1));
        self.store.checkout_tree(tree, &path)?;
        self.made.insert(tree, path.clone());
        Ok(path)
    }
}

impl Drop for Checkouts<'_> {
    fn drop(&mut self) {
        for p in self.made.values() {
            let _ = self.store.remove_checkout(p);
        }
    }
}

fn runtime(kind: CheckKind) -> bool {
    matches!(
        kind,
        CheckKind::HttpStatus | CheckKind::ProcessListening | CheckKind::DbQuery
    )
}

/// Runs a check in a checkout, reading what the contract froze (schemas and what they `$ref`)
/// instead of the checkout's own copies, exactly as the transitions did.
fn run_in(
    spec: &crate::contract::schema::CheckSpec,
    dir: &Path,
    files: Option<&BTreeMap<String, Vec<u8>>>,
) -> checks::Outcome {
    checks::run_check_reading(
        spec,
        dir,
        checks::Reads {
            files,
            ..Default::default()
        },
    )
}

/// The prerequisites a re-run can need, checked in each checkout before anything runs there:
/// `command_exists`, `env_var` and `file_exists` (the runtime ones, such as `port_open`, are
/// about a running service, which a re-run never starts). The first missing one, named.
struct Prerequisites<'a> {
    frozen: &'a contract::Frozen,
    seen: BTreeMap<PathBuf, Option<String>>,
}

impl Prerequisites<'_> {
    fn missing_in(&mut self, dir: &Path) -> Option<String> {
        if let Some(m) = self.seen.get(dir) {
            return m.clone();
        }
        let mut missing = None;
        for p in &self.frozen.contract.environment_prerequisites {
            if !matches!(
                p.check,
                PrereqKind::CommandExists | PrereqKind::EnvVar | PrereqKind::FileExists
            ) {
                continue;
            }
            let Ok(spec) = p.typed_spec() else { continue };
            let o = checks::run_prerequisite(&spec, dir);
            if o.status != CheckStatus::Pass {
                missing = Some(format!(
                    "prerequisite {} ({}) is missing: {} — {}",
                    p.name,
                    p.check.as_str(),
                    o.summary,
                    p.reason
                ));
                break;
            }
        }
        self.seen.insert(dir.to_path_buf(), missing.clone());
        missing
    }
}

/// A re-run that did not run.
fn not_run(of: &str, tree: Option<ObjectId>, why: String) -> Rerun {
    Rerun {
        of: of.into(),
        tree: tree.map(|t| t.to_string()),
        status: None,
        summary: why,
        result: RerunResult::CouldNotRun,
        ok: false,
    }
}

/// How a GREEN's (or a review's) re-run came out: it must pass.
fn judge_pass(of: &str, tree: ObjectId, o: checks::Outcome) -> Rerun {
    let result = match o.status {
        CheckStatus::Pass => RerunResult::Holds,
        CheckStatus::Fail => RerunResult::DoesNotHold,
        CheckStatus::Error => RerunResult::CouldNotRun,
    };
    Rerun {
        of: of.into(),
        tree: Some(tree.to_string()),
        status: Some(o.status),
        summary: o.summary,
        result,
        ok: result == RerunResult::Holds,
    }
}

/// How a RED's re-run came out: it must fail as the check failing.
fn judge_fail(
    spec: &crate::contract::schema::CheckSpec,
    tree: ObjectId,
    o: checks::Outcome,
) -> Rerun {
    let (result, summary) = match o.status {
        CheckStatus::Pass => (RerunResult::DoesNotHold, o.summary.clone()),
        CheckStatus::Error => (RerunResult::CouldNotRun, o.summary.clone()),
        CheckStatus::Fail => match not_red(spec, &o) {
            None => (RerunResult::Holds, o.summary.clone()),
            Some(NotRed::Runner(why)) => {
                (RerunResult::CouldNotRun, format!("{} ({why})", o.summary))
            }
            Some(NotRed::Uncounted(why)) => {
                (RerunResult::DoesNotHold, format!("{} ({why})", o.summary))
            }
        },
    };
    Rerun {
        of: "red".into(),
        tree: Some(tree.to_string()),
        status: Some(o.status),
        summary,
        result,
        ok: result == RerunResult::Holds,
    }
}

/// `on tree <id>` (or nothing when the re-run had no tree).
fn on_tree(r: &Rerun) -> String {
    r.tree
        .as_deref()
        .map(|t| format!(" on tree {}", &t[..12.min(t.len())]))
        .unwrap_or_default()
}

/// Verifies `sprint` at `commit`; with `rerun`, runs the proven checks again.
pub fn verify(store: &Store, sprint: &SprintId, commit: ObjectId, rerun: bool) -> Result<Report> {
    let frozen = contract::require_newest(store, sprint)?;
    // From the objects alone, as a fresh clone in CI has them: never this machine's memos.
    store.forgo_memos();
    let report = gate::evaluate(store, sprint, gate::Judged::Commit(commit))?;
    let mut missing = report.missing.clone();
    let mut not_blocking = report.not_blocking.clone();
    let mut could_not_run: Vec<Step> = Vec::new();
    let problem = report.chain_problem.clone();
    let judged_tree = store.tree_of(commit)?;
    let frozen_files = match contract::pinned::load(store, frozen.tree)? {
        Some(p) => Some(contract::pinned::schema_files(store, frozen.tree, &p)?),
        None => None,
    };
    let mut checkouts = Checkouts {
        store,
        dir: tempfile::Builder::new()
            .prefix("rails-verify-")
            .tempdir()
            .ctx("creating a folder for the temporary checkouts")?,
        made: BTreeMap::new(),
    };
    let mut prerequisites = Prerequisites {
        frozen: &frozen,
        seen: BTreeMap::new(),
    };
    let mut criteria = Vec::new();
    for check in &frozen.contract.dod.checks {
        let id = &check.id;
        let proof = Proof::of(check);
        let c = report.records.get(id);
        let status = c.map(|c| c.status).unwrap_or(CriterionStatus::Pending);
        let mut account = Vec::new();
        if proof == Proof::Guard {
            account.push("a regression guard: GREEN with no RED, re-run like any proof".into());
        }
        if !check.blocking {
            account.push("non-blocking: reported, never blocking".into());
        }
        if let Some(c) = c {
            if c.archived_cycles > 0 {
                account.push(format!(
                    "cycle {} ({} archived by reopen)",
                    c.cycle, c.archived_cycles
                ));
            }
            if let Some(r) = &c.red {
                account.push(record_line("RED", r));
                account.push(match (&r.base, base::difference(store, r)?) {
                    (None, _) => "RED names no base commit: recorded before a RED named one, it cannot be rebuilt from reviewable content".into(),
                    (Some(b), Some(paths)) if paths.is_empty() => {
                        format!("RED base {}: its tree is the base commit's", short(b))
                    }
                    (Some(b), Some(paths)) => format!(
                        "RED base {}: its tree differs from it in {}",
                        short(b),
                        paths.join(", ")
                    ),
                    (Some(b), None) => format!("RED base {} (not in this clone)", short(b)),
                });
            }
            if let Some(r) = &c.green {
                account.push(record_line("GREEN", r));
            }
            if let Some(r) = &c.surface {
                account.push(record_line("SURFACE", r));
            }
            if c.rechecks > 0 {
                account.push(format!(
                    "{} recheck(s), bound now to tree {}",
                    c.rechecks,
                    c.binding
                        .as_ref()
                        .map(|b| &b.tree[..12.min(b.tree.len())])
                        .unwrap_or("-")
                ));
            }
            if proof != Proof::Guard {
                account.push(format!("{} teardown receipt(s)", c.cleanup_receipts));
            }
        } else {
            account.push("nothing recorded".into());
        }
        for m in missing
            .iter()
            .chain(not_blocking.iter())
            .filter(|m| &m.criterion == id)
        {
            account.push(format!("missing: {} ({})", m.reason, m.command));
        }
        let mut reruns = Vec::new();
        let mut not_rerun = None;
        let proven = matches!(status, CriterionStatus::Green | CriterionStatus::Surfaced);
        if rerun && proven {
            if runtime(check.kind) {
                not_rerun = Some(format!(
                    "{} is a runtime check: it needs the running service, so it is not run again here",
                    check.kind.as_str()
                ));
            } else {
                let spec = check
                    .typed_spec()
                    .map_err(|p| Error::refused(format!("the check of {id} is broken: {p}")))?;
                let of = if proof == Proof::Review {
                    "surface"
                } else {
                    "green"
                };
                let dir = checkouts.of(judged_tree)?;
                reruns.push(match prerequisites.missing_in(&dir) {
                    Some(why) => not_run(of, Some(judged_tree), why),
                    None => judge_pass(of, judged_tree, run_in(&spec, &dir, frozen_files.as_ref())),
                });
                if let Some(red) = c.and_then(|c| c.red.as_ref()) {
                    reruns.push(match base::rebuild(store, sprint, red)? {
                        Err(why) => not_run("red", None, why),
                        Ok(tree) => {
                            let dir = checkouts.of(tree)?;
                            match prerequisites.missing_in(&dir) {
                                Some(why) => not_run("red", Some(tree), why),
                                None => judge_fail(
                                    &spec,
                                    tree,
                                    run_in(&spec, &dir, frozen_files.as_ref()),
                                ),
                            }
                        }
                    });
                }
            }
        }
        for r in reruns.iter().filter(|r| !r.ok) {
            let (what, cmd) = match (r.result, r.of.as_str()) {
                (RerunResult::CouldNotRun, of) => (
                    format!(
                        "its {} could not be re-run{}: {}",
                        of.to_uppercase(),
                        on_tree(r),
                        r.summary
                    ),
                    if r.summary.starts_with("prerequisite ") {
                        format!("provide it where verify runs, then: git rails verify {sprint} --rerun")
                    } else if r.summary.contains("before a RED named its base commit") {
                        format!("git rails evidence reopen {sprint} {id} --note \"RED recorded before it named its base commit\", then record a new RED")
                    } else {
                        format!("fix what stops it from running here, then: git rails verify {sprint} --rerun")
                    },
                ),
                (_, "red") => (
                    format!("its RED does not fail again on its tree rebuilt from its base commit{} ({})", on_tree(r), r.summary),
                    format!("git rails evidence reopen {sprint} {id} --note \"<why the RED did not hold>\""),
                ),
                _ => (
                    format!(
                        "does not pass again on {} in a clean checkout ({})",
                        short(&commit.to_string()),
                        r.summary
                    ),
                    if proof == Proof::Guard {
                        format!("fix it and commit, then: git rails evidence recheck {sprint} {id}")
                    } else {
                        format!(
                            "commit what makes it pass, then: git rails evidence recheck {sprint} {id}"
                        )
                    },
                ),
            };
            let step = Step {
                criterion: id.clone(),
                reason: what.clone(),
                command: cmd,
            };
            if r.result == RerunResult::CouldNotRun {
                account.push(format!("could not run: {what}"));
                could_not_run.push(step);
            } else {
                account.push(format!("re-run failed: {what}"));
                if check.blocking {
                    missing.push(step);
                } else {
                    not_blocking.push(step);
                }
            }
        }
        let broken = missing.iter().any(|m| &m.criterion == id);
        let unrun = could_not_run.iter().any(|m| &m.criterion == id);
        let lacking = not_blocking.iter().any(|m| &m.criterion == id);
        criteria.push(Account {
            id: id.clone(),
            kind: check.kind.as_str().to_string(),
            status,
            account,
            because: c
                .and_then(|c| c.green.as_ref())
                .and_then(|g| g.because.clone()),
            reruns,
            not_rerun,
            verdict: if broken || lacking {
                "not done"
            } else if unrun {
                "could not run"
            } else {
                "verified"
            },
            ok: !broken && !unrun && !lacking,
        });
    }
    let not_done = !report.done || problem.is_some() || !missing.is_empty();
    let verdict = if not_done {
        "not done"
    } else if !could_not_run.is_empty() {
        "could not run"
    } else {
        "done"
    };
    Ok(Report {
        schema: SCHEMA,
        sprint: sprint.to_string(),
        version: frozen.version.clone(),
        commit: commit.to_string(),
        done: verdict == "done",
        verdict,
        rerun,
        chain_problem: problem,
        criteria,
        missing,
        could_not_run,
        not_blocking,
        dropped: report.dropped.clone(),
        agent_turns_ended: report.agent_turns_ended.clone(),
        signed_by: None,
    })
}

/// The readable account.
pub fn render(r: &Report) -> String {
    let mut s = format!(
        "verify {} {} at {}{}\n",
        r.sprint,
        r.version,
        short(&r.commit),
        if r.rerun {
            " (checks run again in a clean checkout)"
        } else {
            ""
        }
    );
    if let Some(by) = &r.signed_by {
        s.push_str(&format!("frozen version {}: {by}\n", r.version));
    }
    match &r.chain_problem {
        Some(p) => {
            s.push_str(&format!("evidence chain: {}\n", p.line(&r.sprint)));
            s.push_str(&format!("  {}\n", p.fix(&r.sprint)));
        }
        None => s.push_str("evidence chain: every commit replays\n"),
    }
    for c in &r.criteria {
        s.push_str(&format!(
            "- {} [{}] {}{}\n",
            c.id,
            c.status.as_str(),
            c.kind,
            match c.verdict {
                "verified" => "",
                "could not run" => ": COULD NOT RUN",
                _ => ": NOT VERIFIED",
            }
        ));
        for line in &c.account {
            s.push_str(&format!("    {line}\n"));
        }
        if let Some(b) = &c.because {
            s.push_str(&format!("    GREEN on the RED's tree, because: {b}\n"));
        }
        for x in &c.reruns {
            s.push_str(&format!(
                "    re-run {}{}: {} ({})\n",
                x.of.to_uppercase(),
                on_tree(x),
                match (x.result, x.status) {
                    (RerunResult::CouldNotRun, _) => "could not run",
                    (_, Some(CheckStatus::Pass)) => "pass",
                    (_, Some(CheckStatus::Fail)) => "fail",
                    (_, _) => "could not run",
                },
                x.summary
            ));
        }
        if let Some(n) = &c.not_rerun {
            s.push_str(&format!("    not re-run: {n}\n"));
        }
    }
    for d in &r.dropped {
        s.push_str(&gate::dropped_line(d));
        s.push('\n');
    }
    for t in &r.agent_turns_ended {
        s.push_str(&format!("warning: {}\n", t.message));
    }
    for m in &r.not_blocking {
        s.push_str(&format!(
            "non-blocking (reported, not blocking): {} {}: {}\n",
            m.criterion, m.reason, m.command
        ));
    }
    match r.verdict {
        "done" => s.push_str("verdict: done\n"),
        "could not run" => s.push_str(&format!(
            "verdict: could not run ({} re-run{} could not run here; nothing is said of the proof{})\n",
            r.could_not_run.len(),
            if r.could_not_run.len() == 1 { "" } else { "s" },
            if r.could_not_run.len() == 1 { "" } else { "s" }
        )),
        _ => s.push_str(&format!(
            "verdict: not done ({} step{} missing)\n",
            r.missing.len(),
            if r.missing.len() == 1 { "" } else { "s" }
        )),
    }
    for m in &r.missing {
        s.push_str(&format!("- {} {}: {}\n", m.criterion, m.reason, m.command));
    }
    for m in &r.could_not_run {
        s.push_str(&format!(
            "- could not run: {} {}: {}\n",
            m.criterion, m.reason, m.command
        ));
    }
    s
}

fn escape(s: &str) -> String {
    crate::contract::junit::escape(s)
}

/// JUnit: one test case for the chain and one per criterion; a criterion not done is a
/// `<failure>`, one whose re-run could not run an `<error>` (JUnit's word for a test that
/// could not be carried out).
pub fn junit(r: &Report) -> String {
    let suite = format!("rails verify {} {}", r.sprint, r.version);
    let failures = r
        .criteria
        .iter()
        .filter(|c| c.verdict == "not done")
        .count()
        + usize::from(r.chain_problem.is_some());
    let errors = r
        .criteria
        .iter()
        .filter(|c| c.verdict == "could not run")
        .count();
    let tests = r.criteria.len() + 1;
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.push_str(&format!(
        "<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">\n  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\">\n",
        escape(&suite),
        escape(&suite)
    ));
    s.push_str(&format!(
        "    <testcase classname=\"{}.chain\" name=\"evidence chain\"",
        escape(&r.sprint)
    ));
    match &r.chain_problem {
        Some(p) => s.push_str(&format!(
            ">\n      <failure message=\"{}\" type=\"chain\">{}</failure>\n    </testcase>\n",
            escape(&p.line(&r.sprint)),
            escape(&p.fix(&r.sprint))
        )),
        None => s.push_str("/>\n"),
    }
    for c in &r.criteria {
        s.push_str(&format!(
            "    <testcase classname=\"{}.criterion\" name=\"{}\"",
            escape(&r.sprint),
            escape(&c.id)
        ));
        if c.verdict == "verified" {
            s.push_str("/>\n");
            continue;
        }
        let (element, steps) = if c.verdict == "could not run" {
            ("error", &r.could_not_run)
        } else if r.missing.iter().any(|m| m.criterion == c.id) {
            ("failure", &r.missing)
        } else {
            ("failure", &r.not_blocking)
        };
        let why: Vec<String> = steps
            .iter()
            .filter(|m| m.criterion == c.id)
            .map(|m| format!("{}: {}", m.reason, m.command))
            .collect();
        s.push_str(&format!(
            ">\n      <{element} message=\"{}\" type=\"{}\">{}</{element}>\n    </testcase>\n",
            escape(
                why.first()
                    .map(String::as_str)
                    .unwrap_or(if element == "error" {
                        "could not run"
                    } else {
                        "not verified"
                    })
            ),
            escape(if element == "error" {
                "could not run"
            } else {
                &c.kind
            }),
            escape(&c.account.join("\n"))
        ));
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}
