//! Gate facts: what `git spar gate` needs of one round, so a gate reads a few small facts per
//! round instead of every round's findings, ledger and history (issue 21).
//!
//! Two places hold them:
//!
//! - `rounds/<round>/gate-facts.json` in the series commit, written by every command that writes
//!   a round's files ([`super::record::write_round`]) and by the merge of `git spar sync`, and
//!   bound to what it was derived from: the blob ids of `round.json`, `findings.json`,
//!   `ledger.jsonl` and `waivers.jsonl`. It is never trusted: a fact whose inputs are those of
//!   the round but which says something else was written by hand, and blocks the gate. One
//!   whose inputs are not the round's any more (a tool that did not know facts wrote the round
//!   since) is stale and ignored.
//! - What the gate derived itself, kept per series under
//!   `<common dir>/spar/cache/facts/<series>.jsonl` with the tip it holds for, the commits whose
//!   history was checked and what that check found ([`super::record::replaced_in`]): not each
//!   round's whole facts but its [`Part`] of the decision (a few dozen bytes for a round with
//!   nothing open, kept as one short line: [`Part::to_line`]). The next gate derives only the
//!   rounds whose files changed between that tip and the new one (the two `rounds/` folders
//!   walked side by side: a round whose folder id did not change is not looked into), checks only the commits not seen before, and appends what it learned as
//!   one line: what it derives and writes grows with what was written since the last gate;
//!   what remains per listed round is reading its small part and putting it in the decision.
//!   A kept file that cannot be read, does not chain line to line, or was written by another
//!   build, is ignored and everything is derived again; a kept tip that is not in the history
//!   of the series' tip (the ref set back or aside) is derived again too.
//!
//!   The kept file is local state in the common dir, not a record: it is trusted as the
//!   repository's own hooks and refs are (whoever can edit it can edit those). The records
//!   that leave the clone are judged without it: the server's pre-receive derives every
//!   pushed round again, and a fresh clone's gate has nothing kept.
//!
//! The kept decision of the gate (`spar/cache/gate/`) stays a second level on top of these.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::ids::SeriesId;
use super::record;
use super::series::{parse_ledger, parse_waivers};
use super::vocab::Class;
use crate::error::Result;
use crate::store::{self, ObjectId, Store};

/// The file of a round's gate facts in the series tree.
pub const FACTS_FILE: &str = "gate-facts.json";

/// The schema of a round's gate facts.
pub const FACTS_SCHEMA: &str = "spar-gate-facts/1";

/// The round files the facts are derived from.
pub const INPUTS: [&str; 4] = [
    "round.json",
    "findings.json",
    "ledger.jsonl",
    "waivers.jsonl",
];

/// What the gate needs of one round (a folder under `rounds/`). Errors are the words the gate
/// reports for a record it cannot read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundFacts {
    pub schema: String,
    /// The series and the folder the facts were derived for.
    pub series: String,
    pub folder: String,
    /// The blob ids of the inputs that are present.
    pub inputs: BTreeMap<String, String>,
    /// Why `round.json` cannot be read, if it cannot.
    pub round_error: Option<String>,
    /// From `round.json`: the series and round it names, its stage, head and start.
    pub series_named: String,
    pub round_named: String,
    pub stage: String,
    pub head: String,
    pub started_at: String,
    pub dry_run: bool,
    pub finished: bool,
    /// Each reviewer's name and status.
    pub reviewers: Vec<(String, String)>,
    pub standpoints_uncovered: Vec<String>,
    /// Why `findings.json` cannot be read, if it cannot.
    pub findings_error: Option<String>,
    pub has_findings_file: bool,
    pub findings: u64,
    pub in_check_paths: u64,
    pub auto_deferred: u64,
    /// Every finding id in file order, one a line (ids are `<reviewer>-F<n>`), and for each
    /// `y` when its class blocks, else `n`: two strings, so a series' kept facts stay small.
    pub ids: String,
    pub blocks: String,
    /// The blocking findings in file order: id, class, claim.
    pub blocking: Vec<(String, String, String)>,
    /// Why `ledger.jsonl` cannot be read, if it cannot.
    pub ledger_error: Option<String>,
    /// The disposition in force per finding id of this round, and for a duplicate what it
    /// points to (round, id).
    pub in_force: BTreeMap<String, (String, Option<(String, String)>)>,
    /// Why `waivers.jsonl` cannot be read, if it cannot.
    pub waivers_error: Option<String>,
    pub waived: Vec<String>,
}

impl RoundFacts {
    /// Whether the round has a finding `id`, and if so whether its class blocks (the first
    /// finding of that id, as a lookup in `findings.json` finds it).
    pub fn finding(&self, id: &str) -> Option<bool> {
        if self.blocks.is_empty() {
            return None;
        }
        let at = self.ids.split('\n').position(|i| i == id)?;
        Some(self.blocks.as_bytes().get(at) == Some(&b'y'))
    }

