//! Freeze, versions, history, show, list, edit: frozen contracts in git, never rewritten.

use std::os::unix::fs::PermissionsExt;

use crate::harness::{check, TestRepo};
use serde_json::json;

fn one_check(repo: &TestRepo, sprint: &str, path: &str) {
    repo.draft(
        sprint,
        json!([check("a", "file_exists", json!({"path": path}))]),
    );
}

#[test]
fn freeze_creates_the_ref_once_and_makes_the_draft_read_only() {
    let repo = TestRepo::new();
    one_check(&repo, "SPRINT-001", "a.txt");
    let out = repo.rails(&["contract", "freeze", "SPRINT-001"]);
    out.ok().stdout_has("froze SPRINT-001 v1");
    let head = repo.git(&["rev-parse", "HEAD"]);
    let tip = repo.git(&["rev-parse", "refs/rails/contracts/SPRINT-001"]);
    // The tree holds contract.json; the message carries the trailers.
    let stored = repo.git(&["show", "refs/rails/contracts/SPRINT-001:contract.json"]);
    let v: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(v["sprintId"], "SPRINT-001");
    let msg = repo.git(&[
        "log",
        "-1",
        "--format=%B",
        "refs/rails/contracts/SPRINT-001",
    ]);
    assert!(msg.contains("Rails-Sprint: SPRINT-001"), "{msg}");
    assert!(msg.contains("Rails-Contract-Version: v1"), "{msg}");
    assert!(
        msg.contains(&format!("Rails-Base: {}", head.trim())),
        "{msg}"
    );
    let mode = std::fs::metadata(repo.path().join(".rails/contracts/SPRINT-001.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o444);

    // A second freeze is refused, says how to bump, and writes nothing.
    repo.rails(&["contract", "freeze", "SPRINT-001"])
        .code(65)
        .stderr_has("SPRINT-001 is already frozen at v1")
        .stderr_has("git rails contract edit SPRINT-001 --next")
        .stderr_has("--bump");
    assert_eq!(
        repo.git(&["rev-parse", "refs/rails/contracts/SPRINT-001"]),
        tip
    );
}

#[test]
fn bump_adds_versions_on_top_and_history_lists_them() {
    let repo = TestRepo::new();
    repo.rails(&["contract", "freeze", "S", "--bump"])
        .code(65)
        .stderr_has("no draft");
    one_check(&repo, "S", "a.txt");
    repo.rails(&["contract", "freeze", "S", "--bump"])
        .code(65)
        .stderr_has("S has no frozen version to bump")
        .stderr_has("git rails contract freeze S");
    repo.rails(&["contract", "freeze", "S"]).ok();
    let v1 = repo.git(&["rev-parse", "refs/rails/contracts/S"]);

    // Bumping an unchanged draft is refused.
    repo.rails(&["contract", "freeze", "S", "--bump"])
        .code(65)
        .stderr_has("equals the frozen v1");

    // Edit refused while the draft equals the tip; --next opens the next version.
    repo.rails_env(&["contract", "edit", "S"], &[("EDITOR", "true")])
        .code(65)
        .stderr_has("S is frozen at v1")
        .stderr_has("git rails contract edit S --next");
    let editor = repo.path().join("ed.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/\"a.txt\"/\"b.txt\"/' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    repo.rails_env(
        &["contract", "edit", "S", "--next"],
        &[("EDITOR", editor.to_str().unwrap())],
    )
    .ok()
    .stdout_has("freeze S --bump");
    repo.rails(&["contract", "freeze", "S", "--bump"])
        .ok()
        .stdout_has("S v1.1");

    one_check(&repo, "S", "c.txt");
    repo.rails(&["contract", "freeze", "S", "--bump"])
        .ok()
        .stdout_has("S v1.2");

    // v1 is untouched: the chain is v1 <- v1.1 <- v1.2.
    let chain = repo.git(&["rev-list", "--first-parent", "refs/rails/contracts/S"]);
    let ids: Vec<&str> = chain.lines().collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(ids[2], v1.trim());
    let old = repo.git(&["show", &format!("{}:contract.json", v1.trim())]);
    assert!(old.contains("a.txt"));

    let hist = repo.rails(&["contract", "history", "S"]);
    hist.ok()
        .stdout_has("v1 ")
        .stdout_has("v1.1 ")
        .stdout_has("v1.2 ")
        .stdout_has("changed the spec of check a");
    let j = repo.rails(&["contract", "history", "S", "--json"]).json();
    assert_eq!(j["schema"], "rails-contract-history/v1");
    let versions: Vec<&str> = j["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["v1", "v1.1", "v1.2"]);

    let show = repo
        .rails(&["contract", "show", "S", "--version", "v1", "--json"])
        .json();
    assert_eq!(show["schema"], "rails-contract/v1");
    assert_eq!(show["version"], "v1");
    assert_eq!(
        show["contract"]["dod"]["checks"][0]["spec"]["path"],
        "a.txt"
    );
    let newest = repo.rails(&["contract", "show", "S", "--json"]).json();
    assert_eq!(newest["version"], "v1.2");
    assert_eq!(
        newest["contract"]["dod"]["checks"][0]["spec"]["path"],
        "c.txt"
    );
    repo.rails(&["contract", "show", "S", "--version", "v9"])
        .code(65)
        .stderr_has("S has no version v9 (versions: v1, v1.1, v1.2)");
    repo.rails(&["contract", "show", "S"])
        .ok()
        .stdout_has("Contract S v1.2 [feature]");
}

#[test]
fn list_shows_every_frozen_sprint() {
    let repo = TestRepo::new();
    repo.rails(&["contract", "list"])
        .ok()
        .stderr_has("no frozen contracts yet");
    one_check(&repo, "A-1", "a.txt");
    one_check(&repo, "B-2", "b.txt");
    repo.rails(&["contract", "freeze", "A-1"]).ok();
    repo.rails(&["contract", "freeze", "B-2"]).ok();
    repo.rails(&["contract", "list"])
        .ok()
        .stdout_has("A-1")
        .stdout_has("B-2");
    let j = repo.rails(&["contract", "list", "--json"]).json();
    assert_eq!(j["sprints"].as_array().unwrap().len(), 2);
    assert_eq!(j["sprints"][0]["version"], "v1");
}

#[test]
fn edit_checks_the_draft_on_save_and_keeps_it() {
    let repo = TestRepo::new();
    repo.rails_env(&["contract", "edit", "S"], &[("EDITOR", "true")])
        .code(65)
        .stderr_has("git rails contract generate");
    one_check(&repo, "S", "a.txt");
    let editor = repo.path().join("ed.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/\"file_exists\"/\"no_such_kind\"/' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    repo.rails_env(
        &["contract", "edit", "S"],
        &[("VISUAL", editor.to_str().unwrap())],
    )
    .code(65)
    .stderr_has("dod.checks[0].kind")
    .stderr_has("git rails contract edit S");
    assert!(repo
        .read(".rails/contracts/S.json")
        .contains("no_such_kind"));
    // A failing editor leaves the draft and says so.
    repo.rails_env(&["contract", "edit", "S"], &[("EDITOR", "false")])
        .code(65)
        .stderr_has("editor");
}

#[test]
fn a_sprint_id_that_cannot_be_a_ref_is_a_usage_error() {
    let repo = TestRepo::new();
    repo.rails(&["contract", "freeze", "../x"])
        .code(64)
        .stderr_has("sprint id");
    repo.rails(&["contract", "show", "a b"]).code(64);
}

#[test]
fn a_draft_of_another_sprint_is_refused() {
    let repo = TestRepo::new();
    one_check(&repo, "S", "a.txt");
    std::fs::rename(
        repo.path().join(".rails/contracts/S.json"),
        repo.path().join(".rails/contracts/T.json"),
    )
    .unwrap();
    repo.rails(&["contract", "freeze", "T"])
        .code(65)
        .stderr_has("sprintId: \"S\" does not match the sprint T");
    repo.git_run(&["rev-parse", "--verify", "-q", "refs/rails/contracts/T"])
        .code(1);
}

/// A criterion never vanishes silently: a new version that removes a blocking criterion or
/// makes one non-blocking is refused unless `--drop <id> --reason <text>` names each one; the
/// version commit records them and status and gate show them. A version written with plain git
/// that drops one anyway blocks the gate.
#[test]
fn a_criterion_cannot_vanish_silently() {
    let repo = TestRepo::new();
    let c1 = check("c1", "file_exists", json!({"path": "a.txt"}));
    let c2 = check("c2", "file_exists", json!({"path": "b.txt"}));
    repo.draft("S", json!([c1, c2]));
    repo.rails(&["contract", "freeze", "S"]).ok();
    repo.rails(&["contract", "bind", "S"]).ok();
    repo.rails(&["evidence", "red", "c1"]).ok();
    repo.write("a.txt", "a\n");
    repo.commit_all("a");
    repo.rails(&["evidence", "green", "c1"]).ok();
    repo.rails(&["evidence", "surface", "c1", "--note", "PR"])
        .ok();
    repo.rails(&["evidence", "cleanup", "c1", "--note", "nothing started"])
        .ok();
    repo.rails(&["gate"]).code(2).stdout_has("c2 is pending");
    let tip = || repo.git(&["rev-parse", "refs/rails/contracts/S"]);
    let before = tip();

    // The attack: the failing criterion deleted in the next version.
    repo.draft("S", json!([c1.clone()]));
    repo.rails(&["contract", "freeze", "S", "--bump"])
        .code(65)
        .stderr_has("would drop a criterion without saying so: c2 (removed; blocking in v1)")
        .stderr_has("--drop c2 --reason");
    // Bad drops: no reason, an empty one, one that drops nothing, twice, without --bump.
    repo.rails(&["contract", "freeze", "S", "--bump", "--drop", "c2"])
        .code(64);
    repo.rails(&[
        "contract", "freeze", "S", "--bump", "--drop", "c2", "--reason", " ",
    ])
    .code(64);
    repo.rails(&[
        "contract", "freeze", "S", "--bump", "--drop", "c1", "--reason", "x",
    ])
    .code(65)
    .stderr_has("does not remove c1");
    repo.rails(&[
        "contract", "freeze", "S", "--bump", "--drop", "c2", "--drop", "c2", "--reason", "x",
    ])
    .code(64);
    repo.rails(&["contract", "freeze", "S", "--drop", "c2", "--reason", "x"])
        .code(64);
    // Making a blocking criterion non-blocking is dropping it too.
    let mut soft = c1.clone();
    soft["blocking"] = json!(false);
    repo.draft("S", json!([soft, c2.clone()]));
    repo.rails(&["contract", "freeze", "S", "--bump"])
        .code(65)
        .stderr_has("c1 (made non-blocking; blocking in v1)");
    assert_eq!(tip(), before, "a refused freeze wrote something");

    repo.draft("S", json!([c1.clone()]));
    repo.rails(&[
        "contract",
        "freeze",
        "S",
        "--bump",
        "--drop",
        "c2",
        "--reason",
        "moved to SPRINT-002",
    ])
    .ok()
    .stdout_has("dropped in v1.1: c2 (removed) — moved to SPRINT-002");
    let msg = repo.git(&["log", "-1", "--format=%B", "refs/rails/contracts/S"]);
    assert!(msg.contains("Rails-Dropped: c2"), "{msg}");
    let recorded: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", "refs/rails/contracts/S:dropped.json"])).unwrap();
    assert_eq!(recorded[0]["id"], "c2");
    assert_eq!(recorded[0]["reason"], "moved to SPRINT-002");
    repo.rails(&["gate"])
        .ok()
        .stdout_has("dropped in v1.1: c2 — moved to SPRINT-002");
    repo.rails(&["status"])
        .ok()
        .stdout_has("dropped in v1.1: c2 — moved to SPRINT-002");
    let doc = repo.rails(&["gate", "--json"]).ok().json();
    assert_eq!(doc["dropped"][0]["id"], "c2");
    assert_eq!(doc["dropped"][0]["version"], "v1.1");
    assert_eq!(doc["dropped"][0]["reason"], "moved to SPRINT-002");

    // A version written by hand that drops c1 with no record of it blocks the gate.
    let c3 = check("c3", "file_exists", json!({"path": "a.txt"}));
    let mut forged = crate::harness::contract("S", json!([c3]));
    forged["id"] = json!("01JDQ7ZK3M8T5V2W9X4Y6Z0ABD");
    repo.write(
        "forged.json",
        &serde_json::to_string_pretty(&forged).unwrap(),
    );
    let blob = repo.git(&["hash-object", "-w", "forged.json"]);
    let index = repo.path().join(".git/forged-index");
    let index = index.to_str().unwrap();
    let cacheinfo = format!("100644,{},contract.json", blob.trim());
    repo.git_env(
        &["update-index", "--add", "--cacheinfo", &cacheinfo],
        &[("GIT_INDEX_FILE", index)],
    )
    .ok();
    let tree = repo.git_env(&["write-tree"], &[("GIT_INDEX_FILE", index)]);
    let tree = tree.ok().stdout.clone();
    let parent = tip();
    let commit = repo.git(&[
        "commit-tree",
        tree.trim(),
        "-p",
        parent.trim(),
        "-m",
        "contract S v1.2\n\nRails-Sprint: S\nRails-Contract-Version: v1.2\nRails-Contract-Id: 01JDQ7ZK3M8T5V2W9X4Y6Z0ABD\nRails-Base: none",
    ]);
    repo.git(&["update-ref", "refs/rails/contracts/S", commit.trim()]);
    repo.rails(&["gate"]).code(2).stdout_has(
        "c1 was a blocking criterion in v1.1 and is gone in v1.2 with no recorded drop",
    );
}
