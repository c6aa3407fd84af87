//! The transition table: which transition each status allows (refused in the words a user
//! needs, with the command to run next), and what an allowed step does to a criterion.
//!
//! Kept apart from carrying a transition out (`transition`) and from replaying one already
//! recorded (`replay`, and the chain's replay in [`super::chain`]): all of them go through this
//! one table, so a clone, CI and the server refuse exactly what the writer refused.

use super::q;
use super::state::{spec_changed, spec_value, Binding, Criterion, CriterionStatus, Proof, Record};
use crate::contract::schema::{Check, CheckKind};
use crate::contract::SprintId;
use crate::error::{Error, Result};

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

/// The command that moves a criterion on from where it is.
pub fn next_command(sprint: &SprintId, id: &str, status: CriterionStatus, proof: Proof) -> String {
    match (status, proof) {
        (CriterionStatus::Pending, Proof::Review) => format!(
            "git rails evidence surface {sprint} {id} --note \"<where a person sees it>\""
        ),
        (CriterionStatus::Pending, Proof::Check) => format!("git rails evidence red {sprint} {id}"),
        (CriterionStatus::Pending | CriterionStatus::Red, Proof::Guard) => {
            format!("git rails evidence green {sprint} {id}")
        }
        (CriterionStatus::Green | CriterionStatus::Surfaced, Proof::Guard) => {
            format!("git rails evidence recheck {sprint} {id}")
        }
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
pub(super) fn check_allowed(req: &Request<'_>, c: &Criterion, check: &Check) -> Result<()> {
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
            if c.proof == Proof::Guard {
                return Err(Error::refused(format!(
                    "Criterion {} is a regression guard (\"proof\": \"guard\"): it passes already and has no RED. Record that it still passes: git rails evidence green {sprint} {id}",
                    q(id)
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
                Pending if c.proof == Proof::Guard => Ok(()),
                Pending => Err(failing_first()),
                Green if c.proof == Proof::Guard => Err(Error::refused(format!(
                    "Criterion {} is a guard and already green. To bind it to a newer tree: git rails evidence recheck {sprint} {id}",
                    q(id)
                ))),
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
                (_, Proof::Guard) => Err(Error::refused(format!(
                    "Criterion {} is a regression guard: it is finished once green, with no surface. Next: {}",
                    q(id),
                    next_command(sprint, id, c.status, c.proof)
                ))),
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
                Green if c.proof == Proof::Guard => Ok(()),
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
            Green if c.proof == Proof::Guard && spec_changed(c.proven_spec.as_ref(), check) => {
                Err(Error::refused(format!(
                    "The check of guard {} changed in a newer contract version: reopen it and record it green again: git rails evidence reopen {sprint} {id} --note \"<what changed>\"",
                    q(id)
                )))
            }
            Surfaced => Ok(()),
            Green if c.proof == Proof::Guard => Ok(()),
            _ => Err(Error::refused(format!(
                "Criterion {} is {}; recheck re-binds a surfaced criterion to a newer tree. Next: {}",
                q(id),
                status.as_str(),
                next_command(sprint, id, c.status, c.proof)
            ))),
        },
    }
}

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

/// Where a transition's record goes in the evidence tree: `cycles/<id>/<cycle>/<name>` without
/// `.json`/`.log` (receipts and rechecks numbered from 1).
pub(super) fn record_stem(c: &Criterion, id: &str, t: Transition) -> String {
    let base = format!("cycles/{id}/{}", c.cycle);
    match t {
        Transition::Cleanup => format!("{base}/cleanup-{}", c.cleanup_receipts + 1),
        Transition::Recheck => format!("{base}/recheck-{}", c.rechecks + 1),
        t => format!("{base}/{}", t.as_str()),
    }
}

/// The state machine's step, once `check_allowed` let the transition through: the new status,
/// the binding to the observed tree, and the record (or, for a reopen, a fresh cycle).
pub(super) fn apply(c: &mut Criterion, t: Transition, check: &Check, record: Record) {
    let mut binding_by = None;
    match t {
        Transition::Red => {
            c.status = CriterionStatus::Red;
            c.proven_spec = Some(spec_value(check));
        }
        Transition::Green => {
            c.status = CriterionStatus::Green;
            binding_by = Some("green");
            if c.proof == Proof::Guard {
                // A guard has no RED: its GREEN is what proves the subject.
                c.proven_spec = Some(spec_value(check));
            }
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
            // A cycle keeps its criterion's proof, but for a check that became a guard or
            // stopped being one (a reopen is how that change takes effect): chains written
            // before guards replay exactly as they were written.
            let proof = if check.is_guard() || c.proof == Proof::Guard {
                Proof::of(check)
            } else {
                c.proof
            };
            *c = Criterion::new(proof);
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