    /// Stopped before it recorded findings (no finish and no `findings.json`): counts as a dry
    /// run (G29).
    pub fn stopped(&self) -> bool {
        !self.finished && !self.has_findings_file
    }
}

/// Where a finding of a round stands by that round's own records: resolved, open, or a
/// duplicate of another round's finding (which decides it).
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Resolved,
    Open,
    Duplicate(String, String),
}

/// The first step of following a finding to its end (see `resolved_by_facts` in the gate):
/// what the round's own findings and ledger say of `id`.
pub fn step(f: &RoundFacts, id: &str) -> Step {
    use super::vocab::Disposition;
    if f.findings_error.is_some() || f.ledger_error.is_some() {
        return Step::Open;
    }
    let Some(blocking) = f.finding(id) else {
        return Step::Open;
    };
    let by_class = if blocking { Step::Open } else { Step::Resolved };
    match f.in_force.get(id) {
        None => by_class,
        Some((disposition, of)) => match Disposition::parse(disposition) {
            Some(Disposition::Duplicate) => match of {
                Some((r, of)) => Step::Duplicate(r.clone(), of.clone()),
                None => Step::Open,
            },
            Some(_) => Step::Resolved,
            None => by_class,
        },
    }
}

/// What one round contributes to a gate's decision, derived from that round's own files only
/// (so it stays right until they change), kept per series instead of the round's whole facts:
/// a gate after a new record reads a few dozen bytes per round. The blocking findings its own
/// ledger does not resolve are kept with the duplicate they point to, if any; those are
/// followed at decision time, through the other round's facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// Why `round.json` cannot be read, if it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_error: Option<String>,
    /// Its `round.json` names another series or round than where it is.
    #[serde(default, skip_serializing_if = "is_false")]
    pub elsewhere: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub dry_run: bool,
    /// Stopped before it recorded findings (see [`RoundFacts::stopped`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub stopped: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub findings_error: Option<String>,
    pub stage: String,
    pub head: String,
    pub started_at: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub findings: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub in_check_paths: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub auto_deferred: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standpoints_uncovered: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waivers_error: Option<String>,
    /// The reviewers neither completed nor waived: name, status.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unwaived: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_error: Option<String>,
    /// The blocking findings in file order that this round's records leave open: id, class,
    /// claim, and the (round, id) a duplicate disposition points to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open: Vec<OpenFinding>,
}

/// A blocking finding left open by its own round: id, class, claim, and the (round, id) its
/// duplicate disposition points to.
pub type OpenFinding = (String, String, String, Option<(String, String)>);

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Part {
    /// The part of the round in folder `folder` of `series` whose facts are `f`.
    pub fn of(f: &RoundFacts, series: &str, folder: &str) -> Part {
        use super::vocab::Status;
        let unwaived = f
            .reviewers
            .iter()
            .filter(|(name, status)| *status != Status::Completed && !f.waived.contains(name))
            .cloned()
            .collect();
        let open = if f.ledger_error.is_some() {
            Vec::new()
        } else {
            f.blocking
                .iter()
                .filter_map(|(id, class, claim)| match step(f, id) {
                    Step::Resolved => None,
                    Step::Open => Some((id.clone(), class.clone(), claim.clone(), None)),
                    Step::Duplicate(r, of) => {
                        Some((id.clone(), class.clone(), claim.clone(), Some((r, of))))
                    }
                })
                .collect()
        };
        Part {
            round_error: f.round_error.clone(),
            elsewhere: f.round_error.is_none()
                && (f.series_named != series || f.round_named != folder),
            dry_run: f.dry_run,
            stopped: f.stopped(),
            findings_error: f.findings_error.clone(),
            stage: f.stage.clone(),
            head: f.head.clone(),
            started_at: f.started_at.clone(),
            findings: f.findings,
            in_check_paths: f.in_check_paths,
            auto_deferred: f.auto_deferred,
            standpoints_uncovered: f.standpoints_uncovered.clone(),
            waivers_error: f.waivers_error.clone(),
            unwaived,
            ledger_error: f.ledger_error.clone(),
            open,
        }
    }
}

