//! A reviewer's result (seed rows G1–G6 and "관점 보고와 기록"), and the JSON Schema reviewers get
//! as `schema.json`.
//!
//! [`check_result`] reads the text a reviewer returned and either keeps it as a typed
//! [`ReviewerResult`] or refuses it with [`InvalidOutput`], whose reason names the key (with its
//! path, e.g. `findings[2].check_impact`). Nothing out of form is read as another value: a
//! duplicated key, a value of the wrong type, an enumeration value in another spelling are all
//! refused. What the rows accept is kept exactly as given (duplicate angles, an angle in both
//! lists, empty strings where allowed, a missing `smallest_fix`).
//!
//! [`schema_json`] describes the same form to the reviewer CLIs. It is strict (every object closed,
//! every key required) and uses only keywords both CLIs take, so it is a little looser than
//! [`check_result`] in places (see [`schema_json`]); the check is what decides.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::vocab::{Angle, Answer, CheckImpact, Class, LinkKind, ParseValueError};
pub use super::vocab::{Confidence, Verdict};

mod schema;
mod strict;

pub use self::schema::*;
use self::strict::*;

/// The keys of a result (G1), in the order they are checked and described.
const RESULT_KEYS: [&str; 6] = [
    "reviewed_head",
    "verdict",
    "angles_checked",
    "angles_unchecked",
    "findings",
    "limits",
];

/// The key a result has in rounds with standpoints ("관점 보고와 기록").
const STANDPOINT_REPORT: &str = "standpoint_report";

/// The keys of a standpoint report.
const STANDPOINT_REPORT_KEYS: [&str; 2] = ["checked", "detail"];

/// The keys every finding has (G5), in the order they are checked and described.
const FINDING_KEYS: [&str; 13] = [
    "id",
    "proposed_class",
    "angle",
    "location",
    "claim",
    "failure_scenario",
    "evidence",
    "link_kind",
    "link",
    "introduced_by_change",
    "regression",
    "check_impact",
    "confidence",
];

/// The one optional key of a finding (G5).
const SMALLEST_FIX: &str = "smallest_fix";

/// The shortest `reviewed_head` accepted (G2).
const MIN_HEAD_CHARS: usize = 7;

/// What a result is checked against.
#[derive(Debug, Clone, Copy)]
pub struct ResultContext<'a> {
    /// The full hex id of the packet's head commit (G2).
    pub head: &'a str,
    /// The angles the round requested (G22): each must appear in one of the two angle lists (G4).
    pub requested_angles: &'a [Angle],
    /// Whether the round has standpoints: only then may a result carry `standpoint_report`.
    pub round_has_standpoints: bool,
    /// The standpoint this reviewer was given, if any: then `standpoint_report` is required.
    /// A given standpoint implies a round with standpoints, whatever `round_has_standpoints` says.
    pub reviewer_standpoint: Option<&'a str>,
}

/// A result out of form: the reviewer's status is `invalid_output` and the result is not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidOutput {
    /// Why, naming the key (e.g. `missing key reviewed_head`).
    pub reason: String,
}

impl fmt::Display for InvalidOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for InvalidOutput {}

/// A finding as the reviewer gave it (G5), before its location and link are read (G7–G9).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RawFinding {
    /// The reviewer's own id: kept only as `reviewer_id`; spar numbers findings `<reviewer>-F<n>`.
    pub id: String,
    pub proposed_class: Class,
    /// Any string (G5 enumerates only the "review round §3" values).
    pub angle: String,
    /// Read later by the G7 grammar; an unreadable location never refuses the result.
    pub location: String,
    pub claim: String,
    /// Never empty or whitespace only.
    pub failure_scenario: String,
    pub evidence: String,
    pub link_kind: LinkKind,
    /// Read later by G8/G9.
    pub link: String,
    pub introduced_by_change: Answer,
    pub regression: Answer,
    pub check_impact: CheckImpact,
    pub confidence: Confidence,
    /// `None` when the key was missing; recorded only when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smallest_fix: Option<String>,
}

