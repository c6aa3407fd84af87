//! Every DoD kind and every prerequisite kind, each passing and failing against real things,
//! through `git rails contract validate --draft`.

use std::time::Duration;

use crate::harness::{check, free_port, http_server, http_server_after, TestRepo};
use serde_json::{json, Value};

/// Validates a draft holding one check; returns the run.
fn run_check(repo: &TestRepo, kind: &str, spec: Value) -> crate::harness::Run {
    repo.draft("S", json!([check("c", kind, spec)]));
    repo.rails(&[
        "contract",
        "validate",
        "S",
        "--draft",
        "--no-note",
        "--json",
    ])
}

#[track_caller]
fn passes(repo: &TestRepo, kind: &str, spec: Value) -> Value {
    let out = run_check(repo, kind, spec);
    out.ok();
    let doc = out.json();
    assert_eq!(doc["results"][0]["status"], "pass", "{out}");
    doc["results"][0].clone()
}

#[track_caller]
fn fails(repo: &TestRepo, kind: &str, spec: Value) -> Value {
    let out = run_check(repo, kind, spec);
    out.code(1);
    let doc = out.json();
    assert_ne!(doc["results"][0]["status"], "pass", "{out}");
    doc["results"][0].clone()
}

#[test]
fn file_exists() {
    let repo = TestRepo::new();
    repo.write("src/main.rs", "fn main() {}\n");
    let r = passes(
        &repo,
        "file_exists",
        json!({"path": "src/main.rs", "type": "file"}),
    );
    assert_eq!(r["evidence"]["size"], 13);
    passes(&repo, "file_exists", json!({"path": "src", "type": "dir"}));
    fails(&repo, "file_exists", json!({"path": "src", "type": "file"}));
    fails(&repo, "file_exists", json!({"path": "src/lib.rs"}));
}

#[test]
fn command_success() {
    let repo = TestRepo::new();
    repo.write("sub/marker", "");
    let r = passes(
        &repo,
        "command_success",
        json!({"command": "echo out; echo err >&2; test -f marker", "cwd": "sub"}),
    );
    assert_eq!(r["evidence"]["exitCode"], 0);
    assert!(r["evidence"]["stdoutTail"]
        .as_str()
        .unwrap()
        .contains("out"));
    assert!(r["evidence"]["stderrTail"]
        .as_str()
        .unwrap()
        .contains("err"));
    passes(
        &repo,
        "command_success",
        json!({"command": "test \"$GREETING\" = hi", "env": {"GREETING": "hi"}}),
    );
    passes(
        &repo,
        "command_success",
        json!({"command": "exit 4", "expectExitCode": 4}),
    );
    let r = fails(&repo, "command_success", json!({"command": "exit 2"}));
    assert_eq!(r["evidence"]["exitCode"], 2);
    // A command that is not there is not the criterion failing: it is an error.
    let r = fails(
        &repo,
        "command_success",
        json!({"command": "rails-no-such-command-xyz"}),
    );
    assert_eq!(r["status"], "error");
}

#[test]
fn regex_in_file() {
    let repo = TestRepo::new();
    repo.write(
        "tsconfig.json",
        "{\n  \"compilerOptions\": {\n    \"strict\": true\n  }\n}\n",
    );
    let pattern = "\"strict\"\\s*:\\s*true";
    let r = passes(
        &repo,
        "regex_in_file",
        json!({"path": "tsconfig.json", "pattern": pattern}),
    );
    assert_eq!(r["evidence"]["line"], 3);
    fails(
        &repo,
        "regex_in_file",
        json!({"path": "tsconfig.json", "pattern": "\"strict\"\\s*:\\s*false"}),
    );
    fails(
        &repo,
        "regex_in_file",
        json!({"path": "tsconfig.json", "pattern": pattern, "negate": true}),
    );
    passes(
        &repo,
        "regex_in_file",
        json!({"path": "tsconfig.json", "pattern": "TODO", "negate": true}),
    );
    fails(
        &repo,
        "regex_in_file",
        json!({"path": "missing.json", "pattern": pattern}),
    );
}

