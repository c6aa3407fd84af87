//! The real Claude Code and Codex CLIs as MCP clients of `git rails mcp` (issue 23), driven by
//! the scripted model server: the model calls the rails tools, the CLI runs them through the
//! real server, and the next request to the model server carries what the server answered.
//!
//! - Claude Code 2.1.332 gets the server with `--mcp-config` (the `.mcp.json` shape) and
//!   `--strict-mcp-config`; `--allowedTools mcp__rails` lets every rails tool run without a
//!   prompt. It declares MCP tools as deferred (listed by name in the system context, loaded
//!   with `ToolSearch` `select:`), and names them `mcp__<server>__<tool>`.
//! - Codex 0.171.0 gets `[mcp_servers.rails]` in `$CODEX_HOME/config.toml`, with
//!   `default_tools_approval_mode = "approve"` (without it `codex exec` fails every MCP call:
//!   "MCP tool call requires approval, but approval policy is never"). It declares a server's
//!   tools as one Responses-API `namespace` tool, `mcp__rails`, and a call names both the
//!   namespace and the tool (`function_call` with `namespace: "mcp__rails"`, `name: "evidence"`).
//!
//! Each server is started as `git rails mcp --log <file>`, so the test can quote and check the
//! server's own account of every call. Skipped when a CLI is missing, a failure when
//! `RAILS_TEST_REQUIRE_REAL_CLIS=1` (as in `real_cli.rs`); left out of the git3 pass by
//! `.ci/run`, like the other real-CLI tests.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use super::evidence::{frozen, needs_file, state, tip};
use super::harness::TestRepo;
use super::model_server::{
    message, namespaced_call, text, tool_use, ModelServer, Request, Script, Turn,
};
use super::real_cli::{cli, cli_dir, run_cli, which, CliRun};

const PROMPT: &str = "Prove criterion c1 of sprint S with the rails tools.\n";
const CLAUDE_MODEL: &str = "claude-sonnet-4-6";
/// A model outside Codex's catalogue: Codex then declares every MCP tool up front (for a
/// catalogued one such as `gpt-5.5` it defers them behind its `tool_search` tool; a call by
/// namespace and name runs either way). The price is one "Model metadata … not found" item.
const CODEX_MODEL: &str = "gpt-x";
/// The longest one session may take.
const WALL: Duration = Duration::from_secs(90);

/// What the refusal of a GREEN before RED must say to the model: the CLI's words, the next
/// step as a tool call.
const REFUSAL: &str = "Failing-first violation: criterion \"c1\" is pending. Capture the failure \
                       before implementing: call evidence with kind red, sprint S, criterion c1";

/// A scratch folder beside the repository: the server's log, Claude's debug log, CODEX_HOME.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn log(&self) -> PathBuf {
        self.dir.path().join("mcp.log")
    }
    /// The server's log lines so far.
    fn log_lines(&self) -> Vec<String> {
        std::fs::read_to_string(self.log())
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
    fn claude_debug(&self) -> PathBuf {
        self.dir.path().join("claude-debug.log")
    }
    fn codex_home(&self) -> PathBuf {
        self.dir.path().join("codex-home")
    }
    /// `git rails mcp --log <file>`: the server every session starts.
    fn server_args(&self) -> Vec<String> {
        vec![
            "rails".into(),
            "mcp".into(),
            "--log".into(),
            self.log().display().to_string(),
        ]
    }
}

/// The test binaries first (so `git rails` is this build), then the CLIs and node.
fn agent_path() -> String {
    let bins = super::harness::bin("git-rails");
    let mut path = format!(
        "{}:{}",
        bins.parent().unwrap().display(),
        cli_dir().display()
    );
    if let Some(dir) = which("node").as_deref().and_then(Path::parent) {
        path.push(':');
        path.push_str(&dir.display().to_string());
    }
    path.push_str(":/usr/local/bin:/usr/bin:/bin");
    path
}

