//! A newcomer's first hour (issue 19): the README's install step gives working `--help`, man
//! pages and completions; the hooks' install makes plain `git push` carry the records; the
//! messages a first run meets say what to do.

use std::path::Path;

use serde_json::json;

use crate::harness::{bin, check, hermetic_command, system_path, Run, TestRepo};

/// Whether the shell tools these tests drive are here; CI (`RAILS_TEST_REQUIRE_SHELL_TOOLS=1`,
/// set by .ci/run, which installs them) fails instead of skipping.
fn have_shell_tools() -> bool {
    let have = Path::new("/usr/share/bash-completion/bash_completion").exists()
        && Path::new("/usr/share/bash-completion/completions/git").exists()
        && {
            let home = tempfile::tempdir().unwrap();
            hermetic_command("man", home.path(), home.path())
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        };
    if !have {
        assert!(
            std::env::var("RAILS_TEST_REQUIRE_SHELL_TOOLS").as_deref() != Ok("1"),
            "man-db or bash-completion is missing (apt-get install man-db bash-completion)"
        );
        eprintln!("skipped: man-db, bash-completion or git's bash completion is not installed");
    }
    have
}

/// A fresh machine: an empty HOME with `~/.cargo/bin` holding the binaries under test, and
/// `scripts/install.sh` run as the README says (its `cargo install` step skipped: the binaries
/// are the ones just built).
struct Machine {
    home: tempfile::TempDir,
}

impl Machine {
    fn new() -> Machine {
        let home = tempfile::tempdir().unwrap();
        let b = home.path().join(".cargo/bin");
        std::fs::create_dir_all(&b).unwrap();
        for t in ["git-rails", "git-spar", "rails-spar-extras"] {
            std::fs::copy(bin(t), b.join(t)).unwrap();
        }
        let m = Machine { home };
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install.sh");
        let out = m.run(
            Path::new("/"),
            "sh",
            &[&script.display().to_string()],
            &[("RAILS_INSTALL_SKIP_CARGO", "1")],
        );
        out.ok().stdout_has("install: man pages in");
        m
    }

    /// Runs `program` in the hermetic environment with this machine's HOME, its PATH (the
    /// installed binaries and the system folders only, not the built ones) and a pager that
    /// prints.
    fn run(&self, dir: &Path, program: &str, args: &[&str], extra: &[(&str, &str)]) -> Run {
        let mut cmd = hermetic_command(program, self.home.path(), dir);
        system_path(&mut cmd, &[&self.home.path().join(".cargo/bin")]);
        cmd.args(args)
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("GIT_PAGER", "cat")
            .env("TERM", "dumb")
            .env("MANWIDTH", "100");
        for (k, v) in extra {
            cmd.env(k, v);
        }
        Run::of(&mut cmd)
    }
}

#[test]
fn after_the_install_step_help_and_man_pages_work_through_git() {
    if !have_shell_tools() {
        return;
    }
    let m = Machine::new();
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (&["rails", "--help"][..], "GIT-RAILS(1)"),
        (&["spar", "--help"], "GIT-SPAR(1)"),
        (&["help", "rails"], "GIT-RAILS(1)"),
        (&["help", "spar"], "GIT-SPAR(1)"),
    ] {
        let out = m.run(dir.path(), "git", args, &[]);
        out.ok().stdout_has(want).stdout_has("SYNOPSIS");
    }
    m.run(dir.path(), "man", &["git-rails-contract-freeze"], &[])
        .ok()
        .stdout_has("git rails contract freeze");
    let w = m.run(dir.path(), "man", &["-w", "git-spar-run"], &[]);
    w.ok().stdout_has(&format!(
        "{}/.cargo/share/man/man1/git-spar-run.1",
        m.home.path().display()
    ));
}

