//! How two clones' copies of one spar series become one: the union of rounds (a round known on
//! both sides by its identity, its files merged; two rounds that took one name, the later one
//! renamed) and of JSONL lines. A round's `gate-facts.json` (written by versions before issue
//! 33, read by none now) is left out of the merged round, whichever side had one.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::error::Result;
use crate::store::{CommitInfo, ObjectId, Store};
use crate::sync::merge::{canonical, nanos, union_jsonl, Merged, Renamed};

/// A round's identity: the fields `round.json` gets when the round starts and never changes
/// afterwards (a later `git spar record` updates reviewers, a sync may rename it).
fn round_identity(bytes: &[u8]) -> String {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) if v.get("started_at").is_some() => {
            let keep: serde_json::Map<String, Value> =
                ["series", "stage", "started_at", "base", "head"]
                    .iter()
                    .filter_map(|k| v.get(*k).map(|x| (k.to_string(), x.clone())))
                    .collect();
            serde_json::to_string(&canonical(&Value::Object(keep))).unwrap_or_default()
        }
        Ok(mut v) => {
            if let Value::Object(m) = &mut v {
                m.remove("round");
            }
            serde_json::to_string(&canonical(&v)).unwrap_or_default()
        }
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

fn without_round(bytes: &[u8]) -> Option<Value> {
    let mut v = serde_json::from_slice::<Value>(bytes).ok()?;
    if let Value::Object(m) = &mut v {
        m.remove("round");
    }
    Some(canonical(&v))
}

fn round_started(bytes: &[u8]) -> i128 {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|v| v.get("started_at").and_then(Value::as_str).and_then(nanos))
        .unwrap_or(0)
}

/// The next free name for a round named `name` (`code-2` → `code-3`, …).
fn free_name(name: &str, taken: &BTreeSet<String>) -> String {
    let (stem, mut n) = match name.rsplit_once('-') {
        Some((s, d)) if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => {
            (s.to_string(), d.parse::<u64>().unwrap_or(1))
        }
        _ => (name.to_string(), 1),
    };
    loop {
        n += 1;
        let candidate = format!("{stem}-{n}");
        if !taken.contains(&candidate) {
            return candidate;
        }
    }
}

type Files = BTreeMap<String, ObjectId>;

fn split_series(files: Vec<(String, ObjectId)>) -> (Files, BTreeMap<String, Files>) {
    let mut root = Files::new();
    let mut rounds: BTreeMap<String, Files> = BTreeMap::new();
    for (path, blob) in files {
        match path.strip_prefix("rounds/").and_then(|p| p.split_once('/')) {
            // Retired; left out, so two clones' merges agree whoever still had one.
            Some((_, crate::spar::record::RETIRED_FACTS_FILE)) => {}
            Some((round, rest)) => {
                rounds
                    .entry(round.to_string())
                    .or_default()
                    .insert(rest.to_string(), blob);
            }
            None => {
                root.insert(path, blob);
            }
        }
    }
    (root, rounds)
}

/// The histories of the two tips, read once and only when a file differs.
struct Histories<'a> {
    store: &'a Store,
    tips: [ObjectId; 2],
    commits: [Option<Vec<CommitInfo>>; 2],
}

