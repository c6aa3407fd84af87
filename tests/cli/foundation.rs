//! Exit codes, messages, and the store's notes and compare-and-swap, through the binaries.

use crate::harness::{bin, check, hermetic_command, path_first, TestRepo};
use serde_json::json;

#[test]
fn usage_errors_exit_64() {
    let repo = TestRepo::new();
    repo.rails(&["contract", "freeze"])
        .code(64)
        .stderr_has("required");
    repo.rails(&["contract", "show", "S", "--bogus"]).code(64);
    repo.rails(&["nonsense"]).code(64);
    repo.rails(&[]).code(64);
    repo.spar(&["--bogus"]).code(64);
    // `gate` and `hook` are parsed by the smaller hot-path command: the same refusals.
    repo.rails(&["gate", "--bogus"])
        .code(64)
        .stderr_has("Usage: git rails gate");
    repo.rails(&["hook", "pre-push"])
        .code(64)
        .stderr_has("required");
    repo.rails(&["hook", "nonsense"]).code(64);
    repo.rails(&["hook"]).code(64);
}

#[test]
fn invalid_ids_exit_64_with_the_rule_they_broke() {
    let repo = TestRepo::new();
    for (id, rule) in [
        ("S-1.", "must not end with '.'"),
        ("S..1", "must not contain \"..\""),
        ("S.lock", "must not end with \".lock\""),
        ("_S", "must start with a letter or digit"),
        ("S/1", "only letters, digits"),
    ] {
        repo.rails(&["contract", "bind", id])
            .code(64)
            .stderr_has(rule);
        repo.rails(&["status", id]).code(64).stderr_has(rule);
        repo.rails(&["pipeline", "status", id])
            .code(64)
            .stderr_has(rule);
        repo.rails(&["evidence", "red", id, "c1"])
            .code(64)
            .stderr_has(rule);
    }
    repo.spar(&["show", "a."])
        .code(64)
        .stderr_has("series \"a.\" is not valid: it must not end with '.'");
    repo.spar(&["cap-report", "a..b"])
        .code(64)
        .stderr_has("must not contain \"..\"");
    // Nothing was written: no binding.
    assert_eq!(
        repo.git_run(&["config", "--get-regexp", "railsSprint"])
            .code,
        1
    );
}

#[test]
fn help_and_version_exit_0() {
    let repo = TestRepo::new();
    repo.rails(&["--help"]).ok().stdout_has("contract");
    repo.rails(&["gate", "--help"]).ok().stdout_has("--commit");
    repo.rails(&["hook", "--help"]).ok().stdout_has("pre-push");
    repo.rails(&["--version"])
        .ok()
        .stdout_has(env!("CARGO_PKG_VERSION"));
    repo.spar(&["--help"]).ok().stdout_has("reviewers");
}

/// The binaries start without std's start-up routine (src/cli/start.rs) and do what it did
/// that they rely on: a closed stdout or stdin is opened on /dev/null (so the output is not
/// written into some file the program opens next, and nothing fails), and a reader that goes
/// away ends the process quietly with 0 instead of a death by SIGPIPE.
#[test]
fn the_binaries_start_with_their_standard_descriptors_and_sigpipe_ignored() {
    use std::io::Read;
    use std::process::Stdio;
    let repo = TestRepo::new();
    for program in ["git-rails", "git-spar"] {
        let path = bin(program);
        for closing in ["exec 1>&-", "exec 0<&-", "exec 2>&-"] {
            let out = repo
                .program("sh")
                .args([
                    "-c",
                    &format!("{closing}; \"$0\" --version"),
                    &path.display().to_string(),
                ])
                .output()
                .unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{program} after {closing}: {out:?}"
            );
            assert!(out.stderr.is_empty(), "{program} after {closing}: {out:?}");
        }
        // What a child inherits as its stdout: /dev/null, not nothing (or a file of ours).
        let hooks = repo.path().join(".git/hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        let seen = repo.path().join("fd1.txt");
        let local = hooks.join("pre-push.local");
        std::fs::write(
            &local,
            format!(
                "#!/bin/sh\nreadlink /proc/self/fd/0 0<&1 > {0} 2>/dev/null || echo closed > {0}\nexit 0\n",
                seen.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&local, std::fs::Permissions::from_mode(0o755)).unwrap();
        if program == "git-rails" {
            let out = repo
                .program("sh")
                .env("RAILS_HOOK_DIR", &hooks)
                .args([
                    "-c",
                    "exec 1>&-; \"$0\" hook pre-push origin url < /dev/null",
                    &path.display().to_string(),
                ])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            assert_eq!(std::fs::read_to_string(&seen).unwrap().trim(), "/dev/null");
        }
        // A reader that reads one byte and goes away.
        let mut child = repo
            .command(program)
            .arg("--help")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut one = [0u8; 1];
        child.stdout.take().unwrap().read_exact(&mut one).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{program} --help into a closed pipe: {out:?}"
        );
    }
}

