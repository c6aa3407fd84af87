//! How two clones' evidence chains of one sprint become one: every transition of both,
//! replayed in causal and then time order through the evidence state machine. One that was
//! legal where it was recorded but is not in the merged order is kept under `rejected/` and
//! reported, never applied. Sync calls it for a diverged `refs/rails/evidence/<sprint>`; the
//! chain's replay (`chain.rs`) calls it to check that a merge commit holds exactly this.

use std::collections::{BTreeMap, HashMap};

use crate::contract;
use crate::contract::SprintId;
use crate::error::{Error, Result};
use crate::evidence::{self, Record, Request, Transition};
use crate::store::{CommitInfo, ObjectId, Store};
use crate::sync::merge::{known_rejections, nanos, replay_order, Merged, Rejected};

/// A transition commit's record: the transition, its criterion, the record's files.
struct Observed {
    transition: Transition,
    criterion: String,
    record: Record,
    json: Vec<u8>,
    json_path: String,
    log: Option<(String, Vec<u8>)>,
    at: i128,
}

fn observed(store: &Store, c: &CommitInfo) -> Result<Option<Observed>> {
    if c.parents.len() > 1 {
        return Ok(None);
    }
    let Some(trailer) = c.trailer("Rails-Transition") else {
        return Ok(None);
    };
    let Some((t, crit)) = trailer.split_once(' ') else {
        return Ok(None);
    };
    let Some(transition) = Transition::parse(t) else {
        return Ok(None);
    };
    let parent_tree = match c.parents.first() {
        Some(p) => store.tree_of(*p)?,
        None => ObjectId::empty_tree(store.repo().object_hash()),
    };
    let changed = store.changed_paths(parent_tree, c.tree)?;
    let mut json = None;
    let mut log = None;
    for path in changed {
        if path == evidence::STATE_FILE || !path.starts_with("cycles/") {
            continue;
        }
        let Some(bytes) = store.read_file_in_tree(c.tree, &path)? else {
            continue;
        };
        if path.ends_with(".json") {
            json = Some((path, bytes));
        } else if path.ends_with(".log") {
            log = Some((path, bytes));
        }
    }
    let Some((json_path, bytes)) = json else {
        return Ok(None);
    };
    let mut record: Record = serde_json::from_slice(&bytes).map_err(|e| {
        Error::internal(format!(
            "evidence commit {}: {json_path} is not an evidence record: {e}",
            c.id
        ))
    })?;
    record.id = Some(store.blob_id(&bytes)?.to_string());
    let at = nanos(&record.at).unwrap_or(c.time as i128 * 1_000_000_000);
    Ok(Some(Observed {
        transition,
        criterion: crit.trim().to_string(),
        record,
        json: bytes,
        json_path,
        log,
        at,
    }))
}

/// Merges two evidence tips of `sprint`: every transition of both, replayed in causal and then
/// time order through the evidence state machine.
pub fn merge(
    store: &Store,
    refname: &str,
    sprint: &SprintId,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<Merged> {
    let order = replay_order(store, ours, theirs, |c| {
        Ok(observed(store, c)?.map(|o| {
            let at = o.at;
            (o, at)
        }))
    })?;
    let known = known_rejections(store, ours, theirs)?;

    let mut checks: HashMap<(String, String), Option<crate::contract::schema::Check>> =
        HashMap::new();
    let mut state = evidence::empty_state(sprint);
    let mut files: BTreeMap<String, ObjectId> = BTreeMap::new();
    let mut rejected = Vec::new();
    for (id, o) in order {
        let ck = (o.record.contract_version.clone(), o.criterion.clone());
        let check = match checks.get(&ck) {
            Some(c) => c.clone(),
            None => {
                let frozen = match contract::find(store, sprint, Some(&o.record.contract_version)) {
                    Ok(f) => Some(f),
                    Err(_) => contract::newest(store, sprint)?,
                };
                let c = frozen.and_then(|f| f.contract.check(&o.criterion).cloned());
                checks.insert(ck, c.clone());
                c
            }
        };
        let req = Request {
            sprint,
            criterion: &o.criterion,
            transition: o.transition,
            note: o.record.note.as_deref(),
            path: o.record.path.as_deref(),
            because: o.record.because.as_deref(),
        };
        let outcome = match &check {
            Some(check) => evidence::replay(&mut state, &req, check, o.record.clone()),
            None => Err(Error::refused(format!(
                "{sprint} {} has no criterion {:?} in this clone's contract",
                o.record.contract_version, o.criterion
            ))),
        };
        match outcome {
            Ok(stem) => {
                files.insert(format!("{stem}.json"), store.blob_id(&o.json)?);
                if let Some((_, log)) = &o.log {
                    files.insert(format!("{stem}.log"), store.blob_id(log)?);
                }
            }
            Err(e) => {
                let dir = format!("rejected/{id}");
                files.insert(format!("{dir}/{}", o.json_path), store.blob_id(&o.json)?);
                if let Some((p, log)) = &o.log {
                    files.insert(format!("{dir}/{p}"), store.blob_id(log)?);
                }
                if !known.contains(&id.to_string()) {
                    rejected.push(Rejected {
                        refname: refname.to_string(),
                        commit: id.to_string(),
                        transition: format!("{} {}", o.transition.as_str(), o.criterion),
                        reason: e.message.lines().next().unwrap_or("").to_string(),
                    });
                }
            }
        }
    }
    // Files the chains hold besides the cycles and the state (none today) are kept, ours first.
    // The observed trees (`trees/<id>`) stay reachable through the merge's parents, which is
    // all they are there for, so they are not rebuilt file by file.
    for tip in [ours, theirs] {
        for (path, blob) in store.tree_blobs(store.tree_of(tip)?)? {
            if path != evidence::STATE_FILE
                && !path.starts_with("cycles/")
                && !path.starts_with("rejected/")
                && !path.starts_with(&format!("{}/", evidence::TREES_DIR))
            {
                files.entry(path).or_insert(blob);
            }
        }
    }
    let mut state_bytes = serde_json::to_vec_pretty(&state)
        .map_err(|e| Error::internal(format!("rendering the merged state: {e}")))?;
    state_bytes.push(b'\n');
    files.insert(
        evidence::STATE_FILE.to_string(),
        store.blob_id(&state_bytes)?,
    );
    let list: Vec<(String, ObjectId)> = files.into_iter().collect();
    let mut m = Merged::new(store.tree_with_blobs(None, &list)?);
    m.trailers.push(("Rails-Sprint", sprint.to_string()));
    m.reject(rejected);
    Ok(m)
}
