//! `git rails verify`: the gate's verdict with its account, from the objects alone (the chain
//! replayed without the local cache), and with `--rerun` the proof itself re-earned: each
//! proven check run again on the judged commit, and each RED on the tree its RED recorded, in a
//! clean temporary checkout (never the user's work tree or index). A record written by hand
//! cannot survive it: what CI runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::chain::Problem;
use super::gate::{self, Step};
use super::{CriterionStatus, Proof, Record};
use crate::contract::checks::{self, Status as CheckStatus};
use crate::contract::schema::CheckKind;
use crate::contract::SprintId;
use crate::contract::{self};
use crate::error::{Context, Error, Result};
use crate::store::{ObjectId, Store};

pub const SCHEMA: &str = "rails-verify/v1";

/// One check run again.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rerun {
    /// `green` (on the judged commit) or `red` (on the RED's tree).
    pub of: String,
    pub tree: String,
    pub status: CheckStatus,
    pub summary: String,
    /// The GREEN passed again, or the RED failed again.
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
    pub rerun: bool,
    /// The first commit of the chain that does not replay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_problem: Option<Problem>,
    pub criteria: Vec<Account>,
    pub missing: Vec<Step>,
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

/// Verifies `sprint` at `commit`; with `rerun`, runs the proven checks again.
pub fn verify(store: &Store, sprint: &SprintId, commit: ObjectId, rerun: bool) -> Result<Report> {
    let frozen = contract::require_newest(store, sprint)?;
    // From the objects alone, as a fresh clone in CI has them: never this machine's memos.
    store.forgo_memos();
    let report = gate::evaluate(store, sprint, gate::Judged::Commit(commit))?;
    let mut missing = report.missing.clone();
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
    let mut criteria = Vec::new();
    for check in &frozen.contract.dod.checks {
        let id = &check.id;
        let c = report.records.get(id);
        let status = c.map(|c| c.status).unwrap_or(CriterionStatus::Pending);
        let mut account = Vec::new();
        if let Some(c) = c {
            if c.archived_cycles > 0 {
                account.push(format!(
                    "cycle {} ({} archived by reopen)",
                    c.cycle, c.archived_cycles
                ));
            }
            if let Some(r) = &c.red {
                account.push(record_line("RED", r));
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
            account.push(format!("{} teardown receipt(s)", c.cleanup_receipts));
        } else {
            account.push("nothing recorded".into());
        }
        for m in missing.iter().filter(|m| &m.criterion == id) {
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
                let dir = checkouts.of(judged_tree)?;
                let o = run_in(&spec, &dir, frozen_files.as_ref());
                reruns.push(Rerun {
                    of: if Proof::of(check.kind) == Proof::Review {
                        "surface".into()
                    } else {
                        "green".into()
                    },
                    tree: judged_tree.to_string(),
                    status: o.status,
                    ok: o.status == CheckStatus::Pass,
                    summary: o.summary,
                });
                if let Some(red_tree) = c
                    .and_then(|c| c.red.as_ref())
                    .and_then(|r| r.tree.as_deref())
                    .and_then(|t| ObjectId::from_hex(t.as_bytes()).ok())
                {
                    let o = if store.has_object(red_tree) {
                        let dir = checkouts.of(red_tree)?;
                        run_in(&spec, &dir, frozen_files.as_ref())
                    } else {
                        checks::Outcome::error(
                            format!("the RED's tree {red_tree} is not in this clone"),
                            serde_json::Value::Null,
                        )
                    };
                    reruns.push(Rerun {
                        of: "red".into(),
                        tree: red_tree.to_string(),
                        status: o.status,
                        ok: o.status == CheckStatus::Fail,
                        summary: o.summary,
                    });
                }
            }
        }
        for r in reruns.iter().filter(|r| !r.ok) {
            let (what, cmd) = if r.of == "red" {
                (
                    format!("its RED does not fail again on its tree {} ({})", &r.tree[..12], r.summary),
                    format!("git rails evidence reopen {sprint} {id} --note \"<why the RED did not hold>\""),
                )
            } else {
                (
                    format!(
                        "does not pass again on {} in a clean checkout ({})",
                        short(&commit.to_string()),
                        r.summary
                    ),
                    format!(
                        "commit what makes it pass, then: git rails evidence recheck {sprint} {id}"
                    ),
                )
            };
            missing.push(Step {
                criterion: id.clone(),
                reason: what.clone(),
                command: cmd,
            });
            account.push(format!("re-run failed: {what}"));
        }
        let ok = !missing.iter().any(|m| &m.criterion == id);
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
            ok,
        });
    }
    let done = report.done && problem.is_none() && missing.is_empty();
    Ok(Report {
        schema: SCHEMA,
        sprint: sprint.to_string(),
        version: frozen.version.clone(),
        commit: commit.to_string(),
        done,
        rerun,
        chain_problem: problem,
        criteria,
        missing,
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
            if c.ok { "" } else { ": NOT VERIFIED" }
        ));
        for line in &c.account {
            s.push_str(&format!("    {line}\n"));
        }
        if let Some(b) = &c.because {
            s.push_str(&format!("    GREEN on the RED's tree, because: {b}\n"));
        }
        for x in &c.reruns {
            s.push_str(&format!(
                "    re-run {} on tree {}: {} ({})\n",
                x.of.to_uppercase(),
                &x.tree[..12.min(x.tree.len())],
                match x.status {
                    CheckStatus::Pass => "pass",
                    CheckStatus::Fail => "fail",
                    CheckStatus::Error => "could not run",
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
    if r.done {
        s.push_str("verdict: done\n");
    } else {
        s.push_str(&format!(
            "verdict: not done ({} step{} missing)\n",
            r.missing.len(),
            if r.missing.len() == 1 { "" } else { "s" }
        ));
        for m in &r.missing {
            s.push_str(&format!("- {} {}: {}\n", m.criterion, m.reason, m.command));
        }
    }
    s
}

fn escape(s: &str) -> String {
    crate::contract::junit::escape(s)
}

/// JUnit: one test case for the chain and one per criterion.
pub fn junit(r: &Report) -> String {
    let suite = format!("rails verify {} {}", r.sprint, r.version);
    let failures =
        r.criteria.iter().filter(|c| !c.ok).count() + usize::from(r.chain_problem.is_some());
    let tests = r.criteria.len() + 1;
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.push_str(&format!(
        "<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\">\n  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">\n",
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
        if c.ok {
            s.push_str("/>\n");
            continue;
        }
        let why: Vec<String> = r
            .missing
            .iter()
            .filter(|m| m.criterion == c.id)
            .map(|m| format!("{}: {}", m.reason, m.command))
            .collect();
        s.push_str(&format!(
            ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
            escape(why.first().map(String::as_str).unwrap_or("not verified")),
            escape(&c.kind),
            escape(&c.account.join("\n"))
        ));
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}
