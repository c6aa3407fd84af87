//! `git rails verify`: the replay told per criterion, and `--rerun`, which runs each proven
//! check again in a clean temporary checkout (a GREEN that does not pass again, or a RED that
//! does not fail again, is caught), never touching the work tree or the index; and the CI
//! recipe of the guide (docs/src/ci.md) run against a bare remote and a fresh clone.

use crate::evidence::{accept, frozen, needs_file, prove};
use crate::harness::{check, TestRepo};
use crate::status_gate::forge_surfaced;
use serde_json::json;

fn head(repo: &TestRepo) -> String {
    repo.git(&["rev-parse", "HEAD"]).trim().to_string()
}

#[test]
fn verify_tells_every_criterion_and_passes_when_done() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    repo.git(&["commit", "-q", "-m", "work"]);
    let run = repo.rails(&["verify", "S"]);
    run.ok()
        .stdout_has(&format!("verify S v1 at {}", &head(&repo)[..7]))
        .stdout_has("evidence chain: every commit replays")
        .stdout_has("- c1 [surfaced] command_success")
        .stdout_has("    RED ")
        .stdout_has("failed on tree")
        .stdout_has("    GREEN ")
        .stdout_has("— PR comment with the run")
        .stdout_has("1 teardown receipt(s)")
        .stdout_has("verdict: done");
    let doc = repo.rails(&["verify", "S", "--json"]);
    doc.ok();
    let doc = doc.json();
    assert_eq!(doc["schema"], "rails-verify/v1");
    assert_eq!(doc["done"], true);
    assert_eq!(doc["rerun"], false);
    assert_eq!(doc["criteria"][0]["ok"], true);
}

#[test]
fn verify_reports_a_chain_that_does_not_replay() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    let bad = forge_surfaced(&repo);
    let junit = repo.path().join("verify.xml");
    repo.rails(&["verify", "S", "--junit", junit.to_str().unwrap()])
        .code(2)
        .stdout_has(&format!("does not replay at {}", &bad[..12]))
        .stdout_has("verdict: not done");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<testcase classname=\"S.chain\" name=\"evidence chain\">"),
        "{xml}"
    );
    assert!(
        xml.contains("<failure message=\"refs/rails/evidence/S does not replay at"),
        "{xml}"
    );
    assert!(xml.contains("name=\"c1\">"), "{xml}");
}

/// The attack: RED with an ignored runner hidden, GREEN once it is back (with --because, as
/// the tree did not change). The proof holds on this machine only; a clean checkout has no
/// runner, so --rerun catches it.
#[test]
fn rerun_catches_a_green_that_passes_only_on_this_machine() {
    let repo = frozen(json!([check(
        "c1",
        "command_success",
        json!({"command": "test -x node_modules/.bin/runner || { echo 'runner: not found' >&2; exit 1; }"})
    )]));
    repo.write(".gitignore", "node_modules/\n");
    repo.commit_all("ignore node_modules");
    accept(&repo, "red", "c1", &[]);
    repo.write("node_modules/.bin/runner", "#!/bin/sh\n");
    crate::harness::make_executable(&repo.path().join("node_modules/.bin/runner"));
    accept(
        &repo,
        "green",
        "c1",
        &["--because", "reinstalled the runner"],
    );
    accept(&repo, "surface", "c1", &["--note", "CI log"]);
    accept(&repo, "cleanup", "c1", &["--note", "nothing was started"]);
    repo.rails(&["gate", "S"]).ok();
    repo.rails(&["verify", "S"])
        .ok()
        .stdout_has("GREEN on the RED's tree, because: reinstalled the runner");
    let before = repo.git(&["status", "--porcelain", "--ignored"]);
    let run = repo.rails(&["verify", "S", "--rerun", "--json"]);
    assert_eq!(run.code, 2, "{run}");
    let doc = run.json();
    assert_eq!(doc["done"], false);
    let c1 = &doc["criteria"][0];
    assert_eq!(c1["ok"], false);
    assert_eq!(c1["because"], "reinstalled the runner");
    assert_eq!(c1["reruns"][0]["of"], "green");
    assert_eq!(c1["reruns"][0]["status"], "fail");
    assert_eq!(c1["reruns"][1]["of"], "red");
    assert_eq!(c1["reruns"][1]["ok"], true);
    repo.rails(&["verify", "S", "--rerun"])
        .code(2)
        .stdout_has("does not pass again on")
        .stdout_has("runner: not found")
        .stdout_has("verdict: not done");
    // Nothing of the user's changed, and no checkout is left behind.
    assert_eq!(repo.git(&["status", "--porcelain", "--ignored"]), before);
    assert_eq!(repo.git(&["worktree", "list"]).lines().count(), 1);
}

