//! The claude, codex, agy and native presets end to end (issue 7; seed rows G10–G15, G19, §5).
//! Fake `claude`, `codex` and `agy` executables, written by each test into a folder put first on
//! PATH, replay event streams recorded from the real CLIs (`tests/data/reviewer-cli/`, written
//! by `tests/cli/real_spar.rs` from real runs of `git spar run` on the same change; `@HEAD@`
//! stands for the reviewed head). The
//! fakes record the argv, stdin, working directory and `CLAUDE_CODE_MAX_RETRIES` of every call,
//! and the tests check them. spar runs them exactly as it would run the real CLIs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::Run;
use crate::spar_fixture::{spar_fixture, SparChange};

/// A repository on a branch `feature` with one change from `main`, a folder of fake CLIs, their
/// logs, a `CODEX_HOME` and an empty `XDG_CONFIG_HOME`.
struct Fx {
    s: SparChange,
}

spar_fixture!(Fx);

/// One call of a fake CLI.
#[derive(Debug)]
struct Call {
    argv: Vec<String>,
    stdin: String,
    retries: String,
    cwd: String,
    packet_file: Option<String>,
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/reviewer-cli")
        .join(name)
}

impl Fx {
    fn new() -> Fx {
        Fx::with_change("fn main() {\n    println!(\"hello\");\n}\n")
    }

    fn with_change(main_rs: &str) -> Fx {
        let s = SparChange::new(
            &[("app/main.rs", "fn main() {}\n")],
            &[("app/main.rs", main_rs), ("checks/t.py", "import app\n")],
            Some("feature"),
            &["bin", "log", "xdg", "codex-home"],
        );
        Fx { s }
    }

    /// The shell text that prints recording `name` with the head filled in.
    fn replay(&self, name: &str) -> String {
        format!("sed 's/@HEAD@/{}/g' '{}'", self.head, data(name).display())
    }

