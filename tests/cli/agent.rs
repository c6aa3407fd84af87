//! `git rails agent setup|remove claude|codex` on real files in temporary repositories, and the
//! PreToolUse hook it installs (`git rails agent hook pre-tool-use`). The real Claude Code and
//! Codex reading what setup wrote are in `real_mcp.rs`.

use std::io::Write;
use std::process::Stdio;

use serde_json::{json, Value};

use crate::evidence::{frozen, needs_file};
use crate::harness::{Run, TestRepo};

fn read_json(repo: &TestRepo, rel: &str) -> Value {
    serde_json::from_str(&repo.read(rel)).unwrap()
}

fn exists(repo: &TestRepo, rel: &str) -> bool {
    repo.path().join(rel).exists()
}

/// A user's own Claude Code files: another MCP server, settings with their own hooks and rules.
fn user_claude_files(repo: &TestRepo) {
    repo.write(
        ".mcp.json",
        "{\n    \"mcpServers\": {\n        \"docs\": {\"command\": \"docs-server\", \"args\": [\"--port\", \"0\"]}\n    },\n    \"zeta\": 1\n}\n",
    );
    repo.write(
        ".claude/settings.json",
        r#"{"model": "opus", "permissions": {"allow": ["Bash(cargo test:*)"], "deny": ["Bash(rm:*)"]},
 "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./notify.sh"}]}],
           "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "cargo fmt"}]}]},
 "env": {"A": "1"}}"#,
    );
}

#[test]
fn claude_setup_merges_into_the_users_files_and_a_second_run_changes_nothing() {
    let repo = TestRepo::new();
    user_claude_files(&repo);
    let run = repo.rails(&["agent", "setup", "claude"]);
    run.ok()
        .stdout_has("set up Claude Code for this repository:")
        .stdout_has("add the MCP server \"rails\" (git rails mcp)");

    let mcp = read_json(&repo, ".mcp.json");
    // Every key kept, in its order, with ours added.
    let keys: Vec<&String> = mcp.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["mcpServers", "zeta"]);
    let servers: Vec<&String> = mcp["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(servers, ["docs", "rails"]);
    assert_eq!(mcp["mcpServers"]["docs"]["args"], json!(["--port", "0"]));
    assert_eq!(
        mcp["mcpServers"]["rails"],
        json!({"command": "git", "args": ["rails", "mcp"]})
    );

    let s = read_json(&repo, ".claude/settings.json");
    let keys: Vec<&String> = s.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "permissions", "hooks", "env"]);
    // The permission goes to the personal settings.local.json, the one Claude Code honours for
    // a project's MCP tools.
    assert_eq!(
        s["permissions"],
        json!({"allow": ["Bash(cargo test:*)"], "deny": ["Bash(rm:*)"]})
    );
    assert_eq!(
        read_json(&repo, ".claude/settings.local.json"),
        json!({"permissions": {"allow": ["mcp__rails"]}})
    );
    run.stdout_has("note: the permission for the rails tools is in .claude/settings.local.json");
    assert_eq!(
        s["hooks"]["Stop"],
        json!([
            {"hooks": [{"type": "command", "command": "./notify.sh"}]},
            {"hooks": [{"type": "command", "command": "git rails hook agent-stop || exit 2"}]}
        ])
    );
    assert_eq!(
        s["hooks"]["PreToolUse"],
        json!([{"matcher": "Bash|Edit|Write|MultiEdit|NotebookEdit", "hooks": [{"type": "command",
            "command": "git rails agent hook pre-tool-use || exit 2"}]}])
    );
    assert_eq!(s["hooks"]["PostToolUse"][0]["matcher"], "Edit");
    assert_eq!(s["env"], json!({"A": "1"}));

    // Idempotent: nothing changes, byte for byte, and it says so.
    let (mcp_text, settings_text) = (repo.read(".mcp.json"), repo.read(".claude/settings.json"));
    repo.rails(&["agent", "setup", "claude"])
        .ok()
        .stdout_has("Claude Code is already set up for this repository; nothing changed");
    assert_eq!(repo.read(".mcp.json"), mcp_text);
    assert_eq!(repo.read(".claude/settings.json"), settings_text);
}

