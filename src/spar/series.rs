//! What happens to a series after its rounds are run: triage of findings (`ledger.jsonl`),
//! waivers of reviewers that did not complete (`waivers.jsonl`), cap extensions
//! (`extensions.jsonl` at the root of the series tree), the cap check of `git spar run`, the cap
//! report, and the gate that decides whether the reviewed change may go on.
//!
//! Every write holds the series lock and re-reads the records after taking it (G33), so two
//! writers never lose each other's lines; the gate only reads and never locks, and a record it
//! cannot read is a blocked reason, not an error (G32).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::config::Config;
use super::facts;
use super::record::{self, Finding, Round};
use super::round::{check_series, STAGES};
use crate::error::{Context, Error, Result};
use crate::store::{self, ObjectId, Store};

/// The schema of the file `git spar gate --out` writes.
pub const GATE_SCHEMA: &str = "review-gate/v1";

/// The series-level file of cap extensions (at the root of the series tree, beside `rounds/`).
pub const EXTENSIONS_FILE: &str = "extensions.jsonl";

/// The causes a `code` extension may name (G31), case-sensitive.
pub const CODE_CAUSES: [&str; 5] = ["churn", "recurring", "unrelated", "hardening", "other"];

/// The classes that block the gate until triaged.
pub(crate) const BLOCKING: [&str; 2] = ["defect", "requirement-question"];

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

fn sha256_hex(bytes: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(bytes);
    format!("{:x}", h.finalize())
}

/// A text option as the seed reads it (G30, G31): trimmed, and empty means not given.
fn text(opt: &Option<String>) -> Option<String> {
    opt.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Takes the series lock (G33), telling the user on stderr when another write holds it.
fn lock_series(store: &Store, series: &str, progress: &mut dyn FnMut(&str)) -> Result<store::Lock> {
    store::lock(
        store.common_dir(),
        &format!("spar/locks/{series}.lock"),
        || {
            progress(&format!(
                "spar: waiting for another write of {series} to finish"
            ))
        },
    )
}

/// Parses JSON lines into objects; `what` names the file in the error.
fn parse_jsonl(bytes: &[u8], what: &str) -> std::result::Result<Vec<Value>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("{what} is not UTF-8: {e}"))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| format!("{what} line {}: not JSON: {e}", i + 1))?;
        if !v.is_object() {
            return Err(format!("{what} line {}: not a JSON object", i + 1));
        }
        out.push(v);
    }
    Ok(out)
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

// ---------------------------------------------------------------------------------------------
// The ledger

/// One line of `ledger.jsonl`, as far as the gate and triage need it.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerEntry {
    pub finding: String,
    pub disposition: String,
    /// For `duplicate`: the finding it points to and its round.
    pub of: Option<(String, String)>,
}

/// Reads a round's ledger (an absent file is an empty ledger: old rounds without hardening).
fn read_ledger(
    store: &Store,
    series: &str,
    round: &str,
) -> std::result::Result<(Vec<u8>, Vec<LedgerEntry>), String> {
    let bytes = record::round_file(store, series, round, "ledger.jsonl")
        .map_err(|e| e.message)?
        .unwrap_or_default();
    let out = parse_ledger(&bytes, round)?;
    Ok((bytes, out))
}

/// The entries of a round's `ledger.jsonl` (`round` is the round it belongs to: a duplicate
/// without `of_round` points into it).
pub(crate) fn parse_ledger(
    bytes: &[u8],
    round: &str,
) -> std::result::Result<Vec<LedgerEntry>, String> {
    let lines = parse_jsonl(bytes, "ledger.jsonl")?;
    let mut out = Vec::new();
    for (i, v) in lines.iter().enumerate() {
        let (Some(finding), Some(disposition)) =
            (str_field(v, "finding"), str_field(v, "disposition"))
        else {
            return Err(format!(
                "ledger.jsonl entry {}: finding and disposition must be strings",
                i + 1
            ));
        };
        let of = str_field(v, "of").map(|of| {
            let of_round = str_field(v, "of_round").unwrap_or(round);
            (of_round.to_string(), of.to_string())
        });
        out.push(LedgerEntry {
            finding: finding.to_string(),
            disposition: disposition.to_string(),
            of,
        });
    }
    Ok(out)
}

/// What `git spar show` prints in a finding's triage column: the disposition in force (the
/// newest ledger entry for it; `duplicate of <round>:<id>` for a duplicate), per finding id.
/// A ledger that cannot be read is refused with the round named.
pub fn triage_in_force(
    store: &Store,
    series: &str,
    round: &str,
) -> Result<HashMap<String, String>> {
    let (_, entries) = read_ledger(store, series, round)
        .map_err(|e| Error::refused(format!("{series}: round {round}: {e}")))?;
    let mut out = HashMap::new();
    for e in entries {
        let shown = match &e.of {
            Some((of_round, of)) if e.disposition == "duplicate" => {
                format!("duplicate of {of_round}:{of}")
            }
            _ => e.disposition.clone(),
        };
        out.insert(e.finding, shown);
    }
    Ok(out)
}

/// The findings and the entries in force (the newest per finding) of one round.
struct RoundState {
    findings: Rc<Vec<Finding>>,
    in_force: HashMap<String, LedgerEntry>,
}

/// The rounds of a series read on demand, so a duplicate may point into a round the gate list
/// does not name.
struct Series<'a> {
    store: &'a Store,
    series: String,
    rounds: HashMap<String, std::result::Result<RoundState, String>>,
    /// Findings the caller already read, so a round's `findings.json` is parsed once.
    known: HashMap<String, Rc<Vec<Finding>>>,
}

impl<'a> Series<'a> {
    fn new(store: &'a Store, series: &str) -> Self {
        Series {
            store,
            series: series.to_string(),
            rounds: HashMap::new(),
            known: HashMap::new(),
        }
    }

    /// Hands over a round's findings already read from this series.
    fn know(&mut self, round: &str, findings: Rc<Vec<Finding>>) {
        if !self.rounds.contains_key(round) {
            self.known.insert(round.to_string(), findings);
        }
    }

    fn state(&mut self, round: &str) -> &std::result::Result<RoundState, String> {
        let (store, series) = (self.store, self.series.clone());
        let known = self.known.remove(round);
        self.rounds.entry(round.to_string()).or_insert_with(|| {
            let findings = match known {
                Some(f) => f,
                None => {
                    Rc::new(record::load_findings(store, &series, round).map_err(|e| e.message)?)
                }
            };
            let (_, entries) = read_ledger(store, &series, round)?;
            let mut in_force = HashMap::new();
            for e in entries {
                in_force.insert(e.finding.clone(), e);
            }
            Ok(RoundState { findings, in_force })
        })
    }

