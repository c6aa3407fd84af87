//! No side door (issue 35): each cheap way around the judging of a push, an agent's stop or a
//! CI run, tried from the real binaries, and refused.

use crate::harness::{path_with_bins, Run, TestRepo};
use crate::hooks::{prove, remote_ref, repo_with_remote};

/// git with the built binaries first on PATH (as after `cargo install`), so the installed
/// hooks run them.
fn git(repo: &TestRepo, args: &[&str]) -> Run {
    let path = path_with_bins();
    repo.git_env(args, &[("PATH", &path)])
}

/// The remote has main (pushed before any hook) and the contract; hooks are installed.
fn bound_and_published() -> (TestRepo, tempfile::TempDir) {
    let (repo, remote) = repo_with_remote();
    git(
        &repo,
        &[
            "push",
            "--no-verify",
            "origin",
            "main",
            "refs/rails/contracts/S",
        ],
    )
    .ok();
    repo.rails(&["hooks", "install"]).ok();
    (repo, remote)
}

fn head(repo: &TestRepo) -> String {
    repo.git(&["rev-parse", "HEAD"]).trim().to_string()
}

#[test]
fn a_commit_without_the_trailer_on_a_bound_branch_is_judged_by_the_binding() {
    let (repo, remote) = bound_and_published();
    let published = remote_ref(remote.path(), "refs/heads/main");
    // The attack: a commit that skips commit-msg, so it carries no `Rails-Sprint:`.
    git(
        &repo,
        &["commit", "-q", "--no-verify", "--allow-empty", "-m", "work"],
    )
    .ok();
    assert!(!repo
        .git(&["log", "-1", "--format=%B"])
        .contains("Rails-Sprint"));
    let out = git(&repo, &["push", "origin", "main"]);
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("push of refs/heads/main refused: S v1 is not done at")
            && out.stderr.contains("owed by main's binding"),
        "{out}"
    );
    let short = &head(&repo)[..7];
    assert!(
        out.stderr
            .contains("1 new commit names no sprint (no `Rails-Sprint:` trailer, none from a new ancestor); main is bound to S"),
        "{out}"
    );
    assert!(out.stderr.contains(&format!("  - {short} work")), "{out}");
    assert_eq!(remote_ref(remote.path(), "refs/heads/main"), published);

    // A cherry-pick onto the bound branch carries no trailer either: judged alike, and named.
    repo.git(&["checkout", "-q", "-b", "side", "origin/main"]);
    git(
        &repo,
        &[
            "commit",
            "-q",
            "--no-verify",
            "--allow-empty",
            "-m",
            "picked",
        ],
    )
    .ok();
    let picked = head(&repo);
    repo.git(&["checkout", "-q", "main"]);
    git(&repo, &["cherry-pick", "--allow-empty", &picked]).ok();
    let out = git(&repo, &["push", "origin", "main"]);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("2 new commits name no sprint"), "{out}");
    assert!(out.stderr.contains("S v1 is not done"), "{out}");

    // The command it names adds the trailer to the unpushed commits; then they name S
    // themselves, and the push is still judged by S.
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("add the trailer to the unpushed commits"))
        .unwrap();
    let command = line.split('`').nth(1).unwrap();
    assert!(command.starts_with("git rebase "), "{command}");
    let path = path_with_bins();
    let mut sh = repo.program("sh");
    sh.args(["-c", command]).env("PATH", &path);
    Run::of(&mut sh).ok();
    for rev in ["HEAD", "HEAD~1"] {
        let message = repo.git(&["log", "-1", "--format=%B", rev]);
        assert_eq!(message.matches("Rails-Sprint: S").count(), 1, "{message}");
    }
    let out = git(&repo, &["push", "origin", "main"]);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("S v1 is not done"), "{out}");
    assert!(!out.stderr.contains("names no sprint"), "{out}");

    // Proven: the push goes through, with the unnamed commit still named.
    prove(&repo);
    let out = git(&repo, &["push", "origin", "main"]);
    out.ok();
    assert!(out.stderr.contains("S v1 is done at"), "{out}");
}

