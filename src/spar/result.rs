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

use super::classify::{Answer, CheckImpact, Class, ParseValueError};
use super::config::Angle;
use super::location::LinkKind;

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

/// `verdict` (G3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Nothing the reviewer found blocks.
    NoBlockingFindings,
    /// Something the reviewer found blocks.
    BlockingFindings,
    /// Valid output, but the reviewer is recorded as `failed`.
    CouldNotReview,
}

impl Verdict {
    /// Every value, in the documented order.
    pub const ALL: [Verdict; 3] = [
        Verdict::NoBlockingFindings,
        Verdict::BlockingFindings,
        Verdict::CouldNotReview,
    ];

    /// The value as reviewers and records spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::NoBlockingFindings => "no_blocking_findings",
            Verdict::BlockingFindings => "blocking_findings",
            Verdict::CouldNotReview => "could_not_review",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Verdict {
    type Err = ParseValueError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Verdict::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| {
                ParseValueError::new(
                    "verdict",
                    s,
                    &[
                        "no_blocking_findings",
                        "blocking_findings",
                        "could_not_review",
                    ],
                )
            })
    }
}

/// `confidence` of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    High,
    Medium,
    Low,
}

impl Confidence {
    /// Every value, in the documented order.
    pub const ALL: [Confidence; 3] = [Confidence::High, Confidence::Medium, Confidence::Low];

    /// The value as reviewers and records spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        }
    }
}

impl fmt::Display for Confidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Confidence {
    type Err = ParseValueError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Confidence::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| ParseValueError::new("confidence", s, &["high", "medium", "low"]))
    }
}

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

