//! The verdict, recomputed from git objects alone: the newest frozen contract, the evidence
//! chain, and the tree of the commit judged. `status` shows it; `gate` exits on it.

use serde::Serialize;

use super::chain::{self, Problem};
use super::{next_command, spec_changed, CriterionStatus, Proof};
use crate::contract::{self, validate::glob_matcher};
use crate::error::{Error, Result};
use crate::store::{ObjectId, Store};

pub const SCHEMA: &str = "rails-status/v1";

/// One step still missing, with the command that takes it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub criterion: String,
    pub reason: String,
    pub command: String,
}

/// One criterion as the gate sees it.
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_problem: Option<Problem>,
}

fn short(id: &Option<String>) -> Option<String> {
    id.as_ref().map(|s| s[..s.len().min(7)].to_string())
}

/// Paths under `.rails/` are the tool's own drafts, not the subject; a review proof's own
/// checklist is its subject wherever it lives.
fn subject_path(p: &str, checklist: Option<&str>) -> bool {
    !p.starts_with(".rails/") || checklist == Some(p)
}

/// Computes the report for `sprint`, judging staleness on `commit` (None: no commit to judge).
pub fn evaluate(store: &Store, sprint: &str, commit: Option<ObjectId>) -> Result<Report> {
    let tree = match commit {
        Some(c) => Some(store.tree_of(c)?),
        None => None,
    };
    evaluate_tree(store, sprint, commit.map(|c| c.to_string()), tree)
}

/// Like [`evaluate`], judging staleness on a tree (the index's tree, for a commit being made).
pub fn evaluate_tree(
    store: &Store,
    sprint: &str,
    label: Option<String>,
    commit_tree: Option<ObjectId>,
) -> Result<Report> {
    let frozen = contract::require_newest(store, sprint)?;
    let derived = chain::derive(store, sprint)?;
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
    for check in &frozen.contract.dod.checks {
        let proof = Proof::of(check.kind);
        let c = criteria_state.get(&check.id);
        let status = c.map(|c| c.status).unwrap_or(CriterionStatus::Pending);
        let needs_reopen = c.is_some_and(|c| {
            c.status != CriterionStatus::Pending && spec_changed(c.proven_spec.as_ref(), check)
        });
        let mut stale = None;
        if let (Some(c), Some(tree)) = (c, commit_tree) {
            if c.status == CriterionStatus::Surfaced {
                if let Some(b) = &c.binding {
                    let bound = ObjectId::from_hex(b.tree.as_bytes()).map_err(|e| {
                        Error::internal(format!("criterion {} has a bad bound tree: {e}", check.id))
                    })?;
                    if bound != tree {
                        let checklist = match check.typed_spec() {
                            Ok(crate::contract::schema::CheckSpec::ManualChecklist(c)) => {
                                Some(c.path.trim_start_matches("./").to_string())
                            }
                            _ => None,
                        };
                        let scope = match &check.scope {
                            Some(globs) => Some(glob_matcher(globs)?),
                            None => None,
                        };
                        let changed: Vec<String> = store
                            .changed_paths(bound, tree)?
                            .into_iter()
                            .filter(|p| subject_path(p, checklist.as_deref()))
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
        if needs_reopen {
            missing.push(Step {
                criterion: id.clone(),
                reason: format!(
                    "its check changed in {} since it was proven, so its subject changed",
                    frozen.version
                ),
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
    })
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
    s
}
