//! Concurrent writers lose nothing; a writer killed mid-write leaves the previous state
//! readable and the next command works.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::harness::{check, TestRepo};
use serde_json::json;

fn frozen_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.draft(
        "S",
        json!([check(
            "c1",
            "command_success",
            json!({"command": "test -f done"})
        )]),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    repo
}

fn cleanup_cmd(repo: &TestRepo, note: &str) -> Command {
    let mut cmd = repo.command("git-rails");
    cmd.args(["evidence", "cleanup", "S", "c1", "--note", note])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

fn receipts(repo: &TestRepo) -> Vec<String> {
    let state: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", "refs/rails/evidence/S:state.json"])).unwrap();
    let count = state["criteria"]["c1"]["cleanupReceipts"]
        .as_u64()
        .unwrap_or(0);
    (1..=count)
        .map(|n| {
            let file = repo.git(&[
                "show",
                &format!("refs/rails/evidence/S:cycles/c1/1/cleanup-{n}.json"),
            ]);
            let receipt: serde_json::Value = serde_json::from_str(&file).unwrap();
            receipt["note"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn twenty_concurrent_cleanups_leave_twenty_receipts() {
    let repo = frozen_repo();
    let children: Vec<_> = (0..20)
        .map(|i| cleanup_cmd(&repo, &format!("receipt {i}")).spawn().unwrap())
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut got = receipts(&repo);
    got.sort();
    let mut want: Vec<String> = (0..20).map(|i| format!("receipt {i}")).collect();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(
        repo.git(&["rev-list", "--count", "refs/rails/evidence/S"])
            .trim(),
        "20"
    );
    // Each receipt is also its own file in the tree.
    let files = repo.git(&["ls-tree", "-r", "--name-only", "refs/rails/evidence/S"]);
    assert_eq!(
        files.lines().filter(|l| l.contains("/cleanup-")).count(),
        20,
        "{files}"
    );
}

#[test]
fn a_writer_killed_mid_write_leaves_the_previous_state() {
    let repo = frozen_repo();
    repo.rails(&["evidence", "cleanup", "S", "c1", "--note", "first"])
        .ok();
    for i in 0..14u64 {
        let mut child = cleanup_cmd(&repo, &format!("killed {i}")).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(i * 4));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        // Whatever moment it died at, the state reads, and it is one of the two whole states.
        let status = repo.rails(&["status", "S", "--json"]);
        status.ok();
        let n = receipts(&repo).len();
        let commits: usize = repo
            .git(&["rev-list", "--count", "refs/rails/evidence/S"])
            .trim()
            .parse()
            .unwrap();
        assert_eq!(n, commits, "state and chain disagree after kill {i}");
    }
    // The next command works, even if a kill left git's ref lock behind. (A loose ref's lock:
    // reftable has one lock for all refs, which a running git may hold; tests/cli/git3.rs.)
    if repo.ref_format() == "reftable" {
        return;
    }
    let lock = repo.path().join(".git/refs/rails/evidence/S.lock");
    std::fs::write(&lock, "").unwrap();
    repo.git(&["update-ref", "--no-deref", "refs/x", "HEAD"]);
    crate::harness::age(&lock, Duration::from_secs(60));
    repo.rails(&["evidence", "cleanup", "S", "c1", "--note", "after"])
        .ok();
    assert!(receipts(&repo).contains(&"after".to_string()));
    assert!(!lock.exists());
    let fsck = repo.git_run(&["fsck", "--no-dangling", "--no-progress"]);
    fsck.ok();
}