/// A RED that failed only because of something outside the tree does not fail again on its
/// tree in a clean checkout: --rerun reports it.
#[test]
fn rerun_catches_a_red_that_does_not_fail_again() {
    let repo = frozen(json!([check(
        "c1",
        "command_success",
        json!({"command": "test ! -f blocker.flag || { echo 'blocked' >&2; exit 1; }"})
    )]));
    repo.write(".gitignore", "*.flag\n");
    repo.commit_all("ignore flags");
    repo.write("blocker.flag", "\n");
    accept(&repo, "red", "c1", &[]);
    std::fs::remove_file(repo.path().join("blocker.flag")).unwrap();
    repo.write("change.txt", "a change\n");
    repo.git(&["add", "change.txt"]);
    accept(&repo, "green", "c1", &[]);
    accept(&repo, "surface", "c1", &["--note", "CI log"]);
    accept(&repo, "cleanup", "c1", &["--note", "nothing was started"]);
    repo.git(&["commit", "-q", "-m", "change"]);
    repo.rails(&["verify", "S"]).ok();
    repo.rails(&["verify", "S", "--rerun"])
        .code(2)
        .stdout_has("re-run GREEN on tree")
        .stdout_has("its RED does not fail again on its tree")
        .stdout_has("git rails evidence reopen S c1");
}

#[test]
fn rerun_passes_an_honest_proof_and_skips_runtime_checks() {
    let port = crate::harness::free_port();
    let repo = frozen(json!([
        needs_file("c1", "feature.txt"),
        check(
            "c2",
            "process_listening",
            json!({"port": port, "host": "127.0.0.1"})
        )
    ]));
    prove(&repo, "c1", "feature.txt");
    accept(&repo, "red", "c2", &[]);
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    accept(&repo, "green", "c2", &[]);
    accept(&repo, "surface", "c2", &["--note", "curl"]);
    accept(&repo, "cleanup", "c2", &["--note", "stopped the server"]);
    drop(listener);
    repo.git(&["commit", "-q", "-m", "work"]);
    let junit = repo.path().join("verify.xml");
    repo.rails(&["verify", "--rerun", "S", "--junit", junit.to_str().unwrap()])
        .ok()
        .stdout_has("re-run GREEN on tree")
        .stdout_has("re-run RED on tree")
        .stdout_has("not re-run: process_listening is a runtime check")
        .stdout_has("verdict: done");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"0\""), "{xml}");
}

/// The CI recipe (docs/src/ci.md; scripts/ci.sh's fetch and verify): a fresh clone fetches the
/// records and runs verify --rerun on the commit, against a bare remote.
#[test]
fn the_ci_recipe_runs_on_a_fresh_clone() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    repo.git(&["commit", "-q", "-m", "feature"]);
    let sha = head(&repo);
    let remote = tempfile::tempdir().unwrap();
    let url = remote.path().to_str().unwrap();
    repo.git(&["init", "-q", "--bare", url]);
    repo.git(&["remote", "add", "origin", url]);
    repo.git(&[
        "push",
        "-q",
        "origin",
        "HEAD:refs/heads/main",
        "refs/rails/*:refs/rails/*",
    ]);

    let ci_dir = tempfile::tempdir().unwrap();
    let ci_path = ci_dir.path().join("ci");
    repo.git(&["clone", "-q", url, ci_path.to_str().unwrap()]);
    let ci = TestRepo::at(&ci_path);
    ci.git(&[
        "fetch",
        "-q",
        "origin",
        "refs/rails/*:refs/rails/*",
        "refs/spar/*:refs/spar/*",
        "refs/notes/*:refs/notes/*",
    ]);
    ci.rails(&["verify", "S", "--rerun", "--commit", &sha])
        .ok()
        .stdout_has("verdict: done");
    // A hand-made "surfaced" pushed from elsewhere does not survive it.
    let repo2 = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo2, "red", "c1", &[]);
    forge_surfaced(&repo2);
    let sha2 = head(&repo2);
    let remote2 = tempfile::tempdir().unwrap();
    let url2 = remote2.path().to_str().unwrap();
    repo2.git(&["init", "-q", "--bare", url2]);
    repo2.git(&[
        "push",
        "-q",
        url2,
        "HEAD:refs/heads/main",
        "refs/rails/*:refs/rails/*",
    ]);
    let ci2_path = ci_dir.path().join("ci2");
    repo2.git(&["clone", "-q", url2, ci2_path.to_str().unwrap()]);
    let ci2 = TestRepo::at(&ci2_path);
    ci2.git(&["fetch", "-q", "origin", "refs/rails/*:refs/rails/*"]);
    ci2.rails(&["verify", "S", "--rerun", "--commit", &sha2])
        .code(2)
        .stdout_has("does not replay at");
}