    /// Whether a finding no longer blocks: a class that never blocks, a resolving disposition,
    /// or a duplicate whose chain ends in a resolved finding. A cycle or a missing target
    /// stays open.
    fn resolved(&mut self, round: &str, id: &str, seen: &mut Vec<(String, String)>) -> bool {
        let key = (round.to_string(), id.to_string());
        if seen.contains(&key) {
            return false;
        }
        seen.push(key);
        let Ok(state) = self.state(round) else {
            return false;
        };
        let Some(f) = state.findings.iter().find(|f| f.id == id) else {
            return false;
        };
        let blocking = BLOCKING.contains(&f.class.as_str());
        match state.in_force.get(id).cloned() {
            None => !blocking,
            Some(e) => match e.disposition.as_str() {
                "duplicate" => match e.of {
                    Some((r, of)) => self.resolved(&r, &of, seen),
                    None => false,
                },
                "fixed" | "rejected" | "deferred" | "answered" | "accepted" | "auto_deferred" => {
                    true
                }
                _ => !blocking,
            },
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Triage

/// What `git spar triage` was asked. Text options are as given; they are trimmed here.
#[derive(Debug, Clone, Default)]
pub struct TriageRequest {
    pub series: String,
    pub round: String,
    pub finding: String,
    pub disposition: String,
    pub of: Option<String>,
    pub evidence: Option<String>,
    pub to: Option<String>,
    pub user_quote: Option<String>,
    pub failed_before: Option<String>,
    pub passed_after: Option<String>,
    pub commit: Option<String>,
}

/// The disposition table of spec.md: the classes each disposition is allowed for, and the
/// options it needs (`--commit` is optional for `fixed` only).
fn disposition_rule(d: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    Some(match d {
        "fixed" => (
            &["defect", "hardening"],
            &["--failed-before", "--passed-after"],
        ),
        "duplicate" => (&["defect", "hardening", "requirement-question"], &["--of"]),
        "rejected" => (
            &["defect", "hardening", "requirement-question"],
            &["--evidence"],
        ),
        "deferred" => (
            &["defect", "hardening", "requirement-question"],
            &["--to", "--user-quote"],
        ),
        "answered" => (&["requirement-question"], &["--user-quote"]),
        "accepted" => (&["defect"], &["--user-quote"]),
        _ => return None,
    })
}

/// Records a disposition in the round's `ledger.jsonl` (one commit). Every check happens
/// under the series lock on records read after taking it; any refusal writes nothing.
pub fn triage(store: &Store, req: &TriageRequest, progress: &mut dyn FnMut(&str)) -> Result<Value> {
    check_series(&req.series)?;
    let series = req.series.as_str();
    let Some((classes, needs)) = disposition_rule(&req.disposition) else {
        return Err(Error::refused(format!(
            "disposition {:?} is not one of fixed, duplicate, rejected, deferred, answered, accepted",
            req.disposition
        )));
    };
    let given: Vec<(&str, Option<String>)> = vec![
        ("--of", text(&req.of)),
        ("--evidence", text(&req.evidence)),
        ("--to", text(&req.to)),
        ("--user-quote", text(&req.user_quote)),
        ("--failed-before", text(&req.failed_before)),
        ("--passed-after", text(&req.passed_after)),
    ];
    let missing: Vec<&str> = needs
        .iter()
        .copied()
        .filter(|n| given.iter().any(|(k, v)| k == n && v.is_none()))
        .collect();
    if !missing.is_empty() {
        return Err(Error::refused(format!(
            "{} needs {} (empty after trimming counts as not given)",
            req.disposition,
            missing.join(" and ")
        )));
    }
    // An option the disposition does not take would be recorded nowhere: refuse it rather
    // than silently drop what the caller meant to say.
    let extra: Vec<&str> = given
        .iter()
        .filter(|(k, v)| v.is_some() && !needs.contains(k))
        .map(|(k, _)| *k)
        .chain((req.commit.is_some() && req.disposition != "fixed").then_some("--commit"))
        .collect();
    if !extra.is_empty() {
        return Err(Error::refused(format!(
            "{} does not take {}",
            req.disposition,
            extra.join(", ")
        )));
    }
    let commit = match &req.commit {
        Some(rev) => Some(
            store
                .resolve_commit(rev)
                .map_err(|e| e.context("--commit"))?
                .to_string(),
        ),
        None => None,
    };

    let _lock = lock_series(store, series, progress)?;
    // Re-read under the lock (G33).
    record::load_round(store, series, &req.round)?;
    let findings = record::load_findings(store, series, &req.round)?;
    let Some(finding) = findings.iter().find(|f| f.id == req.finding) else {
        return Err(Error::refused(format!(
            "{series}: round {} has no finding {:?}",
            req.round, req.finding
        ))
        .hint(format!("see `git spar show {series}:{}`", req.round)));
    };
    if !classes.contains(&finding.class.as_str()) {
        return Err(Error::refused(format!(
            "{} is a {}; {} is allowed for {} only",
            finding.id,
            finding.class,
            req.disposition,
            classes.join(", ")
        )));
    }
    let (ledger_bytes, _) = read_ledger(store, series, &req.round)
        .map_err(|e| Error::refused(format!("{series}: round {}: {e}", req.round)))?;
    let mut entry = json!({
        "finding": finding.id,
        "disposition": req.disposition,
    });
    if let Some(of) = text(&req.of) {
        let (of_round, of_id) = resolve_of(store, series, &req.round, &of)?;
        if of_round == req.round && of_id == finding.id {
            return Err(Error::refused(format!(
                "{} cannot be a duplicate of itself",
                finding.id
            )));
        }
        entry["of"] = json!(of_id);
        entry["of_round"] = json!(of_round);
    }
    for (key, value) in &given {
        if let (Some(v), false) = (value, *key == "--of") {
            entry[key.trim_start_matches("--").replace('-', "_")] = json!(v);
        }
    }
    if let Some(c) = commit {
        entry["commit"] = json!(c);
    }
    entry["at"] = json!(now());
    let mut bytes = ledger_bytes;
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    bytes.extend(record::jsonl(std::slice::from_ref(&entry)));
    let tip = record::series_tip(store, series)?;
    record::write_round(
        store,
        series,
        &req.round,
        tip,
        vec![("ledger.jsonl".to_string(), bytes)],
        &format!(
            "spar {series} {}: triage {} {}",
            req.round, finding.id, req.disposition
        ),
        &[("Spar-Finding", finding.id.clone())],
    )?
    .ok_or_else(|| moved(series))?;
    Ok(entry)
}

fn moved(series: &str) -> Error {
    Error::internal(format!(
        "{} moved while holding the series lock",
        record::series_ref(series)
    ))
}

/// `--of`: a finding id of the same round as written (G30), or `<round>:<id>` for a finding of
/// another round of the same series.
fn resolve_of(store: &Store, series: &str, round: &str, of: &str) -> Result<(String, String)> {
    let same = record::load_findings(store, series, round)?;
    if same.iter().any(|f| f.id == of) {
        return Ok((round.to_string(), of.to_string()));
    }
    if let Some((r, id)) = of.split_once(':') {
        if record::round_names(store, series)?.iter().any(|n| n == r) {
            let other = record::load_findings(store, series, r)?;
            if other.iter().any(|f| f.id == id) {
                return Ok((r.to_string(), id.to_string()));
            }
        }
    }
    Err(Error::refused(format!(
        "--of {of:?}: no such finding in {series} (name one of round {round}, or <round>:<id>)"
    )))
}

// ---------------------------------------------------------------------------------------------
// Waive

/// Reads a round's waivers (G32): absent means none; every line needs reviewer, preset and a
/// non-empty user_quote.
fn read_waivers(
    store: &Store,
    series: &str,
    round: &str,
) -> std::result::Result<(Vec<u8>, Vec<String>), String> {
    let bytes = record::round_file(store, series, round, "waivers.jsonl")
        .map_err(|e| e.message)?
        .unwrap_or_default();
    let names = parse_waivers(&bytes)?;
    Ok((bytes, names))
}

/// The reviewers a round's `waivers.jsonl` waives.
pub(crate) fn parse_waivers(bytes: &[u8]) -> std::result::Result<Vec<String>, String> {
    let lines = parse_jsonl(bytes, "waivers.jsonl")?;
    let mut names = Vec::new();
    for (i, v) in lines.iter().enumerate() {
        let quote = str_field(v, "user_quote").map(str::trim).unwrap_or("");
        match (str_field(v, "reviewer"), str_field(v, "preset")) {
            (Some(r), Some(_)) if !quote.is_empty() => names.push(r.to_string()),
            _ => {
                return Err(format!(
                    "waivers.jsonl line {}: needs reviewer, preset and a non-empty user_quote",
                    i + 1
                ))
            }
        }
    }
    Ok(names)
}

/// Waives a reviewer of a round that did not complete, with the user's words (G30, G32).
pub fn waive(
    store: &Store,
    series: &str,
    round: &str,
    reviewer: &str,
    user_quote: &Option<String>,
    progress: &mut dyn FnMut(&str),
) -> Result<Value> {
    check_series(series)?;
    let Some(quote) = text(user_quote) else {
        return Err(Error::refused(
            "waive needs --user-quote: the user's words agreeing to go on without this reviewer",
        ));
    };
    let _lock = lock_series(store, series, progress)?;
    let r = record::load_round(store, series, round)?;
    let Some(rev) = r.reviewers.iter().find(|x| x.name == reviewer) else {
        let names: Vec<&str> = r.reviewers.iter().map(|x| x.name.as_str()).collect();
        return Err(Error::refused(format!(
            "{series}: round {round} has no required reviewer {reviewer:?} (its reviewers: {})",
            names.join(", ")
        )));
    };
    if rev.status == "completed" {
        return Err(Error::refused(format!(
            "{series}: round {round}: {reviewer} completed; only a reviewer that did not complete can be waived"
        )));
    }
    let (mut bytes, _) = read_waivers(store, series, round)
        .map_err(|e| Error::refused(format!("{series}: round {round}: {e}")))?;
    let entry = json!({
        "reviewer": rev.name,
        "preset": rev.preset,
        "status": rev.status,
        "user_quote": quote,
        "at": now(),
    });
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    bytes.extend(record::jsonl(std::slice::from_ref(&entry)));
    let tip = record::series_tip(store, series)?;
    record::write_round(
        store,
        series,
        round,
        tip,
        vec![("waivers.jsonl".to_string(), bytes)],
        &format!("spar {series} {round}: waive {reviewer}"),
        &[("Spar-Reviewer", reviewer.to_string())],
    )?
    .ok_or_else(|| moved(series))?;
    Ok(entry)
}

// ---------------------------------------------------------------------------------------------
// Extensions and caps

/// One line of `extensions.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Extension {
    pub stage: String,
    pub by: u64,
    /// None: cause not recorded (old lines, plan and plan-delta extensions; G32).
    pub cause: Option<String>,
    pub reason: Option<String>,
    pub at: Option<String>,
}

/// Reads the series' extensions; a line out of form is a refusal (G32).
pub fn read_extensions(store: &Store, series: &str) -> Result<(Vec<u8>, Vec<Extension>)> {
    let bytes = match record::series_tip(store, series)? {
        Some(tip) => store.read_file(tip, EXTENSIONS_FILE)?.unwrap_or_default(),
        None => Vec::new(),
    };
    let bad = |m: String| Error::refused(format!("{series}: {m}"));
    let mut out = Vec::new();
    for (i, v) in parse_jsonl(&bytes, EXTENSIONS_FILE)
        .map_err(bad)?
        .iter()
        .enumerate()
    {
        let stage = str_field(v, "stage").filter(|s| STAGES.contains(s));
        let by = v.get("by").and_then(Value::as_u64).filter(|b| *b >= 1);
        let (Some(stage), Some(by)) = (stage, by) else {
            return Err(bad(format!(
                "{EXTENSIONS_FILE} line {}: needs a stage (plan, plan-delta, code) and by ≥ 1",
                i + 1
            )));
        };
        let opt = |k: &str| {
            str_field(v, k)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        out.push(Extension {
            stage: stage.to_string(),
            by,
            cause: opt("cause"),
            reason: opt("reason"),
            at: opt("at"),
        });
    }
    Ok((bytes, out))
}

/// What `git spar extend` was asked.
#[derive(Debug, Clone, Default)]
pub struct ExtendRequest {
    pub series: String,
    pub stage: String,
    pub by: String,
    pub cause: Option<String>,
    pub reason: Option<String>,
}

/// Checks an extension against G31 without touching the repository: usage errors for what is
/// out of form, a refusal for a reason that is needed and missing.
pub fn check_extension(req: &ExtendRequest) -> Result<Extension> {
    check_series(&req.series)?;
    if !STAGES.contains(&req.stage.as_str()) {
        return Err(Error::usage(format!(
            "--stage {:?} is not one of plan, plan-delta, code",
            req.stage
        )));
    }
    let by = Some(req.by.as_str())
        .filter(|b| !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()))
        .and_then(|b| b.parse::<u64>().ok())
        .filter(|b| *b >= 1)
        .ok_or_else(|| {
            Error::usage(format!("--by {:?} must be an integer of 1 or more", req.by))
        })?;
    let reason = text(&req.reason);
    if req.stage != "code" {
        if req.cause.is_some() || reason.is_some() {
            return Err(Error::usage(format!(
                "a {} extension takes no --cause or --reason",
                req.stage
            )));
        }
        return Ok(Extension {
            stage: req.stage.clone(),
            by,
            cause: None,
            reason: None,
            at: None,
        });
    }
    let cause = match req.cause.as_deref() {
        Some(c) if CODE_CAUSES.contains(&c) => c.to_string(),
        Some(c) => {
            return Err(Error::usage(format!(
                "--cause {c:?} is not one of {}",
                CODE_CAUSES.join(", ")
            )))
        }
        None => {
            return Err(Error::usage(format!(
                "a code extension needs --cause (one of {})",
                CODE_CAUSES.join(", ")
            )))
        }
    };
    if reason.is_none() && (by >= 2 || cause == "other") {
        return Err(Error::refused(format!(
            "a code extension {} needs --reason",
            if by >= 2 {
                "by 2 or more"
            } else {
                "with cause other"
            }
        )));
    }
    Ok(Extension {
        stage: req.stage.clone(),
        by,
        cause: Some(cause),
        reason,
        at: None,
    })
}

/// Appends an extension to the series' `extensions.jsonl` (one commit, under the lock).
pub fn extend(
    store: &Store,
    req: &ExtendRequest,
    progress: &mut dyn FnMut(&str),
) -> Result<Extension> {
    let mut ext = check_extension(req)?;
    let series = req.series.as_str();
    let _lock = lock_series(store, series, progress)?;
    if record::series_tip(store, series)?.is_none() {
        return Err(Error::refused(format!("series {series} has no rounds"))
            .hint("extend a series that exists (see `git spar list`)"));
    }
    let (mut bytes, _) = read_extensions(store, series)?;
    ext.at = Some(now());
    let mut line = json!({"stage": ext.stage, "by": ext.by});
    if let Some(c) = &ext.cause {
        line["cause"] = json!(c);
    }
    if let Some(r) = &ext.reason {
        line["reason"] = json!(r);
    }
    line["at"] = json!(ext.at);
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    bytes.extend(record::jsonl(std::slice::from_ref(&line)));
    let tip = record::series_tip(store, series)?;
    let msg = store::message(
        &format!("spar {series}: extend {} by {}", ext.stage, ext.by),
        "",
        &[
            ("Spar-Series", series.to_string()),
            ("Spar-Extend", ext.stage.clone()),
        ],
    );
    store
        .append_commit(
            &record::series_ref(series),
            tip,
            &[(EXTENSIONS_FILE.to_string(), bytes)],
            &msg,
        )?
        .ok_or_else(|| moved(series))?;
    Ok(ext)
}

/// The configured cap of a stage.
pub fn configured_cap(cfg: &Config, stage: &str) -> u64 {
    match stage {
        "plan" => cfg.caps.plan.value,
        "plan-delta" => cfg.caps.plan_delta.value,
        _ => cfg.caps.code.value,
    }
}

/// A recorded round as counting sees it.
#[derive(Debug, Clone, Serialize)]
pub struct CountedRound {
    pub round: String,
    pub counted: bool,
    /// Why it is not counted (empty when counted).
    pub why: String,
}

/// The cap picture of one stage.
#[derive(Debug, Clone, Serialize)]
pub struct StageCaps {
    pub stage: String,
    pub configured: u64,
    pub extensions: Vec<Extension>,
    pub cap: u64,
    pub rounds: Vec<CountedRound>,
    pub counted: u64,
    pub left: u64,
}

/// A round stopped before it recorded findings (no finished_at and no findings.json) counts
/// like a dry run (G29).
fn stopped(store: &Store, series: &str, r: &Round) -> Result<bool> {
    Ok(r.finished_at.is_none()
        && record::round_file(store, series, &r.round, "findings.json")?.is_none())
}

/// The packet without its title line: the title names the round, so two packets of the same
/// change differ there even when everything the reviewers get is the same.
fn packet_body(store: &Store, series: &str, round: &str) -> Result<Option<Vec<u8>>> {
    Ok(
        record::round_file(store, series, round, "packet.md")?.map(|b| {
            match b.iter().position(|c| *c == b'\n') {
                Some(i) => b[i + 1..].to_vec(),
                None => Vec::new(),
            }
        }),
    )
}

/// Whether `r` re-ran only reviewers that had not completed in `prev` over the same stage,
/// base, head and packet.
fn is_rerun(store: &Store, series: &str, r: &Round, prev: &Round) -> Result<bool> {
    if r.stage != prev.stage || r.base != prev.base || r.head != prev.head {
        return Ok(false);
    }
    if !reviewers_unfinished_in(r.reviewers.iter().map(|x| x.name.as_str()), prev) {
        return Ok(false);
    }
    if r.packet_sha256 == prev.packet_sha256 {
        return Ok(true);
    }
    let a = packet_body(store, series, &r.round)?;
    Ok(a.is_some() && a == packet_body(store, series, &prev.round)?)
}

fn reviewers_unfinished_in<'a>(mut names: impl Iterator<Item = &'a str>, prev: &Round) -> bool {
    let mut any = false;
    let all = names.all(|n| {
        any = true;
        prev.reviewers
            .iter()
            .any(|p| p.name == n && p.status != "completed")
    });
    any && all
}

/// Counts the rounds of every stage of a series and adds the extensions to the caps.
pub fn stage_caps(store: &Store, cfg: &Config, series: &str) -> Result<Vec<StageCaps>> {
    let names = record::round_names(store, series)?;
    let (_, extensions) = read_extensions(store, series)?;
    let mut rounds = Vec::new();
    for n in &names {
        rounds.push(record::load_round(store, series, n)?);
    }
    let mut out = Vec::new();
    for stage in STAGES {
        let configured = configured_cap(cfg, stage);
        let exts: Vec<Extension> = extensions
            .iter()
            .filter(|e| e.stage == stage)
            .cloned()
            .collect();
        let cap = configured + exts.iter().map(|e| e.by).sum::<u64>();
        let mut listed = Vec::new();
        let mut prev: Option<&Round> = None;
        for r in rounds.iter().filter(|r| r.stage == stage) {
            let why = if r.dry_run {
                "dry run".to_string()
            } else if r.no_reviewer_could_run() {
                "no reviewer could run".to_string()
            } else if stopped(store, series, r)? {
                "stopped before recording findings".to_string()
            } else if let Some(p) = prev.filter(|p| is_rerun(store, series, r, p).unwrap_or(false))
            {
                format!("re-run of the unfinished reviewers of {}", p.round)
            } else {
                String::new()
            };
            if !r.dry_run {
                prev = Some(r);
            }
            listed.push(CountedRound {
                round: r.round.clone(),
                counted: why.is_empty(),
                why,
            });
        }
        let counted = listed.iter().filter(|r| r.counted).count() as u64;
        out.push(StageCaps {
            stage: stage.to_string(),
            configured,
            extensions: exts,
            cap,
            rounds: listed,
            counted,
            left: cap.saturating_sub(counted),
        });
    }
    Ok(out)
}

/// What `git spar run` is about to do, as far as counting needs it.
pub struct RunProbe<'a> {
    pub stage: &'a str,
    pub base: ObjectId,
    pub head: ObjectId,
    pub dry_run: bool,
    pub reviewers: Vec<&'a str>,
    /// The configuration digest: the packet is not built yet, so a re-run is recognised by the
    /// same configuration over the same commits.
    pub config_digest: String,
}

