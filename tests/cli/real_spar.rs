//! `git spar run` with the REAL claude and codex CLIs (issue 11): the presets' unchanged
//! production argv, with only the environment (`ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`,
//! `OPENAI_API_KEY`, `CODEX_HOME` whose `config.toml` makes the scripted server Codex's model
//! provider) pointing the CLIs at the scripted model server (`tests/cli/model_server.rs`).
//!
//! Each test scripts the model's turns, runs one or two rounds and checks what spar recorded
//! against what the real CLI did (the server's request log holds what the CLI sent back, e.g.
//! the content of the file it read). The repository and its change are those of
//! `tests/cli/spar_presets.rs`, so the reviewer output spar records (`<reviewer>/output.txt`) is
//! exactly what the fakes there replay: with `UPDATE_REAL_CLI=1` these tests rewrite
//! `tests/data/reviewer-cli/` from the real output (normalized, see its README); without it
//! they check that the real CLI still prints the same sequence of events as each fake.
//!
//! Where the CLIs are, and when the tests skip: see `tests/cli/real_cli.rs` ([`cli`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::harness::{path_first, Run};
use super::model_server::{
    custom_tool_call, function_call, message, text, tool_use, ModelServer, Script, Turn,
};
use super::real_cli::{cli, cli_dir, event_kinds};
use super::spar_fixture::{spar_fixture, SparChange};
use super::spar_results::ANGLES;

const MAIN_HEAD: &str = "fn main() {\n    println!(\"hello\");\n}\n";

/// The repository of `spar_presets.rs` (branch `feature`, one change from `main`) and the
/// folders the CLIs get beside it (the user config, `XDG_CONFIG_HOME`, `CODEX_HOME`), on the
/// one spar fixture; and the model server.
struct Fx {
    s: SparChange,
    server: ModelServer,
}

spar_fixture!(Fx);

impl Fx {
    /// `script` gets the head commit, which the answers name.
    fn new(script: impl FnOnce(&str) -> Script) -> Fx {
        let s = SparChange::new(
            &[("app/main.rs", "fn main() {}\n")],
            &[("app/main.rs", MAIN_HEAD), ("checks/t.py", "import app\n")],
            Some("feature"),
            &["xdg", "codex-home"],
        );
        let server = ModelServer::start(script(&s.head));
        // The only Codex configuration: the test server as the model provider.
        std::fs::write(
            s.tmp("codex-home/config.toml"),
            format!(
                "model_provider = \"spar_test\"\n\n\
                 [model_providers.spar_test]\n\
                 name = \"spar test model server\"\n\
                 base_url = \"{}/v1\"\n\
                 env_key = \"OPENAI_API_KEY\"\n\
                 wire_api = \"responses\"\n",
                server.url()
            ),
        )
        .unwrap();
        Fx { s, server }
    }

    fn user(&self, toml: &str) {
        std::fs::write(self.tmp("user.toml"), toml).unwrap();
    }

    /// `git spar run --base main --reviewers <reviewers>` with the real CLIs first on PATH and
    /// the server as their API; nothing of the caller's own CLI setup leaks in (the hermetic
    /// environment holds none of it: no `ANTHROPIC_*`, `CLAUDE*`, `OPENAI_*`, `CODEX_*` or proxy).
    fn run(&self, reviewers: &str) -> Run {
        let mut cmd = self.repo.command("git-spar");
        path_first(&mut cmd, &[&cli_dir()]);
        cmd.args(["run", "--base", "main", "--reviewers", reviewers])
            .env("SPAR_CONFIG", self.tmp("user.toml"))
            .env("XDG_CONFIG_HOME", self.tmp("xdg"))
            .env("CODEX_HOME", self.tmp("codex-home"))
            .env("ANTHROPIC_BASE_URL", self.server.url())
            .env("ANTHROPIC_API_KEY", "sk-ant-fake-0000")
            .env("OPENAI_API_KEY", "sk-fake-0000");
        Run::of(&mut cmd)
    }

    fn round_file(&self, round: &str, file: &str) -> String {
        self.repo.git(&[
            "show",
            &format!("refs/spar/series/feature:rounds/{round}/{file}"),
        ])
    }

