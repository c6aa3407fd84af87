//! The pipeline: planner → implementer → reviewer → deployer hand-offs as a persisted state
//! machine, driven through the installed binary with small actor scripts written by the tests
//! (good answers, garbage, the wrong actor, an illegal verdict, sleeping past the timeout,
//! crashing), notifier scripts, and webhook receivers on loopback.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::harness::{bin, check, free_port, http_server, Run, TestRepo};
use serde_json::{json, Value};

const SPRINT: &str = "SPRINT-001";
/// The id of the harness's contract (what `{contract}` and PLAN_READY name).
const CID: &str = "01JDQ7ZK3M8T5V2W9X4Y6Z0ABC";
const REF: &str = "refs/rails/pipeline/SPRINT-001";
/// Fast retries.
const RETRY0: &str = "[retry]\nbackoffSeconds = 0\n";

// ---------------------------------------------------------------------------------------------
// The seed's HandoffMessage answers.

fn plan_ready_for(contract: &str) -> String {
    json!({"actor": "harang", "verdict": "PLAN_READY", "payload": {
        "planDir": ".rails/plans/SPRINT-001", "sprintId": SPRINT, "contractId": contract}})
    .to_string()
}

fn plan_ready() -> String {
    plan_ready_for(CID)
}

fn impl_done() -> String {
    json!({"actor": "narang", "verdict": "IMPL_DONE", "payload": {
        "branch": "feature/sprint-001", "commits": ["abc1234"], "workdir": ".",
        "selfTestReport": {"passed": 3}}})
    .to_string()
}

fn approve() -> String {
    json!({"actor": "darang", "verdict": "APPROVE", "payload": {
        "checklistResults": [{"id": "readme", "passed": true}], "issues": [],
        "artifactPath": "qa/report.md"}})
    .to_string()
}

fn request_changes() -> String {
    json!({"actor": "darang", "verdict": "REQUEST_CHANGES", "payload": {
        "checklistResults": [{"id": "readme", "passed": false, "note": "see i1"}],
        "issues": [{"id": "i1", "severity": "major", "location": "src/a.rs:3",
                    "summary": "off by one", "suggestion": "use a closed range"}],
        "artifactPath": "qa/report.md"}})
    .to_string()
}

fn deploy(verdict: &str) -> String {
    json!({"actor": "erang", "verdict": verdict, "payload": {
        "deployArtifactPath": "dist/app.tar", "projectType": "web",
        "verificationResults": {"smoke": "ok"}}})
    .to_string()
}

/// A shell step printing `text` on stdout (no single quote in it).
fn say(text: &str) -> String {
    assert!(!text.contains('\''), "{text}");
    format!("printf '%s\\n' '{text}'")
}

// ---------------------------------------------------------------------------------------------
// Repositories, scripts, configuration.

/// A repository with SPRINT-001 frozen (one check: README.md exists) and these approval gates.
fn sprint_repo_with(gates: Value, checks: Value) -> TestRepo {
    let repo = TestRepo::new();
    repo.draft_with(SPRINT, checks, json!({ "approvalGates": gates }));
    repo.rails(&["contract", "freeze", SPRINT]).ok();
    repo
}

fn sprint_repo() -> TestRepo {
    sprint_repo_with(
        json!({"impl": true, "review": true, "deploy": false}),
        json!([check("readme", "file_exists", json!({"path": "README.md"}))]),
    )
}

fn agents(repo: &TestRepo) -> PathBuf {
    repo.path().join("agents")
}

