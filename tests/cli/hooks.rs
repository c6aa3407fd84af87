//! Hooks through real pushes to local bare repositories and real commits.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::harness::{check, path_with_bins, zero_id, Run, TestRepo};
use serde_json::json;

/// A PATH without the built binaries but with the git the tests use (the first on PATH; a
/// system folder may hold an older one, too old for the git3 profile's repositories).
fn path_without_bins() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let git = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("git"))
        .find(|g| g.is_file())
        .unwrap();
    std::os::unix::fs::symlink(git, dir.path().join("git")).unwrap();
    let path = format!("{}:/usr/bin:/bin", dir.path().display());
    (dir, path)
}

/// PATH with the built binaries first, as after `cargo install`.
/// A repository with a bare remote `origin`, a frozen sprint S (one criterion, c1: done.txt
/// exists) bound to main.
pub(crate) fn repo_with_remote() -> (TestRepo, tempfile::TempDir) {
    let repo = TestRepo::new();
    let remote = tempfile::tempdir().unwrap();
    repo.git(&["init", "-q", "--bare", remote.path().to_str().unwrap()]);
    repo.git(&["remote", "add", "origin", remote.path().to_str().unwrap()]);
    repo.draft(
        "S",
        json!([check("c1", "file_exists", json!({"path": "done.txt"}))]),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    repo.rails(&["contract", "bind", "S"]).ok();
    (repo, remote)
}

pub(crate) fn prove(repo: &TestRepo) {
    repo.rails(&["evidence", "red", "c1"]).ok();
    repo.write("done.txt", "done\n");
    repo.commit_all("the work");
    repo.rails(&["evidence", "green", "c1"]).ok();
    repo.rails(&["evidence", "surface", "c1", "--note", "PR comment"])
        .ok();
    repo.rails(&["evidence", "cleanup", "c1", "--note", "nothing was started"])
        .ok();
}

fn git_with_path(repo: &TestRepo, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut e: Vec<(&str, &str)> = vec![];
    let path = path_with_bins();
    e.push(("PATH", &path));
    e.extend_from_slice(env);
    repo.git_env(args, &e)
}

pub(crate) fn remote_ref(remote: &Path, name: &str) -> Option<String> {
    let out = TestRepo::at(remote).git_run(&[
        "--git-dir",
        remote.to_str().unwrap(),
        "rev-parse",
        "--verify",
        "-q",
        name,
    ]);
    (out.code == 0).then(|| out.stdout.trim().to_string())
}

#[test]
fn install_is_idempotent_and_uninstall_restores_exactly() {
    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let original = "#!/bin/sh\n# the team's own pre-push\nexit 0\n";
    std::fs::write(hooks.join("pre-push"), original).unwrap();
    std::fs::set_permissions(
        hooks.join("pre-push"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();

    repo.rails(&["hooks", "install"])
        .ok()
        .stdout_has("kept as pre-push.local");
    let installed = std::fs::read_to_string(hooks.join("pre-push")).unwrap();
    assert!(installed.contains("# rails-spar hook: pre-push"));
    assert!(installed.contains("exec git-rails hook pre-push \"$@\""));
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push.local")).unwrap(),
        original
    );
    let mode = std::fs::metadata(hooks.join("commit-msg"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111);
    // Installing twice changes nothing.
    repo.rails(&["hooks", "install"])
        .ok()
        .stdout_has("already installed");
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push")).unwrap(),
        installed
    );
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push.local")).unwrap(),
        original
    );
    // The scripts in githooks/ are what is installed.
    let shipped =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("githooks/pre-push"))
            .unwrap();
    assert_eq!(installed, shipped);

    repo.rails(&["hooks", "uninstall"])
        .ok()
        .stdout_has("restored");
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push")).unwrap(),
        original
    );
    assert!(!hooks.join("pre-push.local").exists());
    assert!(!hooks.join("commit-msg").exists());
}

#[test]
fn a_push_of_unproven_work_is_refused_and_proven_work_goes_through() {
    let (repo, remote) = repo_with_remote();
    repo.rails(&["hooks", "install"]).ok();
    repo.write("x.txt", "x\n");
    repo.commit_all("work without proof");
    let out = git_with_path(&repo, &["push", "origin", "main"], &[]);
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("push of refs/heads/main refused: S v1 is not done"),
        "{out}"
    );
    assert!(
        out.stderr
            .contains("c1 is pending: git rails evidence red S c1"),
        "{out}"
    );
    assert_eq!(remote_ref(remote.path(), "refs/heads/main"), None);

    prove(&repo);
    let out = git_with_path(&repo, &["push", "origin", "main"], &[]);
    out.ok();
    assert!(out.stderr.contains("S v1 is done at"), "{out}");
    assert_eq!(
        remote_ref(remote.path(), "refs/heads/main"),
        Some(repo.git(&["rev-parse", "HEAD"]).trim().to_string())
    );

    // A later commit that touches the proven file makes the criterion stale: refused again.
    repo.write("done.txt", "changed\n");
    repo.commit_all("change the subject");
    let out = git_with_path(&repo, &["push", "origin", "main"], &[]);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("is stale: done.txt changed"), "{out}");
    assert!(
        out.stderr.contains("git rails evidence recheck S c1"),
        "{out}"
    );
}

