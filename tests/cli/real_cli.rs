//! The real reviewer CLIs (Claude Code, Codex) against the scripted model server (issue 11).
//!
//! These tests run the CLIs directly — `tests/cli/real_spar.rs` runs them through `git spar` —
//! with the argv and environment the presets build ([`claude_launch`], [`codex_launch`]: the
//! presets' own builders, `rails_spar::spar::preset::{claude,codex}::launch`). Only the
//! environment (and, for Codex, `config.toml` in a temporary `CODEX_HOME`) points them at the
//! server. Every assertion is about what the real
//! CLI printed or sent; the printed streams are kept under `tests/data/real-cli/` (see its
//! README) — rewrite them with `UPDATE_REAL_CLI=1`, otherwise each run checks that the CLI still
//! prints the same sequence of events as the recording.
//!
//! Where the CLIs are: `RAILS_TEST_CLI_BIN` (a folder holding `claude` and `codex`), else
//! `.ci/clis/node_modules/.bin` (where `.ci/run` installs the pinned versions). When a CLI is
//! absent the test prints `skipped: …` straight to the terminal and returns, unless
//! `RAILS_TEST_REQUIRE_REAL_CLIS=1` (CI), where it fails.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rails_spar::spar::preset::{self, Launch, LaunchContext};
use serde_json::{json, Value};

use super::harness::{hermetic_command, system_path};
use super::model_server::{
    custom_tool_call, function_call, message, text, tool_use, ModelServer, Script, Turn,
};

// ---------------------------------------------------------------------------------------------
// The production argv and environment: the presets' builders.
// ---------------------------------------------------------------------------------------------

/// What the claude preset starts (its argv without the executable, and its environment, e.g.
/// `CLAUDE_CODE_MAX_RETRIES=2`) for the review of `ws` on `model`.
fn claude_launch(claude: &Path, ws: &Workspace, model: &str) -> Launch {
    preset::claude::launch(&LaunchContext {
        exe: claude,
        workspace: &ws.work,
        input: PROMPT,
        schema: SCHEMA,
        model: Some(model),
        effort: None,
    })
}

/// What the codex preset starts: `exec --json`, the workspace's `schema.json` as the output
/// schema, a read-only sandbox, the prompt on stdin.
fn codex_launch(codex: &Path, ws: &Workspace, model: &str) -> Launch {
    preset::codex::launch(&LaunchContext {
        exe: codex,
        workspace: &ws.work,
        input: PROMPT,
        schema: SCHEMA,
        model: Some(model),
        effort: None,
    })
}

/// The retries the claude preset allows Claude Code (it retries 429 and 401 alike).
fn claude_retries() -> usize {
    preset::claude::MAX_RETRIES.parse().unwrap()
}

// ---------------------------------------------------------------------------------------------
// The review every scenario asks for.
// ---------------------------------------------------------------------------------------------

const PROMPT: &str = "You are reviewing a change. Read head/app.sh and report problems as JSON \
                      matching the given schema. Do not modify any file.\n";

const SCHEMA: &str = r#"{"type":"object","properties":{"verdict":{"type":"string","enum":["approve","request_changes"]},"findings":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},"line":{"type":"integer"},"severity":{"type":"string","enum":["error","warning","note"]},"message":{"type":"string"}},"required":["path","line","severity","message"],"additionalProperties":false}}},"required":["verdict","findings"],"additionalProperties":false}"#;

const APP_SH: &str = "#!/bin/sh\n# deploy helper\nset -e\nTARGET=$1\nrm -rf /srv/app/$TARGET/*\n\
                      cp -r build/* /srv/app/$TARGET/\necho \"deployed to $TARGET\"\n";
const LIB_SH: &str = "#!/bin/sh\n# shared helpers\nlog() { echo \"[deploy] $*\" >&2; }\n";

/// The finding the scripted model reports: line 5 of head/app.sh, the unquoted `rm -rf`.
fn review() -> Value {
    json!({"verdict": "request_changes", "findings": [{"path": "head/app.sh", "line": 5,
        "severity": "error",
        "message": "Unquoted $TARGET: an empty argument turns the rm into rm -rf /srv/app/*"}]})
}

fn approve() -> Value {
    json!({"verdict": "approve", "findings": []})
}

// ---------------------------------------------------------------------------------------------
// Finding the CLIs; the hermetic workspace; running with our own timeout.
// ---------------------------------------------------------------------------------------------

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn cli_dir() -> PathBuf {
    match std::env::var_os("RAILS_TEST_CLI_BIN") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => repo_root().join(".ci/clis/node_modules/.bin"),
    }
}

/// The CLI `name`, or `None` after printing why the test is skipped (a failure when
/// `RAILS_TEST_REQUIRE_REAL_CLIS=1`).
pub(crate) fn cli(name: &str) -> Option<PathBuf> {
    let path = cli_dir().join(name);
    if path.is_file() {
        return Some(path);
    }
    let why = format!(
        "{name} is not installed at {} (npm unreachable? `.ci/run` installs the pinned versions \
         into .ci/clis; RAILS_TEST_CLI_BIN names another folder)",
        path.display()
    );
    if std::env::var("RAILS_TEST_REQUIRE_REAL_CLIS").as_deref() == Ok("1") {
        panic!("RAILS_TEST_REQUIRE_REAL_CLIS=1 but {why}");
    }
    // Straight to the terminal: libtest captures only the print macros, and a skip must show.
    let _ = writeln!(std::io::stderr(), "skipped: {why}");
    None
}

