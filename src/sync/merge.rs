//! How two tips of one record ref that diverged between clones become one. Each record type
//! owns its rule, beside its format: `evidence::merge` (transitions replayed through the state
//! machine), `pipeline::merge` (events replayed in time order), `spar::merge` (the union of
//! rounds), `contract::merge` (frozen versions never merge: the sides of a conflict); [`merge`]
//! dispatches to them by the ref's namespace. What they share is here: the report types,
//! canonical JSON, the JSONL union, the causal order of two histories, and the notes refs'
//! merge (notes belong to no one record type).
//!
//! Every merge is a pure function of the two tips' history (the order in which the tips are
//! given changes nothing in the merged tree), so two clones that merge the same pair write the
//! same records, and a later sync of their merges converges.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;
use serde_json::Value;

use crate::contract::SprintId;
use crate::error::{Error, Result};
use crate::store::refs::Record;
use crate::store::{CommitInfo, ObjectId, Store};

pub use crate::contract::merge::VersionSide;

/// A transition that was legal where it was recorded but not in the merged order: it stays in
/// history (its commit is an ancestor of the merge) and is reported, never applied.
#[derive(Debug, Clone, Serialize)]
pub struct Rejected {
    #[serde(rename = "ref")]
    pub refname: String,
    pub commit: String,
    pub transition: String,
    pub reason: String,
}

/// A spar round that took a name another clone's round already had.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Renamed {
    pub series: String,
    pub round: String,
    pub renamed_to: String,
}

