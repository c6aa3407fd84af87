//! Replaying a transition that was already recorded (its record is given): used by
//! `git rails sync` to merge evidence chains that diverged between clones ([`super::merge`]).
//!
//! Kept apart from `transition` on purpose: it runs nothing and writes nothing, and goes
//! through the same table (`check_allowed`) so it refuses exactly what `transition` refuses.

use super::rules::{apply, check_allowed, record_stem, unchanged_green, Request, Transition};
use super::state::{Criterion, Proof, Record, State};
use crate::contract::checks::Status as CheckStatus;
use crate::contract::schema::Check;
use crate::contract::SprintId;
use crate::error::{Error, Result};

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
    let proof = Proof::of(check);
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
