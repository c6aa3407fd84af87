//! The records of a round (`review-round/v1`): `round.json`, `findings.json`, `ledger.jsonl`,
//! and where they live in git — the tree `rounds/<round>/…` of a commit on
//! `refs/spar/series/<series>`, plus the round's `summary.md` in `refs/notes/spar` on the head.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::ids::{RoundName, SeriesId};
use super::vocab::{
    Angle, Answer, CheckImpact, Class, Confidence, LinkKind, Stage, Status, Verdict, Word,
};
use crate::error::{Error, Result};
use crate::store::{self, refs, ObjectId, Store};

pub const ROUND_SCHEMA: &str = "review-round/v1";

/// A file versions before issue 33 wrote into every round's folder (a summary of the round for
/// the gate). Nothing reads it: a round that holds one is judged by its records alone, and a
/// `git spar sync` merge leaves it out of the rounds it writes.
pub const RETIRED_FACTS_FILE: &str = "gate-facts.json";

/// The ref of a series.
pub fn series_ref(series: &SeriesId) -> String {
    refs::Namespace::SparSeries.name(series)
}

/// One reviewer of a round, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewerRecord {
    pub name: String,
    pub preset: String,
    /// completed | failed | invalid_output | tool_violation | unavailable | pending
    pub status: Word<Status>,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub timeout_seconds: u64,
    #[serde(default)]
    pub model: Option<String>,
    /// The model the reviewer's output named (G12); null when unknown.
    #[serde(default)]
    pub observed_model: Option<String>,
    #[serde(default)]
    pub attempts: Vec<Value>,
    /// When the reviewer's quota resets, as its refusal said (§5); left out when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resets: Option<String>,
    /// A native reviewer's `prompt.md` (absolute), for the host's subagent; left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default)]
    pub verdict: Option<Word<Verdict>>,
    #[serde(default)]
    pub angles_checked: Vec<Value>,
    #[serde(default)]
    pub angles_unchecked: Vec<Value>,
    #[serde(default)]
    pub limits: Option<String>,
    /// Only in rounds with standpoints: `Some(Some(text))` for a reviewer given a standpoint,
    /// `Some(None)` (an explicit `null`) for one without. `None` leaves the key out, as in a
    /// round without standpoints and in older records (G32).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub standpoint: Option<Option<String>>,
    /// Only in rounds with standpoints: the reviewer's `standpoint_report` `{checked, detail}`,
    /// or `Some(Value::Null)` when it has none. `None` leaves the key out.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub standpoint_report: Option<Value>,
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub finished_at: Option<String>,
}

/// A key that is present, `null` included (`Some(null)`); an absent key is the field's
/// default (`None`) through `#[serde(default)]`.
fn present<'de, D, T>(d: D) -> std::result::Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// A classified finding (`findings.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// `<reviewer>-F<n>`.
    pub id: String,
    pub reviewer: String,
    /// The reviewer's own id for it.
    pub reviewer_id: String,
    pub proposed_class: Word<Class>,
    pub angle: Word<Angle>,
    pub location: String,
    pub path: String,
    #[serde(default)]
    pub lines: Option<(u64, u64)>,
    pub in_check_paths: bool,
    /// Old records without the field read as a readable location (G32).
    #[serde(default)]
    pub location_unreadable: bool,
    pub claim: String,
    pub failure_scenario: String,
    pub evidence: String,
    pub link_kind: Word<LinkKind>,
    pub link: String,
    #[serde(default)]
    pub claimed_link_kind: Word<LinkKind>,
    #[serde(default)]
    pub claimed_link: String,
    pub introduced_by_change: Word<Answer>,
    pub regression: Word<Answer>,
    pub check_impact: Word<CheckImpact>,
    pub confidence: Word<Confidence>,
    /// Empty: no direction (also for old records without it, G32).
    #[serde(default)]
    pub smallest_fix: String,
    pub class: Word<Class>,
    pub class_reason: String,
    #[serde(default)]
    pub auto_deferred: bool,
}

