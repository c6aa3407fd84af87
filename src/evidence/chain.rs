//! The evidence state, derived from the chain and never read on trust.
//!
//! `state.json` at the tip of `refs/rails/evidence/<sprint>` is a summary anyone can write with
//! plain git. So every reader (status, gate, the hooks, pre-receive, sync, verify) replays the
//! chain from its first commit instead: each commit must hold exactly one legal transition of
//! the state machine, with its record file new in that commit and agreeing with the kind (a
//! RED with a failing observation of the check, a GREEN with a passing one, bound to a tree the
//! chain carries under `trees/`), touching nothing but that record, its log, the observed tree
//! and `state.json`; and that `state.json` must equal the replay. A merge commit (written by
//! `git rails sync`) must be exactly the merge of its parents' chains, each replayed alike.
//!
//! The hooks run on every push, so a replay that succeeded is kept ([`derive_at`], through
//! `store::Memo`) by the sprint, the contract's tip and the chain's tip: the next reader at the
//! same tip reads it, and a reader after a new transition replays only the commits added since
//! (it looks a few first-parent commits back for a replay already kept). It is only ever written
//! from a successful replay; `verify` never reads it; `doctor` replays it again.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Serialize;

use super::{
    apply, check_allowed, check_record, evidence_ref, record_stem, Criterion, Proof, Record,
    Request, State, Transition, STATE_FILE, TREES_DIR,
};
use crate::contract::SprintId;
use crate::contract::{self, schema::Check};
use crate::error::{Error, Result};
use crate::store::{CommitInfo, Memo, ObjectId, Store};

/// The first commit of a chain that does not replay, and what is wrong with it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    pub commit: String,
    pub what: String,
    /// The newest commit before it that replays (None: the chain is bad from its first one).
    pub last_good: Option<String>,
}

impl Problem {
    /// The command that drops the bad commit and everything after it, locally.
    pub fn fix(&self, sprint: &str) -> String {
        let r = evidence_ref(sprint);
        match &self.last_good {
            Some(g) => format!(
                "inspect it with `git show {}`; to drop it and what follows (locally, before anything is pushed): git update-ref {r} {g}",
                short(&self.commit)
            ),
            None => format!(
                "inspect it with `git show {}`; to drop the whole chain (locally, before anything is pushed): git update-ref -d {r}",
                short(&self.commit)
            ),
        }
    }

    /// One line: which commit, and what is wrong.
    pub fn line(&self, sprint: &str) -> String {
        format!(
            "{} does not replay at {}: {}",
            evidence_ref(sprint),
            short(&self.commit),
            self.what
        )
    }

    /// The refusal a writer gives on top of a chain that does not replay.
    pub fn refusal(&self, sprint: &str) -> Error {
        Error::refused(format!(
            "{}; nothing is recorded on top of it",
            self.line(sprint)
        ))
        .hint(self.fix(sprint))
    }
}

fn short(s: &str) -> &str {
    &s[..12.min(s.len())]
}

/// The state as its chain replays.
#[derive(Debug, Clone)]
pub struct Derived {
    /// The replayed state (up to the commit before the problem, if there is one).
    pub state: State,
    /// The chain's tip (None when nothing was recorded).
    pub tip: Option<ObjectId>,
    /// The first commit that does not replay.
    pub problem: Option<Problem>,
}

/// The one memo of the rails gate: a chain's replay, by the sprint, the contract's tip (the
/// checks a replay reads come from its versions) and the chain's tip.
const REPLAY: Memo = Memo::new("evidence-replay");

fn memo_key(sprint: &SprintId, contracts: &str, tip: ObjectId) -> Vec<u8> {
    format!("{sprint}\n{contracts}\n{tip}").into_bytes()
}

/// The contract's tip as the memo's key names it.
fn contracts_tip(store: &Store, sprint: &SprintId) -> Result<String> {
    Ok(store
        .ref_target(&contract::contract_ref(sprint))?
        .map_or_else(|| "none".to_string(), |c| c.to_string()))
}