#[test]
fn the_gate_judges_the_pushed_commit_not_the_work_tree() {
    let (repo, remote) = repo_with_remote();
    repo.rails(&["hooks", "install"]).ok();
    prove(&repo);
    let proven = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.write("done.txt", "changed\n");
    repo.commit_all("stale");
    // Pushing the proven commit passes even though HEAD is stale.
    git_with_path(
        &repo,
        &["push", "origin", &format!("{proven}:refs/heads/main")],
        &[],
    )
    .ok();
    assert_eq!(remote_ref(remote.path(), "refs/heads/main"), Some(proven));
}

#[test]
fn record_refs_and_deletions_are_never_blocked_and_rails_skip_skips() {
    let (repo, remote) = repo_with_remote();
    repo.rails(&["hooks", "install"]).ok();
    repo.rails(&["evidence", "red", "c1"]).ok();
    git_with_path(
        &repo,
        &[
            "push",
            "origin",
            "refs/rails/contracts/S",
            "refs/rails/evidence/S",
        ],
        &[],
    )
    .ok();
    assert!(remote_ref(remote.path(), "refs/rails/evidence/S").is_some());

    let out = git_with_path(&repo, &["push", "origin", "main"], &[("RAILS_SKIP", "1")]);
    out.ok();
    assert!(
        out.stderr
            .contains("RAILS_SKIP=1: the rails checks of pre-push are skipped"),
        "{out}"
    );
    // git itself refuses to delete the remote's current branch (its HEAD is main when git
    // makes `main` the first branch, as Git 3.0 does), so the remote's HEAD moves away first.
    repo.git(&[
        "--git-dir",
        remote.path().to_str().unwrap(),
        "symbolic-ref",
        "HEAD",
        "refs/heads/elsewhere",
    ]);
    git_with_path(&repo, &["push", "origin", ":main"], &[]).ok();
    assert_eq!(remote_ref(remote.path(), "refs/heads/main"), None);
}

#[test]
fn the_sprint_comes_from_trailers_when_the_branch_has_none() {
    let (repo, remote) = repo_with_remote();
    repo.git(&["config", "--unset", "branch.main.railsSprint"]);
    repo.rails(&["hooks", "install"]).ok();
    repo.git(&["checkout", "-q", "-b", "topic"]);
    // No sprint anywhere: passes with a line saying so.
    repo.git(&["commit", "-q", "--allow-empty", "-m", "plain"]);
    let out = git_with_path(&repo, &["push", "origin", "topic"], &[]);
    out.ok();
    assert!(
        out.stderr
            .contains("its new commits name no sprint; nothing to gate"),
        "{out}"
    );
    // rails.requireSprint turns that into a refusal.
    repo.git(&["commit", "-q", "--allow-empty", "-m", "plain 2"]);
    let out = git_with_path(
        &repo,
        &["-c", "rails.requireSprint=true", "push", "origin", "topic"],
        &[],
    );
    assert_ne!(out.code, 0, "{out}");
    // A Rails-Sprint trailer in a pushed commit names the sprint.
    repo.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "--no-verify",
        "-m",
        "feat\n\nRails-Sprint: S",
    ]);
    repo.git(&["commit", "-q", "--allow-empty", "-m", "after"]);
    let out = git_with_path(&repo, &["push", "origin", "topic"], &[]);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("S v1 is not done"), "{out}");
    let _ = remote;
}