    /// Writes the fake `name` on PATH: `--version` runs `version` (after printing nothing),
    /// every other call is logged and then runs `body`. `{replay:F}` in either replays F.
    fn fake(&self, name: &str, version: &str, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        let fill = |s: &str| {
            let mut out = s.to_string();
            while let Some(i) = out.find("{replay:") {
                let end = i + out[i..].find('}').unwrap();
                let file = out[i + 8..end].to_string();
                out.replace_range(i..=end, &self.replay(&file));
            }
            out
        };
        let log = self.tmp("log").join(name);
        let script = format!(
            r#"#!/bin/sh
log='{log}'
mkdir -p "$log"
if [ "$1" = "--version" ]; then
{version}
exit 0
fi
n=$(cat "$log/n" 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > "$log/n"
for a in "$@"; do printf '%s\0' "$a"; done > "$log/argv.$n"
cat > "$log/stdin.$n"
printf '%s' "${{CLAUDE_CODE_MAX_RETRIES-unset}}" > "$log/retries.$n"
pwd > "$log/cwd.$n"
if [ -f PACKET.md ]; then cp PACKET.md "$log/packet.$n"; fi
{body}
"#,
            log = log.display(),
            version = fill(version),
            body = fill(body),
        );
        let path = self.tmp("bin").join(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// The calls `name` got, in order (not counting `--version`).
    fn calls(&self, name: &str) -> Vec<Call> {
        let log = self.tmp("log").join(name);
        let n: usize = std::fs::read_to_string(log.join("n"))
            .map(|s| s.trim().parse().unwrap())
            .unwrap_or(0);
        (1..=n)
            .map(|i| {
                let read = |f: &str| std::fs::read_to_string(log.join(format!("{f}.{i}"))).ok();
                Call {
                    argv: read("argv")
                        .unwrap()
                        .split('\0')
                        .filter(|a| !a.is_empty())
                        .map(str::to_string)
                        .collect(),
                    stdin: read("stdin").unwrap_or_default(),
                    retries: read("retries").unwrap_or_default(),
                    cwd: read("cwd").unwrap_or_default().trim().to_string(),
                    packet_file: read("packet"),
                }
            })
            .collect()
    }

    fn user(&self, toml: &str) {
        std::fs::write(self.tmp("user.toml"), toml).unwrap();
    }

    /// `git spar …` with the fakes first on PATH, the user file (if written), an empty
    /// XDG_CONFIG_HOME and the test's CODEX_HOME.
    fn spar(&self, args: &[&str]) -> Run {
        let mut cmd = self.repo.command("git-spar");
        let path = format!(
            "{}:{}",
            self.tmp("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.args(args)
            .env("PATH", path)
            .env("SPAR_CONFIG", self.tmp("user.toml"))
            .env("XDG_CONFIG_HOME", self.tmp("xdg"))
            .env("CODEX_HOME", self.tmp("codex-home"))
            .env_remove("CLAUDE_CODE_MAX_RETRIES");
        Run::of(&mut cmd)
    }

    fn run(&self, extra: &[&str]) -> Run {
        let mut args = vec!["run", "--base", "main"];
        args.extend_from_slice(extra);
        self.spar(&args)
    }

    fn round_file(&self, round: &str, file: &str) -> String {
        self.repo.git(&[
            "show",
            &format!("refs/spar/series/feature:rounds/{round}/{file}"),
        ])
    }

    fn round_json(&self, round: &str) -> Value {
        serde_json::from_str(&self.round_file(round, "round.json")).unwrap()
    }

    fn reviewer(&self, round: &str, name: &str) -> Value {
        let r = self.round_json(round);
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

    fn packet(&self, round: &str) -> String {
        self.round_file(round, "packet.md")
    }

    fn schema(&self, round: &str) -> Value {
        serde_json::from_str(&self.round_file(round, "schema.json")).unwrap()
    }
}

const CLAUDE_VERSION: &str = "echo '2.1.332 (Claude Code)'";
const CODEX_VERSION: &str = "echo 'codex-cli 0.171.0'";
const AGY_VERSION: &str = "echo 'agy 1.1.13'";

/// The body of a fake codex that writes the session log `rollout` where Codex keeps it (under
/// `$CODEX_HOME/sessions/`, named by the `thread_id` of `jsonl`'s `thread.started`), then
/// replays `jsonl`.
fn codex_with_session_log(jsonl: &str, rollout: &str) -> String {
    let first = std::fs::read_to_string(data(jsonl)).unwrap();
    let first: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    let thread = first["thread_id"].as_str().unwrap();
    format!(
        "mkdir -p \"$CODEX_HOME/sessions/2026/11/30\"\n{{replay:{rollout}}} > \"$CODEX_HOME/sessions/2026/11/30/rollout-2026-11-30T15-29-37-{thread}.jsonl\"\n{{replay:{jsonl}}}"
    )
}

/// The models the real CLIs named in the recorded clean reviews (G12): the one the scripted
/// server said it served (Claude's assistant events), and Codex's default model (its session
/// log).
const CLAUDE_SERVED: &str = "claude-sonnet-4-6-20261101";
const CODEX_DEFAULT_MODEL: &str = "gpt-6.2-sol";

/// The value after `flag` in `argv`.
fn after<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    argv.iter()
        .position(|a| a == flag)
        .and_then(|i| argv.get(i + 1))
        .map(String::as_str)
}

#[track_caller]
fn status(rec: &Value, status: &str, needle: &str) {
    assert_eq!(rec["status"], status, "{rec:#}");
    let reason = rec["reason"].as_str().unwrap();
    assert!(reason.contains(needle), "reason lacks {needle:?}: {rec:#}");
}

// ---------------------------------------------------------------------------------------------
// claude
// ---------------------------------------------------------------------------------------------

/// The README's first command, unchanged, with no configuration at all: the default reviewers
/// claude and codex run, their results are checked and classified, the observed models come
/// from their output (G12), and each got its input the way the real CLIs take it.
#[test]
fn default_reviewers_claude_and_codex_run_unchanged() {
    let fx = Fx::new();
    fx.fake("claude", CLAUDE_VERSION, "{replay:claude-clean.jsonl}");
    fx.fake(
        "codex",
        CODEX_VERSION,
        &codex_with_session_log("codex-clean.jsonl", "codex-rollout-clean.jsonl"),
    );
    let run = fx.run(&["--reviewers", "claude,codex"]);
    run.ok();
    // A non-terminal gets one log line per event.
    run.stderr_has("spar: code-1: claude: tool Read")
        .stderr_has("spar: code-1: codex: command /bin/bash -lc 'cat head/app/main.rs'")
        .stderr_has("spar: code-1: claude: version 2.1.332 (Claude Code)");
    let claude = fx.reviewer("code-1", "claude");
    status(&claude, "completed", "");
    assert_eq!(claude["observed_model"], CLAUDE_SERVED);
    let attempts = claude["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{claude:#}");
    assert_eq!(attempts[0]["observed_model"], CLAUDE_SERVED);
    assert_eq!(attempts[0]["version"], "2.1.332 (Claude Code)");
    assert_eq!(attempts[0]["exit_code"], 0);
    assert!(attempts[0].get("model").is_none(), "{claude:#}");
    let codex = fx.reviewer("code-1", "codex");
    status(&codex, "completed", "");
    assert_eq!(
        codex["observed_model"], CODEX_DEFAULT_MODEL,
        "from the session log"
    );
    let ids: Vec<String> = fx
        .findings("code-1")
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["claude-F1", "codex-F1"]);

    // claude: print mode, stream-json (with --verbose), the round's schema, Read/Grep/Glob,
    // the input on stdin, no model or effort, its own retries capped.
    let packet = fx.packet("code-1");
    let calls = fx.calls("claude");
    assert_eq!(calls.len(), 1);
    let c = &calls[0];
    assert!(c.argv.contains(&"-p".to_string()), "{c:?}");
    assert_eq!(after(&c.argv, "--output-format"), Some("stream-json"));
    assert!(c.argv.contains(&"--verbose".to_string()));
    assert_eq!(after(&c.argv, "--tools"), Some("Read,Grep,Glob"));
    let schema: Value = serde_json::from_str(after(&c.argv, "--json-schema").unwrap()).unwrap();
    assert_eq!(schema, fx.schema("code-1"));
    assert!(!c.argv.iter().any(|a| a == "--model" || a == "--effort"));
    assert!(!c.argv.iter().any(|a| a == "--allowedTools"));
    assert_eq!(c.stdin, packet, "the prompt is the packet, on stdin");
    assert_eq!(c.retries, "2");
    assert!(
        c.cwd.ends_with("spar/workspaces/feature/code-1"),
        "{}",
        c.cwd
    );
    // codex: exec --json, the schema file, a read-only sandbox, the prompt on stdin (`-`).
    let calls = fx.calls("codex");
    let c = &calls[0];
    assert_eq!(&c.argv[..2], ["exec", "--json"], "{c:?}");
    let schema_file = after(&c.argv, "--output-schema").unwrap();
    assert!(schema_file.ends_with("code-1/schema.json"), "{schema_file}");
    assert_eq!(after(&c.argv, "--sandbox"), Some("read-only"));
    assert_eq!(c.argv.last().map(String::as_str), Some("-"));
    assert!(!c.argv.iter().any(|a| a == "-m" || a == "-c"));
    assert_eq!(c.stdin, packet);
}

/// `--model` and `--effort` reach the CLIs as their own flags, only when given.
#[test]
fn model_and_effort_only_when_given() {
    let fx = Fx::new();
    fx.fake("claude", CLAUDE_VERSION, "{replay:claude-clean.jsonl}");
    fx.fake("codex", CODEX_VERSION, "{replay:codex-clean.jsonl}");
    let run = fx.run(&[
        "--reviewers",
        "claude,codex",
        "--model",
        "claude=opus-x",
        "--effort",
        "claude=high",
        "--model",
        "codex=gpt-5.5",
        "--effort",
        "codex=xhigh",
    ]);
    run.ok();
    let c = &fx.calls("claude")[0];
    assert_eq!(after(&c.argv, "--model"), Some("opus-x"));
    assert_eq!(after(&c.argv, "--effort"), Some("high"));
    let c = &fx.calls("codex")[0];
    assert_eq!(after(&c.argv, "-m"), Some("gpt-5.5"));
    assert_eq!(
        after(&c.argv, "-c"),
        Some("model_reasoning_effort=\"xhigh\"")
    );
    assert_eq!(c.argv.last().map(String::as_str), Some("-"));
    let claude = fx.reviewer("code-1", "claude");
    assert_eq!(claude["model"], "opus-x");
    assert_eq!(claude["attempts"][0]["model"], "opus-x");
    // codex's JSONL names no model and there is no session log here: unknown (G12).
    let codex = fx.reviewer("code-1", "codex");
    assert_eq!(codex["observed_model"], Value::Null, "{codex:#}");
    assert!(codex["attempts"][0].get("observed_model").is_none());
}

/// G10: a tool outside Read, Grep, Glob is a tool violation, and its result is not used.
#[test]
fn claude_forbidden_tool_is_a_violation() {
    let fx = Fx::new();
    fx.fake(
        "claude",
        CLAUDE_VERSION,
        "{replay:claude-forbidden-tool.jsonl}",
    );
    fx.run(&["--reviewers", "claude"]).ok();
    let rec = fx.reviewer("code-1", "claude");
    status(&rec, "tool_violation", "Write");
    assert!(fx.findings("code-1").is_empty());
}

/// No StructuredOutput call and a `result` that is no JSON object: invalid_output.
#[test]
fn claude_without_structured_output_is_invalid_output() {
    let fx = Fx::new();
    fx.fake(
        "claude",
        CLAUDE_VERSION,
        "{replay:claude-no-structured.jsonl}",
    );
    fx.run(&["--reviewers", "claude"]).ok();
    status(
        &fx.reviewer("code-1", "claude"),
        "invalid_output",
        "structured_output",
    );
}

/// §5, G13: a quota refusal is retried once with the fallback model; both attempts are
/// recorded, the first with its refusal.
#[test]
fn quota_refusal_then_success_with_the_fallback_model() {
    let fx = Fx::new();
    fx.fake(
        "claude",
        CLAUDE_VERSION,
        "case \" $* \" in\n*\" fallback-m \"*) {replay:claude-clean.jsonl} ;;\n*) {replay:claude-quota.jsonl}; exit 1 ;;\nesac",
    );
    fx.user(
        "[[reviewers]]\nname = \"claude\"\npreset = \"claude\"\nmodel = \"main-m\"\nfallback_model = \"fallback-m\"\n",
    );
    fx.run(&[]).ok();
    let rec = fx.reviewer("code-1", "claude");
    status(&rec, "completed", "");
    let attempts = rec["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{rec:#}");
    assert_eq!(attempts[0]["model"], "main-m");
    assert_eq!(attempts[0]["refusal"], "quota");
    assert_eq!(attempts[0]["exit_code"], 1);
    assert!(attempts[0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("quota or rate limit: API Error: Request rejected (429)"));
    assert!(
        attempts[0].get("observed_model").is_none(),
        "<synthetic> is not a model"
    );
    assert_eq!(attempts[1]["model"], "fallback-m");
    assert!(attempts[1].get("refusal").is_none());
    let calls = fx.calls("claude");
    assert_eq!(calls.len(), 2);
    assert_eq!(after(&calls[0].argv, "--model"), Some("main-m"));
    assert_eq!(after(&calls[1].argv, "--model"), Some("fallback-m"));
}

/// Without a fallback model a quota refusal leaves the reviewer unavailable after one attempt.
#[test]
fn quota_refusal_without_fallback_is_unavailable() {
    let fx = Fx::new();
    fx.fake(
        "claude",
        CLAUDE_VERSION,
        "{replay:claude-quota.jsonl}; exit 1",
    );
    fx.run(&["--reviewers", "claude"]).code(4); // every reviewer refused: no reviewer could run
    let rec = fx.reviewer("code-1", "claude");
    status(&rec, "unavailable", "quota or rate limit: ");
    assert_eq!(rec["attempts"].as_array().unwrap().len(), 1);
}

/// An authentication refusal is unavailable and never falls back.
#[test]
fn authentication_refusal_does_not_fall_back() {
    let fx = Fx::new();
    fx.fake(
        "claude",
        CLAUDE_VERSION,
        "{replay:claude-auth.jsonl}; exit 1",
    );
    fx.user(
        "[[reviewers]]\nname = \"claude\"\npreset = \"claude\"\nfallback_model = \"fallback-m\"\n",
    );
    fx.run(&[]).code(4); // every reviewer refused: no reviewer could run
    let rec = fx.reviewer("code-1", "claude");
    status(
        &rec,
        "unavailable",
        "authentication: Invalid API key · Fix external API key",
    );
    assert_eq!(rec["attempts"].as_array().unwrap().len(), 1, "{rec:#}");
    assert_eq!(rec["attempts"][0]["refusal"], "authentication");
    assert_eq!(fx.calls("claude").len(), 1);
}

/// G19: a stalled stream is killed at the timeout (its process group with it); a crash is
/// failed with what ended it. Neither is a refusal.
#[test]
fn hang_past_the_timeout_and_crash_are_failed() {
    let fx = Fx::new();
    fx.fake(
        "claude",
        CLAUDE_VERSION,
        "{replay:claude-init-only.jsonl}\nsleep 30",
    );
    fx.fake(
        "agy",
        AGY_VERSION,
        "{replay:claude-init-only.jsonl}\nkill -SEGV $$",
    );
    fx.user("timeout_seconds = 1\n[[reviewers]]\nname = \"claude\"\npreset = \"claude\"\n[[reviewers]]\nname = \"agy\"\npreset = \"agy\"\n");
    let t = Instant::now();
    fx.run(&[]).ok();
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "the timeout did not stop it"
    );
    let rec = fx.reviewer("code-1", "claude");
    status(&rec, "failed", "timed out after 1 s");
    assert_eq!(rec["attempts"][0]["timed_out"], true);
    assert!(rec["attempts"][0].get("refusal").is_none());
    status(
        &fx.reviewer("code-1", "agy"),
        "failed",
        "killed by signal 11",
    );
}

/// G19: the version check runs inside the attempt's timeout (it hangs here: killed at 1 s),
/// and a version check that fails fails the reviewer without running it.
#[test]
fn version_check_is_inside_the_timeout() {
    let fx = Fx::new();
    fx.fake("claude", "sleep 30", "{replay:claude-clean.jsonl}");
    fx.fake(
        "codex",
        "echo 'no such option' >&2; exit 2",
        "{replay:codex-clean.jsonl}",
    );
    fx.user("timeout_seconds = 1\n[[reviewers]]\nname = \"claude\"\npreset = \"claude\"\n[[reviewers]]\nname = \"codex\"\npreset = \"codex\"\n");
    let t = Instant::now();
    fx.run(&[]).ok();
    assert!(t.elapsed() < Duration::from_secs(20));
    status(
        &fx.reviewer("code-1", "claude"),
        "failed",
        "in the version check",
    );
    assert!(
        fx.calls("claude").is_empty(),
        "it ran after a hung version check"
    );
    status(&fx.reviewer("code-1", "codex"), "failed", "no such option");
    assert!(fx.calls("codex").is_empty());
}

/// G14: a preset's executable is found on PATH by its name or `binary`; missing is
/// unavailable, not executable is failed.
#[test]
fn preset_executables_are_found_like_any_other() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fx::new();
    fx.fake("my-claude", CLAUDE_VERSION, "{replay:claude-clean.jsonl}");
    let noexec = fx.tmp("bin/agy");
    std::fs::write(&noexec, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&noexec, std::fs::Permissions::from_mode(0o644)).unwrap();
    fx.user(&format!(
        "[[reviewers]]\nname = \"cl\"\npreset = \"claude\"\nbinary = \"my-claude\"\n[[reviewers]]\nname = \"agy\"\npreset = \"agy\"\n[[reviewers]]\nname = \"cx\"\npreset = \"codex\"\nbinary = \"{}\"\n",
        noexec.display()
    ));
    fx.run(&[]).ok();
    status(&fx.reviewer("code-1", "cl"), "completed", "");
    status(
        &fx.reviewer("code-1", "agy"),
        "unavailable",
        "not executable",
    );
    status(&fx.reviewer("code-1", "cx"), "failed", "not executable");
}

// ---------------------------------------------------------------------------------------------
// codex
// ---------------------------------------------------------------------------------------------

/// A write the read-only sandbox blocked shows in no --json event; the session log under
/// CODEX_HOME (named by thread.started's thread_id) shows it, and it is a tool violation.
#[test]
fn codex_sandbox_blocked_write_is_found_in_the_session_log() {
    let fx = Fx::new();
    fx.fake(
        "codex",
        CODEX_VERSION,
        &codex_with_session_log(
            "codex-write-attempts.jsonl",
            "codex-rollout-write-attempts.jsonl",
        ),
    );
    fx.run(&["--reviewers", "codex"]).ok();
    let rec = fx.reviewer("code-1", "codex");
    status(&rec, "tool_violation", "touch pwned.txt");
    assert_eq!(rec["observed_model"], CODEX_DEFAULT_MODEL);
}

/// G10: an item other than messages, reasoning and commands is a tool violation.
#[test]
fn codex_file_change_item_is_a_violation() {
    let fx = Fx::new();
    fx.fake("codex", CODEX_VERSION, "{replay:codex-file-change.jsonl}");
    fx.run(&["--reviewers", "codex"]).ok();
    status(
        &fx.reviewer("code-1", "codex"),
        "tool_violation",
        "file_change",
    );
}

/// §5: Codex's usage-limit text (with its typographic apostrophe) is a quota refusal and its
/// reset time is recorded; its 401 is an authentication refusal.
#[test]
fn codex_refusals_and_reset_time() {
    let fx = Fx::new();
    fx.fake(
        "codex",
        CODEX_VERSION,
        "{replay:codex-usage-limit.jsonl}; exit 1",
    );
    fx.fake(
        "cx-auth",
        CODEX_VERSION,
        "{replay:codex-auth.jsonl}; exit 1",
    );
    fx.user("[[reviewers]]\nname = \"codex\"\npreset = \"codex\"\n[[reviewers]]\nname = \"auth\"\npreset = \"codex\"\nbinary = \"cx-auth\"\nfallback_model = \"other\"\n");
    fx.run(&[]).code(4); // every reviewer refused: no reviewer could run
    let rec = fx.reviewer("code-1", "codex");
    status(
        &rec,
        "unavailable",
        "quota or rate limit: You've hit your usage limit.",
    );
    assert_eq!(rec["resets"], "4:13 PM", "{rec:#}");
    assert_eq!(rec["attempts"][0]["resets"], "4:13 PM");
    let summary = fx.round_file("code-1", "summary.md");
    assert!(summary.contains("4:13 PM"), "{summary}");
    let rec = fx.reviewer("code-1", "auth");
    status(&rec, "unavailable", "authentication: ");
    assert!(rec["reason"].as_str().unwrap().contains("401 Unauthorized"));
    assert_eq!(rec["attempts"].as_array().unwrap().len(), 1);
    assert!(rec.get("resets").is_none());
}

// ---------------------------------------------------------------------------------------------
// agy
// ---------------------------------------------------------------------------------------------

/// agy gets the command guidance and the packet with -p; read_file and read-only shell lines
/// (G11) are fine.
#[test]
fn agy_clean_review() {
    let fx = Fx::new();
    fx.fake("agy", AGY_VERSION, "{replay:agy-clean.jsonl}");
    fx.run(&["--reviewers", "agy"]).ok();
    let rec = fx.reviewer("code-1", "agy");
    status(&rec, "completed", "");
    assert_eq!(rec["observed_model"], "gemini-3-pro");
    let c = &fx.calls("agy")[0];
    let p = after(&c.argv, "-p").unwrap();
    assert!(p.starts_with("# Tools for this review"), "{p}");
    assert!(p.ends_with(&fx.packet("code-1")), "-p ends with the packet");
    assert_eq!(after(&c.argv, "--output-format"), Some("stream-json"));
    assert!(!c.argv.iter().any(|a| a == "--model"));
    assert!(c.stdin.is_empty());
    assert!(c.packet_file.is_none());
}

/// G11: one forbidden shell line is a tool violation naming the line and its first problem;
/// G10: a tool other than read_file and the shell too.
#[test]
fn agy_forbidden_shell_line_and_tool() {
    let fx = Fx::new();
    fx.fake("agy", AGY_VERSION, "{replay:agy-forbidden-shell.jsonl}");
    fx.fake("agy2", AGY_VERSION, "{replay:agy-forbidden-tool.jsonl}");
    fx.user("[[reviewers]]\nname = \"agy\"\npreset = \"agy\"\n[[reviewers]]\nname = \"w\"\npreset = \"agy\"\nbinary = \"agy2\"\n");
    fx.run(&[]).ok();
    let rec = fx.reviewer("code-1", "agy");
    status(
        &rec,
        "tool_violation",
        "\"grep x head/a 2>/dev/null; touch pwn\"; first problem: touch",
    );
    status(&fx.reviewer("code-1", "w"), "tool_violation", "write_file");
}

/// A large packet goes to PACKET.md; -p holds the guidance and says where the packet is.
#[test]
fn agy_large_packet_goes_to_packet_md() {
    let big = format!(
        "fn main() {{\n{}}}\n",
        "    println!(\"a line long enough to make the packet large\");\n".repeat(2500)
    );
    let fx = Fx::with_change(&big);
    fx.fake("agy", AGY_VERSION, "{replay:agy-clean.jsonl}");
    fx.run(&["--reviewers", "agy"]).ok();
    let c = &fx.calls("agy")[0];
    let p = after(&c.argv, "-p").unwrap();
    assert!(p.contains("PACKET.md") && p.len() < 10_000, "{}", p.len());
    assert_eq!(c.packet_file.as_deref(), Some(fx.packet("code-1").as_str()));
}

/// §5 for agy: RESOURCE_EXHAUSTED is a quota refusal.
#[test]
fn agy_quota_refusal() {
    let fx = Fx::new();
    fx.fake("agy", AGY_VERSION, "{replay:agy-quota.jsonl}; exit 1");
    fx.run(&["--reviewers", "agy"]).code(4); // every reviewer refused: no reviewer could run
    status(
        &fx.reviewer("code-1", "agy"),
        "unavailable",
        "quota or rate limit: ",
    );
}

// ---------------------------------------------------------------------------------------------
// native (G15)
// ---------------------------------------------------------------------------------------------

/// A transcript line as Claude Code writes it.
fn entry(kind: &str, cwd: Option<&str>, message: Value) -> String {
    let mut v = serde_json::json!({
        "parentUuid": null, "isSidechain": true, "userType": "external",
        "sessionId": "9ecb", "version": "2.1.332", "type": kind,
        "message": message, "uuid": "063f", "timestamp": "2026-11-30T14:23:32.400Z",
    });
    if let Some(c) = cwd {
        v["cwd"] = Value::from(c);
    }
    v.to_string()
}

fn tool(name: &str, input: Value) -> Value {
    serde_json::json!({"model": "claude-opus-x", "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": input}]})
}

/// The native reviewer is pending with its prompt.md; `record --transcript` reads the
/// subagent's transcript, records its result and the G15 warnings (kind and tool only).
#[test]
fn native_transcript_is_recorded_with_its_warnings() {
    let fx = Fx::new();
    fx.user("[[reviewers]]\nname = \"host\"\npreset = \"native\"\n");
    fx.run(&[]).ok().stdout_has("workspace kept");
    let rec = fx.reviewer("code-1", "host");
    status(&rec, "pending", "--transcript");
    let prompt = rec["prompt"].as_str().unwrap().to_string();
    assert!(Path::new(&prompt).is_file(), "{prompt}");
    let ws = Path::new(&prompt).parent().unwrap().parent().unwrap();
    let ws_s = ws.display().to_string();
    let result = std::fs::read_to_string(data("claude-clean.jsonl"))
        .unwrap()
        .lines()
        .last()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["structured_output"].clone())
        .unwrap()
        .to_string()
        .replace("@HEAD@", &fx.head);
    let result: Value = serde_json::from_str(&result).unwrap();
    let lines = [
        entry(
            "user",
            Some(&ws_s),
            serde_json::json!({"role": "user", "content": "Review the round."}),
        ),
        entry(
            "assistant",
            Some(&ws_s),
            tool("Read", serde_json::json!({"file_path": prompt})),
        ),
        entry(
            "assistant",
            Some(&format!("{ws_s}/head")),
            tool("Grep", serde_json::json!({"pattern": "x", "path": "app"})),
        ),
        entry(
            "assistant",
            Some(&ws_s),
            tool("Read", serde_json::json!({"file_path": "/etc/passwd"})),
        ),
        entry(
            "assistant",
            None,
            tool("Glob", serde_json::json!({"pattern": "*"})),
        ),
        entry(
            "assistant",
            Some(&ws_s),
            tool("Bash", serde_json::json!({"command": "ls"})),
        ),
        entry("attachment", Some(&ws_s), serde_json::json!({})),
        entry("assistant", Some(&ws_s), tool("StructuredOutput", result)),
    ];
    let t = fx.tmp("transcript.jsonl");
    std::fs::write(&t, lines.join("\n")).unwrap();
    let t = t.display().to_string();

