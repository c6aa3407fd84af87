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
    // As on a CI runner: no git identity, no global configuration.
    let ci_verify = |ci: &TestRepo, sha: &str| {
        let mut cmd = ci.command("git-rails");
        no_identity(&mut cmd);
        cmd.args(["verify", "S", "--rerun", "--commit", sha]);
        crate::harness::Run::of(&mut cmd)
    };
    ci_verify(&ci, &sha).ok().stdout_has("verdict: done");
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
    ci_verify(&ci2, &sha2)
        .code(2)
        .stdout_has("does not replay at");
}

/// The RED's record with its `base` taken out, in place of the tip commit that wrote it: a RED
/// as it was recorded before a RED named its base commit.
fn as_recorded_before_bases(repo: &TestRepo) {
    let ev = "refs/rails/evidence/S";
    let mut red: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", &format!("{ev}:cycles/c1/1/red.json")])).unwrap();
    assert!(red.get("base").is_some(), "{red}");
    red.as_object_mut().unwrap().remove("base");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("red.json");
    std::fs::write(&file, serde_json::to_string_pretty(&red).unwrap() + "\n").unwrap();
    let blob = repo
        .git(&["hash-object", "-w", file.to_str().unwrap()])
        .trim()
        .to_string();
    let mut st: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", &format!("{ev}:state.json")])).unwrap();
    red["id"] = json!(blob);
    st["criteria"]["c1"]["red"] = red;
    let state = tmp.path().join("state.json");
    std::fs::write(&state, serde_json::to_string_pretty(&st).unwrap() + "\n").unwrap();
    let state_blob = repo
        .git(&["hash-object", "-w", state.to_str().unwrap()])
        .trim()
        .to_string();
    let index = tmp.path().join("index");
    let env = [("GIT_INDEX_FILE", index.to_str().unwrap())];
    repo.git_env(&["read-tree", ev], &env).ok();
    for (blob, path) in [(&blob, "cycles/c1/1/red.json"), (&state_blob, "state.json")] {
        repo.git_env(
            &[
                "update-index",
                "--cacheinfo",
                &format!("100644,{blob},{path}"),
            ],
            &env,
        )
        .ok();
    }
    let tree = repo.git_env(&["write-tree"], &env);
    tree.ok();
    let msg = repo.git(&["log", "-1", "--format=%B", ev]);
    let parent = repo.git_run(&["rev-parse", "-q", "--verify", &format!("{ev}^")]);
    let mut args = vec!["commit-tree", tree.stdout.trim(), "-m", msg.trim()];
    let p = parent.stdout.trim().to_string();
    if parent.code == 0 {
        args.extend(["-p", p.as_str()]);
    }
    let commit = repo.git(&args);
    repo.git(&["update-ref", ev, commit.trim()]);
}

/// A contract whose check runs a frozen test (`tests/test_feature.sh`, in checkPaths) that
/// sources the implementation `impl.sh`, committed as a stub.
fn sourcing_repo(out: &std::path::Path) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("impl.sh", "feature() { return 1; }\n");
    repo.commit_all("the stub");
    // The new failing test: tracked (so frozen with the contract), not committed.
    repo.write(
        "tests/test_feature.sh",
        ". ./impl.sh\nfeature || { echo 'feature: not yet' >&2; exit 1; }\n",
    );
    repo.git(&["add", "tests/test_feature.sh"]);
    repo.draft_with(
        "S",
        json!([check(
            "c1",
            "command_success",
            json!({"command": format!("test ! -f .rails/marker || touch {}/ran-with-marker; sh tests/test_feature.sh", out.display())})
        )]),
        json!({"checkPaths": ["tests/*.sh"]}),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    repo
}

