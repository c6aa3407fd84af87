//! What a proof is, each rule tried by its cheapest way around: RED means the check failed
//! (not its runner: 126, 127, signals, pytest's 4 and 5), regression guards (GREEN with no RED,
//! stale like any other, never enough alone), non-blocking criteria that never block, and what
//! counts as the change that made GREEN possible (never the tool folders alone, never a change
//! outside a one-file criterion's declared scope).

use crate::evidence::{accept, frozen, needs_file, prove, refuse, tip};
use crate::harness::{check, make_executable, path_first, Run, TestRepo};
use serde_json::json;

/// A fake `pytest` that exits with the code in `.pytest-exit` (untracked, ignored).
fn with_pytest(checks: serde_json::Value) -> (TestRepo, tempfile::TempDir) {
    let tools = tempfile::tempdir().unwrap();
    let pytest = tools.path().join("pytest");
    std::fs::write(
        &pytest,
        "#!/bin/sh\ncode=$(cat .pytest-exit 2>/dev/null || echo 0)\necho \"pytest exited $code\"\nexit $code\n",
    )
    .unwrap();
    make_executable(&pytest);
    let repo = TestRepo::new();
    repo.write(".gitignore", ".pytest-exit\n");
    repo.commit_all("ignore");
    repo.draft("S", checks);
    repo.rails(&["contract", "freeze", "S"]).ok();
    (repo, tools)
}

fn run_with(repo: &TestRepo, tools: &tempfile::TempDir, args: &[&str]) -> Run {
    let mut cmd = repo.command("git-rails");
    path_first(&mut cmd, &[tools.path()]);
    cmd.args(args);
    Run::of(&mut cmd)
}

/// The attack: pytest's 4 (a file or directory not found) and 5 (no tests collected) were
/// recorded as RED, and only 127 was refused. A collection error (2) is a genuine RED.
#[test]
fn red_refuses_exits_that_mean_the_runner_could_not_run() {
    let (repo, tools) = with_pytest(json!([check(
        "c1",
        "command_success",
        json!({"command": "pytest -q tests/test_feature.py"})
    )]));
    for (code, said) in [
        ("4", "pytest's exit 4 is a usage error"),
        ("5", "pytest's exit 5 means no tests were collected"),
        ("127", "exit 127 (command not found)"),
        ("126", "exit 126 (command not executable)"),
        ("137", "killed by signal 9"),
    ] {
        repo.write(".pytest-exit", code);
        let run = run_with(&repo, &tools, &["evidence", "red", "S", "c1"]);
        assert_eq!(run.code, 65, "exit {code}: {run}");
        assert!(run.stderr.contains(said), "exit {code}: {run}");
        assert!(run.stderr.contains("nothing was recorded"), "{run}");
        assert_eq!(tip(&repo), None, "exit {code} was recorded");
    }
    repo.write(".pytest-exit", "2");
    let run = run_with(&repo, &tools, &["evidence", "red", "S", "c1", "--json"]);
    run.ok();
    assert_eq!(run.json()["record"]["exitCode"], 2);
}

/// A check that says which failures count: only those are a RED.
#[test]
fn red_exit_codes_and_an_output_pattern_say_which_failures_count() {
    let (repo, tools) = with_pytest(json!([
        check(
            "c1",
            "command_success",
            json!({"command": "pytest -q", "redExitCodes": [1]})
        ),
        check(
            "c2",
            "command_success",
            json!({"command": "pytest -q", "redOutputPattern": "exited 3"})
        )
    ]));
    repo.write(".pytest-exit", "2");
    let run = run_with(&repo, &tools, &["evidence", "red", "S", "c1"]);
    assert_eq!(run.code, 65, "{run}");
    assert!(
        run.stderr
            .contains("exit 2 is not one of the failures its redExitCodes count (1)"),
        "{run}"
    );
    let run = run_with(&repo, &tools, &["evidence", "red", "S", "c2"]);
    assert_eq!(run.code, 65, "{run}");
    assert!(run.stderr.contains("does not show \"exited 3\""), "{run}");
    repo.write(".pytest-exit", "1");
    run_with(&repo, &tools, &["evidence", "red", "S", "c1"]).ok();
    repo.write(".pytest-exit", "3");
    run_with(&repo, &tools, &["evidence", "red", "S", "c2"]).ok();
    // A redExitCodes that could never count is refused when the contract is checked.
    repo.draft(
        "S",
        json!([check(
            "c1",
            "command_success",
            json!({"command": "pytest", "redExitCodes": [0]})
        )]),
    );
    repo.rails(&["contract", "freeze", "S", "--bump"])
        .code(65)
        .stderr_has("redExitCodes");
}