    fn reviewer(&self, round: &str, name: &str) -> Value {
        let r: Value = serde_json::from_str(&self.round_file(round, "round.json")).unwrap();
        r["reviewers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .unwrap_or_else(|| panic!("no reviewer {name} in {r:#}"))
            .clone()
    }

    fn findings(&self, round: &str) -> Vec<Value> {
        serde_json::from_str::<Value>(&self.round_file(round, "findings.json"))
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }

    /// The workspace of `round` (gone once the round is recorded; its path is in the output).
    fn workspace(&self, round: &str) -> PathBuf {
        let common = self.repo.git(&["rev-parse", "--git-common-dir"]);
        let common = self.repo.path().join(common.trim());
        common.join("spar/workspaces/feature").join(round)
    }

    /// Replaces what differs from run to run but not in the CLI's output (paths, the port,
    /// the head commit) with placeholders.
    fn normalize(&self, round: &str, s: &str) -> String {
        let mut out = s.to_string();
        let ws = self.workspace(round);
        let mut paths = vec![ws.clone()];
        if let Ok(c) = ws.parent().unwrap().canonicalize() {
            paths.push(c.join(round));
        }
        for p in paths {
            let p = p.display().to_string();
            let sanitized: String = p
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            out = out
                .replace(&p, "<work>")
                .replace(&sanitized, "<sanitized-work>");
        }
        // `$HOME` as the harness sets it; Claude names its project folder after the
        // repository's root (sanitized), not after the workspace inside `.git`.
        let cmd = self.repo.command("git-spar");
        let home = cmd
            .get_envs()
            .find(|(k, _)| *k == "HOME")
            .and_then(|(_, v)| v)
            .map(PathBuf::from)
            .unwrap();
        let repo = self.repo.path().display().to_string();
        let sanitized_repo: String = repo
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        for (p, name) in [
            (self.tmp("codex-home").display().to_string(), "<codex-home>"),
            (home.display().to_string(), "<home>"),
            (repo, "<repo>"),
            (sanitized_repo, "<sanitized-repo>"),
        ] {
            out = out.replace(&p, name);
        }
        out.replace(&self.head, "@HEAD@").replace(
            &format!("127.0.0.1:{}", self.server.port()),
            "127.0.0.1:<port>",
        )
    }

    /// Keeps the real output of `reviewer` in `round` as the fake `tests/data/reviewer-cli/<fake>`
    /// (with `UPDATE_REAL_CLI=1`), or checks that the fake has the same events.
    fn record(&self, round: &str, file: &str, fake: &str) {
        let content = self.normalize(round, &self.round_file(round, file));
        keep(fake, &content);
    }

    /// Codex's session log of the last run, the lines the codex preset reads (`turn_context`
    /// and the `response_item`s of tool calls), normalized.
    fn codex_session_log(&self, round: &str) -> String {
        let mut files = Vec::new();
        let mut stack = vec![self.tmp("codex-home/sessions")];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "jsonl") {
                    files.push(p);
                }
            }
        }
        files.sort();
        let file = files.last().expect("no codex session log");
        let text = std::fs::read_to_string(file).unwrap();
        let kept: String = text
            .lines()
            .filter(|l| {
                let v: Value = serde_json::from_str(l).unwrap_or(Value::Null);
                v["type"] == "session_meta"
                    || v["type"] == "turn_context"
                    || (v["type"] == "response_item"
                        && v["payload"]["type"]
                            .as_str()
                            .is_some_and(|t| t.contains("call")))
            })
            .map(|l| {
                // session_meta holds the whole base instructions; the preset needs its id only.
                let mut v: Value = serde_json::from_str(l).unwrap();
                if v["type"] == "session_meta" {
                    let p = &v["payload"];
                    v["payload"] = json!({"id": p["id"], "cwd": p["cwd"],
                        "cli_version": p["cli_version"]});
                }
                format!("{v}\n")
            })
            .collect();
        self.normalize(round, &kept)
    }
}

/// Event kinds a fake may or may not hold, as the real CLI varies between machines. Codex shows
/// a command its read-only sandbox refused either not at all (the recording) or as a failed
/// `command_execution` item ("Read-only file system", seen in a CI run from a fresh clone):
/// the preset finds the write in the session log in both cases, and the test checks that.
const VARIES: &[(&str, &[&str])] = &[(
    "codex-write-attempts.jsonl",
    &[
        "item.started:command_execution",
        "item.completed:command_execution",
    ],
)];

