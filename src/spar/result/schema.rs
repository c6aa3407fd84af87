//! `schema.json`: the JSON Schema a reviewer's result is held to, as strict as `check_result`
//! (the tests say where the two differ, and why).

use super::*;

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
pub(super) fn finding_property(key: &str) -> Value {
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