/// Writes an executable `agents/<name>` and returns its absolute path.
fn script(repo: &TestRepo, name: &str, body: &str) -> String {
    let dir = agents(repo);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// An actor script whose n-th spawn runs the n-th step (the last step repeats). It counts its
/// spawns in `agents/<name>.count` and keeps the stdin of spawn n in `agents/<name>.stdin.<n>`.
fn actor(repo: &TestRepo, name: &str, steps: &[String]) -> String {
    let d = agents(repo).display().to_string();
    let mut body = format!(
        "d='{d}'\nn=$(cat \"$d/{name}.count\" 2>/dev/null || echo 0)\nn=$((n+1))\n\
         echo $n > \"$d/{name}.count\"\ncat > \"$d/{name}.stdin.$n\"\ncase $n in\n"
    );
    for (i, s) in steps.iter().enumerate() {
        let pat = if i + 1 == steps.len() {
            "*".to_string()
        } else {
            (i + 1).to_string()
        };
        body += &format!("{pat})\n{s}\n;;\n");
    }
    body += "esac\n";
    script(repo, name, &body)
}

/// How many times the actor script `name` was spawned.
fn spawns(repo: &TestRepo, name: &str) -> u32 {
    // Read while the script may be writing it: an empty file counts as 0.
    std::fs::read_to_string(agents(repo).join(format!("{name}.count")))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// What spawn `n` of the actor script `name` got on stdin.
fn stdin_of(repo: &TestRepo, name: &str, n: u32) -> String {
    std::fs::read_to_string(agents(repo).join(format!("{name}.stdin.{n}"))).unwrap()
}

/// A TOML string.
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// The `[actors.<name>]` table.
fn actor_toml(name: &str, argv: &[&str], timeout: u64) -> String {
    let argv: Vec<String> = argv.iter().map(|a| q(a)).collect();
    format!(
        "[actors.{name}]\ncommand = [{}]\ntimeoutSeconds = {timeout}\n\n",
        argv.join(", ")
    )
}

/// Writes `.rails/config.toml`: these actors (name, script path) and then `rest`.
fn config(repo: &TestRepo, actors: &[(&str, &str)], rest: &str) {
    let mut text = String::new();
    for (name, path) in actors {
        text += &actor_toml(name, &[path], 30);
    }
    text += rest;
    repo.write(".rails/config.toml", &text);
    // The tests wrote this file; this clone trusts it (a file out of form is not trusted).
    let _ = repo.rails(&["trust"]);
}

/// Good actors for all four roles (an actor script the test already wrote is kept).
fn good_actors(repo: &TestRepo) -> Vec<(&'static str, String)> {
    let answers = [
        ("harang", plan_ready()),
        ("narang", impl_done()),
        ("darang", approve()),
        ("erang", deploy("DEPLOY_DONE")),
    ];
    answers
        .into_iter()
        .map(|(name, answer)| {
            let path = agents(repo).join(name);
            if path.exists() {
                (name, path.display().to_string())
            } else {
                (name, actor(repo, name, &[say(&answer)]))
            }
        })
        .collect()
}

fn config_with(repo: &TestRepo, actors: &[(&'static str, String)], rest: &str) {
    let pairs: Vec<(&str, &str)> = actors.iter().map(|(n, p)| (*n, p.as_str())).collect();
    config(repo, &pairs, rest);
}

/// Replaces one actor in a list.
fn with(
    mut actors: Vec<(&'static str, String)>,
    name: &'static str,
    path: String,
) -> Vec<(&'static str, String)> {
    for a in actors.iter_mut() {
        if a.0 == name {
            a.1 = path.clone();
        }
    }
    actors
}

fn run(repo: &TestRepo) -> Run {
    repo.rails(&["pipeline", "run", SPRINT])
}

fn resume(repo: &TestRepo) -> Run {
    repo.rails(&["pipeline", "resume", SPRINT])
}

fn status(repo: &TestRepo) -> Value {
    let r = repo.rails(&["pipeline", "status", SPRINT, "--json"]);
    r.ok();
    r.json()
}

fn history(repo: &TestRepo) -> Vec<Value> {
    status(repo)["history"].as_array().unwrap().clone()
}

/// The history as `EVENT from->to` lines.
fn flow(repo: &TestRepo) -> Vec<String> {
    history(repo)
        .iter()
        .map(|e| {
            format!(
                "{} {}->{}",
                e["event"].as_str().unwrap(),
                e["from"].as_str().unwrap(),
                e["to"].as_str().unwrap()
            )
        })
        .collect()
}

/// The reasons of the events of one kind, oldest first.
fn reasons(repo: &TestRepo, event: &str) -> Vec<String> {
    history(repo)
        .iter()
        .filter(|e| e["event"] == event)
        .map(|e| e["reason"].as_str().unwrap_or("").to_string())
        .collect()
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {text:?}"))
}

// ---------------------------------------------------------------------------------------------
// Processes in the background.

/// `git-rails` with the harness's hermetic environment, not waited for.
fn rails_command(repo: &TestRepo, args: &[&str]) -> Command {
    let mut cmd = repo.command("git-rails");
    cmd.args(args);
    cmd
}

/// A child killed (SIGKILL) when the test ends, whatever happened.
struct Background(Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `git-rails args` with stderr into `stderr`.
fn spawn_rails(repo: &TestRepo, args: &[&str], stderr: &Path) -> Background {
    let mut cmd = rails_command(repo, args);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(File::create(stderr).unwrap());
    Background(cmd.spawn().unwrap())
}

#[track_caller]
fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let until = Instant::now() + limit;
    while !f() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The committed state.json, when the ref exists.
fn committed_state(repo: &TestRepo) -> Option<Value> {
    let r = repo.git_run(&["show", &format!("{REF}:state.json")]);
    (r.code == 0).then(|| json_of(&r.stdout))
}

/// True when `pid` no longer runs (gone, or a zombie nobody reaped yet).
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .map(|(_, rest)| rest.starts_with('Z'))
            .unwrap_or(false),
    }
}

// ---------------------------------------------------------------------------------------------
// A webhook receiver on loopback.

type Requests = Arc<Mutex<Vec<(String, Value)>>>;

/// Reads one HTTP/1.1 request: (request line and headers, body).
fn read_request(s: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    s.set_nonblocking(false).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let len = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            while buf.len() < end + 4 + len {
                let n = s.read(&mut chunk).ok()?;
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = buf[end + 4..(end + 4 + len).min(buf.len())].to_vec();
            return Some((head, body));
        }
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// A webhook receiver on loopback for a bounded time (it stops by itself). When `answer`, it
/// records each request (head, JSON body) and replies 204; otherwise it accepts and never
/// answers (a hanging webhook).
fn receiver(answer: bool) -> (u16, Requests) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let got: Requests = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(120);
        while Instant::now() < until {
            match listener.accept() {
                Ok((mut s, _)) if answer => {
                    if let Some((head, body)) = read_request(&mut s) {
                        let v = serde_json::from_slice(&body).unwrap_or_else(|_| {
                            Value::String(String::from_utf8_lossy(&body).into())
                        });
                        sink.lock().unwrap().push((head, v));
                    }
                    let _ = s.write_all(
                        b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                }
                Ok((s, _)) => {
                    std::thread::spawn(move || {
                        let _held = s;
                        std::thread::sleep(Duration::from_secs(15));
                    });
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    });
    (port, got)
}

// =============================================================================================
// The machine.

#[test]
fn a_sprint_goes_from_planning_to_done_with_deploy() {
    let repo = sprint_repo_with(
        json!({"impl": true, "review": true, "deploy": true}),
        json!([check("readme", "file_exists", json!({"path": "README.md"}))]),
    );
    config_with(&repo, &good_actors(&repo), RETRY0);
    let out = run(&repo);
    out.ok()
        .stdout_has("pipeline SPRINT-001: done")
        // Progress lines say what runs.
        .stderr_has("pipeline SPRINT-001: started in planning")
        .stderr_has("planning: spawning harang (attempt 1/3)")
        .stderr_has("implementing: spawning narang")
        .stderr_has("reviewing: spawning darang")
        .stderr_has("deploying: spawning erang")
        .stderr_has("erang answered DEPLOY_DONE → done");
    assert_eq!(
        flow(&repo),
        [
            "START planning->planning",
            "HANDOFF planning->implementing",
            "HANDOFF implementing->reviewing",
            "HANDOFF reviewing->deploying",
            "HANDOFF deploying->done",
        ]
    );
    for a in ["harang", "narang", "darang", "erang"] {
        assert_eq!(spawns(&repo, a), 1, "{a}");
    }
    // Each actor's stdin is the previous valid hand-off message; the first gets nothing.
    assert_eq!(stdin_of(&repo, "harang", 1), "");
    assert_eq!(
        json_of(&stdin_of(&repo, "narang", 1)),
        json_of(&plan_ready())
    );
    assert_eq!(
        json_of(&stdin_of(&repo, "darang", 1)),
        json_of(&impl_done())
    );
    assert_eq!(json_of(&stdin_of(&repo, "erang", 1)), json_of(&approve()));

    // status --json
    let s = status(&repo);
    assert_eq!(s["schema"], "rails-pipeline-status/v1");
    assert_eq!(s["sprint"], SPRINT);
    assert_eq!(s["state"], "done");
    assert_eq!(s["attempts"], 0);
    // One review that approved: the reviewer was on round 1 and asked for no change.
    assert_eq!(s["reviewRound"], 1);
    assert_eq!(s["changesRequested"], 0);
    let h = s["history"].as_array().unwrap();
    assert_eq!(h[1]["actor"], "harang");
    assert_eq!(h[1]["verdict"], "PLAN_READY");
    assert_eq!(h[1]["message"], json_of(&plan_ready()));
    // The person's view.
    repo.rails(&["pipeline", "status", SPRINT])
        .ok()
        .stdout_has("pipeline SPRINT-001: done (attempts 0, review round 1)")
        .stdout_has("erang DEPLOY_DONE");
    // A sprint bound to the branch needs no argument.
    repo.rails(&["contract", "bind", SPRINT]).ok();
    assert_eq!(
        repo.rails(&["pipeline", "status", "--json"]).json()["state"],
        "done"
    );
    // Running it again is refused.
    run(&repo)
        .code(65)
        .stderr_has("a pipeline for SPRINT-001 already exists (state done)");
    resume(&repo).code(65).stderr_has("nothing to resume");
}

#[test]
fn every_transition_is_a_commit_holding_the_state_and_the_validated_message() {
    let repo = sprint_repo();
    config_with(&repo, &good_actors(&repo), RETRY0);
    run(&repo).ok().stdout_has("pipeline SPRINT-001: done");
    // One commit per event, with its trailers, newest first.
    let log = repo.git(&[
        "log",
        "--format=%(trailers:key=Rails-Pipeline-Event,valueonly)%(trailers:key=Rails-Pipeline-State,valueonly)--",
        REF,
    ]);
    let rows: Vec<String> = log
        .split("--")
        .map(|r| r.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|r| !r.is_empty())
        .collect();
    assert_eq!(
        rows,
        [
            "HANDOFF done",
            "HANDOFF reviewing",
            "HANDOFF implementing",
            "START planning",
        ],
        "{log}"
    );
    assert_eq!(history(&repo).len(), 4);
    let state = json_of(&repo.git(&["show", &format!("{REF}:state.json")]));
    assert_eq!(state["schema"], "rails-pipeline/v1");
    assert_eq!(state["sprint"], SPRINT);
    assert_eq!(state["state"], "done");
    assert_eq!(state["seq"], 4);
    assert_eq!(state["attempts"], 0);
    assert_eq!(state["reviewRound"], 0);
    // The HANDOFF's event file holds the validated message.
    let e2 = json_of(&repo.git(&["show", &format!("{REF}:events/000002.json")]));
    assert_eq!(e2["event"], "HANDOFF");
    assert_eq!(e2["from"], "planning");
    assert_eq!(e2["to"], "implementing");
    assert_eq!(e2["message"], json_of(&plan_ready()));
    let e3 = json_of(&repo.git(&["show", &format!("{REF}:events/000003.json")]));
    assert_eq!(e3["message"], json_of(&impl_done()));
    // Each commit's state.json is the state after its event.
    let mid = json_of(&repo.git(&["show", &format!("{REF}~2:state.json")]));
    assert_eq!(mid["state"], "implementing");
    assert_eq!(mid["lastMessage"], json_of(&plan_ready()));
}

#[test]
fn placeholders_are_replaced_in_the_actor_command() {
    let repo = sprint_repo();
    let d = agents(&repo).display().to_string();
    let echo = script(
        &repo,
        "echo-argv",
        &format!(
            "for a in \"$@\"; do printf '%s|' \"$a\" >> '{d}/argv.log'; done\necho >> '{d}/argv.log'\n\
             n=$(wc -l < '{d}/argv.log')\n\
             if [ \"$n\" -eq 1 ]; then echo garbage; else {}; fi\n",
            say(&plan_ready())
        ),
    );
    let actors = good_actors(&repo);
    let mut text = actor_toml(
        "harang",
        &[
            &echo,
            "{role}",
            "{sprint}",
            "{contract}",
            "{workdir}",
            "{attempt}",
            "--tag={role}/{sprint}#{attempt}",
        ],
        30,
    );
    for (n, p) in &actors[1..3] {
        text += &actor_toml(n, &[p.as_str()], 30);
    }
    text += RETRY0;
    repo.write(".rails/config.toml", &text);
    repo.rails(&["trust"]).ok();
    run(&repo).ok();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let root = root.display();
    assert_eq!(
        std::fs::read_to_string(agents(&repo).join("argv.log")).unwrap(),
        format!(
            "harang|SPRINT-001|{CID}|{root}|1|--tag=harang/SPRINT-001#1|\n\
             harang|SPRINT-001|{CID}|{root}|2|--tag=harang/SPRINT-001#2|\n"
        )
    );
}

#[test]
fn the_default_actor_is_the_seeds_openclaw_spawn_line() {
    let repo = sprint_repo();
    // No actor configured: every actor is `openclaw spawn …`.
    repo.write(
        ".rails/config.toml",
        "[retry]\nmaxAttempts = 1\nbackoffSeconds = 0\n",
    );
    let bins = bin("git-rails").parent().unwrap().display().to_string();
    let bare_path = format!("{bins}:/usr/local/bin:/usr/bin:/bin");
    let out = repo.rails_env(&["pipeline", "run", SPRINT], &[("PATH", &bare_path)]);
    // No openclaw on PATH: the spawn fails → ERROR → (maxAttempts 1) escalated.
    out.code(1)
        .stdout_has("pipeline SPRINT-001: escalated")
        .stderr_has("openclaw");
    let errors = reasons(&repo, "ERROR");
    assert_eq!(errors.len(), 1);
    assert!(errors[0].contains("spawn failed"), "{errors:?}");
    assert!(errors[0].contains("openclaw"), "{errors:?}");

    // A fake openclaw answering by role: the argv is the seed's line.
    let fake = tempfile::tempdir().unwrap();
    let d = agents(&repo).display().to_string();
    std::fs::create_dir_all(&d).unwrap();
    let path = fake.path().join("openclaw");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{d}/openclaw.argv'\ncat > /dev/null\ncase \"$3\" in\n\
             harang) {} ;;\nnarang) {} ;;\ndarang) {} ;;\n*) exit 9 ;;\nesac\n",
            say(&plan_ready()),
            say(&impl_done()),
            say(&approve())
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let with_fake = format!("{}:{bare_path}", fake.path().display());
    repo.rails_env(&["pipeline", "resume", SPRINT], &[("PATH", &with_fake)])
        .ok()
        .stdout_has("pipeline SPRINT-001: done");
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let argv = std::fs::read_to_string(agents(&repo).join("openclaw.argv")).unwrap();
    let lines: Vec<&str> = argv.lines().collect();
    let line = |role: &str| {
        format!(
            "spawn --role {role} --contract {CID} --workdir {} --output structured-json",
            root.display()
        )
    };
    assert_eq!(lines, [line("harang"), line("narang"), line("darang")]);
}

#[test]
fn a_config_error_is_refused_with_its_line() {
    let repo = sprint_repo();
    repo.write(
        ".rails/config.toml",
        "[retry]\nmaxAttempts = 2\nmaxAtempts = 3\n",
    );
    run(&repo)
        .code(65)
        .stderr_has(".rails/config.toml:3")
        .stderr_has("maxAtempts");
    assert!(
        committed_state(&repo).is_none(),
        "a refused run wrote a pipeline"
    );
    // An unknown actor, a notifier without its target: refused as well.
    repo.write(".rails/config.toml", "[actors.sam]\ncommand = [\"x\"]\n");
    run(&repo).code(65).stderr_has(".rails/config.toml:1");
    repo.write(".rails/config.toml", "[[notify]]\ntype = \"webhook\"\n");
    run(&repo).code(65).stderr_has("notify[0]");
    repo.rails(&["pipeline", "status", SPRINT, "--json"])
        .code(65)
        .stderr_has("no pipeline for SPRINT-001");
}

// =============================================================================================
// The seed's failure table.

#[test]
fn a_crashing_or_missing_actor_is_an_error_and_retried() {
    let repo = sprint_repo();
    let narang = actor(
        &repo,
        "narang",
        &[
            "echo 'stack overflow in the agent' >&2; exit 3".into(),
            "kill -9 $$".into(),
            say(&impl_done()),
        ],
    );
    let actors = with(good_actors(&repo), "narang", narang);
    config_with(&repo, &actors, RETRY0);
    let out = run(&repo);
    out.ok()
        .stderr_has("implementing: ERROR: narang exited with exit 3");
    let errors = reasons(&repo, "ERROR");
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].contains("exit 3") && errors[0].contains("stack overflow in the agent"),
        "{errors:?}"
    );
    assert!(errors[1].contains("signal 9"), "{errors:?}");
    assert_eq!(spawns(&repo, "narang"), 3);
    assert_eq!(status(&repo)["state"], "done");
    // The retry got the same stdin: harang's message.
    assert_eq!(
        json_of(&stdin_of(&repo, "narang", 3)),
        json_of(&plan_ready())
    );

    // A command that does not exist: spawn failed.
    let repo = sprint_repo();
    let actors = with(
        good_actors(&repo),
        "narang",
        "/nonexistent/rails-agent".into(),
    );
    config_with(
        &repo,
        &actors,
        "[retry]\nbackoffSeconds = 0\nmaxAttempts = 2\n",
    );
    run(&repo).code(1).stdout_has("escalated");
    let errors = reasons(&repo, "ERROR");
    assert_eq!(errors.len(), 2);
    assert!(
        errors
            .iter()
            .all(|e| e.contains("spawn failed") && e.contains("/nonexistent/rails-agent")),
        "{errors:?}"
    );
}

#[test]
fn output_that_is_not_a_handoff_message_is_an_error_with_its_reason() {
    let repo = sprint_repo();
    let mut extra = json_of(&plan_ready());
    extra["extra"] = json!(1);
    let mut wrong_type = json_of(&plan_ready());
    wrong_type["payload"]["contractId"] = json!(5);
    let harang = actor(
        &repo,
        "harang",
        &[
            say("Sure! Here is the plan."),
            say(&extra.to_string()),
            format!("{}; {}", say(&plan_ready()), say(&plan_ready())),
            say("[1, 2]"),
            say(&wrong_type.to_string()),
            "true".into(),
            say(&plan_ready()),
        ],
    );
    let actors = with(good_actors(&repo), "harang", harang);
    config_with(
        &repo,
        &actors,
        "[retry]\nbackoffSeconds = 0\nmaxAttempts = 7\n",
    );
    let out = run(&repo);
    out.ok()
        .stdout_has("pipeline SPRINT-001: done")
        // Logged with the reason.
        .stderr_has("planning: ERROR: stdout is not exactly one JSON object");
    let errors = reasons(&repo, "ERROR");
    assert_eq!(errors.len(), 6, "{errors:?}");
    let expect = [
        "not exactly one JSON object",
        "unknown field `extra`",
        "not exactly one JSON object",
        "not an object",
        "invalid type",
        "printed nothing",
    ];
    for (e, want) in errors.iter().zip(expect) {
        assert!(e.contains(want), "{e:?} lacks {want:?}");
    }
    // Never a transition: planning stays planning until the good answer.
    let h = history(&repo);
    for e in &h[1..7] {
        assert_eq!(e["event"], "ERROR");
        assert_eq!(e["from"], "planning");
        assert_eq!(e["to"], "planning");
    }
    assert_eq!(h[7]["event"], "HANDOFF");
    assert_eq!(h[7]["attempt"], 7);
}

#[test]
fn an_illegal_verdict_for_the_actor_is_a_schema_error_and_retried() {
    let repo = sprint_repo();
    let narang = actor(
        &repo,
        "narang",
        &[
            say(r#"{"actor":"narang","verdict":"APPROVE"}"#),
            say(r#"{"actor":"narang","verdict":"ERROR","errorReason":"tests are red"}"#),
            say(&impl_done()),
        ],
    );
    let actors = with(good_actors(&repo), "narang", narang);
    config_with(&repo, &actors, RETRY0);
    run(&repo).ok();
    let errors = reasons(&repo, "ERROR");
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("not a HandoffMessage"), "{errors:?}");
    assert!(errors[0].contains("APPROVE"), "{errors:?}");
    assert!(
        errors[1].contains("narang reported ERROR: tests are red"),
        "{errors:?}"
    );
    assert_eq!(status(&repo)["state"], "done");
}

#[test]
fn the_wrong_actor_answering_aborts_the_pipeline() {
    let repo = sprint_repo();
    let harang = actor(&repo, "harang", &[say(&approve())]);
    let actors = with(good_actors(&repo), "harang", harang);
    config_with(&repo, &actors, RETRY0);
    let out = run(&repo);
    out.code(1)
        .stdout_has("pipeline SPRINT-001: aborted")
        .stderr_has("planning: ERROR: darang answered in planning");
    assert_eq!(
        flow(&repo),
        ["START planning->planning", "ERROR planning->aborted"]
    );
    // Not retried, and nothing to resume.
    assert_eq!(spawns(&repo, "harang"), 1);
    assert_eq!(spawns(&repo, "narang"), 0);
    assert_eq!(status(&repo)["state"], "aborted");
    resume(&repo).code(65).stderr_has("aborted");
}

#[test]
fn the_wrong_actors_message_is_recorded_with_its_error() {
    // Like any other valid message that is refused (validate FAIL, a contract that is not
    // frozen), the message that ended the pipeline is kept in its event.
    let repo = sprint_repo();
    let harang = actor(&repo, "harang", &[say(&approve())]);
    let actors = with(good_actors(&repo), "harang", harang);
    config_with(&repo, &actors, RETRY0);
    run(&repo).code(1);
    let h = history(&repo);
    assert_eq!(h[1]["to"], "aborted");
    assert_eq!(h[1]["message"], json_of(&approve()), "{}", h[1]);
}

#[test]
fn an_actor_past_its_timeout_is_killed_with_its_process_group() {
    let repo = sprint_repo();
    let d = agents(&repo).display().to_string();
    let harang = actor(
        &repo,
        "harang",
        &[
            format!("sleep 60 & echo $! > '{d}/grandchild.pid'; wait"),
            say(&plan_ready()),
        ],
    );
    let mut actors = good_actors(&repo);
    actors.retain(|a| a.0 != "harang");
    let mut text = actor_toml("harang", &[&harang], 1);
    for (n, p) in &actors {
        text += &actor_toml(n, &[p.as_str()], 30);
    }
    text += RETRY0;
    repo.write(".rails/config.toml", &text);
    repo.rails(&["trust"]).ok();
    let started = Instant::now();
    let out = run(&repo);
    let took = started.elapsed();
    out.ok()
        .stdout_has("pipeline SPRINT-001: done")
        .stderr_has("planning: TIMEOUT: harang gave no answer within 1 s");
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let timeouts = reasons(&repo, "TIMEOUT");
    assert_eq!(timeouts.len(), 1);
    assert!(
        timeouts[0].contains("process group was killed"),
        "{timeouts:?}"
    );
    assert_eq!(spawns(&repo, "harang"), 2);
    let pid = std::fs::read_to_string(agents(&repo).join("grandchild.pid")).unwrap();
    wait_until("the grandchild to be gone", Duration::from_secs(5), || {
        gone(&pid)
    });
}

#[test]
fn plan_ready_must_name_a_frozen_contract() {
    let repo = sprint_repo();
    let harang = actor(
        &repo,
        "harang",
        &[
            say(&plan_ready_for("01JDQ7ZK3M8T5V2W9X4Y6Z0XXX")),
            say(r#"{"actor":"harang","verdict":"PLAN_READY"}"#),
            say(&plan_ready()),
        ],
    );
    let actors = with(good_actors(&repo), "harang", harang);
    config_with(&repo, &actors, RETRY0);
    run(&repo).ok();
    let errors = reasons(&repo, "ERROR");
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].contains("01JDQ7ZK3M8T5V2W9X4Y6Z0XXX")
            && errors[0].contains("not a frozen contract"),
        "{errors:?}"
    );
    assert!(errors[1].contains("contractId"), "{errors:?}");
    // A failed attempt is not a transition: narang ran once, after the good plan.
    assert_eq!(spawns(&repo, "narang"), 1);
}

#[test]
fn impl_done_needs_a_passing_validate_when_the_impl_gate_is_on() {
    let repo = sprint_repo_with(
        json!({"impl": true, "review": true, "deploy": false}),
        json!([check("built", "file_exists", json!({"path": "built.txt"}))]),
    );
    let narang = actor(
        &repo,
        "narang",
        &[
            say(&impl_done()),
            format!("touch built.txt; {}", say(&impl_done())),
        ],
    );
    let actors = with(good_actors(&repo), "narang", narang);
    config_with(&repo, &actors, RETRY0);
    run(&repo).ok().stdout_has("done");
    assert_eq!(
        flow(&repo),
        [
            "START planning->planning",
            "HANDOFF planning->implementing",
            "ERROR implementing->implementing",
            "HANDOFF implementing->reviewing",
            "HANDOFF reviewing->done",
        ]
    );
    let errors = reasons(&repo, "ERROR");
    assert!(
        errors[0].contains("git rails contract validate SPRINT-001")
            && errors[0].contains("FAIL")
            && errors[0].contains("built"),
        "{errors:?}"
    );
    assert_eq!(spawns(&repo, "narang"), 2);
    assert_eq!(spawns(&repo, "darang"), 1);
    // The failed attempt's message is recorded, but the next actor got the one that passed.
    assert_eq!(
        json_of(&stdin_of(&repo, "darang", 1)),
        json_of(&impl_done())
    );
}

#[test]
fn the_impl_gate_off_skips_validate() {
    let repo = sprint_repo_with(
        json!({"impl": false, "review": true, "deploy": false}),
        json!([check(
            "never",
            "command_success",
            json!({"command": "touch validate-ran; exit 1"})
        )]),
    );
    config_with(&repo, &good_actors(&repo), RETRY0);
    run(&repo).ok().stdout_has("pipeline SPRINT-001: done");
    assert!(
        !repo.path().join("validate-ran").exists(),
        "validate ran with approvalGates.impl false"
    );
    assert_eq!(spawns(&repo, "narang"), 1);
    assert_eq!(
        spawns(&repo, "erang"),
        0,
        "deploy false: APPROVE ends in done"
    );
    let h = history(&repo);
    assert_eq!(h.last().unwrap()["to"], "done");
    assert_eq!(h.last().unwrap()["verdict"], "APPROVE");
}

#[test]
fn deploy_failed_is_retried_then_deploy_done_ends_in_done() {
    let repo = sprint_repo_with(
        json!({"impl": true, "review": true, "deploy": true}),
        json!([check("readme", "file_exists", json!({"path": "README.md"}))]),
    );
    let erang = actor(
        &repo,
        "erang",
        &[say(&deploy("DEPLOY_FAILED")), say(&deploy("DEPLOY_DONE"))],
    );
    let actors = with(good_actors(&repo), "erang", erang);
    config_with(&repo, &actors, RETRY0);
    run(&repo).ok().stdout_has("pipeline SPRINT-001: done");
    assert_eq!(
        flow(&repo)[3..],
        [
            "HANDOFF reviewing->deploying",
            "ERROR deploying->deploying",
            "HANDOFF deploying->done",
        ]
    );
    assert!(reasons(&repo, "ERROR")[0].contains("DEPLOY_FAILED"));
    assert_eq!(spawns(&repo, "erang"), 2);
    // erang's retry gets darang's approval again.
    assert_eq!(json_of(&stdin_of(&repo, "erang", 2)), json_of(&approve()));
}

#[test]
fn abort_verdicts_end_in_aborted() {
    // harang ABORT
    let repo = sprint_repo();
    let harang = actor(
        &repo,
        "harang",
        &[say(
            r#"{"actor":"harang","verdict":"ABORT","abortReason":"scope unclear"}"#,
        )],
    );
    let actors = with(good_actors(&repo), "harang", harang);
    config_with(&repo, &actors, RETRY0);
    run(&repo)
        .code(1)
        .stdout_has("pipeline SPRINT-001: aborted");
    let h = history(&repo);
    assert_eq!(h[1]["event"], "HANDOFF");
    assert_eq!(h[1]["to"], "aborted");
    assert_eq!(h[1]["reason"], "scope unclear");
    assert_eq!(spawns(&repo, "narang"), 0);

    // darang ABORT
    let repo = sprint_repo();
    let mut abort = json_of(&approve());
    abort["verdict"] = json!("ABORT");
    let darang = actor(&repo, "darang", &[say(&abort.to_string())]);
    let actors = with(good_actors(&repo), "darang", darang);
    config_with(&repo, &actors, RETRY0);
    run(&repo)
        .code(1)
        .stdout_has("pipeline SPRINT-001: aborted");
    assert_eq!(flow(&repo).last().unwrap(), "HANDOFF reviewing->aborted");
}

// =============================================================================================
// Retries, review rounds, escalation, resume, abort.

#[test]
fn max_attempts_failures_escalate_and_resume_continues_there() {
    let repo = sprint_repo();
    let narang = actor(
        &repo,
        "narang",
        &["exit 1".into(), "exit 1".into(), say(&impl_done())],
    );
    let actors = with(good_actors(&repo), "narang", narang);
    config_with(
        &repo,
        &actors,
        "[retry]\nbackoffSeconds = 0\nmaxAttempts = 2\n",
    );
    let out = run(&repo);
    out.code(1)
        .stdout_has("pipeline SPRINT-001: escalated")
        .stderr_has("escalated after 2 failed attempts in implementing")
        .stderr_has("git rails pipeline resume SPRINT-001");
    assert_ne!(out.code, 64);
    let s = status(&repo);
    assert_eq!(s["state"], "escalated");
    assert_eq!(s["escalatedFrom"], "implementing");
    assert_eq!(s["attempts"], 2);
    assert_eq!(
        flow(&repo)[2..],
        [
            "ERROR implementing->implementing",
            "ERROR implementing->implementing",
            "ESCALATED implementing->escalated",
        ]
    );
    assert_eq!(spawns(&repo, "narang"), 2);
    // Escalated waits: run is refused; resume goes back to implementing with fresh attempts.
    run(&repo)
        .code(65)
        .stderr_has("already exists (state escalated)")
        .stderr_has("git rails pipeline resume SPRINT-001");
    let out = resume(&repo);
    out.ok()
        .stdout_has("pipeline SPRINT-001: done")
        .stderr_has("resumed in implementing");
    assert_eq!(
        flow(&repo)[5..],
        [
            "RESUME escalated->implementing",
            "HANDOFF implementing->reviewing",
            "HANDOFF reviewing->done",
        ]
    );
    assert_eq!(spawns(&repo, "narang"), 3);
    assert_eq!(spawns(&repo, "harang"), 1, "planning was not repeated");
}

#[test]
fn the_default_retry_policy_escalates_on_the_third_failure() {
    let repo = sprint_repo();
    let narang = actor(&repo, "narang", &["exit 1".into()]);
    let actors = with(good_actors(&repo), "narang", narang);
    // Only the backoff is set: maxAttempts is the default (3).
    config_with(&repo, &actors, RETRY0);
    run(&repo)
        .code(1)
        .stderr_has("spawning narang (attempt 3/3)")
        .stdout_has("escalated");
    assert_eq!(spawns(&repo, "narang"), 3);
    assert_eq!(reasons(&repo, "ESCALATED"), ["3 failed attempts"]);
}

#[test]
fn retries_back_off_exponentially() {
    let repo = sprint_repo();
    let narang = actor(
        &repo,
        "narang",
        &["exit 1".into(), "exit 1".into(), say(&impl_done())],
    );
    let actors = with(good_actors(&repo), "narang", narang);
    config_with(
        &repo,
        &actors,
        "[retry]\nbackoffSeconds = 1\nmaxAttempts = 3\n",
    );
    let started = Instant::now();
    let out = run(&repo);
    let took = started.elapsed();
    out.ok()
        .stderr_has("retrying in 1 s")
        .stderr_has("retrying in 2 s");
    // 1 s, then doubled: 2 s.
    assert!(took >= Duration::from_secs(3), "took only {took:?}");
    assert!(took < Duration::from_secs(40), "took {took:?}");
}

#[test]
fn request_changes_loops_and_escalates_after_max_review_rounds() {
    let repo = sprint_repo();
    let darang = actor(&repo, "darang", &[say(&request_changes()), say(&approve())]);
    let actors = with(good_actors(&repo), "darang", darang);
    config_with(&repo, &actors, RETRY0);
    run(&repo).ok();
    assert_eq!(
        flow(&repo)[2..],
        [
            "HANDOFF implementing->reviewing",
            "HANDOFF reviewing->implementing",
            "HANDOFF implementing->reviewing",
            "HANDOFF reviewing->done",
        ]
    );
    // One change request, then an approval on the second round.
    assert_eq!(status(&repo)["reviewRound"], 2);
    assert_eq!(status(&repo)["changesRequested"], 1);
    // narang's second turn gets darang's change request.
    assert_eq!(
        json_of(&stdin_of(&repo, "narang", 2)),
        json_of(&request_changes())
    );

    // Always REQUEST_CHANGES with maxReviewRounds 2: the third round escalates.
    let repo = sprint_repo();
    let darang = actor(&repo, "darang", &[say(&request_changes())]);
    let actors = with(good_actors(&repo), "darang", darang);
    config_with(
        &repo,
        &actors,
        "[retry]\nbackoffSeconds = 0\nmaxReviewRounds = 2\n",
    );
    run(&repo).code(1).stdout_has("escalated");
    let s = status(&repo);
    assert_eq!(s["state"], "escalated");
    assert_eq!(s["escalatedFrom"], "reviewing");
    assert_eq!(s["changesRequested"], 3);
    assert_eq!(s["reviewRound"], 4);
    assert_eq!(spawns(&repo, "narang"), 3);
    assert_eq!(spawns(&repo, "darang"), 3);
    let esc = reasons(&repo, "ESCALATED");
    assert_eq!(esc.len(), 1);
    assert!(esc[0].contains("maxReviewRounds"), "{esc:?}");
    // The reviewer approves after the user's look: resume finishes.
    actor(&repo, "darang", &[say(&approve())]);
    std::fs::remove_file(agents(&repo).join("darang.count")).unwrap();
    resume(&repo).ok().stdout_has("pipeline SPRINT-001: done");
    assert_eq!(
        flow(&repo)[8..],
        ["RESUME escalated->reviewing", "HANDOFF reviewing->done"]
    );
}

#[test]
fn abort_ends_the_pipeline_and_a_later_resume_is_refused() {
    let repo = sprint_repo();
    let narang = actor(&repo, "narang", &["exit 1".into()]);
    let actors = with(good_actors(&repo), "narang", narang);
    config_with(
        &repo,
        &actors,
        "[retry]\nbackoffSeconds = 0\nmaxAttempts = 1\n",
    );
    run(&repo).code(1).stdout_has("escalated");
    repo.rails(&["pipeline", "abort", SPRINT, "--reason", "  "])
        .code(65)
        .stderr_has("an abort needs a reason");
    repo.rails(&[
        "pipeline",
        "abort",
        SPRINT,
        "--reason",
        "scope moved to sprint 2",
    ])
    .ok()
    .stdout_has("pipeline SPRINT-001: aborted");
    let s = status(&repo);
    assert_eq!(s["state"], "aborted");
    let last = s["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["event"], "ABORT");
    assert_eq!(last["from"], "escalated");
    assert_eq!(last["reason"], "scope moved to sprint 2");
    resume(&repo)
        .code(65)
        .stderr_has("the pipeline of SPRINT-001 is aborted");
    repo.rails(&["pipeline", "abort", SPRINT, "--reason", "again"])
        .code(65)
        .stderr_has("already aborted");
    run(&repo)
        .code(65)
        .stderr_has("already exists (state aborted)");
    assert_eq!(spawns(&repo, "narang"), 1);
    // Nothing to abort without a pipeline.
    repo.rails(&["pipeline", "abort", "SPRINT-002", "--reason", "x"])
        .code(65)
        .stderr_has("no pipeline for SPRINT-002");
}

// =============================================================================================
// One pipeline per repository; crashes.

#[test]
fn a_second_run_in_the_repository_is_refused_naming_the_holder() {
    let repo = sprint_repo();
    let harang = actor(
        &repo,
        "harang",
        &[format!("sleep 3; {}", say(&plan_ready()))],
    );
    let actors = with(good_actors(&repo), "harang", harang);
    config_with(&repo, &actors, RETRY0);
    let err = repo.home.path().join("first.stderr");
    let mut first = spawn_rails(&repo, &["pipeline", "run", SPRINT], &err);
    wait_until("harang to start", Duration::from_secs(20), || {
        spawns(&repo, "harang") == 1
    });
    let pid = first.0.id();
    // Another sprint in the same repository: refused, naming who holds the lock.
    let second = repo.rails(&["pipeline", "run", "SPRINT-002"]);
    second
        .code(65)
        .stderr_has("another pipeline is running in this repository")
        .stderr_has("sprint SPRINT-001")
        .stderr_has(&format!("pid {pid}"));
    repo.rails(&["pipeline", "run", SPRINT])
        .code(65)
        .stderr_has("another pipeline is running");
    resume(&repo).code(65).stderr_has(&format!("pid {pid}"));
    // status reads while it runs, and progress lines came while the actor ran.
    assert_eq!(status(&repo)["state"], "planning");
    assert!(std::fs::read_to_string(&err)
        .unwrap()
        .contains("planning: spawning harang (attempt 1/3)"));
    let code = first.0.wait().unwrap();
    assert!(code.success(), "{}", std::fs::read_to_string(&err).unwrap());
    assert_eq!(status(&repo)["state"], "done");
    // The lock is free again.
    repo.rails(&["pipeline", "resume", "SPRINT-002"])
        .code(65)
        .stderr_has("no pipeline for SPRINT-002");
}

#[test]
fn a_run_killed_while_an_actor_runs_resumes_without_repeating_a_transition() {
    let repo = sprint_repo();
    let narang = actor(
        &repo,
        "narang",
        &[format!("sleep 2; {}", say(&impl_done()))],
    );
    let actors = with(good_actors(&repo), "narang", narang);
    config_with(&repo, &actors, RETRY0);
    let err = repo.home.path().join("run.stderr");
    let mut child = spawn_rails(&repo, &["pipeline", "run", SPRINT], &err);
    wait_until("planning → implementing", Duration::from_secs(20), || {
        committed_state(&repo).is_some_and(|s| s["state"] == "implementing")
            && spawns(&repo, "narang") == 1
    });
    // Progress while the actor runs.
    assert!(std::fs::read_to_string(&err)
        .unwrap()
        .contains("implementing: spawning narang"));
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    assert_eq!(status(&repo)["state"], "implementing");
    resume(&repo)
        .ok()
        .stderr_has("resuming in implementing")
        .stdout_has("pipeline SPRINT-001: done");
    assert_eq!(
        flow(&repo),
        [
            "START planning->planning",
            "HANDOFF planning->implementing",
            "HANDOFF implementing->reviewing",
            "HANDOFF reviewing->done",
        ]
    );
    let seqs: Vec<u64> = history(&repo)
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    assert_eq!(spawns(&repo, "harang"), 1);
    assert_eq!(spawns(&repo, "narang"), 2);
    // The resumed narang got harang's message from the committed state.
    assert_eq!(
        json_of(&stdin_of(&repo, "narang", 2)),
        json_of(&plan_ready())
    );
}

#[test]
fn runs_killed_at_random_moments_always_resume_to_done() {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    let mut x = seed | 1;
    let mut next = move || {
        // xorshift
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..7u64 {
        let repo = sprint_repo();
        let pause = "sleep 0.1".to_string();
        let actors = vec![
            (
                "harang",
                actor(
                    &repo,
                    "harang",
                    &[format!("{pause}; {}", say(&plan_ready()))],
                ),
            ),
            (
                "narang",
                actor(
                    &repo,
                    "narang",
                    &[format!("{pause}; {}", say(&impl_done()))],
                ),
            ),
            (
                "darang",
                // One change request, decided from the committed state (not from a spawn
                // count, which a killed run may have used up without a transition).
                actor(
                    &repo,
                    "darang",
                    &[format!(
                        "{pause}\nif git show {REF}:state.json | grep -q '\"reviewRound\": 0,'; \
                         then {}; else {}; fi",
                        say(&request_changes()),
                        say(&approve())
                    )],
                ),
            ),
        ];
        config_with(&repo, &actors, RETRY0);
        let delay = Duration::from_millis(i * 200 + next() % 200);
        let err = repo.home.path().join("run.stderr");
        let mut child = spawn_rails(&repo, &["pipeline", "run", SPRINT], &err);
        std::thread::sleep(delay);
        child.0.kill().unwrap();
        child.0.wait().unwrap();
        // status always reads: either no pipeline yet, or a committed state.
        let st = repo.rails(&["pipeline", "status", SPRINT, "--json"]);
        let state = if st.code == 65 {
            st.stderr_has("no pipeline for SPRINT-001");
            None
        } else {
            st.ok();
            let v = st.json();
            assert_eq!(v["schema"], "rails-pipeline-status/v1");
            Some(v["state"].as_str().unwrap().to_string())
        };
        match state.as_deref() {
            None => {
                run(&repo).ok();
            }
            Some("done") => {}
            Some(_) => {
                resume(&repo).ok();
            }
        }
        let ctx = format!("iteration {i}, killed after {delay:?} (state then {state:?})");
        eprintln!("{ctx}");
        assert_eq!(status(&repo)["state"], "done", "{ctx}");
        assert_eq!(
            flow(&repo),
            [
                "START planning->planning",
                "HANDOFF planning->implementing",
                "HANDOFF implementing->reviewing",
                "HANDOFF reviewing->implementing",
                "HANDOFF implementing->reviewing",
                "HANDOFF reviewing->done",
            ],
            "{ctx}"
        );
        let commits = repo.git(&["rev-list", "--count", REF]);
        assert_eq!(commits.trim(), "6", "{ctx}");
    }
}

#[test]
fn a_run_killed_between_the_last_failure_and_its_escalation_escalates_on_resume() {
    // A run killed after the ERROR commit of an attempt and before anything else (here while
    // it waits out the backoff), resumed when retry.maxAttempts no longer allows another
    // attempt: resume must not spawn beyond it, since the committed state used them all.
    let repo = sprint_repo();
    let narang = actor(&repo, "narang", &["exit 1".into(), say(&impl_done())]);
    let actors = with(good_actors(&repo), "narang", narang);
    config_with(
        &repo,
        &actors,
        "[retry]\nbackoffSeconds = 60\nmaxAttempts = 2\n",
    );
    let err = repo.home.path().join("run.stderr");
    let mut child = spawn_rails(&repo, &["pipeline", "run", SPRINT], &err);
    wait_until("the ERROR commit", Duration::from_secs(20), || {
        committed_state(&repo).is_some_and(|s| s["attempts"] == 1)
    });
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    let s = status(&repo);
    assert_eq!(s["state"], "implementing");
    assert_eq!(s["attempts"], 1);
    config_with(
        &repo,
        &actors,
        "[retry]\nbackoffSeconds = 0\nmaxAttempts = 1\n",
    );
    let out = resume(&repo);
    assert_eq!(
        spawns(&repo, "narang"),
        1,
        "resume spawned narang beyond retry.maxAttempts = 1:\n{out}"
    );
    assert_eq!(status(&repo)["state"], "escalated", "{out}");
}

#[test]
fn a_hanging_notifier_holds_no_transition_and_the_run_waits_only_briefly_at_its_end() {
    // Before: each of the 4 transitions waited the hanging notifier's 10 s timeout (40 s).
    let repo = sprint_repo();
    let d = agents(&repo).display().to_string();
    let hang = script(
        &repo,
        "notify-hang",
        &format!("echo $$ >> '{d}/hang.pids'\nexec sleep 30\n"),
    );
    let record = recording_notifier(&repo);
    config_with(
        &repo,
        &good_actors(&repo),
        &format!(
            "{RETRY0}\n[[notify]]\ntype = \"command\"\ncommand = [{}]\ntimeoutSeconds = 10\n\n\
             [[notify]]\ntype = \"command\"\ncommand = [{}]\n",
            q(&hang),
            q(&record)
        ),
    );
    let started = Instant::now();
    let out = run(&repo);
    let took = started.elapsed();
    out.ok()
        .stdout_has("pipeline SPRINT-001: done")
        .stderr_has("still in flight after 3 s")
        .stderr_has("left undelivered");
    assert!(took < Duration::from_secs(10), "took {took:?}\n{out}");
    // Every transition was committed, and the other notifier got each one, in order.
    assert_eq!(flow(&repo).len(), 4);
    let notes = lines_of(&repo, "notes.log");
    assert_eq!(notes.len(), 4, "{notes:?}");
    let seqs: Vec<u64> = notes
        .iter()
        .map(|l| json_of(l)["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    // The one in flight at the end was stopped with the run.
    for pid in lines_of(&repo, "hang.pids") {
        wait_until(
            "the hanging notifier to be gone",
            Duration::from_secs(5),
            || gone(&pid),
        );
    }
}

// =============================================================================================
// Notifications.

/// A command notifier appending its stdin (one line) to `agents/notes.log`, the env message to
/// `agents/notes.env` and the pipeline ref's tip at the time to `agents/notes.tips`.
fn recording_notifier(repo: &TestRepo) -> String {
    let d = agents(repo).display().to_string();
    script(
        repo,
        "notify-record",
        &format!(
            "cat >> '{d}/notes.log'\necho >> '{d}/notes.log'\n\
             printf '%s\\n' \"$RAILS_NOTIFY_MESSAGE\" >> '{d}/notes.env'\n\
             git rev-parse {REF} >> '{d}/notes.tips'\n"
        ),
    )
}

fn lines_of(repo: &TestRepo, name: &str) -> Vec<String> {
    std::fs::read_to_string(agents(repo).join(name))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Escalates once in implementing (maxAttempts 1), resumes, goes through one REQUEST_CHANGES
/// round, ends in done.
fn escalate_then_finish(repo: &TestRepo, notify: &str) {
    let narang = actor(repo, "narang", &["exit 1".into(), say(&impl_done())]);
    let darang = actor(repo, "darang", &[say(&request_changes()), say(&approve())]);
    let actors = with(with(good_actors(repo), "narang", narang), "darang", darang);
    config_with(
        repo,
        &actors,
        &format!("[retry]\nbackoffSeconds = 0\nmaxAttempts = 1\n\n{notify}"),
    );
    run(repo).code(1).stdout_has("escalated");
    resume(repo).ok().stdout_has("done");
    assert_eq!(
        flow(repo),
        [
            "START planning->planning",
            "HANDOFF planning->implementing",
            "ERROR implementing->implementing",
            "ESCALATED implementing->escalated",
            "RESUME escalated->implementing",
            "HANDOFF implementing->reviewing",
            "HANDOFF reviewing->implementing",
            "HANDOFF implementing->reviewing",
            "HANDOFF reviewing->done",
        ]
    );
}

#[test]
fn command_notifiers_get_each_committed_event_in_order_with_the_seeds_messages() {
    let repo = sprint_repo();
    let notifier = recording_notifier(&repo);
    escalate_then_finish(
        &repo,
        &format!(
            "[[notify]]\ntype = \"command\"\ncommand = [{}]\nmention = \"<@42>\"\n",
            q(&notifier)
        ),
    );
    let h = history(&repo);
    let notes: Vec<Value> = lines_of(&repo, "notes.log")
        .iter()
        .map(|l| json_of(l))
        .collect();
    assert_eq!(notes.len(), h.len(), "one notification per committed event");
    let tips = lines_of(&repo, "notes.tips");
    let envs = lines_of(&repo, "notes.env");
    for (i, (n, e)) in notes.iter().zip(&h).enumerate() {
        assert_eq!(n["schema"], "rails-pipeline-event/v1");
        assert_eq!(n["sprint"], SPRINT);
        assert_eq!(n["seq"], e["seq"], "in order");
        assert_eq!(n["event"], e["event"]);
        assert_eq!(n["from"], e["from"]);
        assert_eq!(n["to"], e["to"]);
        // Sent after the commit: the ref already held the event's commit (notifiers run
        // beside the pipeline, so it may have moved on to later events by then).
        let commit = n["commit"].as_str().unwrap();
        assert!(
            repo.git_run(&["merge-base", "--is-ancestor", commit, &tips[i]])
                .code
                == 0,
            "notification {i}: {commit} is not in the ref's history at {}",
            tips[i]
        );
        let message = n["message"].as_str().unwrap();
        assert!(message.contains(SPRINT), "{message}");
        let mentions = e["event"] == "ESCALATED" || e["to"] == "done";
        assert_eq!(n["mention"], mentions, "{n}");
        // The mention goes in front of the message given to the command.
        if mentions {
            assert_eq!(envs[i], format!("<@42> {message}"));
        } else {
            assert_eq!(envs[i], message);
        }
    }
    let msg = |i: usize| notes[i]["message"].as_str().unwrap().to_string();
    assert_eq!(msg(0), "🦊 harang started planning SPRINT-001");
    assert!(msg(1).starts_with("⚙️ narang started implementing SPRINT-001"));
    assert!(msg(3).starts_with("🚨 SPRINT-001"), "{}", msg(3));
    assert!(msg(5).starts_with("🔎 darang started reviewing SPRINT-001"));
    assert!(
        msg(6).starts_with("🔁") && msg(6).contains("(round 2)"),
        "{}",
        msg(6)
    );
    assert!(msg(8).starts_with("✅ SPRINT-001"), "{}", msg(8));
}

#[test]
fn abort_is_notified() {
    let repo = sprint_repo();
    let notifier = recording_notifier(&repo);
    let narang = actor(&repo, "narang", &["exit 1".into()]);
    let actors = with(good_actors(&repo), "narang", narang);
    config_with(
        &repo,
        &actors,
        &format!(
            "[retry]\nbackoffSeconds = 0\nmaxAttempts = 1\n\n[[notify]]\ntype = \"command\"\n\
             command = [{}]\n",
            q(&notifier)
        ),
    );
    run(&repo).code(1);
    repo.rails(&["pipeline", "abort", SPRINT, "--reason", "not needed"])
        .ok();
    let notes = lines_of(&repo, "notes.log");
    assert_eq!(notes.len(), history(&repo).len());
    let last = json_of(notes.last().unwrap());
    assert_eq!(last["event"], "ABORT");
    assert_eq!(last["mention"], false);
    let m = last["message"].as_str().unwrap();
    assert!(m.contains(SPRINT) && m.contains("not needed"), "{m}");
}

#[test]
fn a_failing_notifier_is_logged_on_abort_too() {
    let repo = sprint_repo();
    let fail = script(&repo, "notify-fail", "cat > /dev/null; exit 1\n");
    let narang = actor(&repo, "narang", &["exit 1".into()]);
    let actors = with(good_actors(&repo), "narang", narang);
    config_with(
        &repo,
        &actors,
        &format!(
            "[retry]\nbackoffSeconds = 0\nmaxAttempts = 1\n\n[[notify]]\ntype = \"command\"\n\
             command = [{}]\n",
            q(&fail)
        ),
    );
    run(&repo)
        .code(1)
        .stderr_has("notifier 0 (command) failed and was skipped");
    // The spec: a notifier that fails is logged and skipped — abort's as well.
    repo.rails(&["pipeline", "abort", SPRINT, "--reason", "not needed"])
        .ok()
        .stderr_has("notifier 0 (command) failed and was skipped");
    assert_eq!(status(&repo)["state"], "aborted");
}

#[test]
fn webhooks_get_discord_bodies_with_mentions_or_the_event() {
    let repo = sprint_repo();
    let (discord, discord_got) = receiver(true);
    let (events, events_got) = receiver(true);
    escalate_then_finish(
        &repo,
        &format!(
            "[[notify]]\ntype = \"webhook\"\nurl = \"http://127.0.0.1:{discord}/api/webhooks/1\"\n\
             format = \"discord\"\nmention = \"<@123456>\"\ntimeoutSeconds = 5\n\n\
             [[notify]]\ntype = \"webhook\"\nurl = \"http://127.0.0.1:{events}/events\"\n\
             format = \"json\"\ntimeoutSeconds = 5\n"
        ),
    );
    let h = history(&repo);
    let d = discord_got.lock().unwrap().clone();
    assert_eq!(d.len(), h.len(), "one POST per committed event");
    for ((head, body), e) in d.iter().zip(&h) {
        assert!(head.starts_with("POST /api/webhooks/1 HTTP/1.1"), "{head}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{head}"
        );
        let obj = body.as_object().unwrap();
        assert_eq!(obj.len(), 1, "a Discord body is {{\"content\": …}}: {body}");
        let content = body["content"].as_str().unwrap();
        assert!(content.contains(SPRINT), "{content}");
        if e["event"] == "ESCALATED" || e["to"] == "done" {
            assert!(content.starts_with("<@123456> "), "{content}");
        } else {
            assert!(!content.contains("<@123456>"), "{content}");
        }
    }
    assert!(d[3].1["content"]
        .as_str()
        .unwrap()
        .starts_with("<@123456> 🚨"));
    assert!(d[8].1["content"]
        .as_str()
        .unwrap()
        .starts_with("<@123456> ✅ SPRINT-001"));
    let j = events_got.lock().unwrap().clone();
    assert_eq!(j.len(), h.len());
    for ((head, body), e) in j.iter().zip(&h) {
        assert!(head.starts_with("POST /events "), "{head}");
        assert_eq!(body["schema"], "rails-pipeline-event/v1");
        assert_eq!(body["seq"], e["seq"]);
        assert_eq!(body["event"], e["event"]);
        assert_eq!(body["to"], e["to"]);
        assert_eq!(
            body["mention"],
            e["event"] == "ESCALATED" || e["to"] == "done"
        );
    }
}

#[test]
fn failing_and_hanging_notifiers_are_logged_and_never_block_or_change_the_pipeline() {
    let repo = sprint_repo();
    let d = agents(&repo).display().to_string();
    let fail = script(&repo, "notify-fail", "cat > /dev/null; exit 1\n");
    let hang = script(
        &repo,
        "notify-hang",
        &format!("echo $$ >> '{d}/hang.pids'\nsleep 30\n"),
    );
    let record = recording_notifier(&repo);
    let (hanging, _) = receiver(false);
    let closed = free_port();
    let erroring = http_server(500);
    let notify = format!(
        "[[notify]]\ntype = \"command\"\ncommand = [{}]\n\n\
         [[notify]]\ntype = \"command\"\ncommand = [{}]\ntimeoutSeconds = 1\n\n\
         [[notify]]\ntype = \"webhook\"\nurl = \"http://127.0.0.1:{closed}/x\"\ntimeoutSeconds = 1\n\n\
         [[notify]]\ntype = \"webhook\"\nurl = \"http://127.0.0.1:{hanging}/x\"\ntimeoutSeconds = 1\n\n\
         [[notify]]\ntype = \"webhook\"\nurl = \"http://127.0.0.1:{erroring}/x\"\n\n\
         [[notify]]\ntype = \"command\"\ncommand = [{}]\n",
        q(&fail),
        q(&hang),
        q(&record)
    );
    config_with(&repo, &good_actors(&repo), &format!("{RETRY0}\n{notify}"));
    let started = Instant::now();
    let out = run(&repo);
    let took = started.elapsed();
    out.ok()
        .stdout_has("pipeline SPRINT-001: done")
        .stderr_has("notifier 0 (command) failed and was skipped")
        .stderr_has("notifier 1 (command) failed and was skipped")
        .stderr_has("did not finish within 1 s")
        .stderr_has("notifier 2 (webhook) failed and was skipped")
        .stderr_has("notifier 3 (webhook) failed and was skipped")
        .stderr_has("notifier 4 (webhook) failed and was skipped")
        .stderr_has("answered 500");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    // The same events as without notifiers, and the good notifier still got every one.
    assert_eq!(
        flow(&repo),
        [
            "START planning->planning",
            "HANDOFF planning->implementing",
            "HANDOFF implementing->reviewing",
            "HANDOFF reviewing->done",
        ]
    );
    assert_eq!(lines_of(&repo, "notes.log").len(), 4);
    // The hanging notifier was killed each time, or stopped when the run ended: none of its
    // processes outlives the run. (Its deliveries queue behind each other, so the run's end
    // may come before all 4 started.)
    let pids = lines_of(&repo, "hang.pids");
    assert!((1..=4).contains(&pids.len()), "{pids:?}");
    for p in &pids {
        wait_until(
            "the hanging notifier to be gone",
            Duration::from_secs(5),
            || gone(p),
        );
    }
}

#[test]
fn a_failed_attempt_is_not_announced_as_a_new_start() {
    let repo = sprint_repo();
    let notifier = recording_notifier(&repo);
    let narang = actor(&repo, "narang", &["exit 1".into(), say(&impl_done())]);
    let actors = with(good_actors(&repo), "narang", narang);
    config_with(
        &repo,
        &actors,
        &format!(
            "{RETRY0}\n[[notify]]\ntype = \"command\"\ncommand = [{}]\n",
            q(&notifier)
        ),
    );
    run(&repo).ok();
    let notes: Vec<Value> = lines_of(&repo, "notes.log")
        .iter()
        .map(|l| json_of(l))
        .collect();
    let error = notes.iter().find(|n| n["event"] == "ERROR").unwrap();
    let m = error["message"].as_str().unwrap();
    // The user is told of the failure, not that narang started implementing again.
    assert!(
        !m.contains("started implementing") && m.contains(SPRINT) && m.contains("exit 1"),
        "the ERROR of a failed attempt is announced as {m:?}"
    );
}

#[test]
fn notifier_failures_are_logged_verbatim() {
    let repo = sprint_repo();
    let fail = script(&repo, "Notify-FAIL", "cat > /dev/null; exit 1\n");
    config_with(
        &repo,
        &good_actors(&repo),
        &format!(
            "{RETRY0}\n[[notify]]\ntype = \"command\"\ncommand = [{}]\n",
            q(&fail)
        ),
    );
    // The log names the notifier as configured (a path keeps its case).
    run(&repo)
        .ok()
        .stderr_has("failed and was skipped")
        .stderr_has(&fail);
}

// ---------------------------------------------------------------------------------------------
// Trust: a cloned repository runs nothing until this clone trusts its configuration.

/// The actors' config text, as a project would commit it.
fn actors_text(actors: &[(&'static str, String)]) -> String {
    let mut text = String::new();
    for (name, path) in actors {
        text += &actor_toml(name, &[path], 30);
    }
    text + RETRY0
}

#[test]
fn a_projects_commands_run_only_after_trust_of_that_exact_file() {
    let repo = sprint_repo();
    let actors = good_actors(&repo);
    repo.write(".rails/config.toml", &actors_text(&actors));
    // Untrusted: refused before anything runs or is written, naming the command.
    run(&repo)
        .code(65)
        .stderr_has("names commands to run on this machine (actors.harang, actors.narang, actors.darang, actors.erang)")
        .stderr_has("git rails trust");
    assert_eq!(spawns(&repo, "harang"), 0);
    assert!(repo.git_run(&["rev-parse", "--verify", "-q", REF]).code != 0);
    // Trusted: it runs, and `trust` showed what it runs.
    repo.rails(&["trust"])
        .ok()
        .stdout_has("trusted .rails/config.toml")
        .stdout_has(&format!("actors.harang: {}", actors[0].1));
    repo.rails(&["trust"]).ok().stdout_has("already trusted");
    run(&repo).ok().stdout_has("pipeline SPRINT-001: done");
    // One changed byte needs trusting again (resume reads the file too).
    let repo2 = sprint_repo();
    let actors2 = good_actors(&repo2);
    repo2.write(".rails/config.toml", &actors_text(&actors2));
    repo2.rails(&["trust"]).ok();
    repo2.write(
        ".rails/config.toml",
        &(actors_text(&actors2) + "# changed\n"),
    );
    run(&repo2).code(65).stderr_has("git rails trust");
    assert_eq!(spawns(&repo2, "harang"), 0);
    // A notifier alone is a command too; a file of retry policy only needs no trust.
    repo2.write(
        ".rails/config.toml",
        "[[notify]]\ntype = \"webhook\"\nurl = \"http://127.0.0.1:9/x\"\n",
    );
    run(&repo2).code(65).stderr_has("(notify[0])");
    let json = repo2.rails(&["trust", "--json"]);
    json.ok();
    assert_eq!(json.json()["schema"], "rails-trust/v1");
    assert_eq!(json.json()["runs"][0][1], "POST http://127.0.0.1:9/x");
}

#[test]
fn a_fresh_clone_does_not_inherit_trust_and_the_users_own_actors_need_none() {
    let repo = sprint_repo();
    let actors = good_actors(&repo);
    repo.write(".rails/config.toml", &actors_text(&actors));
    repo.rails(&["trust"]).ok();
    repo.commit_all("config and agents");
    let dir = tempfile::tempdir().unwrap();
    let clone_path = dir.path().join("clone");
    repo.git(&[
        "clone",
        "-q",
        repo.path().to_str().unwrap(),
        clone_path.to_str().unwrap(),
    ]);
    let clone = TestRepo::at(&clone_path);
    clone.git(&["fetch", "-q", "origin", "refs/rails/*:refs/rails/*"]);
    let marker = agents(&repo).join("harang.count");
    let _ = std::fs::remove_file(&marker);
    clone
        .rails(&["pipeline", "run", SPRINT])
        .code(65)
        .stderr_has("git rails trust");
    assert!(!marker.exists(), "an actor of the clone ran");
    // The same actors in the user's own file run without trust (the project file names
    // none then).
    std::fs::remove_file(clone_path.join(".rails/config.toml")).unwrap();
    let xdg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(xdg.path().join("rails")).unwrap();
    std::fs::write(xdg.path().join("rails/config.toml"), actors_text(&actors)).unwrap();
    let xdg_s = xdg.path().display().to_string();
    clone
        .rails_env(
            &["pipeline", "run", SPRINT],
            &[("XDG_CONFIG_HOME", xdg_s.as_str())],
        )
        .ok()
        .stdout_has("pipeline SPRINT-001: done");
    // Without XDG_CONFIG_HOME, ~/.config/rails/config.toml is the user's file.
    let home_cfg = clone.home.path().join(".config/rails");
    std::fs::create_dir_all(&home_cfg).unwrap();
    std::fs::write(home_cfg.join("config.toml"), "[retry]\nmaxAttempts = 0\n").unwrap();
    clone
        .rails(&["pipeline", "run", "SPRINT-001"])
        .code(65)
        .stderr_has("retry.maxAttempts must be at least 1");
}
