//! `git rails sync` / `git spar sync`, `--setup`, `doctor`, and the pre-receive hook on a shared
//! bare remote (issue 9). Every test is a team: a bare remote with our pre-receive hook
//! installed and clones of it, each a real git repository driven through the real binaries.
//! Concurrency is real too: clones write before they sync, and the last test runs three clones
//! in threads.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::harness::{check, Run, TestRepo};

/// A bare remote (pre-receive installed) and clones of it.
struct Team {
    dir: tempfile::TempDir,
    remote: TestRepo,
    clones: Vec<TestRepo>,
    base: String,
    head: String,
}

const PROJECT: &str = "check_paths = [\"checks/**\"]\n[caps]\ncode = 1000\n";

fn team(n: usize) -> Team {
    let dir = tempfile::tempdir().unwrap();
    let origin = TestRepo::new();
    origin.write(".jaekit/spar.toml", PROJECT);
    origin.write(".gitignore", "proof-*\n");
    origin.write("app/main.rs", "fn main() {}\n");
    origin.commit_all("base");
    origin.write("app/main.rs", "fn main() {\n    println!(\"hello\");\n}\n");
    origin.commit_all("change");
    let base = origin.git(&["rev-parse", "HEAD~1"]).trim().to_string();
    let head = origin.git(&["rev-parse", "HEAD"]).trim().to_string();
    let bare = dir.path().join("remote.git");
    origin.git(&[
        "clone",
        "-q",
        "--bare",
        &origin.path().display().to_string(),
        &bare.display().to_string(),
    ]);
    let remote = TestRepo::at(&bare);
    remote.rails(&["hooks", "install"]).ok();
    assert!(bare.join("hooks/pre-receive").exists());
    let clones = (0..n)
        .map(|i| {
            let path = dir.path().join(format!("clone-{i}"));
            origin.git(&[
                "clone",
                "-q",
                &bare.display().to_string(),
                &path.display().to_string(),
            ]);
            TestRepo::at(&path)
        })
        .collect();
    // The origin repository is not needed any more: everything goes through the bare remote.
    drop(origin);
    Team {
        dir,
        remote,
        clones,
        base,
        head,
    }
}