impl Histories<'_> {
    /// Whether `blob` was at `path` somewhere in the history of side `side`.
    fn had(&mut self, side: usize, path: &str, blob: ObjectId) -> Result<bool> {
        if self.commits[side].is_none() {
            self.commits[side] = Some(self.store.reachable(&[self.tips[side]])?);
        }
        for c in self.commits[side].as_deref().unwrap_or_default() {
            if self.store.file_at(c.tree, path)? == Some(blob) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Files of one thing known on both sides (`a` at `a_dir` in ours, `b` at `b_dir` in theirs):
/// JSONL files united; another file that differs takes the side that already superseded the
/// other's version (found in its history); when both changed it independently, the blob id
/// that sorts first (both clones choose the same), reported.
fn merge_files(
    hist: &mut Histories<'_>,
    (a_dir, a): (&str, &Files),
    (b_dir, b): (&str, &Files),
    notes: &mut Vec<String>,
) -> Result<Files> {
    let store = hist.store;
    let mut out = a.clone();
    for (path, blob) in b {
        let x = match a.get(path) {
            None => {
                out.insert(path.clone(), *blob);
                continue;
            }
            Some(x) if x == blob => continue,
            Some(x) => *x,
        };
        if path.ends_with(".jsonl") {
            let merged = union_jsonl(&store.blob(x)?, &store.blob(*blob)?);
            out.insert(path.clone(), store.blob_id(&merged)?);
            continue;
        }
        if path == "round.json"
            && without_round(&store.blob(x)?) == without_round(&store.blob(*blob)?)
        {
            // Only the name differs (one side renamed it): placement sets the name.
            continue;
        }
        let keep = if hist.had(1, &format!("{b_dir}{path}"), x)? {
            *blob
        } else if hist.had(0, &format!("{a_dir}{path}"), *blob)? {
            x
        } else {
            let keep = x.min(*blob);
            notes.push(format!(
                "{b_dir}{path} was changed differently in both clones; kept {}",
                &keep.to_string()[..12]
            ));
            keep
        };
        out.insert(path.clone(), keep);
    }
    Ok(out)
}

/// Merges two tips of a spar series (`theirs` is the remote's).
pub fn merge(store: &Store, series: &str, ours: ObjectId, theirs: ObjectId) -> Result<Merged> {
    let (root_a, rounds_a) = split_series(store.tree_blobs(store.tree_of(ours)?)?);
    let (root_b, rounds_b) = split_series(store.tree_blobs(store.tree_of(theirs)?)?);
    let mut hist = Histories {
        store,
        tips: [ours, theirs],
        commits: [None, None],
    };
    let mut notes = Vec::new();
    let root = merge_files(&mut hist, ("", &root_a), ("", &root_b), &mut notes)?;

    // Every distinct round (by identity); one known on both sides takes the remote's name.
    struct Candidate {
        name: String,
        identity: String,
        started: i128,
        files: Files,
    }
    let mut by_identity: BTreeMap<String, Candidate> = BTreeMap::new();
    for (side, rounds) in [(0usize, &rounds_a), (1, &rounds_b)] {
        for (name, files) in rounds {
            let rj = match files.get("round.json") {
                Some(b) => store.blob(*b)?,
                None => Vec::new(),
            };
            let identity = round_identity(&rj);
            match by_identity.get_mut(&identity) {
                Some(c) if side == 1 => {
                    let a_dir = format!("rounds/{}/", c.name);
                    let b_dir = format!("rounds/{name}/");
                    c.files = merge_files(
                        &mut hist,
                        (&a_dir, &c.files.clone()),
                        (&b_dir, files),
                        &mut notes,
                    )?;
                    c.name = name.clone();
                }
                Some(_) => {
                    notes.push(format!(
                        "{series}: round {name} is recorded twice in this clone"
                    ));
                }
                None => {
                    by_identity.insert(
                        identity.clone(),
                        Candidate {
                            name: name.clone(),
                            identity,
                            started: round_started(&rj),
                            files: files.clone(),
                        },
                    );
                }
            }
        }
    }
    // Rounds that took the same name: the one started first keeps it, each later one takes the
    // next free number.
    let mut by_name: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
    for (_, c) in by_identity {
        by_name.entry(c.name.clone()).or_default().push(c);
    }
    let mut taken: BTreeSet<String> = by_name.keys().cloned().collect();
    let mut placed: BTreeMap<String, Files> = BTreeMap::new();
    let mut renamed = Vec::new();
    for (name, mut group) in by_name {
        group.sort_by(|x, y| (x.started, &x.identity).cmp(&(y.started, &y.identity)));
        let mut it = group.into_iter();
        if let Some(first) = it.next() {
            placed.insert(name.clone(), first.files);
        }
        for later in it {
            let new_name = free_name(&name, &taken);
            taken.insert(new_name.clone());
            renamed.push(Renamed {
                series: series.to_string(),
                round: name.clone(),
                renamed_to: new_name.clone(),
            });
            placed.insert(new_name, later.files);
        }
    }
    let mut list: Vec<(String, ObjectId)> = root.into_iter().collect();
    for (name, mut files) in placed {
        // round.json names the round by the name it has here.
        if let Some(rj) = files.get("round.json").copied() {
            let bytes = store.blob(rj)?;
            if let Ok(mut v) = serde_json::from_slice::<Value>(&bytes) {
                if v.get("round").and_then(Value::as_str) != Some(name.as_str()) {
                    v["round"] = Value::from(name.clone());
                    let mut out = serde_json::to_vec_pretty(&v).unwrap_or_default();
                    out.push(b'\n');
                    files.insert("round.json".into(), store.blob_id(&out)?);
                }
            }
        }
        for (rest, blob) in files {
            list.push((format!("rounds/{name}/{rest}"), blob));
        }
    }
    let mut m = Merged::new(store.tree_with_blobs(None, &list)?);
    for r in &renamed {
        m.trailers.push((
            "Spar-Sync-Renamed",
            format!("{} -> {}", r.round, r.renamed_to),
        ));
    }
    m.renamed = renamed;
    m.notes = notes;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, Store) {
        crate::store::temp_repo()
    }

    fn round_json(name: &str, started: &str, reviewers: &str) -> Vec<u8> {
        format!(
            "{{\"schema\":\"review-round/v1\",\"series\":\"s\",\"round\":\"{name}\",\"stage\":\"code\",\"base\":\"b\",\"head\":\"h\",\"started_at\":\"{started}\",\"reviewers\":\"{reviewers}\"}}\n"
        )
        .into_bytes()
    }

    fn write(store: &Store, tip: Option<ObjectId>, files: &[(&str, Vec<u8>)]) -> ObjectId {
        let blobs: Vec<(String, ObjectId)> = files
            .iter()
            .map(|(p, b)| (p.to_string(), store.blob_id(b).unwrap()))
            .collect();
        let base = tip.map(|t| store.tree_of(t).unwrap());
        let tree = store.tree_with_blobs(base, &blobs).unwrap();
        let parents: Vec<ObjectId> = tip.into_iter().collect();
        store.write_commit(tree, &parents, "w").unwrap()
    }

    #[test]
    fn a_round_updated_on_one_side_and_triaged_on_the_other_is_one_round() {
        let (_d, store) = repo();
        let t0 = "2026-01-01T00:00:00Z";
        let base = write(
            &store,
            None,
            &[(
                "rounds/code-1/round.json",
                round_json("code-1", t0, "pending"),
            )],
        );
        // The remote recorded the pending reviewer (round.json changed), with an older
        // version that still wrote gate facts…
        let theirs = write(
            &store,
            Some(base),
            &[
                (
                    "rounds/code-1/round.json",
                    round_json("code-1", t0, "completed"),
                ),
                ("rounds/code-1/gate-facts.json", b"{}\n".to_vec()),
            ],
        );
        // …while this clone triaged (a ledger line).
        let ours = write(
            &store,
            Some(base),
            &[(
                "rounds/code-1/ledger.jsonl",
                b"{\"finding\":\"F1\"}\n".to_vec(),
            )],
        );
        for (a, b) in [(ours, theirs), (theirs, ours)] {
            let m = merge(&store, "s", a, b).unwrap();
            assert!(m.renamed.is_empty(), "{:?}", m.renamed);
            assert!(m.notes.is_empty(), "{:?}", m.notes);
            let rounds = store.tree_blobs(m.tree).unwrap();
            // The retired gate facts the remote's round still held are left out.
            let names: Vec<&str> = rounds.iter().map(|(p, _)| p.as_str()).collect();
            assert_eq!(
                names,
                ["rounds/code-1/ledger.jsonl", "rounds/code-1/round.json"]
            );
            let rj = String::from_utf8(
                store
                    .read_file_in_tree(m.tree, "rounds/code-1/round.json")
                    .unwrap()
                    .unwrap(),
            )
            .unwrap();
            assert!(rj.contains("completed"), "the newer round.json wins: {rj}");
        }
    }

    #[test]
    fn a_round_known_under_two_names_takes_the_remotes() {
        let (_d, store) = repo();
        let (t1, t2) = ("2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z");
        // Ours still has X as code-1; the remote has Y (earlier) as code-1 and X renamed code-2.
        let ours = write(
            &store,
            None,
            &[("rounds/code-1/round.json", round_json("code-1", t2, "x"))],
        );
        let theirs = write(
            &store,
            None,
            &[
                ("rounds/code-1/round.json", round_json("code-1", t1, "y")),
                ("rounds/code-2/round.json", round_json("code-2", t2, "x")),
            ],
        );
        let m = merge(&store, "s", ours, theirs).unwrap();
        assert!(m.renamed.is_empty(), "{:?}", m.renamed);
        let c1 = String::from_utf8(
            store
                .read_file_in_tree(m.tree, "rounds/code-1/round.json")
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        let c2 = String::from_utf8(
            store
                .read_file_in_tree(m.tree, "rounds/code-2/round.json")
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        assert!(c1.contains("\"y\"") && c2.contains("\"x\""), "{c1}{c2}");
        assert!(c2.contains("\"round\": \"code-2\""), "{c2}");
    }

    #[test]
    fn free_names_count_up() {
        let taken: BTreeSet<String> = ["code-2".to_string(), "code-3".to_string()].into();
        assert_eq!(free_name("code-2", &taken), "code-4");
        assert_eq!(free_name("odd", &taken), "odd-2");
    }
}
