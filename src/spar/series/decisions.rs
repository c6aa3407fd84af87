//! Who made each decision only a person can make: a waiver (`waivers.jsonl`) and a triage line
//! resting on the user's word (accepted, deferred, answered in `ledger.jsonl`).
//!
//! A record's own fields say nothing about who wrote it: the quote is free text anyone can
//! type. How a line was made is read from the series' history instead — from the commit that
//! FIRST added it (a commit whose parents do not hold the line in the same round's file):
//! - a merge commit that brings in a line neither parent had is unverified;
//! - so is a commit that changes anything but that one file by that one line (the round's
//!   derived gate facts aside), or whose subject names another series or round: a signed line
//!   cannot be carried into another record by copying, nor a signed commit grafted into
//!   another series;
//! - otherwise the commit's signature decides, judged by the policy in force
//!   ([`crate::policy`]): only a principal holding the person role makes it count.
//!
//! Without a policy every decision counts as it always did, shown as "unverified". Where each
//! line came from is memoised per series tip ([`Memo`]), and each commit's signer by the
//! policy itself ([`Policy::signer`]): the gate asks on every push.

use std::collections::{HashMap, HashSet};

use super::*;
use crate::policy::{Policy, Role, Signer};
use crate::spar::record::RETIRED_FACTS_FILE as FACTS_FILE;
use crate::store::Memo;

/// Where each decision line of a series came from, by the series and its tip.
const ORIGINS: Memo = Memo::new("decision-origins");

/// One decision only a person can make, as the gate, `show` and the report show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub series: String,
    pub round: String,
    /// `waiver`, or the disposition (`accepted`, `deferred`, `answered`).
    pub kind: String,
    /// The waived reviewer, or the finding.
    pub subject: String,
    /// Who made it: `alice@example.com (person)`, `unsigned`, `signed by a key outside the
    /// policy (…)`, `unverified: brought in by a merge commit`, or `unverified` without a policy.
    pub made_by: String,
    /// Whether it counts at the gate (always, without a policy).
    pub counts: bool,
    /// For a ledger line: whether it is the line in force for its finding.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub in_force: bool,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Where a decision's line came from, independent of any policy (what the memo keeps).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Found {
    round: String,
    kind: String,
    subject: String,
    in_force: bool,
    /// The commit that first added the line and may speak for it (hex), or why none does.
    origin: std::result::Result<String, String>,
}

/// The decisions of a series, each with who made it under `policy` (None: no policy).
pub fn decisions(
    store: &Store,
    series: &SeriesId,
    policy: Option<&Policy>,
) -> Result<Vec<Decision>> {
    let found = origins(store, series)?;
    let mut signers: HashMap<String, Signer> = HashMap::new();
    let mut out = Vec::with_capacity(found.len());
    for f in found {
        let (made_by, counts) = match (policy, &f.origin) {
            (None, _) => ("unverified".to_string(), true),
            (Some(_), Err(why)) => (format!("unverified: {why}"), false),
            (Some(p), Ok(hex)) => {
                let signer = match signers.get(hex) {
                    Some(s) => s.clone(),
                    None => {
                        let s = signer_of(store, p, hex)?;
                        signers.insert(hex.clone(), s.clone());
                        s
                    }
                };
                let counts = p.allows(&signer, Role::Person);
                let shown = match &signer {
                    Signer::Allowed { .. } => p.describe(&signer),
                    other => other.describe(),
                };
                (shown, counts)
            }
        };
        out.push(Decision {
            series: series.to_string(),
            round: f.round,
            kind: f.kind,
            subject: f.subject,
            made_by,
            counts,
            in_force: f.in_force,
        });
    }
    Ok(out)
}

/// The command a person runs to make `d` again, signed.
pub fn sign_command(d: &Decision) -> String {
    let series = &d.series;
    if d.kind == "waiver" {
        format!(
            "git spar waive {series} {} {} --user-quote \"<their words>\" --sign",
            d.round, d.subject
        )
    } else {
        let to = if d.kind == Disposition::Deferred.as_str() {
            " --to \"<where>\""
        } else {
            ""
        };
        format!(
            "git spar triage {series} {} {} {}{to} --user-quote \"<their words>\" --sign",
            d.round, d.subject, d.kind
        )
    }
}

