//! The schema is strict: every refusal exits 65 with the JSON path of the problem, and
//! nothing is written.

use crate::harness::{check, contract, TestRepo};
use serde_json::{json, Value};

/// Writes `doc` as the draft of S, freezes, and returns stderr after asserting 65 and that
/// no ref was created.
#[track_caller]
fn refused(doc: &Value) -> String {
    let repo = TestRepo::new();
    repo.write(
        ".rails/contracts/S.json",
        &serde_json::to_string_pretty(doc).unwrap(),
    );
    let out = repo.rails(&["contract", "freeze", "S"]);
    out.code(65);
    repo.git_run(&["rev-parse", "--verify", "-q", "refs/rails/contracts/S"])
        .code(1);
    assert!(
        out.stderr.contains("git rails contract edit S"),
        "no next step:\n{out}"
    );
    out.stderr
}

fn good() -> Value {
    contract(
        "S",
        json!([check("a", "file_exists", json!({"path": "a.txt"}))]),
    )
}

#[test]
fn unknown_key_anywhere() {
    let mut d = good();
    d["extra"] = json!(1);
    assert!(refused(&d).contains("  extra: unknown key"));
    let mut d = good();
    d["dod"]["checks"][0]["spec"]["color"] = json!("red");
    assert!(refused(&d).contains("dod.checks[0].spec.color: unknown key"));
    let mut d = good();
    d["approvalGates"]["ship"] = json!(true);
    assert!(refused(&d).contains("approvalGates.ship: unknown key"));
}

#[test]
fn wrong_types() {
    let mut d = good();
    d["dod"]["checks"][0]["blocking"] = json!("no");
    assert!(refused(&d).contains("dod.checks[0].blocking: invalid type"));
    let mut d = good();
    d["type"] = json!("epic");
    assert!(refused(&d).contains("type: unknown variant `epic`"));
    let mut d = good();
    d["version"] = json!("v2");
    assert!(refused(&d).contains("version: unknown variant `v2`"));
    let mut d = good();
    d["runtimeValidation"]["commands"] =
        json!([{"name": "x", "command": "make", "timeoutMs": "soon"}]);
    assert!(refused(&d).contains("runtimeValidation.commands[0].timeoutMs: invalid type"));
    let mut d = good();
    d["id"] = json!("not-a-ulid");
    assert!(refused(&d).contains("id: \"not-a-ulid\" is not a ULID"));
    let mut d = good();
    d["createdAt"] = json!("yesterday");
    assert!(refused(&d).contains("createdAt: \"yesterday\" is not an RFC 3339"));
    let mut d = good();
    d["riskFlags"] = json!(["scary"]);
    assert!(refused(&d).contains("riskFlags[0]: unknown variant `scary`"));
}

#[test]
fn missing_fields() {
    let mut d = good();
    d.as_object_mut().unwrap().remove("reviewerProfile");
    assert!(refused(&d).contains("reviewerProfile: missing"));
    let mut d = good();
    d["environmentPrerequisites"] =
        json!([{"name": "n", "check": "command_exists", "spec": {}, "reason": "r"}]);
    assert!(refused(&d).contains("environmentPrerequisites[0].spec.command: missing"));
}

#[test]
fn duplicate_check_ids_and_empty_checks() {
    let d = contract(
        "S",
        json!([
            check("a", "file_exists", json!({"path": "a"})),
            check("b", "file_exists", json!({"path": "b"})),
            check("a", "file_exists", json!({"path": "c"})),
        ]),
    );
    assert!(refused(&d)
        .contains("dod.checks[2].id: duplicate check id \"a\" (first used at dod.checks[0])"));
    let d = contract("S", json!([]));
    assert!(refused(&d).contains("dod.checks: empty"));
}

