//! Validate runs in the seed's order, with the seed's verdicts and exit codes, prints each
//! result as it finishes, and records the report.

use crate::harness::{check, TestRepo};
use serde_json::json;

fn prereq(name: &str, kind: &str, spec: serde_json::Value) -> serde_json::Value {
    json!({"name": name, "check": kind, "spec": spec, "reason": format!("{name} is needed")})
}

#[test]
fn a_missing_prerequisite_aborts_before_anything_runs() {
    let repo = TestRepo::new();
    repo.draft_with(
        "S",
        json!([check(
            "c",
            "command_success",
            json!({"command": "touch check-ran; exit 1"})
        )]),
        json!({
            "environmentPrerequisites": [
                prereq("sh", "command_exists", json!({"command": "sh"})),
                prereq("nope", "command_exists", json!({"command": "rails-no-such-tool"})),
                prereq("never", "command_exists", json!({"command": "sh"})),
            ],
            "runtimeValidation": {"commands": [{"name": "mark", "command": "touch runtime-ran"}]},
        }),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    let out = repo.rails(&["contract", "validate", "S"]);
    out.code(3)
        .stdout_has("prereq   ok   sh (command_exists)")
        .stdout_has("prereq   FAIL nope (command_exists)")
        // Prerequisites are counted on their own, never as passed or failed checks.
        .stdout_has(
            "verdict: ABORT_PRECHECK (checks: not run; prerequisites: 1 met, 1 missing); \
             prerequisite nope is missing, so nothing else was run",
        )
        .stdout_lacks("never");
    assert!(
        !repo.path().join("runtime-ran").exists(),
        "a runtime command ran after ABORT_PRECHECK"
    );
    assert!(
        !repo.path().join("check-ran").exists(),
        "a check ran after ABORT_PRECHECK"
    );
    let j = repo.rails(&["contract", "validate", "S", "--json", "--no-note"]);
    j.code(3);
    let doc = j.json();
    assert_eq!(doc["verdict"], "ABORT_PRECHECK");
    assert_eq!(doc["abortedBy"], "nope");
    assert_eq!(doc["results"].as_array().unwrap().len(), 2);
}

#[test]
fn runtime_commands_then_checks_in_order_pass_and_fail() {
    let repo = TestRepo::new();
    repo.draft_with(
        "S",
        json!([
            check(
                "first",
                "command_success",
                json!({"command": "echo check1 >> order.log; test -f built"})
            ),
            check(
                "second",
                "regex_in_file",
                json!({"path": "order.log", "pattern": "^check1$"})
            ),
        ]),
        json!({"runtimeValidation": {"commands": [
            {"name": "build", "command": "echo runtime >> order.log"},
        ]}}),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    let out = repo.rails(&["contract", "validate", "S"]);
    out.code(1)
        .stdout_has("check    FAIL first (command_success)")
        .stdout_has(
            "verdict: FAIL (checks: 1 passed, 1 failed, 0 warnings; runtime commands: 1 passed, 0 failed)",
        );
    assert_eq!(repo.read("order.log"), "runtime\ncheck1\n");
    // The lines come in the order they ran.
    let lines: Vec<&str> = out.stdout.lines().collect();
    let pos = |s: &str| lines.iter().position(|l| l.contains(s)).unwrap();
    assert!(pos("build") < pos("first") && pos("first") < pos("second"));

    repo.write("built", "");
    repo.rails(&["contract", "validate", "S"])
        .ok()
        .stdout_has("verdict: PASS");
}

#[test]
fn a_failing_runtime_command_fails_the_verdict() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.draft_with(
        "S",
        json!([check("a", "file_exists", json!({"path": "a.txt"}))]),
        json!({"runtimeValidation": {"commands": [
            {"name": "build", "command": "exit 3"},
            {"name": "odd", "command": "exit 7", "expectExitCode": 7},
        ]}}),
    );
    repo.rails(&["contract", "validate", "S", "--draft", "--no-note"])
        .code(1)
        .stdout_has("runtime  FAIL build")
        .stdout_has("runtime  ok   odd");
}

#[test]
fn non_blocking_failures_are_warnings() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let mut soft = check("soft", "file_exists", json!({"path": "missing.txt"}));
    soft["blocking"] = json!(false);
    repo.draft(
        "S",
        json!([check("a", "file_exists", json!({"path": "a.txt"})), soft]),
    );
    let out = repo.rails(&[
        "contract",
        "validate",
        "S",
        "--draft",
        "--json",
        "--no-note",
    ]);
    out.ok();
    assert!(out.stderr.contains("check    WARN soft"), "{out}");
    let doc = out.json();
    assert_eq!(doc["schema"], "rails-validation/v1");
    assert_eq!(doc["verdict"], "PASS");
    assert_eq!(doc["warnings"], json!(["soft"]));
    assert_eq!(doc["failed"], json!([]));
    assert_eq!(doc["version"], "draft");
}

