//! G1–G6 and the standpoint report, case by case.

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

mod schema;