impl RawFinding {
    /// The fix direction: `None` both for a missing `smallest_fix` and for an empty one (G5).
    pub fn fix_direction(&self) -> Option<&str> {
        self.smallest_fix.as_deref().filter(|fix| !fix.is_empty())
    }
}

/// `standpoint_report` of a reviewer that was given a standpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StandpointReport {
    /// `true`: `detail` says what was checked; `false`: why it could not be. A well-formed
    /// `false` report explains a limit and does not by itself keep the reviewer from `completed`.
    pub checked: bool,
    /// Never empty or whitespace only.
    pub detail: String,
}

/// A result in form, as given, with the enumerations typed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReviewerResult {
    /// A prefix of at least 7 characters of the head commit id.
    pub reviewed_head: String,
    pub verdict: Verdict,
    /// `(angle, result)` pairs in the given order, duplicates included; recorded as
    /// `[{"angle", "result"}]`.
    #[serde(serialize_with = "serialize_checked")]
    pub angles_checked: Vec<(String, String)>,
    /// `(angle, reason)` pairs in the given order, duplicates included; recorded as
    /// `[{"angle", "reason"}]`.
    #[serde(serialize_with = "serialize_unchecked")]
    pub angles_unchecked: Vec<(String, String)>,
    pub findings: Vec<RawFinding>,
    /// Any string, empty included.
    pub limits: String,
    /// The report of a reviewer that was given a standpoint; `None` for every other reviewer
    /// (whatever it sent: that is not checked). Left out of the serialized result when `None`, so
    /// a round without standpoints records nothing new; the round record writes the `null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standpoint_report: Option<StandpointReport>,
}

impl ReviewerResult {
    /// Whether the verdict is `could_not_review`: valid output, but the reviewer is recorded as
    /// `failed` (G3).
    pub fn could_not_review(&self) -> bool {
        self.verdict == Verdict::CouldNotReview
    }
}

/// One `{angle, <second>}` item of an angle list, for recording.
struct AngleItem<'a> {
    angle: &'a str,
    second: &'static str,
    value: &'a str,
}

impl Serialize for AngleItem<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("angle", self.angle)?;
        map.serialize_entry(self.second, self.value)?;
        map.end()
    }
}

fn serialize_angle_items<S: Serializer>(
    items: &[(String, String)],
    second: &'static str,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(items.iter().map(|(angle, value)| AngleItem {
        angle,
        second,
        value,
    }))
}