#[test]
fn json_junit_and_the_note() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let mut soft = check("soft", "file_exists", json!({"path": "nope"}));
    soft["blocking"] = json!(false);
    repo.draft(
        "S",
        json!([
            check("a", "file_exists", json!({"path": "a.txt"})),
            check("b", "file_exists", json!({"path": "b & <c>.txt"})),
            soft,
        ]),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    let junit = repo.path().join("out/junit.xml");
    let out = repo.rails(&[
        "contract",
        "validate",
        "S",
        "--json",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    out.code(1);
    let doc = out.json();
    assert_eq!(doc["verdict"], "FAIL");
    assert_eq!(doc["version"], "v1");
    assert_eq!(doc["failed"], json!(["b"]));
    assert_eq!(doc["head"], repo.git(&["rev-parse", "HEAD"]).trim());
    assert_eq!(
        doc["contractCommit"],
        repo.git(&["rev-parse", "refs/rails/contracts/S"]).trim()
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(
            "<testsuite name=\"rails S v1\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""
        ),
        "{xml}"
    );
    assert!(
        xml.contains("<testcase classname=\"S.check\" name=\"a\""),
        "{xml}"
    );
    assert!(
        xml.contains("<failure message=\"&quot;b &amp; &lt;c&gt;.txt&quot; is missing\""),
        "{xml}"
    );
    assert!(xml.contains("<skipped message=\"non-blocking: "), "{xml}");
    let note = repo.git(&["notes", "--ref=rails", "show", "HEAD"]);
    assert!(note.starts_with("rails validate S v1 at "), "{note}");
    assert!(
        note.contains("verdict: FAIL (checks: 1 passed, 1 failed, 1 warning)"),
        "{note}"
    );
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let repo = TestRepo::new();
    // The shell starts a grandchild that would sleep for a minute, records its pid, and waits.
    repo.draft(
        "S",
        json!([check(
            "slow",
            "command_success",
            json!({
                "command": "sleep 60 & echo $! > grandchild.pid; wait",
                "timeoutMs": 500
            })
        )]),
    );
    let start = std::time::Instant::now();
    let out = repo.rails(&["contract", "validate", "S", "--draft", "--no-note"]);
    out.code(1).stdout_has("timed out");
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    let pid: i32 = repo.read("grandchild.pid").trim().parse().unwrap();
    // Give the kernel a moment to reap, then the grandchild must be gone.
    let mut alive = true;
    for _ in 0..50 {
        let proc_path = format!("/proc/{pid}");
        let zombie_or_gone = match std::fs::read_to_string(format!("{proc_path}/stat")) {
            Err(_) => true,
            Ok(stat) => stat.split_whitespace().nth(2) == Some("Z"),
        };
        if zombie_or_gone {
            alive = false;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!alive, "grandchild {pid} outlived its check");
}

#[test]
fn non_goal_paths_fail_when_the_change_touches_them() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.draft_with(
        "S",
        json!([check("a", "file_exists", json!({"path": "a.txt"}))]),
        json!({"nonGoals": ["no rewrite", {"text": "no docs site", "paths": ["docs/**"]}]}),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    repo.write("src/x.rs", "fn x() {}\n");
    repo.commit_all("code");
    repo.rails(&["contract", "validate", "S", "--no-note"])
        .ok()
        .stdout_has("non-goal ok   nonGoals[1]");
    // Untracked files count as part of the change too.
    repo.write("docs/site/index.md", "# hi\n");
    repo.rails(&["contract", "validate", "S", "--no-note"])
        .code(1)
        .stdout_has("non-goal FAIL nonGoals[1] (non_goal): the change touches 1 path it rules out: docs/site/index.md");
}

#[test]
fn validate_without_a_frozen_contract_says_what_to_do() {
    let repo = TestRepo::new();
    repo.rails(&["contract", "validate", "S"])
        .code(65)
        .stderr_has("S has no frozen contract")
        .stderr_has("git rails contract freeze S");
    repo.rails(&["contract", "validate", "S", "--draft"])
        .code(65)
        .stderr_has("no draft for S");
}

#[test]
fn validate_on_an_unborn_branch_runs_without_a_note() {
    let repo = TestRepo::bare_init();
    repo.write("a.txt", "a\n");
    repo.draft(
        "S",
        json!([check("a", "file_exists", json!({"path": "a.txt"}))]),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    repo.rails(&["contract", "validate", "S"])
        .ok()
        .stdout_lacks("report added");
}

/// A check that logs `start <id> <t>` and `end <id> <t>` (seconds, nanosecond digits) around a sleep.
fn timed_check(id: &str, secs: &str) -> serde_json::Value {
    check(
        id,
        "command_success",
        json!({"command": format!(
            "echo \"start {id} $(date +%s.%N)\" >> times.log; sleep {secs}; \
             echo \"end {id} $(date +%s.%N)\" >> times.log"
        )}),
    )
}

/// (id, start, end) for every id in times.log.
fn spans(log: &str) -> Vec<(String, f64, f64)> {
    let mut starts = std::collections::BTreeMap::new();
    let mut out = Vec::new();
    for l in log.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let t: f64 = f[2].parse().unwrap();
        match f[0] {
            "start" => {
                starts.insert(f[1].to_string(), t);
            }
            _ => out.push((f[1].to_string(), starts[f[1]], t)),
        }
    }
    out
}

#[test]
fn jobs_runs_the_checks_at_once_after_the_runtime_commands() {
    let repo = TestRepo::new();
    let ids: Vec<String> = (0..8).map(|i| format!("c{i}")).collect();
    repo.draft_with(
        "S",
        json!(ids
            .iter()
            .map(|id| timed_check(id, "1"))
            .collect::<Vec<_>>()),
        json!({
            "environmentPrerequisites": [prereq("sh", "command_exists", json!({"command": "sh"}))],
            "runtimeValidation": {"commands": [{"name": "build", "command":
                "echo \"start build $(date +%s.%N)\" >> times.log; sleep 0.3; \
                 echo \"end build $(date +%s.%N)\" >> times.log"}]},
        }),
    );
    let t = std::time::Instant::now();
    let out = repo.rails(&[
        "contract",
        "validate",
        "S",
        "--draft",
        "--no-note",
        "--jobs",
        "8",
    ]);
    let wall = t.elapsed().as_secs_f64();
    out.ok()
        .stdout_has("verdict: PASS (checks: 8 passed, 0 failed, 0 warnings; runtime commands: 1 passed, 0 failed; prerequisites: 1 met, 0 missing)");
    let spans = spans(&repo.read("times.log"));
    let (checks, build): (Vec<_>, Vec<_>) = spans.iter().partition(|s| s.0 != "build");
    assert_eq!(checks.len(), 8, "{spans:?}");
    // Every check started before any of them ended: all 8 ran at once.
    let last_start = checks.iter().map(|s| s.1).fold(f64::MIN, f64::max);
    let first_end = checks.iter().map(|s| s.2).fold(f64::MAX, f64::min);
    assert!(last_start < first_end, "checks did not overlap: {spans:?}");
    // The runtime command had finished before the first check started.
    let first_start = checks.iter().map(|s| s.1).fold(f64::MAX, f64::min);
    assert!(
        build[0].2 <= first_start,
        "a check ran with the runtime command: {spans:?}"
    );
    // 8 × 1 s of checks in well under 8 s (generous for a loaded machine).
    assert!(wall < 5.0, "--jobs 8 took {wall:.2}s");
    // Lines in contract order: prerequisite, runtime command, then c0..c7.
    let lines: Vec<&str> = out.stdout.lines().collect();
    let pos = |s: &str| lines.iter().position(|l| l.contains(s)).unwrap();
    assert!(pos("prereq   ok   sh") < pos("runtime  ok   build"));
    assert!(pos("runtime  ok   build") < pos("check    ok   c0"));
    for w in ids.windows(2) {
        assert!(
            pos(&format!(" {} ", w[0])) < pos(&format!(" {} ", w[1])),
            "{lines:?}"
        );
    }
}

#[test]
fn jobs_reports_in_contract_order_whatever_finishes_first() {
    let repo = TestRepo::new();
    let mut slow = timed_check("slow", "1.2");
    slow["blocking"] = json!(false);
    repo.draft(
        "S",
        json!([
            slow,
            timed_check("quick", "0"),
            check("missing", "file_exists", json!({"path": "nope.txt"})),
        ]),
    );
    let j = repo.rails(&[
        "contract",
        "validate",
        "S",
        "--draft",
        "--no-note",
        "--json",
        "--jobs",
        "3",
    ]);
    j.code(1);
    let doc = j.json();
    let ids: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["slow", "quick", "missing"]);
    assert_eq!(doc["failed"], json!(["missing"]));
    assert_eq!(doc["warnings"], json!([]));
    // The quick one finished first, yet the slow one's line came first on stderr.
    let spans = spans(&repo.read("times.log"));
    let end = |id: &str| spans.iter().find(|s| s.0 == id).unwrap().2;
    assert!(end("quick") < end("slow"), "{spans:?}");
    let pos = |s: &str| j.stderr.find(s).unwrap();
    assert!(pos("ok   slow") < pos("ok   quick") && pos("ok   quick") < pos("FAIL missing"));
}

#[test]
fn without_jobs_the_checks_run_one_after_another() {
    let repo = TestRepo::new();
    let ids = ["a", "b", "c"];
    repo.draft(
        "S",
        json!(ids
            .iter()
            .map(|id| timed_check(id, "0.3"))
            .collect::<Vec<_>>()),
    );
    repo.rails(&["contract", "validate", "S", "--draft", "--no-note"])
        .ok();
    let spans = spans(&repo.read("times.log"));
    assert_eq!(spans.len(), 3);
    for w in spans.windows(2) {
        assert!(
            w[0].2 <= w[1].1,
            "checks overlapped without --jobs: {spans:?}"
        );
    }
    // Nonsense counts are usage errors that run nothing.
    for bad in ["0", "many", "100000"] {
        repo.rails(&[
            "contract",
            "validate",
            "S",
            "--draft",
            "--no-note",
            "--jobs",
            bad,
        ])
        .code(64)
        .stderr_has("--jobs");
    }
    assert_eq!(spans.len(), self::spans(&repo.read("times.log")).len());
}