#[test]
fn a_chained_hook_runs_first_with_the_same_args_and_stdin_and_its_failure_blocks() {
    let (repo, remote) = repo_with_remote();
    let hooks = repo.path().join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let log = repo.path().join("chained.log");
    let script = format!(
        "#!/bin/sh\necho \"args: $*\" > {log}\ncat >> {log}\nexit ${{CHAINED_EXIT:-0}}\n",
        log = log.display()
    );
    std::fs::write(hooks.join("pre-push"), script).unwrap();
    std::fs::set_permissions(
        hooks.join("pre-push"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    repo.rails(&["hooks", "install"]).ok();
    prove(&repo);
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let out = git_with_path(&repo, &["push", "origin", "main"], &[("CHAINED_EXIT", "7")]);
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("pre-push.local (the hook that was here before ours) failed with exit 7"),
        "{out}"
    );
    assert_eq!(remote_ref(remote.path(), "refs/heads/main"), None);
    let seen = std::fs::read_to_string(&log).unwrap();
    assert!(
        seen.starts_with(&format!("args: origin {}\n", remote.path().display())),
        "{seen}"
    );
    assert!(
        seen.contains(&format!(
            "refs/heads/main {head} refs/heads/main {}",
            zero_id()
        )),
        "{seen}"
    );
    git_with_path(&repo, &["push", "origin", "main"], &[]).ok();
    // RAILS_SKIP skips ours, not the team's own hook.
    repo.git(&["commit", "-q", "--allow-empty", "-m", "more"]);
    let out = git_with_path(
        &repo,
        &["push", "origin", "main"],
        &[("RAILS_SKIP", "1"), ("CHAINED_EXIT", "3")],
    );
    assert_ne!(out.code, 0, "{out}");
}

#[test]
fn core_hooks_path_is_where_hooks_go() {
    let (repo, remote) = repo_with_remote();
    assert!(!repo.path().join(".git/hooks/pre-push").exists());
    repo.git(&["config", "core.hooksPath", ".githooks"]);
    repo.rails(&["hooks", "install"])
        .ok()
        .stdout_has(".githooks/pre-push");
    assert!(repo.path().join(".githooks/pre-push").exists());
    let st = repo.rails(&["hooks", "status", "--json"]).json();
    assert_eq!(st["coreHooksPath"], true);
    assert_eq!(st["hooks"][0]["state"], "installed");
    // The commit-msg hook from .githooks puts the bound sprint into the commit.
    git_with_path(&repo, &["commit", "-q", "--allow-empty", "-m", "work"], &[]).ok();
    assert!(repo
        .git(&["log", "-1", "--format=%B"])
        .contains("Rails-Sprint: S"));
    let out = git_with_path(&repo, &["push", "origin", "main"], &[]);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("S v1 is not done"), "{out}");
    assert_eq!(remote_ref(remote.path(), "refs/heads/main"), None);
}

#[test]
fn linked_worktrees_share_the_hooks() {
    let (repo, remote) = repo_with_remote();
    repo.rails(&["hooks", "install"]).ok();
    // A linked worktree shares the common dir's hooks: its unproven push is refused too.
    let wt = tempfile::tempdir().unwrap();
    let wt_path = wt.path().join("wt");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "side",
        wt_path.to_str().unwrap(),
    ]);
    repo.git(&["config", "branch.side.railsSprint", "S"]);
    repo.git_in(
        &wt_path,
        &["commit", "-q", "--allow-empty", "-m", "side work"],
    )
    .ok();
    let out = repo.git_in(&wt_path, &["push", "origin", "side"]);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("S v1 is not done"), "{out}");
    assert_eq!(remote_ref(remote.path(), "refs/heads/side"), None);
}

#[test]
fn a_missing_binary_fails_closed_and_status_finds_problems() {
    let (repo, remote) = repo_with_remote();
    repo.rails(&["hooks", "install"]).ok();
    // PATH without git-rails: the hook says so and refuses.
    let (_git, no_bins) = path_without_bins();
    let out = repo.git_env(&["push", "origin", "main"], &[("PATH", &no_bins)]);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("git-rails is not on PATH"), "{out}");
    // The install the README gives, not a bare `cargo install` (no man pages, no extras).
    assert!(
        out.stderr
            .contains("Install it (sh scripts/install.sh in a rails-spar checkout)"),
        "{out}"
    );
    assert_eq!(remote_ref(remote.path(), "refs/heads/main"), None);

    let hook = repo.path().join(".git/hooks/commit-msg");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o644)).unwrap();
    let st = repo.rails_env(&["hooks", "status"], &[("PATH", &no_bins)]);
    st.code(1)
        .stdout_has("commit-msg   not-executable")
        .stdout_has("lost its run bit")
        .stdout_has("git-rails is not on PATH");
    std::fs::remove_file(repo.path().join(".git/hooks/pre-push")).unwrap();
    repo.rails(&["hooks", "status"])
        .code(1)
        .stdout_has("pre-push     missing, gate does NOT run");
    repo.rails(&["hooks", "install"]).ok();
    repo.rails(&["hooks", "status"])
        .ok()
        .stdout_has("pre-push     installed, gate runs through git")
        .stdout_lacks("problem:");
}