/// A fresh work folder (the CLI's cwd, holding the change) and `$HOME`, side by side.
struct Workspace {
    _root: tempfile::TempDir,
    work: PathBuf,
    home: PathBuf,
}

impl Workspace {
    fn new() -> Workspace {
        let root = tempfile::tempdir().unwrap();
        // Canonical paths: the CLIs print resolved paths, and recordings replace them.
        let base = root.path().canonicalize().unwrap();
        let (work, home) = (base.join("work"), base.join("home"));
        std::fs::create_dir_all(work.join("head")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(work.join("head/app.sh"), APP_SH).unwrap();
        std::fs::write(work.join("head/lib.sh"), LIB_SH).unwrap();
        std::fs::write(work.join("schema.json"), SCHEMA).unwrap();
        Workspace {
            _root: root,
            work,
            home,
        }
    }

    fn codex_home(&self) -> PathBuf {
        self.home.join(".codex")
    }

    /// Every file under the work folder with its content, to prove nothing was written.
    fn snapshot(&self) -> Vec<(String, String)> {
        fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            entries.sort();
            for p in entries {
                if p.is_dir() {
                    walk(&p, base, out);
                } else {
                    let rel = p.strip_prefix(base).unwrap().display().to_string();
                    out.push((rel, std::fs::read_to_string(&p).unwrap_or_default()));
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.work, &self.work, &mut out);
        out
    }

    /// Replaces the temporary paths (and the server's port) with placeholders, for recordings.
    fn normalize(&self, s: &str, server: &ModelServer) -> String {
        let sanitized: String = self
            .work
            .display()
            .to_string()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let tmp = std::env::temp_dir().canonicalize().unwrap();
        s.replace(&self.work.display().to_string(), "<work>")
            .replace(&self.home.display().to_string(), "<home>")
            .replace(&sanitized, "<sanitized-work>")
            .replace(&tmp.display().to_string(), "<tmp>")
            .replace(&format!("127.0.0.1:{}", server.port()), "127.0.0.1:<port>")
    }
}

/// A real CLI started in the workspace, in the harness's hermetic environment with the
/// workspace's HOME; on top of it, on purpose: a PATH of the CLIs' folder
/// (`RAILS_TEST_CLI_BIN`), the folder holding node (the npm launcher of codex is a node
/// script) and the system folders only, a dumb terminal and a UTF-8 locale.
fn cli_command(program: &Path, ws: &Workspace) -> Command {
    let mut cmd = hermetic_command(program, &ws.home, &ws.work);
    let mut dirs = vec![cli_dir()];
    dirs.extend(which("node").and_then(|n| n.parent().map(Path::to_path_buf)));
    system_path(
        &mut cmd,
        &dirs.iter().map(PathBuf::as_path).collect::<Vec<_>>(),
    );
    cmd.env("TERM", "dumb").env("LANG", "C.UTF-8");
    cmd
}

pub(crate) fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// How one CLI run ended and what it printed.
pub(crate) struct CliRun {
    /// `None` when our timeout killed it.
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) elapsed: Duration,
}

impl std::fmt::Display for CliRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}------- stderr -------\n{}[exit: {:?}, {:.1} s]",
            self.stdout,
            self.stderr,
            self.code,
            self.elapsed.as_secs_f64()
        )
    }
}

impl CliRun {
    /// Every stdout line as JSON; a line that is not JSON fails the test.
    pub(crate) fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {l}\n{self}"))
            })
            .collect()
    }

    /// The events of this `type` (and `subtype`, when given).
    fn of(&self, kind: &str, subtype: Option<&str>) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["type"] == kind && subtype.is_none_or(|s| e["subtype"] == s))
            .collect()
    }

    /// The one event of this type; fails when there is none or more.
    #[track_caller]
    fn one(&self, kind: &str, subtype: Option<&str>) -> Value {
        let mut found = self.of(kind, subtype);
        assert_eq!(found.len(), 1, "want one {kind}/{subtype:?} event:\n{self}");
        found.remove(0)
    }
}

/// When the test ends a run — the reviewer timeout spar owns.
#[derive(Clone, Copy)]
enum Timeout {
    /// After this long in all.
    Wall(Duration),
    /// After the server has heard nothing for this long since a request arrived (a stall);
    /// counting from the request keeps a slow start on a busy machine out of the measure.
    Silent(Duration),
}

/// The longest any run may take.
const WALL: Duration = Duration::from_secs(60);

/// Runs `program` in its own process group with the prompt on stdin; when `expired` says so
/// the whole group gets SIGTERM, then SIGKILL two seconds later.
pub(crate) fn run_cli(mut cmd: Command, stdin: &str, expired: &dyn Fn(Duration) -> bool) -> CliRun {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let pgid = child.id() as libc::pid_t;
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(stdin.as_bytes());
    });
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let mut code = None;
    let mut signalled = None;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            if signalled.is_none() {
                code = status.code();
            }
            break;
        }
        let waited = started.elapsed();
        if signalled.is_none() && (waited > WALL || expired(waited)) {
            // The child is not reaped yet, so the group id is still ours.
            unsafe { libc::kill(-pgid, libc::SIGTERM) };
            signalled = Some(waited);
        } else if signalled.is_some_and(|at| waited > at + Duration::from_secs(2)) {
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Children that outlived the CLI (none expected) would hold the pipes open.
    let _ = writer.join();
    CliRun {
        code,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        elapsed: started.elapsed(),
    }
}