/// `round.json`.
///
/// `standpoints_uncovered` is written only in rounds with standpoints (see [`Round::serialize`]);
/// a record without the standpoint fields reads as a round without standpoints (G32).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Round {
    pub schema: String,
    pub series: String,
    pub round: String,
    pub stage: Word<Stage>,
    pub base: String,
    pub head: String,
    pub packet_sha256: String,
    pub config: Value,
    pub reviewers: Vec<ReviewerRecord>,
    /// The user's decisions `[{decision, quote}]` in command-line order (G35).
    #[serde(default)]
    pub decisions: Vec<Value>,
    /// `[{reviewer, text}]` in command-line order; empty in a round without standpoints.
    #[serde(default)]
    pub standpoints: Vec<Value>,
    /// The reviewers of standpoints that no completed reviewer covered (waived ones included).
    #[serde(default)]
    pub standpoints_uncovered: Vec<String>,
    #[serde(default)]
    pub links: Value,
    #[serde(default)]
    pub documents: Value,
    pub started_at: String,
    #[serde(default)]
    pub finished_at: Option<String>,
    #[serde(default)]
    pub dry_run: bool,
    #[serde(default)]
    pub warnings: Vec<String>,
}

impl Round {
    /// Whether the round was given standpoints.
    pub fn has_standpoints(&self) -> bool {
        !self.standpoints.is_empty()
    }

    /// Whether no reviewer of this (real, not dry) run could run at all: every one is
    /// `unavailable` (no executable, a login or quota refusal). Such a round reviewed nothing,
    /// so it is never counted against a cap and `git spar run` exits 4.
    pub fn no_reviewer_could_run(&self) -> bool {
        !self.dry_run
            && !self.reviewers.is_empty()
            && self
                .reviewers
                .iter()
                .all(|r| r.status == Status::Unavailable)
    }
}

/// What `round.json` holds, borrowed from a [`Round`]: the same keys in the same order, with
/// `standpoints_uncovered` left out of a round without standpoints.
#[derive(Serialize)]
struct RoundOut<'a> {
    schema: &'a str,
    series: &'a str,
    round: &'a str,
    stage: &'a str,
    base: &'a str,
    head: &'a str,
    packet_sha256: &'a str,
    config: &'a Value,
    reviewers: &'a [ReviewerRecord],
    decisions: &'a [Value],
    standpoints: &'a [Value],
    #[serde(skip_serializing_if = "Option::is_none")]
    standpoints_uncovered: Option<&'a [String]>,
    links: &'a Value,
    documents: &'a Value,
    started_at: &'a str,
    finished_at: &'a Option<String>,
    dry_run: bool,
    warnings: &'a [String],
}

impl Serialize for Round {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        RoundOut {
            schema: &self.schema,
            series: &self.series,
            round: &self.round,
            stage: self.stage.as_str(),
            base: &self.base,
            head: &self.head,
            packet_sha256: &self.packet_sha256,
            config: &self.config,
            reviewers: &self.reviewers,
            decisions: &self.decisions,
            standpoints: &self.standpoints,
            standpoints_uncovered: self
                .has_standpoints()
                .then_some(self.standpoints_uncovered.as_slice()),
            links: &self.links,
            documents: &self.documents,
            started_at: &self.started_at,
            finished_at: &self.finished_at,
            dry_run: self.dry_run,
            warnings: &self.warnings,
        }
        .serialize(serializer)
    }
}

/// The newest commit of a series and its rounds' names in order.
pub fn series_tip(store: &Store, series: &SeriesId) -> Result<Option<ObjectId>> {
    store.ref_target(&series_ref(series))
}