#[test]
fn spar_require_gate_runs_the_spar_gate_of_the_branch() {
    let (repo, remote) = repo_with_remote();
    repo.rails(&["hooks", "install"]).ok();
    prove(&repo);
    // No review round yet: refused. (`git -c` reaches the hook through GIT_CONFIG_PARAMETERS.)
    let out = git_with_path(
        &repo,
        &["-c", "spar.requireGate=true", "push", "origin", "main"],
        &[],
    );
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr.contains("series main has no review round"),
        "{out}"
    );

    // A round with one defect: the push is refused with the gate's reasons.
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let tools = tempfile::tempdir().unwrap();
    let script = tools.path().join("review.sh");
    let angles: Vec<serde_json::Value> = [
        "correctness",
        "regression",
        "checks",
        "contract",
        "security",
    ]
    .iter()
    .map(|a| serde_json::json!({"angle": a, "result": "looked"}))
    .collect();
    let result = serde_json::json!({
        "reviewed_head": head,
        "verdict": "blocking_findings",
        "angles_checked": angles,
        "angles_unchecked": [],
        "findings": [{
            "id": "1", "proposed_class": "defect", "angle": "correctness",
            "location": "done.txt:1", "claim": "wrong text", "failure_scenario": "a reader is misled",
            "evidence": "line 1", "link_kind": "none", "link": "", "introduced_by_change": "yes",
            "regression": "yes", "check_impact": "none", "confidence": "high", "smallest_fix": ""
        }],
        "limits": ""
    });
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncat <<'JSON'\n{result}\nJSON\n"),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = tools.path().join("spar.toml");
    std::fs::write(
        &config,
        format!(
            "[[reviewers]]\nname = \"lint\"\npreset = \"command\"\nargv = [\"{}\"]\n",
            script.display()
        ),
    )
    .unwrap();
    let spar_env = [
        ("SPAR_CONFIG", config.to_str().unwrap()),
        ("XDG_CONFIG_HOME", tools.path().to_str().unwrap()),
    ];
    let base = repo
        .git(&["rev-list", "--max-parents=0", "HEAD"])
        .trim()
        .to_string();
    repo.spar_env(&["run", "--base", &base], &spar_env).ok();
    let out = git_with_path(
        &repo,
        &["-c", "spar.requireGate=true", "push", "origin", "main"],
        &[],
    );
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr.contains("the spar gate of main is blocked"),
        "{out}"
    );
    assert!(out.stderr.contains("lint-F1"), "{out}");
    assert_eq!(remote_ref(remote.path(), "refs/heads/main"), None);

    // Triaged: the push goes through.
    repo.spar(&[
        "triage",
        "main",
        "code-1",
        "lint-F1",
        "rejected",
        "--evidence",
        "the text is right",
    ])
    .ok();
    git_with_path(
        &repo,
        &["-c", "spar.requireGate=true", "push", "origin", "main"],
        &[],
    )
    .ok();
    assert_eq!(remote_ref(remote.path(), "refs/heads/main"), Some(head));

    // A commit after the review moved the change: refused until it is reviewed again.
    repo.git(&["commit", "-q", "--allow-empty", "-m", "after review"]);
    let out = git_with_path(
        &repo,
        &["-c", "spar.requireGate=true", "push", "origin", "main"],
        &[],
    );
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr.contains("the spar gate of main is blocked"),
        "{out}"
    );
}

#[test]
fn pre_push_stdin_is_parsed_exactly() {
    let (repo, _remote) = repo_with_remote();
    let run = |input: &str| {
        let mut cmd = repo.command("git-rails");
        cmd.args(["hook", "pre-push", "origin", "url"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    // An up-to-date push gives empty stdin: nothing to judge.
    assert!(run("").status.success());
    repo.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "work\n\nRails-Sprint: S",
    ]);
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let bad = run(&format!("refs/heads/main {head} refs/heads/main\n"));
    assert_eq!(bad.status.code(), Some(65));
    let short_zero = run(&format!(
        "refs/heads/main {head} refs/heads/main {}\n",
        "0".repeat(39)
    ));
    assert_eq!(short_zero.status.code(), Some(65));
    // A deletion (the zero id of the repository's format as local oid) is never blocked.
    let del = run(&format!("(delete) {} refs/heads/main {head}\n", zero_id()));
    assert!(
        del.status.success(),
        "{}",
        String::from_utf8_lossy(&del.stderr)
    );
    // Ids of the other object format are not git's protocol for this repository.
    let other = if zero_id().len() == 40 { 64 } else { 40 };
    let foreign = run(&format!(
        "(delete) {} refs/heads/x {}\n",
        "0".repeat(other),
        "a".repeat(other)
    ));
    assert_eq!(
        foreign.status.code(),
        Some(65),
        "{}",
        String::from_utf8_lossy(&foreign.stderr)
    );
    let unproven = run(&format!(
        "refs/heads/main {head} refs/heads/main {}\n",
        zero_id()
    ));
    assert_eq!(unproven.status.code(), Some(2));
}

#[test]
fn commit_msg_checks_sprint_and_done_trailers() {
    let (repo, _remote) = repo_with_remote();
    repo.rails(&["hooks", "install"]).ok();
    let commit =
        |msg: &str| git_with_path(&repo, &["commit", "-q", "--allow-empty", "-m", msg], &[]);
    commit("plain message").ok();
    let out = commit("feat\n\nRails-Sprint: NOPE-1");
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("Rails-Sprint: NOPE-1 names no frozen contract"),
        "{out}"
    );
    commit("feat\n\nRails-Sprint: S").ok();
    let out = commit("finish\n\nRails-Done: S");
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr.contains("Rails-Done: S claims completion"),
        "{out}"
    );
    assert!(out.stderr.contains("git rails evidence red S c1"), "{out}");
    prove(&repo);
    commit("finish\n\nRails-Done: S").ok();
    // The tree being committed is judged: staging a change to the proven file makes it stale.
    repo.write("done.txt", "edited\n");
    repo.git(&["add", "done.txt"]);
    let out = git_with_path(&repo, &["commit", "-q", "-m", "edit\n\nRails-Done: S"], &[]);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("stale"), "{out}");
}

