//! The gate's verdict, kept for the exact inputs it was computed from.
//!
//! The hooks judge on every push and commit, and an agent harness asks after every turn; most
//! of those asks see the same refs and the same tree as the one before. The verdict is a pure
//! function of the newest contract (its ref's tip), the evidence chain (its tip), the agent
//! stops recorded for the sprint (their tip), the tree judged, and the code that judges. So a
//! report computed from them is kept under the common dir (`rails/cache/gate/<sprint>.json`)
//! with those five as its key, and the next ask with the same key reads it instead of reading
//! the contract and replaying the chain again. The key also names the commit the tree was read
//! from, so asking about the same commit again reads no object at all (a pack's index costs a
//! walk over all its objects to open): `doctor` checks that commit's tree is the one kept. Any
//! new record, a new commit with another tree, or another build of the tool misses the key, and
//! the report is computed again.
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

/// Everything the verdict is computed from: the build, the three ref tips and the tree judged.
/// `commit` is the commit the tree was read from, when there was one: the next ask about the
/// same commit finds the tree without reading any object (opening a pack's index costs a walk
/// over every object in it), and an ask about another commit with the same tree still hits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Key {
    build: String,
    contract: Option<String>,
    evidence: Option<String>,
    stops: Option<String>,
    tree: Option<String>,
    #[serde(default)]
    commit: Option<String>,
}

impl Key {
    /// The same records and build (the tree and commit aside).
    fn same_records(&self, other: &Key) -> bool {
        (&self.build, &self.contract, &self.evidence, &self.stops)
            == (&other.build, &other.contract, &other.evidence, &other.stops)
    }
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

/// The key of the records as they are now, with `tree` and `commit` as given.
fn key(
    store: &Store,
    sprint: &SprintId,
    tree: Option<ObjectId>,
    commit: Option<ObjectId>,
) -> Result<Key> {
    let tip = |name: String| -> Result<Option<String>> {
        Ok(store.ref_target(&name)?.map(|id| id.to_string()))
    };
    Ok(Key {
        build: build_identity(),
        contract: tip(contract::contract_ref(sprint))?,
        evidence: tip(super::evidence_ref(sprint))?,
        stops: tip(format!("{STOPS}{sprint}"))?,
        tree: tree.map(|t| t.to_string()),
        commit: commit.map(|c| c.to_string()),
    })
}

fn read(store: &Store, sprint: &SprintId) -> Option<Kept> {
    let bytes = std::fs::read(path(store, sprint)).ok()?;
    serde_json::from_slice(&bytes).ok()
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

/// [`gate::evaluate`], read from what was kept when nothing it depends on moved. The same
/// commit as the kept one is answered from the refs and the kept file alone.
pub fn evaluate(store: &Store, sprint: &SprintId, commit: Option<ObjectId>) -> Result<Report> {
    let now = key(store, sprint, None, commit)?;
    let kept = read(store, sprint);
    if let (Some(k), Some(_)) = (&kept, commit) {
        if k.key.same_records(&now) && k.key.commit == now.commit && k.key.tree.is_some() {
            let mut report = k.report.clone();
            report.commit = commit.map(|c| c.to_string());
            return Ok(report);
        }
    }
    let tree = match commit {
        Some(c) => Some(store.tree_of(c)?),
        None => None,
    };
    let now = Key {
        tree: tree.map(|t| t.to_string()),
        ..now
    };
    decide(
        store,
        sprint,
        commit.map(|c| c.to_string()),
        tree,
        now,
        kept,
    )
}

/// [`gate::evaluate_tree`], read from what was kept when nothing it depends on moved.
pub fn evaluate_tree(
    store: &Store,
    sprint: &SprintId,
    label: Option<String>,
    tree: Option<ObjectId>,
) -> Result<Report> {
    let now = key(store, sprint, tree, None)?;
    decide(store, sprint, label, tree, now, read(store, sprint))
}

/// The kept report when it was computed for the same records and tree (kept again for this
/// commit when it was kept for another), else the gate's, kept.
fn decide(
    store: &Store,
    sprint: &SprintId,
    label: Option<String>,
    tree: Option<ObjectId>,
    now: Key,
    kept: Option<Kept>,
) -> Result<Report> {
    if let Some(k) = kept {
        if k.key.same_records(&now) && k.key.tree == now.tree {
            let mut report = k.report;
            if now.commit.is_some() && k.key.commit != now.commit {
                write(store, sprint, now, &report);
            }
            report.commit = label;
            return Ok(report);
        }
    }
    let report = gate::evaluate_tree(store, sprint, label, tree)?;
    // A chain that does not replay is told afresh each time, never from a kept file.
    if report.chain_problem.is_none() {
        write(store, sprint, now, &report);
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
    let commit = match &kept.key.commit {
        Some(c) => match ObjectId::from_hex(c.as_bytes()) {
            Ok(c) if store.has_object(c) => Some(c),
            _ => return Ok(None),
        },
        None => None,
    };
    if !key(store, sprint, tree, commit)?.same_records(&kept.key) {
        return Ok(None); // kept for other records: never read for these
    }
    // The kept commit is answered without reading its tree: it must be the tree kept.
    if let Some(c) = commit {
        let real = store.tree_of(c)?;
        if Some(real) != tree {
            return Ok(Some(format!(
                "the gate report kept for {sprint} ({}) names commit {c} with tree {}, but that commit's tree is {real}: the file was not written by the gate",
                path(store, sprint).display(),
                kept.key.tree.as_deref().unwrap_or("none"),
            )));
        }
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