/// Parses exactly one JSON value, refusing duplicated keys at any depth (serde_json alone keeps
/// the last one silently, which would read the result as another value).
fn parse_strict(text: &str) -> Result<Value, InvalidOutput> {
    let not_one = |err: serde_json::Error| {
        invalid(format!("the result is not exactly one JSON object: {err}"))
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = StrictValue {
        path: String::new(),
    }
    .deserialize(&mut deserializer)
    .map_err(not_one)?;
    deserializer.end().map_err(not_one)?;
    Ok(value)
}

/// A [`Value`] seed that knows where it is, to name a duplicated key with its path.
struct StrictValue {
    path: String,
}

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        // JSON text never holds NaN or infinities; `from` maps them to null anyway.
        Ok(Value::from(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(StrictValue {
            path: format!("{}[{}]", self.path, items.len()),
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "duplicate key {key:?}{}",
                    within(&self.path)
                )));
            }
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            let value = access.next_value_seed(StrictValue { path })?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

/// The JSON Schema (draft 2020-12) of a result, written as the round's `schema.json` and given to
/// Claude Code's `--json-schema` and Codex's `--output-schema`.
///
/// Built deterministically from its arguments (key order is insertion order), so a round without
/// standpoints gets byte for byte the schema of a round that never heard of them; with standpoints
/// the only difference is `standpoint_report` (type `["object","null"]`, exactly `checked` and
/// `detail`), added last to `properties` and to `required` as the seed asks. The requested angles
/// appear only in the top-level description; the angle enumerations list all five, as G4 accepts
/// any of them.
///
/// What the reviewer CLIs ask of it (`shared/research/reviewer-cli-formats.md`,
/// `shared/research/real-cli-runs.md`, and the CLIs' issue trackers):
///
/// - Codex sends `--output-schema` as OpenAI `text.format = {type: "json_schema", strict: true}`:
///   every object needs `additionalProperties: false` and every property in `required`, or the
///   request fails with `invalid_json_schema`. So `smallest_fix` is **required here** (a string,
///   empty for "no direction"), although G5 lets the key be missing and [`check_result`] accepts
///   that; `standpoint_report` is required too, with `null` for a reviewer without a standpoint.
/// - Codex does not validate the final message itself, and Claude's `StructuredOutput` tool may be
///   skipped by the model: [`check_result`] is what decides, never the schema.
/// - Claude Code (2.1.214 and later, anthropics/claude-code#80402) rejects a schema whose
///   `$schema` names draft 2020-12 (its Ajv knows only draft-07), so there is no `$schema` key;
///   every keyword used (`type`, `properties`, `required`, `additionalProperties`, `enum`,
///   `items`, `description`) means the same in draft-07 and 2020-12.
/// - No string keywords (`minLength`, `pattern`): OpenAI's strict mode took them late and not for
///   every model, and a rejected schema fails the whole reviewer. Hence the schema does not
///   express G2's length and prefix, a blank `failure_scenario` or `detail`, or the requested
///   angles' presence (strict mode has no `contains`); the descriptions say them and
///   [`check_result`] refuses them.
pub fn schema_json(angles: &[Angle], with_standpoints: bool) -> Value {
    let angle_names: Vec<&str> = Angle::ALL.iter().map(|a| a.as_str()).collect();
    let requested: Vec<&str> = angles.iter().map(|a| a.as_str()).collect();
    let angle_list = |second: &str, what: &str| {
        json!({
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "angle": { "type": "string", "enum": angle_names },
                    second: { "type": "string", "description": what },
                },
                "required": ["angle", second],
                "additionalProperties": false,
            },
        })
    };

    let mut finding_properties = Map::new();
    for key in FINDING_KEYS.into_iter().chain([SMALLEST_FIX]) {
        finding_properties.insert(key.to_string(), finding_property(key));
    }
    let finding_required: Vec<&str> = FINDING_KEYS.into_iter().chain([SMALLEST_FIX]).collect();

    let mut properties = Map::new();
    properties.insert(
        "reviewed_head".to_string(),
        json!({
            "type": "string",
            "description": "The head commit id from the packet, or its first 7 or more characters.",
        }),
    );
    properties.insert(
        "verdict".to_string(),
        json!({
            "type": "string",
            "enum": Verdict::ALL.map(Verdict::as_str),
            "description": "could_not_review when you could not review the change at all.",
        }),
    );
    properties.insert(
        "angles_checked".to_string(),
        angle_list(
            "result",
            "What you checked from this angle and what you found.",
        ),
    );
    properties.insert(
        "angles_unchecked".to_string(),
        angle_list("reason", "Why you could not check this angle."),
    );
    properties.insert(
        "findings".to_string(),
        json!({
            "type": "array",
            "items": {
                "type": "object",
                "properties": finding_properties,
                "required": finding_required,
                "additionalProperties": false,
            },
        }),
    );
    properties.insert(
        "limits".to_string(),
        json!({
            "type": "string",
            "description": "What limited the review, or an empty string.",
        }),
    );
    let mut required: Vec<&str> = RESULT_KEYS.to_vec();
    if with_standpoints {
        properties.insert(
            STANDPOINT_REPORT.to_string(),
            json!({
                "type": ["object", "null"],
                "description": "If you were given a standpoint: checked true and what you \
                                checked, or checked false and why you could not. Otherwise null.",
                "properties": {
                    "checked": { "type": "boolean" },
                    "detail": { "type": "string", "description": "Not empty." },
                },
                "required": STANDPOINT_REPORT_KEYS,
                "additionalProperties": false,
            }),
        );
        required.push(STANDPOINT_REPORT);
    }

    json!({
        "type": "object",
        "description": format!(
            "A review result. Requested angles: {}. Each must appear in angles_checked or \
             angles_unchecked.",
            requested.join(", ")
        ),
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The schema of one finding key (G5).
fn finding_property(key: &str) -> Value {
    let enumeration: Option<Vec<&str>> = match key {
        "proposed_class" => Some(Class::ALL.iter().map(|c| c.as_str()).collect()),
        "link_kind" => Some(
            [
                LinkKind::Rule,
                LinkKind::Contract,
                LinkKind::Criterion,
                LinkKind::None,
            ]
            .map(LinkKind::as_str)
            .to_vec(),
        ),
        "introduced_by_change" | "regression" => {
            Some(Answer::ALL.iter().map(|a| a.as_str()).collect())
        }
        "check_impact" => Some(CheckImpact::ALL.iter().map(|c| c.as_str()).collect()),
        "confidence" => Some(Confidence::ALL.map(Confidence::as_str).to_vec()),
        _ => None,
    };
    let description = match key {
        "id" => Some("Your own id for the finding."),
        "angle" => Some("The angle the finding belongs to."),
        "location" => Some("Where: a path in the copies, optionally with :line or :start-end."),
        "claim" => Some("What is wrong."),
        "failure_scenario" => Some("How it fails: a concrete case. Not empty."),
        "evidence" => Some("What you read that shows it."),
        "link" => Some("The rule, contract or criterion it breaks; empty when link_kind is none."),
        "smallest_fix" => Some("The smallest change that fixes it, or an empty string."),
        _ => None,
    };
    let mut property = Map::new();
    property.insert("type".to_string(), json!("string"));
    if let Some(values) = enumeration {
        property.insert("enum".to_string(), json!(values));
    }
    if let Some(description) = description {
        property.insert("description".to_string(), json!(description));
    }
    Value::Object(property)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";

    fn ctx() -> ResultContext<'static> {
        ResultContext {
            head: HEAD,
            requested_angles: &Angle::ALL,
            round_has_standpoints: false,
            reviewer_standpoint: None,
        }
    }

    fn ctx_standpoint(standpoint: Option<&'static str>) -> ResultContext<'static> {
        ResultContext {
            round_has_standpoints: true,
            reviewer_standpoint: standpoint,
            ..ctx()
        }
    }

    fn finding() -> Value {
        json!({
            "id": "F1",
            "proposed_class": "defect",
            "angle": "correctness",
            "location": "head/app/main.go:10",
            "claim": "off by one",
            "failure_scenario": "an empty list panics",
            "evidence": "line 10 indexes [0]",
            "link_kind": "rule",
            "link": "AGENTS.md:2",
            "introduced_by_change": "yes",
            "regression": "no",
            "check_impact": "none",
            "confidence": "high",
            "smallest_fix": "check the length first",
        })
    }

    fn good() -> Value {
        json!({
            "reviewed_head": "0123456",
            "verdict": "blocking_findings",
            "angles_checked": [
                { "angle": "correctness", "result": "one defect" },
                { "angle": "regression", "result": "none" },
                { "angle": "checks", "result": "none" },
                { "angle": "contract", "result": "none" },
            ],
            "angles_unchecked": [{ "angle": "security", "reason": "no time" }],
            "findings": [finding()],
            "limits": "",
        })
    }

    fn with(mut value: Value, f: impl FnOnce(&mut Map<String, Value>)) -> Value {
        f(value.as_object_mut().unwrap());
        value
    }

    fn with_finding(f: impl FnOnce(&mut Map<String, Value>)) -> Value {
        let mut finding = finding();
        f(finding.as_object_mut().unwrap());
        with(good(), |m| {
            m.insert("findings".into(), json!([finding]));
        })
    }

    fn check(value: &Value, ctx: &ResultContext) -> Result<ReviewerResult, InvalidOutput> {
        check_result(&value.to_string(), ctx)
    }

    #[track_caller]
    fn refused_text(text: &str, ctx: &ResultContext, needle: &str) -> String {
        let reason = check_result(text, ctx)
            .expect_err("should be refused")
            .reason;
        assert!(reason.contains(needle), "{reason:?} lacks {needle:?}");
        reason
    }

    #[track_caller]
    fn refused(value: &Value, ctx: &ResultContext, needle: &str) -> String {
        refused_text(&value.to_string(), ctx, needle)
    }

    #[track_caller]
    fn accepted(value: &Value, ctx: &ResultContext) -> ReviewerResult {
        check(value, ctx).unwrap_or_else(|e| panic!("refused: {}", e.reason))
    }

    // G1

    #[test]
    fn g1_accepts_a_result_in_form() {
        let result = accepted(&good(), &ctx());
        assert_eq!(result.reviewed_head, "0123456");
        assert_eq!(result.verdict, Verdict::BlockingFindings);
        assert!(!result.could_not_review());
        assert_eq!(result.findings.len(), 1);
        assert_eq!(result.findings[0].check_impact, CheckImpact::None);
        assert_eq!(result.standpoint_report, None);
        let padded = format!("\n  {}\n", good());
        assert!(check_result(&padded, &ctx()).is_ok());
    }

    #[test]
    fn g1_text_that_is_not_one_json_object() {
        for text in [
            "", "not json", "{", "{} {}", "{}x", "[]", "null", "\"x\"", "7",
        ] {
            let reason = check_result(text, &ctx()).expect_err(text).reason;
            assert!(
                reason.starts_with("the result is not"),
                "{text:?}: {reason:?}"
            );
        }
        refused_text("[]", &ctx(), "not a JSON object (got an array)");
        let two = format!("{} {}", good(), good());
        refused_text(&two, &ctx(), "not exactly one JSON object");
    }

    #[test]
    fn g1_missing_keys() {
        for key in RESULT_KEYS {
            let value = with(good(), |m| {
                m.remove(key);
            });
            let reason = refused(&value, &ctx(), key);
            assert_eq!(reason, format!("missing key {key}"));
        }
    }

    #[test]
    fn g1_unknown_key() {
        let value = with(good(), |m| {
            m.insert("summary".into(), json!("x"));
        });
        assert_eq!(
            refused(&value, &ctx(), "summary"),
            "unknown key \"summary\""
        );
    }

    #[test]
    fn g1_duplicate_keys_are_refused() {
        let text = good().to_string().replacen(
            "\"verdict\":\"blocking_findings\"",
            "\"verdict\":\"blocking_findings\",\"verdict\":\"no_blocking_findings\"",
            1,
        );
        refused_text(&text, &ctx(), "duplicate key \"verdict\"");
        let text = good()
            .to_string()
            .replacen("\"claim\":", "\"claim\":\"a\",\"claim\":", 1);
        refused_text(&text, &ctx(), "duplicate key \"claim\" in findings[0]");
    }

    // G2

    #[test]
    fn g2_reviewed_head_not_a_string() {
        let value = with(good(), |m| {
            m.insert("reviewed_head".into(), json!(123_4567));
        });
        refused(
            &value,
            &ctx(),
            "reviewed_head: expected a string, got a number",
        );
    }

    #[test]
    fn g2_reviewed_head_too_short() {
        let value = with(good(), |m| {
            m.insert("reviewed_head".into(), json!("012345"));
        });
        assert_eq!(
            refused(&value, &ctx(), "reviewed_head"),
            "reviewed_head \"012345\" is shorter than 7 characters"
        );
    }

    #[test]
    fn g2_reviewed_head_not_a_literal_prefix() {
        for head in ["1123456", "0123456789ABCDEF", " 0123456", "0123456 "] {
            let value = with(good(), |m| {
                m.insert("reviewed_head".into(), json!(head));
            });
            refused(&value, &ctx(), "reviewed_head");
        }
        let value = with(good(), |m| {
            m.insert("reviewed_head".into(), json!(HEAD));
        });
        accepted(&value, &ctx());
    }

    // G3

    #[test]
    fn g3_unknown_verdict() {
        for verdict in [json!("approve"), json!("Blocking_findings"), json!(null)] {
            let value = with(good(), |m| {
                m.insert("verdict".into(), verdict);
            });
            refused(&value, &ctx(), "verdict");
        }
        let value = with(good(), |m| {
            m.insert("verdict".into(), json!("approve"));
        });
        assert_eq!(
            refused(&value, &ctx(), "verdict"),
            "verdict: \"approve\" is not one of no_blocking_findings, blocking_findings, \
             could_not_review"
        );
    }

    #[test]
    fn g3_could_not_review_is_valid_but_failed() {
        let value = with(good(), |m| {
            m.insert("verdict".into(), json!("could_not_review"));
            m.insert("findings".into(), json!([]));
        });
        let result = accepted(&value, &ctx());
        assert!(result.could_not_review());
    }

    // G4

    #[test]
    fn g4_list_not_an_array() {
        let value = with(good(), |m| {
            m.insert("angles_checked".into(), json!({ "angle": "checks" }));
        });
        refused(&value, &ctx(), "angles_checked: expected an array");
    }

    #[test]
    fn g4_item_not_an_object() {
        let value = with(good(), |m| {
            m.insert("angles_unchecked".into(), json!(["security"]));
        });
        refused(&value, &ctx(), "angles_unchecked[0]: expected an object");
    }

    #[test]
    fn g4_item_missing_key() {
        let value = with(good(), |m| {
            m.insert("angles_unchecked".into(), json!([{ "angle": "security" }]));
        });
        assert_eq!(
            refused(&value, &ctx(), "reason"),
            "missing key reason in angles_unchecked[0]"
        );
    }

    #[test]
    fn g4_item_unknown_key() {
        // `result` in the unchecked list is an unknown key there.
        let value = with(good(), |m| {
            m.insert(
                "angles_unchecked".into(),
                json!([{ "angle": "security", "result": "x" }]),
            );
        });
        refused(
            &value,
            &ctx(),
            "unknown key \"result\" in angles_unchecked[0]",
        );
    }

    #[test]
    fn g4_item_value_not_a_string() {
        let value = with(good(), |m| {
            m.insert(
                "angles_checked".into(),
                json!([{ "angle": "correctness", "result": true }]),
            );
        });
        refused(
            &value,
            &ctx(),
            "angles_checked[0].result: expected a string",
        );
        let value = with(good(), |m| {
            m.insert(
                "angles_checked".into(),
                json!([{ "angle": 1, "result": "" }]),
            );
        });
        refused(&value, &ctx(), "angles_checked[0].angle: expected a string");
    }

    #[test]
    fn g4_unknown_angle() {
        for angle in ["style", "Security", "security "] {
            let value = with(good(), |m| {
                m.insert(
                    "angles_checked".into(),
                    json!([{ "angle": angle, "result": "" }]),
                );
            });
            refused(&value, &ctx(), "angles_checked[0].angle");
        }
        let value = with(good(), |m| {
            m.insert(
                "angles_checked".into(),
                json!([{ "angle": "style", "result": "" }]),
            );
        });
        assert_eq!(
            refused(&value, &ctx(), "angle"),
            "angles_checked[0].angle: \"style\" is not an angle"
        );
    }

    #[test]
    fn g4_requested_angle_missing() {
        let value = with(good(), |m| {
            m.insert("angles_unchecked".into(), json!([]));
        });
        assert_eq!(
            refused(&value, &ctx(), "security"),
            "requested angle \"security\" is in neither angles_checked nor angles_unchecked"
        );
        // Not requested: not needed.
        let only = [Angle::Correctness, Angle::Checks];
        let ctx = ResultContext {
            requested_angles: &only,
            ..ctx()
        };
        accepted(&value, &ctx);
    }

    #[test]
    fn g4_duplicates_and_both_lists_are_kept_as_given() {
        let value = with(good(), |m| {
            m.insert(
                "angles_checked".into(),
                json!([
                    { "angle": "security", "result": "a" },
                    { "angle": "correctness", "result": "" },
                    { "angle": "security", "result": "b" },
                    { "angle": "regression", "result": "c" },
                    { "angle": "checks", "result": "d" },
                    { "angle": "contract", "result": "e" },
                ]),
            );
            m.insert(
                "angles_unchecked".into(),
                json!([{ "angle": "security", "reason": "partly" }]),
            );
        });
        let result = accepted(&value, &ctx());
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            result.angles_checked,
            [
                pair("security", "a"),
                pair("correctness", ""),
                pair("security", "b"),
                pair("regression", "c"),
                pair("checks", "d"),
                pair("contract", "e"),
            ]
        );
        assert_eq!(result.angles_unchecked, [pair("security", "partly")]);
    }

    // G5

    #[test]
    fn g5_findings_not_an_array() {
        let value = with(good(), |m| {
            m.insert("findings".into(), json!(null));
        });
        refused(&value, &ctx(), "findings: expected an array, got null");
    }

    #[test]
    fn g5_finding_not_an_object() {
        let value = with(good(), |m| {
            m.insert("findings".into(), json!([finding(), "F2"]));
        });
        refused(
            &value,
            &ctx(),
            "findings[1]: expected an object, got a string",
        );
    }

    #[test]
    fn g5_finding_missing_keys() {
        for key in FINDING_KEYS {
            let value = with_finding(|f| {
                f.remove(key);
            });
            assert_eq!(
                refused(&value, &ctx(), key),
                format!("missing key {key} in findings[0]")
            );
        }
    }

    #[test]
    fn g5_finding_unknown_key() {
        let value = with_finding(|f| {
            f.insert("severity".into(), json!("high"));
        });
        assert_eq!(
            refused(&value, &ctx(), "severity"),
            "unknown key \"severity\" in findings[0]"
        );
    }

    #[test]
    fn g5_finding_values_must_be_strings() {
        for key in FINDING_KEYS.into_iter().chain([SMALLEST_FIX]) {
            for bad in [json!(null), json!(1), json!(["x"])] {
                let value = with_finding(|f| {
                    f.insert(key.into(), bad);
                });
                refused(
                    &value,
                    &ctx(),
                    &format!("findings[0].{key}: expected a string"),
                );
            }
        }
    }

    #[test]
    fn g5_enumeration_values() {
        let cases = [
            ("proposed_class", "requirement_question"),
            ("link_kind", "file"),
            ("introduced_by_change", "Yes"),
            ("regression", "maybe"),
            ("check_impact", "severe"),
            ("confidence", "certain"),
        ];
        for (key, bad) in cases {
            let value = with_finding(|f| {
                f.insert(key.into(), json!(bad));
            });
            refused(
                &value,
                &ctx(),
                &format!("findings[0].{key}: {bad:?} is not one of"),
            );
        }
        let value = with(good(), |m| {
            let mut bad = finding();
            bad["check_impact"] = json!("severe");
            m.insert("findings".into(), json!([finding(), finding(), bad]));
        });
        assert_eq!(
            refused(&value, &ctx(), "check_impact"),
            "findings[2].check_impact: \"severe\" is not one of none, false_pass, \
             meaning_inverted, contract_violation"
        );
        let value = with_finding(|f| {
            f.insert("regression".into(), json!("maybe"));
        });
        assert_eq!(
            refused(&value, &ctx(), "regression"),
            "findings[0].regression: \"maybe\" is not one of yes, no, unknown"
        );
    }

    #[test]
    fn g5_every_enumeration_value_is_accepted() {
        let mut findings = Vec::new();
        for class in Class::ALL {
            for impact in CheckImpact::ALL {
                let mut f = finding();
                f["proposed_class"] = json!(class.as_str());
                f["check_impact"] = json!(impact.as_str());
                findings.push(f);
            }
        }
        for (i, kind) in ["rule", "contract", "criterion", "none"]
            .into_iter()
            .enumerate()
        {
            let answer = Answer::ALL[i % 3].as_str();
            let confidence = Confidence::ALL[i % 3].as_str();
            let mut f = finding();
            f["link_kind"] = json!(kind);
            f["introduced_by_change"] = json!(answer);
            f["regression"] = json!(answer);
            f["confidence"] = json!(confidence);
            findings.push(f);
        }
        let count = findings.len();
        let value = with(good(), |m| {
            m.insert("findings".into(), Value::Array(findings));
        });
        assert_eq!(accepted(&value, &ctx()).findings.len(), count);
    }

    #[test]
    fn g5_blank_failure_scenario() {
        for blank in ["", " ", "\n\t ", "\u{3000}"] {
            let value = with_finding(|f| {
                f.insert("failure_scenario".into(), json!(blank));
            });
            assert_eq!(
                refused(&value, &ctx(), "failure_scenario"),
                "findings[0].failure_scenario: empty or only whitespace"
            );
        }
    }

    #[test]
    fn g5_any_strings_for_id_claim_evidence_location_link() {
        let value = with_finding(|f| {
            for key in ["id", "claim", "evidence", "location", "link", "angle"] {
                f.insert(key.into(), json!(""));
            }
        });
        let result = accepted(&value, &ctx());
        assert_eq!(result.findings[0].id, "");
        assert_eq!(result.findings[0].location, "");
    }

    #[test]
    fn g5_smallest_fix_empty_and_missing() {
        let empty = with_finding(|f| {
            f.insert(SMALLEST_FIX.into(), json!(""));
        });
        let found = &accepted(&empty, &ctx()).findings[0];
        assert_eq!(found.smallest_fix.as_deref(), Some(""));
        assert_eq!(found.fix_direction(), None);

        let missing = with_finding(|f| {
            f.remove(SMALLEST_FIX);
        });
        let found = &accepted(&missing, &ctx()).findings[0];
        assert_eq!(found.smallest_fix, None);
        assert_eq!(found.fix_direction(), None);

        let given = &accepted(&good(), &ctx()).findings[0];
        assert_eq!(given.fix_direction(), Some("check the length first"));
    }

    // G6

    #[test]
    fn g6_limits_not_a_string() {
        for bad in [json!(null), json!([]), json!(false)] {
            let value = with(good(), |m| {
                m.insert("limits".into(), bad);
            });
            refused(&value, &ctx(), "limits: expected a string");
        }
    }

    #[test]
    fn g6_limits_any_string() {
        for limits in ["", "  ", "no network"] {
            let value = with(good(), |m| {
                m.insert("limits".into(), json!(limits));
            });
            assert_eq!(accepted(&value, &ctx()).limits, limits);
        }
    }

    // Standpoints

    fn report(report: Value) -> Value {
        with(good(), |m| {
            m.insert(STANDPOINT_REPORT.into(), report);
        })
    }

    #[test]
    fn standpoint_report_is_unknown_without_standpoints() {
        for value in [json!(null), json!({ "checked": true, "detail": "x" })] {
            assert_eq!(
                refused(&report(value), &ctx(), STANDPOINT_REPORT),
                "unknown key \"standpoint_report\""
            );
        }
    }

    #[test]
    fn standpoint_report_required_for_a_reviewer_with_a_standpoint() {
        let ctx = ctx_standpoint(Some("attack the cache"));
        let reason = refused(&good(), &ctx, STANDPOINT_REPORT);
        assert!(
            reason.starts_with("missing key standpoint_report"),
            "{reason}"
        );
        let reason = refused(&report(json!(null)), &ctx, STANDPOINT_REPORT);
        assert!(reason.starts_with("standpoint_report is null"), "{reason}");
    }

    #[test]
    fn standpoint_report_out_of_form() {
        let ctx = ctx_standpoint(Some("attack the cache"));
        let cases = [
            (json!("checked"), "standpoint_report: expected an object"),
            (
                json!({ "checked": true }),
                "missing key detail in standpoint_report",
            ),
            (
                json!({ "detail": "x" }),
                "missing key checked in standpoint_report",
            ),
            (
                json!({ "checked": true, "detail": "x", "notes": "" }),
                "unknown key \"notes\" in standpoint_report",
            ),
            (
                json!({ "checked": "true", "detail": "x" }),
                "standpoint_report.checked: expected a boolean, got a string",
            ),
            (
                json!({ "checked": true, "detail": 1 }),
                "standpoint_report.detail: expected a string",
            ),
            (
                json!({ "checked": false, "detail": " \n" }),
                "standpoint_report.detail: empty or only whitespace",
            ),
        ];
        for (bad, reason) in cases {
            refused(&report(bad), &ctx, reason);
        }
    }

    #[test]
    fn standpoint_report_in_form() {
        let ctx = ctx_standpoint(Some("attack the cache"));
        let result = accepted(
            &report(json!({ "checked": false, "detail": "no cache code in head" })),
            &ctx,
        );
        assert_eq!(
            result.standpoint_report,
            Some(StandpointReport {
                checked: false,
                detail: "no cache code in head".into(),
            })
        );
    }

    #[test]
    fn standpoint_report_unchecked_for_a_reviewer_without_one() {
        let ctx = ctx_standpoint(None);
        assert_eq!(accepted(&good(), &ctx).standpoint_report, None);
        for value in [
            json!(null),
            json!({ "checked": true, "detail": "x" }),
            json!("anything"),
        ] {
            assert_eq!(accepted(&report(value), &ctx).standpoint_report, None);
        }
    }

    #[test]
    fn a_given_standpoint_implies_a_round_with_standpoints() {
        let ctx = ResultContext {
            round_has_standpoints: false,
            ..ctx_standpoint(Some("x"))
        };
        accepted(&report(json!({ "checked": true, "detail": "x" })), &ctx);
    }

    // Recording

    #[test]
    fn recorded_as_given() {
        let value = with_finding(|f| {
            f.remove(SMALLEST_FIX);
        });
        let recorded = serde_json::to_value(accepted(&value, &ctx())).unwrap();
        let expected = with(value, |m| {
            m.insert("verdict".into(), json!("blocking_findings"));
        });
        assert_eq!(recorded, expected);
        let ctx = ctx_standpoint(Some("s"));
        let value = report(json!({ "checked": true, "detail": "d" }));
        let recorded = serde_json::to_value(accepted(&value, &ctx)).unwrap();
        assert_eq!(recorded, value);
    }

    // Schema

    fn validator(schema: &Value) -> jsonschema::Validator {
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(schema)
            .expect("the schema compiles")
    }

    /// Every object closed and fully required (OpenAI strict mode), no `$schema`.
    fn assert_strict(node: &Value, at: &str) {
        let Some(map) = node.as_object() else { return };
        assert!(!map.contains_key("$schema"), "{at}");
        if let Some(properties) = map.get("properties").and_then(Value::as_object) {
            assert_eq!(map.get("additionalProperties"), Some(&json!(false)), "{at}");
            let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
            let required: Vec<&str> = map["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap())
                .collect();
            assert_eq!(keys, required, "{at}");
            for (key, property) in properties {
                assert_strict(property, &format!("{at}.{key}"));
            }
        }
        if let Some(items) = map.get("items") {
            assert_strict(items, &format!("{at}[]"));
        }
    }

    #[test]
    fn schema_is_strict() {
        for with_standpoints in [false, true] {
            let schema = schema_json(&Angle::ALL, with_standpoints);
            assert_strict(&schema, "$");
            assert_eq!(schema["type"], "object");
            let angle_enum =
                &schema["properties"]["angles_checked"]["items"]["properties"]["angle"]["enum"];
            assert_eq!(
                angle_enum,
                &json!([
                    "correctness",
                    "regression",
                    "checks",
                    "contract",
                    "security"
                ])
            );
            assert_eq!(
                schema["properties"]["findings"]["items"]["properties"]["check_impact"]["enum"],
                json!([
                    "none",
                    "false_pass",
                    "meaning_inverted",
                    "contract_violation"
                ])
            );
        }
        let schema = schema_json(&Angle::ALL, true);
        let report = &schema["properties"][STANDPOINT_REPORT];
        assert_eq!(report["type"], json!(["object", "null"]));
        assert_eq!(report["required"], json!(["checked", "detail"]));
        assert_eq!(
            schema["required"].as_array().unwrap().last().unwrap(),
            STANDPOINT_REPORT
        );
    }

    #[test]
    fn schema_without_standpoints_is_the_schema_minus_the_report() {
        let angles = [Angle::Correctness, Angle::Security];
        let without = schema_json(&angles, false);
        let mut with_report = schema_json(&angles, true);
        assert_ne!(without, with_report);
        let root = with_report.as_object_mut().unwrap();
        root["properties"]
            .as_object_mut()
            .unwrap()
            .shift_remove(STANDPOINT_REPORT)
            .unwrap();
        root["required"]
            .as_array_mut()
            .unwrap()
            .retain(|k| k != STANDPOINT_REPORT);
        assert_eq!(
            serde_json::to_string_pretty(&without).unwrap(),
            serde_json::to_string_pretty(&with_report).unwrap()
        );
        // Deterministic: same bytes every time.
        assert_eq!(
            serde_json::to_vec(&schema_json(&angles, false)).unwrap(),
            serde_json::to_vec(&without).unwrap()
        );
        assert!(without["description"]
            .as_str()
            .unwrap()
            .contains("Requested angles: correctness, security."));
    }

    /// Results on which the schema and [`check_result`] must agree.
    fn agreement_cases() -> Vec<(&'static str, Value, bool)> {
        let mut no_findings = good();
        no_findings["findings"] = json!([]);
        no_findings["verdict"] = json!("no_blocking_findings");
        vec![
            ("good", good(), true),
            ("no findings", no_findings, true),
            (
                "duplicates and both lists",
                with(good(), |m| {
                    m.insert(
                        "angles_checked".into(),
                        json!([
                            { "angle": "security", "result": "" },
                            { "angle": "security", "result": "" },
                            { "angle": "correctness", "result": "" },
                            { "angle": "regression", "result": "" },
                            { "angle": "checks", "result": "" },
                            { "angle": "contract", "result": "" },
                        ]),
                    );
                }),
                true,
            ),
            (
                "empty smallest_fix",
                with_finding(|f| {
                    f.insert(SMALLEST_FIX.into(), json!(""));
                }),
                true,
            ),
            (
                "could_not_review",
                with(good(), |m| {
                    m.insert("verdict".into(), json!("could_not_review"));
                }),
                true,
            ),
            (
                "unknown key",
                with(good(), |m| {
                    m.insert("summary".into(), json!(""));
                }),
                false,
            ),
            (
                "missing verdict",
                with(good(), |m| {
                    m.remove("verdict");
                }),
                false,
            ),
            (
                "bad verdict",
                with(good(), |m| {
                    m.insert("verdict".into(), json!("approve"));
                }),
                false,
            ),
            (
                "angles not a list",
                with(good(), |m| {
                    m.insert("angles_checked".into(), json!("all"));
                }),
                false,
            ),
            (
                "unknown angle",
                with(good(), |m| {
                    m.insert(
                        "angles_unchecked".into(),
                        json!([{ "angle": "security", "reason": "" },
                               { "angle": "style", "reason": "" }]),
                    );
                }),
                false,
            ),
            (
                "angle item extra key",
                with(good(), |m| {
                    m.insert(
                        "angles_unchecked".into(),
                        json!([{ "angle": "security", "reason": "", "x": "" }]),
                    );
                }),
                false,
            ),
            (
                "finding unknown key",
                with_finding(|f| {
                    f.insert("severity".into(), json!("high"));
                }),
                false,
            ),
            (
                "finding missing claim",
                with_finding(|f| {
                    f.remove("claim");
                }),
                false,
            ),
            (
                "bad check_impact",
                with_finding(|f| {
                    f.insert("check_impact".into(), json!("severe"));
                }),
                false,
            ),
            (
                "bad proposed_class",
                with_finding(|f| {
                    f.insert("proposed_class".into(), json!("bug"));
                }),
                false,
            ),
            (
                "smallest_fix null",
                with_finding(|f| {
                    f.insert(SMALLEST_FIX.into(), json!(null));
                }),
                false,
            ),
            (
                "limits null",
                with(good(), |m| {
                    m.insert("limits".into(), json!(null));
                }),
                false,
            ),
            (
                "standpoint_report without standpoints",
                report(json!(null)),
                false,
            ),
        ]
    }

    #[test]
    fn schema_and_check_agree() {
        let schema = schema_json(&Angle::ALL, false);
        let validator = validator(&schema);
        for (name, value, ok) in agreement_cases() {
            assert_eq!(validator.is_valid(&value), ok, "schema on {name}");
            assert_eq!(check(&value, &ctx()).is_ok(), ok, "check on {name}");
        }
    }

    #[test]
    fn schema_and_check_agree_with_standpoints() {
        let validator = validator(&schema_json(&Angle::ALL, true));
        let given = ctx_standpoint(Some("s"));
        let cases = [
            (json!({ "checked": true, "detail": "d" }), true),
            (json!({ "checked": false, "detail": "why" }), true),
            (json!({ "checked": "yes", "detail": "d" }), false),
            (json!({ "checked": true }), false),
            (json!({ "checked": true, "detail": "d", "x": 1 }), false),
        ];
        for (value, ok) in cases {
            let result = report(value);
            assert_eq!(validator.is_valid(&result), ok, "{result}");
            assert_eq!(check(&result, &given).is_ok(), ok, "{result}");
        }
        // null: in the schema for every reviewer, accepted only from one without a standpoint.
        let null = report(json!(null));
        assert!(validator.is_valid(&null));
        assert!(check(&null, &ctx_standpoint(None)).is_ok());
        assert!(check(&null, &given).is_err());
    }

    /// What only the check refuses (the schema stays within what both CLIs take), and the one
    /// form only the check accepts (a missing `smallest_fix`, which strict mode can not say).
    #[test]
    fn schema_and_check_differ_only_where_documented() {
        let validator = validator(&schema_json(&Angle::ALL, false));
        let only_check_refuses = [
            with(good(), |m| {
                m.insert("reviewed_head".into(), json!("012"));
            }),
            with(good(), |m| {
                m.insert("reviewed_head".into(), json!("fffffff"));
            }),
            with_finding(|f| {
                f.insert("failure_scenario".into(), json!(" "));
            }),
            with(good(), |m| {
                m.insert("angles_unchecked".into(), json!([]));
            }),
        ];
        for value in only_check_refuses {
            assert!(validator.is_valid(&value), "{value}");
            assert!(check(&value, &ctx()).is_err(), "{value}");
        }
        let missing_fix = with_finding(|f| {
            f.remove(SMALLEST_FIX);
        });
        assert!(!validator.is_valid(&missing_fix));
        assert!(check(&missing_fix, &ctx()).is_ok());
    }
}
