//! The verdict, recomputed from git objects alone: the newest frozen contract, the evidence
//! chain, and the tree of the commit judged. `status` shows it; `gate` exits on it.

use serde::{Deserialize, Serialize};

use super::chain::{self, Problem};
use super::{next_command, spec_changed, CriterionStatus, Proof};
use crate::contract::SprintId;
use crate::contract::{self, validate::glob_matcher};
use crate::error::{Error, Result};
use crate::store::{ObjectId, Store};

pub const SCHEMA: &str = "rails-status/v1";

fn schema() -> &'static str {
    SCHEMA
}

/// One step still missing, with the command that takes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub criterion: String,
    pub reason: String,
    pub command: String,
}

/// One criterion as the gate sees it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CriterionReport {
    pub id: String,
    pub description: String,
    pub kind: String,
    pub proof: Proof,
    pub status: CriterionStatus,
    pub cycle: u32,
    pub red: Option<String>,
    pub green: Option<String>,
    pub surface: Option<String>,
    pub receipts: usize,
    /// Paths changed since the tree the criterion was proven on (within its scope).
    pub stale: Option<Vec<String>>,
    /// The check changed in a newer contract version than the one it was proven under.
    pub needs_reopen: bool,
    pub bound_tree: Option<String>,
    /// A GREEN on its RED's tracked tree: what changed outside the tree, as its recorder said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub because: Option<String>,
}

/// The `rails-status/v1` document (the gate's too).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    #[serde(skip_deserializing, default = "schema")]
    pub schema: &'static str,
    pub sprint: String,
    pub version: String,
    #[serde(rename = "type")]
    pub sprint_type: String,
    /// The commit judged for staleness.
    pub commit: Option<String>,
    pub done: bool,
    pub criteria: Vec<CriterionReport>,
    pub no_receipt: Vec<String>,
    pub stale: Vec<String>,
    pub missing: Vec<Step>,
    /// Turns an agent ended with this sprint unproven (after `rails.agentStopLimit` blocked
    /// stops with nothing moved): "agent ended its turn with <sprint> unproven (session <id>)".
    pub agent_turns_ended: Vec<crate::hooks::agent::EndedTurn>,
    /// The first commit of the evidence chain that does not replay (the criteria are then as
    /// the commits before it replay, and the sprint is not done).
    #[serde(skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub chain_problem: Option<Problem>,
    /// Blocking criteria of earlier versions that a later one dropped on purpose, with why.
    pub dropped: Vec<DroppedReport>,
    /// Who signed the frozen version judged: `alice@example.com (planner)`, `unsigned`, … (set by
    /// [`judge_signer`] where a command shows it).
    #[serde(skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub signed_by: Option<String>,
    /// Each criterion's records as the chain replays (what `verify` accounts for).
    #[serde(skip)]
    pub records: std::collections::BTreeMap<String, super::Criterion>,
}

/// A criterion dropped by a version (`freeze --bump --drop <id> --reason …`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DroppedReport {
    pub id: String,
    /// The version that dropped it.
    pub version: String,
    /// `removed` or `made non-blocking`.
    pub change: String,
    /// The last version in which it was blocking.
    pub blocking_in: String,
    pub reason: String,
}

/// `dropped in v1.1: c2 — <reason>`.
pub fn dropped_line(d: &DroppedReport) -> String {
    let how = if d.change == "removed" {
        String::new()
    } else {
        format!(" ({})", d.change)
    };
    format!("dropped in {}: {}{how} — {}", d.version, d.id, d.reason)
}

/// What the versions before the newest say about criteria that went away: the drops in force,
/// and a missing step for each blocking criterion that vanished with no drop recorded (a
/// version written by hand: `freeze` refuses it). A sprint frozen once has neither.
fn dropped_criteria(
    store: &Store,
    sprint: &SprintId,
    frozen: &contract::Frozen,
) -> Result<(Vec<DroppedReport>, Vec<Step>)> {
    if frozen.version == "v1" && frozen.dropped.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let versions = contract::versions(store, sprint)?;
    let dropped = contract::drops_in_force(&versions)
        .into_iter()
        .map(|(version, d)| DroppedReport {
            id: d.id,
            version,
            change: d.change,
            blocking_in: d.blocking_in,
            reason: d.reason,
        })
        .collect();
    let steps = contract::vanished(&contract::chain_of(&versions))
        .into_iter()
        .map(|v| Step {
            reason: format!(
                "was a blocking criterion in {} and is {} in {} with no recorded drop; a criterion never vanishes silently",
                v.blocking_in,
                if v.change == "removed" { "gone" } else { "non-blocking" },
                frozen.version
            ),
            command: format!(
                "git rails contract edit {sprint} --next (restore it) or git rails contract freeze {sprint} --bump --drop {} --reason \"<why>\"",
                v.id
            ),
            criterion: v.id,
        })
        .collect();
    Ok((dropped, steps))
}