/// The names of the rounds recorded in a series (in the order they were first written).
pub fn round_names(store: &Store, series: &SeriesId) -> Result<Vec<RoundName>> {
    let Some(tip) = series_tip(store, series)? else {
        return Ok(Vec::new());
    };
    let mut names: Vec<String> = Vec::new();
    // A set beside the list: a series of thousands of rounds is not searched once per round.
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for info in store.chain(tip)? {
        if let Some(r) = info.trailer("Spar-Round") {
            if seen.insert(r.clone()) {
                names.push(r);
            }
        }
    }
    // Rounds another clone wrote arrive through a merge commit of `git spar sync`, off the
    // first-parent chain: the tip's tree lists them (after the others, by name).
    let mut merged: Vec<String> = store
        .list_dir(tip, "rounds")?
        .into_iter()
        .filter(|r| !seen.contains(r))
        .collect();
    merged.sort();
    names.extend(merged);
    Ok(names.iter().map(|n| RoundName::named(n)).collect())
}

/// A recorded file of a round, or None.
pub fn round_file(
    store: &Store,
    series: &SeriesId,
    round: &RoundName,
    file: &str,
) -> Result<Option<Vec<u8>>> {
    let Some(tip) = series_tip(store, series)? else {
        return Ok(None);
    };
    store.read_file(tip, &format!("rounds/{round}/{file}"))
}

/// Reads a round's `round.json` (refused when it cannot be read, G32).
pub fn load_round(store: &Store, series: &SeriesId, round: &RoundName) -> Result<Round> {
    let bytes = round_file(store, series, round, "round.json")?
        .ok_or_else(|| not_recorded(series, round))?;
    parse_round(series, round, &bytes)
}

/// The refusal for a round that has no `round.json`.
pub fn not_recorded(series: &str, round: &str) -> Error {
    Error::refused(format!("{series}: round {round} is not recorded"))
        .hint(format!("see `git spar show {series}`"))
}

/// A round's `round.json` from its bytes (refused when it is not `review-round/v1`).
pub fn parse_round(series: &str, round: &str, bytes: &[u8]) -> Result<Round> {
    let r: Round = serde_json::from_slice(bytes).map_err(|e| {
        Error::refused(format!(
            "{series}: round {round}: round.json cannot be read as {ROUND_SCHEMA}: {e}"
        ))
    })?;
    if r.schema != ROUND_SCHEMA {
        return Err(Error::refused(format!(
            "{series}: round {round}: round.json is {:?}, not {ROUND_SCHEMA}",
            r.schema
        )));
    }
    Ok(r)
}

/// Reads a round's `findings.json` (an absent file is no findings).
pub fn load_findings(store: &Store, series: &SeriesId, round: &RoundName) -> Result<Vec<Finding>> {
    match round_file(store, series, round, "findings.json")? {
        None => Ok(Vec::new()),
        Some(bytes) => parse_findings(series, round, &bytes),
    }
}

/// A round's `findings.json` from its bytes.
pub fn parse_findings(series: &str, round: &str, bytes: &[u8]) -> Result<Vec<Finding>> {
    serde_json::from_slice(bytes).map_err(|e| {
        Error::refused(format!(
            "{series}: round {round}: findings.json cannot be read: {e}"
        ))
    })
}

/// Takes the series lock (G33) that every write of a series holds from its checks to its commit,
/// telling the user (`say`) when another write holds it.
pub fn lock_series(
    store: &Store,
    series: &SeriesId,
    say: &mut dyn FnMut(&str),
) -> Result<store::Lock> {
    store.lock(&store::LockName::series(series), || {
        say(&format!(
            "spar: waiting for another write of {series} to finish"
        ))
    })
}

/// Every series of the repository with its round names (`git spar list`).
pub fn series_rounds(store: &Store) -> Result<Vec<(SeriesId, Vec<RoundName>)>> {
    let mut rows = Vec::new();
    for (name, _) in store.refs_under(refs::SPAR_SERIES)? {
        let name = SeriesId::recorded(&name);
        let rounds = round_names(store, &name)?;
        rows.push((name, rounds));
    }
    Ok(rows)
}