/// The attack: a "the suite stays green" criterion passes already, so RED is refused and the
/// gate asked for it forever. As a guard it is GREEN with no RED, stale like any other, and
/// re-run by verify; a guard alone never makes a sprint done.
#[test]
fn a_guard_is_green_without_red_and_goes_stale() {
    let guard = {
        let mut g = check(
            "suite",
            "command_success",
            json!({"command": "test -f README.md"}),
        );
        g["proof"] = json!("guard");
        g
    };
    let repo = frozen(json!([needs_file("c1", "feature.txt"), guard.clone()]));
    refuse(
        &repo,
        &["evidence", "red", "S", "suite"],
        &["is a regression guard", "git rails evidence green S suite"],
    );
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("- suite is pending: git rails evidence green S suite");
    let out = accept(&repo, "green", "suite", &[]);
    assert_eq!(out["status"], "green");
    refuse(
        &repo,
        &["evidence", "surface", "S", "suite", "--note", "x"],
        &["is a regression guard: it is finished once green"],
    );
    prove(&repo, "c1", "feature.txt");
    repo.commit_all("feature");
    let status = repo.rails(&["status", "S"]);
    status.ok().stdout_has("(guard: passes, no RED)");
    // feature.txt came after the guard's GREEN: stale like any other proof.
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("- suite is stale: feature.txt changed since it was proven: git rails evidence recheck S suite");
    accept(&repo, "recheck", "suite", &[]);
    repo.rails(&["gate", "S"]).ok();
    let run = repo.rails(&["verify", "S", "--rerun", "--json"]);
    run.ok();
    let doc = run.json();
    let suite = doc["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "suite")
        .unwrap()
        .clone();
    assert_eq!(suite["reruns"].as_array().unwrap().len(), 1, "{suite}");
    assert_eq!(suite["reruns"][0]["of"], "green");
    assert!(suite["account"][0]
        .as_str()
        .unwrap()
        .contains("regression guard"));

    // Guards alone never make a sprint done.
    let only = frozen(json!([guard]));
    accept(&only, "green", "suite", &[]);
    only.rails(&["gate", "S"])
        .code(2)
        .stdout_has("has no blocking criterion that is proven failing first");
}

/// The attack: a non-blocking criterion that already passes blocked the gate forever (its RED
/// is refused). It is reported, never blocking.
#[test]
fn a_non_blocking_criterion_never_blocks_the_gate() {
    let mut nb = check(
        "lint",
        "command_success",
        json!({"command": "test -f README.md"}),
    );
    nb["blocking"] = json!(false);
    let repo = frozen(json!([needs_file("c1", "feature.txt"), nb]));
    refuse(
        &repo,
        &["evidence", "red", "S", "lint"],
        &["lint already passes"],
    );
    prove(&repo, "c1", "feature.txt");
    repo.commit_all("feature");
    repo.rails(&["gate", "S"])
        .ok()
        .stdout_has("- lint (non-blocking, not blocking the gate) is pending");
    let j = repo.rails(&["status", "S", "--json"]).json();
    assert_eq!(j["done"], true);
    assert_eq!(j["notBlocking"][0]["criterion"], "lint");
    repo.rails(&["verify", "S", "--rerun"]).ok();
}

/// The attack: GREEN "after a change" satisfied by a change under `.rails/` (or `.jaekit/`,
/// `.plans/`), the folders that never make a proof stale.
#[test]
fn a_change_in_the_tool_folders_alone_does_not_make_green_possible() {
    let repo = frozen(json!([check(
        "c1",
        "command_success",
        json!({"command": "test ! -f blocker.flag || { echo blocked >&2; exit 1; }"})
    )]));
    repo.write(".gitignore", "*.flag\n");
    repo.commit_all("ignore flags");
    repo.write("blocker.flag", "\n");
    accept(&repo, "red", "c1", &[]);
    std::fs::remove_file(repo.path().join("blocker.flag")).unwrap();
    for dir in [".rails", ".jaekit", ".plans"] {
        repo.write(&format!("{dir}/note.md"), "a note\n");
        repo.git(&["add", "-f", &format!("{dir}/note.md")]);
        refuse(
            &repo,
            &["evidence", "green", "S", "c1"],
            &[
                "differs from its RED only in",
                &format!("{dir}/note.md"),
                "--because",
            ],
        );
    }
    repo.write("src.txt", "a real change\n");
    repo.git(&["add", "src.txt"]);
    accept(&repo, "green", "c1", &[]);
}

/// For a kind that reads one file, a change outside the criterion's declared scope is not what
/// made GREEN possible.
#[test]
fn a_change_outside_a_one_file_criterions_scope_does_not_make_green_possible() {
    let mut c1 = check(
        "c1",
        "regex_in_file",
        json!({"path": "out/result.txt", "pattern": "^ok$"}),
    );
    c1["scope"] = json!(["out/**"]);
    let repo = frozen(json!([c1]));
    repo.write(".gitignore", "out/\n");
    repo.commit_all("ignore out");
    accept(&repo, "red", "c1", &[]);
    repo.write("out/result.txt", "ok\n");
    repo.write("elsewhere.txt", "unrelated\n");
    repo.git(&["add", "elsewhere.txt"]);
    refuse(
        &repo,
        &["evidence", "green", "S", "c1"],
        &["outside the criterion's declared scope"],
    );
    accept(
        &repo,
        "green",
        "c1",
        &["--because", "the build wrote out/result.txt"],
    );
}

/// Making a proven criterion a guard changes what it proves: the gate asks for a reopen, and
/// the reopened cycle is a guard's (GREEN with no RED).
#[test]
fn a_criterion_made_a_guard_by_a_bump_is_reopened_as_one() {
    let repo = frozen(json!([
        needs_file("c1", "feature.txt"),
        needs_file("c2", "second.txt")
    ]));
    prove(&repo, "c1", "feature.txt");
    repo.commit_all("c1");
    prove(&repo, "c2", "second.txt");
    accept(&repo, "recheck", "c1", &[]);
    repo.commit_all("c2");
    repo.rails(&["gate", "S"]).ok();
    let mut g = needs_file("c2", "second.txt");
    g["proof"] = json!("guard");
    repo.draft("S", json!([needs_file("c1", "feature.txt"), g]));
    repo.rails(&["contract", "freeze", "S", "--bump"]).ok();
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("- c2 its check changed in v1.1 since it was proven");
    accept(&repo, "reopen", "c2", &["--note", "now a guard"]);
    assert_eq!(
        crate::evidence::state(&repo)["criteria"]["c2"]["proof"],
        "guard"
    );
    accept(&repo, "green", "c2", &[]);
    repo.rails(&["gate", "S"]).ok();
}
