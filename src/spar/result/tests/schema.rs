//! The schema given to reviewers agrees with `check_result`.

use super::*;

/// The schema compiled as draft 2020-12, as a reviewer's CLI reads it.
struct Validator {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

impl Validator {
    fn is_valid(&self, v: &Value) -> bool {
        self.schemas.validate(v, self.index).is_ok()
    }
}

fn validator(schema: &Value) -> Validator {
    let url = "file:///result.schema.json";
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V2020_12);
    compiler.add_resource(url, schema.clone()).unwrap();
    let mut schemas = boon::Schemas::new();
    let index = compiler
        .compile(url, &mut schemas)
        .expect("the schema compiles");
    Validator { schemas, index }
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