/// Writes files under `rounds/<round>/` as one commit on the series ref (compare-and-swap from
/// `expected`). Returns None when another writer moved the ref first.
pub fn write_round(
    store: &Store,
    series: &SeriesId,
    round: &RoundName,
    expected: Option<ObjectId>,
    files: Vec<(String, Vec<u8>)>,
    subject: &str,
    trailers: &[(&str, String)],
) -> Result<Option<ObjectId>> {
    write_round_as(
        store, series, round, expected, files, subject, trailers, false,
    )
}

/// [`write_round`], the commit signed as `git commit -S` signs one when `signed` (a person's
/// decision: `spar::series::decisions` reads who signed it).
#[allow(clippy::too_many_arguments)]
pub fn write_round_as(
    store: &Store,
    series: &SeriesId,
    round: &RoundName,
    expected: Option<ObjectId>,
    files: Vec<(String, Vec<u8>)>,
    subject: &str,
    trailers: &[(&str, String)],
    signed: bool,
) -> Result<Option<ObjectId>> {
    let files: Vec<(String, Vec<u8>)> = files
        .into_iter()
        .map(|(name, bytes)| (format!("rounds/{round}/{name}"), bytes))
        .collect();
    let mut all = vec![
        ("Spar-Series", series.to_string()),
        ("Spar-Round", round.to_string()),
    ];
    all.extend(trailers.iter().cloned());
    let msg = store::message(subject, "", &all);
    if signed {
        store.append_commit_signed(&series_ref(series), expected, &files, &msg)
    } else {
        store.append_commit(&series_ref(series), expected, &files, &msg)
    }
}

/// What makes two `round.json` the same round: the fields it gets when the round starts and
/// that never change afterwards (a `git spar record` updates reviewers, a sync may rename it).
fn round_identity(round: &Value) -> Value {
    let keep: serde_json::Map<String, Value> = ["series", "stage", "started_at", "base", "head"]
        .iter()
        .filter_map(|k| round.get(*k).map(|x| (k.to_string(), x.clone())))
        .collect();
    Value::Object(keep)
}

/// The part of a completed reviewer's record that is its result.
fn result_of(reviewer: &Value) -> Value {
    let keep: serde_json::Map<String, Value> = [
        "status",
        "verdict",
        "angles_checked",
        "angles_unchecked",
        "limits",
        "standpoint_report",
        "finished_at",
    ]
    .iter()
    .filter_map(|k| reviewer.get(*k).map(|x| (k.to_string(), x.clone())))
    .collect();
    Value::Object(keep)
}

/// One round as a commit of the series holds it: `round.json`, and `findings.json` read when
/// asked.
struct RoundAt {
    round: Value,
    tree: ObjectId,
    name: String,
}

impl RoundAt {
    fn findings(&self, store: &Store) -> Result<Vec<Value>> {
        Ok(store
            .read_file_in_tree(self.tree, &format!("rounds/{}/findings.json", self.name))?
            .and_then(|b| serde_json::from_slice::<Vec<Value>>(&b).ok())
            .unwrap_or_default())
    }
}

fn round_at(store: &Store, tree: ObjectId, name: &str) -> Result<Option<RoundAt>> {
    let Some(bytes) = store.read_file_in_tree(tree, &format!("rounds/{name}/round.json"))? else {
        return Ok(None);
    };
    let Ok(round) = serde_json::from_slice::<Value>(&bytes) else {
        return Ok(None);
    };
    Ok(Some(RoundAt {
        round,
        tree,
        name: name.to_string(),
    }))
}

fn findings_of(findings: &[Value], reviewer: &str) -> Vec<Value> {
    let mut out: Vec<Value> = findings
        .iter()
        .filter(|f| f.get("reviewer").and_then(Value::as_str) == Some(reviewer))
        .cloned()
        .collect();
    out.sort_by_key(|f| f.get("id").and_then(Value::as_str).map(str::to_string));
    out
}