#[test]
fn http_status_against_a_real_server() {
    let repo = TestRepo::new();
    let ok = http_server(200);
    let down = http_server(503);
    let r = passes(
        &repo,
        "http_status",
        json!({"url": format!("http://127.0.0.1:{ok}/api/health"), "retryForMs": 3000}),
    );
    assert_eq!(r["evidence"]["status"], 200);
    let r = fails(
        &repo,
        "http_status",
        json!({"url": format!("http://127.0.0.1:{down}/api/health"), "retryForMs": 3000}),
    );
    assert_eq!(r["evidence"]["status"], 503);
    passes(
        &repo,
        "http_status",
        json!({"url": format!("http://127.0.0.1:{down}/"), "expectStatus": 503, "method": "POST", "retryForMs": 3000}),
    );
    fails(
        &repo,
        "http_status",
        json!({"url": format!("http://127.0.0.1:{}/", free_port()), "timeoutMs": 500}),
    );
    // A server that is still starting comes up within retryForMs.
    let late = http_server_after(200, Duration::from_millis(700));
    passes(
        &repo,
        "http_status",
        json!({"url": format!("http://127.0.0.1:{late}/"), "retryForMs": 10000}),
    );
}

#[test]
fn db_query_against_a_real_sqlite_file() {
    let repo = TestRepo::new();
    let db = repo.path().join("app.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("CREATE TABLE settings (k TEXT, v TEXT); INSERT INTO settings VALUES ('theme', 'dark'), ('lang', 'ko');").unwrap();
    drop(conn);
    let count = "SELECT COUNT(*) FROM settings";
    let r = passes(
        &repo,
        "db_query",
        json!({"driver": "sqlite", "path": "app.db", "query": count, "expect": {"op": ">=", "value": 1}}),
    );
    assert_eq!(r["evidence"]["value"], 2);
    passes(
        &repo,
        "db_query",
        json!({"driver": "sqlite", "path": "app.db", "query": "SELECT v FROM settings WHERE k = 'theme'", "expect": {"op": "==", "value": "dark"}}),
    );
    fails(
        &repo,
        "db_query",
        json!({"driver": "sqlite", "path": "app.db", "query": count, "expect": {"op": ">", "value": 5}}),
    );
    // A table that is not there yet is the failing-first state.
    fails(
        &repo,
        "db_query",
        json!({"driver": "sqlite", "path": "app.db", "query": "SELECT COUNT(*) FROM users", "expect": {"op": ">=", "value": 1}}),
    );
    // A missing database file is a failure, and it is not created.
    fails(
        &repo,
        "db_query",
        json!({"driver": "sqlite", "path": "none.db", "query": count, "expect": {"op": ">=", "value": 1}}),
    );
    assert!(!repo.path().join("none.db").exists());
}

#[test]
fn process_listening_on_a_real_socket() {
    let repo = TestRepo::new();
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let r = passes(
        &repo,
        "process_listening",
        json!({"port": port, "host": "127.0.0.1"}),
    );
    assert!(r["evidence"]["address"]
        .as_str()
        .unwrap()
        .contains(&port.to_string()));
    drop(listener);
    fails(
        &repo,
        "process_listening",
        json!({"port": free_port(), "host": "127.0.0.1"}),
    );
}

#[test]
fn artifact_schema_draft_2020_12() {
    let repo = TestRepo::new();
    repo.write(
        "review.schema.json",
        r##"{"$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object", "required": ["verdict", "findings"],
            "properties": {"verdict": {"enum": ["pass", "fail"]},
                           "findings": {"type": "array", "items": {"type": "string"}},
                           "meta": {"$ref": "#/$defs/meta"}},
            "$defs": {"meta": {"type": "object", "properties": {"n": {"type": "integer"}}}}}"##,
    );
    repo.write(
        "good.json",
        r#"{"verdict": "pass", "findings": ["x"], "meta": {"n": 1}}"#,
    );
    repo.write(
        "bad.json",
        r#"{"verdict": "maybe", "findings": [1], "meta": {"n": "one"}}"#,
    );
    passes(
        &repo,
        "artifact_schema",
        json!({"path": "good.json", "schema": "review.schema.json"}),
    );
    let r = fails(
        &repo,
        "artifact_schema",
        json!({"path": "bad.json", "schema": "review.schema.json"}),
    );
    let errors = r["evidence"]["errors"].as_array().unwrap();
    let paths: Vec<&str> = errors
        .iter()
        .map(|e| e["instancePath"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"/verdict"), "{errors:?}");
    assert!(paths.contains(&"/findings/0"), "{errors:?}");
    assert!(paths.contains(&"/meta/n"), "{errors:?}");
    fails(
        &repo,
        "artifact_schema",
        json!({"path": "absent.json", "schema": "review.schema.json"}),
    );
}