#[test]
fn dry_run_shows_the_change_as_a_diff_and_writes_nothing() {
    let repo = TestRepo::new();
    user_claude_files(&repo);
    let before = (repo.read(".mcp.json"), repo.read(".claude/settings.json"));
    let run = repo.rails(&["agent", "setup", "claude", "--dry-run"]);
    run.ok()
        .stdout_has("--- a/.mcp.json\n+++ b/.mcp.json\n")
        .stdout_has("+    \"rails\": {")
        .stdout_has("--- a/.claude/settings.json\n+++ b/.claude/settings.json\n")
        .stdout_has("+            \"command\": \"git rails hook agent-stop || exit 2\"")
        .stdout_has("dry run: nothing was written");
    assert_eq!(
        (repo.read(".mcp.json"), repo.read(".claude/settings.json")),
        before
    );

    // On a fresh repository the files would be created: the diff starts from /dev/null.
    let fresh = TestRepo::new();
    fresh
        .rails(&["agent", "setup", "codex", "--dry-run"])
        .ok()
        .stdout_has("--- /dev/null\n+++ b/.codex/config.toml\n")
        .stdout_has("+[mcp_servers.rails]\n+command = \"git\"\n+args = [\"rails\", \"mcp\"]\n");
    assert!(!exists(&fresh, ".codex"), "a dry run made .codex");

    // --json carries the plan and the diff.
    let j = fresh.rails(&["agent", "setup", "claude", "--dry-run", "--json"]);
    j.ok();
    let doc = j.json();
    assert_eq!(doc["schema"], "rails-agent/v1");
    assert_eq!(doc["agent"], "claude");
    assert_eq!(doc["scope"], "project");
    assert_eq!(doc["dryRun"], true);
    assert_eq!(doc["changed"], false);
    assert_eq!(doc["files"][0]["path"], ".mcp.json");
    assert_eq!(doc["files"][0]["action"], "create");
    assert!(doc["diff"].as_str().unwrap().contains("+++ b/.mcp.json"));
    assert!(!exists(&fresh, ".mcp.json"));
}

#[test]
fn remove_takes_away_exactly_what_setup_added() {
    let repo = TestRepo::new();
    user_claude_files(&repo);
    let before = (
        read_json(&repo, ".mcp.json"),
        read_json(&repo, ".claude/settings.json"),
    );
    repo.rails(&["agent", "setup", "claude"]).ok();
    // The user adds something of their own after setup: it survives remove.
    let mut s = read_json(&repo, ".claude/settings.json");
    s["permissions"]["ask"] = json!(["Bash(git push:*)"]);
    repo.write(".claude/settings.json", &s.to_string());
    let run = repo.rails(&["agent", "remove", "claude"]);
    run.ok()
        .stdout_has("removed rails from Claude Code for this repository:")
        .stdout_has("remove the Stop hook");
    let mut want = before.1.clone();
    want["permissions"]["ask"] = json!(["Bash(git push:*)"]);
    assert_eq!(read_json(&repo, ".mcp.json"), before.0);
    assert_eq!(read_json(&repo, ".claude/settings.json"), want);
    // Again: nothing of ours is left.
    repo.rails(&["agent", "remove", "claude"]).ok().stdout_has(
        "nothing rails added is in Claude Code's files for this repository; nothing changed",
    );

    // Files setup created are deleted again when nothing else is in them.
    let fresh = TestRepo::new();
    fresh.rails(&["agent", "setup", "claude"]).ok();
    for f in [
        ".mcp.json",
        ".claude/settings.json",
        ".claude/settings.local.json",
    ] {
        assert!(exists(&fresh, f), "{f}");
    }
    fresh
        .rails(&["agent", "remove", "claude"])
        .ok()
        .stdout_has(".mcp.json (deleted):");
    for f in [
        ".mcp.json",
        ".claude/settings.json",
        ".claude/settings.local.json",
    ] {
        assert!(!exists(&fresh, f), "{f}");
    }
}