/// The cap check of `git spar run`, called under the series lock before anything is written:
/// a run that would be counted past the stage's cap is refused.
pub fn check_cap(store: &Store, cfg: &Config, series: &str, probe: &RunProbe<'_>) -> Result<()> {
    if probe.dry_run {
        return Ok(());
    }
    let caps = stage_caps(store, cfg, series)?;
    let Some(sc) = caps.iter().find(|c| c.stage == probe.stage) else {
        return Ok(());
    };
    if sc.counted < sc.cap {
        return Ok(());
    }
    // A re-run of only the unfinished reviewers of the newest round of the stage is free.
    let newest = sc
        .rounds
        .iter()
        .rev()
        .find(|r| r.why != "dry run")
        .map(|r| record::load_round(store, series, &r.round))
        .transpose()?;
    if let Some(prev) = newest {
        let (base, head) = (probe.base.to_string(), probe.head.to_string());
        if prev.base == base
            && prev.head == head
            && prev.config.get("digest").and_then(Value::as_str) == Some(&probe.config_digest)
            && reviewers_unfinished_in(probe.reviewers.iter().copied(), &prev)
        {
            return Ok(());
        }
    }
    let cause = if probe.stage == "code" {
        " --cause …"
    } else {
        ""
    };
    Err(Error::refused(format!(
        "cap reached for stage {} ({} of {}); extend it with `git spar extend {series} --stage {} --by 1{cause}`",
        probe.stage, sc.counted, sc.cap, probe.stage
    ))
    .hint("see `git spar cap-report` for the rounds counted"))
}

