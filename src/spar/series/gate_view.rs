//! What the gate reads of one series at one commit ([`SeriesView`]): each round's part of the
//! decision ([`Part`]: a few counts and words, and its open findings), the round names, and
//! what the history rule found ([`record::replaced_results`]). Derived from the records only;
//! the gate decides from it ([`super::gate`]).
//!
//! A view is a function of its commit (the commit fixes the tree and the history), so it is
//! memoized under the commit id ([`store::Memo`], namespace `spar-gate`): a gate asked again
//! reads one entry, and the first gate after a new record starts from its parent's entry and
//! derives only the rounds whose folders changed and the one new commit against its parent.
//! Without the memo, every gate reads every round's `round.json`, `findings.json`, ledger and
//! waivers and compares every commit with its parent. Measured at 1,000 rounds of 20 findings
//! (`benches/spar-gate.sh`, release build, 21 runs, medians on a shared 2-core machine; ratio
//! to `git log --oneline -1` of the series, 4.7 ms there): nothing kept (what every gate costs
//! without the memo) 616 ms (131×); the first gate after a new round with the earlier
//! rounds' memo warm 17.5 ms (3.7×, over issue 33's 3×); the same gate asked again 11.9 ms
//! (2.5×). What a hit still costs is mostly reading the
//! whole view (one JSON document of ~170 KB for 1,000 rounds).
//!
//! Only what is a function of the commit is kept: a round whose `round.json` names another
//! series or round than where it lies (only a hand-made record does) reads that other place,
//! so its part is derived again at every gate; a view that met an error reading git is not kept.

use super::*;

/// The memo of views.
const MEMO: store::Memo = store::Memo::new("spar-gate");

/// An open blocking finding: id, class, claim, and for a duplicate in force what it points to
/// (round, id), whose chain the gate follows when it decides.
pub(super) type Open = (String, String, String, Option<(String, String)>);

/// One round's part of the decision, as [`super::gate`] reads it. Errors are the words the
/// gate reports for a record it cannot read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Part {
    /// Why `round.json` cannot be read; nothing else is filled in then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) round_error: Option<String>,
    /// The series and round its `round.json` names (where the gate says it is). A kept part
    /// lies where it says, so they are not written: [`kept`] puts them back.
    #[serde(skip)]
    pub(super) series: String,
    #[serde(skip)]
    pub(super) round: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub(super) dry_run: bool,
    /// Stopped before it recorded findings (G29), or why that cannot be told.
    #[serde(default = "not_stopped", skip_serializing_if = "is_not_stopped")]
    pub(super) stopped: std::result::Result<bool, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) findings_error: Option<String>,
    pub(super) stage: String,
    pub(super) head: String,
    pub(super) started_at: String,
    pub(super) findings: u64,
    pub(super) in_check_paths: u64,
    pub(super) auto_deferred: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) uncovered: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) waivers_error: Option<String>,
    /// Reviewers that did not complete and are not waived: name, status.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) unwaived: Vec<(String, String)>,
    /// Why the round's findings or ledger cannot be read where its `round.json` says it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) ledger_error: Option<String>,
    /// The blocking findings its own ledger does not resolve, in file order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) open: Vec<Open>,
}

fn is_false(b: &bool) -> bool {
    !b
}

fn not_stopped() -> std::result::Result<bool, String> {
    Ok(false)
}

fn is_not_stopped(s: &std::result::Result<bool, String>) -> bool {
    *s == Ok(false)
}

/// A series as the gate reads it at one commit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct SeriesView {
    /// The round names of the first-parent chain, in the order first written.
    chain: Vec<String>,
    /// The entries under `rounds/` no commit of the chain named (rounds a sync merge brought),
    /// by name.
    merged: Vec<String>,
    /// Each round's part by its name (folders and chain names alike); None: its `round.json`
    /// names another place, so it is derived at every gate.
    parts: BTreeMap<String, Option<Part>>,
    /// What the history rule found, or why the history cannot be read.
    history: std::result::Result<Vec<String>, String>,
    /// The commit, and whether reading git failed somewhere (then the view is not kept).
    #[serde(skip)]
    tip: Option<ObjectId>,
    #[serde(skip)]
    shaky: bool,
}