impl Part {
    /// The part as one short line: `<flags> <stage> <head> <started_at> <findings>
    /// <in_check_paths> <auto_deferred>`, the flags `-` or some of `e` (elsewhere), `d` (dry
    /// run), `s` (stopped). A part with anything more to say (an error, a reviewer not done, a
    /// finding left open, a standpoint uncovered) or a field that is not one plain word is
    /// written as its JSON object instead; those are the few rounds that block. Reading a
    /// round's part back is then splitting one line, not parsing an object of named fields.
    pub fn to_line(&self) -> String {
        let word = |s: &str| {
            !s.bytes()
                .any(|b| b == b' ' || b == b'"' || b == b'\\' || b < 0x20 || b == 0x7f)
        };
        let compact = self.round_error.is_none()
            && self.findings_error.is_none()
            && self.standpoints_uncovered.is_empty()
            && self.waivers_error.is_none()
            && self.unwaived.is_empty()
            && self.ledger_error.is_none()
            && self.open.is_empty()
            && word(&self.stage)
            && word(&self.head)
            && word(&self.started_at);
        if !compact {
            return serde_json::to_string(self).unwrap_or_default();
        }
        let mut flags = String::new();
        for (on, c) in [
            (self.elsewhere, 'e'),
            (self.dry_run, 'd'),
            (self.stopped, 's'),
        ] {
            if on {
                flags.push(c);
            }
        }
        if flags.is_empty() {
            flags.push('-');
        }
        format!(
            "{flags} {} {} {} {} {} {}",
            self.stage,
            self.head,
            self.started_at,
            self.findings,
            self.in_check_paths,
            self.auto_deferred
        )
    }

    /// A part as [`Part::to_line`] wrote it; None when the line is not one it writes (more
    /// findings in the check paths than findings, too).
    pub fn from_line(line: &str) -> Option<Part> {
        let p = if line.starts_with('{') {
            serde_json::from_str::<Part>(line).ok()?
        } else {
            let mut f = line.split(' ');
            let flags = f.next()?;
            let (mut elsewhere, mut dry_run, mut stopped) = (false, false, false);
            if flags != "-" {
                if flags.is_empty() {
                    return None;
                }
                for c in flags.bytes() {
                    let on = match c {
                        b'e' => &mut elsewhere,
                        b'd' => &mut dry_run,
                        b's' => &mut stopped,
                        _ => return None,
                    };
                    if *on {
                        return None;
                    }
                    *on = true;
                }
            }
            let (stage, head, started_at) = (f.next()?, f.next()?, f.next()?);
            let number = |x: Option<&str>| -> Option<u64> {
                let x = x?;
                // Written as u64 writes it: digits, no sign, no leading zero.
                if x.is_empty()
                    || !x.bytes().all(|b| b.is_ascii_digit())
                    || (x.len() > 1 && x.starts_with('0'))
                {
                    return None;
                }
                x.parse().ok()
            };
            let (findings, in_check_paths, auto_deferred) =
                (number(f.next())?, number(f.next())?, number(f.next())?);
            if f.next().is_some() {
                return None;
            }
            Part {
                round_error: None,
                elsewhere,
                dry_run,
                stopped,
                findings_error: None,
                stage: stage.to_string(),
                head: head.to_string(),
                started_at: started_at.to_string(),
                findings,
                in_check_paths,
                auto_deferred,
                standpoints_uncovered: Vec::new(),
                waivers_error: None,
                unwaived: Vec::new(),
                ledger_error: None,
                open: Vec::new(),
            }
        };
        (p.in_check_paths <= p.findings && p.auto_deferred <= p.findings).then_some(p)
    }
}

/// One input of [`derive`]: its file name, its blob id (None: absent) and its bytes when they
/// are at hand already.
pub type Input<'a> = (&'a str, Option<ObjectId>, Option<&'a [u8]>);

