//! A sprint's evidence state as `state.json` holds it: each criterion's proof, status, cycle,
//! records and binding, the lighter view the gate reads, and reading it from the tip of the
//! evidence ref.
//!
//! Kept apart from the transitions because it is a record format: everything that reads
//! evidence (the gate, verify, doctor, the reports) reads these types, and states written by
//! older versions must keep reading (see the test).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{evidence_ref, SCHEMA, STATE_FILE};
use crate::contract::checks::Status as CheckStatus;
use crate::contract::schema::{Check, CheckKind};
use crate::contract::SprintId;
use crate::error::{Error, Result};
use crate::store::{ObjectId, Store};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Proof {
    /// The criterion's check runs.
    Check,
    /// A person reads and judges (`manual_checklist`).
    Review,
    /// A regression guard (`"proof": "guard"`): it passes already, so GREEN with no RED, and
    /// it must keep passing.
    Guard,
}

impl Proof {
    /// How the criterion of `check` is proven.
    pub fn of(check: &Check) -> Proof {
        if check.kind == CheckKind::ManualChecklist {
            Proof::Review
        } else if check.is_guard() {
            Proof::Guard
        } else {
            Proof::Check
        }
    }

    /// The status in which a criterion of this proof is finished: surfaced, or green for a
    /// guard (no surface or receipt is asked of it).
    pub fn finished(self, status: CriterionStatus) -> bool {
        match self {
            Proof::Guard => status == CriterionStatus::Green,
            Proof::Check | Proof::Review => status == CriterionStatus::Surfaced,
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
    /// A RED's base commit: `tree` differs from it only in the contract's pinned `checkPaths`
    /// files and the tool folders, and a re-run rebuilds the RED from it (`evidence::base`).
    /// None on REDs recorded before that rule, and on every other record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
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
    pub(super) fn new(proof: Proof) -> Criterion {
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
    pub(super) fn new(sprint: &SprintId) -> State {
        State {
            schema: SCHEMA.to_string(),
            sprint: sprint.to_string(),
            criteria: BTreeMap::new(),
        }
    }
}

/// The kind and spec of a check as one value, to notice a changed subject.
pub fn spec_value(check: &Check) -> Value {
    let mut v = serde_json::json!({"kind": check.kind, "spec": check.spec});
    // Only when set, so what was proven before `proof` existed still reads as unchanged.
    if let Some(p) = check.proof {
        v["proof"] = serde_json::json!(p);
    }
    v
}

/// True when the criterion's proven subject differs from the contract's check.
pub fn spec_changed(proven_spec: Option<&Value>, check: &Check) -> bool {
    match proven_spec {
        Some(v) => *v != spec_value(check),
        None => false,
    }
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