fn read_memo(store: &Store, key: &[u8]) -> Option<State> {
    serde_json::from_slice::<State>(&REPLAY.get(store, key)?).ok()
}

/// How many first-parent commits back a replay looks for one already kept.
const START_PROBES: usize = 64;

/// Replays `sprint`'s evidence chain at its ref's tip.
pub fn derive(store: &Store, sprint: &SprintId) -> Result<Derived> {
    match store.ref_target(&evidence_ref(sprint))? {
        Some(tip) => derive_at(store, sprint, tip),
        None => Ok(Derived {
            state: State::new(sprint),
            tip: None,
            problem: None,
        }),
    }
}

/// Replays the chain of `sprint` ending at `tip` (a ref's tip, a remote's, a pushed one).
///
/// Memoised (the one memo of the rails gate): a replay that succeeded is kept with its tip,
/// and the next replay of that tip, or of a chain that grew from it, starts there instead of
/// at the first commit. The budget needs it: on `benches/figures.sh`'s 1,000-transition sprint
/// `git rails gate` takes 3.5 ms with it and 558 ms without (`git rev-parse HEAD`: 1.6–2.3 ms;
/// 2026-12-03, release build at ecef217).
pub fn derive_at(store: &Store, sprint: &SprintId, tip: ObjectId) -> Result<Derived> {
    let contracts = contracts_tip(store, sprint)?;
    if let Some(state) = read_memo(store, &memo_key(sprint, &contracts, tip)) {
        return Ok(Derived {
            state,
            tip: Some(tip),
            problem: None,
        });
    }
    // A chain that grew from a replay already kept starts there (a commit or two back).
    let mut start = None;
    let mut cur = tip;
    for _ in 0..START_PROBES {
        let info = store.commit_info(cur)?;
        let [parent] = info.parents.as_slice() else {
            break; // the first commit, or a merge (replayed as a whole)
        };
        cur = *parent;
        if let Some(state) = read_memo(store, &memo_key(sprint, &contracts, cur)) {
            start = Some((cur, state));
            break;
        }
    }
    let (state, problem) = replay(store, sprint, tip, start)?;
    if problem.is_none() {
        if let Ok(bytes) = serde_json::to_vec(&state) {
            REPLAY.put(store, &memo_key(sprint, &contracts, tip), &bytes);
        }
    }
    Ok(Derived {
        state,
        tip: Some(tip),
        problem,
    })
}

/// The chain replayed from its first commit, with no memo read or written.
fn replay(
    store: &Store,
    sprint: &SprintId,
    tip: ObjectId,
    start: Option<(ObjectId, State)>,
) -> Result<Outcome> {
    let mut replayer = Replayer {
        store,
        sprint,
        checks: HashMap::new(),
        merges: HashMap::new(),
    };
    replayer.at(tip, start)
}

/// What `doctor` says of the replay kept for `sprint`'s chain as it is: `Some((what, file))`
/// when the memo of its tip disagrees with the chain replayed from its first commit (a file
/// written by hand: every command that reads the memo would believe it).
pub fn memo_disagrees(store: &Store, sprint: &SprintId) -> Result<Option<(String, PathBuf)>> {
    let Some(tip) = store.ref_target(&evidence_ref(sprint))? else {
        return Ok(None);
    };
    let key = memo_key(sprint, &contracts_tip(store, sprint)?, tip);
    let Some(kept) = read_memo(store, &key) else {
        return Ok(None);
    };
    let (state, problem) = replay(store, sprint, tip, None)?;
    let same =
        problem.is_none() && serde_json::to_value(&state).ok() == serde_json::to_value(&kept).ok();
    Ok((!same).then(|| {
        (
            format!(
                "the replay kept for {sprint} disagrees with the chain at {}: the file was not written by a replay",
                short(&tip.to_string())
            ),
            REPLAY.location(store, &key),
        )
    }))
}