fn serialize_checked<S: Serializer>(
    items: &[(String, String)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serialize_angle_items(items, "result", serializer)
}

fn serialize_unchecked<S: Serializer>(
    items: &[(String, String)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serialize_angle_items(items, "reason", serializer)
}

/// Checks a reviewer's result against G1–G6 and the standpoint rules.
///
/// The text must be exactly one JSON object (surrounding whitespace aside) without duplicated
/// keys. Problems are reported one at a time, the first found: keys of the object (unknown keys in
/// document order, then missing keys in G1 order), then each key in G1 order, depth first, then
/// the requested angles in their order.
pub fn check_result(json_text: &str, ctx: &ResultContext) -> Result<ReviewerResult, InvalidOutput> {
    let value = parse_strict(json_text)?;
    let Value::Object(root) = &value else {
        return Err(invalid(format!(
            "the result is not a JSON object (got {})",
            kind(&value)
        )));
    };
    let with_standpoints = ctx.round_has_standpoints || ctx.reviewer_standpoint.is_some();
    let optional: &[&str] = if with_standpoints {
        &[STANDPOINT_REPORT]
    } else {
        &[]
    };
    check_keys(root, "", &RESULT_KEYS, optional)?;

    let reviewed_head = reviewed_head(get(root, "", "reviewed_head")?, ctx.head)?;
    let verdict = enumerated(get(root, "", "verdict")?, "verdict")?;
    let angles_checked = angle_items(get(root, "", "angles_checked")?, "angles_checked", "result")?;
    let angles_unchecked = angle_items(
        get(root, "", "angles_unchecked")?,
        "angles_unchecked",
        "reason",
    )?;
    let findings = findings(get(root, "", "findings")?)?;
    let limits = string(get(root, "", "limits")?, "limits")?.to_string();
    let standpoint_report = match ctx.reviewer_standpoint {
        Some(_) => Some(standpoint_report(root.get(STANDPOINT_REPORT))?),
        None => None,
    };

    for angle in ctx.requested_angles {
        let name = angle.as_str();
        let present = angles_checked
            .iter()
            .chain(&angles_unchecked)
            .any(|(given, _)| given == name);
        if !present {
            return Err(invalid(format!(
                "requested angle {name:?} is in neither angles_checked nor angles_unchecked"
            )));
        }
    }

    Ok(ReviewerResult {
        reviewed_head,
        verdict,
        angles_checked,
        angles_unchecked,
        findings,
        limits,
        standpoint_report,
    })
}

/// G2: at least 7 characters, and a literal (case-sensitive) prefix of the head id.
fn reviewed_head(value: &Value, head: &str) -> Result<String, InvalidOutput> {
    let given = string(value, "reviewed_head")?;
    if given.chars().count() < MIN_HEAD_CHARS {
        return Err(invalid(format!(
            "reviewed_head {given:?} is shorter than {MIN_HEAD_CHARS} characters"
        )));
    }
    if !head.starts_with(given) {
        return Err(invalid(format!(
            "reviewed_head {given:?} is not a prefix of the head commit {head}"
        )));
    }
    Ok(given.to_string())
}

/// G4: a list of `{angle, <second>}` objects with string values and a known angle.
fn angle_items(
    value: &Value,
    path: &str,
    second: &str,
) -> Result<Vec<(String, String)>, InvalidOutput> {
    let items = array(value, path)?;
    let mut pairs = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let item_path = format!("{path}[{i}]");
        let map = object(item, &item_path)?;
        check_keys(map, &item_path, &["angle", second], &[])?;
        let angle_path = format!("{item_path}.angle");
        let angle = string(get(map, &item_path, "angle")?, &angle_path)?;
        if Angle::parse(angle).is_none() {
            return Err(invalid(format!("{angle_path}: {angle:?} is not an angle")));
        }
        let text = string(
            get(map, &item_path, second)?,
            &format!("{item_path}.{second}"),
        )?;
        pairs.push((angle.to_string(), text.to_string()));
    }
    Ok(pairs)
}

/// G5: a list of findings.
fn findings(value: &Value) -> Result<Vec<RawFinding>, InvalidOutput> {
    let items = array(value, "findings")?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| finding(item, &format!("findings[{i}]")))
        .collect()
}

/// G5: one finding: exactly the thirteen keys plus an optional `smallest_fix`, all strings.
fn finding(value: &Value, path: &str) -> Result<RawFinding, InvalidOutput> {
    let map = object(value, path)?;
    check_keys(map, path, &FINDING_KEYS, &[SMALLEST_FIX])?;
    let text = |key: &str| -> Result<String, InvalidOutput> {
        Ok(string(get(map, path, key)?, &format!("{path}.{key}"))?.to_string())
    };
    let value_of = |key: &str| get(map, path, key);
    let key_path = |key: &str| format!("{path}.{key}");

    let id = text("id")?;
    let proposed_class = enumerated(value_of("proposed_class")?, &key_path("proposed_class"))?;
    let angle = text("angle")?;
    let location = text("location")?;
    let claim = text("claim")?;
    let failure_scenario = text("failure_scenario")?;
    if failure_scenario.trim().is_empty() {
        return Err(invalid(format!(
            "{}: empty or only whitespace",
            key_path("failure_scenario")
        )));
    }
    let evidence = text("evidence")?;
    let link_kind = enumerated(value_of("link_kind")?, &key_path("link_kind"))?;
    let link = text("link")?;
    let introduced_by_change = enumerated(
        value_of("introduced_by_change")?,
        &key_path("introduced_by_change"),
    )?;
    let regression = enumerated(value_of("regression")?, &key_path("regression"))?;
    let check_impact = enumerated(value_of("check_impact")?, &key_path("check_impact"))?;
    let confidence = enumerated(value_of("confidence")?, &key_path("confidence"))?;
    let smallest_fix = match map.get(SMALLEST_FIX) {
        None => None,
        Some(fix) => Some(string(fix, &key_path(SMALLEST_FIX))?.to_string()),
    };
    Ok(RawFinding {
        id,
        proposed_class,
        angle,
        location,
        claim,
        failure_scenario,
        evidence,
        link_kind,
        link,
        introduced_by_change,
        regression,
        check_impact,
        confidence,
        smallest_fix,
    })
}