/// Derives a round's facts from its input files (`(name, blob id, bytes when already at hand)`,
/// in the order of [`INPUTS`]).
pub fn derive(
    store: &Store,
    series: &str,
    folder: &str,
    inputs: &[Input<'_>],
) -> Result<RoundFacts> {
    let mut ids = BTreeMap::new();
    let mut bytes: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
    for (name, id, given) in inputs {
        let Some(id) = id else { continue };
        ids.insert(name.to_string(), id.to_string());
        let b = match given {
            Some(b) => b.to_vec(),
            None => store.blob(*id)?,
        };
        bytes.insert(name, b);
    }
    let mut f = RoundFacts {
        schema: FACTS_SCHEMA.to_string(),
        series: series.to_string(),
        folder: folder.to_string(),
        inputs: ids,
        round_error: None,
        series_named: String::new(),
        round_named: String::new(),
        stage: String::new(),
        head: String::new(),
        started_at: String::new(),
        dry_run: false,
        finished: false,
        reviewers: Vec::new(),
        standpoints_uncovered: Vec::new(),
        findings_error: None,
        has_findings_file: bytes.contains_key("findings.json"),
        findings: 0,
        in_check_paths: 0,
        auto_deferred: 0,
        ids: String::new(),
        blocks: String::new(),
        blocking: Vec::new(),
        ledger_error: None,
        in_force: BTreeMap::new(),
        waivers_error: None,
        waived: Vec::new(),
    };
    let round = match bytes.get("round.json") {
        None => Err(record::not_recorded(series, folder)),
        Some(b) => record::parse_round(series, folder, b),
    };
    match round {
        Err(e) => f.round_error = Some(e.message),
        Ok(r) => {
            f.series_named = r.series;
            f.round_named = r.round;
            f.stage = r.stage.to_string();
            f.head = r.head;
            f.started_at = r.started_at;
            f.dry_run = r.dry_run;
            f.finished = r.finished_at.is_some();
            f.reviewers = r
                .reviewers
                .into_iter()
                .map(|x| (x.name, x.status.to_string()))
                .collect();
            f.standpoints_uncovered = r.standpoints_uncovered;
        }
    }
    let findings = match bytes.get("findings.json") {
        None => Ok(Vec::new()),
        Some(b) => record::parse_findings(series, folder, b),
    };
    match findings {
        Err(e) => f.findings_error = Some(e.message),
        Ok(list) => {
            f.findings = list.len() as u64;
            f.in_check_paths = list.iter().filter(|x| x.in_check_paths).count() as u64;
            f.auto_deferred = list.iter().filter(|x| x.auto_deferred).count() as u64;
            for x in list {
                let blocks = x.class.known().is_some_and(Class::blocks);
                if !f.ids.is_empty() {
                    f.ids.push('\n');
                }
                f.ids.push_str(&x.id);
                f.blocks.push(if blocks { 'y' } else { 'n' });
                if blocks {
                    f.blocking.push((x.id, x.class.to_string(), x.claim));
                }
            }
        }
    }
    let empty = Vec::new();
    match parse_ledger(bytes.get("ledger.jsonl").unwrap_or(&empty), folder) {
        Err(e) => f.ledger_error = Some(e),
        Ok(entries) => {
            for e in entries {
                if f.finding(&e.finding).is_some() {
                    f.in_force.insert(e.finding, (e.disposition, e.of));
                }
            }
        }
    }
    match parse_waivers(bytes.get("waivers.jsonl").unwrap_or(&empty)) {
        Err(e) => f.waivers_error = Some(e),
        Ok(w) => f.waived = w,
    }
    Ok(f)
}

/// Derives the facts of the round in folder `rounds/<folder>` of `tree`; None when it has no
/// `round.json` (not a round: no facts are written for it).
pub fn derive_in_tree(
    store: &Store,
    series: &str,
    tree: ObjectId,
    folder: &str,
) -> Result<RoundFacts> {
    let at = store.folder_at(tree, &format!("rounds/{folder}"))?;
    derive_in_folder(store, series, at, folder)
}

/// Derives the facts of the round named `folder` from its folder's tree `at` (None: no such
/// folder, so no inputs).
pub fn derive_in_folder(
    store: &Store,
    series: &str,
    at: Option<ObjectId>,
    folder: &str,
) -> Result<RoundFacts> {
    let mut inputs = Vec::new();
    for name in INPUTS {
        let id = match at {
            Some(at) => store.file_at(at, name)?,
            None => None,
        };
        inputs.push((name, id, None));
    }
    derive(store, series, folder, &inputs)
}

/// What a gate knows of a series at its tip.
#[derive(Debug, Default)]
pub struct View {
    /// The tip the view is of (None: the series does not exist).
    pub tip: Option<ObjectId>,
    /// The rounds in the order `git spar` lists them (see [`record::round_names`]).
    pub names: Vec<String>,
    /// What each entry under `rounds/` contributes to the decision, by folder name.
    pub parts: BTreeMap<String, Part>,
    /// The whole facts of the rounds this gate derived (the others are derived again from the
    /// tip when a duplicate points into them: see [`View::facts_of`]).
    pub derived: BTreeMap<String, RoundFacts>,
    /// What the history check found (completed results replaced).
    pub history: Vec<String>,
    /// Rounds whose recorded gate facts say something their records do not.
    pub lies: Vec<String>,
}

/// The facts kept for one series, as folded from its file.
#[derive(Debug)]
struct Kept {
    tip: String,
    /// The round names of the first-parent chain, in the order first written.
    chain: Vec<String>,
    /// Every commit whose history check is in `history`.
    commits: Vec<ObjectId>,
    history: Vec<String>,
    rounds: BTreeMap<String, Part>,
    lies: BTreeSet<String>,
    /// How many changes the file holds after its header (it is written whole again when they
    /// outgrow the rounds: see [`compact_after`]).
    lines: usize,
}

/// The first line of a series' kept facts: which build wrote them, for which series.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    schema: String,
    build: String,
    series: String,
}