/// The cap report of a series as markdown.
pub fn render_caps_md(series: &str, caps: &[StageCaps]) -> String {
    let mut s = format!("# spar caps: {series}\n");
    for c in caps {
        s.push_str(&format!(
            "\n## {}\n\n- cap: {} (configured {}{})\n- counted: {} · left: {}\n",
            c.stage,
            c.cap,
            c.configured,
            if c.extensions.is_empty() {
                String::new()
            } else {
                format!(
                    " + {} extended",
                    c.extensions.iter().map(|e| e.by).sum::<u64>()
                )
            },
            c.counted,
            c.left
        ));
        for e in &c.extensions {
            s.push_str(&format!(
                "- extension +{}: {}{}\n",
                e.by,
                match &e.cause {
                    Some(cause) => format!("cause {cause}"),
                    None => "cause not recorded".to_string(),
                },
                e.reason
                    .as_ref()
                    .map(|r| format!(" — {r}"))
                    .unwrap_or_default()
            ));
        }
        for r in &c.rounds {
            if r.counted {
                s.push_str(&format!("- {}: counted\n", r.round));
            } else {
                s.push_str(&format!("- {}: not counted ({})\n", r.round, r.why));
            }
        }
    }
    s
}

/// The cap report of a series as JSON.
pub fn caps_json(series: &str, caps: &[StageCaps]) -> Value {
    json!({
        "schema": "spar-cap-report/v1",
        "series": series,
        "stages": caps.iter().map(|c| {
            let mut v = json!(c);
            if let Some(exts) = v.get_mut("extensions").and_then(Value::as_array_mut) {
                for e in exts {
                    let recorded = !e["cause"].is_null();
                    e["cause_recorded"] = json!(recorded);
                }
            }
            v
        }).collect::<Vec<_>>(),
    })
}