#[test]
fn pre_receive_refuses_rewriting_and_deleting_records() {
    let (repo, remote) = repo_with_remote();
    let server = TestRepo::at(remote.path());
    server
        .rails(&["hooks", "install"])
        .ok()
        .stdout_has("pre-receive");
    let env = [("PATH", path_with_bins())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    repo.git_env(&["push", "origin", "main", "refs/rails/contracts/S"], &env)
        .ok();
    // A fast-forward of a record is fine.
    repo.draft(
        "S",
        json!([check(
            "c1",
            "file_exists",
            json!({"path": "done.txt", "type": "file"})
        )]),
    );
    repo.rails(&["contract", "freeze", "S", "--bump"]).ok();
    repo.git_env(&["push", "origin", "refs/rails/contracts/S"], &env)
        .ok();
    let tip = remote_ref(remote.path(), "refs/rails/contracts/S").unwrap();
    // A rewrite (force-push) is refused.
    let tree = repo.git(&["rev-parse", "refs/rails/contracts/S^{tree}"]);
    let fake = repo.git(&["commit-tree", "-m", "rewritten", tree.trim()]);
    repo.git(&["update-ref", "refs/rails/contracts/S", fake.trim()]);
    let out = repo.git_env(&["push", "-f", "origin", "refs/rails/contracts/S"], &env);
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("is not a fast-forward: a frozen record is never rewritten"),
        "{out}"
    );
    // A deletion is refused.
    let out = repo.git_env(&["push", "origin", ":refs/rails/contracts/S"], &env);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("records are never deleted"), "{out}");
    assert_eq!(
        remote_ref(remote.path(), "refs/rails/contracts/S"),
        Some(tip)
    );
}

#[test]
fn pre_receive_gate_judges_the_pushed_objects() {
    let (repo, remote) = repo_with_remote();
    let server = TestRepo::at(remote.path());
    server.rails(&["hooks", "install"]).ok();
    server.git(&["config", "rails.receiveGate", "true"]);
    let env = [("PATH", path_with_bins())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    repo.git_env(&["push", "origin", "refs/rails/contracts/S"], &env)
        .ok();
    prove(&repo);
    repo.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "ship\n\nRails-Sprint: S",
    ]);
    // The branch alone: the server has no evidence, so the update is refused.
    let out = repo.git_env(&["push", "--no-verify", "origin", "main"], &env);
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("update of refs/heads/main refused: S v1 is not done"),
        "{out}"
    );
    // With the evidence in the same push, the gate reads it from the quarantined objects.
    repo.git_env(
        &[
            "push",
            "--no-verify",
            "origin",
            "main",
            "refs/rails/evidence/S",
        ],
        &env,
    )
    .ok();
    assert!(remote_ref(remote.path(), "refs/heads/main").is_some());
}