#[test]
fn a_rails_server_the_user_changed_is_refused_by_setup_and_left_by_remove() {
    let repo = TestRepo::new();
    repo.write(
        ".mcp.json",
        r#"{"mcpServers": {"rails": {"command": "/opt/other-rails", "args": []}}}"#,
    );
    let before = repo.read(".mcp.json");
    repo.rails(&["agent", "setup", "claude"])
        .code(65)
        .stderr_has("already has an MCP server named \"rails\" that runs something else")
        .stderr_has("nothing was written");
    assert_eq!(repo.read(".mcp.json"), before);
    assert!(!exists(&repo, ".claude/settings.json"));
    repo.rails(&["agent", "remove", "claude"])
        .ok()
        .stdout_has("left alone: the MCP server \"rails\"");
    assert_eq!(repo.read(".mcp.json"), before);

    repo.write(
        ".codex/config.toml",
        "[mcp_servers.rails]\ncommand = \"rails-server\"\n",
    );
    repo.rails(&["agent", "setup", "codex"])
        .code(65)
        .stderr_has("does not run `git rails mcp`");
    repo.rails(&["agent", "remove", "codex"])
        .ok()
        .stdout_has("left alone");
    assert_eq!(
        repo.read(".codex/config.toml"),
        "[mcp_servers.rails]\ncommand = \"rails-server\"\n"
    );
}