/// Writes or checks the fake `name` (see [`Fx::record`]).
fn keep(name: &str, content: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/reviewer-cli")
        .join(name);
    if std::env::var("UPDATE_REAL_CLI").as_deref() == Ok("1") {
        std::fs::write(&path, content).unwrap();
        return;
    }
    let recorded = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("no fake {} — run with UPDATE_REAL_CLI=1", path.display()));
    let varies = VARIES
        .iter()
        .find(|(fake, _)| *fake == name)
        .map_or(&[][..], |(_, kinds)| *kinds);
    let kinds = |text: &str| -> Vec<String> {
        event_kinds(text)
            .into_iter()
            .filter(|k| !varies.contains(&k.as_str()))
            .collect()
    };
    assert_eq!(
        kinds(&recorded),
        kinds(content),
        "the real CLI's events differ from the fake {} (rewrite with UPDATE_REAL_CLI=1 after \
         checking the difference)\n{content}",
        path.display()
    );
}

#[track_caller]
fn status(rec: &Value, status: &str, needle: &str) {
    assert_eq!(rec["status"], status, "{rec:#}");
    let reason = rec["reason"].as_str().unwrap_or("");
    assert!(reason.contains(needle), "reason lacks {needle:?}: {rec:#}");
}

/// The finding the scripted model reports: line 2 of head/app/main.rs, which it read.
fn finding() -> Value {
    json!({"id": "R1", "proposed_class": "defect", "angle": "correctness",
        "location": "head/app/main.rs:2", "claim": "the greeting is printed on every start",
        "failure_scenario": "a script parsing stdout sees an extra line",
        "evidence": "head/app/main.rs:2 prints unconditionally", "link_kind": "none", "link": "",
        "introduced_by_change": "yes", "regression": "yes", "check_impact": "none",
        "confidence": "medium", "smallest_fix": ""})
}

/// A result in spar's schema for `head` with these findings.
fn review(head: &str, findings: Vec<Value>) -> Value {
    let verdict = if findings.is_empty() {
        "no_blocking_findings"
    } else {
        "blocking_findings"
    };
    json!({"reviewed_head": head, "verdict": verdict,
        "angles_checked": ANGLES.map(|a| json!({"angle": a, "result": "read the change"})),
        "angles_unchecked": [], "findings": findings, "limits": ""})
}