/// Each later line: what one gate learned going from the tip `from` (empty: nothing) to `tip`.
/// A gate appends one such line, so what it writes grows with the rounds written since the
/// tip it started from, never with all rounds.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Change {
    from: String,
    tip: String,
    /// The whole chain again (it did not run through `from`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chain: Option<Vec<String>>,
    /// Names that joined the chain on top of `from`'s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    chain_added: Vec<String>,
    /// Commits checked by the history rule since `from`, their ids in hex, one space between
    /// two (one string, not a thousand).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    commits: String,
    /// The history check's findings, when they changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    history: Option<Vec<String>>,
    /// What each round derived again contributes, one line a round: its name, a space and
    /// its part as [`Part::to_line`] writes it (one string: reading a thousand rounds is
    /// splitting it, not building a map of a thousand entries first).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    parts: String,
    /// The same for a round whose name holds a space or a line break, as a map; None: the
    /// round is gone.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    rounds: BTreeMap<String, Option<String>>,
    /// For each round derived again: whether its recorded facts lie.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    lies: BTreeMap<String, bool>,
}

const KEPT_SCHEMA: &str = "spar-gate-facts-kept/4";

fn kept_path(store: &Store, series: &str) -> PathBuf {
    store
        .common_dir()
        .join("spar/cache/facts")
        .join(format!("{series}.jsonl"))
}

fn empty() -> Kept {
    Kept {
        tip: String::new(),
        chain: Vec::new(),
        commits: Vec::new(),
        history: Vec::new(),
        rounds: BTreeMap::new(),
        lies: BTreeSet::new(),
        lines: 0,
    }
}

impl Kept {
    /// Applies one change; false when it does not start from the tip folded so far (two gates
    /// appended changes from the same tip, or the file was edited) or a round's part cannot be
    /// read: then nothing kept is used.
    fn apply(&mut self, c: Change) -> bool {
        if c.from != self.tip {
            return false;
        }
        if let Some(chain) = c.chain {
            self.chain = chain;
        }
        for name in c.chain_added {
            if !self.chain.contains(&name) {
                self.chain.push(name);
            }
        }
        for hex in c.commits.split(' ').filter(|h| !h.is_empty()) {
            let Ok(id) = ObjectId::from_hex(hex.as_bytes()) else {
                return false;
            };
            self.commits.push(id);
        }
        if let Some(h) = c.history {
            self.history = h;
        }
        let mut parts = Vec::new();
        for line in c.parts.split('\n').filter(|l| !l.is_empty()) {
            let Some(f) = line
                .split_once(' ')
                .and_then(|(n, p)| Some((n, Part::from_line(p)?)))
            else {
                return false;
            };
            parts.push(f);
        }
        if self.rounds.is_empty() {
            // The first change holds every round, in order: the map is built in one pass.
            self.rounds = parts.into_iter().map(|(n, f)| (n.to_string(), f)).collect();
        } else {
            for (n, f) in parts {
                self.rounds.insert(n.to_string(), f);
            }
        }
        {
            for (name, f) in c.rounds {
                match f {
                    Some(line) => match Part::from_line(&line) {
                        Some(f) => self.rounds.insert(name, f),
                        None => return false,
                    },
                    None => self.rounds.remove(&name),
                };
            }
        }
        for (name, lies) in c.lies {
            if lies {
                self.lies.insert(name);
            } else {
                self.lies.remove(&name);
            }
        }
        self.tip = c.tip;
        self.lines += 1;
        true
    }

    /// Everything kept as one change from nothing, for a file written whole.
    fn whole(&self) -> Change {
        let mut c = Change {
            from: String::new(),
            tip: self.tip.clone(),
            chain: Some(self.chain.clone()),
            chain_added: Vec::new(),
            commits: hex_list(&self.commits),
            history: Some(self.history.clone()),
            parts: String::new(),
            rounds: BTreeMap::new(),
            lies: self.lies.iter().map(|n| (n.clone(), true)).collect(),
        };
        for (n, f) in &self.rounds {
            c.put(n, f);
        }
        c
    }
}

impl Change {
    /// Records round `name`'s part: a line of `parts`, or an entry of `rounds` for a name that
    /// cannot be one.
    fn put(&mut self, name: &str, part: &Part) {
        if name.is_empty() || name.contains([' ', '\n', '\r']) {
            self.rounds.insert(name.to_string(), Some(part.to_line()));
            return;
        }
        self.parts.push_str(name);
        self.parts.push(' ');
        self.parts.push_str(&part.to_line());
        self.parts.push('\n');
    }
}

/// Commit ids in hex, one space between two.
fn hex_list<'a>(ids: impl IntoIterator<Item = &'a ObjectId>) -> String {
    let mut out = String::new();
    for id in ids {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&id.to_string());
    }
    out
}