/// Claude Code with the preset's argv, pointed at `server` by the environment only.
fn run_claude(
    claude: &Path,
    ws: &Workspace,
    server: &ModelServer,
    model: &str,
    timeout: Timeout,
) -> CliRun {
    let mut cmd = cli_command(claude, ws);
    let launch = claude_launch(claude, ws, model);
    assert_eq!(launch.argv[0], claude.display().to_string());
    cmd.args(&launch.argv[1..])
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-fake-0000");
    for (k, v) in &launch.env {
        cmd.env(k, v);
    }
    assert_eq!(launch.stdin, PROMPT.as_bytes());
    run_cli(cmd, PROMPT, &expiry(server, timeout))
}

/// Codex with the preset's argv; `$CODEX_HOME/config.toml` makes `server` its model provider.
fn run_codex(
    codex: &Path,
    ws: &Workspace,
    server: &ModelServer,
    model: &str,
    timeout: Timeout,
) -> CliRun {
    let codex_home = ws.codex_home();
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(codex_home.join("config.toml"), codex_config(server)).unwrap();
    let mut cmd = cli_command(codex, ws);
    let launch = codex_launch(codex, ws, model);
    assert_eq!(launch.argv[0], codex.display().to_string());
    assert!(launch.env.is_empty(), "{:?}", launch.env);
    cmd.args(&launch.argv[1..])
        .env("CODEX_HOME", &codex_home)
        .env("OPENAI_API_KEY", "sk-fake-0000");
    run_cli(cmd, PROMPT, &expiry(server, timeout))
}

fn expiry(server: &ModelServer, timeout: Timeout) -> impl Fn(Duration) -> bool + '_ {
    move |waited| match timeout {
        Timeout::Wall(t) => waited > t,
        Timeout::Silent(t) => server.since_last_request().is_some_and(|quiet| quiet > t),
    }
}

/// The only Codex configuration the tests add: a model provider that is the test server.
fn codex_config(server: &ModelServer) -> String {
    format!(
        "model_provider = \"spar_test\"\n\n\
         [model_providers.spar_test]\n\
         name = \"spar test model server\"\n\
         base_url = \"{}/v1\"\n\
         env_key = \"OPENAI_API_KEY\"\n\
         wire_api = \"responses\"\n",
        server.url()
    )
}

/// Codex's session log (rollout) of `thread_id`, line by line.
fn codex_rollout(ws: &Workspace, thread_id: &str) -> Vec<Value> {
    fn find(dir: &Path, suffix: &str) -> Option<PathBuf> {
        for e in std::fs::read_dir(dir).ok()? {
            let p = e.ok()?.path();
            if p.is_dir() {
                if let Some(f) = find(&p, suffix) {
                    return Some(f);
                }
            } else if p.to_string_lossy().ends_with(suffix) {
                return Some(p);
            }
        }
        None
    }
    let file = find(
        &ws.codex_home().join("sessions"),
        &format!("{thread_id}.jsonl"),
    )
    .unwrap_or_else(|| panic!("no rollout for thread {thread_id}"));
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A version pinned in `.ci/run` (`NAME=1.2.3`), the one place the tested versions are named.
pub(crate) fn pinned(name: &str) -> String {
    let script = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    script
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!(".ci/run pins no {name}"))
        .trim()
        .to_string()
}

fn version_of(program: &Path) -> String {
    let out = cli_command(program, &Workspace::new())
        .arg("--version")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn real_clis_are_the_pinned_versions() {
    if let Some(claude) = cli("claude") {
        let want = format!("{} (Claude Code)", pinned("CLAUDE_CODE_VERSION"));
        assert_eq!(version_of(&claude), want);
    }
    if let Some(codex) = cli("codex") {
        let want = format!("codex-cli {}", pinned("CODEX_VERSION"));
        assert_eq!(version_of(&codex), want);
    }
}

// ---------------------------------------------------------------------------------------------
// Recordings.
// ---------------------------------------------------------------------------------------------

/// [`record`], comparing the event types with `optional` ones left out on both sides.
fn record_without(
    name: &str,
    ws: &Workspace,
    server: &ModelServer,
    content: &str,
    optional: &[&str],
) {
    let path = repo_root().join("tests/data/real-cli").join(name);
    if std::env::var("UPDATE_REAL_CLI").as_deref() == Ok("1") {
        return record(name, ws, server, content);
    }
    let recorded = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "no recording {} — run with UPDATE_REAL_CLI=1",
            path.display()
        )
    });
    let keep = |text: &str| -> Vec<String> {
        event_kinds(text)
            .into_iter()
            .filter(|k| !optional.contains(&k.as_str()))
            .collect()
    };
    assert_eq!(
        keep(&recorded),
        keep(&ws.normalize(content, server)),
        "the CLI's events differ from the recording {} beyond {optional:?} (re-record with \
         UPDATE_REAL_CLI=1 after checking the difference)",
        path.display()
    );
}

/// Keeps what the CLI printed as `tests/data/real-cli/<name>` (paths and port normalized).
/// With `UPDATE_REAL_CLI=1` the file is (re)written; otherwise the recording must exist and hold
/// the same sequence of event types, so a CLI whose output drifted fails here.
fn record(name: &str, ws: &Workspace, server: &ModelServer, content: &str) {
    let path = repo_root().join("tests/data/real-cli").join(name);
    let content = ws.normalize(content, server);
    if std::env::var("UPDATE_REAL_CLI").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        return;
    }
    let recorded = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "no recording {} — run with UPDATE_REAL_CLI=1",
            path.display()
        )
    });
    if name.ends_with(".jsonl") {
        assert_eq!(
            event_kinds(&recorded),
            event_kinds(&content),
            "the CLI's events differ from the recording {} (re-record with UPDATE_REAL_CLI=1 \
             after checking the difference)",
            path.display()
        );
    }
}