/// Claude Code in `repo`, pointed at `server`, with nothing of rails configured.
fn claude_command(claude: &Path, repo: &TestRepo, server: &ModelServer, s: &Scratch) -> Command {
    let mut cmd = repo.program(claude);
    cmd.env("PATH", agent_path())
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8")
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-fake-0000")
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .args(["-p", "--output-format", "stream-json", "--verbose"])
        .args(["--model", CLAUDE_MODEL, "--debug-file"])
        .arg(s.claude_debug());
    cmd
}

/// A session given the server on the command line (`--mcp-config`, the `.mcp.json` shape).
fn claude_session(claude: &Path, repo: &TestRepo, server: &ModelServer, s: &Scratch) -> CliRun {
    let mcp = json!({"mcpServers": {"rails": {"command": "git", "args": s.server_args()}}});
    let mut cmd = claude_command(claude, repo, server, s);
    cmd.arg("--strict-mcp-config")
        .arg("--mcp-config")
        .arg(mcp.to_string())
        .args(["--allowedTools", "mcp__rails"]);
    run_cli(cmd, PROMPT, &|waited| waited > WALL)
}

/// Codex's `config.toml`: the test server as model provider, plus `extra`.
fn codex_config(server: &ModelServer, extra: &str) -> String {
    format!(
        "model_provider = \"rails_test\"\n\n\
         [model_providers.rails_test]\n\
         name = \"rails test model server\"\n\
         base_url = \"{}/v1\"\n\
         env_key = \"OPENAI_API_KEY\"\n\
         wire_api = \"responses\"\n\n{extra}",
        server.url()
    )
}

fn codex_command(codex: &Path, repo: &TestRepo, s: &Scratch) -> Command {
    let mut cmd = repo.program(codex);
    cmd.env("PATH", agent_path())
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8")
        .env("CODEX_HOME", s.codex_home())
        .env("OPENAI_API_KEY", "sk-fake-0000");
    cmd
}

fn codex_session(codex: &Path, repo: &TestRepo, server: &ModelServer, s: &Scratch) -> CliRun {
    let home = s.codex_home();
    std::fs::create_dir_all(&home).unwrap();
    let args: Vec<String> = s.server_args().iter().map(|a| format!("{a:?}")).collect();
    let rails = format!(
        "[mcp_servers.rails]\ncommand = \"git\"\nargs = [{}]\n\
         default_tools_approval_mode = \"approve\"\n",
        args.join(", ")
    );
    std::fs::write(home.join("config.toml"), codex_config(server, &rails)).unwrap();
    let mut cmd = codex_command(codex, repo, s);
    cmd.args(["exec", "--json", "-m", CODEX_MODEL, "-"]);
    run_cli(cmd, PROMPT, &|waited| waited > WALL)
}

