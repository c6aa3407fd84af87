//! Unit tests of every check kind against real files, processes, sockets and databases.

use super::*;
use crate::contract::schema::{Expect, PathSpec};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::thread;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    if let Some(parent) = p.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(p, text).unwrap();
}

fn check(spec: Value, kind: &str, root: &Path) -> Outcome {
    let kind: crate::contract::schema::CheckKind = serde_json::from_value(json!(kind)).unwrap();
    let spec = CheckSpec::parse(kind, &spec, "spec").unwrap();
    run_check(&spec, root)
}

fn prereq(spec: Value, kind: &str, root: &Path) -> Outcome {
    let kind: crate::contract::schema::PrereqKind = serde_json::from_value(json!(kind)).unwrap();
    let spec = PrereqSpec::parse(kind, &spec, "spec").unwrap();
    run_prerequisite(&spec, root)
}

/// A port nothing listens on: bound, then let go.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Answers every request on `listener` with `status`, forever (the thread ends with the
/// test process).
fn serve(listener: TcpListener, status: u16) {
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                if line == "\r\n" || line == "\n" {
                    break;
                }
                line.clear();
            }
            let body = format!("status {status}\n");
            let _ = write!(
                    stream,
                    "HTTP/1.1 {status} Whatever\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
        }
    });
}

/// An HTTP server on 127.0.0.1 answering `status`; its base URL.
fn server(status: u16) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    serve(l, status);
    url
}

// file_exists