/// The kept facts of `series`, folded line by line; None when there are none, another build
/// or series wrote them, or a line cannot be read or does not follow the one before.
fn read_kept(store: &Store, series: &str) -> Option<Kept> {
    let bytes = std::fs::read(kept_path(store, series)).ok()?;
    let mut lines = bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty());
    let h: Header = serde_json::from_slice(lines.next()?).ok()?;
    if h.schema != KEPT_SCHEMA || h.build != crate::BUILD_ID || h.series != series {
        return None;
    }
    let mut k = empty();
    for line in lines {
        let c: Change = serde_json::from_slice(line).ok()?;
        if !k.apply(c) {
            return None;
        }
    }
    (k.lines > 0).then_some(k)
}

/// Whether a file of `lines` changes over `rounds` rounds is written whole again: reading it
/// then costs at most about a quarter more than reading one written whole, and being written
/// whole once every quarter of the rounds keeps a gate's writing small on average.
fn compact_after(lines: usize, rounds: usize) -> bool {
    lines > 16.max(rounds / 4)
}

/// Keeps what a gate derived: `change` appended to the file it started from, or (nothing
/// kept, or the file outgrew its rounds) `k` written whole. Best effort: a repository that
/// cannot be written still gets its gate decided.
fn keep(store: &Store, series: &str, k: &Kept, change: Change, appended: bool) {
    let path = kept_path(store, series);
    if appended && !compact_after(k.lines, k.rounds.len()) {
        if let Ok(mut line) = serde_json::to_vec(&change) {
            line.push(b'\n');
            if store::cache_append(&path, &line).unwrap_or(false) {
                return;
            }
        }
    }
    let header = Header {
        schema: KEPT_SCHEMA.to_string(),
        build: crate::BUILD_ID.to_string(),
        series: series.to_string(),
    };
    let (Ok(mut bytes), Ok(body)) = (serde_json::to_vec(&header), serde_json::to_vec(&k.whole()))
    else {
        return;
    };
    bytes.push(b'\n');
    bytes.extend(body);
    bytes.push(b'\n');
    let _ = store::cache_write(&path, &bytes);
}

fn view_of(k: Kept, series: &str, tip: ObjectId, derived: BTreeMap<String, RoundFacts>) -> View {
    let chain: HashSet<&String> = k.chain.iter().collect();
    // `rounds` is a BTreeMap: the names the chain does not know come sorted, as in
    // `record::round_names`.
    let rest: Vec<String> = k
        .rounds
        .keys()
        .filter(|n| !chain.contains(n))
        .cloned()
        .collect();
    let lies = k.lies.iter().map(|n| lie_reason(series, n)).collect();
    let mut names = k.chain;
    names.extend(rest);
    View {
        tip: Some(tip),
        names,
        parts: k.rounds,
        derived,
        history: k.history,
        lies,
    }
}

impl View {
    /// The whole facts of round `folder` (None: no such entry under `rounds/`): those derived
    /// by this gate, or derived again from the tip's tree.
    pub fn facts_of(
        &self,
        store: &Store,
        series: &str,
        folder: &str,
    ) -> Result<Option<RoundFacts>> {
        if !self.parts.contains_key(folder) {
            return Ok(None);
        }
        if let Some(f) = self.derived.get(folder) {
            return Ok(Some(f.clone()));
        }
        let Some(tip) = self.tip else {
            return Ok(None);
        };
        let tree = store.tree_of(tip)?;
        derive_in_tree(store, series, tree, folder).map(Some)
    }
}

fn lie_reason(series: &str, round: &str) -> String {
    format!(
        "{series}: round {round}: its {FACTS_FILE} says what its records do not; gate facts are written by git spar only"
    )
}

/// Whether the facts recorded in the round's folder (the tree `folder`) contradict the derived
/// ones: they name the same inputs but say something else (or cannot be read at all).
fn lies(store: &Store, folder: ObjectId, derived: &RoundFacts) -> Result<bool> {
    let Some(id) = store.file_at(folder, FACTS_FILE)? else {
        return Ok(false);
    };
    let Ok(recorded) = serde_json::from_slice::<RoundFacts>(&store.blob(id)?) else {
        return Ok(true);
    };
    Ok(recorded.inputs == derived.inputs && recorded != *derived)
}

