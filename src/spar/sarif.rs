//! Recorded rounds as one SARIF 2.1.0 log, for GitHub code scanning, GitLab and editors, which
//! show SARIF and not git notes.
//!
//! One `run` per reviewer of each round, one `result` per finding:
//! - `ruleId` is the finding's angle; `level` comes from the class the rules decided (defect and
//!   requirement-question, which block, → `error`; hardening → `warning`; note → `note`);
//! - the location is the path and lines as spar read them (a repository-relative URI under
//!   `%SRCROOT%`); a finding whose location spar could not read has no physical location;
//! - a finding with a triage in force carries it as an external suppression, so code scanning
//!   shows it dismissed with the disposition as justification;
//! - `partialFingerprints["sparFinding/v1"]` hashes the reviewer, the angle, the path and the
//!   claim (whitespace collapsed) — not the lines or the round — so the same finding in the
//!   next round is the same alert.
//!
//! `automationDetails.id` is `spar/<series>/<reviewer>/<round>`: its category (up to the last
//! `/`) stays the same from one round to the next.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::record::{Finding, ReviewerRecord};
use super::view::RoundView;
use super::vocab::{Class, Status, Word};

pub const SARIF_VERSION: &str = "2.1.0";
pub const SARIF_SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// The key of spar's own fingerprint in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "sparFinding/v1";

/// The SARIF level of a decided class.
pub fn level(class: &Word<Class>) -> &'static str {
    match class.known() {
        Some(c) if c.blocks() => "error",
        Some(Class::Hardening) => "warning",
        _ => "note",
    }
}

/// The stable fingerprint of a finding (see the module docs).
pub fn fingerprint(f: &Finding) -> String {
    let claim = f.claim.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut h = Sha256::new();
    for part in [f.reviewer.as_str(), f.angle.as_str(), &f.path, &claim] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A repository path as a relative URI reference: every byte outside the unreserved set and
/// `/` is percent-encoded (a path may hold spaces, `#`, `%` or non-ASCII names).
pub fn path_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The log of `rounds`; `gate` is the gate's document when the log reports a gate.
pub fn log(rounds: &[RoundView], gate: Option<&Value>) -> Value {
    let mut runs = Vec::new();
    for v in rounds {
        for rev in &v.round.reviewers {
            runs.push(run(v, rev));
        }
    }
    let mut doc = json!({
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": runs,
    });
    if let Some(g) = gate {
        doc["properties"] = json!({
            "gate": {
                "result": g.get("result").cloned().unwrap_or(Value::Null),
                "reasons": g.get("reasons").cloned().unwrap_or(json!([])),
                "rounds": g.get("rounds").cloned().unwrap_or(json!([])),
                "head": g.get("head").cloned().unwrap_or(Value::Null),
            }
        });
    }
    doc
}

fn run(v: &RoundView, rev: &ReviewerRecord) -> Value {
    let r = &v.round;
    let findings: Vec<&Finding> = v
        .findings
        .iter()
        .filter(|f| f.reviewer == rev.name)
        .collect();
    let mut angles: Vec<&str> = findings.iter().map(|f| f.angle.as_str()).collect();
    angles.sort();
    angles.dedup();
    let rules: Vec<Value> = angles
        .iter()
        .map(|a| json!({"id": a, "name": a, "shortDescription": {"text": format!("spar angle {a} (a linter's rule id for a sarif reviewer)")}}))
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let index = angles
                .iter()
                .position(|a| *a == f.angle.as_str())
                .unwrap_or(0);
            result(v, f, index)
        })
        .collect();
    let mut props = Map::new();
    for (k, val) in [
        ("series", json!(r.series)),
        ("round", json!(r.round)),
        ("stage", json!(r.stage)),
        ("base", json!(r.base)),
        ("head", json!(r.head)),
        ("reviewer", json!(rev.name)),
        ("preset", json!(rev.preset)),
        ("status", json!(rev.status)),
        ("verdict", json!(rev.verdict)),
        ("model", json!(rev.model)),
        ("observedModel", json!(rev.observed_model)),
    ] {
        props.insert(k.into(), val);
    }
    let mut invocation = json!({
        "executionSuccessful": rev.status == Status::Completed,
        "properties": {"status": rev.status},
    });
    if !rev.reason.is_empty() {
        invocation["toolExecutionNotifications"] = json!([{
            "level": if rev.status == Status::Completed { "note" } else { "error" },
            "message": {"text": rev.reason},
        }]);
    }
    json!({
        "tool": {"driver": {
            "name": format!("spar/{}", rev.name),
            "fullName": format!("git spar reviewer {} ({})", rev.name, rev.preset),
            "version": env!("CARGO_PKG_VERSION"),
            "rules": rules,
        }},
        "automationDetails": {"id": format!("spar/{}/{}/{}", r.series, rev.name, r.round)},
        "invocations": [invocation],
        "results": results,
        "properties": props,
    })
}

fn result(v: &RoundView, f: &Finding, rule_index: usize) -> Value {
    let triage = v.disposition(&f.id);
    let mut text = f.claim.clone();
    if !f.failure_scenario.trim().is_empty() {
        text.push_str("\n\nFailure scenario: ");
        text.push_str(&f.failure_scenario);
    }
    let mut res = json!({
        "ruleId": f.angle,
        "ruleIndex": rule_index,
        "level": level(&f.class),
        "message": {"text": text},
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(f)},
        "properties": {
            "findingId": f.id,
            "reviewerId": f.reviewer_id,
            "class": f.class,
            "proposedClass": f.proposed_class,
            "classReason": f.class_reason,
            "triage": triage,
            "autoDeferred": f.auto_deferred,
            "inCheckPaths": f.in_check_paths,
            "location": f.location,
            "locationUnreadable": f.location_unreadable,
            "evidence": f.evidence,
            "linkKind": f.link_kind,
            "link": f.link,
            "confidence": f.confidence,
            "smallestFix": f.smallest_fix,
        },
    });
    if !f.location_unreadable && !f.path.is_empty() {
        let mut physical = json!({
            "artifactLocation": {"uri": path_uri(&f.path), "uriBaseId": "%SRCROOT%"},
        });
        if let Some((start, end)) = f.lines {
            if start >= 1 {
                physical["region"] = json!({"startLine": start, "endLine": end.max(start)});
            }
        }
        res["locations"] = json!([{"physicalLocation": physical}]);
    }
    if let Some(d) = triage {
        let entry = &v.triage[&f.id];
        let detail = [
            "evidence",
            "to",
            "user_quote",
            "of",
            "passed_after",
            "commit",
        ]
        .iter()
        .filter_map(|k| entry.get(*k).and_then(Value::as_str).map(|s| (*k, s)))
        .map(|(k, s)| format!("{k}: {s}"))
        .collect::<Vec<_>>()
        .join("; ");
        res["suppressions"] = json!([{
            "kind": "external",
            "status": "accepted",
            "justification": if detail.is_empty() { format!("triaged {d}") } else { format!("triaged {d}: {detail}") },
        }]);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_the_decided_class() {
        assert_eq!(level(&Word::new("defect")), "error");
        assert_eq!(level(&Word::new("requirement-question")), "error");
        assert_eq!(level(&Word::new("hardening")), "warning");
        assert_eq!(level(&Word::new("note")), "note");
    }

    #[test]
    fn uris_encode_what_a_uri_cannot_hold() {
        assert_eq!(path_uri("src/a b#c%.py"), "src/a%20b%23c%25.py");
        assert_eq!(path_uri("é.txt"), "%C3%A9.txt");
        assert_eq!(path_uri("src/lib.rs"), "src/lib.rs");
    }
}