#[test]
fn a_branch_made_from_a_bound_branch_inherits_its_sprint_from_its_new_commits() {
    let (repo, remote) = bound_and_published();
    // Unpushed work of the sprint on the bound branch (the commit-msg hook adds the trailer).
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "part one"]).ok();
    assert!(repo
        .git(&["log", "-1", "--format=%B"])
        .contains("Rails-Sprint: S"));
    // The attack: a new branch (no binding), one more commit (no trailer), pushed.
    repo.git(&["switch", "-q", "-c", "scratch"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "part two"]).ok();
    assert!(!repo
        .git(&["log", "-1", "--format=%B"])
        .contains("Rails-Sprint"));
    let out = git(&repo, &["push", "origin", "scratch"]);
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("push of refs/heads/scratch refused: S v1 is not done"),
        "{out}"
    );
    // The commit without a trailer belongs to its new ancestor's sprint: it is not unnamed.
    assert!(!out.stderr.contains("names no sprint"), "{out}");
    assert_eq!(remote_ref(remote.path(), "refs/heads/scratch"), None);

    // Commits the remote already has never pass their sprint on: once part one is published,
    // a new commit on an unbound branch owes nothing (nothing is bound to it or named by it).
    git(
        &repo,
        &["push", "--no-verify", "origin", "scratch~1:refs/heads/main"],
    )
    .ok();
    repo.git(&["fetch", "-q", "origin"]);
    repo.git(&["switch", "-q", "-c", "later", "origin/main"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "unrelated"]).ok();
    let out = git(&repo, &["push", "origin", "later"]);
    out.ok();
    assert!(
        out.stderr
            .contains("its new commits name no sprint; nothing to gate"),
        "{out}"
    );
}

#[test]
fn the_destination_branchs_binding_judges_a_push_from_an_unbound_branch() {
    let (repo, remote) = bound_and_published();
    let published = remote_ref(remote.path(), "refs/heads/main");
    repo.git(&["switch", "-q", "-c", "tmp"]);
    git(
        &repo,
        &[
            "commit",
            "-q",
            "--no-verify",
            "--allow-empty",
            "-m",
            "sneak",
        ],
    )
    .ok();
    // tmp is bound to nothing, its commit names nothing; main is bound to S here.
    let out = git(&repo, &["push", "origin", "tmp:main"]);
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("refs/heads/tmp to refs/heads/main refused: S v1 is not done"),
        "{out}"
    );
    assert!(out.stderr.contains("owed by main's binding"), "{out}");
    assert_eq!(remote_ref(remote.path(), "refs/heads/main"), published);
}

