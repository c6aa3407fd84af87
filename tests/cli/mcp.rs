//! `git rails mcp`: the real binary driven over stdio by a small JSON-RPC client (initialize,
//! tools/list, tools/call). Red really records, a refusal names the next tool call and writes
//! nothing, and a cycle through tool calls satisfies `git rails gate`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use crate::evidence::{frozen, needs_file, tip};
use crate::harness::TestRepo;
use serde_json::{json, Value};

/// One running server and the client's end of its pipes.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Client {
    fn start(repo: &TestRepo, args: &[&str]) -> Client {
        Self::start_in(repo, args, repo.path())
    }

    /// Starts the server with `dir` as its working directory.
    fn start_in(repo: &TestRepo, args: &[&str], dir: &std::path::Path) -> Client {
        let mut cmd = repo.command("git-rails");
        cmd.current_dir(dir);
        cmd.arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = Client {
            child,
            stdin: Some(stdin),
            stdout,
            next: 1,
        };
        let init = c.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "rails-test", "version": "0"}
            }),
        );
        assert_eq!(init["serverInfo"]["name"], "rails", "{init}");
        assert!(init["capabilities"]["tools"].is_object(), "{init}");
        c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    fn send(&mut self, v: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its result (panics on a JSON-RPC error).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "the server closed stdout before answering {method}");
            let msg: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
            if msg["id"] == id {
                assert!(msg.get("error").is_none(), "{method}: {msg}");
                return msg["result"].clone();
            }
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": args}))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn is_error(result: &Value) -> bool {
    result["isError"] == true
}

#[test]
fn tools_list_names_every_tool_with_a_schema_for_its_arguments() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let mut c = Client::start(&repo, &[]);
    let list = c.request("tools/list", json!({}));
    let tools = list["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for want in [
        "contracts",
        "validate",
        "evidence",
        "status",
        "gate",
        "verify",
        "spar_show",
        "spar_record",
        "spar_triage",
        "spar_gate",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    // A decision only a person can make is no tool (issue 34): no waiver, no user's words.
    assert!(!names.contains(&"spar_waive"), "{names:?}");
    let triage = tools.iter().find(|t| t["name"] == "spar_triage").unwrap();
    assert!(
        triage["inputSchema"]["properties"]
            .get("user_quote")
            .is_none(),
        "{triage}"
    );
    let ev = tools.iter().find(|t| t["name"] == "evidence").unwrap();
    let schema = &ev["inputSchema"];
    assert_eq!(schema["type"], "object", "{schema}");
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        required.contains(&"kind") && required.contains(&"criterion"),
        "{schema}"
    );
    let kinds = serde_json::to_string(&schema).unwrap();
    for k in ["red", "green", "surface", "cleanup", "reopen", "recheck"] {
        assert!(kinds.contains(&format!("\"{k}\"")), "{k} not in {kinds}");
    }

    // contracts lists the frozen contract; with sprint it shows the criteria.
    let list = c.call("contracts", json!({}));
    assert!(!is_error(&list), "{list}");
    assert_eq!(
        list["structuredContent"]["schema"],
        "rails-contract-list/v1"
    );
    assert_eq!(list["structuredContent"]["sprints"][0]["sprint"], "S");
    let show = c.call("contracts", json!({"sprint": "S"}));
    assert!(text(&show).contains("criteria: c1"), "{show}");
}

#[test]
fn green_before_red_is_a_tool_error_naming_the_next_call_and_writes_nothing() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let mut c = Client::start(&repo, &[]);
    let r = c.call(
        "evidence",
        json!({"kind": "green", "sprint": "S", "criterion": "c1"}),
    );
    assert!(is_error(&r), "{r}");
    let t = text(&r);
    assert!(
        t.contains("Failing-first violation: criterion \"c1\" is pending. Capture the failure before implementing: call evidence with kind red, sprint S, criterion c1"),
        "{t}"
    );
    assert!(!t.contains("git rails evidence"), "{t}");
    assert_eq!(tip(&repo), None, "a refusal wrote the evidence ref");

    // An unknown kind is refused by the schema before anything runs.
    let bad = c.request(
        "tools/call",
        json!({"name": "evidence", "arguments": {"kind": "blue", "sprint": "S", "criterion": "c1"}}),
    );
    assert!(is_error(&bad), "{bad}");
    assert_eq!(tip(&repo), None);
}

