//! Failing-first evidence, as state: each criterion of a sprint goes pending → red → green →
//! surfaced, and the only way back is a reopen that archives the cycle.
//!
//! The state lives in `refs/rails/evidence/<sprint>`: one commit per transition, its tree
//! holding `state.json` and `cycles/<criterion>/<n>/…` (every record and captured log, archived
//! cycles included). Writers hold the sprint's lock and move the ref by compare-and-swap.
//!
//! One concept a file: `state` (the `state.json` format and reading it), `rules` (the
//! transition table), `transition` (observing and writing one), `replay` (applying one already
//! recorded); [`chain`] (the record chain and its replay), [`merge`], [`gate`], [`verify`], [`subject`] (the
//! tool folders, which a proof is never about), `red` (what counts as a RED), [`base`] (a RED's
//! reviewable content: its base commit and the contract's pinned files).

pub mod base;
pub mod chain;
pub mod gate;
pub mod merge;
mod red;
mod replay;
mod rules;
mod state;
pub mod subject;
mod transition;
pub mod verify;

use crate::store::refs;

pub use replay::{check_record, empty_state, replay};
use rules::{apply, check_allowed, record_stem};
pub use rules::{checked_because, judges_tree, next_command, unchanged_green, Request, Transition};
pub use state::{
    load, load_view, spec_changed, spec_value, Binding, Criterion, CriterionStatus, CriterionView,
    Proof, Record, RecordId, State,
};
pub use transition::{transition, Recorded};

pub const STATE_FILE: &str = "state.json";

/// Where the evidence tree keeps the trees its records observed, each at `trees/<tree id>`.
pub const TREES_DIR: &str = "trees";

pub const SCHEMA: &str = "rails-evidence/v1";

/// The ref of a sprint's evidence chain.
pub fn evidence_ref(sprint: &str) -> String {
    refs::Namespace::Evidence.name(sprint)
}

fn q(s: &str) -> String {
    format!("\"{s}\"")
}