#[test]
fn ci_judges_the_sprints_the_commits_name_without_a_binding() {
    let (repo, _remote) = repo_with_remote();
    let base = head(&repo);
    repo.draft(
        "T",
        serde_json::json!([crate::harness::check(
            "c1",
            "file_exists",
            serde_json::json!({"path": "t.txt"})
        )]),
    );
    repo.rails(&["contract", "freeze", "T"]).ok();
    prove(&repo);
    repo.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "s\n\nRails-Sprint: S",
    ]);
    repo.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "t\n\nRails-Sprint: T",
    ]);
    // As in a fresh clone in CI: nothing is bound.
    repo.git(&["config", "--unset", "branch.main.railsSprint"]);
    repo.rails(&["gate", "--commit", "HEAD"])
        .code(2)
        .stdout_has("gate blocked: T v1");
    repo.rails(&["gate", "--commit", "HEAD~1"])
        .ok()
        .stdout_has("gate passed: S v1");
    // Every sprint the commits after the base name; the worst exit code; one entry each.
    let out = repo.rails(&["gate", "--since", &base, "--json"]);
    out.code(2);
    let doc = out.json();
    assert_eq!(doc["schema"], "rails-gate-list/v1", "{doc}");
    let names: Vec<&str> = doc["sprints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["sprint"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["S", "T"], "{doc}");
    let junit = repo.path().join("v.xml");
    let out = repo.rails(&[
        "verify",
        "--commit",
        "HEAD",
        "--since",
        &base,
        "--junit",
        junit.to_str().unwrap(),
    ]);
    out.code(2);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testsuite ").count(), 2, "{xml}");
    assert!(
        xml.contains("rails verify S v1") && xml.contains("rails verify T v1"),
        "{xml}"
    );
    repo.rails(&["verify", "--commit", "HEAD~1", "--json"])
        .ok()
        .stdout_has("rails-verify-list/v1");
    // A commit that names none, with nothing bound: a usage error with the way on.
    let out = repo.rails(&["gate", "--commit", &base]);
    out.code(64);
    assert!(
        out.stderr
            .contains(&format!("commit {} names none", &base[..7]))
            && out.stderr.contains("--since BASE"),
        "{out}"
    );
    repo.rails(&["verify", "--commit", &base]).code(64);
}

/// A Claude Code hook event of `session` with `cwd`.
fn event(session: &str, name: &str, cwd: &std::path::Path) -> serde_json::Value {
    serde_json::json!({"session_id": session, "cwd": cwd.display().to_string(),
        "hook_event_name": name, "stop_hook_active": false,
        "transcript_path": "/tmp/t.jsonl"})
}

#[test]
fn an_agent_session_is_judged_where_it_is_held_whatever_folder_an_event_names() {
    use crate::hooks::agent_hook;
    let (repo, _remote) = repo_with_remote();
    let here = repo.path().to_path_buf();
    let (code, err) = agent_hook(&repo, &here, &event("s1", "Stop", &here));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("S v1 still has unproven criteria"), "{err}");
    // The attack: an event from a fresh repository nested in the work tree.
    repo.git(&["init", "-q", "scratch"]);
    let nested = here.join("scratch");
    let (code, err) = agent_hook(&repo, &nested, &event("s1", "Stop", &nested));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("S v1 still has unproven criteria"), "{err}");
    assert!(err.contains("git rails evidence red S c1"), "{err}");
    // And one from outside any repository.
    let outside = tempfile::tempdir().unwrap();
    let (code, err) = agent_hook(&repo, outside.path(), &event("s1", "Stop", outside.path()));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("S v1 still has unproven criteria"), "{err}");
    // A subagent's stop is not gated: the parent's Stop holds the turn.
    let (code, err) = agent_hook(&repo, &here, &event("s1", "SubagentStop", &here));
    assert_eq!(code, 0, "{err}");
    // A session never seen in a rails repository is not held.
    let (code, err) = agent_hook(&repo, outside.path(), &event("s9", "Stop", outside.path()));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("not held"), "{err}");
    let (code, err) = agent_hook(&repo, &nested, &event("s9", "Stop", &nested));
    assert_eq!(code, 0, "{err}");
    // A held session whose repository cannot be read any more: refused with the reason.
    let state = repo
        .home
        .path()
        .join(".local/state/git-rails/sessions/s1.json");
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(kept["sprints"], serde_json::json!(["S"]), "{kept}");
    let mut moved = kept.clone();
    moved["repo"] = serde_json::json!(outside.path().join("gone").display().to_string());
    std::fs::write(&state, moved.to_string()).unwrap();
    let (code, err) = agent_hook(&repo, &here, &event("s1", "Stop", &here));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be read"), "{err}");
    std::fs::write(&state, "{ not a session").unwrap();
    let (code, err) = agent_hook(&repo, &here, &event("s1", "Stop", &here));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("does not read"), "{err}");
}