/// The attack: the implementation the pinned test sources carries a payload that no commit
/// holds, and RED is recorded on it. RED refuses it; the frozen test file alone may be
/// uncommitted, and `verify --rerun` rebuilds the RED from the base commit plus that frozen
/// file (never the recorded tree, whose `.rails/` held a marker the check looks for).
#[test]
fn red_is_recorded_on_reviewable_content_and_rerun_rebuilds_it_from_the_base() {
    let out = tempfile::tempdir().unwrap();
    let repo = sourcing_repo(out.path());
    let base = head(&repo);
    repo.write(
        "impl.sh",
        &format!(
            "touch {}/payload-ran\nfeature() {{ return 1; }}\n",
            out.path().display()
        ),
    );
    let refused = repo.rails(&["evidence", "red", "S", "c1"]);
    refused
        .code(65)
        .stderr_has("impl.sh differs from HEAD and is no test file the contract froze (checkPaths)")
        .stderr_has("git stash");
    assert_eq!(crate::evidence::tip(&repo), None);
    std::fs::remove_file(out.path().join("payload-ran")).unwrap();
    repo.git(&["checkout", "--", "impl.sh"]);

    // The frozen test uncommitted and a file of the tool folder: both may be there.
    repo.write(".rails/marker", "x\n");
    repo.git(&["add", "-f", ".rails/marker"]);
    let red = accept(&repo, "red", "c1", &[]);
    assert_eq!(red["record"]["base"], base.as_str());
    assert!(out.path().join("ran-with-marker").exists());
    std::fs::remove_file(out.path().join("ran-with-marker")).unwrap();
    repo.git(&["rm", "-q", "--cached", ".rails/marker"]);
    std::fs::remove_file(repo.path().join(".rails/marker")).unwrap();

    repo.write("impl.sh", "feature() { return 0; }\n");
    repo.commit_all("the feature and its test");
    accept(&repo, "green", "c1", &[]);
    accept(&repo, "surface", "c1", &["--note", "CI log"]);
    accept(&repo, "cleanup", "c1", &["--note", "nothing was started"]);

    let run = repo.rails(&["verify", "S", "--rerun", "--json"]);
    run.ok();
    let doc = run.json();
    assert_eq!(doc["verdict"], "done");
    let reruns = &doc["criteria"][0]["reruns"];
    assert_eq!(reruns[1]["of"], "red");
    assert_eq!(reruns[1]["result"], "holds");
    // Not the recorded tree (which held .rails/marker): the base's with the frozen test.
    assert_ne!(reruns[1]["tree"], red["record"]["tree"]);
    assert!(!out.path().join("ran-with-marker").exists());
    let want = repo
        .git(&[
            "rev-parse",
            &format!(
                "{}:tests/test_feature.sh",
                reruns[1]["tree"].as_str().unwrap()
            ),
        ])
        .trim()
        .to_string();
    assert_eq!(
        want,
        repo.git(&["rev-parse", "HEAD:tests/test_feature.sh"])
            .trim()
    );
    repo.rails(&["verify", "S"]).ok().stdout_has(&format!(
        "RED base {}: its tree differs from it in .rails/marker, tests/test_feature.sh",
        &base[..7]
    ));
    // The report shows it too.
    let page = repo.path().join("report.html");
    repo.rails(&["report", "S", "--html", page.to_str().unwrap()])
        .ok();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(&format!(
            "base {} · differs from it in: .rails/marker, tests/test_feature.sh",
            &base[..12]
        )),
        "{html}"
    );
}

/// A RED recorded before a RED named its base commit cannot be rebuilt from reviewable
/// content: "could not run" (exit 3), fixed by reopen and a new RED, never "not done".
#[test]
fn a_red_recorded_before_bases_could_not_run() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    as_recorded_before_bases(&repo);
    repo.write("feature.txt", "done\n");
    repo.commit_all("feature");
    accept(&repo, "green", "c1", &[]);
    accept(&repo, "surface", "c1", &["--note", "CI log"]);
    accept(&repo, "cleanup", "c1", &["--note", "nothing was started"]);
    repo.rails(&["gate", "S"]).ok();
    let junit = repo.path().join("verify.xml");
    repo.rails(&["verify", "S", "--rerun", "--junit", junit.to_str().unwrap()])
        .code(3)
        .stdout_has("- c1 [surfaced] command_success: COULD NOT RUN")
        .stdout_has("RED names no base commit")
        .stdout_has("verdict: could not run")
        .stdout_has("git rails evidence reopen S c1")
        .stdout_lacks("verdict: not done");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("errors=\"1\""), "{xml}");
    assert!(xml.contains("failures=\"0\""), "{xml}");
    assert!(xml.contains("<error message="), "{xml}");
    let doc = repo.rails(&["verify", "S", "--rerun", "--json"]);
    assert_eq!(doc.code, 3, "{doc}");
    let doc = doc.json();
    assert_eq!(doc["verdict"], "could not run");
    assert_eq!(doc["done"], false);
    assert_eq!(doc["missing"], json!([]));
    assert_eq!(doc["couldNotRun"][0]["criterion"], "c1");
    assert_eq!(doc["criteria"][0]["verdict"], "could not run");
    assert_eq!(doc["criteria"][0]["reruns"][1]["result"], "could-not-run");
    // Without --rerun nothing is re-run: done.
    repo.rails(&["verify", "S"]).ok();
}