#[test]
fn manual_checklist() {
    let repo = TestRepo::new();
    repo.write(
        "qa.md",
        "# QA\n- [x] login works\n- [X] logout works\n  - [x] nested item\n",
    );
    passes(&repo, "manual_checklist", json!({"path": "qa.md"}));
    repo.write(
        "qa2.md",
        "# QA\n- [x] login works\n- [ ] dark mode\n* [ ] keyboard nav\n",
    );
    let r = fails(&repo, "manual_checklist", json!({"path": "qa2.md"}));
    assert_eq!(
        r["evidence"]["unticked"],
        json!(["dark mode", "keyboard nav"])
    );
    passes(
        &repo,
        "manual_checklist",
        json!({"path": "qa2.md", "items": ["login works"]}),
    );
    let r = fails(
        &repo,
        "manual_checklist",
        json!({"path": "qa2.md", "items": ["login works", "payments"]}),
    );
    assert_eq!(r["evidence"]["missing"], json!(["payments"]));
    fails(&repo, "manual_checklist", json!({"path": "nope.md"}));
}

/// Validates a draft whose only prerequisite is `p`; returns the exit code.
fn prereq_code(repo: &TestRepo, kind: &str, spec: Value, env: &[(&str, &str)]) -> i32 {
    repo.write("a.txt", "a\n");
    repo.draft_with(
        "S",
        json!([check("a", "file_exists", json!({"path": "a.txt"}))]),
        json!({"environmentPrerequisites": [{"name": "p", "check": kind, "spec": spec, "reason": "needed"}]}),
    );
    repo.rails_env(&["contract", "validate", "S", "--draft", "--no-note"], env)
        .code
}

#[test]
fn prerequisites_pass_and_abort() {
    let repo = TestRepo::new();
    assert_eq!(
        prereq_code(&repo, "command_exists", json!({"command": "git"}), &[]),
        0
    );
    assert_eq!(
        prereq_code(
            &repo,
            "command_exists",
            json!({"command": "no-such-tool-xyz"}),
            &[]
        ),
        3
    );

    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    assert_eq!(
        prereq_code(
            &repo,
            "port_open",
            json!({"port": port, "host": "127.0.0.1"}),
            &[]
        ),
        0
    );
    assert_eq!(
        prereq_code(
            &repo,
            "port_open",
            json!({"port": free_port(), "host": "127.0.0.1"}),
            &[]
        ),
        3
    );

    let spec = json!({"name": "RAILS_TEST_TOKEN", "pattern": "^tok-[0-9]+$"});
    assert_eq!(
        prereq_code(
            &repo,
            "env_var",
            spec.clone(),
            &[("RAILS_TEST_TOKEN", "tok-42")]
        ),
        0
    );
    assert_eq!(
        prereq_code(
            &repo,
            "env_var",
            spec.clone(),
            &[("RAILS_TEST_TOKEN", "secret-value")]
        ),
        3
    );
    assert_eq!(prereq_code(&repo, "env_var", spec, &[]), 3);

    assert_eq!(
        prereq_code(&repo, "file_exists", json!({"path": "a.txt"}), &[]),
        0
    );
    assert_eq!(
        prereq_code(
            &repo,
            "file_exists",
            json!({"path": "docker-compose.yml"}),
            &[]
        ),
        3
    );

    let up = http_server(404);
    assert_eq!(
        prereq_code(
            &repo,
            "http_reachable",
            json!({"url": format!("http://127.0.0.1:{up}/")}),
            &[]
        ),
        0
    );
    assert_eq!(
        prereq_code(
            &repo,
            "http_reachable",
            json!({"url": format!("http://127.0.0.1:{}/", free_port()), "timeoutMs": 500}),
            &[]
        ),
        3
    );
}

