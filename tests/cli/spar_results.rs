//! Reviewer results as the spar tests write them: the default angles, a result every G1–G6 rule
//! accepts, and a finding with every key of G5. Shared by the spar test files.

use serde_json::{json, Value};

/// The angles of the default configuration.
pub const ANGLES: [&str; 5] = [
    "correctness",
    "regression",
    "checks",
    "contract",
    "security",
];

/// A result the head accepts: all five angles checked, these findings.
pub fn result(head: &str, findings: Vec<Value>) -> Value {
    json!({
        "reviewed_head": head,
        "verdict": if findings.is_empty() { "no_blocking_findings" } else { "blocking_findings" },
        "angles_checked": ANGLES.iter().map(|a| json!({"angle": a, "result": "looked"})).collect::<Vec<_>>(),
        "angles_unchecked": [],
        "findings": findings,
        "limits": "",
    })
}

/// A finding with every key of G5 (no smallest_fix).
pub fn finding(id: &str, proposed: &str, location: &str) -> Value {
    json!({
        "id": id,
        "proposed_class": proposed,
        "angle": "correctness",
        "location": location,
        "claim": format!("claim of {id}"),
        "failure_scenario": "it breaks",
        "evidence": "read it",
        "link_kind": "none",
        "link": "",
        "introduced_by_change": "no",
        "regression": "no",
        "check_impact": "none",
        "confidence": "high",
    })
}