/// The attack: a prerequisite's command is absent where verify runs. That is "could not run"
/// (exit 3), the prerequisite named, never "not done" and never advice to reopen.
#[test]
fn a_missing_prerequisite_is_could_not_run_not_a_broken_proof() {
    let tools = tempfile::tempdir().unwrap();
    let tool = tools.path().join("greeter");
    std::fs::write(&tool, "#!/bin/sh\ntest -f feature.txt\n").unwrap();
    crate::harness::make_executable(&tool);
    let repo = TestRepo::new();
    repo.draft_with(
        "S",
        json!([check(
            "c1",
            "command_success",
            json!({"command": "greeter"})
        )]),
        json!({"environmentPrerequisites": [{"name": "greeter", "check": "command_exists",
            "spec": {"command": "greeter"}, "reason": "the check runs it"}]}),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    let with_tool = |args: &[&str]| {
        let mut cmd = repo.command("git-rails");
        crate::harness::path_first(&mut cmd, &[tools.path()]);
        cmd.args(args);
        crate::harness::Run::of(&mut cmd)
    };
    with_tool(&["evidence", "red", "S", "c1"]).ok();
    repo.write("feature.txt", "done\n");
    repo.commit_all("feature");
    with_tool(&["evidence", "green", "S", "c1"]).ok();
    with_tool(&["evidence", "surface", "S", "c1", "--note", "CI"]).ok();
    with_tool(&[
        "evidence",
        "cleanup",
        "S",
        "c1",
        "--note",
        "nothing was started",
    ])
    .ok();
    with_tool(&["verify", "S", "--rerun"])
        .ok()
        .stdout_has("verdict: done");
    let run = repo.rails(&["verify", "S", "--rerun"]);
    run.code(3)
        .stdout_has("could not run")
        .stdout_has("prerequisite greeter (command_exists) is missing")
        .stdout_has("verdict: could not run")
        .stdout_lacks("reopen")
        .stdout_lacks("not done");
}

/// A CI runner's environment on top of the hermetic one: no git identity at all, none guessed
/// from the machine (`user.useConfigOnly`, as on a runner whose host name gives none), and no
/// global configuration (the hermetic environment's `GIT_CONFIG_GLOBAL=/dev/null`).
pub fn no_identity(cmd: &mut std::process::Command) {
    for k in [
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "EMAIL",
    ] {
        cmd.env_remove(k);
    }
    let n = if crate::harness::git3() { 2 } else { 0 };
    cmd.env("GIT_CONFIG_COUNT", (n + 1).to_string())
        .env(format!("GIT_CONFIG_KEY_{n}"), "user.useConfigOnly")
        .env(format!("GIT_CONFIG_VALUE_{n}"), "true");
}

/// The README's CI recipe on a runner with no git identity and no global configuration at
/// all (GitHub's runners have none): verify --rerun needs neither.
#[test]
fn the_ci_recipe_needs_no_identity_and_no_global_config() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    repo.git(&["commit", "-q", "-m", "feature"]);
    let sha = head(&repo);
    let remote = tempfile::tempdir().unwrap();
    let url = remote.path().to_str().unwrap();
    repo.git(&["init", "-q", "--bare", url]);
    repo.git(&[
        "push",
        "-q",
        url,
        "HEAD:refs/heads/main",
        "refs/rails/*:refs/rails/*",
    ]);
    let ci_dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let ci_path = ci_dir.path().join("ci");
    let bare = |dir: &std::path::Path, program: &str, args: &[&str]| {
        let mut cmd = crate::harness::hermetic_command(program, home.path(), dir);
        no_identity(&mut cmd);
        cmd.args(args);
        crate::harness::Run::of(&mut cmd)
    };
    bare(
        ci_dir.path(),
        "git",
        &["clone", "-q", url, ci_path.to_str().unwrap()],
    )
    .ok();
    bare(
        &ci_path,
        "git",
        &["fetch", "-q", "origin", "refs/rails/*:refs/rails/*"],
    )
    .ok();
    // The setting bites: git itself cannot commit here.
    let commit = bare(
        &ci_path,
        "git",
        &["commit", "-q", "--allow-empty", "-m", "x"],
    );
    assert_ne!(commit.code, 0, "{commit}");
    bare(
        &ci_path,
        crate::harness::bin("git-rails").to_str().unwrap(),
        &["verify", "S", "--rerun", "--commit", &sha],
    )
    .ok()
    .stdout_has("verdict: done");
}
