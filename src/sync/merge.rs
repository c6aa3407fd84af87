//! How two tips of one record ref that diverged between clones become one: a rule per kind of
//! record. Every merge here is a pure function of the two tips' history (the order in which the
//! tips are given changes nothing in the merged tree), so two clones that merge the same pair
//! write the same records, and a later sync of their merges converges.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;
use serde_json::Value;

use crate::contract;
use crate::error::{Error, Result};
use crate::evidence::{self, Record, Request, Transition};
use crate::store::{CommitInfo, ObjectId, Store};

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
    fn new(tree: ObjectId) -> Merged {
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

fn nanos(rfc3339: &str) -> Option<i128> {
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
// Frozen contracts: fast-forward only

/// One frozen version on one side of a contract conflict.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionSide {
    pub version: String,
    pub commit: String,
    /// The blob id of the version's `contract.json` (what `git hash-object` prints for it).
    pub digest: String,
}

/// The versions each side froze after the last version they share.
pub fn contract_sides(
    store: &Store,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<(Vec<VersionSide>, Vec<VersionSide>, Option<String>)> {
    let a = store.chain(ours)?;
    let b = store.chain(theirs)?;
    let shared = a
        .iter()
        .zip(b.iter())
        .take_while(|(x, y)| x.id == y.id)
        .count();
    let side = |chain: &[CommitInfo]| -> Result<Vec<VersionSide>> {
        chain
            .iter()
            .map(|c| {
                let digest = match store.read_file(c.id, "contract.json")? {
                    Some(bytes) => store.blob_id(&bytes)?.to_string(),
                    None => String::from("(no contract.json)"),
                };
                Ok(VersionSide {
                    version: c
                        .trailer("Rails-Contract-Version")
                        .unwrap_or_else(|| "?".into()),
                    commit: c.id.to_string(),
                    digest,
                })
            })
            .collect()
    };
    let base = shared
        .checked_sub(1)
        .and_then(|i| a.get(i))
        .and_then(|c| c.trailer("Rails-Contract-Version"));
    Ok((side(&a[shared..])?, side(&b[shared..])?, base))
}

// ---------------------------------------------------------------------------------------------
// Evidence: the union of transitions replayed in time order through the state machine

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

/// Orders commits parents-first; among the commits that are ready, the earliest key first.
fn causal_order(commits: &[CommitInfo], key: &HashMap<ObjectId, i128>) -> Vec<ObjectId> {
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

/// The commits an earlier merge already found illegal (kept under `rejected/` in either tip):
/// a later merge keeps them there without reporting them again.
fn known_rejections(store: &Store, ours: ObjectId, theirs: ObjectId) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for tip in [ours, theirs] {
        for name in store.list_dir(tip, "rejected")? {
            out.insert(name.trim_end_matches(".json").to_string());
        }
    }
    Ok(out)
}

/// Merges two evidence tips of `sprint`: every transition of both, replayed in causal and then
/// time order through the evidence state machine.
pub fn evidence(
    store: &Store,
    refname: &str,
    sprint: &str,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<Merged> {
    let commits = store.reachable(&[ours, theirs])?;
    let mut obs: HashMap<ObjectId, Observed> = HashMap::new();
    let mut key: HashMap<ObjectId, i128> = HashMap::new();
    for c in &commits {
        match observed(store, c)? {
            Some(o) => {
                key.insert(c.id, o.at);
                obs.insert(c.id, o);
            }
            None => {
                key.insert(c.id, c.time as i128 * 1_000_000_000);
            }
        }
    }
    let order = causal_order(&commits, &key);
    let known = known_rejections(store, ours, theirs)?;

    let mut checks: HashMap<(String, String), Option<crate::contract::schema::Check>> =
        HashMap::new();
    let mut state = evidence::empty_state(sprint);
    let mut files: BTreeMap<String, ObjectId> = BTreeMap::new();
    let mut rejected = Vec::new();
    for id in order {
        let Some(o) = obs.remove(&id) else { continue };
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
    for r in &rejected {
        m.trailers.push((
            "Rails-Sync-Rejected",
            format!("{} {}", &r.commit[..12.min(r.commit.len())], r.transition),
        ));
    }
    m.rejected = rejected;
    Ok(m)
}

// ---------------------------------------------------------------------------------------------
// Pipeline: the union of events replayed in time order (an event applies from the state it
// left; one that no longer does is kept under rejected/ and reported)

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
pub fn pipeline(
    store: &Store,
    refname: &str,
    sprint: &str,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<Merged> {
    let commits = store.reachable(&[ours, theirs])?;
    let mut evs: HashMap<ObjectId, PEvent> = HashMap::new();
    let mut key: HashMap<ObjectId, i128> = HashMap::new();
    for c in &commits {
        match pipeline_event(store, c)? {
            Some(e) => {
                key.insert(c.id, e.at);
                evs.insert(c.id, e);
            }
            None => {
                key.insert(c.id, c.time as i128 * 1_000_000_000);
            }
        }
    }
    let mut files: BTreeMap<String, ObjectId> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut last_state: Option<Value> = None;
    let mut seq = 0u64;
    let mut rejected = Vec::new();
    let known = known_rejections(store, ours, theirs)?;
    for id in causal_order(&commits, &key) {
        let Some(e) = evs.remove(&id) else { continue };
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
    for r in &rejected {
        m.trailers.push((
            "Rails-Sync-Rejected",
            format!("{} {}", &r.commit[..12.min(r.commit.len())], r.transition),
        ));
    }
    m.rejected = rejected;
    Ok(m)
}

// ---------------------------------------------------------------------------------------------
// Spar series: the union of rounds and of JSONL lines

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
            // A round's gate facts are derived again from the merged files.
            Some((_, crate::spar::facts::FACTS_FILE)) => {}
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
            if self.store.blob_id_at(c.tree, path)? == Some(blob) {
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
pub fn series(store: &Store, series: &str, ours: ObjectId, theirs: ObjectId) -> Result<Merged> {
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
        // The gate facts of the merged round, from its merged files.
        if files.contains_key("round.json") {
            let inputs: Vec<_> = crate::spar::facts::INPUTS
                .iter()
                .map(|f| (*f, files.get(*f).copied(), None))
                .collect();
            let facts = crate::spar::facts::derive(store, series, &name, &inputs)?;
            let bytes = crate::spar::record::pretty(&facts);
            files.insert(
                crate::spar::facts::FACTS_FILE.to_string(),
                store.blob_id(&bytes)?,
            );
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

    fn repo() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let store = Store::open(dir.path()).unwrap();
        (dir, store)
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
        // The remote recorded the pending reviewer (round.json changed)…
        let theirs = write(
            &store,
            Some(base),
            &[(
                "rounds/code-1/round.json",
                round_json("code-1", t0, "completed"),
            )],
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
            let m = series(&store, "s", a, b).unwrap();
            assert!(m.renamed.is_empty(), "{:?}", m.renamed);
            assert!(m.notes.is_empty(), "{:?}", m.notes);
            let rounds = store.tree_blobs(m.tree).unwrap();
            // The round's gate facts are derived from the merged files (checked below).
            let names: Vec<&str> = rounds
                .iter()
                .map(|(p, _)| p.as_str())
                .filter(|p| !p.ends_with(crate::spar::facts::FACTS_FILE))
                .collect();
            assert_eq!(
                names,
                ["rounds/code-1/ledger.jsonl", "rounds/code-1/round.json"]
            );
            let facts: Value = serde_json::from_slice(
                &store
                    .read_file_in_tree(m.tree, "rounds/code-1/gate-facts.json")
                    .unwrap()
                    .unwrap(),
            )
            .unwrap();
            for file in ["ledger.jsonl", "round.json"] {
                let blob = store
                    .file_at(m.tree, &format!("rounds/code-1/{file}"))
                    .unwrap()
                    .unwrap();
                assert_eq!(facts["inputs"][file], blob.to_string(), "{file}");
            }
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
        let m = series(&store, "s", ours, theirs).unwrap();
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