/// The gate's view of a series at its tip: the kept facts brought up to the tip, deriving only
/// what changed since they were kept (everything when nothing is kept).
pub fn view(store: &Store, series: &SeriesId) -> Result<View> {
    let Some(tip) = record::series_tip(store, series)? else {
        return Ok(View::default());
    };
    let kept = read_kept(store, series);
    let kept = match kept {
        Some(k) if ObjectId::from_hex(k.tip.as_bytes()).ok() == Some(tip) => {
            return Ok(view_of(k, series, tip, BTreeMap::new()))
        }
        other => other,
    };
    let appended = kept.is_some();
    let mut derived = BTreeMap::new();
    let (k, change, appended) = match update(store, series, tip, kept, &mut derived)? {
        Some((k, change)) => (k, change, appended),
        // The old tip is not in the new tip's history (the ref was moved back or aside): what
        // was kept may hold commits that are gone, so everything is derived again.
        None => {
            derived.clear();
            match update(store, series, tip, None, &mut derived)? {
                Some((k, change)) => (k, change, false),
                None => (empty(), Change::default(), false),
            }
        }
    };
    keep(store, series, &k, change, appended);
    Ok(view_of(k, series, tip, derived))
}

/// Brings `kept` (None: nothing) up to `tip`, with the change that did it; None when the kept
/// tip is not an ancestor of it. `kept.commits` is exactly the history of `kept.tip`, so the
/// walk stops at those commits.
fn update(
    store: &Store,
    series: &str,
    tip: ObjectId,
    kept: Option<Kept>,
    derived: &mut BTreeMap<String, RoundFacts>,
) -> Result<Option<(Kept, Change)>> {
    let mut k = kept.unwrap_or_else(empty);
    let mut change = Change {
        from: k.tip.clone(),
        tip: tip.to_string(),
        ..Change::default()
    };
    let round_of = |info: &store::CommitInfo| info.trailer("Spar-Round");
    let old_tip = ObjectId::from_hex(k.tip.as_bytes()).ok();
    let known: HashSet<ObjectId> = k.commits.iter().copied().collect();

    // The commits not checked before: each against its parents (the history rule).
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut stack = vec![tip];
    let mut fresh = Vec::new();
    let mut reached_old = false;
    while let Some(id) = stack.pop() {
        if known.contains(&id) {
            reached_old |= Some(id) == old_tip;
            continue;
        }
        if !seen.insert(id) {
            continue;
        }
        let info = store.commit_info(id)?;
        stack.extend(info.parents.iter().copied());
        fresh.push(info);
    }
    if old_tip.is_some() && !reached_old {
        return Ok(None);
    }
    let mut history = k.history.clone();
    for info in &fresh {
        record::replaced_in(store, series, info, &mut history)?;
    }
    history.sort();
    history.dedup();
    if history != k.history {
        change.history = Some(history.clone());
        k.history = history;
    }
    change.commits = hex_list(fresh.iter().map(|c| &c.id));
    k.commits.extend(fresh.iter().map(|c| c.id));

    // The round names of the first-parent chain: those of the new commits on top of the old
    // tip's, or the whole chain read again when it does not run through the old tip.
    let by_id: BTreeMap<ObjectId, &store::CommitInfo> = fresh.iter().map(|c| (c.id, c)).collect();
    let mut newer = Vec::new();
    let mut at = Some(tip);
    let mut through_old = false;
    while let Some(id) = at {
        if Some(id) == old_tip {
            through_old = true;
            break;
        }
        match by_id.get(&id) {
            Some(info) => {
                newer.push(round_of(info));
                at = info.parents.first().copied();
            }
            None => break,
        }
    }
    if !through_old {
        k.chain.clear();
        if at.is_some() {
            newer = store
                .chain(tip)?
                .into_iter()
                .rev()
                .map(|info| round_of(&info))
                .collect();
        }
    }
    let mut added = Vec::new();
    for name in newer.into_iter().rev().flatten() {
        if !k.chain.contains(&name) {
            k.chain.push(name.clone());
            added.push(name);
        }
    }
    if through_old {
        change.chain_added = added;
    } else {
        change.chain = Some(k.chain.clone());
    }

    // The rounds whose files changed since the old tip are derived again.
    // The two `rounds/` folders are compared entry by entry; a round whose folder id did not
    // change is not looked into.
    let tree = store.tree_of(tip)?;
    let rounds_now = store.folder_at(tree, "rounds")?;
    let before = match old_tip {
        Some(old) => store.folder_at(store.tree_of(old)?, "rounds")?,
        None => None,
    };
    for entry in store.changed_entries(before, rounds_now)? {
        let name = entry.name;
        k.lies.remove(&name);
        let Some(folder) = entry.after else {
            k.rounds.remove(&name);
            change.rounds.insert(name.clone(), None);
            change.lies.insert(name, false);
            continue;
        };
        // A file where a round's folder should be has no inputs: it cannot be read.
        let folder = entry.folder.then_some(folder);
        let f = derive_in_folder(store, series, folder, &name)?;
        let lie = match folder {
            Some(folder) => lies(store, folder, &f)?,
            None => false,
        };
        if lie {
            k.lies.insert(name.clone());
        }
        change.lies.insert(name.clone(), lie);
        let part = Part::of(&f, series, &name);
        change.put(&name, &part);
        k.rounds.insert(name.clone(), part);
        derived.insert(name, f);
    }
    k.tip = tip.to_string();
    k.lines += 1;
    Ok(Some((k, change)))
}