/// The text of the last `tool_result` the CLI sent in this Messages request.
fn last_tool_result(req: &super::model_server::Request) -> String {
    let body = req.json();
    let content = &body["messages"].as_array().unwrap().last().unwrap()["content"];
    let block = content
        .as_array()
        .and_then(|c| c.iter().rev().find(|b| b["type"] == "tool_result"))
        .unwrap_or_else(|| panic!("no tool_result in {content}"));
    match &block["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The `function_call_output`s the CLI sent in this Responses request.
fn function_outputs(req: &super::model_server::Request) -> Vec<String> {
    req.json()["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call_output" || i["type"] == "custom_tool_call_output")
        .map(|i| i["output"].as_str().unwrap_or("").to_string())
        .collect()
}

fn models(server: &ModelServer, path: &str) -> Vec<String> {
    server
        .requests_to(path)
        .iter()
        .map(|r| r.json()["model"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A timeout short enough for the stall tests and long enough for a start on a busy machine.
const STALL_TIMEOUT: u64 = 10;

// ---------------------------------------------------------------------------------------------
// claude
// ---------------------------------------------------------------------------------------------

/// The Anthropic API's own 429 body.
fn anthropic_429() -> Turn {
    Turn::error(
        429,
        json!({"type": "error", "error": {"type": "rate_limit_error",
            "message": "This request would exceed your account's rate limit. Please try again later."}}),
    )
}

fn claude_review_turns(head: &str) -> Vec<Turn> {
    vec![
        Turn::claude(vec![
            text("I will read the changed file."),
            tool_use("Read", json!({"file_path": "head/app/main.rs"})),
        ]),
        Turn::claude(vec![tool_use(
            "Grep",
            json!({"pattern": "println", "path": "head"}),
        )]),
        Turn::claude(vec![tool_use(
            "StructuredOutput",
            review(head, vec![finding()]),
        )]),
    ]
}

/// A clean review with the production defaults (no model configured): the real CLI reads the
/// changed file in the round's workspace, the finding points at a line it read, and the
/// observed model (G12) is the one the server said it served.
#[test]
fn real_claude_clean_review() {
    if cli("claude").is_none() {
        return;
    }
    let served = "claude-sonnet-4-6-20261101";
    let fx = Fx::new(|head| {
        Script::new().messages(
            claude_review_turns(head)
                .into_iter()
                .map(|t| t.served_as(served)),
        )
    });
    let run = fx.run("claude");
    run.ok();
    let rec = fx.reviewer("code-1", "claude");
    status(&rec, "completed", "");
    let requests = fx.server.requests_to("/v1/messages");
    assert_eq!(requests.len(), 3, "{requests:#?}\n{run}");

    // The argv's effect on the wire: the prompt is the packet, the tools are the read-only
    // set plus StructuredOutput (the round's schema).
    let first = requests[0].json();
    // (Claude Code's default model also gets a `DeferredToolPlaceholder` with `defer_loading`,
    // "never call this tool"; a call of it would be a violation like any other.)
    let mut tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["defer_loading"] != true)
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    tools.sort();
    assert_eq!(tools, ["Glob", "Grep", "Read", "StructuredOutput"]);
    let packet = fx.round_file("code-1", "packet.md");
    let first_text = first["messages"].to_string();
    let line = packet.lines().next().unwrap();
    assert!(first_text.contains(line), "the packet is not the prompt");

    // The real Read output: the finding's line is one the CLI read in the workspace.
    let read = last_tool_result(&requests[1]);
    assert!(read.contains("2\t    println!(\"hello\");"), "{read}");
    let findings = fx.findings("code-1");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["location"], "head/app/main.rs:2");
    assert_eq!(findings[0]["reviewer"], "claude", "{findings:#?}");

    // G12: what the server served, as the CLI's assistant events name it; the request named
    // the CLI's own default model (no --model in the production argv without configuration).
    assert_eq!(rec["observed_model"], served, "{rec:#}");
    assert_eq!(rec["attempts"][0]["observed_model"], served);
    assert!(rec["attempts"][0].get("model").is_none(), "{rec:#}");
    assert_ne!(models(&fx.server, "/v1/messages")[0], served);
    assert_eq!(rec["attempts"][0]["version"], "2.1.332 (Claude Code)");
    fx.record("code-1", "claude/output.txt", "claude-clean.jsonl");
}

/// A tool outside Read, Grep and Glob: Claude Code does not run it (the model gets "No such
/// tool available"), the stream shows the request, and spar records tool_violation with what
/// the CLI did.
#[test]
fn real_claude_forbidden_tool() {
    if cli("claude").is_none() {
        return;
    }
    let fx = Fx::new(|head| {
        Script::new().messages([
            Turn::claude(vec![tool_use(
                "Write",
                json!({"file_path": "head/app/main.rs", "content": "pwned\n"}),
            )]),
            Turn::claude(vec![tool_use(
                "Bash",
                json!({"command": "touch pwned.txt", "description": "create a file"}),
            )]),
            Turn::claude(vec![tool_use("StructuredOutput", review(head, vec![]))]),
        ])
    });
    fx.run("claude").ok();
    let rec = fx.reviewer("code-1", "claude");
    status(&rec, "tool_violation", "used the tool Write");
    status(
        &rec,
        "tool_violation",
        "Claude Code did not run it: No such tool available: Write",
    );
    assert!(fx.findings("code-1").is_empty());
    let requests = fx.server.requests_to("/v1/messages");
    assert_eq!(requests.len(), 3, "{requests:#?}");
    assert!(last_tool_result(&requests[1]).contains("No such tool available: Write"));
    assert!(last_tool_result(&requests[2]).contains("No such tool available: Bash"));
    assert!(!fx.repo.path().join("pwned.txt").exists());
    assert_eq!(fx.repo.read("app/main.rs"), MAIN_HEAD);
    fx.record("code-1", "claude/output.txt", "claude-forbidden-tool.jsonl");
}

/// A model that never calls StructuredOutput: Claude Code asks it to (a synthetic user turn),
/// then ends with its text as `result` and no `structured_output`; spar records
/// invalid_output.
#[test]
fn real_claude_without_structured_output() {
    if cli("claude").is_none() {
        return;
    }
    let fx = Fx::new(|_| {
        Script::new().messages([Turn::claude(vec![text("I found no problems.")]).forever()])
    });
    fx.run("claude").ok();
    let rec = fx.reviewer("code-1", "claude");
    status(&rec, "invalid_output", "structured_output");
    let output = fx.round_file("code-1", "claude/output.txt");
    assert!(
        output.contains("You MUST call the StructuredOutput tool"),
        "{output}"
    );
    fx.record("code-1", "claude/output.txt", "claude-no-structured.jsonl");
}

/// §5: Claude's 429 text is a quota refusal: unavailable without a fallback model; with one,
/// a second attempt on it succeeds. The preset caps Claude's own retries at two.
#[test]
fn real_claude_quota_refusal_then_fallback() {
    if cli("claude").is_none() {
        return;
    }
    let fx = Fx::new(|head| {
        let mut turns = vec![anthropic_429(); 6];
        turns.extend(claude_review_turns(head));
        Script::new().messages(turns)
    });
    fx.user(
        "[[reviewers]]\nname = \"claude\"\npreset = \"claude\"\nmodel = \"claude-sonnet-4-6\"\n",
    );
    fx.run("claude").code(4); // the only reviewer refused: no reviewer could run
    let rec = fx.reviewer("code-1", "claude");
    let reason = "quota or rate limit: API Error: Request rejected (429) · This request would \
                  exceed your account's rate limit. Please try again later.";
    status(&rec, "unavailable", reason);
    assert_eq!(rec["attempts"].as_array().unwrap().len(), 1, "{rec:#}");
    assert!(
        rec["attempts"][0].get("observed_model").is_none(),
        "{rec:#}"
    );
    // One request and CLAUDE_CODE_MAX_RETRIES=2 retries.
    assert_eq!(fx.server.requests_to("/v1/messages").len(), 3);
    fx.record("code-1", "claude/output.txt", "claude-quota.jsonl");

    fx.user("[[reviewers]]\nname = \"claude\"\npreset = \"claude\"\nmodel = \"claude-sonnet-4-6\"\nfallback_model = \"claude-haiku-4-5\"\n");
    fx.run("claude").ok();
    let rec = fx.reviewer("code-2", "claude");
    status(&rec, "completed", "");
    let attempts = rec["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{rec:#}");
    assert_eq!(attempts[0]["model"], "claude-sonnet-4-6");
    assert_eq!(attempts[0]["refusal"], "quota");
    assert_eq!(attempts[0]["reason"], reason);
    assert_eq!(attempts[0]["exit_code"], 1);
    assert_eq!(attempts[1]["model"], "claude-haiku-4-5");
    assert_eq!(attempts[1]["observed_model"], "claude-haiku-4-5");
    assert_eq!(rec["observed_model"], "claude-haiku-4-5");
    assert_eq!(fx.findings("code-2").len(), 1);
    let m = models(&fx.server, "/v1/messages");
    assert_eq!(m[3..6], ["claude-sonnet-4-6"; 3], "{m:?}");
    assert_eq!(m[6..], ["claude-haiku-4-5"; 3], "{m:?}");
}

/// 401: unavailable (authentication), one attempt, the fallback model never tried.
#[test]
fn real_claude_authentication_refusal() {
    if cli("claude").is_none() {
        return;
    }
    let fx = Fx::new(|_| {
        Script::new().messages([Turn::error(
            401,
            json!({"type": "error", "error": {"type": "authentication_error",
                "message": "invalid x-api-key"}}),
        )
        .forever()])
    });
    fx.user("[[reviewers]]\nname = \"claude\"\npreset = \"claude\"\nmodel = \"claude-sonnet-4-6\"\nfallback_model = \"claude-haiku-4-5\"\n");
    fx.run("claude").code(4); // the only reviewer refused: no reviewer could run
    let rec = fx.reviewer("code-1", "claude");
    status(
        &rec,
        "unavailable",
        "authentication: Invalid API key · Fix external API key",
    );
    assert_eq!(rec["attempts"].as_array().unwrap().len(), 1, "{rec:#}");
    assert_eq!(rec["attempts"][0]["refusal"], "authentication");
    // Claude retries a 401 like a 429: twice under the preset's cap; no fallback model.
    assert_eq!(models(&fx.server, "/v1/messages"), ["claude-sonnet-4-6"; 3]);
    fx.record("code-1", "claude/output.txt", "claude-auth.jsonl");
}

/// A stalled stream: the CLI waits silently; the reviewer's timeout ends it.
#[test]
fn real_claude_stalled_stream_times_out() {
    if cli("claude").is_none() {
        return;
    }
    let fx = Fx::new(|_| Script::new().messages([Turn::stall().forever()]));
    fx.user(&format!(
        "[[reviewers]]\nname = \"claude\"\npreset = \"claude\"\ntimeout_seconds = {STALL_TIMEOUT}\n"
    ));
    let t = Instant::now();
    fx.run("claude").ok();
    assert!(t.elapsed() < Duration::from_secs(STALL_TIMEOUT + 20));
    let rec = fx.reviewer("code-1", "claude");
    status(
        &rec,
        "failed",
        &format!("timed out after {STALL_TIMEOUT} s"),
    );
    assert_eq!(rec["attempts"][0]["timed_out"], true);
    assert!(rec["attempts"][0].get("refusal").is_none());
    // It stalled in the stream: the request arrived.
    assert_eq!(fx.server.requests_to("/v1/messages").len(), 1);
    fx.record("code-1", "claude/output.txt", "claude-init-only.jsonl");
}

// ---------------------------------------------------------------------------------------------
// codex
// ---------------------------------------------------------------------------------------------

fn codex_review_turns(head: &str) -> Vec<Turn> {
    vec![
        Turn::codex(vec![function_call(
            "exec_command",
            json!({"cmd": "cat head/app/main.rs"}),
        )]),
        Turn::codex(vec![message(&review(head, vec![finding()]).to_string())]),
    ]
}

/// A clean review with the production defaults: the real shell prints the changed file, the
/// finding points at a line it printed, and the observed model (G12) is the one Codex's
/// session log names (the JSONL names none; what the server claims is kept nowhere).
#[test]
fn real_codex_clean_review() {
    if cli("codex").is_none() {
        return;
    }
    let fx = Fx::new(|head| {
        Script::new().responses(
            codex_review_turns(head)
                .into_iter()
                .map(|t| t.served_as("gpt-served-2026-11-01")),
        )
    });
    let run = fx.run("codex");
    run.ok();
    let rec = fx.reviewer("code-1", "codex");
    status(&rec, "completed", "");
    let requests = fx.server.requests_to("/v1/responses");
    assert_eq!(requests.len(), 2, "{requests:#?}\n{run}");
    // The argv's effect on the wire: the round's schema as the output format, the packet as
    // the prompt.
    let first = requests[0].json();
    let schema: Value = serde_json::from_str(&fx.round_file("code-1", "schema.json")).unwrap();
    assert_eq!(first["text"]["format"]["name"], "codex_output_schema");
    assert_eq!(first["text"]["format"]["schema"], schema);
    let packet = fx.round_file("code-1", "packet.md");
    assert!(first["input"]
        .to_string()
        .contains(packet.lines().next().unwrap()));
    // The real shell ran `cat` in the workspace.
    let outputs = function_outputs(&requests[1]);
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    assert!(
        outputs[0].ends_with(&format!("Output:\n{MAIN_HEAD}")),
        "{outputs:?}"
    );
    let findings = fx.findings("code-1");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["location"], "head/app/main.rs:2");
    // G12: the model Codex asked for, as its session log names it.
    let asked = first["model"].as_str().unwrap().to_string();
    assert_eq!(rec["observed_model"], asked.as_str(), "{rec:#}");
    assert_eq!(rec["attempts"][0]["version"], "codex-cli 0.171.0");
    fx.record("code-1", "codex/output.txt", "codex-clean.jsonl");
    keep("codex-rollout-clean.jsonl", &fx.codex_session_log("code-1"));
}

/// Writes in the read-only sandbox: blocked by Codex, shown in no JSONL event; the session log
/// shows them and spar records tool_violation with the command the sandbox blocked.
#[test]
fn real_codex_write_attempts() {
    if cli("codex").is_none() {
        return;
    }
    let fx = Fx::new(|head| {
        Script::new().responses([
            Turn::codex(vec![function_call(
                "exec_command",
                json!({"cmd": "touch pwned.txt"}),
            )]),
            Turn::codex(vec![custom_tool_call(
                "apply_patch",
                "*** Begin Patch\n*** Add File: pwned2.txt\n+x\n*** End Patch\n",
            )]),
            Turn::codex(vec![message(&review(head, vec![]).to_string())]),
        ])
    });
    fx.run("codex").ok();
    let rec = fx.reviewer("code-1", "codex");
    status(
        &rec,
        "tool_violation",
        "tried to write; the read-only sandbox blocked it: touch pwned.txt",
    );
    let requests = fx.server.requests_to("/v1/responses");
    assert_eq!(requests.len(), 3, "{requests:#?}");
    let outputs = function_outputs(&requests[2]);
    assert!(
        outputs[0].ends_with("Read-only file system\n"),
        "{outputs:?}"
    );
    assert!(outputs[1].starts_with("patch rejected"), "{outputs:?}");
    assert!(!fx.repo.path().join("pwned.txt").exists());
    fx.record("code-1", "codex/output.txt", "codex-write-attempts.jsonl");
    keep(
        "codex-rollout-write-attempts.jsonl",
        &fx.codex_session_log("code-1"),
    );
}

/// §5: `insufficient_quota` is a quota refusal (not retried by Codex); the fallback model's
/// attempt succeeds, and each attempt's observed model is the one it asked for.
#[test]
fn real_codex_quota_refusal_then_fallback() {
    if cli("codex").is_none() {
        return;
    }
    let fx = Fx::new(|head| {
        let mut turns = vec![Turn::error(
            429,
            json!({"error": {"message": "You exceeded your current quota, please check your plan \
                and billing details.", "type": "insufficient_quota", "param": null,
                "code": "insufficient_quota"}}),
        )];
        turns.extend(codex_review_turns(head));
        Script::new().responses(turns)
    });
    fx.user("[[reviewers]]\nname = \"codex\"\npreset = \"codex\"\nmodel = \"gpt-5.5\"\nfallback_model = \"gpt-5.4-mini\"\n");
    fx.run("codex").ok();
    let rec = fx.reviewer("code-1", "codex");
    status(&rec, "completed", "");
    let attempts = rec["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{rec:#}");
    assert_eq!(attempts[0]["model"], "gpt-5.5");
    assert_eq!(attempts[0]["refusal"], "quota");
    assert_eq!(
        attempts[0]["reason"],
        "quota or rate limit: Quota exceeded. Check your plan and billing details."
    );
    assert_eq!(attempts[1]["model"], "gpt-5.4-mini");
    assert_eq!(attempts[1]["observed_model"], "gpt-5.4-mini");
    assert_eq!(
        models(&fx.server, "/v1/responses"),
        ["gpt-5.5", "gpt-5.4-mini", "gpt-5.4-mini"]
    );
    assert_eq!(fx.findings("code-1").len(), 1);
}

/// 401: Codex reconnects five times, then fails; unavailable (authentication), one attempt,
/// no fallback.
#[test]
fn real_codex_authentication_refusal() {
    if cli("codex").is_none() {
        return;
    }
    let fx = Fx::new(|_| {
        Script::new().responses([Turn::error(
            401,
            json!({"error": {"message": "Incorrect API key provided: sk-fake-0000. You can find \
            your API key at https://platform.openai.com/account/api-keys.",
            "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}),
        )
        .forever()])
    });
    fx.user("[[reviewers]]\nname = \"codex\"\npreset = \"codex\"\nmodel = \"gpt-5.5\"\nfallback_model = \"gpt-5.4-mini\"\n");
    fx.run("codex").code(4); // the only reviewer refused: no reviewer could run
    let rec = fx.reviewer("code-1", "codex");
    status(
        &rec,
        "unavailable",
        "authentication: unexpected status 401 Unauthorized: Incorrect API key provided",
    );
    assert_eq!(rec["attempts"].as_array().unwrap().len(), 1, "{rec:#}");
    assert_eq!(rec["attempts"][0]["refusal"], "authentication");
    assert_eq!(models(&fx.server, "/v1/responses"), ["gpt-5.5"; 6]);
    fx.record("code-1", "codex/output.txt", "codex-auth.jsonl");
}

/// A stalled stream: Codex waits silently; the reviewer's timeout ends it.
#[test]
fn real_codex_stalled_stream_times_out() {
    if cli("codex").is_none() {
        return;
    }
    let fx = Fx::new(|_| Script::new().responses([Turn::stall().forever()]));
    fx.user(&format!(
        "[[reviewers]]\nname = \"codex\"\npreset = \"codex\"\ntimeout_seconds = {STALL_TIMEOUT}\n"
    ));
    let t = Instant::now();
    fx.run("codex").ok();
    assert!(t.elapsed() < Duration::from_secs(STALL_TIMEOUT + 20));
    let rec = fx.reviewer("code-1", "codex");
    status(
        &rec,
        "failed",
        &format!("timed out after {STALL_TIMEOUT} s"),
    );
    assert_eq!(rec["attempts"][0]["timed_out"], true);
    assert_eq!(fx.server.requests_to("/v1/responses").len(), 1);
}