    // Refusals first: nothing is written.
    let tip = fx.repo.git(&["rev-parse", "refs/spar/series/feature"]);
    let bad = fx.tmp("bad.jsonl");
    std::fs::write(&bad, "{\"type\":\"user\"}\nnot json\n").unwrap();
    fx.spar(&[
        "record",
        "feature",
        "code-1",
        "host",
        "--transcript",
        &bad.display().to_string(),
    ])
    .code(65)
    .stderr_has("line 2");
    fx.spar(&[
        "record",
        "feature",
        "code-1",
        "host",
        "--transcript",
        &fx.tmp("none").display().to_string(),
    ])
    .code(65)
    .stderr_has("cannot be read");
    fx.spar(&[
        "record",
        "feature",
        "code-1",
        "host",
        "--transcript",
        &t,
        "--result",
        &t,
    ])
    .code(64);
    assert_eq!(fx.repo.git(&["rev-parse", "refs/spar/series/feature"]), tip);

    // A transcript without an answer: invalid_output, saying so; the reviewer did not
    // complete, so a later record takes its place.
    let t3 = fx.tmp("t3.jsonl");
    std::fs::write(&t3, [lines[0].clone(), lines[1].clone()].join("\n")).unwrap();
    fx.spar(&[
        "record",
        "feature",
        "code-1",
        "host",
        "--transcript",
        &t3.display().to_string(),
    ])
    .ok();
    status(
        &fx.reviewer("code-1", "host"),
        "invalid_output",
        "no StructuredOutput call and no final answer",
    );