#[test]
fn red_records_into_the_evidence_ref_after_the_check_really_fails() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let mut c = Client::start(&repo, &[]);
    let r = c.call(
        "evidence",
        json!({"kind": "red", "sprint": "S", "criterion": "c1"}),
    );
    assert!(!is_error(&r), "{r}");
    let doc = &r["structuredContent"];
    assert_eq!(doc["transition"], "red", "{doc}");
    assert_eq!(doc["criterion"], "c1");
    let after = tip(&repo).expect("red wrote refs/rails/evidence/S");
    assert_eq!(doc["commit"], after.as_str());
    assert!(text(&r).contains("c1 is now red"), "{r}");
    // The CLI sees the same record.
    let st = repo.rails(&["status", "S", "--json"]);
    st.ok();
    assert_eq!(st.json()["criteria"][0]["status"], "red", "{st}");
}

#[test]
fn a_cycle_through_tool_calls_passes_the_gate_from_another_directory_with_repo() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let elsewhere = tempfile::tempdir().unwrap();
    let path = repo.path().to_string_lossy().to_string();
    // Started outside any repository, pointed at it with --repo.
    let mut c = Client::start_in(&repo, &["--repo", &path], elsewhere.path());
    let blocked = c.call("gate", json!({"sprint": "S"}));
    assert!(!is_error(&blocked), "{blocked}");
    assert_eq!(blocked["structuredContent"]["done"], false);
    assert!(
        text(&blocked).contains("call evidence with kind red, sprint S, criterion c1"),
        "{blocked}"
    );

    let red = c.call(
        "evidence",
        json!({"kind": "red", "sprint": "S", "criterion": "c1"}),
    );
    assert!(!is_error(&red), "{red}");
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    let green = c.call(
        "evidence",
        json!({"kind": "green", "sprint": "S", "criterion": "c1"}),
    );
    assert!(!is_error(&green), "{green}");
    // surface without a note is refused with the CLI's words, and nothing is written.
    let before = tip(&repo);
    let bare = c.call(
        "evidence",
        json!({"kind": "surface", "sprint": "S", "criterion": "c1"}),
    );
    assert!(is_error(&bare), "{bare}");
    assert_eq!(tip(&repo), before);
    let surface = c.call(
        "evidence",
        json!({"kind": "surface", "sprint": "S", "criterion": "c1", "note": "PR #1"}),
    );
    assert!(!is_error(&surface), "{surface}");
    let cleanup = c.call(
        "evidence",
        json!({"kind": "cleanup", "sprint": "S", "criterion": "c1", "note": "nothing was started"}),
    );
    assert!(!is_error(&cleanup), "{cleanup}");
    repo.commit_all("feature");

    let passed = c.call("gate", json!({"sprint": "S"}));
    assert_eq!(passed["structuredContent"]["done"], true, "{passed}");
    assert!(text(&passed).starts_with("gate passed"), "{passed}");
    repo.rails(&["gate", "S"]).ok().stdout_has("gate passed");
}

#[test]
fn closing_stdin_ends_the_server_with_exit_0_and_nothing_but_protocol_on_stdout() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let mut c = Client::start(&repo, &[]);
    let r = c.call("status", json!({"sprint": "S"}));
    assert_eq!(r["structuredContent"]["sprint"], "S", "{r}");
    drop(c.stdin.take());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut c.stdout, &mut rest).unwrap();
    assert_eq!(rest, "", "stdout after the last answer");
    let status = c.child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "the server did not end cleanly");
}

#[test]
fn outside_a_repository_the_server_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let repo = TestRepo::new();
    let mut cmd = repo.command("git-rails");
    let out = cmd
        .args(["mcp", "--repo"])
        .arg(dir.path())
        .env("GIT_CEILING_DIRECTORIES", dir.path().parent().unwrap())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(65), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not in a git repository"));
    assert!(out.stdout.is_empty());
}