impl Default for SeriesView {
    fn default() -> Self {
        SeriesView {
            chain: Vec::new(),
            merged: Vec::new(),
            parts: BTreeMap::new(),
            history: Ok(Vec::new()),
            tip: None,
            shaky: false,
        }
    }
}

impl Default for Part {
    fn default() -> Self {
        Part {
            round_error: None,
            series: String::new(),
            round: String::new(),
            dry_run: false,
            stopped: Ok(false),
            findings_error: None,
            stage: String::new(),
            head: String::new(),
            started_at: String::new(),
            findings: 0,
            in_check_paths: 0,
            auto_deferred: 0,
            uncovered: Vec::new(),
            waivers_error: None,
            unwaived: Vec::new(),
            ledger_error: None,
            open: Vec::new(),
        }
    }
}

impl SeriesView {
    /// The view of `series` at its tip: kept, or derived from its parent's kept view, or
    /// derived whole; kept for the next gate.
    pub(super) fn at_tip(store: &Store, series: &SeriesId) -> Result<SeriesView> {
        let Some(tip) = record::series_tip(store, series)? else {
            return Ok(SeriesView::default());
        };
        if let Some(v) = kept(store, series, tip) {
            return Ok(v);
        }
        let info = store.commit_info(tip)?;
        let parent = match info.parents.as_slice() {
            [p] => kept(store, series, *p),
            _ => None,
        };
        let view = match parent {
            Some(before) => before.next(store, series, &info)?,
            None => SeriesView::whole(store, series, &info)?,
        };
        if !view.shaky {
            if let Ok(bytes) = serde_json::to_vec(&view) {
                MEMO.put(store, &key(series, tip), &bytes);
            }
        }
        Ok(view)
    }

    /// Everything derived from the records at `info`.
    fn whole(store: &Store, series: &SeriesId, info: &store::CommitInfo) -> Result<SeriesView> {
        let mut view = SeriesView {
            tip: Some(info.id),
            ..SeriesView::default()
        };
        let mut seen = std::collections::HashSet::new();
        for c in store.chain(info.id)? {
            if let Some(r) = c.trailer("Spar-Round") {
                if seen.insert(r.clone()) {
                    view.chain.push(r);
                }
            }
        }
        view.merged = view.merged_of(store.list_dir(info.id, "rounds")?);
        view.history = record::replaced_results(store, series, info.id).map_err(|e| e.message);
        view.shaky |= view.history.is_err();
        let names: BTreeSet<String> = view.chain.iter().chain(&view.merged).cloned().collect();
        for name in names {
            let part = view.derive(store, series, &name);
            view.parts.insert(name, part);
        }
        Ok(view)
    }

    /// The view at `info` from this one, the view of its only parent: the rounds whose folders
    /// changed derived again, the new commit held to the history rule.
    fn next(
        self,
        store: &Store,
        series: &SeriesId,
        info: &store::CommitInfo,
    ) -> Result<SeriesView> {
        let Some(parent) = self.tip else {
            return SeriesView::whole(store, series, info);
        };
        let mut view = SeriesView {
            tip: Some(info.id),
            ..self
        };
        if let Some(r) = info.trailer("Spar-Round") {
            if !view.chain.contains(&r) {
                view.chain.push(r);
            }
        }
        let before = store.folder_at(store.tree_of(parent)?, "rounds")?;
        let after = store.folder_at(info.tree, "rounds")?;
        let mut changed: BTreeSet<String> = store
            .changed_entries(before, after)?
            .into_iter()
            .map(|e| e.name)
            .collect();
        view.merged = view.merged_of(store.list_dir(info.id, "rounds")?);
        let names: BTreeSet<String> = view.chain.iter().chain(&view.merged).cloned().collect();
        view.parts.retain(|n, _| names.contains(n));
        changed.extend(
            names
                .iter()
                .filter(|n| !view.parts.contains_key(*n))
                .cloned(),
        );
        for name in changed.into_iter().filter(|n| names.contains(n)) {
            let part = view.derive(store, series, &name);
            view.parts.insert(name, part);
        }
        if let Ok(found) = &mut view.history {
            let mut more = Vec::new();
            match record::replaced_in(store, series.as_str(), info, &mut more) {
                Ok(()) => {
                    found.extend(more);
                    found.sort();
                    found.dedup();
                }
                Err(e) => {
                    view.history = Err(e.message);
                    view.shaky = true;
                }
            }
        }
        Ok(view)
    }