/// `type` (+ `/subtype`, + `:item.type`) of each JSON line.
pub(crate) fn event_kinds(s: &str) -> Vec<String> {
    s.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|e| {
            let mut k = e["type"].as_str().unwrap_or("?").to_string();
            if let Some(sub) = e["subtype"].as_str() {
                k = format!("{k}/{sub}");
            }
            if let Some(item) = e["item"]["type"].as_str() {
                k = format!("{k}:{item}");
            }
            k
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Claude Code.
// ---------------------------------------------------------------------------------------------

/// A model Claude Code 2.1.332 knows (an unknown one adds an `unrecognized_model` stderr line).
const CLAUDE_MODEL: &str = "claude-sonnet-4-6";
const CLAUDE_FALLBACK_MODEL: &str = "claude-haiku-4-5";

/// The turns of a clean review: read the file, then the structured result.
fn claude_review_turns() -> Vec<Turn> {
    vec![
        Turn::claude(vec![
            text("I will read the changed file."),
            tool_use("Read", json!({"file_path": "head/app.sh"})),
        ]),
        Turn::claude(vec![tool_use("StructuredOutput", review())]),
    ]
}

/// The Anthropic API's own 429 body (research A4).
fn anthropic_429() -> Turn {
    Turn::error(
        429,
        json!({"type": "error", "error": {"type": "rate_limit_error",
            "message": "This request would exceed your account's rate limit. Please try again later."}}),
    )
}

#[test]
fn claude_clean_review_reports_on_files_it_really_read() {
    let Some(claude) = cli("claude") else { return };
    let ws = Workspace::new();
    let server = ModelServer::start(Script::new().messages([
        Turn::claude(vec![
            text("I will read the changed file."),
            tool_use("Read", json!({"file_path": "head/app.sh"})),
        ]),
        Turn::claude(vec![tool_use(
            "Grep",
            json!({"pattern": "rm -rf", "path": "head", "output_mode": "content", "-n": true}),
        )]),
        Turn::claude(vec![tool_use("StructuredOutput", review())]),
    ]));
    let run = run_claude(&claude, &ws, &server, CLAUDE_MODEL, Timeout::Wall(WALL));
    assert_eq!(run.code, Some(0), "{run}");

    let init = run.one("system", Some("init"));
    assert_eq!(
        init["tools"],
        json!(["Glob", "Grep", "Read", "StructuredOutput"]),
        "{run}"
    );
    assert_eq!(
        init["claude_code_version"],
        pinned("CLAUDE_CODE_VERSION").as_str()
    );

    // What the CLI sent back: the real Read output (cat -n style) and the real grep hit.
    let requests = server.requests_to("/v1/messages");
    assert_eq!(requests.len(), 3, "{requests:#?}");
    let read_result = last_tool_result(&requests[1]);
    assert!(
        read_result.contains("5\trm -rf /srv/app/$TARGET/*"),
        "{read_result}"
    );
    // On the wire (not in the stream-json event) Claude Code 2.1.332 appends the remaining token
    // budget to each tool result, after trimming the result's trailing whitespace — for a model
    // it knows (claude-sonnet-4-6); an unknown name (claude-sonnet-x) gets the result as is.
    assert!(
        last_tool_result_raw(&requests[1]).contains("8\n\n<system-reminder>\n<total_tokens>"),
        "{:?}",
        last_tool_result_raw(&requests[1])
    );
    let grep_result = last_tool_result(&requests[2]);
    assert_eq!(grep_result, "head/app.sh:5:rm -rf /srv/app/$TARGET/*");

    // The result: the structured object, and its location is a line the CLI read.
    let result = run.one("result", None);
    assert_eq!(result["is_error"], false, "{run}");
    assert_eq!(result["subtype"], "success", "{run}");
    assert_eq!(result["structured_output"], review(), "{run}");
    let finding = &result["structured_output"]["findings"][0];
    let line = finding["line"].as_u64().unwrap();
    let read_line = read_result
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{line}\t")))
        .unwrap();
    assert!(grep_result.ends_with(read_line), "{read_line}");
    assert_eq!(finding["path"], "head/app.sh");
    // Every tool the model used is in the read-only set.
    assert_eq!(tool_uses(&run), ["Read", "Grep", "StructuredOutput"]);
    record("claude-review.jsonl", &ws, &server, &run.stdout);
    record("claude-review.stderr", &ws, &server, &run.stderr);
}

#[test]
fn claude_tool_outside_the_read_only_set_is_shown_and_not_run() {
    let Some(claude) = cli("claude") else { return };
    let ws = Workspace::new();
    let before = ws.snapshot();
    let server = ModelServer::start(Script::new().messages([
        Turn::claude(vec![tool_use(
            "Write",
            json!({"file_path": "head/app.sh", "content": "echo pwned\n"}),
        )]),
        Turn::claude(vec![tool_use(
            "Bash",
            json!({"command": "touch pwned.txt", "description": "create a file"}),
        )]),
        Turn::claude(vec![tool_use("StructuredOutput", approve())]),
    ]));
    let run = run_claude(&claude, &ws, &server, CLAUDE_MODEL, Timeout::Wall(WALL));
    assert_eq!(run.code, Some(0), "{run}");
    // The stream shows the request (what the preset turns into tool_violation) …
    assert_eq!(tool_uses(&run), ["Write", "Bash", "StructuredOutput"]);
    // … and what the CLI did with it: nothing ran, the model got an error back.
    let requests = server.requests_to("/v1/messages");
    assert_eq!(requests.len(), 3, "{requests:#?}");
    assert_eq!(
        last_tool_result(&requests[1]),
        "<tool_use_error>Error: No such tool available: Write. Write is disabled for this \
         session, in subagents as well as here.</tool_use_error>"
    );
    assert_eq!(
        last_tool_result(&requests[2]),
        "<tool_use_error>Error: No such tool available: Bash. Bash is disabled for this \
         session, in subagents as well as here.</tool_use_error>"
    );
    assert_eq!(ws.snapshot(), before, "the work folder changed");
    // Not a permission denial: the run still ends as a plain success.
    assert!(
        run.of("system", Some("permission_denied")).is_empty(),
        "{run}"
    );
    let result = run.one("result", None);
    assert_eq!(result["permission_denials"], json!([]), "{run}");
    assert_eq!(result["is_error"], false, "{run}");
    assert_eq!(result["structured_output"], approve(), "{run}");
    record("claude-forbidden-tools.jsonl", &ws, &server, &run.stdout);
}

#[test]
fn claude_quota_refusal_then_the_fallback_model_succeeds() {
    let Some(claude) = cli("claude") else { return };
    let ws = Workspace::new();
    // Under the preset's CLAUDE_CODE_MAX_RETRIES the refusal takes 1 + that many requests.
    let mut turns = vec![anthropic_429(); 1 + claude_retries()];
    turns.extend(claude_review_turns());
    let server = ModelServer::start(Script::new().messages(turns));

    let refused = run_claude(&claude, &ws, &server, CLAUDE_MODEL, Timeout::Wall(WALL));
    assert_eq!(refused.code, Some(1), "{refused}");
    let retries = refused.of("system", Some("api_retry"));
    assert_eq!(retries.len(), claude_retries(), "{refused}");
    for retry in retries {
        assert_eq!(retry["error_status"], 429, "{refused}");
        assert_eq!(retry["error"], "rate_limit", "{refused}");
        assert_eq!(retry["max_retries"], claude_retries(), "{refused}");
    }
    let result = refused.one("result", None);
    assert_eq!(result["is_error"], true, "{refused}");
    assert_eq!(result["subtype"], "success", "{refused}");
    assert_eq!(result["terminal_reason"], "api_error", "{refused}");
    assert_eq!(result["api_error_status"], 429, "{refused}");
    assert_eq!(result["api_error_type"], "rate_limit_error", "{refused}");
    assert!(result.get("structured_output").is_none(), "{refused}");
    // The §5 phrase spar recognizes ("rate limit") is in the text the CLI prints.
    assert_eq!(
        result["result"],
        "API Error: Request rejected (429) · This request would exceed your account's rate \
         limit. Please try again later."
    );
    let assistant = refused.one("assistant", None);
    assert_eq!(assistant["error"], "rate_limit", "{refused}");
    assert_eq!(assistant["message"]["model"], "<synthetic>", "{refused}");
    record("claude-429.jsonl", &ws, &server, &refused.stdout);

    let fallback = run_claude(
        &claude,
        &ws,
        &server,
        CLAUDE_FALLBACK_MODEL,
        Timeout::Wall(WALL),
    );
    assert_eq!(fallback.code, Some(0), "{fallback}");
    assert_eq!(
        fallback.one("result", None)["structured_output"],
        review(),
        "{fallback}"
    );
    let models: Vec<Value> = server
        .requests_to("/v1/messages")
        .iter()
        .map(|r| r.json()["model"].clone())
        .collect();
    assert_eq!(
        models,
        [
            vec![CLAUDE_MODEL; 1 + claude_retries()],
            vec![CLAUDE_FALLBACK_MODEL; 2]
        ]
        .concat()
    );
}

#[test]
fn claude_authentication_refusal() {
    let Some(claude) = cli("claude") else { return };
    let ws = Workspace::new();
    let server = ModelServer::start(
        Script::new().messages([Turn::error(
            401,
            json!({"type": "error", "error": {"type": "authentication_error",
            "message": "invalid x-api-key"}}),
        )
        .forever()]),
    );
    let run = run_claude(&claude, &ws, &server, CLAUDE_MODEL, Timeout::Wall(WALL));
    assert_eq!(run.code, Some(1), "{run}");
    // Claude retries a 401 like a 429 (as often as the preset's CLAUDE_CODE_MAX_RETRIES says).
    assert_eq!(
        server.requests_to("/v1/messages").len(),
        1 + claude_retries()
    );
    let retries = run.of("system", Some("api_retry"));
    assert_eq!(retries.len(), claude_retries(), "{run}");
    for retry in retries {
        assert_eq!(retry["error_status"], 401, "{run}");
        assert_eq!(retry["error"], "authentication_failed", "{run}");
    }
    let result = run.one("result", None);
    assert_eq!(result["is_error"], true, "{run}");
    assert_eq!(result["api_error_status"], 401, "{run}");
    assert_eq!(result["api_error_type"], "authentication_error", "{run}");
    // §5: "invalid api key".
    assert_eq!(result["result"], "Invalid API key · Fix external API key");
    assert_eq!(
        run.one("assistant", None)["error"],
        "authentication_failed",
        "{run}"
    );
    record("claude-401.jsonl", &ws, &server, &run.stdout);
}

#[test]
fn claude_stalled_stream_ends_only_by_our_timeout() {
    let Some(claude) = cli("claude") else { return };
    let ws = Workspace::new();
    let server = ModelServer::start(Script::new().messages([Turn::stall().forever()]));
    // Long enough for the CLI to start and send its request on a loaded machine, well inside WALL.
    let silence = Duration::from_secs(15);
    let run = run_claude(
        &claude,
        &ws,
        &server,
        CLAUDE_MODEL,
        Timeout::Silent(silence),
    );
    assert_eq!(run.code, None, "the CLI ended by itself:\n{run}");
    // Our silence limit ended it, well before the wall clock limit.
    assert!(run.elapsed < WALL - Duration::from_secs(10), "{run}");
    assert!(server.since_last_request().unwrap() >= silence, "{run}");
    // Silent: nothing after init, no retry event, no result. On a loaded machine the CLI may
    // still hold its init line in its stdout buffer when our limit ends it, so it may be absent;
    // nothing else may be there.
    let kinds = event_kinds(&run.stdout);
    assert!(
        kinds.is_empty() || kinds == ["system/init"],
        "{kinds:?}\n{run}"
    );
    assert_eq!(server.requests_to("/v1/messages").len(), 1);
    record("claude-stall.jsonl", &ws, &server, &run.stdout);
}

#[test]
fn claude_observed_model_is_what_the_server_served() {
    let Some(claude) = cli("claude") else { return };
    let ws = Workspace::new();
    let served = "claude-sonnet-4-6-20261101";
    let server =
        ModelServer::start(Script::new().messages([
            Turn::claude(vec![tool_use("StructuredOutput", approve())]).served_as(served),
        ]));
    let run = run_claude(&claude, &ws, &server, CLAUDE_MODEL, Timeout::Wall(WALL));
    assert_eq!(run.code, Some(0), "{run}");
    assert_eq!(
        server.requests_to("/v1/messages")[0].json()["model"],
        CLAUDE_MODEL
    );
    // init names the requested model; each assistant message the served one (G12).
    assert_eq!(run.one("system", Some("init"))["model"], CLAUDE_MODEL);
    assert_eq!(
        run.one("assistant", None)["message"]["model"],
        served,
        "{run}"
    );
    let usage = run.one("result", None)["modelUsage"].clone();
    let keys: Vec<&String> = usage.as_object().unwrap().keys().collect();
    // … but the usage (and cost) is booked under the requested name.
    assert_eq!(keys, [CLAUDE_MODEL], "{run}");
    record("claude-served-model.jsonl", &ws, &server, &run.stdout);
}

/// The text of the last `tool_result` block the CLI sent in this request, without the
/// `<system-reminder>` (remaining token budget) Claude Code appends on the wire — the
/// stream-json `user` event does not show it.
fn last_tool_result(req: &super::model_server::Request) -> String {
    let raw = last_tool_result_raw(req);
    match raw.split_once("\n\n<system-reminder>") {
        Some((result, _)) => result.to_string(),
        None => raw,
    }
}

fn last_tool_result_raw(req: &super::model_server::Request) -> String {
    let body = req.json();
    let messages = body["messages"].as_array().unwrap();
    let content = &messages.last().unwrap()["content"];
    let block = content
        .as_array()
        .and_then(|c| c.iter().rev().find(|b| b["type"] == "tool_result"))
        .unwrap_or_else(|| panic!("no tool_result in {content}"));
    match &block["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The names of the tools the model called, as Claude's `assistant` events show them.
fn tool_uses(run: &CliRun) -> Vec<String> {
    run.of("assistant", None)
        .iter()
        .flat_map(|e| {
            e["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["name"].as_str().unwrap_or("").to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Codex.
// ---------------------------------------------------------------------------------------------

/// A model in Codex 0.171.0's catalogue (an unknown one adds a "Model metadata … not found"
/// error item and drops `apply_patch` from the tools).
const CODEX_MODEL: &str = "gpt-5.5";
const CODEX_FALLBACK_MODEL: &str = "gpt-5.4-mini";

fn codex_review_turns() -> Vec<Turn> {
    vec![
        Turn::codex(vec![function_call(
            "exec_command",
            json!({"cmd": "cat head/app.sh"}),
        )]),
        Turn::codex(vec![message(&review().to_string())]),
    ]
}

/// The `function_call_output` items the CLI sent in this request, by call id.
fn function_outputs(req: &super::model_server::Request) -> Vec<(String, String)> {
    req.json()["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call_output" || i["type"] == "custom_tool_call_output")
        .map(|i| {
            (
                i["call_id"].as_str().unwrap_or("").to_string(),
                i["output"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The items of `item.completed` events.
fn completed_items(run: &CliRun) -> Vec<Value> {
    run.of("item.completed", None)
        .into_iter()
        .map(|e| e["item"].clone())
        .collect()
}

#[test]
fn codex_clean_review_reports_on_files_it_really_read() {
    let Some(codex) = cli("codex") else { return };
    let ws = Workspace::new();
    let served = "gpt-5.5-2026-11-01";
    let server = ModelServer::start(
        Script::new().responses(
            codex_review_turns()
                .into_iter()
                .map(|t| t.served_as(served)),
        ),
    );
    let run = run_codex(&codex, &ws, &server, CODEX_MODEL, Timeout::Wall(WALL));
    assert_eq!(run.code, Some(0), "{run}");
    let requests = server.requests_to("/v1/responses");
    assert_eq!(requests.len(), 2, "{requests:#?}");
    assert_eq!(requests[0].json()["model"], CODEX_MODEL);
    assert_eq!(
        requests[0].json()["text"]["format"]["name"],
        "codex_output_schema"
    );

    // The real shell ran `cat` in the work folder; its output went back to the model.
    let outputs = function_outputs(&requests[1]);
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    assert!(
        outputs[0].1.contains("Process exited with code 0"),
        "{outputs:?}"
    );
    assert!(
        outputs[0].1.ends_with(&format!("Output:\n{APP_SH}")),
        "{outputs:?}"
    );
    let items = completed_items(&run);
    let command = items
        .iter()
        .find(|i| i["type"] == "command_execution")
        .unwrap_or_else(|| panic!("no command_execution:\n{run}"));
    assert_eq!(command["command"], "/bin/bash -lc 'cat head/app.sh'");
    assert_eq!(command["aggregated_output"], APP_SH);
    assert_eq!(command["exit_code"], 0);

    // The final message is the review as JSON text; its location is a line `cat` printed.
    let message = items
        .iter()
        .find(|i| i["type"] == "agent_message")
        .unwrap_or_else(|| panic!("no agent_message:\n{run}"));
    let answer: Value = serde_json::from_str(message["text"].as_str().unwrap()).unwrap();
    assert_eq!(answer, review());
    let line = answer["findings"][0]["line"].as_u64().unwrap() as usize;
    let printed = command["aggregated_output"].as_str().unwrap();
    assert!(printed.lines().nth(line - 1).unwrap().starts_with("rm -rf"));
    assert_eq!(
        run.one("turn.completed", None)["usage"]["output_tokens"],
        52
    );

    // G12: the JSONL never names a model; the session log names the requested one, not the
    // one the server said it served.
    assert!(!run.stdout.contains("gpt-5"), "{run}");
    let thread_id = run.one("thread.started", None)["thread_id"]
        .as_str()
        .unwrap()
        .to_string();
    let rollout = codex_rollout(&ws, &thread_id);
    let context = rollout
        .iter()
        .find(|l| l["type"] == "turn_context")
        .expect("turn_context in the rollout");
    assert_eq!(context["payload"]["model"], CODEX_MODEL);
    let rollout_text = serde_json::to_string(&rollout).unwrap();
    assert!(
        !rollout_text.contains(served),
        "the served model is kept somewhere"
    );
    record("codex-review.jsonl", &ws, &server, &run.stdout);
    record("codex-review.stderr", &ws, &server, &run.stderr);
}

#[test]
fn codex_write_attempts_are_blocked_and_only_the_session_log_shows_them() {
    let Some(codex) = cli("codex") else { return };
    let ws = Workspace::new();
    let before = ws.snapshot();
    let server = ModelServer::start(Script::new().responses([
        Turn::codex(vec![function_call(
            "exec_command",
            json!({"cmd": "touch pwned.txt"}),
        )]),
        Turn::codex(vec![function_call(
            "exec_command",
            json!({"cmd": "echo pwned > head/app.sh"}),
        )]),
        Turn::codex(vec![custom_tool_call(
            "apply_patch",
            "*** Begin Patch\n*** Add File: pwned2.txt\n+x\n*** End Patch\n",
        )]),
        Turn::codex(vec![message(&approve().to_string())]),
    ]));
    let run = run_codex(&codex, &ws, &server, CODEX_MODEL, Timeout::Wall(WALL));
    assert_eq!(run.code, Some(0), "{run}");
    assert_eq!(ws.snapshot(), before, "the work folder changed");

    // What the model got back for each attempt.
    let requests = server.requests_to("/v1/responses");
    assert_eq!(requests.len(), 4, "{requests:#?}");
    let outputs: Vec<String> = function_outputs(&requests[3])
        .into_iter()
        .map(|(_, o)| o)
        .collect();
    assert_eq!(outputs.len(), 3, "{outputs:?}");
    assert!(
        outputs[0].ends_with("touch: cannot touch 'pwned.txt': Read-only file system\n"),
        "{outputs:?}"
    );
    assert!(
        outputs[1].ends_with("head/app.sh: Read-only file system\n"),
        "{outputs:?}"
    );
    assert_eq!(
        outputs[2],
        "patch rejected: writing is blocked by read-only sandbox; rejected by user approval \
         settings"
    );

    // The JSONL shows none of the patch and at most the shell attempts (Codex 0.171 reports a
    // sandbox-denied command as a `command_execution` item only sometimes: seen under load), so
    // the preset must read the session log; stderr has a log line for the patch only.
    let kinds: Vec<String> = event_kinds(&run.stdout)
        .into_iter()
        .filter(|k| !k.ends_with(":command_execution"))
        .collect();
    assert_eq!(
        kinds,
        [
            "thread.started",
            "turn.started",
            "item.completed:agent_message",
            "turn.completed"
        ],
        "{run}"
    );
    assert!(
        run.stderr.contains(
            "ERROR codex_core::tools::router: error=patch rejected: writing is blocked by \
             read-only sandbox"
        ),
        "{run}"
    );
    // … the session log has every attempt.
    let thread_id = run.one("thread.started", None)["thread_id"]
        .as_str()
        .unwrap()
        .to_string();
    let rollout = codex_rollout(&ws, &thread_id);
    let calls: Vec<&Value> = rollout
        .iter()
        .filter(|l| l["type"] == "response_item")
        .map(|l| &l["payload"])
        .filter(|p| {
            [
                "function_call",
                "function_call_output",
                "custom_tool_call",
                "custom_tool_call_output",
            ]
            .contains(&p["type"].as_str().unwrap_or(""))
        })
        .collect();
    assert_eq!(calls.len(), 6, "{calls:#?}");
    let log: String = calls.iter().map(|c| format!("{c}\n")).collect();
    assert!(log.contains("touch pwned.txt"), "{log}");
    assert!(log.contains("Read-only file system"), "{log}");
    assert!(log.contains("apply_patch"), "{log}");
    // Whether Codex reports a sandbox-refused shell attempt as a `command_execution` item
    // varies from run to run (the session log above always has it), so those items are left
    // out of the comparison with the recording.
    record_without(
        "codex-write-attempts.jsonl",
        &ws,
        &server,
        &run.stdout,
        &[
            "item.started:command_execution",
            "item.completed:command_execution",
        ],
    );
    record("codex-write-attempts.stderr", &ws, &server, &run.stderr);
    record(
        "codex-write-attempts.rollout-tool-items.jsonl",
        &ws,
        &server,
        &log,
    );
}

#[test]
fn codex_quota_refusals_then_the_fallback_model_succeeds() {
    let Some(codex) = cli("codex") else { return };
    let ws = Workspace::new();
    let resets_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    let mut turns = vec![
        Turn::error(
            429,
            json!({"error": {"message": "You exceeded your current quota, please check your plan \
                and billing details.", "type": "insufficient_quota", "param": null,
                "code": "insufficient_quota"}}),
        ),
        Turn::error(
            429,
            json!({"error": {"type": "usage_limit_reached",
                "message": "The usage limit has been reached", "plan_type": "plus",
                "resets_at": resets_at, "resets_in_seconds": 3600}}),
        ),
    ];
    turns.extend(codex_review_turns());
    let server = ModelServer::start(Script::new().responses(turns));

    let quota = run_codex(&codex, &ws, &server, CODEX_MODEL, Timeout::Wall(WALL));
    assert_eq!(quota.code, Some(1), "{quota}");
    let failed = quota.one("turn.failed", None);
    // §5: "quota exceeded".
    assert_eq!(
        failed["error"]["message"], "Quota exceeded. Check your plan and billing details.",
        "{quota}"
    );
    assert_eq!(server.requests_to("/v1/responses").len(), 1, "no retry");
    record("codex-429-quota.jsonl", &ws, &server, &quota.stdout);

    let limit = run_codex(&codex, &ws, &server, CODEX_MODEL, Timeout::Wall(WALL));
    assert_eq!(limit.code, Some(1), "{limit}");
    let message = limit.one("turn.failed", None)["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    // §5: "hit your usage limit" — with a typographic apostrophe — and "try again at".
    assert!(
        message.starts_with("You\u{2019}ve hit your usage limit."),
        "{message}"
    );
    assert!(message.contains("try again at "), "{message}");
    assert_eq!(server.requests_to("/v1/responses").len(), 2, "no retry");
    record("codex-429-usage-limit.jsonl", &ws, &server, &limit.stdout);

    let fallback = run_codex(
        &codex,
        &ws,
        &server,
        CODEX_FALLBACK_MODEL,
        Timeout::Wall(WALL),
    );
    assert_eq!(fallback.code, Some(0), "{fallback}");
    let models: Vec<Value> = server
        .requests_to("/v1/responses")
        .iter()
        .map(|r| r.json()["model"].clone())
        .collect();
    assert_eq!(
        models,
        [
            CODEX_MODEL,
            CODEX_MODEL,
            CODEX_FALLBACK_MODEL,
            CODEX_FALLBACK_MODEL
        ]
    );
}

#[test]
fn codex_authentication_refusal() {
    let Some(codex) = cli("codex") else { return };
    let ws = Workspace::new();
    let server = ModelServer::start(
        Script::new().responses([Turn::error(
            401,
            json!({"error": {"message": "Incorrect API key provided: sk-fake-0000. You can find \
            your API key at https://platform.openai.com/account/api-keys.",
            "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}),
        )
        .forever()]),
    );
    let run = run_codex(&codex, &ws, &server, CODEX_MODEL, Timeout::Wall(WALL));
    assert_eq!(run.code, Some(1), "{run}");
    let message = run.one("turn.failed", None)["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    // §5: "401 Unauthorized", "incorrect api key".
    assert!(
        message.starts_with("unexpected status 401 Unauthorized: Incorrect API key provided"),
        "{message}"
    );
    // The real server's request id ends the text.
    assert!(
        message.contains("/v1/responses, request id: req_srv_"),
        "{message}"
    );
    // Codex reconnects five times (backoff, ~7 s) before it gives up; each is an `error` event.
    assert_eq!(server.requests_to("/v1/responses").len(), 6);
    let reconnects: Vec<String> = run
        .of("error", None)
        .iter()
        .filter_map(|e| e["message"].as_str())
        .filter(|m| m.starts_with("Reconnecting... "))
        .map(|m| m[..19].to_string())
        .collect();
    assert_eq!(
        reconnects,
        ["1/5", "2/5", "3/5", "4/5", "5/5"].map(|n| format!("Reconnecting... {n}")),
        "{run}"
    );
    record("codex-401.jsonl", &ws, &server, &run.stdout);
}

#[test]
fn codex_stalled_stream_ends_only_by_our_timeout() {
    let Some(codex) = cli("codex") else { return };
    let ws = Workspace::new();
    let server = ModelServer::start(Script::new().responses([Turn::stall().forever()]));
    let silence = Duration::from_secs(4);
    let run = run_codex(&codex, &ws, &server, CODEX_MODEL, Timeout::Silent(silence));
    assert_eq!(run.code, None, "the CLI ended by itself:\n{run}");
    // Our silence limit ended it, well before the wall clock limit.
    assert!(run.elapsed < WALL - Duration::from_secs(10), "{run}");
    assert!(server.since_last_request().unwrap() >= silence, "{run}");
    assert_eq!(
        event_kinds(&run.stdout),
        ["thread.started", "turn.started"],
        "{run}"
    );
    assert_eq!(server.requests_to("/v1/responses").len(), 1);
    record("codex-stall.jsonl", &ws, &server, &run.stdout);
}