/// `git rails mcp` is served by `rails-spar-extras`, looked for only beside the running
/// `git-rails`: a `git-rails` alone in a folder (with the real sibling on PATH, where it is
/// never looked for) says which file is missing and how to reinstall, and exits 70.
#[test]
fn without_its_sibling_executable_mcp_names_the_missing_file_and_the_reinstall() {
    let repo = TestRepo::new();
    let alone = tempfile::tempdir().unwrap();
    let exe = alone.path().join("git-rails");
    std::fs::copy(crate::harness::bin("git-rails"), &exe).unwrap();
    let mut cmd = repo.program(&exe);
    let path = cmd
        .get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let sibling_dir = crate::harness::bin("rails-spar-extras");
    let out = cmd
        .env(
            "PATH",
            format!("{}:{path}", sibling_dir.parent().unwrap().display()),
        )
        .args(["mcp", "--repo"])
        .arg(repo.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(70), "{out:?}");
    let missing = alone
        .path()
        .canonicalize()
        .unwrap()
        .join("rails-spar-extras");
    assert!(
        err.contains(&format!("git-rails: {} is missing", missing.display())),
        "{err}"
    );
    assert!(err.contains("hint: reinstall both: `cargo install --locked --path <checkout>` or `sh scripts/install.sh`"), "{err}");
    assert!(out.stdout.is_empty(), "{out:?}");
}

#[test]
fn validate_verify_and_spar_tools_answer_with_the_clis_documents_and_refusals() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let mut c = Client::start(&repo, &[]);

    let v = c.call("validate", json!({"sprint": "S", "no_note": true}));
    assert!(!is_error(&v), "{v}");
    let cli = repo.rails(&["contract", "validate", "S", "--json", "--no-note"]);
    assert_eq!(
        v["structuredContent"]["verdict"],
        cli.json()["verdict"],
        "{v}\n{cli}"
    );

    let ver = c.call("verify", json!({"sprint": "S"}));
    assert!(!is_error(&ver), "{ver}");
    assert_eq!(ver["structuredContent"]["done"], false, "{ver}");

    // A series with no rounds: the CLI's refusal; `git spar run` has no tool, so it stays.
    let show = c.call("spar_show", json!({"target": "nothing"}));
    assert!(is_error(&show), "{show}");
    assert!(
        text(&show).contains("series nothing has no rounds"),
        "{show}"
    );
    assert!(text(&show).contains("git spar run --base"), "{show}");

    // The server reads no file outside the repository.
    let outside = tempfile::tempdir().unwrap();
    let f = outside.path().join("result.json");
    std::fs::write(&f, "{}").unwrap();
    let rec = c.call(
        "spar_record",
        json!({"series": "s", "round": "code-1", "reviewer": "r", "result": f.to_string_lossy()}),
    );
    assert!(is_error(&rec), "{rec}");
    assert!(text(&rec).contains("is outside the repository"), "{rec}");
    let escape = c.call(
        "spar_record",
        json!({"series": "s", "round": "code-1", "reviewer": "r", "result": format!("../{}/result.json", outside.path().file_name().unwrap().to_string_lossy())}),
    );
    assert!(is_error(&escape), "{escape}");
}

/// The MCP Inspector's CLI: `RAILS_TEST_MCP_INSPECTOR`, else `.ci/mcp-inspector` where `.ci/run`
/// installs the pinned one. Absent: the test says `skipped: …`, or fails under
/// `RAILS_TEST_REQUIRE_MCP_INSPECTOR=1` (CI).
fn inspector() -> Option<std::path::PathBuf> {
    let p = std::env::var_os("RAILS_TEST_MCP_INSPECTOR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(".ci/mcp-inspector/node_modules/.bin/mcp-inspector")
        });
    if p.exists() {
        return Some(p);
    }
    let why = format!(
        "the MCP Inspector is not at {} (`.ci/run` installs the pinned one)",
        p.display()
    );
    if std::env::var("RAILS_TEST_REQUIRE_MCP_INSPECTOR").as_deref() == Ok("1") {
        panic!("RAILS_TEST_REQUIRE_MCP_INSPECTOR=1 but {why}");
    }
    let _ = writeln!(std::io::stderr(), "skipped: {why}");
    None
}