/// Why `d` does not count under `policy`, for the gate's reasons.
pub fn not_counted(d: &Decision, policy: &Policy) -> String {
    let series = &d.series;
    let what = if d.kind == "waiver" {
        format!("the waiver of {}", d.subject)
    } else {
        format!("{} {}", d.subject, d.kind)
    };
    let persons = policy.principals(Role::Person);
    let who = if persons.is_empty() {
        "the policy names no person: add one with `git config --add rails.person <principal>`"
            .to_string()
    } else {
        format!("a person ({})", persons.join(", "))
    };
    format!(
        "{series}:{}: {what} is {}; under the signing policy only a decision signed by a person counts: {who} runs `{}`",
        d.round,
        d.made_by,
        sign_command(d)
    )
}

/// The signer of commit `hex` under `policy` (memoised by the policy, per commit).
fn signer_of(store: &Store, policy: &Policy, hex: &str) -> Result<Signer> {
    let id = ObjectId::from_hex(hex.as_bytes())
        .map_err(|e| Error::internal(format!("a kept commit id {hex:?}: {e}")))?;
    policy.signer(store, id)
}

/// Every decision line of the series at its tip and where each came from, memoised by tip.
fn origins(store: &Store, series: &SeriesId) -> Result<Vec<Found>> {
    let Some(tip) = record::series_tip(store, series)? else {
        return Ok(Vec::new());
    };
    let key = format!("{series}\n{tip}").into_bytes();
    if let Some(v) = ORIGINS.get(store, &key) {
        if let Ok(found) = serde_json::from_slice::<Vec<Found>>(&v) {
            return Ok(found);
        }
    }
    let found = derive_origins(store, series, tip)?;
    if let Ok(bytes) = serde_json::to_vec(&found) {
        ORIGINS.put(store, &key, &bytes);
    }
    Ok(found)
}

/// A decision line at the tip: its round, file, the line, and what it decides.
struct Candidate {
    round: String,
    file: &'static str,
    line: String,
    kind: String,
    subject: String,
    in_force: bool,
}

fn candidates(store: &Store, series: &SeriesId) -> Result<Vec<Candidate>> {
    let mut out = Vec::new();
    for round in record::round_names(store, series)? {
        if let Some(bytes) = record::round_file(store, series, &round, "waivers.jsonl")? {
            for line in lines(&bytes) {
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if let Some(r) = str_field(&v, "reviewer") {
                    out.push(Candidate {
                        round: round.to_string(),
                        file: "waivers.jsonl",
                        subject: r.to_string(),
                        kind: "waiver".into(),
                        line,
                        in_force: true,
                    });
                }
            }
        }
        if let Some(bytes) = record::round_file(store, series, &round, "ledger.jsonl")? {
            let mut newest: HashMap<String, usize> = HashMap::new();
            let start = out.len();
            for line in lines(&bytes) {
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                let (Some(f), Some(d)) = (str_field(&v, "finding"), str_field(&v, "disposition"))
                else {
                    continue;
                };
                let f = f.to_string();
                if Disposition::parse(d).is_some_and(Disposition::rests_on_users_word) {
                    newest.insert(f.clone(), out.len());
                    out.push(Candidate {
                        round: round.to_string(),
                        file: "ledger.jsonl",
                        subject: f,
                        kind: d.to_string(),
                        line,
                        in_force: false,
                    });
                } else {
                    newest.remove(&f);
                }
            }
            for (i, c) in out.iter_mut().enumerate().skip(start) {
                c.in_force = newest.get(&c.subject) == Some(&i);
            }
        }
    }
    Ok(out)
}

/// A JSONL file's non-blank lines, as written.
fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