#[test]
fn file_exists_pass_and_fail() {
    let d = tmp();
    write(d.path(), "src/main.rs", "fn main() {}\n");
    let o = check(json!({"path": "src/main.rs"}), "file_exists", d.path());
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(o.evidence["type"], "file");
    assert_eq!(o.evidence["size"], 13);

    let o = check(
        json!({"path": "src", "type": "dir"}),
        "file_exists",
        d.path(),
    );
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(o.evidence["type"], "dir");

    let o = check(
        json!({"path": "src", "type": "file"}),
        "file_exists",
        d.path(),
    );
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert!(o.summary.contains("is a dir, not a file"), "{}", o.summary);

    let o = check(json!({"path": "src/lib.rs"}), "file_exists", d.path());
    assert_eq!(o.status, Status::Fail);
    assert_eq!(o.summary, r#""src/lib.rs" is missing"#);
}

// command_success

#[test]
fn command_success_pass_and_fail() {
    let d = tmp();
    let o = check(
        json!({"command": "echo hello; echo oops >&2"}),
        "command_success",
        d.path(),
    );
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert!(o.summary.starts_with("exit 0 in "), "{}", o.summary);
    assert_eq!(o.evidence["exitCode"], 0);
    assert_eq!(o.evidence["stdoutTail"], "hello\n");
    assert_eq!(o.evidence["stderrTail"], "oops\n");
    assert_eq!(o.evidence["timedOut"], false);

    let o = check(
        json!({"command": "echo 'tests failed' >&2; exit 3"}),
        "command_success",
        d.path(),
    );
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert!(o.summary.starts_with("exit 3 in "), "{}", o.summary);
    assert!(
        o.summary.ends_with("expected 0: tests failed"),
        "{}",
        o.summary
    );

    let o = check(
        json!({"command": "exit 3", "expectExitCode": 3}),
        "command_success",
        d.path(),
    );
    assert_eq!(o.status, Status::Pass, "{o:?}");
}

#[test]
fn command_success_cwd_and_env() {
    let d = tmp();
    write(d.path(), "sub/marker", "");
    let o = check(
        json!({"command": "test -f marker && test \"$GREETING\" = hi", "cwd": "sub", "env": {"GREETING": "hi"}}),
        "command_success",
        d.path(),
    );
    assert_eq!(o.status, Status::Pass, "{o:?}");

    let o = check(
        json!({"command": "exit 1", "cwd": "no-such-dir"}),
        "command_success",
        d.path(),
    );
    assert_eq!(o.status, Status::Error, "{o:?}");
}

#[test]
fn command_not_found_is_an_error() {
    let d = tmp();
    let o = check(
        json!({"command": "definitely-not-a-command-4711"}),
        "command_success",
        d.path(),
    );
    assert_eq!(o.status, Status::Error, "{o:?}");
    assert_eq!(o.evidence["exitCode"], 127);
    assert!(o.summary.contains("command not found"), "{}", o.summary);

    let o = check(
        json!({"command": "definitely-not-a-command-4711", "expectExitCode": 127}),
        "command_success",
        d.path(),
    );
    assert_eq!(o.status, Status::Pass, "{o:?}");
}

/// True when `pid` is gone (or a zombie waiting to be reaped: it no longer runs).
fn process_gone(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    if r != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
        return true;
    }
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

#[test]
fn command_timeout_kills_grandchildren() {
    let d = tmp();
    let o = check(
        json!({"command": "sleep 30 & echo $! > pidfile; wait", "timeoutMs": 300}),
        "command_success",
        d.path(),
    );
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert_eq!(o.evidence["timedOut"], true);
    assert!(o.summary.starts_with("timed out after"), "{}", o.summary);
    assert!(o.duration_ms < 5_000, "{o:?}");
    let pid: i32 = fs::read_to_string(d.path().join("pidfile"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    while !process_gone(pid) {
        assert!(
            Instant::now() < deadline,
            "grandchild {pid} outlived the timeout"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn runtime_command_uses_its_fields() {
    let d = tmp();
    let cmd: RuntimeCommand = serde_json::from_value(json!({
        "name": "smoke", "command": "echo \"$X\"; exit 2", "env": {"X": "y"}, "expectExitCode": 2
    }))
    .unwrap();
    let o = run_runtime_command(&cmd, d.path());
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(o.evidence["stdoutTail"], "y\n");

    let cmd: RuntimeCommand =
        serde_json::from_value(json!({"name": "smoke", "command": "exit 2"})).unwrap();
    let o = run_runtime_command(&cmd, d.path());
    assert_eq!(o.status, Status::Fail, "{o:?}");
}

// regex_in_file

#[test]
fn regex_in_file_pass_fail_negate() {
    let d = tmp();
    write(
        d.path(),
        "src/lib.rs",
        "// header\npub fn login() {}\nfn other() {}\n",
    );
    let o = check(
        json!({"path": "src/lib.rs", "pattern": "^pub fn login"}),
        "regex_in_file",
        d.path(),
    );
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(o.evidence["line"], 2);
    assert_eq!(o.evidence["text"], "pub fn login() {}");

    let o = check(
        json!({"path": "src/lib.rs", "pattern": "^fn logout"}),
        "regex_in_file",
        d.path(),
    );
    assert_eq!(o.status, Status::Fail, "{o:?}");

    let o = check(
        json!({"path": "src/lib.rs", "pattern": "todo!\\(", "negate": true}),
        "regex_in_file",
        d.path(),
    );
    assert_eq!(o.status, Status::Pass, "{o:?}");

    let o = check(
        json!({"path": "src/lib.rs", "pattern": "fn other", "negate": true}),
        "regex_in_file",
        d.path(),
    );
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert_eq!(o.evidence["line"], 3);
}

#[test]
fn regex_in_file_missing_file_and_bad_regex() {
    let d = tmp();
    for negate in [false, true] {
        let o = check(
            json!({"path": "nope.txt", "pattern": "x", "negate": negate}),
            "regex_in_file",
            d.path(),
        );
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(o.summary, r#""nope.txt" is missing"#);
    }
    write(d.path(), "a.txt", "x");
    let spec = CheckSpec::RegexInFile(RegexSpec {
        path: "a.txt".into(),
        pattern: "(unclosed".into(),
        negate: None,
    });
    let o = run_check(&spec, d.path());
    assert_eq!(o.status, Status::Error, "{o:?}");
}

// http_status

#[test]
fn http_status_pass_and_fail() {
    let ok = server(200);
    let o = check(
        json!({"url": format!("{ok}/health")}),
        "http_status",
        Path::new("."),
    );
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(o.evidence["status"], 200);
    assert_eq!(o.evidence["attempts"], 1);

    let down = server(503);
    let o = check(
        json!({"url": format!("{down}/health"), "retryForMs": 500}),
        "http_status",
        Path::new("."),
    );
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert_eq!(o.evidence["status"], 503);
    let attempts = o.evidence["attempts"].as_u64().unwrap();
    assert!(attempts >= 2, "{o:?}");
    assert!(
        o.summary.contains(&format!(
            "expected status 200, got 503 after {attempts} attempts"
        )),
        "{}",
        o.summary
    );

    let o = check(
        json!({"url": format!("{down}/health"), "expectStatus": 503, "method": "POST"}),
        "http_status",
        Path::new("."),
    );
    assert_eq!(o.status, Status::Pass, "{o:?}");
}

#[test]
fn http_status_retries_until_the_server_comes_up() {
    let port = closed_port();
    thread::spawn(move || {
        thread::sleep(Duration::from_millis(700));
        serve(TcpListener::bind(("127.0.0.1", port)).unwrap(), 200);
    });
    let o = check(
        json!({"url": format!("http://127.0.0.1:{port}/"), "retryForMs": 10000}),
        "http_status",
        Path::new("."),
    );
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert!(o.evidence["attempts"].as_u64().unwrap() >= 2, "{o:?}");
    assert!(o.duration_ms >= 600, "{o:?}");
}

#[test]
fn http_status_refused_and_https() {
    let port = closed_port();
    let o = check(
        json!({"url": format!("http://127.0.0.1:{port}/"), "retryForMs": 300}),
        "http_status",
        Path::new("."),
    );
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert!(o.summary.contains("no response after"), "{}", o.summary);
    assert!(o.evidence["status"].is_null());

    let o = check(
        json!({"url": "https://127.0.0.1:1/"}),
        "http_status",
        Path::new("."),
    );
    assert_eq!(o.status, Status::Error, "{o:?}");
    assert!(o.summary.contains("TLS is not built in"), "{}", o.summary);
}

// db_query

fn sqlite_db(root: &Path) {
    let conn = Connection::open(root.join("app.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, score REAL);
             INSERT INTO users (name, score) VALUES ('ada', 1.5), ('bob', 2.5), ('cy', 10);",
    )
    .unwrap();
}

/// In this process, with the drivers linked (the unit tests have no sibling executable beside
/// them; tests/cli runs the checks through it).
fn db(root: &Path, query: &str, op: &str, value: Value) -> Outcome {
    let spec = json!({"driver": "sqlite", "path": "app.db", "query": query,
                   "expect": {"op": op, "value": value}});
    let spec: DbQuerySpec = serde_json::from_value(spec).unwrap();
    run_db_query_here(&spec, root)
}

#[test]
fn db_query_pass_and_fail() {
    let d = tmp();
    sqlite_db(d.path());
    let count = "SELECT COUNT(*) FROM users";
    let o = db(d.path(), count, "==", json!(3));
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(o.evidence["value"], 3);
    assert_eq!(db(d.path(), count, ">=", json!(4)).status, Status::Fail);
    assert_eq!(db(d.path(), count, "<", json!("10")).status, Status::Pass);
    assert_eq!(db(d.path(), count, "!=", json!(2.5)).status, Status::Pass);
    let sum = "SELECT SUM(score) FROM users";
    assert_eq!(db(d.path(), sum, "==", json!(14)).status, Status::Pass);
    assert_eq!(db(d.path(), sum, ">", json!(14.5)).status, Status::Fail);
    let name = "SELECT name FROM users ORDER BY id LIMIT 1";
    assert_eq!(db(d.path(), name, "==", json!("ada")).status, Status::Pass);
    let o = db(d.path(), name, "==", json!("bob"));
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert_eq!(o.summary, r#"got "ada", expected == "bob""#);
}

#[test]
fn db_query_failing_first_states() {
    let d = tmp();
    // Missing file: not created by the check.
    let o = db(d.path(), "SELECT 1", "==", json!(1));
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert!(!d.path().join("app.db").exists());

    sqlite_db(d.path());
    let o = db(d.path(), "SELECT COUNT(*) FROM orders", "==", json!(0));
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert!(o.summary.contains("no such table: orders"), "{}", o.summary);

    let o = db(
        d.path(),
        "SELECT id FROM users WHERE name = 'zed'",
        "==",
        json!(1),
    );
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert!(o.summary.contains("no row"), "{}", o.summary);

    let o = db(d.path(), "SELECT NULL", "!=", json!(1));
    assert_eq!(o.status, Status::Fail, "{o:?}");

    // Read-only: a write is refused, and the table is unchanged.
    let o = db(d.path(), "DELETE FROM users RETURNING id", ">", json!(0));
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert_eq!(
        db(d.path(), "SELECT COUNT(*) FROM users", "==", json!(3)).status,
        Status::Pass
    );
}

#[test]
fn db_query_postgres_unreachable_is_a_failure() {
    let port = std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let spec = CheckSpec::DbQuery(DbQuerySpec {
        driver: DbDriver::Postgres,
        path: None,
        url: Some(format!("postgres://app:s3cret@127.0.0.1:{port}/x")),
        query: "SELECT 1".into(),
        expect: Expect {
            op: CompareOp::Eq,
            value: json!(1),
        },
    });
    let CheckSpec::DbQuery(db_spec) = &spec else {
        unreachable!()
    };
    let o = run_db_query_here(db_spec, Path::new("."));
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert!(
        o.summary
            .contains("cannot connect to postgres://app:***@127.0.0.1"),
        "{o:?}"
    );
    assert!(!o.summary.contains("s3cret"));
}

/// `run_check` does not query in-process: it hands the spec to `rails-spar-extras` beside the
/// running executable. The unit-test binary has none beside it, so the check cannot be carried
/// out, and says which file is missing.
#[test]
fn db_query_runs_in_the_sibling_executable() {
    let d = tmp();
    sqlite_db(d.path());
    let o = check(
        json!({"driver": "sqlite", "path": "app.db", "query": "SELECT 1",
               "expect": {"op": "==", "value": 1}}),
        "db_query",
        d.path(),
    );
    assert_eq!(o.status, Status::Error, "{o:?}");
    assert!(o.summary.contains("rails-spar-extras is missing"), "{o:?}");
    assert!(o.summary.contains("cargo install --locked --path"), "{o:?}");
}

// process_listening and port_open

#[test]
fn process_listening_pass_and_fail() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let o = check(
        json!({"port": port, "host": "127.0.0.1"}),
        "process_listening",
        Path::new("."),
    );
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(o.evidence["address"], format!("127.0.0.1:{port}"));

    // Default host: localhost, every address it resolves to is tried.
    let o = check(json!({"port": port}), "process_listening", Path::new("."));
    assert_eq!(o.status, Status::Pass, "{o:?}");

    let o = prereq(json!({"port": port}), "port_open", Path::new("."));
    assert_eq!(o.status, Status::Pass, "{o:?}");

    drop(l);
    let o = check(
        json!({"port": port, "host": "127.0.0.1"}),
        "process_listening",
        Path::new("."),
    );
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert!(o.summary.starts_with("nothing listens on"), "{}", o.summary);
    let o = prereq(json!({"port": closed_port()}), "port_open", Path::new("."));
    assert_eq!(o.status, Status::Fail, "{o:?}");
}

// artifact_schema

const SCHEMA: &str = r#"{
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["name", "tags"],
        "properties": {
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "meta": {"$ref": "meta.schema.json"}
        },
        "$defs": {"unused": {"prefixItems": [{"type": "integer"}]}}
    }"#;

#[test]
fn artifact_schema_pass_and_fail() {
    let d = tmp();
    write(d.path(), "schemas/out.schema.json", SCHEMA);
    write(
        d.path(),
        "schemas/meta.schema.json",
        r#"{"type": "object", "required": ["v"]}"#,
    );
    write(
        d.path(),
        "out/good.json",
        r#"{"name": "x", "tags": ["a"], "meta": {"v": 1}}"#,
    );
    write(
        d.path(),
        "out/bad.json",
        r#"{"name": 5, "tags": ["a", 7], "meta": {}}"#,
    );
    let spec = |path: &str| json!({"path": path, "schema": "schemas/out.schema.json"});

    let o = check(spec("out/good.json"), "artifact_schema", d.path());
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(o.evidence["errors"], json!([]));

    let o = check(spec("out/bad.json"), "artifact_schema", d.path());
    assert_eq!(o.status, Status::Fail, "{o:?}");
    let errors = o.evidence["errors"].as_array().unwrap();
    let mut at: Vec<&str> = errors
        .iter()
        .map(|e| e["instancePath"].as_str().unwrap())
        .collect();
    at.sort_unstable();
    assert_eq!(at, ["/meta", "/name", "/tags/1"], "{errors:?}");
    assert!(o.summary.contains("3 validation errors"), "{}", o.summary);

    write(d.path(), "out/broken.json", "{not json");
    let o = check(spec("out/broken.json"), "artifact_schema", d.path());
    assert_eq!(o.status, Status::Fail, "{o:?}");
    let o = check(spec("out/absent.json"), "artifact_schema", d.path());
    assert_eq!(o.status, Status::Fail, "{o:?}");
}

#[test]
fn artifact_schema_bad_schema_is_an_error() {
    let d = tmp();
    write(d.path(), "a.json", "{}");
    write(d.path(), "bad.schema.json", r#"{"type": "no-such-type"}"#);
    write(d.path(), "notjson.schema.json", "{");
    for schema in [
        "bad.schema.json",
        "notjson.schema.json",
        "absent.schema.json",
    ] {
        let o = check(
            json!({"path": "a.json", "schema": schema}),
            "artifact_schema",
            d.path(),
        );
        assert_eq!(o.status, Status::Error, "{schema}: {o:?}");
    }
}

/// `artifact_schema` of a frozen contract: `files` are the frozen copies, `root` holds the
/// artifact.
fn frozen_schema_check(root: &Path, files: &[(&str, &str)], schema: &str) -> Outcome {
    let files: BTreeMap<String, Vec<u8>> = files
        .iter()
        .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
        .collect();
    let spec = ArtifactSchemaSpec {
        path: "out.json".into(),
        schema: schema.into(),
    };
    artifact_schema(&spec, root, Some(&files))
}

#[test]
fn artifact_schema_ref_to_a_file_not_frozen_is_refused() {
    let d = tmp();
    write(d.path(), "out.json", "{}");
    // The work tree holds the referenced file; only the frozen copies count.
    write(d.path(), "schemas/defs.json", r#"{"type": "object"}"#);
    let o = frozen_schema_check(
        d.path(),
        &[("schemas/out.schema.json", r#"{"$ref": "defs.json"}"#)],
        "schemas/out.schema.json",
    );
    assert_eq!(o.status, Status::Error, "{o:?}");
    assert!(
        o.summary
            .contains("schemas/defs.json was not frozen with the contract"),
        "{}",
        o.summary
    );
    let o = frozen_schema_check(
        d.path(),
        &[
            ("schemas/out.schema.json", r#"{"$ref": "defs.json"}"#),
            ("schemas/defs.json", r#"{"type": "object"}"#),
        ],
        "schemas/out.schema.json",
    );
    assert_eq!(o.status, Status::Pass, "{o:?}");
}

#[test]
fn artifact_schema_http_ref_is_refused_without_a_connection() {
    let d = tmp();
    write(d.path(), "out.json", "{}");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for scheme in ["http", "https"] {
        let schema = format!(r#"{{"$ref": "{scheme}://127.0.0.1:{port}/s.json"}}"#);
        write(d.path(), "s.schema.json", &schema);
        for o in [
            check(
                json!({"path": "out.json", "schema": "s.schema.json"}),
                "artifact_schema",
                d.path(),
            ),
            frozen_schema_check(d.path(), &[("s.schema.json", &schema)], "s.schema.json"),
        ] {
            assert_eq!(o.status, Status::Error, "{o:?}");
            assert!(
                o.summary.contains(&format!("{scheme}://127.0.0.1")),
                "{}",
                o.summary
            );
        }
    }
    // Nothing connected: the refusal came before any network call.
    assert_eq!(
        listener.accept().map_err(|e| e.kind()).err(),
        Some(io::ErrorKind::WouldBlock)
    );
}

#[test]
fn artifact_schema_is_draft_2020_12_whatever_its_schema_says() {
    let d = tmp();
    // `prefixItems` and `$defs` are 2020-12 keywords: draft-07 ignores the first.
    let body = r##""type": "array", "prefixItems": [{"$ref": "#/$defs/n"}],
        "$defs": {"n": {"type": "integer"}}"##;
    for declared in [
        "",
        r#""$schema": "http://json-schema.org/draft-07/schema#","#,
    ] {
        write(d.path(), "a.schema.json", &format!("{{{declared} {body}}}"));
        let spec = json!({"path": "out.json", "schema": "a.schema.json"});
        write(d.path(), "out.json", r#"[1, "x"]"#);
        let o = check(spec.clone(), "artifact_schema", d.path());
        assert_eq!(o.status, Status::Pass, "{declared}: {o:?}");
        write(d.path(), "out.json", r#"["x", 1]"#);
        let o = check(spec, "artifact_schema", d.path());
        assert_eq!(o.status, Status::Fail, "{declared}: {o:?}");
        assert_eq!(
            o.evidence["errors"],
            json!([{"instancePath": "/0", "message": "want integer, but got string"}])
        );
        assert!(
            o.summary
                .ends_with("1 validation error; first at /0: want integer, but got string"),
            "{}",
            o.summary
        );
    }
}

// manual_checklist

const CHECKLIST: &str = "# Review\n\
        - [x] UI reviewed\n\
        * [X] Copy approved\n\
        \x20\x201. [ ] Accessibility pass\n\
        - [ ] Docs updated\n\
        ```\n\
        - [ ] inside a fence, not an item\n\
        ```\n\
        - not a checkbox\n";

#[test]
fn manual_checklist_all_items() {
    let d = tmp();
    write(d.path(), "review.md", CHECKLIST);
    let o = check(json!({"path": "review.md"}), "manual_checklist", d.path());
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert_eq!(
        o.evidence["unticked"],
        json!(["Accessibility pass", "Docs updated"])
    );
    assert_eq!(
        o.summary,
        r#"2 unticked items: "Accessibility pass", "Docs updated""#
    );

    write(d.path(), "done.md", "- [x] a\n- [X] b\n");
    let o = check(json!({"path": "done.md"}), "manual_checklist", d.path());
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(o.summary, r#"2 of 2 items ticked in "done.md""#);

    write(d.path(), "empty.md", "# nothing to tick\n");
    let o = check(json!({"path": "empty.md"}), "manual_checklist", d.path());
    assert_eq!(o.status, Status::Fail, "{o:?}");

    let o = check(json!({"path": "absent.md"}), "manual_checklist", d.path());
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert_eq!(o.summary, r#""absent.md" is missing"#);
}

#[test]
fn manual_checklist_listed_items() {
    let d = tmp();
    write(d.path(), "review.md", CHECKLIST);
    let o = check(
        json!({"path": "review.md", "items": ["UI reviewed", " Copy approved "]}),
        "manual_checklist",
        d.path(),
    );
    assert_eq!(o.status, Status::Pass, "{o:?}");

    let o = check(
        json!({"path": "review.md", "items": ["UI reviewed", "Docs updated", "Load test"]}),
        "manual_checklist",
        d.path(),
    );
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert_eq!(o.evidence["unticked"], json!(["Docs updated"]));
    assert_eq!(o.evidence["missing"], json!(["Load test"]));
    assert!(
        o.summary
            .contains(r#"1 listed item not in "review.md": "Load test""#),
        "{}",
        o.summary
    );
}

// prerequisites

#[test]
fn command_exists_pass_and_fail() {
    let d = tmp();
    let o = prereq(json!({"command": "sh"}), "command_exists", d.path());
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert!(o.evidence["path"].as_str().unwrap().ends_with("/sh"));

    let o = prereq(
        json!({"command": "no-such-tool-4711"}),
        "command_exists",
        d.path(),
    );
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert_eq!(o.summary, r#""no-such-tool-4711" is not on PATH"#);

    write(d.path(), "bin/tool", "#!/bin/sh\n");
    let o = prereq(json!({"command": "./bin/tool"}), "command_exists", d.path());
    assert_eq!(o.status, Status::Fail, "not executable yet: {o:?}");
    fs::set_permissions(d.path().join("bin/tool"), fs::Permissions::from_mode(0o755)).unwrap();
    let o = prereq(json!({"command": "./bin/tool"}), "command_exists", d.path());
    assert_eq!(o.status, Status::Pass, "{o:?}");
}

#[test]
fn env_var_never_shows_the_value() {
    // Names unique to this test: the environment is shared by every test thread.
    std::env::set_var("RAILS_CHECKS_TEST_SECRET", "s3cr3t-value");
    std::env::set_var("RAILS_CHECKS_TEST_EMPTY", "");
    let root = Path::new(".");
    let o = prereq(json!({"name": "RAILS_CHECKS_TEST_SECRET"}), "env_var", root);
    assert_eq!(o.status, Status::Pass, "{o:?}");
    let o2 = prereq(
        json!({"name": "RAILS_CHECKS_TEST_SECRET", "pattern": "^s[0-9]cr"}),
        "env_var",
        root,
    );
    assert_eq!(o2.status, Status::Pass, "{o2:?}");
    let o3 = prereq(
        json!({"name": "RAILS_CHECKS_TEST_SECRET", "pattern": "^sk_live_"}),
        "env_var",
        root,
    );
    assert_eq!(o3.status, Status::Fail, "{o3:?}");
    for o in [&o, &o2, &o3] {
        assert!(!o.summary.contains("s3cr3t"), "{}", o.summary);
        assert!(!o.evidence.to_string().contains("s3cr3t"), "{}", o.evidence);
    }
    let o = prereq(json!({"name": "RAILS_CHECKS_TEST_UNSET"}), "env_var", root);
    assert_eq!(o.status, Status::Fail, "{o:?}");
    assert_eq!(o.summary, "$RAILS_CHECKS_TEST_UNSET is not set");
    let o = prereq(json!({"name": "RAILS_CHECKS_TEST_EMPTY"}), "env_var", root);
    assert_eq!(o.status, Status::Fail, "{o:?}");
}

#[test]
fn file_exists_prerequisite() {
    let d = tmp();
    write(d.path(), ".env.example", "X=1\n");
    let spec = |p: &str| PrereqSpec::FileExists(PathSpec { path: p.into() });
    assert_eq!(
        run_prerequisite(&spec(".env.example"), d.path()).status,
        Status::Pass
    );
    assert_eq!(
        run_prerequisite(&spec(".env"), d.path()).status,
        Status::Fail
    );
}

#[test]
fn http_reachable_any_status_counts() {
    let url = server(503);
    let o = prereq(json!({"url": url}), "http_reachable", Path::new("."));
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(o.evidence["status"], 503);

    let port = closed_port();
    let o = prereq(
        json!({"url": format!("http://127.0.0.1:{port}/"), "timeoutMs": 1000}),
        "http_reachable",
        Path::new("."),
    );
    assert_eq!(o.status, Status::Fail, "{o:?}");
}

#[test]
fn db_value_comparisons() {
    use std::cmp::Ordering::*;
    let cmp = compare_db_value;
    assert_eq!(cmp(&DbValue::Integer(10), &json!("9")), Some(Greater));
    assert_eq!(cmp(&DbValue::Text("10".into()), &json!("9")), Some(Less));
    assert_eq!(cmp(&DbValue::Text("10".into()), &json!(9)), Some(Greater));
    assert_eq!(cmp(&DbValue::Real(2.0), &json!(2)), Some(Equal));
    assert_eq!(
        cmp(&DbValue::Integer(i64::MAX), &json!(i64::MAX - 1)),
        Some(Greater)
    );
    assert_eq!(cmp(&DbValue::Null, &json!(0)), None);
}
