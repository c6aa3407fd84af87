//! The gate's verdict, kept for the exact inputs it was computed from.
//!
//! The hooks judge on every push and commit, and an agent harness asks after every turn; most
//! of those asks see the same refs and the same tree as the one before. The verdict is a pure
//! function of the newest contract (its ref's tip), the evidence chain (its tip), the agent
//! stops recorded for the sprint (their tip), the tree judged, and the code that judges. So a
//! report computed from them is kept under the common dir (`rails/cache/gate/<sprint>.json`)
//! with those five as its key, and the next ask with the same key reads it instead of reading
//! the contract and replaying the chain again. Any new record, a new commit with another tree,
//! or another build of the tool misses the key, and the report is computed again.
//!
//! What is kept is trusted as much as the hooks themselves: anyone who can write this folder
//! can also delete the hooks. The checks that must not trust this machine never read it:
//! `verify` (what CI runs) and the server's `pre-receive` compute every verdict afresh, and
//! `doctor` compares each kept report with a fresh one.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::gate::{self, Report};
use crate::contract;
use crate::contract::SprintId;
use crate::error::Result;
use crate::hooks::agent::STOPS;
use crate::store::{ObjectId, Store};

/// Everything the verdict is computed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Key {
    build: String,
    contract: Option<String>,
    evidence: Option<String>,
    stops: Option<String>,
    tree: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct Kept {
    key: Key,
    report: Report,
}

/// The code that judges: a hash of the sources (build.rs), so a tool built from other sources
/// (other gate rules, even at the same version) never reads what an older one kept.
fn build_identity() -> String {
    crate::BUILD_ID.to_string()
}

/// Where the report of `sprint` is kept.
pub fn path(store: &Store, sprint: &SprintId) -> PathBuf {
    store
        .common_dir()
        .join("rails/cache/gate")
        .join(format!("{sprint}.json"))
}

fn key(store: &Store, sprint: &SprintId, tree: Option<ObjectId>) -> Result<Key> {
    let tip = |name: String| -> Result<Option<String>> {
        Ok(store.ref_target(&name)?.map(|id| id.to_string()))
    };
    Ok(Key {
        build: build_identity(),
        contract: tip(contract::contract_ref(sprint))?,
        evidence: tip(super::evidence_ref(sprint))?,
        stops: tip(format!("{STOPS}{sprint}"))?,
        tree: tree.map(|t| t.to_string()),
    })
}

fn read(store: &Store, sprint: &SprintId, key: &Key) -> Option<Report> {
    let bytes = std::fs::read(path(store, sprint)).ok()?;
    let kept: Kept = serde_json::from_slice(&bytes).ok()?;
    (kept.key == *key).then_some(kept.report)
}

/// Keeps a report; one that cannot be written only costs the next ask time.
fn write(store: &Store, sprint: &SprintId, key: Key, report: &Report) {
    let kept = Kept {
        key,
        report: report.clone(),
    };
    if let Ok(bytes) = serde_json::to_vec(&kept) {
        let _ = crate::store::cache_write(&path(store, sprint), &bytes);
    }
}

/// [`gate::evaluate`], read from what was kept when nothing it depends on moved.
pub fn evaluate(store: &Store, sprint: &SprintId, commit: Option<ObjectId>) -> Result<Report> {
    let tree = match commit {
        Some(c) => Some(store.tree_of(c)?),
        None => None,
    };
    evaluate_tree(store, sprint, commit.map(|c| c.to_string()), tree)
}

/// [`gate::evaluate_tree`], read from what was kept when nothing it depends on moved.
pub fn evaluate_tree(
    store: &Store,
    sprint: &SprintId,
    label: Option<String>,
    tree: Option<ObjectId>,
) -> Result<Report> {
    let key = key(store, sprint, tree)?;
    if let Some(mut report) = read(store, sprint, &key) {
        report.commit = label;
        return Ok(report);
    }
    let report = gate::evaluate_tree(store, sprint, label, tree)?;
    // A chain that does not replay is told afresh each time, never from a kept file.
    if report.chain_problem.is_none() {
        write(store, sprint, key, &report);
    }
    Ok(report)
}

/// What `doctor` says of the kept report of `sprint`: `Some(reason)` when one is kept for the
/// current refs and disagrees with the verdict computed afresh (a file edited by hand).
pub fn check(store: &Store, sprint: &SprintId) -> Result<Option<String>> {
    let Ok(bytes) = std::fs::read(path(store, sprint)) else {
        return Ok(None);
    };
    let Ok(kept) = serde_json::from_slice::<Kept>(&bytes) else {
        return Ok(Some(format!(
            "{} cannot be read; it is ignored (delete it)",
            path(store, sprint).display()
        )));
    };
    let tree = match &kept.key.tree {
        Some(t) => match ObjectId::from_hex(t.as_bytes()) {
            Ok(t) if store.has_object(t) => Some(t),
            _ => return Ok(None),
        },
        None => None,
    };
    if key(store, sprint, tree)? != kept.key {
        return Ok(None); // kept for other inputs: never read for these
    }
    let fresh = gate::evaluate_tree(store, sprint, None, tree)?;
    let mut kept_report = kept.report;
    kept_report.commit = None;
    let same = serde_json::to_value(&fresh).ok() == serde_json::to_value(&kept_report).ok();
    Ok((!same).then(|| {
        format!(
            "the gate report kept for {sprint} ({}) says {} but its records say {}: the file was not written by the gate",
            path(store, sprint).display(),
            if kept_report.done { "done" } else { "not done" },
            if fresh.done { "done" } else { "not done" },
        )
    }))
}