#[test]
fn git_finds_the_subcommands_on_path() {
    let repo = TestRepo::new();
    let dir = bin("git-rails").parent().unwrap().to_path_buf();
    let mut cmd = repo.program("git");
    // What this test is about, on top of the hermetic PATH (which has them first too).
    path_first(&mut cmd, &[&dir]);
    let out = cmd
        .args(["rails", "contract", "list", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "rails-contract-list/v1");
}

#[test]
fn outside_a_repository_is_refused_with_the_next_step() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = hermetic_command(bin("git-rails"), home.path(), dir.path())
        .args(["contract", "list"])
        .env("GIT_CEILING_DIRECTORIES", dir.path().parent().unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(65));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("git-rails: not in a git repository"),
        "{err}"
    );
    assert!(err.contains("hint: "), "{err}");
}

/// An error from inside git's libraries reaches the user as one readable line that keeps its
/// cause (here the configuration line that does not parse), never as a debug dump. gix's
/// `auto-chain-error` feature is what joins the causes; without it this message was
/// `Message { message: "Repository configuration could not be loaded" }` and a `Caused by:` block.
#[test]
fn a_broken_repository_configuration_is_reported_with_its_cause() {
    let repo = TestRepo::new();
    let config = repo.path().join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[core\n bare = x\n");
    std::fs::write(&config, text).unwrap();
    let out = repo.rails(&["gate"]);
    let err = &out.stderr;
    assert_ne!(out.code, 0, "{err}");
    let first = err.lines().next().unwrap_or_default();
    assert!(first.starts_with("git-rails: "), "{err}");
    assert!(
        first.contains("could not be loaded") && first.contains("unexpected token on line"),
        "the cause is on the message's own line: {err}"
    );
    assert!(
        !err.contains("Message {") && !err.contains("Caused by"),
        "{err}"
    );
}

#[test]
fn reports_append_to_notes_that_git_reads_across_fanout() {
    let repo = TestRepo::new();
    // 300 commits with notes written by git fast-import, which fans the notes tree out.
    let head = repo.git(&["rev-parse", "HEAD"]);
    let mut stream = String::new();
    for i in 1..=300 {
        let from = if i == 1 {
            format!("from {}", head.trim())
        } else {
            String::new()
        };
        stream.push_str(&format!(
            "commit refs/heads/main\nmark :{i}\ncommitter T <t@example.invalid> {} +0000\ndata 4\nc{:03}\n{from}\n",
            1_700_000_000 + i,
            i % 1000
        ));
    }
    stream.push_str("commit refs/notes/rails\ncommitter T <t@example.invalid> 1700009999 +0000\ndata 5\nnotes\n");
    for i in 1..=300 {
        let text = format!("git note {i}\n");
        stream.push_str(&format!("N inline :{i}\ndata {}\n{text}", text.len()));
    }
    stream.push('\n');
    let mut child = repo
        .program("git")
        .args(["fast-import", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    repo.git(&["reset", "-q", "--hard", "main"]);
    let tree = repo.git(&["ls-tree", "refs/notes/rails"]);
    assert!(
        tree.lines().any(|l| l.contains(" tree ")),
        "expected a fanned-out notes tree:\n{tree}"
    );
    repo.write("a.txt", "alpha\n");
    repo.draft(
        "S",
        json!([check("a", "file_exists", json!({"path": "a.txt"}))]),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    repo.rails(&["contract", "validate", "S"]).ok();
    repo.rails(&["contract", "validate", "S"]).ok();
    let note = repo.git(&["notes", "--ref=rails", "show", "HEAD"]);
    assert!(
        note.starts_with("git note 300\n\nrails validate S v1"),
        "{note}"
    );
    assert_eq!(note.matches("rails validate S v1").count(), 2, "{note}");
    assert_eq!(
        repo.git(&["notes", "--ref=rails", "list"]).lines().count(),
        300
    );
    repo.git(&["fsck", "--no-progress"]);
    // The note's last line is the machine-readable report.
    let last = note.lines().last().unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(last.strip_prefix("rails-validation/v1: ").unwrap()).unwrap();
    assert_eq!(doc["verdict"], "PASS");
}

#[test]
fn concurrent_freezes_one_wins_nothing_is_lost() {
    let repo = TestRepo::new();
    repo.write("a.txt", "alpha\n");
    repo.draft(
        "S",
        json!([check("a", "file_exists", json!({"path": "a.txt"}))]),
    );
    let children: Vec<_> = (0..6)
        .map(|_| {
            repo.command("git-rails")
                .args(["contract", "freeze", "S"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let codes: Vec<i32> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap().status.code().unwrap())
        .collect();
    assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 65).count(), 5, "{codes:?}");
    assert_eq!(
        repo.git(&["rev-list", "--count", "refs/rails/contracts/S"])
            .trim(),
        "1"
    );
}