#[test]
fn agent_stop_exit_codes() {
    let (repo, _remote) = repo_with_remote();
    let run = |input: &str| {
        let mut child = repo
            .command("git-rails")
            .args(["hook", "agent-stop"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let event = r#"{"session_id":"abc","transcript_path":"/tmp/t.jsonl","hook_event_name":"Stop","stop_hook_active":false}"#;
    let (code, err) = run(event);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("still has unproven criteria"), "{err}");
    assert!(err.contains("git rails evidence red S c1"), "{err}");
    // A malformed event cannot be judged: refused as Claude Code understands it (exit 2).
    let (code, err) = run("not json");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("stdin is not a hook event"), "{err}");
    prove(&repo);
    assert_eq!(run(event).0, 0);
    repo.git(&["config", "--unset", "branch.main.railsSprint"]);
    assert_eq!(run(event).0, 0);
}

/// The message of a commit.
fn message_of(repo: &TestRepo, rev: &str) -> String {
    repo.git(&["log", "-1", "--format=%B", rev])
}

#[test]
fn a_bound_branch_puts_its_sprint_in_each_commit_once() {
    let (repo, _remote) = repo_with_remote();
    repo.rails(&["hooks", "install"]).ok();
    let commit = |args: &[&str]| {
        let mut a = vec!["commit", "-q", "--allow-empty"];
        a.extend_from_slice(args);
        git_with_path(&repo, &a, &[])
    };
    commit(&["-m", "work"]).ok();
    let m = message_of(&repo, "HEAD");
    assert_eq!(m.matches("Rails-Sprint: S").count(), 1, "{m}");
    // git reads it as a trailer, not as a line of the body.
    let t = repo.git(&[
        "log",
        "-1",
        "--format=%(trailers:key=Rails-Sprint,valueonly)",
    ]);
    assert_eq!(t.trim(), "S");
    // An amend, or a message that already has the trailer, keeps exactly one.
    commit(&["--amend", "--no-edit"]).ok();
    assert_eq!(
        message_of(&repo, "HEAD").matches("Rails-Sprint:").count(),
        1
    );
    commit(&["-m", "typed\n\nRails-Sprint: S"]).ok();
    assert_eq!(
        message_of(&repo, "HEAD").matches("Rails-Sprint:").count(),
        1
    );
    // A trailer the author wrote is respected: another frozen sprint is not joined by S.
    repo.draft(
        "T",
        json!([check("c1", "file_exists", json!({"path": "t.txt"}))]),
    );
    repo.rails(&["contract", "freeze", "T"]).ok();
    commit(&["-m", "other\n\nRails-Sprint: T"]).ok();
    let m = message_of(&repo, "HEAD");
    assert!(
        m.contains("Rails-Sprint: T") && !m.contains("Rails-Sprint: S"),
        "{m}"
    );
    // A message of comments only is still aborted by git (no trailer keeps it alive).
    let out = commit(&["--cleanup=strip", "-m", "# only a comment"]);
    assert_ne!(out.code, 0, "{out}");
    // An unbound branch gets nothing.
    repo.git(&["checkout", "-q", "-b", "loose"]);
    commit(&["-m", "loose work"]).ok();
    assert!(!message_of(&repo, "HEAD").contains("Rails-Sprint"));
}

#[test]
fn a_push_to_a_protected_ref_is_judged_by_its_commits_whatever_the_branch_is_called() {
    let (repo, remote) = repo_with_remote();
    let env = [("PATH", path_with_bins())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // The server has main and the contract before any rule is set.
    repo.git_env(
        &[
            "push",
            "--no-verify",
            "origin",
            "main",
            "refs/rails/contracts/S",
        ],
        &env,
    )
    .ok();
    let main_before = remote_ref(remote.path(), "refs/heads/main");
    let server = TestRepo::at(remote.path());
    server.rails(&["hooks", "install"]).ok();
    repo.rails(&["hooks", "install"]).ok();
    for r in [&server, &repo] {
        r.git(&["config", "rails.protect", "refs/heads/main"]);
        r.git(&["config", "rails.requireSprint", "true"]);
    }
    // The attack: an unbound branch, a commit without a trailer, pushed onto main. (Bound
    // here, main's binding would judge it too: `side_doors` tries that; this is the push that
    // names no sprint from anywhere.)
    repo.git(&["config", "--unset", "branch.main.railsSprint"]);
    repo.git(&["checkout", "-q", "-b", "tmp"]);
    git_with_path(
        &repo,
        &["commit", "-q", "--allow-empty", "-m", "sneak"],
        &[],
    )
    .ok();
    let out = git_with_path(&repo, &["push", "origin", "tmp:main"], &[]);
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("refs/heads/tmp to refs/heads/main refused: its new commits name no sprint"),
        "{out}"
    );
    // The server decides alike when the client's hook is skipped.
    let out = git_with_path(&repo, &["push", "--no-verify", "origin", "tmp:main"], &[]);
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("update of refs/heads/main refused: its new commits name no sprint"),
        "{out}"
    );
    assert_eq!(remote_ref(remote.path(), "refs/heads/main"), main_before);
    // An unprotected ref is not judged, on either side.
    let out = git_with_path(&repo, &["push", "origin", "tmp:feature"], &[]);
    out.ok();
    assert!(
        out.stderr
            .contains("refs/heads/feature is not protected (rails.protect); not gated"),
        "{out}"
    );
    // A commit naming the unproven sprint: gated by that sprint, and parking it on an
    // unprotected branch first does not hide it from the update of main.
    git_with_path(
        &repo,
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "ship\n\nRails-Sprint: S",
        ],
        &[],
    )
    .ok();
    git_with_path(
        &repo,
        &["push", "--no-verify", "origin", "tmp:feature"],
        &[],
    )
    .ok();
    let out = git_with_path(&repo, &["push", "origin", "tmp:main"], &[]);
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("refs/heads/tmp to refs/heads/main refused: S v1 is not done"),
        "{out}"
    );
    let out = git_with_path(&repo, &["push", "--no-verify", "origin", "tmp:main"], &[]);
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("update of refs/heads/main refused: S v1 is not done"),
        "{out}"
    );
    assert_eq!(remote_ref(remote.path(), "refs/heads/main"), main_before);
    // A clone finds the same sprint from the commits alone (no binding there).
    let clone = tempfile::tempdir().unwrap();
    let clone_path = clone.path().join("c");
    repo.git(&[
        "clone",
        "-q",
        remote.path().to_str().unwrap(),
        clone_path.to_str().unwrap(),
    ]);
    let cl = TestRepo::at(&clone_path);
    cl.git(&["fetch", "-q", "origin", "refs/rails/*:refs/rails/*"]);
    cl.rails(&["gate", "S", "--commit", "origin/feature"])
        .code(2)
        .stdout_has("gate blocked: S v1");
    let t = cl.git(&[
        "log",
        "-1",
        "--format=%(trailers:key=Rails-Sprint,valueonly)",
        "origin/feature",
    ]);
    assert_eq!(t.trim(), "S");
    // A bad pattern is refused, not read as "protect nothing".
    repo.git(&["config", "rails.protect", "refs/heads/[main"]);
    let out = git_with_path(&repo, &["push", "origin", "tmp:main"], &[]);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("rails.protect"), "{out}");
}