#[test]
fn each_kind_spec_is_checked() {
    let cases = [
        ("file_exists", json!({}), "spec.path: missing"),
        (
            "file_exists",
            json!({"path": "a", "type": "socket"}),
            "spec.type: unknown variant",
        ),
        (
            "command_success",
            json!({"cmd": "make"}),
            "spec.cmd: unknown key",
        ),
        (
            "regex_in_file",
            json!({"path": "a"}),
            "spec.pattern: missing",
        ),
        (
            "regex_in_file",
            json!({"path": "a", "pattern": "(unclosed"}),
            "spec.pattern: invalid regex",
        ),
        (
            "http_status",
            json!({"url": "ftp://x"}),
            "spec.url: \"ftp://x\" is not an http",
        ),
        (
            "http_status",
            json!({"url": "http://x", "expectStatus": 42}),
            "spec.expectStatus: 42 is not an HTTP status",
        ),
        (
            "http_status",
            json!({"url": "http://x", "method": "FETCH"}),
            "spec.method: \"FETCH\"",
        ),
        (
            "db_query",
            json!({"driver": "sqlite", "query": "select 1", "expect": {"op": "==", "value": 1}}),
            "spec.path: missing (sqlite needs a path)",
        ),
        (
            "db_query",
            json!({"driver": "postgres", "query": "select 1", "expect": {"op": "==", "value": 1}}),
            "spec.url: missing (postgres needs a url)",
        ),
        (
            "db_query",
            json!({"driver": "sqlite", "path": "d", "query": "q", "expect": {"op": "~", "value": 1}}),
            "spec.expect.op: unknown variant",
        ),
        (
            "db_query",
            json!({"driver": "mysql", "path": "d", "query": "q", "expect": {"op": "==", "value": 1}}),
            "spec.driver: unknown variant",
        ),
        (
            "process_listening",
            json!({"port": 70000}),
            "spec.port: invalid value",
        ),
        (
            "artifact_schema",
            json!({"path": "a.json"}),
            "spec.schema: missing",
        ),
        (
            "manual_checklist",
            json!({"path": "qa.md", "items": "all"}),
            "spec.items: invalid type",
        ),
    ];
    for (kind, spec, want) in cases {
        let d = contract("S", json!([check("a", kind, spec)]));
        let err = refused(&d);
        assert!(
            err.contains(&format!("dod.checks[0].{want}")),
            "{kind}: want {want:?} in:\n{err}"
        );
    }
}

#[test]
fn checks_that_cannot_fail_are_refused_at_freeze() {
    for cmd in ["true", ":", "exit 0", "  "] {
        let d = contract(
            "S",
            json!([check("c", "command_success", json!({"command": cmd}))]),
        );
        assert!(
            refused(&d).contains("dod.checks[0].spec.command:"),
            "{cmd:?}"
        );
    }
    let d = contract(
        "S",
        json!([check(
            "r",
            "regex_in_file",
            json!({"path": "a", "pattern": "x*"})
        )]),
    );
    assert!(refused(&d).contains("matches the empty string"));
    // With negate the same pattern is a real check ("the file has no x" is not vacuous).
    let repo = TestRepo::new();
    repo.draft(
        "S",
        json!([check(
            "r",
            "regex_in_file",
            json!({"path": "a", "pattern": "^$", "negate": true})
        )]),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();

    for schema in [
        "{}",
        "true",
        "{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\"}",
    ] {
        let repo = TestRepo::new();
        repo.write("schema.json", schema);
        repo.draft(
            "S",
            json!([check(
                "s",
                "artifact_schema",
                json!({"path": "out.json", "schema": "schema.json"})
            )]),
        );
        repo.rails(&["contract", "freeze", "S"])
            .code(65)
            .stderr_has("dod.checks[0].spec.schema: schema.json accepts every document");
        // Paths are relative to the top level, wherever the command runs from.
        repo.rails_in("deep/sub", &["contract", "freeze", "S"])
            .code(65)
            .stderr_has("accepts every document");
    }
}

#[test]
fn not_json_is_refused_with_the_line() {
    let repo = TestRepo::new();
    repo.write(
        ".rails/contracts/S.json",
        "{\n  \"version\": \"v1\",\n  oops\n}\n",
    );
    repo.rails(&["contract", "freeze", "S"])
        .code(65)
        .stderr_has("not valid JSON")
        .stderr_has("line 3");
}

#[test]
fn non_goals_are_strings_or_text_with_paths() {
    let mut d = good();
    d["nonGoals"] = json!([{"text": "no docs", "paths": []}]);
    assert!(refused(&d).contains("nonGoals[0].paths: empty"));
    let mut d = good();
    d["nonGoals"] = json!([{"text": "no docs", "paths": ["a[b"]}]);
    assert!(refused(&d).contains("nonGoals[0].paths[0]: invalid glob"));
    let mut d = good();
    d["dod"]["checks"][0]["scope"] = json!(["src/**", "b{"]);
    assert!(refused(&d).contains("dod.checks[0].scope[1]: invalid glob"));
}