/// Every place in a series' history where a commit replaces or drops the result of a reviewer
/// that had completed, one line each (empty: the history only ever added). A completed result
/// is final: `git spar record` refuses to write over one, and this is how the gate and the
/// server's pre-receive catch a commit written with plain git that does.
///
/// Each commit is compared with each of its parents ([`replaced_in`]), so the cost grows with
/// the writes, not with rounds × commits.
pub fn replaced_results(store: &Store, series: &SeriesId, tip: ObjectId) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for info in store.reachable(&[tip])? {
        replaced_in(store, series, &info, &mut out)?;
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// [`replaced_results`] for one commit against each of its parents, only in the rounds whose
/// folder changed between them; a round whose `round.json` and `findings.json` are the same
/// blobs in both kept its results and is not read.
pub fn replaced_in(
    store: &Store,
    series: &str,
    info: &store::CommitInfo,
    out: &mut Vec<String>,
) -> Result<()> {
    for parent in &info.parents {
        let ptree = store.tree_of(*parent)?;
        let touched = store.changed_entries(
            store.folder_at(ptree, "rounds")?,
            store.folder_at(info.tree, "rounds")?,
        )?;
        for entry in touched {
            // A round the parent did not have replaces nothing (the common case: a new round,
            // decided without reading the parent's other rounds).
            if entry.before.is_none() {
                continue;
            }
            let name = entry.name;
            let same_blobs = |file: &str| -> Result<bool> {
                let path = format!("rounds/{name}/{file}");
                Ok(store.file_at(ptree, &path)? == store.file_at(info.tree, &path)?)
            };
            if same_blobs("round.json")? && same_blobs("findings.json")? {
                continue;
            }
            let Some(before) = round_at(store, ptree, &name)? else {
                continue;
            };
            let completed: Vec<&Value> = before.round["reviewers"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter(|r| r["status"].as_str() == Some(Status::Completed.as_str()))
                        .collect()
                })
                .unwrap_or_default();
            if completed.is_empty() {
                continue;
            }
            let id = round_identity(&before.round);
            // The same round in the commit: under its name, or renamed by a sync merge.
            let mut after =
                round_at(store, info.tree, &name)?.filter(|a| round_identity(&a.round) == id);
            if after.is_none() {
                for other in store.list_dir(info.id, "rounds")? {
                    if let Some(a) = round_at(store, info.tree, &other)? {
                        if round_identity(&a.round) == id {
                            after = Some(a);
                            break;
                        }
                    }
                }
            }
            let short = &info.id.to_string()[..12];
            let Some(after) = after else {
                out.push(format!(
                    "{series}: commit {short} removes round {name}, whose reviewer {} had completed",
                    completed[0]["name"].as_str().unwrap_or("?")
                ));
                continue;
            };
            let (before_findings, after_findings) =
                (before.findings(store)?, after.findings(store)?);
            for rev in completed {
                let rname = rev["name"].as_str().unwrap_or("");
                let now = after.round["reviewers"]
                    .as_array()
                    .and_then(|a| a.iter().find(|r| r["name"].as_str() == Some(rname)));
                let same = now.is_some_and(|n| result_of(n) == result_of(rev))
                    && findings_of(&after_findings, rname) == findings_of(&before_findings, rname);
                if !same {
                    out.push(format!(
                        "{series}: commit {short} replaces the completed result of {rname} in round {name}; a completed result is never rewritten"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// JSON lines (`ledger.jsonl`, `waivers.jsonl`).
pub fn jsonl(items: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for i in items {
        if let Ok(line) = serde_json::to_string(i) {
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
    }
    out
}

/// Pretty JSON with a final newline.
pub fn pretty(v: &impl Serialize) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).unwrap_or_default();
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn old_round() -> Value {
        json!({
            "schema": ROUND_SCHEMA,
            "series": "s",
            "round": "code-1",
            "stage": "code",
            "base": "b",
            "head": "h",
            "packet_sha256": "p",
            "config": {},
            "reviewers": [{"name": "a", "preset": "command", "status": "completed"}],
            "started_at": "t",
        })
    }

    /// A record written before standpoints reads as a round without them (G32), and is written
    /// back without any standpoint key but `standpoints: []`.
    #[test]
    fn older_records_read_as_rounds_without_standpoints() {
        let round: Round = serde_json::from_value(old_round()).expect("old round.json");
        assert!(!round.has_standpoints());
        assert!(round.decisions.is_empty());
        assert_eq!(round.reviewers[0].standpoint, None);
        assert_eq!(round.reviewers[0].standpoint_report, None);
        let back = serde_json::to_value(&round).expect("serializes");
        assert_eq!(back["standpoints"], json!([]));
        assert!(back.get("standpoints_uncovered").is_none());
        assert!(back["reviewers"][0].get("standpoint").is_none());
        assert!(back["reviewers"][0].get("standpoint_report").is_none());
    }

    /// In a round with standpoints an explicit null survives a read and a write.
    #[test]
    fn explicit_nulls_survive_a_round_trip() {
        let mut v = old_round();
        v["standpoints"] = json!([{"reviewer": "b", "text": "x"}]);
        v["standpoints_uncovered"] = json!(["b"]);
        v["reviewers"][0]["standpoint"] = Value::Null;
        v["reviewers"][0]["standpoint_report"] = Value::Null;
        let round: Round = serde_json::from_value(v).expect("round.json");
        assert_eq!(round.reviewers[0].standpoint, Some(None));
        assert_eq!(round.reviewers[0].standpoint_report, Some(Value::Null));
        let back = serde_json::to_value(&round).expect("serializes");
        assert_eq!(back["standpoints_uncovered"], json!(["b"]));
        assert!(back["reviewers"][0]["standpoint"].is_null());
        assert!(back["reviewers"][0].get("standpoint").is_some());
        assert!(back["reviewers"][0].get("standpoint_report").is_some());
    }

    /// A hand-made finding with words outside their sets is read (its unknown class never
    /// blocks) and written back byte for byte, as are the known words of a written one.
    #[test]
    fn findings_keep_their_words_byte_for_byte() {
        let finding = |class: &str, angle: &str, kind: &str| {
            json!([{
                "id": "a-F1", "reviewer": "a", "reviewer_id": "F1",
                "proposed_class": class, "angle": angle, "location": "x.rs:1", "path": "x.rs",
                "lines": [1, 1], "in_check_paths": false, "location_unreadable": false,
                "claim": "c", "failure_scenario": "f", "evidence": "e",
                "link_kind": kind, "link": "", "claimed_link_kind": kind, "claimed_link": "",
                "introduced_by_change": "maybe", "regression": "no", "check_impact": "none",
                "confidence": "sure", "smallest_fix": "", "class": class, "class_reason": "r",
                "auto_deferred": false
            }])
        };
        for (class, angle, kind, blocks) in [
            ("defect", "correctness", "rule", true),
            ("Defect", "style", "ticket", false),
        ] {
            let bytes = pretty(&finding(class, angle, kind));
            let read = parse_findings("s", "code-1", &bytes).expect("findings.json");
            assert_eq!(read[0].class.blocks(), blocks);
            assert_eq!(read[0].class.as_str(), class);
            assert_eq!(read[0].angle == Angle::Correctness, blocks);
            assert_eq!(pretty(&read), bytes);
        }
        let mut v = old_round();
        v["stage"] = json!("review");
        v["reviewers"][0]["status"] = json!("gone");
        v["reviewers"][0]["verdict"] = json!("fine");
        let bytes = pretty(&v);
        let round: Round = serde_json::from_slice(&bytes).expect("round.json");
        assert!(round.reviewers[0].status != Status::Completed);
        assert_eq!(round.stage.as_str(), "review");
        let back = serde_json::to_value(&round).expect("serializes");
        assert_eq!(back["stage"], "review");
        assert_eq!(back["reviewers"][0]["status"], "gone");
        assert_eq!(back["reviewers"][0]["verdict"], "fine");
    }
}