// ---------------------------------------------------------------------------------------------
// Gate

/// What `git spar gate` was asked.
#[derive(Debug, Clone, Default)]
pub struct GateRequest {
    /// `<series>:<round>` in the order given.
    pub rounds: Vec<String>,
    pub expect_head: Option<String>,
    pub out: Option<PathBuf>,
}

/// The gate's decision and everything it reports.
#[derive(Debug, Clone)]
pub struct GateOutcome {
    pub passed: bool,
    pub document: Value,
    pub reasons: Vec<String>,
}

/// Parses `<series>:<round>` (a usage error otherwise: it is not a round at all).
fn parse_target(t: &str) -> Result<(String, String)> {
    match t.split_once(':') {
        Some((s, r)) if !s.is_empty() && !r.is_empty() => {
            check_series(s)?;
            Ok((s.to_string(), r.to_string()))
        }
        _ => Err(Error::usage(format!(
            "{t:?} is not <series>:<round> (e.g. my-branch:code-1)"
        ))),
    }
}

/// G28 for `gate --out`: inside any git repository the file must be ignored by every
/// repository around it; an existing file must be a previous gate file, whose digest is kept.
fn check_gate_out(out: &Path, listed: &[(String, String)]) -> Result<(PathBuf, Option<String>)> {
    let abs = if out.is_absolute() {
        out.to_path_buf()
    } else {
        std::env::current_dir()
            .ctx("reading the current directory")?
            .join(out)
    };
    let shown = out.display();
    let previous = match std::fs::symlink_metadata(&abs) {
        Err(_) => None,
        Ok(m) if !m.is_file() => {
            return Err(Error::refused(format!(
                "--out {shown}: exists and is not a regular file"
            )))
        }
        Ok(_) => {
            let bytes = std::fs::read(&abs).ctx(format!("reading {shown}"))?;
            let is_gate = serde_json::from_slice::<Value>(&bytes)
                .ok()
                .is_some_and(|v| v.get("schema").and_then(Value::as_str) == Some(GATE_SCHEMA));
            if !is_gate {
                return Err(Error::refused(format!(
                    "--out {shown}: exists and is not a {GATE_SCHEMA} file"
                ))
                .hint("name a new file, or a gate file written before"));
            }
            Some(sha256_hex(&bytes))
        }
    };
    let mut dir = abs.parent().map(Path::to_path_buf);
    while let Some(d) = dir {
        // Not inside the folder of a listed round (a round exported with `run --out`).
        if let Ok(bytes) = std::fs::read(d.join("round.json")) {
            if let Ok(r) = serde_json::from_slice::<Round>(&bytes) {
                if listed.iter().any(|(s, n)| *s == r.series && *n == r.round) {
                    return Err(Error::refused(format!(
                        "--out {shown}: inside the folder of round {}:{}",
                        r.series, r.round
                    )));
                }
            }
        }
        if d.join(".git").exists() {
            let rel = abs.strip_prefix(&d).unwrap_or(&abs);
            let status = std::process::Command::new("git")
                .args(["check-ignore", "-q", "--"])
                .arg(rel)
                .current_dir(&d)
                .status()
                .ctx("running git check-ignore")?;
            match status.code() {
                Some(0) => {}
                Some(1) => {
                    return Err(Error::refused(format!(
                        "--out {shown}: it is inside the git repository {} and not ignored there (or tracked)",
                        d.display()
                    ))
                    .hint("choose a file outside the repository, or one its .gitignore ignores"))
                }
                _ => {
                    return Err(Error::refused(format!(
                        "--out {shown}: git cannot tell whether {} ignores it",
                        d.display()
                    )))
                }
            }
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    Ok((abs, previous))
}

/// One listed round that could be read.
struct Listed {
    round: Round,
    findings: Rc<Vec<Finding>>,
    order: usize,
}

/// Decides the gate over the listed rounds. Never locks (G33): a record that cannot be read,
/// e.g. one being written, is a blocked reason.
pub fn gate(store: &Store, req: &GateRequest) -> Result<GateOutcome> {
    if req.rounds.is_empty() {
        return Err(Error::usage("name at least one round as <series>:<round>"));
    }
    let mut targets = Vec::new();
    for t in &req.rounds {
        targets.push(parse_target(t)?);
    }
    let out = match &req.out {
        Some(o) => Some(check_gate_out(o, &targets)?),
        None => None,
    };
    // The decision is a function of the series tips, the list and --expect-head: a gate asked
    // again (every push) reads one small file instead of every round.
    let cache = GateCache::new(store, &targets, req.expect_head.as_deref());
    let (passed, reasons, mut document) = match cache.as_ref().and_then(|c| c.read()) {
        Some(hit) => hit,
        None => {
            let decided = decide(store, req, &targets)?;
            if let Some(c) = &cache {
                c.write(&decided);
            }
            decided
        }
    };
    document["at"] = json!(now());
    if let Some((path, previous)) = out {
        document["previous_gate_digest"] = json!(previous);
        store::atomic_write(&path, &record::pretty(&document))?;
    }
    Ok(GateOutcome {
        passed,
        document,
        reasons,
    })
}

/// Where a gate's decision is kept: `<common dir>/spar/cache/gate/<key>.json`, the key being
/// the sha256 of this build, the listed rounds, the tip of each of their series and what
/// `--expect-head` resolves to. A newer record moves a tip, so it is never served stale; an
/// entry that cannot be read is decided again.
struct GateCache {
    path: PathBuf,
}

/// Entries kept; the oldest are removed beyond this.
const GATE_CACHE_ENTRIES: usize = 64;

type Decided = (bool, Vec<String>, Value);

impl GateCache {
    fn new(store: &Store, targets: &[(String, String)], expect: Option<&str>) -> Option<GateCache> {
        let mut series: Vec<&str> = targets.iter().map(|(s, _)| s.as_str()).collect();
        series.sort();
        series.dedup();
        let mut tips = Vec::new();
        for s in series {
            let tip = record::series_tip(store, s).ok()?;
            tips.push(json!([s, tip.map(|t| t.to_string())]));
        }
        let expect = expect.map(|rev| match store.resolve_commit(rev) {
            Ok(id) => json!({"rev": rev, "id": id.to_string()}),
            Err(e) => json!({"rev": rev, "error": e.message}),
        });
        let key = json!({
            "cache": "spar-gate/1",
            "build": crate::BUILD_ID,
            "rounds": targets,
            "tips": tips,
            "expect_head": expect,
        });
        let digest = sha256_hex(key.to_string().as_bytes());
        Some(GateCache {
            path: store
                .common_dir()
                .join("spar/cache/gate")
                .join(format!("{digest}.json")),
        })
    }

    fn read(&self) -> Option<Decided> {
        let mut v: Value = serde_json::from_slice(&std::fs::read(&self.path).ok()?).ok()?;
        let reasons = v["reasons"]
            .as_array()?
            .iter()
            .map(|r| r.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()?;
        let document = v.get_mut("document")?.take();
        if document.get("schema").and_then(Value::as_str) != Some(GATE_SCHEMA) {
            return None;
        }
        Some((v["passed"].as_bool()?, reasons, document))
    }

    /// Best effort: a repository that cannot be written still gets its gate decided.
    fn write(&self, (passed, reasons, document): &Decided) {
        let entry = json!({"passed": passed, "reasons": reasons, "document": document});
        if store::cache_write(&self.path, entry.to_string().as_bytes()).is_err() {
            return;
        }
        let Some(dir) = self.path.parent() else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if files.len() > GATE_CACHE_ENTRIES {
            files.sort();
            for (_, old) in &files[..files.len() - GATE_CACHE_ENTRIES] {
                let _ = std::fs::remove_file(old);
            }
        }
    }
}

/// The gate's decision over the listed rounds, without the time it was asked at: from the
/// rounds' gate facts ([`facts::view`]), or by reading every record when a listed round names
/// another series or round inside its `round.json` than where it is (only a hand-made record
/// does), or when the facts cannot be read.
fn decide(store: &Store, req: &GateRequest, targets: &[(String, String)]) -> Result<Decided> {
    let mut views: BTreeMap<String, facts::View> = BTreeMap::new();
    for (s, _) in targets {
        if views.contains_key(s) {
            continue;
        }
        match facts::view(store, s) {
            Ok(v) => {
                views.insert(s.clone(), v);
            }
            Err(_) => return decide_reading_records(store, req, targets),
        }
    }
    let odd = targets.iter().any(|(s, r)| {
        views[s].facts.get(r).is_some_and(|f| {
            f.round_error.is_none() && (f.series_named != *s || f.round_named != *r)
        })
    });
    if odd {
        return decide_reading_records(store, req, targets);
    }
    Ok(decide_from_facts(store, req, targets, &views))
}

/// Whether a finding no longer blocks, from the facts of its series: a class that never blocks,
/// a resolving disposition, or a duplicate whose chain ends in a resolved finding. A cycle or a
/// missing target stays open.
fn resolved_by_facts(
    view: &facts::View,
    round: &str,
    id: &str,
    seen: &mut Vec<(String, String)>,
) -> bool {
    let key = (round.to_string(), id.to_string());
    if seen.contains(&key) {
        return false;
    }
    seen.push(key);
    let Some(f) = view.facts.get(round) else {
        return false;
    };
    if f.findings_error.is_some() || f.ledger_error.is_some() {
        return false;
    }
    let Some(blocking) = f.finding(id) else {
        return false;
    };
    match f.in_force.get(id) {
        None => !blocking,
        Some((disposition, of)) => match disposition.as_str() {
            "duplicate" => match of {
                Some((r, of)) => resolved_by_facts(view, r, of, seen),
                None => false,
            },
            "fixed" | "rejected" | "deferred" | "answered" | "accepted" | "auto_deferred" => true,
            _ => !blocking,
        },
    }
}

/// [`decide_reading_records`] from the gate facts: the same reasons in the same order.
fn decide_from_facts(
    store: &Store,
    req: &GateRequest,
    targets: &[(String, String)],
    views: &BTreeMap<String, facts::View>,
) -> Decided {
    let mut reasons: Vec<String> = Vec::new();
    // (order, series, round, facts) of each listed round that could be read.
    let mut listed: Vec<(usize, &str, &str, &facts::RoundFacts)> = Vec::new();
    for (i, (s, r)) in targets.iter().enumerate() {
        let Some(f) = views[s].facts.get(r) else {
            reasons.push(format!(
                "{s}:{r}: cannot be read: {}",
                record::not_recorded(s, r).message
            ));
            continue;
        };
        if let Some(e) = &f.round_error {
            reasons.push(format!("{s}:{r}: cannot be read: {e}"));
            continue;
        }
        if f.dry_run {
            reasons.push(format!("{s}:{r}: is a dry run; no reviewer ran"));
            continue;
        }
        if f.stopped() {
            reasons.push(format!(
                "{s}:{r}: stopped before recording findings (counts as a dry run)"
            ));
            continue;
        }
        if let Some(e) = &f.findings_error {
            reasons.push(format!("{s}:{r}: cannot be read: {e}"));
            continue;
        }
        listed.push((i, s, r, f));
    }

    // Every recorded round of each named series must be in the list.
    let series_names: Vec<&str> = views.keys().map(String::as_str).collect();
    let wanted: std::collections::HashSet<(&str, &str)> = targets
        .iter()
        .map(|(s, r)| (s.as_str(), r.as_str()))
        .collect();
    for s in &series_names {
        let view = &views[*s];
        for n in &view.names {
            if wanted.contains(&(*s, n.as_str())) {
                continue;
            }
            let skip = view
                .facts
                .get(n)
                .is_some_and(|f| f.round_error.is_none() && (f.dry_run || f.stopped()));
            if !skip {
                reasons.push(format!(
                    "{s}: round {n} of the series is not in the gate list"
                ));
            }
        }
    }

    // A history that replaced a completed reviewer's result (a commit written by hand: `git
    // spar record` refuses it) blocks, whatever the tip says now; so do gate facts written by
    // hand that say what the records do not.
    for s in &series_names {
        reasons.extend(views[*s].history.iter().cloned());
        reasons.extend(views[*s].lies.iter().cloned());
    }

    // The newest listed round of each stage: every reviewer completed or waived.
    let mut newest: BTreeMap<(&str, &str), (&str, &facts::RoundFacts)> = BTreeMap::new();
    for (_, s, r, f) in &listed {
        let key = (*s, f.stage.as_str());
        let later = newest
            .get(&key)
            .is_none_or(|(n, _)| round_number(r) >= round_number(n));
        if later {
            newest.insert(key, (r, f));
        }
    }
    for ((s, _), (r, f)) in &newest {
        if let Some(e) = &f.waivers_error {
            reasons.push(format!("{s}:{r}: {e}"));
        }
        for (name, status) in &f.reviewers {
            if status != "completed" && !f.waived.contains(name) {
                reasons.push(format!(
                    "{s}:{r}: required reviewer {name} is {status} and not waived"
                ));
            }
        }
    }

    // Open blocking findings, duplicates followed to their end.
    let mut open_count = 0usize;
    for (_, s, r, f) in &listed {
        if let Some(e) = &f.ledger_error {
            reasons.push(format!("{s}:{r}: {e}"));
            continue;
        }
        for (id, class, claim) in &f.blocking {
            if !resolved_by_facts(&views[*s], r, id, &mut Vec::new()) {
                open_count += 1;
                reasons.push(format!("{s}:{r}: {id} ({class}) is open: {claim}"));
            }
        }
    }

    // The change must not have moved after review (G27).
    let newest_head = listed
        .iter()
        .max_by(|a, b| a.3.started_at.cmp(&b.3.started_at).then(a.0.cmp(&b.0)))
        .map(|l| l.3.head.clone());
    let mut expect = Value::Null;
    if let Some(rev) = &req.expect_head {
        match store.resolve_commit(rev) {
            Err(e) => reasons.push(format!("--expect-head {rev:?}: {}", e.message)),
            Ok(id) => {
                let id = id.to_string();
                expect = json!(id);
                if let Some(h) = &newest_head {
                    if *h != id {
                        reasons.push(format!(
                            "--expect-head {rev} is {id}, but the newest round reviewed {h}: the change moved after review"
                        ));
                    }
                }
            }
        }
    }

    let auto_deferred: u64 = listed.iter().map(|l| l.3.auto_deferred).sum();
    let growth: Vec<Value> = listed
        .iter()
        .map(|(_, s, r, f)| {
            json!({
                "series": s,
                "round": r,
                "stage": f.stage,
                "findings": f.findings,
                "in_check_paths": f.in_check_paths,
                "outside_check_paths": f.findings - f.in_check_paths,
            })
        })
        .collect();
    let mut uncovered: Vec<String> = listed
        .iter()
        .flat_map(|l| l.3.standpoints_uncovered.iter().cloned())
        .collect();
    uncovered.sort();
    uncovered.dedup();
    finish_decision(
        targets,
        reasons,
        newest_head,
        expect,
        open_count,
        auto_deferred as usize,
        growth,
        uncovered,
    )
}

/// The decision document from what the gate found.
#[allow(clippy::too_many_arguments)]
fn finish_decision(
    targets: &[(String, String)],
    reasons: Vec<String>,
    newest_head: Option<String>,
    expect: Value,
    open_count: usize,
    auto_deferred: usize,
    growth: Vec<Value>,
    uncovered: Vec<String>,
) -> Decided {
    // One reason per line, whatever a reviewer's claim or an error message holds.
    let reasons: Vec<String> = reasons
        .into_iter()
        .map(|r| r.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let passed = reasons.is_empty();
    let document = json!({
        "schema": GATE_SCHEMA,
        "result": if passed { "passed" } else { "blocked" },
        "reasons": reasons,
        "rounds": targets.iter().map(|(s, r)| format!("{s}:{r}")).collect::<Vec<_>>(),
        "head": newest_head,
        "expect_head": expect,
        "open_findings": open_count,
        "auto_deferred": auto_deferred,
        "growth": growth,
        "standpoints_uncovered": uncovered,
        "previous_gate_digest": Value::Null,
        "at": Value::Null,
    });
    (passed, reasons, document)
}

/// The gate's decision read from every listed round's records and the series' whole history.
fn decide_reading_records(
    store: &Store,
    req: &GateRequest,
    targets: &[(String, String)],
) -> Result<Decided> {
    let mut reasons: Vec<String> = Vec::new();
    let mut listed: Vec<Listed> = Vec::new();
    for (i, (s, r)) in targets.iter().enumerate() {
        let round = match record::load_round(store, s, r) {
            Ok(x) => x,
            Err(e) => {
                reasons.push(format!("{s}:{r}: cannot be read: {}", e.message));
                continue;
            }
        };
        if round.dry_run {
            reasons.push(format!("{s}:{r}: is a dry run; no reviewer ran"));
            continue;
        }
        match stopped(store, s, &round) {
            Ok(true) => {
                reasons.push(format!(
                    "{s}:{r}: stopped before recording findings (counts as a dry run)"
                ));
                continue;
            }
            Ok(false) => {}
            Err(e) => {
                reasons.push(format!("{s}:{r}: cannot be read: {}", e.message));
                continue;
            }
        }
        let findings = match record::load_findings(store, s, r) {
            Ok(f) => f,
            Err(e) => {
                reasons.push(format!("{s}:{r}: cannot be read: {}", e.message));
                continue;
            }
        };
        listed.push(Listed {
            round,
            findings: Rc::new(findings),
            order: i,
        });
    }

    // Every recorded round of each named series must be in the list.
    let mut series_names: Vec<&str> = targets.iter().map(|(s, _)| s.as_str()).collect();
    series_names.dedup();
    series_names.sort();
    series_names.dedup();
    for s in &series_names {
        let names = match record::round_names(store, s) {
            Ok(n) => n,
            Err(e) => {
                reasons.push(format!("{s}: cannot be read: {}", e.message));
                continue;
            }
        };
        for n in names {
            if targets.iter().any(|(ts, tr)| ts == s && *tr == n) {
                continue;
            }
            let skip = match record::load_round(store, s, &n) {
                Ok(r) => r.dry_run || stopped(store, s, &r).unwrap_or(false),
                Err(_) => false,
            };
            if !skip {
                reasons.push(format!(
                    "{s}: round {n} of the series is not in the gate list"
                ));
            }
        }
    }

    // A history that replaced a completed reviewer's result (a commit written by hand: `git
    // spar record` refuses it) blocks, whatever the tip says now.
    for s in &series_names {
        match record::series_tip(store, s) {
            Ok(Some(tip)) => match record::replaced_results(store, s, tip) {
                Ok(found) => reasons.extend(found),
                Err(e) => reasons.push(format!("{s}: its history cannot be read: {}", e.message)),
            },
            Ok(None) => {}
            Err(e) => reasons.push(format!("{s}: cannot be read: {}", e.message)),
        }
    }

    // The newest listed round of each stage: every reviewer completed or waived.
    let mut newest: BTreeMap<(String, String), &Listed> = BTreeMap::new();
    for l in &listed {
        let key = (l.round.series.clone(), l.round.stage.clone());
        let later = newest
            .get(&key)
            .is_none_or(|n| round_number(&l.round.round) >= round_number(&n.round.round));
        if later {
            newest.insert(key, l);
        }
    }
    for l in newest.values() {
        let (s, r) = (&l.round.series, &l.round.round);
        let waived = match read_waivers(store, s, r) {
            Ok((_, w)) => w,
            Err(e) => {
                reasons.push(format!("{s}:{r}: {e}"));
                Vec::new()
            }
        };
        for rev in &l.round.reviewers {
            if rev.status != "completed" && !waived.contains(&rev.name) {
                reasons.push(format!(
                    "{s}:{r}: required reviewer {} is {} and not waived",
                    rev.name, rev.status
                ));
            }
        }
    }

    // Open blocking findings, duplicates followed to their end.
    let mut views: HashMap<String, Series<'_>> = HashMap::new();
    let mut open_count = 0usize;
    for l in &listed {
        let (s, r) = (l.round.series.clone(), l.round.round.clone());
        let view = views
            .entry(s.clone())
            .or_insert_with(|| Series::new(store, &s));
        // Parsed once: the listed round's findings are the ones at its path.
        if targets.get(l.order) == Some(&(s.clone(), r.clone())) {
            view.know(&r, l.findings.clone());
        }
        if let Err(e) = view.state(&r) {
            reasons.push(format!("{s}:{r}: {e}"));
            continue;
        }
        for f in l.findings.iter() {
            if BLOCKING.contains(&f.class.as_str()) && !view.resolved(&r, &f.id, &mut Vec::new()) {
                open_count += 1;
                reasons.push(format!(
                    "{s}:{r}: {} ({}) is open: {}",
                    f.id, f.class, f.claim
                ));
            }
        }
    }

    // The change must not have moved after review (G27).
    let newest_head = listed
        .iter()
        .max_by(|a, b| {
            a.round
                .started_at
                .cmp(&b.round.started_at)
                .then(a.order.cmp(&b.order))
        })
        .map(|l| l.round.head.clone());
    let mut expect = Value::Null;
    if let Some(rev) = &req.expect_head {
        match store.resolve_commit(rev) {
            Err(e) => reasons.push(format!("--expect-head {rev:?}: {}", e.message)),
            Ok(id) => {
                let id = id.to_string();
                expect = json!(id);
                if let Some(h) = &newest_head {
                    if *h != id {
                        reasons.push(format!(
                            "--expect-head {rev} is {id}, but the newest round reviewed {h}: the change moved after review"
                        ));
                    }
                }
            }
        }
    }

    let auto_deferred = listed
        .iter()
        .flat_map(|l| l.findings.iter())
        .filter(|f| f.auto_deferred)
        .count();
    let growth: Vec<Value> = listed
        .iter()
        .map(|l| {
            let inside = l.findings.iter().filter(|f| f.in_check_paths).count();
            json!({
                "series": l.round.series,
                "round": l.round.round,
                "stage": l.round.stage,
                "findings": l.findings.len(),
                "in_check_paths": inside,
                "outside_check_paths": l.findings.len() - inside,
            })
        })
        .collect();
    let mut uncovered: Vec<String> = listed
        .iter()
        .flat_map(|l| l.round.standpoints_uncovered.iter().cloned())
        .collect();
    uncovered.sort();
    uncovered.dedup();
    Ok(finish_decision(
        targets,
        reasons,
        newest_head,
        expect,
        open_count,
        auto_deferred,
        growth,
        uncovered,
    ))
}

/// The number of a round name `<stage>-<n>` (0 when it has none), so `code-10` follows `code-9`.
fn round_number(name: &str) -> u64 {
    name.rsplit_once('-')
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(stage: &str, by: &str, cause: Option<&str>, reason: Option<&str>) -> ExtendRequest {
        ExtendRequest {
            series: "s".into(),
            stage: stage.into(),
            by: by.into(),
            cause: cause.map(str::to_string),
            reason: reason.map(str::to_string),
        }
    }

    fn kind(r: Result<Extension>) -> Option<u8> {
        r.err().map(|e| e.kind.exit_code())
    }

    #[test]
    fn g31_extension_forms() {
        // Usage errors: stage, --by, cause for code, cause/reason for plan stages.
        assert_eq!(
            kind(check_extension(&ext("Code", "1", Some("churn"), None))),
            Some(64)
        );
        for by in ["0", "-1", "+1", "1.0", "", "x", " 1"] {
            assert_eq!(
                kind(check_extension(&ext("code", by, Some("churn"), None))),
                Some(64),
                "{by}"
            );
        }
        assert_eq!(
            kind(check_extension(&ext("code", "1", None, None))),
            Some(64)
        );
        assert_eq!(
            kind(check_extension(&ext("code", "1", Some("Churn"), None))),
            Some(64)
        );
        assert_eq!(
            kind(check_extension(&ext("plan", "1", Some("churn"), None))),
            Some(64)
        );
        assert_eq!(
            kind(check_extension(&ext("plan-delta", "1", None, Some("why")))),
            Some(64)
        );
        // Refusals: a needed reason missing (blank counts as missing).
        assert_eq!(
            kind(check_extension(&ext("code", "2", Some("churn"), None))),
            Some(65)
        );
        assert_eq!(
            kind(check_extension(&ext(
                "code",
                "1",
                Some("other"),
                Some("  ")
            ))),
            Some(65)
        );
        // Accepted.
        let e = check_extension(&ext("code", "2", Some("recurring"), Some(" flaky "))).unwrap();
        assert_eq!(
            (e.by, e.cause.as_deref(), e.reason.as_deref()),
            (2, Some("recurring"), Some("flaky"))
        );
        let e = check_extension(&ext("plan", "3", None, Some(" "))).unwrap();
        assert_eq!((e.by, e.cause, e.reason), (3, None, None));
    }

    #[test]
    fn disposition_table() {
        assert!(disposition_rule("fixed").unwrap().0.contains(&"hardening"));
        assert!(!disposition_rule("duplicate").unwrap().0.contains(&"note"));
        assert_eq!(
            disposition_rule("answered").unwrap().0,
            &["requirement-question"]
        );
        assert_eq!(disposition_rule("accepted").unwrap().0, &["defect"]);
        assert!(disposition_rule("Fixed").is_none());
        assert!(disposition_rule("auto_deferred").is_none());
    }

    #[test]
    fn text_options_are_trimmed() {
        assert_eq!(text(&Some("  a b ".into())), Some("a b".into()));
        assert_eq!(text(&Some(" \t ".into())), None);
        assert_eq!(text(&None), None);
    }

    #[test]
    fn round_numbers_order_numerically() {
        assert!(round_number("code-10") > round_number("code-9"));
        assert_eq!(round_number("plan-delta-2"), 2);
    }
}