#[test]
fn the_mcp_inspector_lists_the_tools_and_its_calls_record_and_are_refused() {
    let Some(insp) = inspector() else {
        return;
    };
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let rails = crate::harness::bin("git-rails");
    let rails = rails.to_string_lossy().to_string();
    let run = |args: &[&str]| {
        let mut all = vec!["--cli", rails.as_str(), "mcp"];
        all.extend_from_slice(args);
        let r = repo.tool(&insp, &all, &[]);
        r.ok();
        let out: Value = serde_json::from_str(r.stdout.trim())
            .unwrap_or_else(|e| panic!("the Inspector printed no JSON ({e}): {r}"));
        out
    };
    let list = run(&["--method", "tools/list"]);
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"evidence") && names.contains(&"spar_gate"),
        "{list}"
    );

    let call = |kind: &str| {
        run(&[
            "--method",
            "tools/call",
            "--tool-name",
            "evidence",
            "--tool-arg",
            &format!("kind={kind}"),
            "--tool-arg",
            "sprint=S",
            "--tool-arg",
            "criterion=c1",
        ])
    };
    let green = call("green");
    assert_eq!(green["isError"], true, "{green}");
    assert!(
        green["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("call evidence with kind red, sprint S, criterion c1"),
        "{green}"
    );
    assert_eq!(tip(&repo), None);
    let red = call("red");
    assert_eq!(red["structuredContent"]["transition"], "red", "{red}");
    assert_eq!(
        red["structuredContent"]["commit"],
        tip(&repo).unwrap().as_str()
    );
}

#[test]
fn log_names_every_call_and_how_it_ended() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("mcp.log");
    let mut c = Client::start(&repo, &["--log", log.to_str().unwrap()]);
    let r = c.call(
        "evidence",
        json!({"kind": "green", "sprint": "S", "criterion": "c1"}),
    );
    assert!(is_error(&r), "{r}");
    let r = c.call("status", json!({"sprint": "S"}));
    assert!(!is_error(&r), "{r}");
    let lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("git-rails mcp: evidence {\"kind\":\"green\",\"criterion\":\"c1\",\"sprint\":\"S\"")
            && lines[0].ends_with("-> refused: Failing-first violation: criterion \"c1\" is pending. Capture the failure before implementing: call evidence with kind red, sprint S, criterion c1"),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("git-rails mcp: status {\"sprint\":\"S\"} -> ok: "),
        "{lines:?}"
    );
}

#[test]
fn a_log_file_that_cannot_be_opened_is_a_usage_error_before_the_handshake() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let r = repo.rails(&["mcp", "--log", "/nonexistent-dir/mcp.log"]);
    r.code(64).stderr_has("--log /nonexistent-dir/mcp.log");
}

#[test]
fn an_agent_cannot_make_a_persons_decision_over_mcp() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let mut c = Client::start(&repo, &[]);
    for disposition in ["accepted", "answered", "deferred"] {
        let r = c.call(
            "spar_triage",
            json!({"series": "s", "round": "code-1", "finding": "lint-F1",
                "disposition": disposition, "user_quote": "the user said ship it", "to": "x"}),
        );
        assert!(is_error(&r), "{r}");
        let t = text(&r);
        assert!(
            t.contains(&format!(
                "{disposition} rests on the user's word: only a person decides it"
            )),
            "{t}"
        );
        assert!(
            t.contains(&format!(
                "git spar triage s code-1 lint-F1 {disposition} --user-quote \"<their words>\" --sign"
            )),
            "{t}"
        );
    }
    // Nothing was written: no series exists.
    assert!(repo
        .git_run(&["rev-parse", "-q", "--verify", "refs/spar/series/s"])
        .stdout
        .trim()
        .is_empty());
}