fn derive_origins(store: &Store, series: &SeriesId, tip: ObjectId) -> Result<Vec<Found>> {
    let wanted = candidates(store, series)?;
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let history = store.reachable(&[tip])?;
    let by_id: HashMap<ObjectId, &store::CommitInfo> = history.iter().map(|c| (c.id, c)).collect();
    let mut files = Files {
        store,
        blobs: HashMap::new(),
        ids: HashMap::new(),
    };
    let mut out = Vec::with_capacity(wanted.len());
    for c in &wanted {
        let path = format!("rounds/{}/{}", c.round, c.file);
        // Every commit that adds the line (holds it while none of its parents does).
        let mut adders: Vec<&store::CommitInfo> = Vec::new();
        for info in &history {
            if !files.holds(info, &path, &c.line)? {
                continue;
            }
            let mut in_parent = false;
            for p in &info.parents {
                if let Some(pinfo) = by_id.get(p) {
                    if files.holds(pinfo, &path, &c.line)? {
                        in_parent = true;
                        break;
                    }
                }
            }
            if !in_parent {
                adders.push(info);
            }
        }
        // The first of them by commit time (a line copied in later never speaks for it).
        adders.sort_by_key(|a| (a.time, a.id));
        let origin = match adders.first() {
            None => Err("no commit of the series adds it".to_string()),
            Some(first) => judge_adder(store, series, &c.round, &path, &c.line, first)?,
        };
        out.push(Found {
            round: c.round.clone(),
            kind: c.kind.clone(),
            subject: c.subject.clone(),
            in_force: c.in_force,
            origin,
        });
    }
    Ok(out)
}

/// A file's lines at commits, each blob read once.
struct Files<'a> {
    store: &'a Store,
    blobs: HashMap<ObjectId, HashSet<String>>,
    ids: HashMap<(ObjectId, String), Option<ObjectId>>,
}

impl Files<'_> {
    /// Whether `path` holds `line` at commit `c`.
    fn holds(&mut self, c: &store::CommitInfo, path: &str, line: &str) -> Result<bool> {
        let key = (c.id, path.to_string());
        let id = match self.ids.get(&key) {
            Some(v) => *v,
            None => {
                let v = self.store.file_at(c.tree, path)?;
                self.ids.insert(key, v);
                v
            }
        };
        let Some(id) = id else { return Ok(false) };
        if !self.blobs.contains_key(&id) {
            let set = lines(&self.store.blob(id)?).into_iter().collect();
            self.blobs.insert(id, set);
        }
        Ok(self.blobs.get(&id).is_some_and(|s| s.contains(line)))
    }
}

/// Whether the commit that first added `line` to `path` may speak for it: one parent, that one
/// file changed by that one line (the round's derived facts aside), and a subject naming this
/// series and round.
fn judge_adder(
    store: &Store,
    series: &SeriesId,
    round: &str,
    path: &str,
    line: &str,
    c: &store::CommitInfo,
) -> Result<std::result::Result<String, String>> {
    let [parent] = c.parents.as_slice() else {
        return Ok(Err(if c.parents.is_empty() {
            "added by the first commit of the series, with everything else".to_string()
        } else {
            "brought in by a merge commit".to_string()
        }));
    };
    let parent_tree = store.tree_of(*parent)?;
    let facts = format!("rounds/{round}/{FACTS_FILE}");
    let others: Vec<String> = store
        .changed_paths(parent_tree, c.tree)?
        .into_iter()
        .filter(|p| p != path && *p != facts)
        .collect();
    if !others.is_empty() {
        return Ok(Err(format!(
            "added by a commit that also changes {}",
            others.join(", ")
        )));
    }
    let before = store
        .read_file_in_tree(parent_tree, path)?
        .map(|b| lines(&b))
        .unwrap_or_default();
    let after = store
        .read_file_in_tree(c.tree, path)?
        .map(|b| lines(&b))
        .unwrap_or_default();
    if after.len() != before.len() + 1 || after[..before.len()] != before[..] {
        return Ok(Err(
            "added by a commit that also changes other lines of its file".to_string(),
        ));
    }
    if after.last().map(String::as_str) != Some(line) {
        return Ok(Err("added by a commit that adds another line".to_string()));
    }
    let subject = format!("spar {series} {round}: ");
    if !c.subject().starts_with(&subject) {
        return Ok(Err(format!(
            "added by a commit that does not name {series} {round}"
        )));
    }
    Ok(Ok(c.id.to_string()))
}