/// Completes `line` through git's own bash completion (`complete -F __git_wrap__git_main git`,
/// loaded as bash-completion loads it), as `git <line><TAB>` would.
fn complete(m: &Machine, dir: &Path, line: &str) -> Vec<String> {
    let script = r#"
source /usr/share/bash-completion/bash_completion
COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
read -ra COMP_WORDS <<<"$COMP_LINE"
[[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
_completion_loader git >/dev/null 2>&1
__git_wrap__git_main
printf '%s\n' "${COMPREPLY[@]}"
"#;
    let out = m.run(dir, "bash", &["-c", script, "comp", line], &[]);
    out.ok();
    let mut v: Vec<String> = out
        .stdout
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    v.sort();
    v
}

#[test]
fn git_rails_tab_completes_subcommands_options_and_the_repository_s_names() {
    if !have_shell_tools() {
        return;
    }
    let m = Machine::new();
    let repo = TestRepo::new();
    repo.draft_with(
        "SPRINT-001",
        json!([check(
            "hello-exists",
            "file_exists",
            json!({"path": "hello.txt"})
        )]),
        json!({}),
    );
    repo.rails(&["contract", "freeze", "SPRINT-001"]).ok();
    repo.rails(&["contract", "bind", "SPRINT-001"]).ok();
    repo.spar(&["run", "--base", "HEAD", "--series", "feature", "--dry-run"])
        .ok();
    let d = repo.path();
    assert_eq!(complete(&m, d, "git rai"), ["rails"]);
    let subs = complete(&m, d, "git rails ");
    for s in [
        "contract",
        "evidence",
        "gate",
        "status",
        "hooks",
        "sync",
        "completions",
    ] {
        assert!(subs.contains(&s.to_string()), "{s} missing from {subs:?}");
    }
    assert!(!subs.iter().any(|s| s.starts_with("__")), "{subs:?}");
    assert_eq!(complete(&m, d, "git rails contract fr"), ["freeze"]);
    assert_eq!(
        complete(&m, d, "git rails contract freeze "),
        ["SPRINT-001"]
    );
    assert_eq!(complete(&m, d, "git rails gate --c"), ["--commit"]);
    assert_eq!(
        complete(&m, d, "git rails evidence red "),
        ["SPRINT-001", "hello-exists"]
    );
    assert_eq!(
        complete(&m, d, "git rails evidence green SPRINT-001 h"),
        ["hello-exists"]
    );
    assert_eq!(complete(&m, d, "git spar tri"), ["triage"]);
    assert_eq!(complete(&m, d, "git spar triage "), ["feature"]);
    assert_eq!(complete(&m, d, "git spar triage feature "), ["code-1"]);
    assert_eq!(
        complete(&m, d, "git spar run --stage plan"),
        ["plan", "plan-delta"]
    );
    // zsh and fish scripts come from the same clap tree.
    for (shell, want) in [
        ("zsh", "#compdef git-rails"),
        ("fish", "complete -c git-rails"),
    ] {
        repo.rails(&["completions", shell])
            .ok()
            .stdout_has(want)
            .stdout_has("contract");
    }
    repo.rails(&["completions", "tcsh"]).code(64);
}

#[test]
fn hooks_install_sets_up_the_remote_so_a_plain_push_carries_the_records() {
    let remote = tempfile::tempdir().unwrap();
    let bare = remote.path().join("r.git");
    let repo = TestRepo::new();
    repo.git(&["init", "-q", "--bare", &bare.display().to_string()]);
    repo.git(&["remote", "add", "origin", &bare.display().to_string()]);
    repo.draft_with(
        "S",
        json!([check("c", "file_exists", json!({"path": "README.md"}))]),
        json!({}),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    let out = repo.rails(&["hooks", "install"]);
    out.ok()
        .stderr_has("set up origin so plain `git push` / `git fetch` carry the records")
        .stderr_has("remote.origin.push = refs/rails/*:refs/rails/*");
    // Again: nothing to add, nothing said.
    let again = repo.rails(&["hooks", "install"]);
    again.ok();
    assert!(!again.stderr.contains("set up origin"), "{again}");
    // A plain `git push`, no remote or refspec named: the configured push refspecs apply.
    repo.git(&["push", "-q"]);
    let ls = repo.git(&["ls-remote", &bare.display().to_string()]);
    assert!(ls.contains("refs/rails/contracts/S"), "{ls}");
    assert!(ls.contains("refs/heads/main"), "{ls}");

    // --no-sync-setup leaves the remote's configuration alone.
    let other = TestRepo::new();
    other.git(&["remote", "add", "origin", &bare.display().to_string()]);
    other.rails(&["hooks", "install", "--no-sync-setup"]).ok();
    assert!(other
        .git_run(&["config", "--get-all", "remote.origin.push"])
        .stdout
        .is_empty());
    // No remote yet: said, nothing written.
    let lonely = TestRepo::new();
    lonely
        .rails(&["hooks", "install"])
        .ok()
        .stderr_has("no remote \"origin\" yet");
}

#[test]
fn first_run_messages_say_what_to_do() {
    let repo = TestRepo::new();
    repo.draft_with(
        "S",
        json!([check("c", "file_exists", json!({"path": "x"}))]),
        json!({}),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    repo.rails(&["contract", "bind", "S"]).ok();
    let out = repo.rails(&["evidence", "red"]);
    out.code(64)
        .stderr_has("no criterion given")
        .stderr_has("hint: git rails evidence red <criterion>; the criteria of S are: c");
    assert!(!out.stderr.contains("<SPRINT>"), "{out}");

    let empty = TestRepo::bare_init();
    let gate = empty.rails(&["gate", "S"]);
    gate.code(65)
        .stderr_has("there is no commit to judge yet")
        .stderr_has("hint: commit the work");
}

/// The README's demo runs both tools to their end: rails' gate passes, spar's reviewer finds
/// the real defect, the gate blocks on it, and passes once it is fixed and triaged.
#[test]
fn the_demo_runs_both_tools() {
    let bins = bin("git-rails").parent().unwrap().to_path_buf();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/demo.sh");
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = hermetic_command("sh", tmp.path(), tmp.path());
    // As a user runs it: the binaries on a PATH of system folders, temporary files in the test's.
    system_path(&mut cmd, &[&bins]);
    let out = Run::of(cmd.arg(&script).env("TMPDIR", tmp.path()));
    out.ok()
        .stdout_has("gate passed: SPRINT-001 v1 is done")
        .stdout_has("shout-check-F1 defect")
        .stdout_has("(exit 2)")
        .stdout_has("| fixed |")
        .stdout_has("spar gate: passed")
        .stdout_has("# spar feature code-1 (code)");
}
