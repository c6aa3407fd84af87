//! Git 3.0 repositories (SHA-256 objects, reftable refs) in every profile, and the ref locks a
//! killed writer or a running git leaves behind.
//!
//! The whole suite also runs under the git3 profile (`RAILS_TEST_GIT_PROFILE=git3`); the tests
//! here name their formats themselves, so the default pass covers them too.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::harness::{check, path_with_bins, Run, TestRepo};
use serde_json::json;

/// The formats other than git's classic one (SHA-1 with files).
const FORMATS: [(&str, &str); 3] = [
    ("sha256", "files"),
    ("sha1", "reftable"),
    ("sha256", "reftable"),
];

fn frozen(repo: &TestRepo) {
    repo.draft(
        "S",
        json!([check("c1", "file_exists", json!({"path": "done.txt"}))]),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    repo.rails(&["contract", "bind", "S"]).ok();
}

fn prove(repo: &TestRepo) {
    repo.rails(&["evidence", "red", "c1"]).ok();
    repo.write("done.txt", "done\n");
    repo.commit_all("the work");
    repo.rails(&["evidence", "green", "c1"]).ok();
    repo.rails(&["evidence", "surface", "c1", "--note", "PR comment"])
        .ok();
    repo.rails(&["evidence", "cleanup", "c1", "--note", "nothing was started"])
        .ok();
}

fn id_len(objects: &str) -> usize {
    if objects == "sha256" {
        64
    } else {
        40
    }
}

fn rev(repo: &TestRepo, name: &str) -> Option<String> {
    let r = repo.git_run(&["rev-parse", "-q", "--verify", name]);
    (r.code == 0).then(|| r.stdout.trim().to_string())
}

#[test]
fn every_command_works_in_sha256_and_reftable_repositories() {
    for (objects, refs) in FORMATS {
        let repo = TestRepo::with_formats(objects, refs);
        assert_eq!(repo.ref_format(), refs);
        frozen(&repo);
        repo.rails(&["gate"]).code(2);
        prove(&repo);
        repo.rails(&["gate"])
            .ok()
            .stdout_has("gate passed: S v1 is done");
        let status = repo.rails(&["status", "--json"]);
        status.ok();
        let tip = rev(&repo, "refs/rails/evidence/S").unwrap();
        assert_eq!(tip.len(), id_len(objects), "{objects}/{refs}");
        let gate = repo.rails(&["gate", "--json"]);
        gate.ok();
        let head = rev(&repo, "HEAD").unwrap();
        assert!(gate.stdout.contains(&head), "{objects}/{refs}: {gate}");
        // The report note is where git reads it.
        repo.rails(&["contract", "validate", "S"]).ok();
        let note = repo.git(&["notes", "--ref=rails", "show", "HEAD"]);
        assert!(note.contains("PASS"), "{objects}/{refs}: {note}");
        // git sees every record; nothing was written beside the reftable as loose files.
        let listed = repo.git(&["for-each-ref", "--format=%(refname)"]);
        for name in [
            "refs/rails/contracts/S",
            "refs/rails/evidence/S",
            "refs/notes/rails",
        ] {
            assert!(listed.contains(name), "{objects}/{refs}: {listed}");
        }
        if refs == "reftable" {
            assert!(!repo.path().join(".git/refs/rails").exists());
            assert!(!repo.path().join(".git/refs/notes").exists());
        }
        repo.rails(&["hooks", "install"]).ok();
        repo.rails(&["doctor"]).ok().stdout_has("no problems found");
        repo.git_run(&["fsck", "--no-dangling", "--no-progress"])
            .ok();
    }
}

#[test]
fn spar_records_rounds_in_sha256_and_reftable_repositories() {
    for (objects, refs) in FORMATS {
        let repo = TestRepo::with_formats(objects, refs);
        repo.write("app/main.rs", "fn main() {}\n");
        repo.commit_all("base");
        let base = rev(&repo, "HEAD").unwrap();
        repo.write("app/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
        repo.commit_all("change");
        let head = rev(&repo, "HEAD").unwrap();
        let result = crate::spar_results::result(&head, vec![]);
        let out = repo.path().join("result.json");
        std::fs::write(&out, serde_json::to_string(&result).unwrap()).unwrap();
        let script = repo.home.path().join("reviewer.sh");
        std::fs::write(&script, format!("#!/bin/sh\ncat '{}'\n", out.display())).unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let user = repo.home.path().join("spar.toml");
        std::fs::write(
            &user,
            format!(
                "timeout_seconds = 30\n\n[[reviewers]]\nname = \"peer\"\npreset = \"command\"\nargv = [{}]\n",
                json!(script.display().to_string())
            ),
        )
        .unwrap();
        let mut cmd = repo.command("git-spar");
        cmd.args(["run", "--base", &base, "--series", "s"])
            .env("SPAR_CONFIG", &user)
            .env("XDG_CONFIG_HOME", repo.home.path().join("xdg"));
        let run = Run::of(&mut cmd);
        run.ok();
        let series = rev(&repo, "refs/spar/series/s").unwrap();
        assert_eq!(series.len(), id_len(objects));
        let files = repo.git(&["ls-tree", "-r", "--name-only", "refs/spar/series/s"]);
        assert!(files.contains("rounds/code-1/round.json"), "{files}");
        repo.spar(&["gate", "s:code-1"]).ok();
    }
}

/// A bare server and a clone, both in the given formats, hooks installed on both sides.
fn server_and_clone(objects: &str, refs: &str) -> (TestRepo, tempfile::TempDir) {
    let repo = TestRepo::with_formats(objects, refs);
    let remote = tempfile::tempdir().unwrap();
    repo.git(&[
        "init",
        "-q",
        "--bare",
        &format!("--object-format={objects}"),
        &format!("--ref-format={refs}"),
        remote.path().to_str().unwrap(),
    ]);
    repo.git(&["remote", "add", "origin", remote.path().to_str().unwrap()]);
    frozen(&repo);
    repo.rails(&["hooks", "install"]).ok();
    TestRepo::at(remote.path())
        .rails(&["hooks", "install"])
        .ok()
        .stdout_has("pre-receive");
    (repo, remote)
}

#[test]
fn hooks_and_the_receive_gate_work_on_sha256_and_reftable_servers() {
    for (objects, refs) in FORMATS {
        let (repo, remote) = server_and_clone(objects, refs);
        let server = TestRepo::at(remote.path());
        server.git(&["config", "rails.receiveGate", "true"]);
        let path = path_with_bins();
        let env = [("PATH", path.as_str())];
        // Records travel; the pre-push hook stops an unproven branch.
        repo.git_env(&["push", "origin", "refs/rails/contracts/S"], &env)
            .ok();
        // The commit names its sprint (the commit-msg hook adds the trailer on a bound branch).
        repo.git_env(
            &[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "work\n\nRails-Sprint: S",
            ],
            &env,
        )
        .ok();
        let out = repo.git_env(&["push", "origin", "main"], &env);
        assert_ne!(out.code, 0, "{objects}/{refs}: {out}");
        assert!(out.stderr.contains("S v1 is not done"), "{out}");
        // Past the client hook, the server's gate finds the frozen contract and judges it.
        prove(&repo);
        repo.git(&[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "ship\n\nRails-Sprint: S",
        ]);
        let out = repo.git_env(&["push", "--no-verify", "origin", "main"], &env);
        assert_ne!(out.code, 0, "{objects}/{refs}: {out}");
        assert!(
            out.stderr
                .contains("update of refs/heads/main refused: S v1 is not done"),
            "{objects}/{refs}: {out}"
        );
        assert!(!out.stderr.contains("no frozen contract"), "{out}");
        // With the evidence in the push (new refs: the zero id of the format), both hooks pass.
        repo.git_env(&["push", "origin", "main", "refs/rails/evidence/S"], &env)
            .ok();
        assert_eq!(
            server.git(&["rev-parse", "refs/heads/main"]).trim(),
            rev(&repo, "HEAD").unwrap()
        );
        // Records are never deleted on the server.
        let out = repo.git_env(&["push", "origin", ":refs/rails/evidence/S"], &env);
        assert_ne!(out.code, 0, "{out}");
        assert!(out.stderr.contains("records are never deleted"), "{out}");
    }
}

#[test]
fn sync_between_two_clones_through_sha256_and_reftable_servers() {
    for (objects, refs) in FORMATS {
        let (a, remote) = server_and_clone(objects, refs);
        let path = path_with_bins();
        a.git_env(&["push", "-q", "origin", "main"], &[("RAILS_SKIP", "1")])
            .ok();
        let dir = tempfile::tempdir().unwrap();
        let b_path = dir.path().join("b");
        // On main, whatever the server's HEAD names: a RED is recorded on a commit.
        a.git(&[
            "clone",
            "-q",
            "-b",
            "main",
            &format!("--ref-format={refs}"),
            remote.path().to_str().unwrap(),
            b_path.to_str().unwrap(),
        ]);
        let b = TestRepo::at(&b_path);
        assert_eq!(b.ref_format(), refs);
        a.rails(&["evidence", "red", "S", "c1"]).ok();
        a.rails(&["contract", "validate", "S"]).code(1);
        a.rails(&["sync"]).ok();
        let run = b.rails_env(&["sync", "--json"], &[("PATH", path.as_str())]);
        run.ok();
        for name in [
            "refs/rails/contracts/S",
            "refs/rails/evidence/S",
            "refs/notes/rails",
        ] {
            assert_eq!(rev(&b, name), rev(&a, name), "{objects}/{refs} {name}");
        }
        b.rails(&["status", "S"]).ok().stdout_has("[red]");
        // Each side writes, both sync: both hold both records.
        b.rails(&["evidence", "red", "S", "c1"]).ok();
        a.rails(&["contract", "validate", "S"]).code(1);
        b.rails(&["sync"]).ok();
        a.rails(&["sync"]).ok();
        b.rails(&["sync"]).ok();
        assert_eq!(
            rev(&a, "refs/rails/evidence/S"),
            rev(&b, "refs/rails/evidence/S")
        );
        assert_eq!(rev(&a, "refs/notes/rails"), rev(&b, "refs/notes/rails"));
    }
}

/// A `git` that says it is `version` and fails every other command the way a git that does
/// not know the repository's format fails.
fn old_git(version: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("git");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'git version {version}'; exit 0; fi\necho 'fatal: unknown repository extension found:' >&2\necho '\trefstorage' >&2\nexit 128\n"
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!("{}:/usr/bin:/bin", dir.path().display());
    (dir, path)
}

#[test]
fn a_git_too_old_for_the_repository_is_named_not_an_internal_error() {
    let repo = TestRepo::with_formats("sha256", "reftable");
    frozen(&repo);
    let (_git, path) = old_git("2.39.5");
    let before = rev(&repo, "refs/rails/evidence/S");
    let run = repo.rails_env(&["evidence", "red", "c1"], &[("PATH", &path)]);
    run.code(65)
        .stderr_has("git version 2.39.5 is too old for this repository")
        .stderr_has("reftable")
        .stderr_has("needs git 2.45 or newer")
        .stderr_has("hint: install a newer git");
    assert_eq!(rev(&repo, "refs/rails/evidence/S"), before);
    // Reading needs no git at all: the refs are read from the reftable files in process.
    repo.rails_env(&["gate"], &[("PATH", &path)])
        .code(2)
        .stdout_has("S v1 is not done");
    repo.rails_env(&["status"], &[("PATH", &path)]).ok();
    // SHA-256 objects with files refs: the commands that ask git name the version they need.
    let repo = TestRepo::with_formats("sha256", "files");
    frozen(&repo);
    let run = repo.rails_env(&["evidence", "red", "c1"], &[("PATH", &path)]);
    let (_git, path) = old_git("2.28.0");
    let run28 = repo.rails_env(&["evidence", "red", "c1"], &[("PATH", &path)]);
    run28
        .code(65)
        .stderr_has("git version 2.28.0 is too old for this repository")
        .stderr_has("SHA-256")
        .stderr_has("needs git 2.29 or newer");
    // 2.39 reads SHA-256 repositories: its own failure is reported as it is, not as too old.
    assert_ne!(run.code, 65, "{run}");
    assert!(!run.stderr.contains("too old"), "{run}");
}

#[test]
fn a_packed_refs_lock_left_behind_does_not_stop_records_and_doctor_reports_it() {
    let repo = TestRepo::with_formats("sha1", "files");
    frozen(&repo);
    repo.rails(&["hooks", "install"]).ok();
    repo.rails(&["evidence", "red", "c1"]).ok();
    repo.git(&["pack-refs", "--all"]);
    assert!(!repo.path().join(".git/refs/rails/evidence/S").exists());
    let before = rev(&repo, "refs/rails/evidence/S").unwrap();
    // A `git pack-refs` that died (or one still running) leaves packed-refs.lock.
    let lock = repo.path().join(".git/packed-refs.lock");
    std::fs::write(&lock, "").unwrap();
    // Records move without it: a loose ref overrides its packed copy.
    repo.write("done.txt", "done\n");
    repo.commit_all("the work");
    repo.rails(&["evidence", "green", "c1"]).ok();
    let after = rev(&repo, "refs/rails/evidence/S").unwrap();
    assert_ne!(before, after);
    assert!(
        repo.git_run(&["merge-base", "--is-ancestor", &before, &after])
            .code
            == 0
    );
    repo.rails(&["contract", "validate", "S"]).ok();
    assert!(
        lock.exists(),
        "a lock a running git may hold is never removed"
    );
    // doctor names it and the remedy.
    let run = repo.rails(&["doctor", "--json"]);
    run.code(1);
    let finding = run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "stale-lock")
        .cloned()
        .unwrap_or_else(|| panic!("no stale-lock finding:\n{run}"));
    assert_eq!(finding["fix"], format!("rm '{}'", lock.display()));
    assert!(finding["what"]
        .as_str()
        .unwrap()
        .contains("no git command is running"));
    repo.rails(&["doctor"])
        .code(1)
        .stdout_has("packed-refs.lock");
    // Removed as told, git packs again.
    std::fs::remove_file(&lock).unwrap();
    repo.git(&["pack-refs", "--all"]);
    assert_eq!(rev(&repo, "refs/rails/evidence/S").unwrap(), after);
    repo.rails(&["doctor"]).ok();
}

/// A lock file of `git`'s that a running git may hold: the write waits briefly, fails with 75
/// naming it and the remedy, and leaves it (and the ref) alone.
fn assert_temporary_failure(repo: &TestRepo, lock: &Path) {
    std::fs::write(lock, "").unwrap();
    let before = rev(repo, "refs/rails/evidence/S");
    let started = Instant::now();
    let run = repo.rails(&["evidence", "red", "c1"]);
    run.code(75)
        .stderr_has(&format!("{} exists", lock.display()))
        .stderr_has("nothing was written")
        .stderr_has(&format!("rm '{}'", lock.display()));
    assert!(started.elapsed() >= Duration::from_millis(500), "{run}");
    assert!(lock.exists());
    assert_eq!(rev(repo, "refs/rails/evidence/S"), before);
    repo.rails(&["doctor"])
        .code(1)
        .stdout_has(&lock.display().to_string());
    std::fs::remove_file(lock).unwrap();
    repo.rails(&["evidence", "red", "c1"]).ok();
}

#[test]
fn a_lock_a_running_git_may_hold_is_never_removed_and_the_write_exits_75() {
    let repo = TestRepo::with_formats("sha1", "files");
    frozen(&repo);
    repo.rails(&["evidence", "red", "c1"]).ok();
    // A fresh lock of the ref nobody of ours noted: git may be moving it right now.
    assert_temporary_failure(&repo, &repo.path().join(".git/refs/rails/evidence/S.lock"));
    // reftable has one lock for every ref.
    let repo = TestRepo::with_formats("sha256", "reftable");
    frozen(&repo);
    assert_temporary_failure(&repo, &repo.path().join(".git/reftable/tables.list.lock"));
}

#[test]
fn a_lock_left_by_a_killed_writer_of_ours_is_recognised_and_recovered_at_once() {
    let repo = TestRepo::with_formats("sha1", "files");
    frozen(&repo);
    repo.rails(&["evidence", "red", "c1"]).ok();
    // What a writer killed between creating the ref lock and renaming it leaves: the lock, and
    // its note of it in our writer lock (same file: device and inode).
    let lock = repo.path().join(".git/refs/rails/evidence/S.lock");
    std::fs::write(&lock, "").unwrap();
    let m = std::fs::metadata(&lock).unwrap();
    use std::os::unix::fs::MetadataExt;
    std::fs::write(
        repo.path().join(".git/rails/locks/refs.lock"),
        format!("{}\t{}\t{}\n", lock.display(), m.dev(), m.ino()),
    )
    .unwrap();
    let started = Instant::now();
    repo.rails(&["evidence", "red", "c1"]).ok();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!lock.exists());
    // Real kills at every moment of a write: the next write never fails.
    for i in 0..12u64 {
        let mut child = repo.command("git-rails");
        child.args(["evidence", "cleanup", "S", "c1", "--note", &format!("k{i}")]);
        let mut child = child.spawn().unwrap();
        std::thread::sleep(Duration::from_millis(3 * i));
        let _ = child.kill();
        let _ = child.wait();
        repo.rails(&[
            "evidence",
            "cleanup",
            "S",
            "c1",
            "--note",
            &format!("after {i}"),
        ])
        .ok();
    }
    repo.git_run(&["fsck", "--no-dangling", "--no-progress"])
        .ok();
}

#[test]
fn ids_that_cannot_be_ref_names_are_usage_errors() {
    let repo = TestRepo::new();
    for args in [
        vec!["gate", "S."],
        vec!["evidence", "red", "S.", "c1"],
        vec!["status", "S."],
    ] {
        let run = repo.rails(&args);
        run.code(64)
            .stderr_has("sprint id \"S.\" is not valid: it must not end with '.'");
    }
    // spar's gate refuses the series id at the edge, with the rule it broke.
    repo.spar(&["gate", "S.:code-1"])
        .code(64)
        .stderr_has("series \"S.\" is not valid: it must not end with '.'");
}