/// The rounds at `tip` whose recorded gate facts contradict their records, one line each: for
/// the server's pre-receive, which re-derives every round of a pushed series (it keeps no
/// facts of its own).
pub fn lies_at(store: &Store, series: &str, tip: ObjectId) -> Result<Vec<String>> {
    let tree = store.tree_of(tip)?;
    let Some(rounds) = store.folder_at(tree, "rounds")? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for name in store.folder_names(rounds)? {
        let derived = derive_in_tree(store, series, tree, &name)?;
        let Some(folder) = store.folder_at(rounds, &name)? else {
            continue;
        };
        if lies(store, folder, &derived)? {
            out.push(lie_reason(series, &name));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part() -> Part {
        Part {
            round_error: None,
            elsewhere: false,
            dry_run: false,
            stopped: false,
            findings_error: None,
            stage: "code".into(),
            head: "0123abcd".into(),
            started_at: "2026-12-02T12:00:00Z".into(),
            findings: 20,
            in_check_paths: 3,
            auto_deferred: 1,
            standpoints_uncovered: Vec::new(),
            waivers_error: None,
            unwaived: Vec::new(),
            ledger_error: None,
            open: Vec::new(),
        }
    }

    /// A part reads back as it was written, as a short line when it has nothing more to say
    /// and as its JSON object when it does or a field is not one plain word.
    #[test]
    fn a_part_reads_back_from_its_line() {
        let plain = part();
        assert_eq!(
            plain.to_line(),
            "- code 0123abcd 2026-12-02T12:00:00Z 20 3 1"
        );
        let flagged = Part {
            dry_run: true,
            stopped: true,
            stage: String::new(),
            ..part()
        };
        assert_eq!(
            flagged.to_line(),
            "ds  0123abcd 2026-12-02T12:00:00Z 20 3 1"
        );
        let open = Part {
            open: vec![("lint-F1".into(), "bug".into(), "a claim".into(), None)],
            unwaived: vec![("lint".into(), "failed".into())],
            ..part()
        };
        let spaced = Part {
            stage: "co de".into(),
            ..part()
        };
        for p in [plain, flagged, open, spaced] {
            let line = p.to_line();
            assert!(!line.contains('\n'));
            assert_eq!(Part::from_line(&line), Some(p), "{line}");
        }
    }

    /// Everything kept, written whole and read back, is what was kept: a round whose name
    /// cannot be a line of `parts` (a space in it) included, and the commits checked.
    #[test]
    fn kept_facts_written_whole_read_back_the_same() {
        let id = |c: char| ObjectId::from_hex(c.to_string().repeat(40).as_bytes()).unwrap();
        let mut k = empty();
        k.tip = id('a').to_string();
        k.chain = vec!["code-1".into(), "odd name".into()];
        k.commits = vec![id('a'), id('b')];
        k.history = vec!["h".into()];
        k.rounds.insert("code-1".into(), part());
        let open = Part {
            open: vec![("lint-F1".into(), "bug".into(), "a claim".into(), None)],
            ..part()
        };
        k.rounds.insert("odd name".into(), open);
        k.lies.insert("odd name".into());
        let line = serde_json::to_string(&k.whole()).unwrap();
        assert!(!line.contains('\n'));
        assert!(line.contains("\"rounds\":{\"odd name\":"), "{line}");
        assert!(line.contains("\"parts\":\"code-1 - code "), "{line}");
        let mut back = empty();
        assert!(back.apply(serde_json::from_str(&line).unwrap()));
        assert_eq!(
            (&back.tip, &back.chain, &back.commits, &back.history),
            (&k.tip, &k.chain, &k.commits, &k.history)
        );
        assert_eq!((&back.rounds, &back.lies), (&k.rounds, &k.lies));
        // A commit id that is not one voids the line.
        let mut c: Change = serde_json::from_str(&line).unwrap();
        c.commits.push_str(" xyz");
        assert!(!empty().apply(c));
    }

    /// A line it does not write is no part: then the kept file is not used.
    #[test]
    fn a_line_it_does_not_write_is_no_part() {
        for line in [
            "",
            "- code h t 20 3",
            "- code h t 20 3 1 9",
            "x code h t 20 3 1",
            "dd code h t 20 3 1",
            " code h t 20 3 1",
            "- code h t 020 3 1",
            "- code h t -1 0 0",
            "- code h t twenty 3 1",
            "- code h t 2 3 0",
            "- code h t 2 0 3",
            "{\"stage\": 1}",
        ] {
            assert_eq!(Part::from_line(line), None, "{line:?}");
        }
    }
}