    /// The folders under `rounds/` that no commit of the chain named, by name.
    fn merged_of(&self, folders: Vec<String>) -> Vec<String> {
        let in_chain: std::collections::HashSet<&String> = self.chain.iter().collect();
        let mut merged: Vec<String> = folders
            .into_iter()
            .filter(|f| !in_chain.contains(f))
            .collect();
        merged.sort();
        merged
    }

    /// The round names in the order the gate lists them: the first-parent chain's, then the
    /// folders no commit of it named (rounds a sync merge brought), by name.
    pub(super) fn names(&self) -> impl Iterator<Item = &String> {
        self.chain.iter().chain(&self.merged)
    }

    /// What the history rule found (or why the history cannot be read).
    pub(super) fn history(&self) -> &std::result::Result<Vec<String>, String> {
        &self.history
    }

    /// Round `round`'s part, derived now when it is not kept (a round named elsewhere, or one
    /// this view has no entry for).
    pub(super) fn part(
        &self,
        store: &Store,
        series: &SeriesId,
        round: &str,
    ) -> std::borrow::Cow<'_, Part> {
        match self.parts.get(round) {
            Some(Some(p)) => std::borrow::Cow::Borrowed(p),
            _ => {
                let mut scratch = SeriesView {
                    tip: self.tip,
                    ..SeriesView::default()
                };
                std::borrow::Cow::Owned(scratch.derive_now(store, series, round))
            }
        }
    }

    /// [`Self::derive_now`], kept only when the round is where its `round.json` says.
    fn derive(&mut self, store: &Store, series: &SeriesId, round: &str) -> Option<Part> {
        let p = self.derive_now(store, series, round);
        (p.round_error.is_some() || (p.series == series.as_str() && p.round == round)).then_some(p)
    }

    /// Reads a file of a round: in this view's commit for `series`, at the tip of another.
    fn file(
        &mut self,
        store: &Store,
        here: &SeriesId,
        series: &str,
        round: &str,
        file: &str,
    ) -> Result<Option<Vec<u8>>> {
        let got = if series == here.as_str() {
            match self.tip {
                Some(tip) => store.read_file(tip, &format!("rounds/{round}/{file}")),
                None => Ok(None),
            }
        } else {
            record::round_file(
                store,
                &SeriesId::recorded(series),
                &RoundName::named(round),
                file,
            )
        };
        self.shaky |= got.is_err();
        got
    }

    /// Round `round` (a name under `rounds/` of `series`) read as the gate reads it: its
    /// `round.json` where it lies; its waivers, ledger and findings for its duplicates where
    /// the `round.json` says it is.
    fn derive_now(&mut self, store: &Store, series: &SeriesId, round: &str) -> Part {
        let unreadable = |e: String| Part {
            round_error: Some(e),
            ..Part::default()
        };
        let s = series.as_str();
        let r = match self.file(store, series, s, round, "round.json") {
            Err(e) => return unreadable(e.message),
            Ok(None) => return unreadable(record::not_recorded(s, round).message),
            Ok(Some(bytes)) => match record::parse_round(s, round, &bytes) {
                Ok(r) => r,
                Err(e) => return unreadable(e.message),
            },
        };
        let mut p = Part {
            series: r.series.clone(),
            round: r.round.clone(),
            dry_run: r.dry_run,
            stage: r.stage.to_string(),
            head: r.head.clone(),
            started_at: r.started_at.clone(),
            uncovered: r.standpoints_uncovered.clone(),
            ..Part::default()
        };
        // Stopped: no finish and no findings.json under the round it names, in this series.
        if r.finished_at.is_none() {
            p.stopped = self
                .file(store, series, s, &r.round, "findings.json")
                .map(|f| f.is_none())
                .map_err(|e| e.message);
        }
        let findings = match self.file(store, series, s, round, "findings.json") {
            Err(e) => Err(e.message),
            Ok(None) => Ok(Vec::new()),
            Ok(Some(b)) => record::parse_findings(s, round, &b).map_err(|e| e.message),
        };
        let findings = match findings {
            Ok(f) => f,
            Err(e) => {
                p.findings_error = Some(e);
                return p;
            }
        };
        p.findings = findings.len() as u64;
        p.in_check_paths = findings.iter().filter(|f| f.in_check_paths).count() as u64;
        p.auto_deferred = findings.iter().filter(|f| f.auto_deferred).count() as u64;

        // Where the round says it is.
        let (ns, nr) = (r.series.clone(), r.round.clone());
        let waived = match self.file(store, series, &ns, &nr, "waivers.jsonl") {
            Err(e) => Err(e.message),
            Ok(b) => parse_waivers(&b.unwrap_or_default()),
        };
        let waived = waived.unwrap_or_else(|e| {
            p.waivers_error = Some(e);
            Vec::new()
        });
        for rev in &r.reviewers {
            if rev.status != Status::Completed && !waived.contains(&rev.name) {
                p.unwaived.push((rev.name.clone(), rev.status.to_string()));
            }
        }
        let elsewhere = ns != s || nr != round;
        let named_findings = if elsewhere {
            match self.file(store, series, &ns, &nr, "findings.json") {
                Err(e) => Err(e.message),
                Ok(None) => Ok(Vec::new()),
                Ok(Some(b)) => record::parse_findings(&ns, &nr, &b).map_err(|e| e.message),
            }
        } else {
            Ok(findings.clone())
        };
        let ledger = named_findings.and_then(|f| {
            let bytes = self
                .file(store, series, &ns, &nr, "ledger.jsonl")
                .map_err(|e| e.message)?
                .unwrap_or_default();
            Ok((f, parse_ledger(&bytes, &nr)?))
        });
        let (named, entries) = match ledger {
            Ok(x) => x,
            Err(e) => {
                p.ledger_error = Some(e);
                return p;
            }
        };
        let mut in_force: HashMap<&str, &LedgerEntry> = HashMap::new();
        for e in &entries {
            in_force.insert(e.finding.as_str(), e);
        }
        // As `Series::resolved` takes one step: the first finding of that id where the round
        // says it is, and the disposition in force for it.
        for f in findings.iter().filter(|f| f.class.blocks()) {
            let open = match named.iter().find(|g| g.id == f.id) {
                None => Some(None),
                Some(first) => {
                    let blocking = first.class.blocks();
                    match in_force.get(f.id.as_str()) {
                        None => blocking.then_some(None),
                        Some(e) => match Disposition::parse(&e.disposition) {
                            Some(Disposition::Duplicate) => Some(e.of.clone()),
                            Some(_) => None,
                            None => blocking.then_some(None),
                        },
                    }
                }
            };
            if let Some(dup) = open {
                p.open
                    .push((f.id.clone(), f.class.to_string(), f.claim.clone(), dup));
            }
        }
        p
    }
}

/// The memo key of `series` at `commit`.
fn key(series: &SeriesId, commit: ObjectId) -> Vec<u8> {
    format!("{}\n{series}\n{commit}", series.as_str().len()).into_bytes()
}

/// The view kept for `series` at `commit`, if any.
fn kept(store: &Store, series: &SeriesId, commit: ObjectId) -> Option<SeriesView> {
    let bytes = MEMO.get(store, &key(series, commit))?;
    let mut v: SeriesView = serde_json::from_slice(&bytes).ok()?;
    v.tip = Some(commit);
    for (name, p) in v.parts.iter_mut() {
        if let Some(p) = p.as_mut().filter(|p| p.round_error.is_none()) {
            p.series = series.to_string();
            p.round = name.clone();
        }
    }
    Some(v)
}