/// What a failing test shows: the run, every request's last input, and the server's log.
fn story(run: &CliRun, server: &ModelServer, s: &Scratch) -> String {
    let mut out = format!("{run}\n------- server log -------\n");
    for l in s.log_lines() {
        out.push_str(&l);
        out.push('\n');
    }
    for (n, r) in server.requests().iter().enumerate() {
        let body = r.json();
        let last = body["messages"]
            .as_array()
            .or(body["input"].as_array())
            .and_then(|m| m.last().cloned())
            .unwrap_or(Value::Null);
        out.push_str(&format!(
            "------- request {n} {} -------\n{last}\n",
            r.target
        ));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// What the CLIs send back.
// ---------------------------------------------------------------------------------------------

/// The model requests (`/v1/messages` or `/v1/responses`) in order.
fn model_requests(server: &ModelServer, path: &str) -> Vec<Request> {
    server.requests_to(path)
}

/// Claude: the tool results of a request's last user message, as (text, is_error).
fn claude_results(req: &Request) -> Vec<(String, bool)> {
    let body = req.json();
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or(Value::Null);
    last["content"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            let text = match &b["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                other => other.to_string(),
            };
            (text, b["is_error"] == true)
        })
        .collect()
}

/// Codex: the texts of a request's `function_call_output` items that answer calls of the
/// `mcp__rails` namespace.
fn codex_results(req: &Request) -> Vec<String> {
    let body = req.json();
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let rails_calls: Vec<&str> = input
        .iter()
        .filter(|i| i["type"] == "function_call" && i["namespace"] == "mcp__rails")
        .filter_map(|i| i["call_id"].as_str())
        .collect();
    input
        .iter()
        .filter(|i| {
            i["type"] == "function_call_output"
                && rails_calls.contains(&i["call_id"].as_str().unwrap_or(""))
        })
        .map(|i| match &i["output"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            other => other.to_string(),
        })
        .collect()
}

/// The model's turn that loads the rails tools Claude Code declared as deferred.
fn claude_load_tools() -> Turn {
    Turn::claude(vec![tool_use(
        "ToolSearch",
        json!({"query": "select:mcp__rails__evidence,mcp__rails__status,mcp__rails__gate"}),
    )])
}

fn claude_call(tool: &str, args: Value) -> Turn {
    Turn::claude(vec![
        text(&format!("Calling {tool}.")),
        tool_use(&format!("mcp__rails__{tool}"), args),
    ])
}

fn codex_call(tool: &str, args: Value) -> Turn {
    Turn::codex(vec![namespaced_call("mcp__rails", tool, args)])
}

fn ev(kind: &str) -> Value {
    json!({"kind": kind, "sprint": "S", "criterion": "c1"})
}

/// The JSON document in a tool result the CLI passed on: both CLIs give the model the tool's
/// structured content (the `--json` document), not its short text, when there is one.
/// Claude Code may append a `<system-reminder>`; Codex puts `Wall time: …\nOutput:\n` first.
#[track_caller]
fn doc_in(result: &str) -> Value {
    let at = result
        .find('{')
        .unwrap_or_else(|| panic!("no JSON document in {result}"));
    serde_json::Deserializer::from_str(&result[at..])
        .into_iter::<Value>()
        .next()
        .and_then(|v| v.ok())
        .unwrap_or_else(|| panic!("no JSON document in {result}"))
}

/// The RED the model was told about is the tip of refs/rails/evidence/S, holds the record, and
/// is a failure the check really produced (its exit code and output).
#[track_caller]
fn assert_real_red(repo: &TestRepo, told: &Value, why: &str) {
    assert_eq!(told["transition"], "red", "{told}\n{why}");
    assert_eq!(told["status"], "red", "{told}\n{why}");
    let rec = &told["record"];
    assert_eq!(rec["checkStatus"], "fail", "{told}");
    assert_eq!(rec["exitCode"], 1, "{told}");
    assert!(
        rec["summary"]
            .as_str()
            .unwrap_or("")
            .contains("feature.txt is missing"),
        "{told}"
    );
    let tip = tip(repo).unwrap_or_else(|| panic!("no refs/rails/evidence/S\n{why}"));
    assert_eq!(told["commit"], tip.as_str(), "{why}");
    let tree = repo.git(&["ls-tree", "-r", "refs/rails/evidence/S"]);
    let id = rec["id"].as_str().unwrap();
    assert!(
        tree.contains(id),
        "record {id} not in the evidence tree:\n{tree}"
    );
    let st = state(repo);
    assert!(st.to_string().contains("\"red\""), "{st}");
    let status = repo.rails(&["status", "S", "--json"]);
    status.ok();
    assert_eq!(status.json()["criteria"][0]["status"], "red", "{status}");
}

// ---------------------------------------------------------------------------------------------
// Claude Code.
// ---------------------------------------------------------------------------------------------

#[test]
fn claude_green_before_red_is_refused_to_the_model_then_red_records_a_real_failure() {
    let Some(claude) = cli("claude") else { return };
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let s = Scratch::new();
    let server = ModelServer::start(Script::new().messages([
        claude_load_tools(),
        claude_call("evidence", ev("green")),
        claude_call("evidence", ev("red")),
        Turn::claude(vec![text("RED is recorded; implementing next.")]),
    ]));
    let run = claude_session(&claude, &repo, &server, &s);
    let why = story(&run, &server, &s);
    assert_eq!(run.code, Some(0), "{why}");
    let reqs = model_requests(&server, "/v1/messages");
    assert_eq!(reqs.len(), 4, "{why}");

    // Loaded by ToolSearch, the rails tools are declared with their schemas.
    let declared: Vec<String> = reqs[1].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    assert!(
        declared.contains(&"mcp__rails__evidence".to_string()),
        "{declared:?}\n{why}"
    );

    // The request after the GREEN carries the refusal as an error tool result, word for word.
    let refused = claude_results(&reqs[2]);
    assert_eq!(refused.len(), 1, "{why}");
    assert!(refused[0].1, "not an error result: {refused:?}\n{why}");
    assert!(refused[0].0.starts_with(REFUSAL), "{refused:?}\n{why}");
    assert!(!refused[0].0.contains("git rails evidence"), "{refused:?}");

    // The request after the RED carries the recording.
    let recorded = claude_results(&reqs[3]);
    assert!(!recorded[0].1, "{recorded:?}\n{why}");
    assert_real_red(&repo, &doc_in(&recorded[0].0), &why);

    // The server's own log: one line per call, the refusal and the record.
    let log = s.log_lines();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(
        log[0].starts_with("git-rails mcp: evidence {\"kind\":\"green\"")
            && log[0].ends_with(&format!("-> refused: {REFUSAL}")),
        "{log:?}"
    );
    assert!(log[1].contains("-> ok: RED S c1 recorded"), "{log:?}");
    // Claude Code's own MCP log saw the same refusal.
    let debug = std::fs::read_to_string(s.claude_debug()).unwrap_or_default();
    assert!(
        debug.contains("MCP server \"rails\": Tool 'evidence' failed"),
        "{debug}"
    );
    println!("{why}");
}

#[test]
fn claude_proves_a_criterion_red_to_cleanup_and_git_rails_gate_passes() {
    let Some(claude) = cli("claude") else { return };
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let s = Scratch::new();
    // Session 1: RED before implementing.
    let first = ModelServer::start(Script::new().messages([
        claude_load_tools(),
        claude_call("evidence", ev("red")),
        Turn::claude(vec![text("RED recorded.")]),
    ]));
    let run = claude_session(&claude, &repo, &first, &s);
    let why = story(&run, &first, &s);
    assert_eq!(run.code, Some(0), "{why}");
    let reqs = model_requests(&first, "/v1/messages");
    assert_eq!(reqs.len(), 3, "{why}");
    assert_real_red(&repo, &doc_in(&claude_results(&reqs[2])[0].0), &why);
    repo.rails(&["gate", "S"]).code(2);

    // The fix, committed.
    repo.write("feature.txt", "done\n");
    repo.commit_all("feature");

    // Session 2: GREEN, SURFACE, CLEANUP, then the gate tool.
    let second = ModelServer::start(Script::new().messages([
        claude_load_tools(),
        claude_call("evidence", ev("green")),
        claude_call(
            "evidence",
            json!({"kind": "surface", "sprint": "S", "criterion": "c1",
                "note": "feature.txt is in the tree"}),
        ),
        claude_call(
            "evidence",
            json!({"kind": "cleanup", "sprint": "S", "criterion": "c1",
                "note": "nothing was started"}),
        ),
        claude_call("gate", json!({"sprint": "S"})),
        Turn::claude(vec![text("The gate passed.")]),
    ]));
    let run = claude_session(&claude, &repo, &second, &s);
    let why = story(&run, &second, &s);
    assert_eq!(run.code, Some(0), "{why}");
    let reqs = model_requests(&second, "/v1/messages");
    assert_eq!(reqs.len(), 6, "{why}");
    for (n, want) in [(2, "green"), (3, "surfaced"), (4, "surfaced")] {
        let got = claude_results(&reqs[n]);
        assert!(!got[0].1, "request {n}: {got:?}\n{why}");
        assert_eq!(doc_in(&got[0].0)["status"], want, "request {n}\n{why}");
    }
    let gate = claude_results(&reqs[5]);
    let doc = doc_in(&gate[0].0);
    assert!(!gate[0].1, "{gate:?}\n{why}");
    assert_eq!(doc["schema"], "rails-status/v1", "{doc}");
    assert_eq!(doc["done"], true, "{doc}");
    repo.rails(&["gate", "S"]).ok();
    println!("{why}");
    let log = s.log_lines();
    assert_eq!(log.len(), 5, "{log:?}");
    assert!(
        log[4].contains("gate {\"sprint\":\"S\",\"commit\":null} -> ok: gate passed"),
        "{log:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Codex.
// ---------------------------------------------------------------------------------------------

#[test]
fn codex_green_before_red_is_refused_to_the_model_then_red_records_a_real_failure() {
    let Some(codex) = cli("codex") else { return };
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let s = Scratch::new();
    let server = ModelServer::start(Script::new().responses([
        codex_call("evidence", ev("green")),
        codex_call("evidence", ev("red")),
        Turn::codex(vec![message("RED is recorded; implementing next.")]),
    ]));
    let run = codex_session(&codex, &repo, &server, &s);
    let why = story(&run, &server, &s);
    assert_eq!(run.code, Some(0), "{why}");
    let reqs = model_requests(&server, "/v1/responses");
    assert_eq!(reqs.len(), 3, "{why}");

    // Codex declares the rails tools as one namespace tool.
    let ns = reqs[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "namespace" && t["name"] == "mcp__rails")
        .cloned()
        .unwrap_or_else(|| panic!("no mcp__rails namespace\n{why}"));
    let inner: Vec<&str> = ns["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        inner.contains(&"evidence") && inner.contains(&"gate"),
        "{inner:?}"
    );

    // The request after the GREEN carries the refusal, word for word.
    let refused = codex_results(&reqs[1]);
    assert_eq!(refused.len(), 1, "{why}");
    assert!(refused[0].contains(REFUSAL), "{refused:?}\n{why}");
    // … and Codex's own event stream marks the call failed.
    let failed: Vec<Value> = run
        .events()
        .into_iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "mcp_tool_call")
        .map(|e| e["item"].clone())
        .collect();
    assert_eq!(failed.len(), 2, "{why}");
    assert_eq!(failed[0]["status"], "failed", "{why}");
    assert_eq!(failed[0]["server"], "rails");
    assert_eq!(failed[1]["status"], "completed", "{why}");

    let recorded = codex_results(&reqs[2]);
    assert_eq!(recorded.len(), 2, "{why}");
    assert_real_red(&repo, &doc_in(&recorded[1]), &why);

    let log = s.log_lines();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(
        log[0].ends_with(&format!("-> refused: {REFUSAL}")),
        "{log:?}"
    );
    assert!(log[1].contains("-> ok: RED S c1 recorded"), "{log:?}");
    println!("{why}");
}

#[test]
fn codex_proves_a_criterion_red_to_cleanup_and_git_rails_gate_passes() {
    let Some(codex) = cli("codex") else { return };
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let s = Scratch::new();
    let first = ModelServer::start(Script::new().responses([
        codex_call("evidence", ev("red")),
        Turn::codex(vec![message("RED recorded.")]),
    ]));
    let run = codex_session(&codex, &repo, &first, &s);
    let why = story(&run, &first, &s);
    assert_eq!(run.code, Some(0), "{why}");
    let reqs = model_requests(&first, "/v1/responses");
    assert_eq!(reqs.len(), 2, "{why}");
    assert_real_red(&repo, &doc_in(&codex_results(&reqs[1])[0]), &why);
    repo.rails(&["gate", "S"]).code(2);

    repo.write("feature.txt", "done\n");
    repo.commit_all("feature");

    let second = ModelServer::start(Script::new().responses([
        codex_call("evidence", ev("green")),
        codex_call(
            "evidence",
            json!({"kind": "surface", "sprint": "S", "criterion": "c1",
                "note": "feature.txt is in the tree"}),
        ),
        codex_call(
            "evidence",
            json!({"kind": "cleanup", "sprint": "S", "criterion": "c1",
                "note": "nothing was started"}),
        ),
        codex_call("gate", json!({"sprint": "S"})),
        Turn::codex(vec![message("The gate passed.")]),
    ]));
    let run = codex_session(&codex, &repo, &second, &s);
    let why = story(&run, &second, &s);
    assert_eq!(run.code, Some(0), "{why}");
    let reqs = model_requests(&second, "/v1/responses");
    assert_eq!(reqs.len(), 5, "{why}");
    let results = codex_results(&reqs[4]);
    assert_eq!(results.len(), 4, "{why}");
    for (n, want) in [(0, "green"), (1, "surfaced"), (2, "surfaced")] {
        assert_eq!(doc_in(&results[n])["status"], want, "result {n}\n{why}");
    }
    let doc = doc_in(&results[3]);
    assert_eq!(doc["schema"], "rails-status/v1", "{doc}");
    assert_eq!(doc["done"], true, "{doc}");
    repo.rails(&["gate", "S"]).ok();
    println!("{why}");
    let log = s.log_lines();
    assert_eq!(log.len(), 5, "{log:?}");
    assert!(log[4].contains("-> ok: gate passed"), "{log:?}");
}

// ---------------------------------------------------------------------------------------------
// What `git rails agent setup` writes, read by the real CLIs.
// ---------------------------------------------------------------------------------------------

#[test]
fn claude_runs_with_what_agent_setup_wrote_hooks_and_server_alike() {
    let Some(claude) = cli("claude") else { return };
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    repo.rails(&["contract", "bind", "S"]).ok();
    repo.rails(&["agent", "setup", "claude"]).ok();
    let s = Scratch::new();
    let server = ModelServer::start(Script::new().messages([
        Turn::claude(vec![tool_use(
            "Bash",
            json!({"command": "git commit --no-verify -am wip", "description": "commit"}),
        )]),
        claude_load_tools(),
        claude_call("evidence", ev("green")),
        Turn::claude(vec![text("I am done.")]).forever(),
    ]));
    // No --mcp-config, no --allowedTools: only the files setup wrote.
    let run = run_cli(
        claude_command(&claude, &repo, &server, &s),
        PROMPT,
        &|waited| waited > WALL,
    );
    let why = story(&run, &server, &s);
    let reqs = model_requests(&server, "/v1/messages");
    assert!(reqs.len() >= 5, "{why}");
    let init = run
        .events()
        .into_iter()
        .find(|e| e["type"] == "system" && e["subtype"] == "init")
        .unwrap_or_else(|| panic!("no init event\n{why}"));
    assert_eq!(
        init["mcp_servers"],
        json!([{"name": "rails", "status": "connected", "source": "project"}]),
        "{why}"
    );

    // The PreToolUse hook blocked the --no-verify commit; the model read why.
    let blocked = claude_results(&reqs[1]);
    assert!(blocked[0].1, "{blocked:?}\n{why}");
    assert!(
        blocked[0]
            .0
            .contains("git-rails: blocked: git commit --no-verify skips the rails hooks"),
        "{blocked:?}\n{why}"
    );
    // The server from .mcp.json, allowed by the settings' permission, refused GREEN first.
    let refused = claude_results(&reqs[3]);
    assert!(
        refused[0].1 && refused[0].0.starts_with(REFUSAL),
        "{refused:?}\n{why}"
    );
    // Ending the turn with the sprint unproven: the Stop hook sends the gate back.
    let stop = reqs[4].body.clone();
    assert!(
        stop.contains("Stop hook feedback") && stop.contains("still has unproven criteria"),
        "{why}"
    );
    assert!(stop.contains("c1"), "{why}");
    // The model kept ending its turn with nothing moved: after rails.agentStopLimit (3) such
    // blocks the hook let it end, on record.
    let gate = repo.rails(&["gate", "S", "--json"]);
    gate.code(2);
    let ended = gate.json()["agentTurnsEnded"].clone();
    assert_eq!(ended.as_array().map(Vec::len), Some(1), "{gate}\n{why}");
    // The prompt, three tool results, three blocked stops; the fourth stop ended the turn.
    assert_eq!(reqs.len(), 7, "{why}");
    println!("{why}\n{gate}");
}

#[test]
fn codex_runs_with_what_agent_setup_wrote_in_a_trusted_project() {
    let Some(codex) = cli("codex") else { return };
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    repo.rails(&["agent", "setup", "codex"]).ok();
    let s = Scratch::new();
    let server = ModelServer::start(Script::new().responses([
        codex_call("evidence", ev("green")),
        Turn::codex(vec![message("Refused; RED comes first.")]),
    ]));
    let root = repo.path().canonicalize().unwrap();
    std::fs::create_dir_all(s.codex_home()).unwrap();
    // Codex reads a project's .codex/config.toml only when the project is trusted.
    let trust = format!(
        "[projects.{:?}]\ntrust_level = \"trusted\"\n",
        root.display().to_string()
    );
    std::fs::write(
        s.codex_home().join("config.toml"),
        codex_config(&server, &trust),
    )
    .unwrap();

    let mut list = codex_command(&codex, &repo, &s);
    list.args(["mcp", "list", "--json"]);
    let listed = run_cli(list, "", &|waited| waited > WALL);
    let servers: Value = serde_json::from_str(&listed.stdout)
        .unwrap_or_else(|e| panic!("codex mcp list --json ({e}):\n{listed}"));
    let rails = servers
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "rails")
        .unwrap_or_else(|| panic!("no rails server:\n{listed}"));
    assert_eq!(rails["transport"]["command"], "git", "{listed}");
    assert_eq!(
        rails["transport"]["args"],
        json!(["rails", "mcp"]),
        "{listed}"
    );

    let mut cmd = codex_command(&codex, &repo, &s);
    cmd.args(["exec", "--json", "-m", CODEX_MODEL, "-"]);
    let run = run_cli(cmd, PROMPT, &|waited| waited > WALL);
    let why = story(&run, &server, &s);
    assert_eq!(run.code, Some(0), "{why}");
    let reqs = model_requests(&server, "/v1/responses");
    assert_eq!(reqs.len(), 2, "{why}");
    let refused = codex_results(&reqs[1]);
    assert!(
        refused.len() == 1 && refused[0].contains(REFUSAL),
        "{refused:?}\n{why}"
    );
    println!("{listed}\n{why}");
}

#[test]
fn claude_mcp_list_sees_the_servers_agent_setup_wrote() {
    let Some(claude) = cli("claude") else { return };
    let repo = TestRepo::new();
    repo.rails(&["agent", "setup", "claude"]).ok();
    let list = || {
        let mut cmd = repo.program(&claude);
        cmd.env("PATH", agent_path())
            .env("TERM", "dumb")
            .args(["mcp", "list"]);
        run_cli(cmd, "", &|waited| waited > WALL)
    };
    // The project's .mcp.json: read, and pending until the person approves it.
    let project = list();
    assert!(
        project
            .stdout
            .contains("rails: git rails mcp - ⏸ Pending approval"),
        "{project}"
    );
    // --user: ~/.claude.json, which needs no approval; Claude Code connects to it.
    repo.rails(&["agent", "remove", "claude"]).ok();
    repo.rails(&["agent", "setup", "claude", "--user"]).ok();
    let user = list();
    assert!(
        user.stdout.contains("rails: git rails mcp - ✔ Connected"),
        "{user}"
    );
    println!("{project}\n{user}");
}