    fx.spar(&["record", "feature", "code-1", "host", "--transcript", &t])
        .ok()
        .stdout_has("completed");
    let round = fx.round_json("code-1");
    let rec = fx.reviewer("code-1", "host");
    status(&rec, "completed", "");
    assert_eq!(rec["observed_model"], "claude-opus-x");
    let warnings: Vec<&str> = round["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(
        warnings,
        [
            "host: the subagent read outside the native workspace with Read",
            "host: the subagent read outside the native workspace with Glob",
            "host: the subagent used a tool outside Read, Grep and Glob: Bash",
            "host: the host added context to the subagent (attachment)",
        ],
        "{round:#}"
    );
    assert!(
        !round.to_string().contains("/etc/passwd"),
        "a warning holds a path"
    );
    assert_eq!(fx.findings("code-1").len(), 1);
    let summary = fx.round_file("code-1", "summary.md");
    assert!(
        summary.contains(
            "## Warnings\n\n- host: the subagent read outside the native workspace with Read\n"
        ),
        "{summary}"
    );

    // A completed result is final: a second record is refused and writes nothing.
    let t2 = fx.tmp("t2.jsonl");
    std::fs::write(&t2, [lines[0].clone(), lines[7].clone()].join("\n")).unwrap();
    let t2 = t2.display().to_string();
    let tip = fx.repo.git(&["rev-parse", "refs/spar/series/feature"]);
    fx.spar(&["record", "feature", "code-1", "host", "--transcript", &t2])
        .code(65)
        .stderr_has("already completed");
    assert_eq!(fx.repo.git(&["rev-parse", "refs/spar/series/feature"]), tip);