#[test]
fn malformed_files_are_refused_and_nothing_is_written() {
    let repo = TestRepo::new();
    repo.write(".claude/settings.json", "{\"hooks\": {,}");
    repo.rails(&["agent", "setup", "claude"])
        .code(65)
        .stderr_has(".claude/settings.json is not valid JSON")
        .stderr_has("nothing was written");
    // Not even the other, well-formed file.
    assert!(!exists(&repo, ".mcp.json"));
    assert_eq!(repo.read(".claude/settings.json"), "{\"hooks\": {,}");

    repo.write(".claude/settings.json", "[1, 2]");
    repo.rails(&["agent", "setup", "claude"])
        .code(65)
        .stderr_has("is not a JSON object");
    repo.write(".claude/settings.json", r#"{"hooks": {"Stop": {"x": 1}}}"#);
    repo.rails(&["agent", "setup", "claude"])
        .code(65)
        .stderr_has("hooks.Stop is not an array");
    assert!(!exists(&repo, ".mcp.json"));

    repo.write(".codex/config.toml", "model = \"gpt\n[x\n");
    repo.rails(&["agent", "setup", "codex"])
        .code(65)
        .stderr_has(".codex/config.toml is not valid TOML")
        .stderr_has("nothing was written");
    assert_eq!(repo.read(".codex/config.toml"), "model = \"gpt\n[x\n");
    repo.write(".codex/config.toml", "mcp_servers = 3\n");
    repo.rails(&["agent", "setup", "codex"])
        .code(65)
        .stderr_has("mcp_servers is not a table");
}

#[test]
fn codex_setup_keeps_every_comment_and_remove_restores_the_file_byte_for_byte() {
    let repo = TestRepo::new();
    let original = "# my settings\nmodel = \"gpt-5.5\"  # the default\n\n\
                    [mcp_servers.docs]\ncommand = \"docs-server\"   # keep me\n\n\
                    [profiles.fast]\nmodel = \"gpt-5.4-mini\"\n";
    repo.write(".codex/config.toml", original);
    let run = repo.rails(&["agent", "setup", "codex"]);
    run.ok()
        .stdout_has("add the MCP server \"rails\" (git rails mcp)")
        .stdout_has("note: Codex reads .codex/config.toml only in a trusted project");
    let text = repo.read(".codex/config.toml");
    assert!(
        text.starts_with(
            "# my settings\nmodel = \"gpt-5.5\"  # the default\n\n[mcp_servers.docs]\ncommand = \"docs-server\"   # keep me\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "[mcp_servers.rails]\ncommand = \"git\"\nargs = [\"rails\", \"mcp\"]\ndefault_tools_approval_mode = \"approve\"\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("[profiles.fast]\nmodel = \"gpt-5.4-mini\"\n"),
        "{text}"
    );
    let parsed: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(
        parsed["mcp_servers"]["rails"]["args"][1].as_str(),
        Some("mcp")
    );

    repo.rails(&["agent", "setup", "codex"])
        .ok()
        .stdout_has("Codex is already set up for this repository; nothing changed");
    assert_eq!(repo.read(".codex/config.toml"), text);
    repo.rails(&["agent", "remove", "codex"]).ok();
    assert_eq!(repo.read(".codex/config.toml"), original);

    // Created from nothing, removed to nothing.
    let fresh = TestRepo::new();
    fresh.rails(&["agent", "setup", "codex"]).ok();
    fresh.rails(&["agent", "remove", "codex"]).ok();
    assert!(!exists(&fresh, ".codex/config.toml"));
}

#[test]
fn user_scope_writes_the_files_each_agent_reads_for_its_user() {
    let repo = TestRepo::new();
    let home = repo.home.path().to_path_buf();
    std::fs::write(
        home.join(".claude.json"),
        r#"{"numStartups": 4, "projects": {"/x": {"allowedTools": []}}}"#,
    )
    .unwrap();
    let run = repo.rails_env(&["agent", "setup", "claude", "--user"], &[]);
    run.ok().stdout_has("for your user");
    let cj: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".claude.json")).unwrap()).unwrap();
    let keys: Vec<&String> = cj.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["numStartups", "projects", "mcpServers"]);
    assert_eq!(cj["mcpServers"]["rails"]["command"], "git");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".claude/settings.json")).unwrap())
            .unwrap();
    assert_eq!(settings["permissions"]["allow"], json!(["mcp__rails"]));
    // Nothing in the repository.
    assert!(!exists(&repo, ".mcp.json") && !exists(&repo, ".claude"));

    // $CLAUDE_CONFIG_DIR holds both user files instead.
    let cfg = tempfile::tempdir().unwrap();
    let c = cfg.path().to_str().unwrap();
    repo.rails_env(
        &["agent", "setup", "claude", "--user"],
        &[("CLAUDE_CONFIG_DIR", c)],
    )
    .ok();
    assert!(cfg.path().join(".claude.json").is_file());
    assert!(cfg.path().join("settings.json").is_file());

    // Codex: $CODEX_HOME/config.toml, else ~/.codex/config.toml.
    let codex_home = tempfile::tempdir().unwrap();
    let ch = codex_home.path().to_str().unwrap();
    repo.rails_env(
        &["agent", "setup", "codex", "--user"],
        &[("CODEX_HOME", ch)],
    )
    .ok();
    assert!(
        std::fs::read_to_string(codex_home.path().join("config.toml"))
            .unwrap()
            .contains("[mcp_servers.rails]")
    );
    repo.rails_env(
        &["agent", "setup", "codex", "--user"],
        &[("CODEX_HOME", "")],
    )
    .ok();
    assert!(home.join(".codex/config.toml").is_file());
    repo.rails_env(&["agent", "remove", "claude", "--user"], &[])
        .ok();
    let cj: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".claude.json")).unwrap()).unwrap();
    assert_eq!(
        cj,
        json!({"numStartups": 4, "projects": {"/x": {"allowedTools": []}}})
    );
}

#[test]
fn project_setup_outside_a_repository_is_refused_and_names_user() {
    let dir = tempfile::tempdir().unwrap();
    let repo = TestRepo::new();
    let mut cmd = repo.command("git-rails");
    cmd.current_dir(dir.path())
        .env("GIT_CEILING_DIRECTORIES", dir.path().parent().unwrap())
        .args(["agent", "setup", "claude"]);
    let run = Run::of(&mut cmd);
    assert_ne!(run.code, 0, "{run}");
    assert!(run.stderr.contains("--user"), "{run}");
    assert!(!dir.path().join(".mcp.json").exists());
}