impl Team {
    fn tmp(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// A command reviewer for clone `i`: a clean result for HEAD, naming the clone.
    fn reviewer(&self, i: usize) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let mut result = crate::spar_results::result("HEADSHA", vec![]);
        result["limits"] = json!(format!("clone {i}"));
        let script = self.tmp(&format!("reviewer-{i}.sh"));
        let repo = self.clones[i].path().display().to_string();
        let body = serde_json::to_string(&result)
            .unwrap()
            .replace("HEADSHA", "'\"$head\"'");
        std::fs::write(
            &script,
            format!("#!/bin/sh\nhead=$(git -C '{repo}' rev-parse HEAD)\necho '{body}'\n"),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let user = self.tmp(&format!("user-{i}.toml"));
        std::fs::write(
            &user,
            format!(
                "timeout_seconds = 30\n\n[[reviewers]]\nname = \"peer\"\npreset = \"command\"\nargv = [{}]\n",
                json!(script.display().to_string())
            ),
        )
        .unwrap();
        std::fs::create_dir_all(self.tmp("xdg")).unwrap();
        user
    }

    /// `git spar <args>` in clone `i`, with its reviewer.
    fn spar(&self, i: usize, args: &[&str]) -> Run {
        let user = self.reviewer(i);
        let mut cmd = self.clones[i].command("git-spar");
        cmd.args(args)
            .env("SPAR_CONFIG", user)
            .env("XDG_CONFIG_HOME", self.tmp("xdg"));
        Run::of(&mut cmd)
    }

    fn review(&self, i: usize, series: &str) -> Run {
        self.spar(i, &["run", "--base", &self.base, "--series", series])
    }
}

/// Every record ref of a repository with its oid.
fn records(repo: &TestRepo) -> BTreeMap<String, String> {
    repo.git(&[
        "for-each-ref",
        "--format=%(refname) %(objectname)",
        "refs/rails/",
        "refs/spar/",
        "refs/notes/rails",
        "refs/notes/spar",
    ])
    .lines()
    .filter_map(|l| l.split_once(' '))
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect()
}

fn rev(repo: &TestRepo, name: &str) -> Option<String> {
    let r = repo.git_run(&["rev-parse", "-q", "--verify", name]);
    (r.code == 0).then(|| r.stdout.trim().to_string())
}

fn show(repo: &TestRepo, spec: &str) -> String {
    repo.git(&["show", spec])
}

fn state(repo: &TestRepo, sprint: &str) -> Value {
    serde_json::from_str(&show(
        repo,
        &format!("refs/rails/evidence/{sprint}:state.json"),
    ))
    .unwrap()
}

/// The notes of a criterion's cleanup receipts in its current cycle, in order: state.json keeps
/// their count, each receipt is its own `cycles/<id>/<cycle>/cleanup-N.json`.
fn receipt_notes(repo: &TestRepo, sprint: &str, id: &str) -> Vec<String> {
    let c = &state(repo, sprint)["criteria"][id];
    let (count, cycle) = (c["cleanupReceipts"].as_u64().unwrap_or(0), &c["cycle"]);
    (1..=count)
        .map(|n| {
            let file = show(
                repo,
                &format!("refs/rails/evidence/{sprint}:cycles/{id}/{cycle}/cleanup-{n}.json"),
            );
            let receipt: Value = serde_json::from_str(&file).unwrap();
            receipt["note"].as_str().unwrap().to_string()
        })
        .collect()
}

fn needs_file(id: &str, file: &str) -> Value {
    check(
        id,
        "command_success",
        json!({"command": format!("test -f {file}")}),
    )
}

fn is_ancestor(repo: &TestRepo, a: &str, b: &str) -> bool {
    repo.git_run(&["merge-base", "--is-ancestor", a, b]).code == 0
}

fn freeze(repo: &TestRepo, sprint: &str, checks: Value) {
    repo.draft(sprint, checks);
    repo.rails(&["contract", "freeze", sprint]).ok();
}

#[test]
fn records_travel_and_the_remote_receives_them() {
    let t = team(2);
    let (a, b) = (&t.clones[0], &t.clones[1]);
    freeze(a, "S", json!([needs_file("c1", "proof-1")]));
    a.rails(&["evidence", "red", "S", "c1"]).ok();
    let run = a.rails(&["sync", "--json"]);
    run.ok();
    let doc = run.json();
    assert_eq!(doc["schema"], "rails-sync/v1");
    let pushed: BTreeSet<String> = doc["pushed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert!(pushed.contains("refs/rails/contracts/S"), "{run}");
    assert!(pushed.contains("refs/rails/evidence/S"), "{run}");
    assert_eq!(records(&t.remote), records(a));

    // The other clone gets them; nothing of its own is lost, nothing is pushed twice.
    b.rails(&["sync"]).ok().stdout_has("synced with origin");
    assert_eq!(records(b), records(a));
    b.rails(&["status", "S", "--json"]).ok();
    let again = b.rails(&["sync", "--json"]);
    again.ok();
    assert_eq!(again.json()["pushed"], json!([]));
    // Staged under refs/rails-sync/origin/, never over the local records.
    assert_eq!(
        rev(b, "refs/rails-sync/origin/rails/contracts/S"),
        rev(b, "refs/rails/contracts/S")
    );
    // git spar sync is the same implementation.
    t.spar(1, &["sync"]).ok();
}

/// Evidence proven on a work tree that was never committed as such: the tree it observed
/// travels with the evidence ref, so another clone judges staleness against it after a sync.
#[test]
fn the_trees_evidence_observed_travel_with_it() {
    let t = team(2);
    let (a, b) = (&t.clones[0], &t.clones[1]);
    let mut c1 = needs_file("c1", "app/feature.rs");
    c1["scope"] = json!(["app/**"]);
    freeze(a, "S", json!([c1]));
    a.rails(&["evidence", "red", "S", "c1"]).ok();
    a.write("app/feature.rs", "pub fn feature() {}\n");
    a.write("notes.txt", "draft, not committed with the feature\n");
    a.git(&["add", "app/feature.rs", "notes.txt"]);
    let green = a.rails(&["evidence", "green", "S", "c1", "--json"]);
    green.ok();
    let observed = green.json()["record"]["tree"].as_str().unwrap().to_string();
    a.rails(&["evidence", "surface", "S", "c1", "--note", "demo"])
        .ok();
    a.rails(&[
        "evidence",
        "cleanup",
        "S",
        "c1",
        "--note",
        "nothing was started",
    ])
    .ok();
    // The observed tree (with notes.txt) is never committed; the commit holds the feature only.
    a.git(&["commit", "-q", "-m", "feature", "--", "app/feature.rs"]);
    assert_ne!(a.git(&["rev-parse", "HEAD^{tree}"]).trim(), observed);
    assert_eq!(
        a.git(&[
            "rev-parse",
            &format!("refs/rails/evidence/S:trees/{observed}")
        ])
        .trim(),
        observed
    );
    a.git(&["push", "-q", "origin", "HEAD"]);
    a.rails(&["sync"]).ok();

    b.rails(&["sync"]).ok();
    b.git(&["pull", "-q", "--ff-only"]);
    assert_eq!(
        b.git_run(&["cat-file", "-t", &observed]).stdout.trim(),
        "tree"
    );
    b.rails(&["gate", "S"]).ok().stdout_has("done");
}

#[test]
fn contract_versions_frozen_twice_are_a_conflict_reported_with_the_settling_command() {
    let t = team(2);
    let (a, b) = (&t.clones[0], &t.clones[1]);
    freeze(a, "S", json!([needs_file("c1", "proof-a")]));
    freeze(b, "S", json!([needs_file("c1", "proof-b")]));
    let b_tip = rev(b, "refs/rails/contracts/S").unwrap();
    a.rails(&["sync"]).ok();
    let a_tip = rev(a, "refs/rails/contracts/S").unwrap();

    let run = b.rails(&["sync"]);
    run.code(1)
        .stderr_has("conflict: refs/rails/contracts/S")
        .stderr_has(&a_tip)
        .stderr_has(&b_tip)
        .stderr_has("git rails sync --keep-remote S origin && git rails contract freeze S --bump");
    // Both digests (contract.json blob ids) are named.
    for (repo, tip) in [(a, &a_tip), (b, &b_tip)] {
        let digest = repo.git(&["rev-parse", &format!("{tip}:contract.json")]);
        assert!(run.stderr.contains(digest.trim()), "{run}");
    }
    // Nothing merged, nothing deleted: each side keeps its own; the remote keeps A's.
    assert_eq!(rev(b, "refs/rails/contracts/S").unwrap(), b_tip);
    assert_eq!(rev(&t.remote, "refs/rails/contracts/S").unwrap(), a_tip);
    let json_run = b.rails(&["sync", "--json"]);
    json_run.code(1);
    let c = &json_run.json()["conflicts"][0];
    assert_eq!(c["kind"], "contract-version");
    assert_eq!(c["local"][0]["version"], "v1");
    assert_eq!(c["remote"][0]["commit"], json!(a_tip));

    // Settle as the report says: keep the remote's, bump this clone's content on top.
    b.rails(&["sync", "--keep-remote", "S", "origin"])
        .ok()
        .stdout_has("git rails contract freeze S --bump");
    assert_eq!(
        rev(b, &format!("refs/rails-sync/kept/contracts/S/{b_tip}")).unwrap(),
        b_tip
    );
    b.rails(&["contract", "freeze", "S", "--bump"]).ok();
    b.rails(&["sync"]).ok();
    a.rails(&["sync"]).ok();
    let tip = rev(a, "refs/rails/contracts/S").unwrap();
    assert_eq!(rev(&t.remote, "refs/rails/contracts/S").unwrap(), tip);
    assert!(is_ancestor(a, &a_tip, &tip));
    let v11: Value =
        serde_json::from_str(&show(a, "refs/rails/contracts/S:contract.json")).unwrap();
    assert_eq!(
        v11["dod"]["checks"][0]["spec"]["command"],
        "test -f proof-b"
    );
}

#[test]
fn diverged_evidence_is_the_union_replayed_in_time_order() {
    let t = team(2);
    let (a, b) = (&t.clones[0], &t.clones[1]);
    freeze(
        a,
        "S",
        json!([needs_file("c1", "proof-1"), needs_file("c2", "proof-2")]),
    );
    a.rails(&["sync"]).ok();
    b.rails(&["sync"]).ok();
    // Both write at the same time, on different criteria, and one shared receipt each.
    a.rails(&["evidence", "red", "S", "c1"]).ok();
    b.rails(&["evidence", "red", "S", "c2"]).ok();
    a.rails(&["evidence", "cleanup", "S", "c1", "--note", "from a"])
        .ok();
    b.rails(&["evidence", "cleanup", "S", "c1", "--note", "from b"])
        .ok();
    let (a_tip, b_tip) = (
        rev(a, "refs/rails/evidence/S").unwrap(),
        rev(b, "refs/rails/evidence/S").unwrap(),
    );
    a.rails(&["sync"]).ok();
    b.rails(&["sync"])
        .ok()
        .stderr_has("refs/rails/evidence/S: merged");
    a.rails(&["sync"]).ok();
    let tip = rev(a, "refs/rails/evidence/S").unwrap();
    assert_eq!(rev(b, "refs/rails/evidence/S").unwrap(), tip);
    assert_eq!(rev(&t.remote, "refs/rails/evidence/S").unwrap(), tip);
    // Both tips are parents: every record stays in history.
    assert!(is_ancestor(a, &a_tip, &tip) && is_ancestor(a, &b_tip, &tip));
    let s = state(a, "S");
    assert_eq!(s["criteria"]["c1"]["status"], "red");
    assert_eq!(s["criteria"]["c2"]["status"], "red");
    let notes = receipt_notes(a, "S", "c1");
    assert_eq!(notes, ["from a", "from b"], "in time order, each once");
    let files = a.git(&["ls-tree", "-r", "--name-only", &tip]);
    for f in [
        "cycles/c1/1/red.json",
        "cycles/c2/1/red.json",
        "cycles/c1/1/cleanup-1.json",
        "cycles/c1/1/cleanup-2.json",
    ] {
        assert!(files.lines().any(|l| l == f), "{f} missing:\n{files}");
    }
    // The gate and status read the merged chain.
    a.rails(&["status", "S"]).ok();
}

#[test]
fn a_transition_that_became_illegal_is_kept_in_history_and_reported_never_applied() {
    let t = team(2);
    let (a, b) = (&t.clones[0], &t.clones[1]);
    freeze(a, "S", json!([needs_file("c1", "proof-1")]));
    a.rails(&["sync"]).ok();
    b.rails(&["sync"]).ok();
    // A surfaces c1 first; B, later, records its own RED and GREEN of the same criterion.
    a.rails(&["evidence", "red", "S", "c1"]).ok();
    a.write("proof-1", "x");
    a.git(&["add", "-f", "proof-1"]);
    a.rails(&["evidence", "green", "S", "c1"]).ok();
    a.rails(&["evidence", "surface", "S", "c1", "--note", "seen in CI"])
        .ok();
    b.rails(&["evidence", "red", "S", "c1"]).ok();
    b.write("proof-1", "x");
    b.git(&["add", "-f", "proof-1"]);
    b.rails(&["evidence", "green", "S", "c1"]).ok();
    let b_tip = rev(b, "refs/rails/evidence/S").unwrap();
    a.rails(&["sync"]).ok();
    let run = b.rails(&["sync", "--json"]);
    // Settled by the merge (the transition is reported, kept in history): exit 0.
    run.code(0);
    let doc = run.json();
    let rejected: Vec<String> = doc["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["transition"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(rejected, ["red c1", "green c1"], "{run}");
    assert!(doc["rejected"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("already surfaced"));
    let tip = rev(b, "refs/rails/evidence/S").unwrap();
    assert!(
        is_ancestor(b, &b_tip, &tip),
        "B's transitions stay in history"
    );
    assert_eq!(rev(&t.remote, "refs/rails/evidence/S").unwrap(), tip);
    let s = state(b, "S");
    assert_eq!(s["criteria"]["c1"]["status"], "surfaced");
    // The applied records are A's; B's are kept under rejected/ in the tree.
    let a_red = show(a, "refs/rails/evidence/S:cycles/c1/1/red.json");
    assert_eq!(show(b, &format!("{tip}:cycles/c1/1/red.json")), a_red);
    let files = b.git(&["ls-tree", "-r", "--name-only", &tip]);
    assert_eq!(
        files.lines().filter(|l| l.starts_with("rejected/")).count(),
        4,
        "two records and two logs:\n{files}"
    );
    // The next sync of A fast-forwards to the merge and reports nothing.
    a.rails(&["sync"]).ok();
    assert_eq!(rev(a, "refs/rails/evidence/S").unwrap(), tip);
    // A later divergence of the same chain merges cleanly: what an earlier merge refused is
    // not reported again.
    a.rails(&[
        "evidence",
        "cleanup",
        "S",
        "c1",
        "--note",
        "a: nothing was started",
    ])
    .ok();
    b.rails(&[
        "evidence",
        "cleanup",
        "S",
        "c1",
        "--note",
        "b: nothing was started",
    ])
    .ok();
    a.rails(&["sync"]).ok();
    let run = b.rails(&["sync", "--json"]);
    run.ok();
    assert_eq!(run.json()["rejected"], json!([]));
    assert_eq!(receipt_notes(b, "S", "c1").len(), 2);
}

#[test]
fn notes_are_united_with_no_summary_lost_or_repeated() {
    let t = team(2);
    let (a, b) = (&t.clones[0], &t.clones[1]);
    freeze(a, "S", json!([needs_file("c1", "app/main.rs")]));
    a.rails(&["sync"]).ok();
    b.rails(&["sync"]).ok();
    a.rails(&["contract", "validate", "S"]).ok();
    b.rails(&["contract", "validate", "S"]).ok();
    a.rails(&["contract", "validate", "S"]).ok();
    let a_note = a.git(&["notes", "--ref=rails", "show", "HEAD"]);
    let b_note = b.git(&["notes", "--ref=rails", "show", "HEAD"]);
    assert_ne!(a_note, b_note);
    a.rails(&["sync"]).ok();
    b.rails(&["sync"]).ok();
    a.rails(&["sync"]).ok();
    b.rails(&["sync"]).ok();
    let merged = a.git(&["notes", "--ref=rails", "show", "HEAD"]);
    assert_eq!(merged, b.git(&["notes", "--ref=rails", "show", "HEAD"]));
    assert_eq!(merged.matches("rails validate S v1").count(), 3, "{merged}");
    for part in a_note
        .split("\n\nrails validate")
        .chain(b_note.split("\n\nrails validate"))
    {
        assert!(merged.contains(part.trim()), "lost: {part}");
    }
    assert_eq!(
        rev(&t.remote, "refs/notes/rails"),
        rev(a, "refs/notes/rails")
    );
}

#[test]
fn spar_rounds_that_took_the_same_name_are_both_kept_and_jsonl_lines_united() {
    let t = team(2);
    t.review(0, "s").ok();
    t.review(1, "s").ok();
    t.spar(
        0,
        &[
            "extend", "s", "--stage", "code", "--by", "1", "--cause", "other", "--reason", "from a",
        ],
    )
    .ok();
    t.spar(
        1,
        &[
            "extend", "s", "--stage", "code", "--by", "2", "--cause", "other", "--reason", "from b",
        ],
    )
    .ok();
    let (a, b) = (&t.clones[0], &t.clones[1]);
    let a_round = show(a, "refs/spar/series/s:rounds/code-1/round.json");
    let b_round = show(b, "refs/spar/series/s:rounds/code-1/round.json");
    assert_ne!(a_round, b_round);
    t.spar(0, &["sync"]).ok();
    let run = t.spar(1, &["sync"]);
    // A deterministic rename: reported, and the command succeeds.
    run.code(0).stderr_has(
        "spar: spar series s: two clones named a round code-1; the later one is now code-2",
    );
    t.spar(0, &["sync"]).ok();
    for repo in [a, b, &t.remote] {
        let files = repo.git(&["ls-tree", "-r", "--name-only", "refs/spar/series/s"]);
        let rounds: BTreeSet<&str> = files
            .lines()
            .filter_map(|l| l.strip_prefix("rounds/"))
            .filter_map(|l| l.split('/').next())
            .collect();
        assert_eq!(rounds, BTreeSet::from(["code-1", "code-2"]));
        let ext = show(repo, "refs/spar/series/s:extensions.jsonl");
        assert_eq!(ext.lines().count(), 2, "{ext}");
        assert!(ext.contains("from a") && ext.contains("from b"));
    }
    // The earlier round kept its name; the later is renamed inside its round.json too.
    let r1: Value =
        serde_json::from_str(&show(a, "refs/spar/series/s:rounds/code-1/round.json")).unwrap();
    let r2: Value =
        serde_json::from_str(&show(a, "refs/spar/series/s:rounds/code-2/round.json")).unwrap();
    assert!(r1["started_at"].as_str() < r2["started_at"].as_str());
    assert_eq!(r2["round"], "code-2");
    // git spar reads both rounds, and a new round takes the next free name.
    t.spar(0, &["show", "s", "--json"]).ok();
    let run = t.review(0, "s");
    run.ok();
    assert!(rev(a, "refs/spar/series/s").is_some());
    let names = a.git(&["ls-tree", "--name-only", "refs/spar/series/s:rounds"]);
    assert!(names.lines().any(|l| l == "code-3"), "{names}");
    // Every round's summary is in the note on the head, once (two clean rounds of one head
    // have the same summary text: it is there once, as it was in each clone).
    t.spar(0, &["sync"]).ok();
    t.spar(1, &["sync"]).ok();
    let note = b.git(&["notes", "--ref=spar", "show", &t.head]);
    assert_eq!(note, a.git(&["notes", "--ref=spar", "show", &t.head]));
    for r in ["code-1", "code-2", "code-3"] {
        let summary = show(b, &format!("refs/spar/series/s:rounds/{r}/summary.md"));
        assert_eq!(note.matches(summary.trim()).count(), 1, "{r}:\n{note}");
    }
}

#[test]
fn setup_makes_plain_fetch_and_push_carry_records_without_plus() {
    let t = team(2);
    let (a, b) = (&t.clones[0], &t.clones[1]);
    a.rails(&["sync", "--setup"])
        .ok()
        .stdout_has("added remote.origin.fetch = refs/rails/*:refs/rails-sync/origin/rails/*");
    a.rails(&["sync", "--setup"])
        .ok()
        .stdout_has("already set up");
    let fetch = a.git(&["config", "--get-all", "remote.origin.fetch"]);
    let push = a.git(&["config", "--get-all", "remote.origin.push"]);
    assert_eq!(fetch.lines().count(), 5, "{fetch}");
    assert_eq!(push.lines().count(), 5, "{push}");
    assert!(fetch
        .lines()
        .skip(1)
        .chain(push.lines())
        .all(|l| !l.starts_with('+')));
    freeze(a, "S", json!([needs_file("c1", "proof-1")]));
    // Plain git push: the branch and the records.
    a.write("more.txt", "x");
    a.commit_all("more");
    a.git_run(&["push", "-q"]).ok();
    assert_eq!(
        rev(&t.remote, "refs/rails/contracts/S"),
        rev(a, "refs/rails/contracts/S")
    );
    assert_eq!(rev(&t.remote, "refs/heads/main"), rev(a, "HEAD"));

    // Plain git fetch stages them; it never writes the local record refs.
    b.rails(&["sync", "--setup"]).ok();
    freeze(b, "T", json!([needs_file("c1", "proof-1")]));
    let b_t = rev(b, "refs/rails/contracts/T");
    b.git_run(&["fetch", "-q"]).ok();
    assert_eq!(
        rev(b, "refs/rails-sync/origin/rails/contracts/S"),
        rev(a, "refs/rails/contracts/S")
    );
    assert_eq!(rev(b, "refs/rails/contracts/S"), None);
    assert_eq!(rev(b, "refs/rails/contracts/T"), b_t);
    b.rails(&["sync"]).ok();
    assert_eq!(records(b), records(&t.remote));
    // A diverged record refuses a plain push (no `+`): sync merges it.
    a.rails(&["sync"]).ok();
    a.rails(&["evidence", "red", "S", "c1"]).ok();
    b.rails(&["evidence", "red", "S", "c1"]).ok();
    a.git_run(&["push", "-q"]).ok();
    let refused = b.git_run(&["push"]);
    assert_ne!(refused.code, 0, "{refused}");
    b.rails(&["sync"]).ok();
    assert_eq!(records(b), records(&t.remote));
}

#[test]
fn pre_receive_on_the_remote_refuses_deleting_or_rewriting_records() {
    let t = team(1);
    let a = &t.clones[0];
    freeze(a, "S", json!([needs_file("c1", "proof-1")]));
    a.rails(&["sync"]).ok();
    let v1 = rev(a, "refs/rails/contracts/S").unwrap();
    let del = a.git_run(&["push", "origin", ":refs/rails/contracts/S"]);
    assert_ne!(del.code, 0);
    assert!(
        del.stderr
            .contains("deleting refs/rails/contracts/S is refused"),
        "{del}"
    );
    // A rewritten chain: a different commit that does not contain v1.
    let other = a
        .git(&["commit-tree", "-m", "forged", &format!("{v1}^{{tree}}")])
        .trim()
        .to_string();
    let rw = a.git_run(&[
        "push",
        "origin",
        &format!("+{other}:refs/rails/contracts/S"),
    ]);
    assert_ne!(rw.code, 0);
    assert!(rw.stderr.contains("is not a fast-forward"), "{rw}");
    let rw = a.git_run(&["push", "origin", &format!("+{other}:refs/spar/series/x")]);
    rw.ok();
    let rw = a.git_run(&["push", "origin", &format!("+{v1}:refs/spar/series/x")]);
    assert_ne!(rw.code, 0, "{rw}");
    assert_eq!(rev(&t.remote, "refs/rails/contracts/S").unwrap(), v1);
    // Sync reports a refusal by the remote as such.
    a.git(&["update-ref", "refs/rails/contracts/S", &other, &v1]);
    let run = a.rails(&["sync"]);
    assert_eq!(
        run.code, 1,
        "a local rewrite is a conflict to settle, not a push:\n{run}"
    );
    assert_eq!(rev(&t.remote, "refs/rails/contracts/S").unwrap(), v1);
}

#[test]
fn doctor_names_each_problem_with_its_fix() {
    let t = team(2);
    let (a, b) = (&t.clones[0], &t.clones[1]);
    freeze(a, "S", json!([needs_file("c1", "proof-1")]));
    a.rails(&["sync"]).ok();
    b.rails(&["sync"]).ok();
    a.rails(&["hooks", "install"]).ok();
    a.rails(&["doctor"]).ok().stdout_has("no problems found");

    // A hook that lost its run bit.
    let hook = a.path().join(".git/hooks/pre-push");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    // A stale ref lock: a loose ref's, or reftable's (which stops every ref update, so it is
    // left just before the doctor runs).
    let reftable = a.ref_format() == "reftable";
    let lock = if reftable {
        a.path().join(".git/reftable/tables.list.lock")
    } else {
        a.path().join(".git/refs/rails/contracts/S.lock")
    };
    let leave_lock = || {
        std::fs::write(&lock, "").unwrap();
        a.git(&["rev-parse", "HEAD"]);
        crate::harness::age(&lock, std::time::Duration::from_secs(3600));
    };
    if !reftable {
        leave_lock();
    }
    // A record bound to a commit no branch holds.
    a.git(&["checkout", "-q", "-b", "tmp"]);
    a.write("tmp.txt", "x");
    a.commit_all("tmp");
    let lost = rev(a, "HEAD").unwrap();
    a.rails(&["evidence", "red", "S", "c1"]).ok();
    a.git(&["checkout", "-q", "main"]);
    a.git(&["branch", "-q", "-D", "tmp"]);
    // A chain diverged from the remote's.
    b.rails(&["evidence", "red", "S", "c1"]).ok();
    b.rails(&["sync"]).ok();
    a.git_run(&[
        "fetch",
        "-q",
        "origin",
        "refs/rails/*:refs/rails-sync/origin/rails/*",
    ])
    .ok();

    if reftable {
        leave_lock();
    }
    let run = a.rails(&["doctor", "--json"]);
    run.code(1);
    let doc = run.json();
    assert_eq!(doc["schema"], "rails-doctor/v1");
    let kinds: BTreeMap<String, String> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["fix"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(kinds["hook"], "git rails hooks install", "{run}");
    assert_eq!(kinds["stale-lock"], format!("rm '{}'", lock.display()));
    assert_eq!(
        kinds["unreachable-commit"],
        format!("git branch rails-keep/{} {lost}", &lost[..12])
    );
    assert_eq!(kinds["diverged"], "git rails sync origin");
    a.rails(&["doctor"])
        .code(1)
        .stdout_has("stale-lock: ")
        .stdout_has("  fix: git rails sync origin");
}

/// The issue's done-criterion: three clones freeze, prove, review and sync concurrently in a
/// loop; at the end every record written by every clone is on all of them and on the remote,
/// and nothing is there twice.
#[test]
fn three_clones_writing_and_syncing_concurrently_converge_with_nothing_lost() {
    const ITERATIONS: usize = 5;
    let t = team(3);
    let started = std::time::Instant::now();
    // A shared sprint: one criterion per clone.
    let checks: Vec<Value> = (0..3)
        .map(|i| needs_file(&format!("k{i}"), &format!("proof-{i}")))
        .collect();
    freeze(&t.clones[0], "TEAM", json!(checks));
    t.clones[0].rails(&["sync"]).ok();
    for c in &t.clones[1..] {
        c.rails(&["sync"]).ok();
    }
    let t = &t;
    std::thread::scope(|scope| {
        for i in 0..3 {
            scope.spawn(move || {
                let c = &t.clones[i];
                for n in 0..ITERATIONS {
                    let sprint = format!("S-{i}-{n}");
                    freeze(
                        c,
                        &sprint,
                        json!([needs_file("c1", &format!("proof-{i}-{n}"))]),
                    );
                    c.rails(&["evidence", "red", &sprint, "c1"]).ok();
                    c.rails(&["evidence", "red", "TEAM", &format!("k{i}")]).ok();
                    c.rails(&[
                        "evidence",
                        "cleanup",
                        "TEAM",
                        &format!("k{i}"),
                        "--note",
                        &format!("clone {i} iteration {n}"),
                    ])
                    .ok();
                    t.review(i, "team").ok();
                    let run = c.rails(&["sync"]);
                    assert!(run.code == 0 || run.code == 1, "{run}");
                }
            });
        }
    });
    // Settle: each clone syncs until the remote stops moving.
    for _ in 0..2 {
        for c in &t.clones {
            let run = c.rails(&["sync"]);
            assert!(run.code == 0 || run.code == 1, "{run}");
        }
    }
    let elapsed = started.elapsed();
    let want = records(&t.remote);
    for c in &t.clones {
        assert_eq!(records(c), want, "a clone differs from the remote");
    }
    // Every contract, once.
    for i in 0..3 {
        for n in 0..ITERATIONS {
            assert!(want.contains_key(&format!("refs/rails/contracts/S-{i}-{n}")));
            assert!(want.contains_key(&format!("refs/rails/evidence/S-{i}-{n}")));
        }
    }
    // Every cleanup receipt of every clone, each once; every RED kept.
    let s = state(&t.remote, "TEAM");
    for i in 0..3 {
        let c = &s["criteria"][format!("k{i}")];
        assert_eq!(c["status"], "red");
        let notes = receipt_notes(&t.remote, "TEAM", &format!("k{i}"));
        let want: Vec<String> = (0..ITERATIONS)
            .map(|n| format!("clone {i} iteration {n}"))
            .collect();
        assert_eq!(notes, want, "receipts of k{i}");
    }
    // Every review round, once, under distinct names; its summary once in the note.
    let files = t
        .remote
        .git(&["ls-tree", "-r", "--name-only", "refs/spar/series/team"]);
    let rounds: BTreeSet<&str> = files
        .lines()
        .filter_map(|l| l.strip_prefix("rounds/"))
        .filter_map(|l| l.split('/').next())
        .collect();
    assert_eq!(rounds.len(), 3 * ITERATIONS, "{files}");
    let mut identities = BTreeSet::new();
    let note = t.remote.git(&["notes", "--ref=spar", "show", &t.head]);
    for r in &rounds {
        let mut v: Value = serde_json::from_str(&show(
            &t.remote,
            &format!("refs/spar/series/team:rounds/{r}/round.json"),
        ))
        .unwrap();
        v.as_object_mut().unwrap().remove("round");
        assert!(identities.insert(v.to_string()), "round {r} is there twice");
        let summary = show(
            &t.remote,
            &format!("refs/spar/series/team:rounds/{r}/summary.md"),
        );
        assert_eq!(
            note.matches(summary.trim()).count(),
            1,
            "summary of {r} in the note"
        );
    }
    let merges = |r: &str| t.remote.git(&["rev-list", "--merges", r]).lines().count();
    eprintln!(
        "three clones × {ITERATIONS} iterations: {} record refs, {} rounds, {} receipts; merge commits: evidence/TEAM {}, series/team {}, notes/spar {}; in {:.1?}",
        want.len(),
        rounds.len(),
        3 * ITERATIONS,
        merges("refs/rails/evidence/TEAM"),
        merges("refs/spar/series/team"),
        merges("refs/notes/spar"),
        elapsed
    );
}

#[test]
fn diverged_pipeline_chains_replay_their_events_and_report_the_one_that_no_longer_applies() {
    use std::os::unix::fs::PermissionsExt;
    let t = team(2);
    let (a, b) = (&t.clones[0], &t.clones[1]);
    freeze(a, "P", json!([needs_file("c1", "proof-1")]));
    // A planner that always fails: the run escalates after its attempts.
    let failing = t.tmp("failing-planner.sh");
    std::fs::write(&failing, "#!/bin/sh\necho no >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&failing, std::fs::Permissions::from_mode(0o755)).unwrap();
    let toml = format!(
        "[actors.harang]\ncommand = [{}]\ntimeoutSeconds = 10\n\n[retry]\nbackoffSeconds = 0\nmaxAttempts = 1\n",
        json!(failing.display().to_string())
    );
    a.write(".rails/config.toml", &toml);
    a.rails(&["trust"]).ok();
    let run = a.rails(&["pipeline", "run", "P"]);
    assert_ne!(run.code, 0, "{run}");
    let st = a.rails(&["pipeline", "status", "P", "--json"]);
    st.ok();
    assert_eq!(st.json()["state"], "escalated", "{st}");
    a.rails(&["sync"]).ok();
    b.rails(&["sync"]).ok();
    let shared = st.json()["history"].as_array().unwrap().len();
    // Both clones abort the escalated run; A's abort comes first.
    a.rails(&["pipeline", "abort", "P", "--reason", "a stops it"])
        .ok();
    b.rails(&["pipeline", "abort", "P", "--reason", "b stops it"])
        .ok();
    let b_tip = rev(b, "refs/rails/pipeline/P").unwrap();
    a.rails(&["sync"]).ok();
    let run = b.rails(&["sync", "--json"]);
    // Settled by the merge (the transition is reported, kept in history): exit 0.
    run.code(0);
    let doc = run.json();
    assert_eq!(doc["rejected"].as_array().unwrap().len(), 1, "{run}");
    assert_eq!(
        doc["rejected"][0]["transition"],
        "ABORT escalated -> aborted"
    );
    let tip = rev(b, "refs/rails/pipeline/P").unwrap();
    assert!(is_ancestor(b, &b_tip, &tip));
    let st = b.rails(&["pipeline", "status", "P", "--json"]);
    st.ok();
    let doc = st.json();
    assert_eq!(doc["state"], "aborted");
    let history = doc["history"].as_array().unwrap();
    assert_eq!(history.len(), shared + 1, "{st}");
    assert_eq!(history.last().unwrap()["reason"], "a stops it");
    let seqs: Vec<u64> = history.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=history.len() as u64).collect::<Vec<_>>());
    a.rails(&["sync"]).ok();
    assert_eq!(records(a), records(b));
}

#[test]
fn the_same_contract_frozen_in_two_clones_is_not_a_conflict() {
    let t = team(2);
    let (a, b) = (&t.clones[0], &t.clones[1]);
    freeze(a, "S", json!([needs_file("c1", "proof-1")]));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    freeze(b, "S", json!([needs_file("c1", "proof-1")]));
    let b_tip = rev(b, "refs/rails/contracts/S").unwrap();
    let a_tip = rev(a, "refs/rails/contracts/S").unwrap();
    assert_ne!(a_tip, b_tip, "two commits (different times)");
    a.rails(&["sync"]).ok();
    b.rails(&["sync"])
        .ok()
        .stderr_has("froze the same contents");
    assert_eq!(rev(b, "refs/rails/contracts/S").unwrap(), a_tip);
    assert_eq!(
        rev(b, &format!("refs/rails-sync/kept/contracts/S/{b_tip}")).unwrap(),
        b_tip
    );
}

#[test]
fn a_remote_without_the_hook_that_rewrote_records_is_refused_not_followed() {
    let t = team(2);
    std::fs::remove_file(t.remote.path().join("hooks/pre-receive")).unwrap();
    let (a, b) = (&t.clones[0], &t.clones[1]);
    freeze(a, "S", json!([needs_file("c1", "proof-1")]));
    a.rails(&["sync"]).ok();
    b.rails(&["sync"]).ok();
    let v1 = rev(b, "refs/rails/contracts/S").unwrap();
    let forged = a
        .git(&["commit-tree", "-m", "forged", &format!("{v1}^{{tree}}")])
        .trim()
        .to_string();
    a.git_run(&[
        "push",
        "-q",
        "origin",
        &format!("+{forged}:refs/rails/contracts/S"),
    ])
    .ok();
    let run = b.rails(&["sync"]);
    run.code(65)
        .stderr_has("origin rewrote records")
        .stderr_has("refs/rails/contracts/S");
    assert_eq!(rev(b, "refs/rails/contracts/S").unwrap(), v1);
    assert_eq!(
        rev(b, "refs/rails-sync/origin/rails/contracts/S").unwrap(),
        v1
    );
}

#[test]
fn a_record_deleted_on_the_remote_is_pushed_back() {
    let t = team(1);
    let a = &t.clones[0];
    freeze(a, "S", json!([needs_file("c1", "proof")]));
    a.rails(&["sync"]).ok();
    let tip = rev(a, "refs/rails/contracts/S").unwrap();
    assert_eq!(rev(&t.remote, "refs/rails/contracts/S"), Some(tip.clone()));
    // Someone deletes the record on the remote (no server hook there).
    t.remote
        .git_run(&["update-ref", "-d", "refs/rails/contracts/S"])
        .ok();
    assert_eq!(rev(&t.remote, "refs/rails/contracts/S"), None);
    // Before: "up-to-date, 0 pushed", from the stale staged copy.
    let run = a.rails(&["sync", "--json"]);
    run.ok();
    let doc = run.json();
    assert_eq!(doc["pushed"], json!(["refs/rails/contracts/S"]), "{run}");
    assert_eq!(rev(&t.remote, "refs/rails/contracts/S"), Some(tip));
    a.rails(&["sync"])
        .ok()
        .stdout_has("0 ref(s) changed here, 0 pushed");
}

/// A chain that does not replay is neither pushed from here nor taken from the remote.
#[test]
fn an_evidence_chain_that_does_not_replay_is_not_synced() {
    let t = team(2);
    let (a, b) = (&t.clones[0], &t.clones[1]);
    freeze(a, "S", json!([needs_file("c1", "proof-1")]));
    a.rails(&["sync"]).ok();
    b.rails(&["sync"]).ok();
    a.rails(&["evidence", "red", "S", "c1"]).ok();
    let bad = crate::status_gate::forge_surfaced(a);
    let run = a.rails(&["sync"]);
    run.code(1)
        .stderr_has("refs/rails/evidence/S: not synced, nothing was merged or pushed")
        .stderr_has(&format!("does not replay at {}", &bad[..12]));
    assert!(t
        .remote
        .git_run(&["rev-parse", "-q", "--verify", "refs/rails/evidence/S"])
        .stdout
        .trim()
        .is_empty());
    // Put on the remote behind its hook's back: the other clone does not take it.
    t.remote.git(&[
        "fetch",
        "-q",
        &a.path().display().to_string(),
        "refs/rails/evidence/S:refs/rails/evidence/S",
    ]);
    b.rails(&["sync"])
        .code(1)
        .stderr_has("the remote's chain: refs/rails/evidence/S does not replay at");
    assert!(b
        .git_run(&["rev-parse", "-q", "--verify", "refs/rails/evidence/S"])
        .stdout
        .trim()
        .is_empty());
}

/// A sync merge of two clones' rounds: a round renamed by the merge has its `round.json`
/// naming its new folder, no merged round carries a `gate-facts.json` (retired), and the gate
/// of every clone passes.
#[test]
fn spar_rounds_follow_a_sync_merge() {
    let t = team(2);
    t.review(0, "s").ok();
    t.review(1, "s").ok();
    let (a, b) = (&t.clones[0], &t.clones[1]);
    t.spar(0, &["sync"]).ok();
    t.spar(1, &["sync"]).ok();
    t.spar(0, &["sync"]).ok();
    for repo in [a, b] {
        for r in ["code-1", "code-2"] {
            let round: Value = serde_json::from_str(&show(
                repo,
                &format!("refs/spar/series/s:rounds/{r}/round.json"),
            ))
            .unwrap();
            assert_eq!(round["round"], r, "{round}");
            assert_eq!(round["reviewers"][0]["name"], "peer", "{round}");
            assert_eq!(round["reviewers"][0]["status"], "completed", "{round}");
            let files = repo.git(&[
                "ls-tree",
                "--name-only",
                &format!("refs/spar/series/s:rounds/{r}"),
            ]);
            assert!(!files.contains("gate-facts"), "{r}: {files}");
        }
        let gate = Run::of(
            repo.command("git-spar")
                .args(["gate", "s:code-1", "s:code-2", "--json"]),
        );
        assert_eq!(gate.code, 0, "{gate}");
        assert!(!gate.stdout.contains("gate-facts"), "{gate}");
    }
}