    // The same transcript without reading prompt.md, in a new round: warned.
    fx.run(&[]).ok();
    fx.spar(&["record", "feature", "code-2", "host", "--transcript", &t2])
        .ok();
    let round = fx.round_json("code-2");
    assert_eq!(
        round["warnings"],
        serde_json::json!(["host: the subagent did not read prompt.md"]),
        "{round:#}"
    );
}

/// §5 is read in stderr too, without regard to case; a failure with no phrase of §5 is no
/// refusal (G13): failed as it ended, and the fallback model is not tried.
#[test]
fn refusals_in_stderr_and_failures_that_are_not_refusals() {
    let fx = Fx::new();
    fx.fake(
        "agy",
        AGY_VERSION,
        "echo 'Error: NOT LOGGED IN. Run `agy login` first.' >&2; exit 1",
    );
    fx.fake(
        "claude",
        CLAUDE_VERSION,
        "{replay:claude-init-only.jsonl}\necho 'Selected model is at capacity. Please try a different model.' >&2; exit 1",
    );
    fx.user("[[reviewers]]\nname = \"agy\"\npreset = \"agy\"\n[[reviewers]]\nname = \"claude\"\npreset = \"claude\"\nfallback_model = \"fallback-m\"\n");
    fx.run(&[]).ok();
    status(
        &fx.reviewer("code-1", "agy"),
        "unavailable",
        "authentication: Error: NOT LOGGED IN.",
    );
    let rec = fx.reviewer("code-1", "claude");
    status(&rec, "failed", "exit 1: Selected model is at capacity");
    assert_eq!(rec["attempts"].as_array().unwrap().len(), 1, "{rec:#}");
    assert!(rec["attempts"][0].get("refusal").is_none());
    assert_eq!(fx.calls("claude").len(), 1);
}