/// Runs the PreToolUse hook with this event on stdin.
fn pre_tool_use(repo: &TestRepo, event: &Value) -> Run {
    let mut cmd = repo.command("git-rails");
    cmd.args(["agent", "hook", "pre-tool-use"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    Run::of_child(child)
}

fn bash(command: &str, repo: &TestRepo) -> Value {
    json!({"session_id": "s-1", "cwd": repo.path(), "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}})
}

#[test]
fn the_pre_tool_use_hook_blocks_the_ways_around_the_hooks_and_asks_the_gate_before_a_push() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    repo.rails(&["contract", "bind", "S"]).ok();

    let r = pre_tool_use(&repo, &bash("git commit --no-verify -m wip", &repo));
    assert_eq!(r.code, 2, "{r}");
    assert!(
        r.stderr
            .contains("git-rails: blocked: git commit --no-verify skips the rails hooks"),
        "{r}"
    );
    let r = pre_tool_use(
        &repo,
        &bash("git update-ref refs/rails/evidence/S HEAD", &repo),
    );
    assert_eq!(r.code, 2, "{r}");
    assert!(r.stderr.contains("never by hand"), "{r}");

    // Ordinary work runs, and so does any tool that is not Bash.
    assert_eq!(pre_tool_use(&repo, &bash("cargo test", &repo)).code, 0);
    let edit = json!({"tool_name": "Edit", "tool_input": {"file_path": "a"}});
    assert_eq!(pre_tool_use(&repo, &edit).code, 0);

    // A push while the sprint is unproven: blocked with the gate's report.
    let r = pre_tool_use(&repo, &bash("git push origin main", &repo));
    assert_eq!(r.code, 2, "{r}");
    assert!(
        r.stderr.contains(
            "git-rails: blocked: git push publishes the work, and the gate does not pass yet"
        ),
        "{r}"
    );
    assert!(r.stderr.contains("c1"), "{r}");

    // Once proven, the push is let through.
    repo.rails(&["evidence", "red", "S", "c1"]).ok();
    repo.write("feature.txt", "done\n");
    repo.commit_all("feature");
    repo.rails(&["evidence", "green", "S", "c1"]).ok();
    repo.rails(&["evidence", "surface", "S", "c1", "--note", "in the tree"])
        .ok();
    repo.rails(&[
        "evidence",
        "cleanup",
        "S",
        "c1",
        "--note",
        "nothing to stop",
    ])
    .ok();
    repo.rails(&["gate", "S"]).ok();
    let r = pre_tool_use(&repo, &bash("git push origin main", &repo));
    assert_eq!(r.code, 0, "{r}");

    // stdin that is not an event is refused, not let through silently.
    let mut cmd = repo.command("git-rails");
    cmd.args(["agent", "hook", "pre-tool-use"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"not json").unwrap();
    let r = Run::of_child(child);
    assert_eq!(r.code, 65, "{r}");
    assert!(r.stderr.contains("stdin is not a hook event"), "{r}");
}

#[test]
fn the_pre_tool_use_hook_refuses_a_persons_decision_from_an_agents_shell() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    for c in [
        "git spar waive s code-1 claude --user-quote 'the user agreed'",
        "git spar triage s code-1 claude-F1 accepted --user-quote 'ship it'",
        "cd . && git spar triage s code-1 claude-F1 answered --user-quote=yes",
    ] {
        let r = pre_tool_use(&repo, &bash(c, &repo));
        assert_eq!(r.code, 2, "{c}: {r}");
        assert!(
            r.stderr.contains("is a decision only a person can make"),
            "{c}: {r}"
        );
    }
    let r = pre_tool_use(
        &repo,
        &bash(
            "git spar run --base main --decision x --decision-quote 'they said'",
            &repo,
        ),
    );
    assert_eq!(r.code, 2, "{r}");
    assert!(
        r.stderr.contains("--decision-quote gives the user's words"),
        "{r}"
    );
    let ok = "git spar triage s code-1 claude-F1 rejected --evidence 'unreachable'";
    assert_eq!(pre_tool_use(&repo, &bash(ok, &repo)).code, 0);
}