fn short(id: &Option<String>) -> Option<String> {
    id.as_ref().map(|s| s[..s.len().min(7)].to_string())
}

/// Paths under `.rails/` are the tool's own drafts and checklists, not the subject: they
/// never make a proof stale (a checklist's ticks count once committed, when it is surfaced).
fn subject_path(p: &str) -> bool {
    !p.starts_with(".rails/")
}

/// The test files of `checkPaths` as each version froze them, to find criteria proven under an
/// older version whose test files a newer one re-froze.
fn check_path_pins(
    store: &Store,
    sprint: &SprintId,
) -> Result<std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>> {
    let mut out = std::collections::BTreeMap::new();
    for f in contract::versions(store, sprint)? {
        let pins = contract::pinned::load(store, f.tree)?
            .map(|p| {
                p.check_path_blobs()
                    .into_iter()
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        out.insert(f.version, pins);
    }
    Ok(out)
}

/// What the gate judges a sprint's proofs against: staleness is a change between the tree a
/// criterion was proven on and this one.
#[derive(Debug, Clone)]
pub enum Judged {
    /// No tree: the records alone (a repository with no commit yet).
    Nothing,
    /// A commit's tree (HEAD, a pushed tip, the commit CI checks).
    Commit(ObjectId),
    /// A tree that is no commit yet (the index's tree, for a commit being made), shown as `label`.
    Tree { label: String, tree: ObjectId },
}

impl Judged {
    /// A commit when there is one.
    pub fn commit(commit: Option<ObjectId>) -> Judged {
        commit.map_or(Judged::Nothing, Judged::Commit)
    }
}

/// Is `sprint` done at `judged`? The one place that answers it (status, gate, the hooks, the
/// agent stop, verify, MCP): the newest frozen contract, the evidence chain as it replays
/// ([`chain::derive`]), and the tree judged.
pub fn evaluate(store: &Store, sprint: &SprintId, judged: Judged) -> Result<Report> {
    let (label, tree) = match judged {
        Judged::Nothing => (None, None),
        Judged::Commit(c) => (Some(c.to_string()), Some(store.tree_of(c)?)),
        Judged::Tree { label, tree } => (Some(label), Some(tree)),
    };
    let derived = chain::derive(store, sprint)?;
    judge(store, sprint, label, tree, derived)
}

fn judge(
    store: &Store,
    sprint: &SprintId,
    label: Option<String>,
    commit_tree: Option<ObjectId>,
    derived: chain::Derived,
) -> Result<Report> {
    let frozen = contract::require_newest(store, sprint)?;
    let criteria_state = derived.state.criteria;
    let mut criteria = Vec::new();
    let mut missing = Vec::new();
    if let Some(p) = &derived.problem {
        missing.push(Step {
            criterion: "evidence".into(),
            reason: format!(
                "chain does not replay at {}: {}",
                &p.commit[..12.min(p.commit.len())],
                p.what
            ),
            command: "git rails doctor".into(),
        });
    }
    let mut no_receipt = Vec::new();
    let mut stale_ids = Vec::new();
    // The test files of checkPaths: changed in the judged tree since the freeze, or re-frozen
    // by a newer version than the one a criterion's RED was recorded under.
    let pins = match &frozen.contract.check_paths {
        Some(_) => contract::pinned::load(store, frozen.tree)?,
        None => None,
    };
    let changed_tests = match (commit_tree, &pins) {
        (Some(t), Some(_)) => {
            contract::pinned::changed_check_paths(store, &frozen.contract, pins.as_ref(), t)?
        }
        _ => Vec::new(),
    };
    let older_red = pins.is_some()
        && criteria_state.values().any(|c| {
            c.red
                .as_ref()
                .map(|r| r.contract_version.as_str())
                .is_some_and(|v| v != frozen.version)
        });
    let pins_by_version = if older_red {
        check_path_pins(store, sprint)?
    } else {
        Default::default()
    };
    let refrozen = |version: Option<&str>| -> Vec<String> {
        let (Some(v), Some(now)) = (version, pins_by_version.get(&frozen.version)) else {
            return Vec::new();
        };
        let Some(then) = pins_by_version.get(v) else {
            return Vec::new();
        };
        let mut paths: Vec<String> = then
            .keys()
            .chain(now.keys())
            .filter(|p| then.get(*p) != now.get(*p))
            .cloned()
            .collect();
        paths.sort();
        paths.dedup();
        paths
    };
    for check in &frozen.contract.dod.checks {
        let proof = Proof::of(check.kind);
        let c = criteria_state.get(&check.id);
        let status = c.map(|c| c.status).unwrap_or(CriterionStatus::Pending);
        let proven = c.is_some_and(|c| c.status != CriterionStatus::Pending);
        let spec_moved = proven && c.is_some_and(|c| spec_changed(c.proven_spec.as_ref(), check));
        let tests_moved: Vec<String> = if proven && proof == Proof::Check {
            let mut t: Vec<String> = changed_tests.clone();
            t.extend(refrozen(
                c.and_then(|c| c.red.as_ref())
                    .map(|r| r.contract_version.as_str()),
            ));
            t.sort();
            t.dedup();
            if contract::pinned::runs_any(check, &t) {
                t
            } else {
                Vec::new()
            }
        } else {
            Vec::new()
        };
        let needs_reopen = spec_moved || !tests_moved.is_empty();
        let mut stale = None;
        if let (Some(c), Some(tree)) = (c, commit_tree) {
            if c.status == CriterionStatus::Surfaced {
                if let Some(b) = &c.binding {
                    let bound = ObjectId::from_hex(b.tree.as_bytes()).map_err(|e| {
                        Error::internal(format!("criterion {} has a bad bound tree: {e}", check.id))
                    })?;
                    if bound != tree {
                        let scope = match &check.scope {
                            Some(globs) => Some(glob_matcher(globs)?),
                            None => None,
                        };
                        let changed: Vec<String> = store
                            .changed_paths(bound, tree)?
                            .into_iter()
                            .filter(|p| subject_path(p))
                            .filter(|p| scope.as_ref().is_none_or(|s| s.is_match(p.as_str())))
                            .collect();
                        if !changed.is_empty() {
                            stale = Some(changed);
                        }
                    }
                }
            }
        }
        let receipts = c.map(|c| c.cleanup_receipts).unwrap_or(0);
        let id = &check.id;
        if needs_reopen && !spec_moved && changed_tests.iter().any(|p| tests_moved.contains(p)) {
            missing.push(Step {
                criterion: id.clone(),
                reason: format!(
                    "the test files it runs changed since {} froze them ({}), so its subject changed",
                    frozen.version,
                    tests_moved.join(", ")
                ),
                command: format!(
                    "restore them, or freeze them as a new version (git rails contract edit {sprint} --next, then git rails contract freeze {sprint} --bump), then git rails evidence reopen {sprint} {id} --note \"<what changed>\""
                ),
            });
        } else if needs_reopen {
            missing.push(Step {
                criterion: id.clone(),
                reason: if spec_moved {
                    format!(
                        "its check changed in {} since it was proven, so its subject changed",
                        frozen.version
                    )
                } else {
                    format!(
                        "{} froze new content of the test files it runs ({}), so its subject changed",
                        frozen.version,
                        tests_moved.join(", ")
                    )
                },
                command: format!(
                    "git rails evidence reopen {sprint} {id} --note \"<what changed>\""
                ),
            });
        } else if status != CriterionStatus::Surfaced {
            missing.push(Step {
                criterion: id.clone(),
                reason: format!("is {}", status.as_str()),
                command: next_command(sprint, id, status, proof),
            });
        } else {
            if proof == Proof::Check && receipts == 0 {
                no_receipt.push(id.clone());
                missing.push(Step {
                    criterion: id.clone(),
                    reason: "has no teardown receipt".into(),
                    command: next_command(sprint, id, status, proof),
                });
            }
            if let Some(paths) = &stale {
                stale_ids.push(id.clone());
                let shown: Vec<&str> = paths.iter().take(5).map(String::as_str).collect();
                missing.push(Step {
                    criterion: id.clone(),
                    reason: format!(
                        "is stale: {}{} changed since it was proven",
                        shown.join(", "),
                        if paths.len() > 5 { ", …" } else { "" }
                    ),
                    command: format!("git rails evidence recheck {sprint} {id}"),
                });
            }
        }
        criteria.push(CriterionReport {
            id: id.clone(),
            description: check.description.clone(),
            kind: check.kind.as_str().to_string(),
            proof,
            status,
            cycle: c.map(|c| c.cycle).unwrap_or(1),
            red: short(&c.and_then(|c| c.red.as_ref()).and_then(|r| r.id.clone())),
            green: short(&c.and_then(|c| c.green.as_ref()).and_then(|r| r.id.clone())),
            surface: short(
                &c.and_then(|c| c.surface.as_ref())
                    .and_then(|r| r.id.clone()),
            ),
            receipts,
            stale,
            needs_reopen,
            bound_tree: c.and_then(|c| c.binding.as_ref()).map(|b| b.tree.clone()),
            because: c
                .and_then(|c| c.green.as_ref())
                .and_then(|g| g.because.clone()),
        });
    }
    let (dropped, vanished) = dropped_criteria(store, sprint, &frozen)?;
    missing.extend(vanished);
    let done = !criteria.is_empty() && missing.is_empty();
    Ok(Report {
        schema: SCHEMA,
        sprint: sprint.to_string(),
        version: frozen.version.clone(),
        sprint_type: frozen.contract.sprint_type.as_str().to_string(),
        commit: label,
        done,
        criteria,
        no_receipt,
        stale: stale_ids,
        missing,
        agent_turns_ended: crate::hooks::agent::ended_turns(store, sprint)?,
        chain_problem: derived.problem,
        dropped,
        signed_by: None,
        records: criteria_state,
    })
}

/// Who signed `sprint`'s newest frozen version, in words, and — under a signing policy — the
/// step still missing when no allowed planner did (a sprint then is not done, whoever proved
/// it: the judged party never chooses its judge).
pub fn signer_of_version(
    store: &Store,
    sprint: &SprintId,
    policy: Option<&crate::policy::Policy>,
) -> Result<(String, Option<Step>)> {
    use crate::policy::Role;
    let Some(frozen) = contract::newest(store, sprint)? else {
        return Ok(("no frozen version".into(), None));
    };
    let Some(policy) = policy else {
        let words = match store.commit_signature(frozen.commit)? {
            Some(_) => "signed (no signing policy to check it against)",
            None => "unsigned",
        };
        return Ok((words.to_string(), None));
    };
    let signer = policy.signer(store, frozen.commit)?;
    let words = policy.describe(&signer);
    if policy.allows(&signer, Role::Planner) {
        return Ok((words, None));
    }
    let planners = policy.principals(Role::Planner);
    let step = Step {
        criterion: "contract".into(),
        reason: format!(
            "{} is {words}; under the signing policy ({}) only a version an allowed planner ({}) signed defines done",
            frozen.version,
            policy.source,
            if planners.is_empty() { "none is named".to_string() } else { planners.join(", ") }
        ),
        command: format!("git rails contract freeze {sprint} --bump --sign (run by a planner)"),
    };
    Ok((words, Some(step)))
}

/// Sets who signed the judged version on `report`, and under a policy the missing step of a
/// version no planner signed.
pub fn judge_signer(
    store: &Store,
    report: &mut Report,
    policy: Option<&crate::policy::Policy>,
) -> Result<()> {
    let sprint = SprintId::recorded(&report.sprint);
    let (words, step) = signer_of_version(store, &sprint, policy)?;
    report.signed_by = Some(words);
    if let Some(step) = step {
        report.missing.insert(0, step);
        report.done = false;
    }
    Ok(())
}

/// The seed's status report.
pub fn render_status(r: &Report) -> String {
    let mut s = format!(
        "Contract {} {} [{}]: {} criteria\n",
        r.sprint,
        r.version,
        r.sprint_type,
        r.criteria.len()
    );
    if let Some(by) = &r.signed_by {
        s.push_str(&format!("Frozen version {}: {by}\n", r.version));
    }
    for c in &r.criteria {
        let mut ids = Vec::new();
        if let Some(x) = &c.red {
            ids.push(format!("RED:{x}"));
        }
        if let Some(x) = &c.green {
            ids.push(format!("GREEN:{x}"));
        }
        if let Some(x) = &c.surface {
            ids.push(format!("SURFACE:{x}"));
        }
        s.push_str(&format!(
            "- [{}] {}: {} -> {}{}",
            c.status.as_str(),
            c.id,
            c.description,
            c.kind,
            if c.proof == Proof::Review {
                " (review)"
            } else {
                ""
            }
        ));
        if !ids.is_empty() {
            s.push_str(&format!(" ({})", ids.join(" ")));
        }
        if c.needs_reopen {
            s.push_str(" [check changed: reopen]");
        }
        s.push('\n');
        if let Some(b) = &c.because {
            s.push_str(&format!("    GREEN on the RED's tree, because: {b}\n"));
        }
    }
    if let Some(p) = &r.chain_problem {
        s.push_str(&format!(
            "Evidence chain does not replay: {}\n",
            p.line(&r.sprint)
        ));
        s.push_str(&format!("  {}\n", p.fix(&r.sprint)));
    }
    s.push_str(&format!("No teardown receipt {}", r.no_receipt.len()));
    if !r.no_receipt.is_empty() {
        s.push_str(&format!(": {}", r.no_receipt.join(", ")));
    }
    s.push('\n');
    s.push_str(&format!("Stale {}", r.stale.len()));
    if !r.stale.is_empty() {
        s.push_str(&format!(": {}", r.stale.join(", ")));
    }
    s.push('\n');
    for t in &r.agent_turns_ended {
        let at = t.head.as_deref().map(|h| &h[..h.len().min(7)]);
        s.push_str(&format!(
            "Warning: {}{}\n",
            t.message,
            at.map(|h| format!(", at commit {h}")).unwrap_or_default()
        ));
    }
    for d in &r.dropped {
        s.push_str(&dropped_line(d));
        s.push('\n');
    }
    s
}
