//! How two clones' pipeline chains of one sprint become one: the union of events replayed in
//! time order. An event applies from the state it left; one that no longer does is kept under
//! `rejected/` and reported.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::contract::SprintId;
use crate::error::Result;
use crate::store::{CommitInfo, ObjectId, Store};
use crate::sync::merge::{known_rejections, nanos, replay_order, Merged, Rejected};

#[derive(Debug, Clone)]
struct PEvent {
    event: Value,
    state: Value,
    at: i128,
}

fn pipeline_event(store: &Store, c: &CommitInfo) -> Result<Option<PEvent>> {
    if c.parents.len() > 1 {
        return Ok(None);
    }
    let Some(seq) = c.trailer("Rails-Pipeline-Seq") else {
        return Ok(None);
    };
    let path = format!("events/{:06}.json", seq.parse::<u64>().unwrap_or(0));
    let (Some(ev), Some(st)) = (
        store.read_file_in_tree(c.tree, &path)?,
        store.read_file_in_tree(c.tree, "state.json")?,
    ) else {
        return Ok(None);
    };
    let (Ok(event), Ok(state)) = (
        serde_json::from_slice::<Value>(&ev),
        serde_json::from_slice::<Value>(&st),
    ) else {
        return Ok(None);
    };
    let at = event
        .get("at")
        .and_then(Value::as_str)
        .and_then(nanos)
        .unwrap_or(c.time as i128 * 1_000_000_000);
    Ok(Some(PEvent { event, state, at }))
}

/// Merges two pipeline tips of `sprint`.
pub fn merge(
    store: &Store,
    refname: &str,
    sprint: &SprintId,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<Merged> {
    let order = replay_order(store, ours, theirs, |c| {
        Ok(pipeline_event(store, c)?.map(|e| {
            let at = e.at;
            (e, at)
        }))
    })?;
    let mut files: BTreeMap<String, ObjectId> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut last_state: Option<Value> = None;
    let mut seq = 0u64;
    let mut rejected = Vec::new();
    let known = known_rejections(store, ours, theirs)?;
    for (id, e) in order {
        let kind = e.event.get("event").and_then(Value::as_str).unwrap_or("");
        let from = e.event.get("from").and_then(Value::as_str).unwrap_or("");
        let final_state = matches!(current.as_deref(), Some("done" | "aborted"));
        let legal = match current.as_deref() {
            None => kind == "START",
            Some(cur) => cur == from || (kind == "START" && final_state),
        };
        let mut bytes = serde_json::to_vec_pretty(&e.event).unwrap_or_default();
        bytes.push(b'\n');
        if !legal {
            files.insert(format!("rejected/{id}.json"), store.blob_id(&bytes)?);
            if known.contains(&id.to_string()) {
                continue;
            }
            rejected.push(Rejected {
                refname: refname.to_string(),
                commit: id.to_string(),
                transition: format!(
                    "{kind} {from} -> {}",
                    e.event.get("to").and_then(Value::as_str).unwrap_or("")
                ),
                reason: format!(
                    "the merged pipeline is {}, not {from}",
                    current.as_deref().unwrap_or("not started")
                ),
            });
            continue;
        }
        seq += 1;
        let mut event = e.event.clone();
        event["seq"] = Value::from(seq);
        let mut bytes = serde_json::to_vec_pretty(&event).unwrap_or_default();
        bytes.push(b'\n');
        files.insert(format!("events/{seq:06}.json"), store.blob_id(&bytes)?);
        current = event.get("to").and_then(Value::as_str).map(str::to_string);
        let mut st = e.state.clone();
        st["seq"] = Value::from(seq);
        last_state = Some(st);
    }
    if let Some(st) = &last_state {
        let mut bytes = serde_json::to_vec_pretty(st).unwrap_or_default();
        bytes.push(b'\n');
        files.insert("state.json".into(), store.blob_id(&bytes)?);
    }
    for tip in [ours, theirs] {
        for (path, blob) in store.tree_blobs(store.tree_of(tip)?)? {
            if path != "state.json"
                && !path.starts_with("events/")
                && !path.starts_with("rejected/")
            {
                files.entry(path).or_insert(blob);
            }
        }
    }
    let list: Vec<(String, ObjectId)> = files.into_iter().collect();
    let mut m = Merged::new(store.tree_with_blobs(None, &list)?);
    m.trailers.push(("Rails-Sprint", sprint.to_string()));
    m.trailers
        .push(("Rails-Pipeline-Event", "SYNC".to_string()));
    if let Some(cur) = current {
        m.trailers.push(("Rails-Pipeline-State", cur));
    }
    m.trailers.push(("Rails-Pipeline-Seq", seq.to_string()));
    m.reject(rejected);
    Ok(m)
}