#[test]
fn a_session_held_at_its_start_keeps_its_sprint_on_a_new_branch() {
    use crate::hooks::agent_hook;
    let (repo, _remote) = repo_with_remote();
    let here = repo.path().to_path_buf();
    // SessionStart holds the session to the repository and the bound sprint; it never blocks.
    let (code, err) = agent_hook(&repo, &here, &event("s2", "SessionStart", &here));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("session s2 is held to"), "{err}");
    // The attack: in the first turn, a new branch (no binding), one commit, Stop.
    repo.git(&["switch", "-q", "-c", "x"]);
    repo.git(&["commit", "-q", "--allow-empty", "-m", "on x"]);
    let (code, err) = agent_hook(&repo, &here, &event("s2", "Stop", &here));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("S v1 still has unproven criteria"), "{err}");
    // Without SessionStart, a Bash call the guard lets through holds the session too.
    repo.git(&["switch", "-q", "main"]);
    let mut cmd = repo.command("git-rails");
    let mut call = event("s3", "PreToolUse", &here);
    call["tool_name"] = serde_json::json!("Bash");
    call["tool_input"] = serde_json::json!({"command": "git switch -c y"});
    let run = pipe(
        &mut cmd,
        &["agent", "hook", "pre-tool-use"],
        &call.to_string(),
    );
    run.ok();
    repo.git(&["switch", "-q", "-c", "y"]);
    repo.git(&["commit", "-q", "--allow-empty", "-m", "on y"]);
    let (code, err) = agent_hook(&repo, &here, &event("s3", "Stop", &here));
    assert_eq!(code, 2, "{err}");
    // Proven: the session's Stop passes.
    repo.git(&["switch", "-q", "main"]);
    prove(&repo);
    let (code, err) = agent_hook(&repo, &here, &event("s3", "Stop", &here));
    assert_eq!(code, 0, "{err}");
}

fn pipe(cmd: &mut std::process::Command, args: &[&str], input: &str) -> Run {
    use std::io::Write;
    let mut child = cmd
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    Run::of_child(child)
}

#[test]
fn the_guard_keeps_the_session_store_and_the_installed_hooks_fail_closed() {
    let (repo, _remote) = repo_with_remote();
    let here = repo.path().to_path_buf();
    let store = repo
        .home
        .path()
        .join(".local/state/git-rails/sessions/s1.json");
    let store = store.display().to_string();
    for (tool, input) in [
        (
            "Bash",
            serde_json::json!({"command": format!("rm {store}")}),
        ),
        (
            "Bash",
            serde_json::json!({"command": format!("echo {{}} > {store}")}),
        ),
        (
            "Write",
            serde_json::json!({"file_path": store, "content": "{}"}),
        ),
        (
            "Edit",
            serde_json::json!({"file_path": store, "old_string": "S", "new_string": "T"}),
        ),
    ] {
        let mut call = event("s1", "PreToolUse", &here);
        call["tool_name"] = serde_json::json!(tool);
        call["tool_input"] = input;
        let run = pipe(
            &mut repo.command("git-rails"),
            &["agent", "hook", "pre-tool-use"],
            &call.to_string(),
        );
        run.code(2);
        assert!(run.stderr.contains("session store"), "{tool}: {run}");
    }
    // The installed hook commands make any failure exit 2, a missing git-rails included.
    repo.rails(&["agent", "setup", "claude"]).ok();
    let settings: serde_json::Value =
        serde_json::from_str(&repo.read(".claude/settings.json")).unwrap();
    for hook in ["Stop", "PreToolUse", "SessionStart"] {
        let command = settings["hooks"][hook][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(command.ends_with("|| exit 2"), "{hook}: {command}");
        let mut sh = repo.program("sh");
        sh.args(["-c", &command]).env("PATH", "/usr/bin:/bin");
        let run = pipe(&mut sh, &[], &event("s1", hook, &here).to_string());
        run.code(2);
    }
}