/// Runs `git rails hook agent-stop` from `dir` with `event` on stdin: (exit code, stderr).
pub fn agent_hook(repo: &TestRepo, dir: &Path, event: &serde_json::Value) -> (i32, String) {
    use std::io::Write;
    let mut cmd = repo.command("git-rails");
    let mut child = cmd
        .args(["hook", "agent-stop"])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_agent_session_keeps_its_sprint_whatever_branch_head_is_on() {
    let (repo, _remote) = repo_with_remote();
    let cwd = repo.path().display().to_string();
    let stop = |session: &str| {
        json!({"session_id": session, "cwd": cwd, "hook_event_name": "Stop",
               "stop_hook_active": false, "transcript_path": "/tmp/t.jsonl"})
    };
    // Run from elsewhere: the event's cwd names the repository.
    let elsewhere = repo.home.path().to_path_buf();
    let (code, err) = agent_hook(&repo, &elsewhere, &stop("s1"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("S v1 still has unproven criteria"), "{err}");
    // Slipping away from the binding does not release the session.
    repo.git(&["checkout", "-q", "--detach"]);
    assert_eq!(agent_hook(&repo, &elsewhere, &stop("s1")).0, 2);
    repo.git(&["checkout", "-q", "-b", "other"]);
    assert_eq!(agent_hook(&repo, &elsewhere, &stop("s1")).0, 2);
    repo.git(&["config", "--unset", "branch.main.railsSprint"]);
    let (code, err) = agent_hook(&repo, &elsewhere, &stop("s1"));
    assert_eq!(code, 2, "{err}");
    // A session that was never blocked has nothing to keep: nothing names a sprint here.
    let (code, err) = agent_hook(&repo, &elsewhere, &stop("s2"));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("nothing to gate"), "{err}");
    // As a PreToolUse hook the call is blocked while unproven.
    let pre = json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "PreToolUse",
                     "tool_name": "Bash", "tool_input": {"command": "gh pr merge"}});
    let (code, err) = agent_hook(&repo, &elsewhere, &pre);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("before you use this tool"), "{err}");
    // Proven: the session is released.
    repo.git(&["checkout", "-q", "main"]);
    repo.rails(&["contract", "bind", "S"]).ok();
    prove(&repo);
    let (code, err) = agent_hook(&repo, &elsewhere, &stop("s1"));
    assert_eq!(code, 0, "{err}");
    assert!(
        repo.git_run(&["rev-parse", "-q", "--verify", "refs/rails/agent-stops/S"])
            .code
            != 0,
        "no turn was ended unproven"
    );
}

#[test]
fn a_stuck_agent_is_blocked_at_most_agent_stop_limit_times_then_its_turn_ends_on_record() {
    let (repo, _remote) = repo_with_remote();
    repo.git(&["config", "rails.agentStopLimit", "2"]);
    let dir = repo.path().to_path_buf();
    let stop = |active: bool| {
        json!({"session_id": "stuck-1", "cwd": dir.display().to_string(),
               "hook_event_name": "Stop", "stop_hook_active": active})
    };
    let mut codes = Vec::new();
    codes.push(agent_hook(&repo, &dir, &stop(false)).0);
    // Something moved (a tracked file changed): that Stop does not count toward the limit.
    repo.write("README.md", "changed\n");
    codes.push(agent_hook(&repo, &dir, &stop(true)).0);
    codes.push(agent_hook(&repo, &dir, &stop(true)).0);
    let (code, err) = agent_hook(&repo, &dir, &stop(true));
    codes.push(code);
    assert_eq!(codes, [2, 2, 2, 0], "{err}");
    assert!(err.contains("nothing moved in 2 blocked stops in a row (rails.agentStopLimit = 2); the turn ends here"), "{err}");
    assert!(
        err.contains("recorded: agent ended its turn with S unproven (session stuck-1)"),
        "{err}"
    );
    // The record shows in status and gate --json.
    repo.rails(&["status", "S"])
        .ok()
        .stdout_has("Warning: agent ended its turn with S unproven (session stuck-1)");
    let g = repo.rails(&["gate", "S", "--json"]);
    g.code(2);
    let turns = g.json()["agentTurnsEnded"].clone();
    assert_eq!(turns.as_array().unwrap().len(), 1, "{turns}");
    assert_eq!(
        turns[0]["message"],
        "agent ended its turn with S unproven (session stuck-1)"
    );
    // The next turn starts blocked again: the limit is per run of stops, not a way out.
    assert_eq!(agent_hook(&repo, &dir, &stop(false)).0, 2);
    // Without stop_hook_active every stop is blocked, however many.
    for _ in 0..4 {
        assert_eq!(agent_hook(&repo, &dir, &stop(false)).0, 2);
    }
}