/// The tree of a merge and what it reports.
#[derive(Debug)]
pub struct Merged {
    pub tree: ObjectId,
    pub trailers: Vec<(&'static str, String)>,
    pub rejected: Vec<Rejected>,
    pub renamed: Vec<Renamed>,
    pub notes: Vec<String>,
}

impl Merged {
    pub fn new(tree: ObjectId) -> Merged {
        Merged {
            tree,
            trailers: Vec::new(),
            rejected: Vec::new(),
            renamed: Vec::new(),
            notes: Vec::new(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Canonical JSON lines

/// A JSON value with every object's keys sorted, so the same record always serialises to the
/// same bytes.
pub fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = serde_json::Map::new();
            for k in keys {
                out.insert(k.clone(), canonical(&m[k]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// An RFC 3339 time in nanoseconds since the epoch.
pub fn nanos(rfc3339: &str) -> Option<i128> {
    rfc3339
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_nanosecond())
}

/// The union of two JSONL files: each record once (compared in canonical form), ordered by its
/// `at` time and then by its canonical text. Lines that are not JSON are kept as they are.
pub fn union_jsonl(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut seen = BTreeSet::new();
    let mut lines: Vec<(i128, String)> = Vec::new();
    for text in [a, b] {
        for line in String::from_utf8_lossy(text).lines() {
            if line.trim().is_empty() {
                continue;
            }
            let (key, canon) = match serde_json::from_str::<Value>(line) {
                Ok(v) => {
                    let at = v
                        .get("at")
                        .and_then(Value::as_str)
                        .and_then(nanos)
                        .unwrap_or(0);
                    (
                        at,
                        serde_json::to_string(&canonical(&v)).unwrap_or_default(),
                    )
                }
                Err(_) => (0, line.to_string()),
            };
            if seen.insert(canon.clone()) {
                lines.push((key, canon));
            }
        }
    }
    lines.sort();
    let mut out = Vec::new();
    for (_, l) in lines {
        out.extend_from_slice(l.as_bytes());
        out.push(b'\n');
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Shared by the replaying merges (evidence, pipeline)

/// Orders commits parents-first; among the commits that are ready, the earliest key first.
pub fn causal_order(commits: &[CommitInfo], key: &HashMap<ObjectId, i128>) -> Vec<ObjectId> {
    let ids: BTreeSet<ObjectId> = commits.iter().map(|c| c.id).collect();
    let mut waiting: HashMap<ObjectId, usize> = HashMap::new();
    let mut children: HashMap<ObjectId, Vec<ObjectId>> = HashMap::new();
    for c in commits {
        let parents: Vec<ObjectId> = c
            .parents
            .iter()
            .copied()
            .filter(|p| ids.contains(p))
            .collect();
        waiting.insert(c.id, parents.len());
        for p in parents {
            children.entry(p).or_default().push(c.id);
        }
    }
    let k = |id: &ObjectId| key.get(id).copied().unwrap_or(0);
    let mut ready: BTreeSet<(i128, ObjectId)> = waiting
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(id, _)| (k(id), *id))
        .collect();
    let mut out = Vec::new();
    while let Some(first) = ready.iter().next().copied() {
        ready.remove(&first);
        out.push(first.1);
        for child in children.get(&first.1).cloned().unwrap_or_default() {
            if let Some(n) = waiting.get_mut(&child) {
                *n -= 1;
                if *n == 0 {
                    ready.insert((k(&child), child));
                }
            }
        }
    }
    out
}

/// The records of both tips' histories in the order a replaying merge applies them: parents
/// first, then by the time `read` gives each (a commit it finds no record in, such as an earlier
/// merge, orders by its commit time and is left out).
pub fn replay_order<T>(
    store: &Store,
    ours: ObjectId,
    theirs: ObjectId,
    mut read: impl FnMut(&CommitInfo) -> Result<Option<(T, i128)>>,
) -> Result<Vec<(ObjectId, T)>> {
    let commits = store.reachable(&[ours, theirs])?;
    let mut found: HashMap<ObjectId, T> = HashMap::new();
    let mut key: HashMap<ObjectId, i128> = HashMap::new();
    for c in &commits {
        match read(c)? {
            Some((record, at)) => {
                key.insert(c.id, at);
                found.insert(c.id, record);
            }
            None => {
                key.insert(c.id, c.time as i128 * 1_000_000_000);
            }
        }
    }
    Ok(causal_order(&commits, &key)
        .into_iter()
        .filter_map(|id| found.remove(&id).map(|r| (id, r)))
        .collect())
}

impl Merged {
    /// Reports the records the merged order refused: one `Rails-Sync-Rejected` trailer each.
    pub fn reject(&mut self, rejected: Vec<Rejected>) {
        for r in &rejected {
            self.trailers.push((
                "Rails-Sync-Rejected",
                format!("{} {}", &r.commit[..12.min(r.commit.len())], r.transition),
            ));
        }
        self.rejected = rejected;
    }
}

/// The commits an earlier merge already found illegal (kept under `rejected/` in either tip):
/// a later merge keeps them there without reporting them again.
pub fn known_rejections(
    store: &Store,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for tip in [ours, theirs] {
        for name in store.list_dir(tip, "rejected")? {
            out.insert(name.trim_end_matches(".json").to_string());
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Notes: every part of every note, once

/// The parts of a note: the tools append parts separated by a blank line, each starting with
/// its own header (`rails validate …`, `# spar …`); text without such headers is one part.
pub fn note_parts(text: &str) -> Vec<String> {
    const HEADERS: [&str; 2] = ["rails validate ", "# spar "];
    let mut parts = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while let Some(pos) = text[i..].find("\n\n") {
        let at = i + pos;
        let next = at + 2;
        if HEADERS.iter().any(|h| text[next..].starts_with(h)) {
            parts.push(text[start..at].to_string());
            start = next;
        }
        i = at + 1;
    }
    parts.push(text[start..].to_string());
    parts
        .into_iter()
        .map(|p| p.trim_end_matches('\n').to_string())
        .filter(|p| !p.trim().is_empty())
        .collect()
}

/// `ours` with every part of `theirs` it lacks appended; None when nothing is missing.
pub fn union_note(ours: &str, theirs: &str) -> Option<String> {
    let mut parts = note_parts(ours);
    let mut added = false;
    for p in note_parts(theirs) {
        if !parts.contains(&p) {
            parts.push(p);
            added = true;
        }
    }
    added.then(|| format!("{}\n", parts.join("\n\n")))
}

/// The notes of a notes tree, by the annotated object (fanout folders undone).
fn notes_of(store: &Store, tree: ObjectId) -> Result<BTreeMap<ObjectId, ObjectId>> {
    let mut out = BTreeMap::new();
    for (path, blob) in store.tree_blobs(tree)? {
        let hex: String = path.chars().filter(|c| *c != '/').collect();
        if let Ok(id) = ObjectId::from_hex(hex.as_bytes()) {
            out.insert(id, blob);
        }
    }
    Ok(out)
}

/// Merges two tips of a notes ref: notes on one side only are kept, notes on both sides are
/// united part by part, so no summary is lost and none is there twice.
pub fn notes(store: &Store, ours: ObjectId, theirs: ObjectId) -> Result<Merged> {
    let ours_tree = store.tree_of(ours)?;
    let a = notes_of(store, ours_tree)?;
    let b = notes_of(store, store.tree_of(theirs)?)?;
    let mut edits = Vec::new();
    for (target, blob) in &b {
        match a.get(target) {
            None => edits.push((*target, store.blob(*blob)?)),
            Some(x) if x == blob => {}
            Some(x) => {
                let mine = String::from_utf8_lossy(&store.blob(*x)?).into_owned();
                let other = String::from_utf8_lossy(&store.blob(*blob)?).into_owned();
                if let Some(text) = union_note(&mine, &other) {
                    edits.push((*target, text.into_bytes()));
                }
            }
        }
    }
    Ok(Merged::new(store.notes_tree_with(Some(ours_tree), &edits)?))
}

// ---------------------------------------------------------------------------------------------
// Dispatch

/// Merges two diverged tips of the record ref `name` by its record type's rule. A frozen
/// contract never merges (sync reports it with `contract::merge::sides`), so it is refused here.
pub fn merge(
    store: &Store,
    name: &str,
    record: Record<'_>,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<Merged> {
    match record {
        Record::Evidence(sprint) => {
            let sprint = SprintId::recorded(sprint);
            crate::evidence::merge::merge(store, name, &sprint, ours, theirs)
        }
        Record::Pipeline(sprint) => {
            let sprint = SprintId::recorded(sprint);
            crate::pipeline::merge::merge(store, name, &sprint, ours, theirs)
        }
        Record::SparSeries(series) => crate::spar::merge::merge(store, series, ours, theirs),
        Record::Notes => notes(store, ours, theirs),
        Record::Contract(_) => Err(Error::internal(format!("{name} is not a record ref"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_union_is_canonical_and_ordered() {
        let a = br#"{"b":1,"a":2,"at":"2026-01-01T00:00:02Z"}
{"x":1,"at":"2026-01-01T00:00:01Z"}
"#;
        let b = br#"{"a":2,"b":1,"at":"2026-01-01T00:00:02Z"}
{"y":1,"at":"2026-01-01T00:00:01.5Z"}
"#;
        let out = String::from_utf8(union_jsonl(a, b)).unwrap();
        assert_eq!(
            out,
            "{\"at\":\"2026-01-01T00:00:01Z\",\"x\":1}\n{\"at\":\"2026-01-01T00:00:01.5Z\",\"y\":1}\n{\"a\":2,\"at\":\"2026-01-01T00:00:02Z\",\"b\":1}\n"
        );
        assert_eq!(union_jsonl(a, b), union_jsonl(b, a));
    }

    #[test]
    fn note_parts_split_on_headers_only() {
        let t = "# spar s code-1 (code)\n\nbase a\n\n## Reviewers\n\n# spar s code-2 (code)\n\nx\n\nrails validate S v1 at t: PASS\nok\n";
        let p = note_parts(t);
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p[0].contains("## Reviewers"));
        assert!(p[2].starts_with("rails validate"));
    }

    #[test]
    fn note_union_adds_missing_parts_once() {
        let a = "# spar s code-1 (x)\n\none\n";
        let b = "# spar s code-1 (x)\n\none\n\n# spar s code-2 (x)\n\ntwo\n";
        let u = union_note(a, b).unwrap();
        assert_eq!(u, b);
        assert_eq!(union_note(&u, a), None);
        assert_eq!(union_note(b, a), None);
    }
}