struct Replayer<'a> {
    store: &'a Store,
    sprint: &'a SprintId,
    /// Each (contract version, criterion)'s check, read once.
    checks: HashMap<(String, String), Option<Check>>,
    /// Merge commits already judged.
    merges: HashMap<ObjectId, (State, Option<Problem>)>,
}

type Outcome = (State, Option<Problem>);

impl Replayer<'_> {
    /// The state at `tip`, replaying back to the first commit, a merge, or `start` (a commit
    /// already replayed, with its state).
    fn at(&mut self, tip: ObjectId, start: Option<(ObjectId, State)>) -> Result<Outcome> {
        let mut todo: Vec<CommitInfo> = Vec::new();
        let mut cur = tip;
        let mut base: Option<(ObjectId, State)> = None;
        loop {
            if let Some((t, s)) = &start {
                if *t == cur {
                    base = Some((*t, s.clone()));
                    break;
                }
            }
            let info = self.store.commit_info(cur)?;
            if info.parents.len() > 1 {
                let (state, problem) = self.merge(&info)?;
                if problem.is_some() {
                    return Ok((state, problem));
                }
                base = Some((cur, state));
                break;
            }
            let parent = info.parents.first().copied();
            todo.push(info);
            match parent {
                Some(p) => cur = p,
                None => break,
            }
        }
        let (mut last_good, mut state) = match base {
            Some((id, s)) => (Some(id), s),
            None => (None, State::new(self.sprint)),
        };
        for info in todo.into_iter().rev() {
            let parent_tree = match info.parents.first() {
                Some(p) => self.store.tree_of(*p)?,
                None => ObjectId::empty_tree(self.store.repo().object_hash()),
            };
            let mut next = state.clone();
            if let Some(what) = self.step(&mut next, parent_tree, &info)? {
                return Ok((
                    state,
                    Some(Problem {
                        commit: info.id.to_string(),
                        what,
                        last_good: last_good.map(|g| g.to_string()),
                    }),
                ));
            }
            state = next;
            last_good = Some(info.id);
        }
        Ok((state, None))
    }

    /// A merge commit must be the merge `git rails sync` makes of its two parents, each of
    /// which must replay.
    fn merge(&mut self, info: &CommitInfo) -> Result<Outcome> {
        if let Some(o) = self.merges.get(&info.id) {
            return Ok(o.clone());
        }
        let bad = |what: String| Problem {
            commit: info.id.to_string(),
            what,
            last_good: None,
        };
        let outcome = if info.parents.len() != 2 {
            (
                State::new(self.sprint),
                Some(bad(format!(
                    "a merge of {} parents; a sync merges two",
                    info.parents.len()
                ))),
            )
        } else {
            let (a, b) = (info.parents[0], info.parents[1]);
            let (sa, pa) = self.at(a, None)?;
            if pa.is_some() {
                (sa, pa)
            } else {
                let (_, pb) = self.at(b, None)?;
                if pb.is_some() {
                    (sa, pb)
                } else {
                    let refname = evidence_ref(self.sprint);
                    let merged =
                        crate::evidence::merge::merge(self.store, &refname, self.sprint, a, b)?;
                    if merged.tree != info.tree {
                        (
                            sa,
                            Some(bad(
                                "a merge whose records are not the merge of its parents' (`git rails sync` writes it from both chains)".into(),
                            )),
                        )
                    } else {
                        match self.read_state(info.tree)? {
                            Ok(s) => (s, None),
                            Err(what) => (sa, Some(bad(what))),
                        }
                    }
                }
            }
        };
        self.merges.insert(info.id, outcome.clone());
        Ok(outcome)
    }

    fn read_state(&self, tree: ObjectId) -> Result<std::result::Result<State, String>> {
        let Some(bytes) = self.store.read_file_in_tree(tree, STATE_FILE)? else {
            return Ok(Err(format!("it has no {STATE_FILE}")));
        };
        Ok(serde_json::from_slice::<State>(&bytes)
            .map_err(|e| format!("its {STATE_FILE} is not a rails-evidence/v1 state: {e}")))
    }

    fn check(&mut self, version: &str, id: &str) -> Result<Option<Check>> {
        let key = (version.to_string(), id.to_string());
        if let Some(c) = self.checks.get(&key) {
            return Ok(c.clone());
        }
        let c = match contract::find(self.store, self.sprint, Some(version)) {
            Ok(f) => f.contract.check(id).cloned(),
            Err(e) if e.kind == crate::error::Kind::Internal => return Err(e),
            Err(_) => None,
        };
        self.checks.insert(key, c.clone());
        Ok(c)
    }

    /// The first path the commit changes besides its record (`<stem>.json`, `<stem>.log`), the
    /// tree it observed (`trees/<id>`, added) and `state.json`; None when there is none. Walks
    /// only the folders on the record's path, one level each.
    fn foreign_change(
        &self,
        parent: ObjectId,
        tree: ObjectId,
        stem: &str,
        observed: Option<&str>,
    ) -> Result<Option<String>> {
        let store = self.store;
        let (dir, name) = stem.rsplit_once('/').unwrap_or(("", stem));
        let allowed_files = [format!("{name}.json"), format!("{name}.log")];
        for top in store.differing_entries(Some(parent), Some(tree))? {
            match top.as_str() {
                STATE_FILE => {}
                TREES_DIR => {
                    let (a, b) = (
                        store.entry_at(parent, TREES_DIR)?,
                        store.entry_at(tree, TREES_DIR)?,
                    );
                    for t in store.differing_entries(a, b)? {
                        let added = a
                            .map(|a| store.entry_at(a, &t))
                            .transpose()?
                            .flatten()
                            .is_none();
                        if observed != Some(t.as_str()) || !added {
                            return Ok(Some(format!("{TREES_DIR}/{t}")));
                        }
                    }
                }
                _ => {
                    // Down the record's folders: at each level only the next one may differ.
                    let mut path = String::new();
                    let mut expect = dir.split('/').peekable();
                    let mut next = Some(top.clone());
                    let mut here = top;
                    loop {
                        let want = expect.next();
                        if next.as_deref() != want {
                            return Ok(Some(if path.is_empty() {
                                here
                            } else {
                                format!("{path}/{here}")
                            }));
                        }
                        path = if path.is_empty() {
                            here.clone()
                        } else {
                            format!("{path}/{here}")
                        };
                        let (a, b) = (store.entry_at(parent, &path)?, store.entry_at(tree, &path)?);
                        let changed = store.differing_entries(a, b)?;
                        if expect.peek().is_none() {
                            if let Some(f) = changed.iter().find(|f| !allowed_files.contains(f)) {
                                return Ok(Some(format!("{path}/{f}")));
                            }
                            break;
                        }
                        match changed.as_slice() {
                            [] => break,
                            [one] => {
                                here = one.clone();
                                next = Some(one.clone());
                            }
                            [first, ..] => {
                                let want = expect.peek().copied();
                                let odd = changed
                                    .iter()
                                    .find(|c| Some(c.as_str()) != want)
                                    .unwrap_or(first);
                                return Ok(Some(format!("{path}/{odd}")));
                            }
                        }
                    }
                }
            }
        }
        Ok(None)
    }

    /// Applies one commit to `state`; Some(what is wrong) when it is not one legal transition.
    fn step(
        &mut self,
        state: &mut State,
        parent_tree: ObjectId,
        info: &CommitInfo,
    ) -> Result<Option<String>> {
        let store = self.store;
        let Some(trailer) = info.trailer("Rails-Transition") else {
            return Ok(Some(
                "it has no Rails-Transition trailer, so it holds no transition".into(),
            ));
        };
        let Some((t, id)) = trailer.trim().split_once(' ') else {
            return Ok(Some(format!(
                "its Rails-Transition trailer {trailer:?} is not `<transition> <criterion>`"
            )));
        };
        let id = id.trim();
        let Some(t) = Transition::parse(t) else {
            return Ok(Some(format!("{t:?} is not a transition")));
        };
        match info.trailer("Rails-Sprint") {
            Some(s) if s.trim() == self.sprint.as_str() => {}
            Some(s) => {
                return Ok(Some(format!(
                    "it is a transition of sprint {}, not {}",
                    s.trim(),
                    self.sprint
                )))
            }
            None => return Ok(Some("it has no Rails-Sprint trailer".into())),
        }
        let known = state.criteria.get(id).cloned();
        let shape = known
            .clone()
            .unwrap_or_else(|| Criterion::new(Proof::Check));
        let stem = record_stem(&shape, id, t);
        let json_path = format!("{stem}.json");
        let Some(blob) = store.entry_at(info.tree, &json_path)? else {
            return Ok(Some(format!(
                "its {} record {json_path} is missing",
                t.as_str().to_uppercase()
            )));
        };
        if store.entry_at(parent_tree, &json_path)? == Some(blob) {
            return Ok(Some(format!(
                "its record {json_path} is the one an earlier commit wrote, so it records nothing new"
            )));
        }
        let bytes = store.blob(blob)?;
        let mut record: Record = match serde_json::from_slice(&bytes) {
            Ok(r) => r,
            Err(e) => return Ok(Some(format!("{json_path} is not an evidence record: {e}"))),
        };
        record.id = Some(blob.to_string());
        let Some(check) = self.check(&record.contract_version, id)? else {
            return Ok(Some(format!(
                "its record names contract {} {}, which has no criterion {id:?}",
                self.sprint, record.contract_version
            )));
        };
        let mut c = known.unwrap_or_else(|| Criterion::new(Proof::of(&check)));
        let req = Request {
            sprint: self.sprint,
            criterion: id,
            transition: t,
            note: record.note.as_deref().filter(|n| !n.trim().is_empty()),
            path: record.path.as_deref().filter(|p| !p.trim().is_empty()),
            because: record.because.as_deref(),
        };
        if let Err(e) = check_allowed(&req, &c, &check) {
            return Ok(Some(format!(
                "{} {id} is not a legal transition from {}: {}",
                t.as_str(),
                c.status.as_str(),
                first_line(&e.message)
            )));
        }
        if let Err(e) = check_record(&req, &c, &check, &record) {
            return Ok(Some(format!(
                "{} {id}: {}",
                t.as_str(),
                first_line(&e.message)
            )));
        }
        if let Some(tree) = record.tree.as_deref() {
            let carried = ObjectId::from_hex(tree.as_bytes())
                .ok()
                .map(|want| {
                    store
                        .entry_at(info.tree, &format!("{TREES_DIR}/{tree}"))
                        .map(|got| got == Some(want))
                })
                .transpose()?
                .unwrap_or(false);
            if !carried {
                return Ok(Some(format!(
                    "its record is bound to tree {}, which the chain does not carry under {TREES_DIR}/",
                    short(tree)
                )));
            }
        }
        if let Some(path) =
            self.foreign_change(parent_tree, info.tree, &stem, record.tree.as_deref())?
        {
            return Ok(Some(format!(
                "it also changes {path}, which is not this transition's record"
            )));
        }
        apply(&mut c, t, &check, record);
        let status = c.status;
        state.criteria.insert(id.to_string(), c);
        match self.read_state(info.tree)? {
            Err(what) => Ok(Some(what)),
            Ok(written) if written == *state => Ok(None),
            Ok(written) => {
                let said = written.criteria.get(id).map(|c| c.status);
                Ok(Some(match said {
                    Some(s) if s != status => format!(
                        "its {STATE_FILE} says {id} is {}, but its records replay to {}",
                        s.as_str(),
                        status.as_str()
                    ),
                    _ => format!("its {STATE_FILE} is not the state its records replay to"),
                }))
            }
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