/// The report of a reviewer that was given a standpoint: present, not null,
/// `{checked: bool, detail: non-blank string}`.
fn standpoint_report(value: Option<&Value>) -> Result<StandpointReport, InvalidOutput> {
    const WHY: &str = "this reviewer was given a standpoint";
    let value = match value {
        None => return Err(invalid(format!("missing key {STANDPOINT_REPORT} ({WHY})"))),
        Some(Value::Null) => {
            return Err(invalid(format!("{STANDPOINT_REPORT} is null ({WHY})")));
        }
        Some(value) => value,
    };
    let map = object(value, STANDPOINT_REPORT)?;
    check_keys(map, STANDPOINT_REPORT, &STANDPOINT_REPORT_KEYS, &[])?;
    let checked_path = format!("{STANDPOINT_REPORT}.checked");
    let checked = match get(map, STANDPOINT_REPORT, "checked")? {
        Value::Bool(checked) => *checked,
        other => return Err(wrong_type(&checked_path, "a boolean", other)),
    };
    let detail_path = format!("{STANDPOINT_REPORT}.detail");
    let detail = string(get(map, STANDPOINT_REPORT, "detail")?, &detail_path)?;
    if detail.trim().is_empty() {
        return Err(invalid(format!("{detail_path}: empty or only whitespace")));
    }
    Ok(StandpointReport {
        checked,
        detail: detail.to_string(),
    })
}

fn invalid(reason: String) -> InvalidOutput {
    InvalidOutput { reason }
}

/// ` in <path>` for a nested object, nothing for the result itself.
fn within(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!(" in {path}")
    }
}

/// Unknown keys (in document order) first, then missing required keys (in the given order).
fn check_keys(
    map: &Map<String, Value>,
    path: &str,
    required: &[&str],
    optional: &[&str],
) -> Result<(), InvalidOutput> {
    if let Some(unknown) = map
        .keys()
        .find(|key| !required.contains(&key.as_str()) && !optional.contains(&key.as_str()))
    {
        return Err(invalid(format!("unknown key {unknown:?}{}", within(path))));
    }
    match required.iter().find(|key| !map.contains_key(**key)) {
        Some(missing) => Err(invalid(format!("missing key {missing}{}", within(path)))),
        None => Ok(()),
    }
}

/// The value of a key that [`check_keys`] already required.
fn get<'v>(map: &'v Map<String, Value>, path: &str, key: &str) -> Result<&'v Value, InvalidOutput> {
    map.get(key)
        .ok_or_else(|| invalid(format!("missing key {key}{}", within(path))))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn wrong_type(path: &str, expected: &str, value: &Value) -> InvalidOutput {
    invalid(format!("{path}: expected {expected}, got {}", kind(value)))
}

fn string<'v>(value: &'v Value, path: &str) -> Result<&'v str, InvalidOutput> {
    value
        .as_str()
        .ok_or_else(|| wrong_type(path, "a string", value))
}

fn array<'v>(value: &'v Value, path: &str) -> Result<&'v Vec<Value>, InvalidOutput> {
    value
        .as_array()
        .ok_or_else(|| wrong_type(path, "an array", value))
}

fn object<'v>(value: &'v Value, path: &str) -> Result<&'v Map<String, Value>, InvalidOutput> {
    value
        .as_object()
        .ok_or_else(|| wrong_type(path, "an object", value))
}

/// A string that must be one of an enumeration's exact spellings.
fn enumerated<T>(value: &Value, path: &str) -> Result<T, InvalidOutput>
where
    T: FromStr<Err = ParseValueError>,
{
    string(value, path)?
        .parse()
        .map_err(|err: ParseValueError| {
            invalid(format!(
                "{path}: {:?} is not one of {}",
                err.value,
                err.expected.join(", ")
            ))
        })
}

#[cfg(test)]
mod tests;