/// What the gate makes of the decisions in the listed rounds: each shown in the document;
/// under a policy, one that decides something and is not a person's signed decision blocks,
/// naming the command a person runs; without one, a notice says anyone can decide.
pub(super) fn weigh(
    store: &Store,
    targets: &[(SeriesId, RoundName)],
    policy: Option<&Policy>,
    decided: &mut Decided,
) -> Result<()> {
    let (passed, reasons, document) = decided;
    let mut seen: Vec<&SeriesId> = Vec::new();
    let mut shown: Vec<Decision> = Vec::new();
    for (s, _) in targets {
        if seen.contains(&s) {
            continue;
        }
        seen.push(s);
        let listed: HashSet<&str> = targets
            .iter()
            .filter(|(ts, _)| ts == s)
            .map(|(_, r)| r.as_str())
            .collect();
        shown.extend(
            decisions(store, s, policy)?
                .into_iter()
                .filter(|d| listed.contains(d.round.as_str())),
        );
    }
    if let Some(p) = policy {
        // The newest listed round of each stage is the one whose waivers the gate reads.
        let mut newest: HashMap<(&str, &str), &str> = HashMap::new();
        for g in &document.growth {
            let key = (g.series.as_str(), g.stage.as_str());
            let later = newest
                .get(&key)
                .is_none_or(|n| RoundName::number_of(&g.round) >= RoundName::number_of(n));
            if later {
                newest.insert(key, g.round.as_str());
            }
        }
        let newest: HashSet<(&str, &str)> = newest.into_iter().map(|((s, _), r)| (s, r)).collect();
        let mut blocked: Vec<String> = Vec::new();
        let mut opened = 0usize;
        let mut judged: HashSet<(String, String, String)> = HashSet::new();
        for d in &shown {
            if d.counts || !d.in_force {
                continue;
            }
            let key = (d.round.clone(), d.kind.clone(), d.subject.clone());
            if d.kind == "waiver" {
                let signed = shown.iter().any(|o| {
                    o.counts
                        && o.kind == "waiver"
                        && o.round == d.round
                        && o.subject == d.subject
                        && o.series == d.series
                });
                if signed
                    || !newest.contains(&(d.series.as_str(), d.round.as_str()))
                    || !judged.insert(key)
                {
                    continue;
                }
                let sid = SeriesId::recorded(&d.series);
                let round = record::load_round(store, &sid, &RoundName::named(&d.round))?;
                let moot = round
                    .reviewers
                    .iter()
                    .any(|r| r.name == d.subject && r.status == Status::Completed);
                if !moot {
                    blocked.push(not_counted(d, p));
                }
            } else {
                let sid = SeriesId::recorded(&d.series);
                let findings = record::load_findings(store, &sid, &RoundName::named(&d.round))?;
                if findings
                    .iter()
                    .any(|f| f.id == d.subject && f.class.blocks())
                {
                    opened += 1;
                    blocked.push(not_counted(d, p));
                }
            }
        }
        if !blocked.is_empty() {
            let blocked: Vec<String> = blocked
                .into_iter()
                .map(|r| r.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect();
            reasons.extend(blocked);
            document.reasons = reasons.clone();
            document.open_findings += opened;
            *passed = false;
            document.result = "blocked".to_string();
        }
    } else if !shown.is_empty() {
        document.notice = Some(NO_POLICY_DECISIONS.to_string());
    }
    document.decisions = shown;
    Ok(())
}

/// The notice of a gate that counted decisions without a policy.
pub const NO_POLICY_DECISIONS: &str = "no signing policy is in force (rails.allowedSigners or .rails/policy.toml): anyone can waive a reviewer or accept a finding, and these decisions count unverified";