#[test]
fn pre_receive_refuses_an_evidence_chain_that_does_not_replay() {
    let (repo, remote) = repo_with_remote();
    let server = TestRepo::at(remote.path());
    server.rails(&["hooks", "install"]).ok();
    let env = [("PATH", path_with_bins())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    repo.git_env(&["push", "origin", "refs/rails/contracts/S"], &env)
        .ok();
    repo.rails(&["evidence", "red", "c1"]).ok();
    let commit = forge_surfaced(&repo);
    let out = repo.git_env(&["push", "origin", "refs/rails/evidence/S"], &env);
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr.contains(&format!(
            "update of refs/rails/evidence/S refused: refs/rails/evidence/S does not replay at {}",
            &commit.trim()[..12]
        )),
        "{out}"
    );
    assert_eq!(remote_ref(remote.path(), "refs/rails/evidence/S"), None);
    // The chain without the forged commit lands.
    repo.git(&[
        "update-ref",
        "refs/rails/evidence/S",
        &format!("{}^", commit.trim()),
    ]);
    repo.git_env(&["push", "origin", "refs/rails/evidence/S"], &env)
        .ok();
}

/// A hand-made commit on `refs/rails/evidence/S` (plain git: hash-object, mktree,
/// commit-tree, update-ref) whose state.json says surfaced, with no record behind it; returns
/// its id.
fn forge_surfaced(repo: &TestRepo) -> String {
    let st = repo.git(&["show", "refs/rails/evidence/S:state.json"]);
    let forged = st.replace("\"status\": \"red\"", "\"status\": \"surfaced\"");
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("state.json");
    std::fs::write(&f, forged).unwrap();
    let blob = repo.git(&["hash-object", "-w", f.to_str().unwrap()]);
    let tree = repo.git(&["rev-parse", "refs/rails/evidence/S^{tree}"]);
    let listing = repo.git(&["ls-tree", tree.trim()]);
    let mut lines: Vec<String> = listing
        .lines()
        .filter(|l| !l.ends_with("\tstate.json"))
        .map(str::to_string)
        .collect();
    lines.push(format!("100644 blob {}\tstate.json", blob.trim()));
    let mktree = tmp.path().join("tree.txt");
    std::fs::write(&mktree, lines.join("\n") + "\n").unwrap();
    let out = repo
        .program("git")
        .arg("mktree")
        .stdin(std::fs::File::open(&mktree).unwrap())
        .output()
        .unwrap();
    let new_tree = String::from_utf8(out.stdout).unwrap();
    let commit = repo.git(&[
        "commit-tree",
        new_tree.trim(),
        "-p",
        "refs/rails/evidence/S",
        "-m",
        "evidence S surface c1\n\nRails-Sprint: S\nRails-Transition: surface c1",
    ]);
    repo.git(&["update-ref", "refs/rails/evidence/S", commit.trim()]);
    commit.trim().to_string()
}

/// Our pre-push stops a hand-made evidence record before it leaves the machine, also for a
/// remote that runs no hook of ours (a forge): the record ref alone, and under another local
/// name (`<commit>:refs/rails/evidence/S`), are refused naming the forged commit; the chain
/// without it is pushed.
#[test]
fn pre_push_refuses_an_evidence_chain_that_does_not_replay() {
    let (repo, remote) = repo_with_remote();
    repo.rails(&["hooks", "install"]).ok();
    let env = [("PATH", path_with_bins())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    repo.rails(&["evidence", "red", "c1"]).ok();
    let honest = repo.git(&["rev-parse", "refs/rails/evidence/S"]);
    let commit = forge_surfaced(&repo);
    let refused = format!(
        "git-rails: update of refs/rails/evidence/S refused: refs/rails/evidence/S does not replay at {}",
        &commit[..12]
    );
    for spec in [
        "refs/rails/evidence/S".to_string(),
        format!("{commit}:refs/rails/evidence/S"),
    ] {
        let out = repo.git_env(&["push", "origin", &spec], &env);
        assert_ne!(out.code, 0, "{out}");
        assert!(out.stderr.contains(&refused), "{out}");
        assert!(
            out.stderr.contains("failed to push some refs"),
            "git refused it because of the hook: {out}"
        );
        assert_eq!(remote_ref(remote.path(), "refs/rails/evidence/S"), None);
    }
    // The honest chain goes.
    repo.git_env(
        &[
            "push",
            "origin",
            &format!("{}:refs/rails/evidence/S", honest.trim()),
        ],
        &env,
    )
    .ok();
    assert_eq!(
        remote_ref(remote.path(), "refs/rails/evidence/S").as_deref(),
        Some(honest.trim())
    );
}