#[test]
fn env_var_values_never_reach_the_report() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.draft_with(
        "S",
        json!([check("a", "file_exists", json!({"path": "a.txt"}))]),
        json!({"environmentPrerequisites": [{"name": "p", "check": "env_var", "spec": {"name": "RAILS_TEST_SECRET", "pattern": "^x"}, "reason": "r"}]}),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    let out = repo.rails_env(
        &["contract", "validate", "S", "--json"],
        &[("RAILS_TEST_SECRET", "hunter2-secret")],
    );
    out.code(3);
    assert!(!out.stdout.contains("hunter2"), "{out}");
    assert!(!repo
        .git(&["notes", "--ref=rails", "show", "HEAD"])
        .contains("hunter2"));
}

/// PostgreSQL runs when `.ci/run` could install and start it; it exports
/// `RAILS_TEST_POSTGRES_URL`. Without it the test says so and checks only the refusal path.
#[test]
fn db_query_against_a_real_postgres() {
    let repo = TestRepo::new();
    let Ok(url) = std::env::var("RAILS_TEST_POSTGRES_URL") else {
        eprintln!("RAILS_TEST_POSTGRES_URL is not set: skipping the live PostgreSQL part");
        let r = fails(
            &repo,
            "db_query",
            json!({"driver": "postgres", "url": format!("postgres://u:p@127.0.0.1:{}/db", free_port()), "query": "SELECT 1", "expect": {"op": "==", "value": 1}}),
        );
        assert!(r["summary"].as_str().unwrap().contains("cannot connect"));
        return;
    };
    let schema = format!("rails_test_{}", std::process::id());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};
             CREATE TABLE {schema}.settings (k text, v text);
             INSERT INTO {schema}.settings VALUES ('theme', 'dark'), ('lang', 'ko');"
        ))
        .unwrap();
    let count = format!("SELECT COUNT(*) FROM {schema}.settings");
    let r = passes(
        &repo,
        "db_query",
        json!({"driver": "postgres", "url": url, "query": count, "expect": {"op": "==", "value": 2}}),
    );
    assert_eq!(r["evidence"]["value"], "2");
    passes(
        &repo,
        "db_query",
        json!({"driver": "postgres", "url": url, "query": format!("SELECT v FROM {schema}.settings WHERE k = 'lang'"), "expect": {"op": "==", "value": "ko"}}),
    );
    fails(
        &repo,
        "db_query",
        json!({"driver": "postgres", "url": url, "query": count, "expect": {"op": ">", "value": 2}}),
    );
    fails(
        &repo,
        "db_query",
        json!({"driver": "postgres", "url": url, "query": format!("SELECT COUNT(*) FROM {schema}.users"), "expect": {"op": ">=", "value": 1}}),
    );
    // The session is read-only: a query that writes fails and changes nothing.
    fails(
        &repo,
        "db_query",
        json!({"driver": "postgres", "url": url, "query": format!("INSERT INTO {schema}.settings VALUES ('x', 'y') RETURNING 1"), "expect": {"op": "==", "value": 1}}),
    );
    let n: i64 = client.query_one(&count, &[]).unwrap().get(0);
    assert_eq!(n, 2);
    client
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .unwrap();
}