/// On a terminal each reviewer has one line with its state and elapsed time, redrawn in place,
/// instead of one log line per event.
#[test]
fn a_terminal_gets_one_line_per_reviewer() {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    let fx = Fx::new();
    fx.fake("claude", CLAUDE_VERSION, "{replay:claude-clean.jsonl}");
    fx.fake(
        "codex",
        CODEX_VERSION,
        "{replay:codex-usage-limit.jsonl}; exit 1",
    );
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two new descriptors into the integers given; nothing else.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty failed");
    // SAFETY: both descriptors were just opened and are owned here only.
    let (mut master, slave) = unsafe {
        (
            std::fs::File::from_raw_fd(master),
            std::process::Stdio::from_raw_fd(slave),
        )
    };
    let mut cmd = fx.repo.command("git-spar");
    let path = format!(
        "{}:{}",
        fx.tmp("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.args(["run", "--base", "main", "--reviewers", "claude,codex"])
        .env("PATH", path)
        .env("SPAR_CONFIG", fx.tmp("user.toml"))
        .env("XDG_CONFIG_HOME", fx.tmp("xdg"))
        .env("CODEX_HOME", fx.tmp("codex-home"))
        .stdout(std::process::Stdio::null())
        .stderr(slave);
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        // Ends with EIO once the child and every copy of the terminal's other end are gone.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&out).into_owned()
    });
    assert!(child.wait().unwrap().success());
    let screen = reader.join().unwrap();
    assert!(screen.contains("\x1b[2K"), "no line was redrawn:\n{screen}");
    assert!(
        !screen.contains("spar: code-1: claude: tool Read"),
        "a terminal got the event log:\n{screen}"
    );
    let last = |name: &str| {
        screen
            .lines()
            .rfind(|l| l.contains(&format!("  {name} ")))
            .unwrap_or_else(|| panic!("no line for {name}:\n{screen}"))
            .to_string()
    };
    assert!(last("claude").contains("completed"), "{screen}");
    assert!(last("codex").contains("unavailable"), "{screen}");
    let claude = last("claude");
    let elapsed = claude
        .split_whitespace()
        .any(|w| w.ends_with('s') && w[..w.len() - 1].parse::<u64>().is_ok());
    assert!(elapsed, "no elapsed time in {claude:?}");
}
