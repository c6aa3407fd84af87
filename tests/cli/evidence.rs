//! `git rails evidence`: every row of the transition table, the observations RED and GREEN
//! must make, the refusals in the seed's words (each with the next command and nothing
//! written), the records on `refs/rails/evidence/<sprint>`, an index left untouched, the
//! archive a reopen keeps, and the sprint bound to a branch.

use std::path::Path;

use crate::harness::{check, Run, TestRepo};
use serde_json::{json, Value};

/// The evidence ref of sprint `S`, the sprint every test here uses.
pub const EV: &str = "refs/rails/evidence/S";

/// A check proof that fails until `file` exists (and says so on stderr).
pub fn needs_file(id: &str, file: &str) -> Value {
    check(
        id,
        "command_success",
        json!({"command": format!("test -f {file} || {{ echo '{file} is missing' >&2; exit 1; }}")}),
    )
}

/// A review proof: the checklist at `path`.
pub fn review(id: &str, path: &str) -> Value {
    check(id, "manual_checklist", json!({"path": path}))
}

/// A repository with sprint S frozen at v1 with these checks.
pub fn frozen(checks: Value) -> TestRepo {
    let repo = TestRepo::new();
    repo.draft("S", checks);
    repo.rails(&["contract", "freeze", "S"]).ok();
    repo
}

/// Where the evidence ref points, or None when nothing was ever recorded.
pub fn tip(repo: &TestRepo) -> Option<String> {
    let r = repo.git_run(&["rev-parse", "--verify", "-q", EV]);
    (r.code == 0).then(|| r.stdout.trim().to_string())
}

/// The state at the tip of the evidence ref.
pub fn state(repo: &TestRepo) -> Value {
    serde_json::from_str(&repo.git(&["show", &format!("{EV}:state.json")])).unwrap()
}

/// A file of the evidence tree, as JSON.
pub fn ev_json(repo: &TestRepo, path: &str) -> Value {
    serde_json::from_str(&repo.git(&["show", &format!("{EV}:{path}")])).unwrap()
}

/// Runs `git rails evidence <transition> S <criterion> <extra> --json`, which must be accepted,
/// and checks that it wrote exactly one commit on top of the previous tip, with the trailers.
/// Returns the printed document (the record is under "record").
#[track_caller]
pub fn accept(repo: &TestRepo, transition: &str, criterion: &str, extra: &[&str]) -> Value {
    let before = tip(repo);
    let mut args = vec!["evidence", transition, "S", criterion];
    args.extend_from_slice(extra);
    args.push("--json");
    let run = repo.rails(&args);
    run.ok();
    let out = run.json();
    let after = tip(repo).expect("an accepted transition writes the evidence ref");
    assert_eq!(out["commit"], after.as_str(), "{run}");
    assert_eq!(out["transition"], transition);
    assert_eq!(out["criterion"], criterion);
    match &before {
        Some(b) => {
            assert_ne!(b, &after, "{args:?} did not move the evidence ref");
            assert_eq!(
                repo.git(&["rev-parse", &format!("{after}^")]).trim(),
                b,
                "{args:?} did not write one commit on top of the previous tip"
            );
        }
        None => assert_eq!(repo.git(&["rev-list", "--count", &after]).trim(), "1"),
    }
    let msg = repo.git(&["log", "-1", "--format=%B", &after]);
    assert!(msg.contains("Rails-Sprint: S\n"), "{msg}");
    assert!(
        msg.contains(&format!("Rails-Transition: {transition} {criterion}\n")),
        "{msg}"
    );
    // git itself reads them as trailers.
    let parsed = repo.git(&[
        "log",
        "-1",
        "--format=%(trailers:key=Rails-Transition,valueonly)",
        &after,
    ]);
    assert_eq!(parsed.trim(), format!("{transition} {criterion}"), "{msg}");
    out
}

/// Runs `git rails <args>`, which must be refused (65) saying each of `said` on stderr and
/// writing nothing to the evidence ref.
#[track_caller]
pub fn refuse(repo: &TestRepo, args: &[&str], said: &[&str]) -> Run {
    let before = tip(repo);
    let run = repo.rails(args);
    run.code(65);
    for s in said {
        run.stderr_has(s);
    }
    assert_eq!(tip(repo), before, "a refusal wrote evidence:\n{run}");
    run
}

/// red, make it pass, green, surface, cleanup: c1 surfaced with a receipt.
pub fn prove(repo: &TestRepo, id: &str, file: &str) {
    accept(repo, "red", id, &[]);
    repo.write(file, "done\n");
    repo.git(&["add", "--", file]);
    accept(repo, "green", id, &[]);
    accept(repo, "surface", id, &["--note", "PR comment with the run"]);
    accept(repo, "cleanup", id, &["--note", "nothing was started"]);
}

/// The tree `git add -u && git write-tree` gives for the tracked content through a copy of the
/// index (files git does not track are never part of a record).
pub fn worktree_tree(repo: &TestRepo) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("index");
    std::fs::copy(repo.path().join(".git/index"), &index).unwrap();
    let git = |args: &[&str]| {
        let out = repo.git_env(args, &[("GIT_INDEX_FILE", index.to_str().unwrap())]);
        assert_eq!(out.code, 0, "git {args:?} failed:\n{out}");
        out.stdout.trim().to_string()
    };
    git(&["add", "-u"]);
    git(&["write-tree"])
}

fn short(id: &Value) -> String {
    id.as_str().unwrap()[..7].to_string()
}

// ---------------------------------------------------------------------------------------------
// red

#[test]
fn red_from_pending_records_the_observed_failure() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    assert_eq!(tip(&repo), None);
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let out = accept(&repo, "red", "c1", &[]);
    assert_eq!(out["status"], "red");
    assert_eq!(out["contractVersion"], "v1");
    let rec = &out["record"];
    assert_eq!(rec["transition"], "red");
    assert_eq!(rec["checkStatus"], "fail");
    assert_eq!(rec["exitCode"], 1);
    assert!(rec["durationMs"].is_u64(), "{rec}");
    assert_eq!(rec["head"], head.as_str());
    assert_eq!(rec["tree"], worktree_tree(&repo).as_str());
    // The draft is untracked: it is listed by name and left out of the tree, which is HEAD's.
    assert_eq!(rec["dirty"], false);
    assert_eq!(rec["tree"], repo.git(&["rev-parse", "HEAD^{tree}"]).trim());
    assert_eq!(rec["untracked"], json!([".rails/contracts/S.json"]));
    assert!(rec["at"].is_string());
    assert_eq!(rec["contractVersion"], "v1");

    // The record is a file of the evidence tree; its id is that file's blob id.
    let id = rec["id"].as_str().unwrap();
    assert_eq!(
        repo.git(&["rev-parse", &format!("{EV}:cycles/c1/1/red.json")])
            .trim(),
        id
    );
    let file = ev_json(&repo, "cycles/c1/1/red.json");
    assert_eq!(file["exitCode"], 1);
    assert_eq!(file["tree"], rec["tree"]);
    // The output tail is kept beside it.
    let log = repo.git(&["show", &format!("{EV}:cycles/c1/1/red.log")]);
    assert!(log.contains("feature.txt is missing"), "{log}");

    let st = state(&repo);
    assert_eq!(st["schema"], "rails-evidence/v1");
    assert_eq!(st["sprint"], "S");
    let c1 = &st["criteria"]["c1"];
    assert_eq!(c1["status"], "red");
    assert_eq!(c1["proof"], "check");
    assert_eq!(c1["cycle"], 1);
    assert_eq!(c1["red"]["id"], id);
    let msg = repo.git(&["log", "-1", "--format=%B", EV]);
    assert!(msg.contains("Rails-Contract-Version: v1"), "{msg}");
    assert!(msg.contains("Rails-Status: red"), "{msg}");
}

#[test]
fn red_from_red_is_a_recapture() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let first = accept(&repo, "red", "c1", &[]);
    let before = tip(&repo).unwrap();
    // Text output this time: the short id of the new record and the new status.
    let run = repo.rails(&["evidence", "red", "S", "c1"]);
    run.ok().stdout_has("c1 is now red");
    let after = tip(&repo).unwrap();
    assert_eq!(
        repo.git(&["rev-parse", &format!("{after}^")]).trim(),
        before
    );
    let st = state(&repo);
    let id = &st["criteria"]["c1"]["red"]["id"];
    assert_ne!(id, &first["record"]["id"], "the re-capture is a new record");
    run.stdout_has(&format!("RED S c1 recorded as {}", short(id)));
    run.stdout_has(&format!("(evidence {})", &after[..7]));
    assert_eq!(st["criteria"]["c1"]["status"], "red");
    assert_eq!(
        repo.git(&[
            "log",
            "-1",
            "--format=%(trailers:key=Rails-Transition,valueonly)",
            EV
        ])
        .trim(),
        "red c1"
    );
}

#[test]
fn red_from_green_is_refused() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    // Make it fail again: still, a new RED would cover nothing.
    std::fs::remove_file(repo.path().join("feature.txt")).unwrap();
    refuse(
        &repo,
        &["evidence", "red", "S", "c1"],
        &[
            "Criterion \"c1\" is green",
            "git rails evidence surface S c1 --note",
        ],
    );
}

#[test]
fn red_and_green_from_surfaced_are_refused_in_the_seeds_words() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    accept(&repo, "surface", "c1", &["--note", "PR comment"]);
    let seed = "Criterion \"c1\" is already surfaced. If its subject changed, reopen it with git rails evidence reopen S c1 --note \"<what changed>\" and earn RED again; overwriting GREEN here would reuse the old RED as cover.";
    // GREEN on a surfaced criterion is the seed's hole: refused, with the seed's sentence.
    refuse(&repo, &["evidence", "green", "S", "c1"], &[seed]);
    std::fs::remove_file(repo.path().join("feature.txt")).unwrap();
    refuse(
        &repo,
        &["evidence", "red", "S", "c1"],
        &[
            "Criterion \"c1\" is already surfaced",
            "git rails evidence reopen S c1 --note \"<what changed>\"",
        ],
    );
    assert_eq!(state(&repo)["criteria"]["c1"]["status"], "surfaced");
}

#[test]
fn red_on_a_review_proof_is_refused() {
    let repo = frozen(json!([review("r1", "review.md")]));
    refuse(
        &repo,
        &["evidence", "red", "S", "r1"],
        &[
            "Criterion \"r1\" has a review proof (manual_checklist)",
            "git rails evidence surface S r1 --note",
        ],
    );
    refuse(
        &repo,
        &["evidence", "green", "S", "r1"],
        &[
            "Criterion \"r1\" has a review proof",
            "git rails evidence surface S r1 --note",
        ],
    );
    assert_eq!(tip(&repo), None);
}

// ---------------------------------------------------------------------------------------------
// green

#[test]
fn green_from_red_records_the_observed_pass_bound_to_the_work_tree() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let out = accept(&repo, "green", "c1", &[]);
    assert_eq!(out["status"], "green");
    let rec = &out["record"];
    assert_eq!(rec["checkStatus"], "pass");
    assert_eq!(rec["exitCode"], 0);
    assert!(rec["durationMs"].is_u64(), "{rec}");
    assert_eq!(rec["head"], head.as_str());
    let tree = worktree_tree(&repo);
    assert_eq!(rec["tree"], tree.as_str());
    // The tree is the work tree's, with the new file in it.
    assert_eq!(
        repo.git(&["show", &format!("{tree}:feature.txt")]),
        "done\n"
    );
    assert_eq!(rec["dirty"], true);
    let c1 = &state(&repo)["criteria"]["c1"];
    assert_eq!(c1["status"], "green");
    assert_eq!(c1["green"]["id"], rec["id"]);
    assert_eq!(c1["binding"]["tree"], tree.as_str());
    assert_eq!(c1["binding"]["head"], head.as_str());
    assert_eq!(c1["binding"]["by"], "green");
    assert_eq!(
        repo.git(&["rev-parse", &format!("{EV}:cycles/c1/1/green.json")])
            .trim(),
        rec["id"].as_str().unwrap()
    );
}

#[test]
fn green_from_pending_is_a_failing_first_violation() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    repo.write("feature.txt", "done\n");
    refuse(
        &repo,
        &["evidence", "green", "S", "c1"],
        &["Failing-first violation: criterion \"c1\" is pending. Capture the failure before implementing: git rails evidence red S c1"],
    );
    assert_eq!(tip(&repo), None);
}

#[test]
fn green_from_green_is_refused() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    refuse(
        &repo,
        &["evidence", "green", "S", "c1"],
        &[
            "Criterion \"c1\" is already green",
            "git rails evidence surface S c1 --note",
        ],
    );
}

#[test]
fn green_is_refused_while_the_check_still_fails() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    refuse(
        &repo,
        &["evidence", "green", "S", "c1"],
        &[
            "c1 still fails (exit 1",
            "GREEN records only an observed pass",
            "git rails evidence green S c1",
        ],
    );
    assert_eq!(state(&repo)["criteria"]["c1"]["status"], "red");
}

// ---------------------------------------------------------------------------------------------
// what RED must observe

#[test]
fn red_is_refused_when_the_check_already_passes() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    repo.write("feature.txt", "already here\n");
    refuse(
        &repo,
        &["evidence", "red", "S", "c1"],
        &[
            "c1 already passes, so this RED would prove nothing. Write the check so that it fails before the change, or bump the contract",
            "git rails contract edit S --next",
            "git rails contract freeze S --bump",
        ],
    );
    assert_eq!(tip(&repo), None);
}

#[test]
fn red_is_refused_when_the_command_is_not_found_or_not_executable() {
    let repo = frozen(json!([
        check(
            "c1",
            "command_success",
            json!({"command": "rails-no-such-tool-4711 --check"})
        ),
        check("c2", "command_success", json!({"command": "./tool.sh"})),
    ]));
    refuse(
        &repo,
        &["evidence", "red", "S", "c1"],
        &[
            "the check of \"c1\" could not run (exit 127 (command not found)",
            "a failure that is not the criterion failing does not count, so nothing was recorded",
            "git rails evidence red S c1",
        ],
    );
    // 126: the file is there but not executable.
    repo.write("tool.sh", "#!/bin/sh\nexit 1\n");
    refuse(
        &repo,
        &["evidence", "red", "S", "c2"],
        &[
            "the check of \"c2\" could not run (exit 126 (command not executable)",
            "git rails evidence red S c2",
        ],
    );
    assert_eq!(tip(&repo), None);
}

#[test]
fn red_is_refused_when_a_prerequisite_is_missing() {
    let repo = TestRepo::new();
    repo.draft_with(
        "S",
        json!([needs_file("c1", "feature.txt")]),
        json!({"environmentPrerequisites": [{
            "name": "the tool",
            "check": "command_exists",
            "spec": {"command": "rails-no-such-tool-4711"},
            "reason": "the check calls it"
        }]}),
    );
    repo.rails(&["contract", "freeze", "S"]).ok();
    refuse(
        &repo,
        &["evidence", "red", "S", "c1"],
        &[
            "prerequisite the tool (command_exists) is missing",
            "A failure now would not be the criterion failing, so nothing was recorded.",
            "git rails contract validate S",
        ],
    );
    assert_eq!(tip(&repo), None);
}

// ---------------------------------------------------------------------------------------------
// surface

#[test]
fn surface_needs_a_note_or_a_path() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    let needs = "Surface needs --note or --path saying where a person can see the result";
    let next = "git rails evidence surface S c1 --note";
    refuse(&repo, &["evidence", "surface", "S", "c1"], &[needs, next]);
    refuse(
        &repo,
        &["evidence", "surface", "S", "c1", "--note", "  "],
        &[needs, next],
    );
    // A path alone is enough.
    let out = accept(
        &repo,
        "surface",
        "c1",
        &["--path", "docs/screenshots/c1.png"],
    );
    assert_eq!(out["status"], "surfaced");
    assert_eq!(out["record"]["path"], "docs/screenshots/c1.png");
    let c1 = &state(&repo)["criteria"]["c1"];
    assert_eq!(c1["status"], "surfaced");
    assert_eq!(c1["surface"]["id"], out["record"]["id"]);
    assert_eq!(
        ev_json(&repo, "cycles/c1/1/surface.json")["path"],
        "docs/screenshots/c1.png"
    );
}

#[test]
fn surface_from_green_with_a_note() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    let out = accept(&repo, "surface", "c1", &["--note", "PR #12 comment"]);
    assert_eq!(out["status"], "surfaced");
    assert_eq!(out["record"]["note"], "PR #12 comment");
    let msg = repo.git(&["log", "-1", "--format=%B", EV]);
    assert!(msg.contains("PR #12 comment"), "{msg}");
    assert!(msg.contains("Rails-Status: surfaced"), "{msg}");
}

#[test]
fn surface_of_a_check_proof_from_pending_or_red_is_refused() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    refuse(
        &repo,
        &["evidence", "surface", "S", "c1", "--note", "look"],
        &["Failing-first violation: criterion \"c1\" is pending. Capture the failure before implementing: git rails evidence red S c1"],
    );
    accept(&repo, "red", "c1", &[]);
    refuse(
        &repo,
        &["evidence", "surface", "S", "c1", "--note", "look"],
        &[
            "Criterion \"c1\" is red: GREEN comes before SURFACE",
            "git rails evidence green S c1",
        ],
    );
}

#[test]
fn surface_from_surfaced_is_refused() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    accept(&repo, "surface", "c1", &["--note", "first"]);
    refuse(
        &repo,
        &["evidence", "surface", "S", "c1", "--note", "second"],
        &[
            "Criterion \"c1\" is already surfaced",
            "git rails evidence reopen S c1 --note \"<what changed>\"",
        ],
    );
}

#[test]
fn a_review_proof_is_surfaced_from_pending_only_when_its_checklist_is_ticked() {
    let repo = frozen(json!([review("r1", "review.md")]));
    repo.write("review.md", "- [x] UI reviewed\n- [ ] Copy approved\n");
    repo.commit_all("checklist");
    refuse(
        &repo,
        &["evidence", "surface", "S", "r1", "--note", "reviewed"],
        &[
            "the checklist of \"r1\" is not fully ticked (1 unticked item: \"Copy approved\")",
            "git rails evidence surface S r1 --note",
        ],
    );
    assert_eq!(tip(&repo), None);
    repo.write("review.md", "- [x] UI reviewed\n- [x] Copy approved\n");
    repo.commit_all("checklist");
    let out = accept(&repo, "surface", "r1", &["--note", "reviewed in the PR"]);
    assert_eq!(out["status"], "surfaced");
    assert_eq!(out["record"]["checkStatus"], "pass");
    let r1 = &state(&repo)["criteria"]["r1"];
    assert_eq!(r1["proof"], "review");
    assert_eq!(r1["status"], "surfaced");
    assert!(r1.get("red").is_none(), "{r1}");
    assert!(r1.get("green").is_none(), "{r1}");
    assert_eq!(r1["binding"]["by"], "surface");
    assert_eq!(r1["binding"]["tree"], worktree_tree(&repo).as_str());
}

// ---------------------------------------------------------------------------------------------
// cleanup

#[test]
fn cleanup_is_a_receipt_at_any_status() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let next = "git rails evidence cleanup S c1 --note \"nothing was started\"";
    refuse(
        &repo,
        &["evidence", "cleanup", "S", "c1"],
        &["A cleanup receipt needs --note or --path", next],
    );
    // pending
    let out = accept(&repo, "cleanup", "c1", &["--note", "nothing was started"]);
    assert_eq!(out["status"], "pending");
    accept(&repo, "red", "c1", &[]);
    // red, with a path
    let out = accept(&repo, "cleanup", "c1", &["--path", "logs/teardown.txt"]);
    assert_eq!(out["status"], "red");
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    accept(
        &repo,
        "cleanup",
        "c1",
        &["--note", "stopped the dev server"],
    );
    accept(&repo, "surface", "c1", &["--note", "PR"]);
    let out = accept(&repo, "cleanup", "c1", &["--note", "removed the temp db"]);
    assert_eq!(out["status"], "surfaced");
    refuse(
        &repo,
        &["evidence", "cleanup", "S", "c1", "--path", ""],
        &["A cleanup receipt needs --note or --path", next],
    );

    // state.json keeps the count; each receipt is its own file in the cycle's folder.
    let c1 = &state(&repo)["criteria"]["c1"];
    assert_eq!(c1["cleanupReceipts"], 4);
    let notes: Vec<Value> = (1..=4)
        .map(|n| {
            let file = repo.git(&["show", &format!("{EV}:cycles/c1/1/cleanup-{n}.json")]);
            serde_json::from_str::<Value>(&file).unwrap()["note"].clone()
        })
        .collect();
    assert_eq!(
        notes,
        [
            json!("nothing was started"),
            Value::Null,
            json!("stopped the dev server"),
            json!("removed the temp db")
        ]
    );
    assert_eq!(
        ev_json(&repo, "cycles/c1/1/cleanup-2.json")["path"],
        "logs/teardown.txt"
    );
    assert_eq!(
        ev_json(&repo, "cycles/c1/1/cleanup-4.json")["note"],
        "removed the temp db"
    );
}

// ---------------------------------------------------------------------------------------------
// reopen

#[test]
fn reopen_needs_a_note() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    let seed = "Reopen needs a note saying what changed, so the archived cycle explains itself";
    let next = "git rails evidence reopen S c1 --note \"<what changed>\"";
    refuse(&repo, &["evidence", "reopen", "S", "c1"], &[seed, next]);
    refuse(
        &repo,
        &["evidence", "reopen", "S", "c1", "--note", " "],
        &[seed, next],
    );
    refuse(
        &repo,
        &["evidence", "reopen", "S", "c1", "--path", "why.md"],
        &[seed, next],
    );
    assert_eq!(state(&repo)["criteria"]["c1"]["status"], "surfaced");
}

#[test]
fn reopen_from_a_criterion_that_is_not_surfaced_is_refused() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let args = ["evidence", "reopen", "S", "c1", "--note", "changed"];
    refuse(
        &repo,
        &args,
        &[
            "Criterion \"c1\" is pending; only a surfaced criterion is reopened",
            "git rails evidence red S c1",
        ],
    );
    accept(&repo, "red", "c1", &[]);
    refuse(
        &repo,
        &args,
        &[
            "Criterion \"c1\" is red; only a surfaced criterion is reopened",
            "git rails evidence green S c1",
        ],
    );
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    refuse(
        &repo,
        &args,
        &[
            "Criterion \"c1\" is green; only a surfaced criterion is reopened",
            "git rails evidence surface S c1 --note",
        ],
    );
}

#[test]
fn reopen_archives_the_cycle_and_returns_to_pending() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    let before = state(&repo)["criteria"]["c1"].clone();
    let red1 = repo
        .git(&["show", &format!("{EV}:cycles/c1/1/red.json")])
        .to_string();

    let run = repo.rails(&[
        "evidence",
        "reopen",
        "S",
        "c1",
        "--note",
        "the endpoint moved",
    ]);
    run.ok()
        .stdout_has("c1 is now pending")
        .stdout_has("git rails evidence red S c1");
    let msg = repo.git(&["log", "-1", "--format=%B", EV]);
    assert!(msg.contains("Rails-Transition: reopen c1"), "{msg}");
    assert!(msg.contains("the endpoint moved"), "{msg}");

    let c1 = &state(&repo)["criteria"]["c1"];
    assert_eq!(c1["status"], "pending");
    assert_eq!(c1["cycle"], 2);
    assert_eq!(c1["archivedCycles"], 1);
    for gone in ["red", "green", "surface", "binding", "cleanupReceipts"] {
        assert!(c1.get(gone).is_none(), "{gone} survived the reopen: {c1}");
    }
    // The archived cycle is still readable in the evidence tree, byte for byte.
    assert_eq!(
        repo.git(&["show", &format!("{EV}:cycles/c1/1/red.json")]),
        red1
    );
    for (file, key) in [
        ("green.json", "green"),
        ("surface.json", "surface"),
        ("red.json", "red"),
    ] {
        assert_eq!(
            repo.git(&["rev-parse", &format!("{EV}:cycles/c1/1/{file}")])
                .trim(),
            before[key]["id"].as_str().unwrap(),
            "{file}"
        );
    }
    assert_eq!(
        ev_json(&repo, "cycles/c1/1/cleanup-1.json")["note"],
        "nothing was started"
    );
    assert_eq!(
        ev_json(&repo, "cycles/c1/1/reopen.json")["note"],
        "the endpoint moved"
    );

    // RED must be earned again, and goes into cycle 2.
    refuse(
        &repo,
        &["evidence", "green", "S", "c1"],
        &["Failing-first violation: criterion \"c1\" is pending"],
    );
    refuse(
        &repo,
        &["evidence", "red", "S", "c1"],
        &["c1 already passes, so this RED would prove nothing"],
    );
    std::fs::remove_file(repo.path().join("feature.txt")).unwrap();
    let out = accept(&repo, "red", "c1", &[]);
    assert_eq!(
        repo.git(&["rev-parse", &format!("{EV}:cycles/c1/2/red.json")])
            .trim(),
        out["record"]["id"].as_str().unwrap()
    );
    assert_eq!(
        repo.git(&["show", &format!("{EV}:cycles/c1/1/red.json")]),
        red1
    );
    assert_eq!(state(&repo)["criteria"]["c1"]["cycle"], 2);
}

// ---------------------------------------------------------------------------------------------
// recheck

#[test]
fn recheck_needs_a_surfaced_criterion() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let args = ["evidence", "recheck", "S", "c1"];
    refuse(
        &repo,
        &args,
        &[
            "Criterion \"c1\" is pending; recheck re-binds a surfaced criterion",
            "git rails evidence red S c1",
        ],
    );
    accept(&repo, "red", "c1", &[]);
    refuse(
        &repo,
        &args,
        &[
            "Criterion \"c1\" is red; recheck",
            "git rails evidence green S c1",
        ],
    );
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    refuse(
        &repo,
        &args,
        &[
            "Criterion \"c1\" is green; recheck",
            "git rails evidence surface S c1 --note",
        ],
    );
}

#[test]
fn recheck_that_passes_rebinds_to_the_current_tree() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    let green_tree = state(&repo)["criteria"]["c1"]["binding"]["tree"].clone();
    repo.write("other.txt", "moved on\n");
    repo.git(&["add", "other.txt"]);
    let out = accept(&repo, "recheck", "c1", &[]);
    assert_eq!(out["status"], "surfaced");
    let tree = worktree_tree(&repo);
    assert_eq!(out["record"]["tree"], tree.as_str());
    assert_eq!(out["record"]["checkStatus"], "pass");
    let c1 = &state(&repo)["criteria"]["c1"];
    assert_ne!(c1["binding"]["tree"], green_tree);
    assert_eq!(c1["binding"]["tree"], tree.as_str());
    assert_eq!(c1["binding"]["by"], "recheck");
    assert_eq!(c1["rechecks"], 1);
    assert_eq!(
        repo.git(&["rev-parse", &format!("{EV}:cycles/c1/1/recheck-1.json")])
            .trim(),
        out["record"]["id"].as_str().unwrap()
    );

    // A recheck that fails re-binds nothing.
    std::fs::remove_file(repo.path().join("feature.txt")).unwrap();
    refuse(
        &repo,
        &["evidence", "recheck", "S", "c1"],
        &[
            "c1 fails on this tree",
            "a recheck re-binds only an observed pass",
            "git rails evidence reopen S c1 --note",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// criteria, contracts, records

#[test]
fn an_unknown_criterion_is_refused_listing_the_criteria() {
    let repo = frozen(json!([
        needs_file("c1", "feature.txt"),
        review("r1", "review.md")
    ]));
    for t in ["red", "green", "surface", "cleanup", "reopen", "recheck"] {
        refuse(
            &repo,
            &["evidence", t, "S", "c9", "--note", "n"],
            &[
                "S v1 has no criterion \"c9\"; its criteria are: c1, r1",
                "git rails status S",
            ],
        );
    }
    assert_eq!(tip(&repo), None);
}

#[test]
fn evidence_without_a_frozen_contract_is_refused() {
    let repo = TestRepo::new();
    repo.draft("S", json!([needs_file("c1", "feature.txt")]));
    refuse(
        &repo,
        &["evidence", "red", "S", "c1"],
        &["S has no frozen contract", "git rails contract freeze S"],
    );
    assert_eq!(tip(&repo), None);
}

#[test]
fn the_criteria_are_the_checks_of_the_newest_contract() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    refuse(
        &repo,
        &["evidence", "red", "S", "c2"],
        &["S v1 has no criterion \"c2\"; its criteria are: c1"],
    );
    repo.draft(
        "S",
        json!([
            needs_file("c1", "feature.txt"),
            needs_file("c2", "second.txt")
        ]),
    );
    repo.rails(&["contract", "freeze", "S", "--bump"]).ok();
    let out = accept(&repo, "red", "c2", &[]);
    assert_eq!(out["contractVersion"], "v1.1");
    assert_eq!(out["record"]["contractVersion"], "v1.1");
    let msg = repo.git(&["log", "-1", "--format=%B", EV]);
    assert!(msg.contains("Rails-Contract-Version: v1.1"), "{msg}");
}

#[test]
fn every_transition_is_one_commit_on_the_evidence_ref() {
    let repo = frozen(json!([
        needs_file("c1", "feature.txt"),
        review("r1", "review.md")
    ]));
    repo.write("review.md", "- [x] read\n");
    repo.commit_all("checklist");
    let steps: [(&str, &str, &[&str]); 8] = [
        ("cleanup", "c1", &["--note", "nothing yet"]),
        ("red", "c1", &[]),
        ("red", "c1", &[]),
        ("green", "c1", &[]),
        ("surface", "c1", &["--note", "PR"]),
        ("cleanup", "c1", &["--note", "nothing was started"]),
        ("surface", "r1", &["--note", "read by Kim"]),
        ("reopen", "c1", &["--note", "scope grew"]),
    ];
    for (t, c, extra) in steps {
        if t == "green" {
            repo.write("feature.txt", "done\n");
            repo.git(&["add", "feature.txt"]);
        }
        accept(&repo, t, c, extra);
    }
    let log = repo.git(&[
        "log",
        "--format=%(trailers:key=Rails-Transition,valueonly)",
        EV,
    ]);
    let transitions: Vec<&str> = log.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(
        transitions,
        [
            "reopen c1",
            "surface r1",
            "cleanup c1",
            "surface c1",
            "green c1",
            "red c1",
            "red c1",
            "cleanup c1"
        ]
    );
    assert_eq!(repo.git(&["rev-list", "--count", EV]).trim(), "8");
    let sprints = repo.git(&["log", "--format=%(trailers:key=Rails-Sprint,valueonly)", EV]);
    assert_eq!(
        sprints.lines().filter(|l| l.trim() == "S").count(),
        8,
        "{sprints}"
    );
    // The evidence ref never touches the branch (its commits: the initial one and the
    // committed checklist).
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "2");
}

// ---------------------------------------------------------------------------------------------
// the user's index and work tree

type Snapshot = (String, String, Vec<u8>, std::time::SystemTime);

fn snapshot(repo: &TestRepo) -> Snapshot {
    let index = repo.path().join(".git/index");
    let bytes = std::fs::read(&index).unwrap();
    let mtime = std::fs::metadata(&index).unwrap().modified().unwrap();
    // --no-optional-locks: looking must not refresh the index either.
    let status = repo.git(&[
        "--no-optional-locks",
        "status",
        "--porcelain",
        "--untracked-files=all",
    ]);
    let cached = repo.git(&["--no-optional-locks", "diff", "--cached"]);
    (status, cached, bytes, mtime)
}

#[track_caller]
fn assert_same(before: &Snapshot, after: &Snapshot) {
    assert_eq!(before.0, after.0, "git status changed");
    assert_eq!(before.1, after.1, "git diff --cached changed");
    assert!(before.2 == after.2, ".git/index bytes changed");
    assert_eq!(before.3, after.3, ".git/index mtime changed");
}

#[test]
fn red_and_green_leave_the_index_and_the_work_tree_untouched() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    repo.write("staged.txt", "one\n");
    repo.write(".rails/plan.md", "plan\n");
    repo.write(".rails/notes.md", "notes\n");
    repo.commit_all("add staged.txt and the tool's files");
    // A staged change, an unstaged change (in the tool folder, which may differ from HEAD at
    // RED), an untracked file.
    repo.write(".rails/plan.md", "plan\ntwo (staged)\n");
    repo.git(&["add", ".rails/plan.md"]);
    repo.write(".rails/notes.md", "notes\nunstaged line\n");
    repo.write("untracked.txt", "nobody added me\n");
    // Let the index settle so that nothing but rails could write it.
    repo.git(&["update-index", "-q", "--refresh"]);
    std::thread::sleep(std::time::Duration::from_millis(1100));

    let before = snapshot(&repo);
    assert!(before.0.contains("M  .rails/plan.md"), "{}", before.0);
    assert!(before.0.contains(" M .rails/notes.md"), "{}", before.0);
    assert!(before.0.contains("?? untracked.txt"), "{}", before.0);
    assert!(before.1.contains("+two (staged)"), "{}", before.1);
    let red = accept(&repo, "red", "c1", &[]);
    assert_same(&before, &snapshot(&repo));
    // RED's tree is the tracked content: staged and unstaged changes, never an untracked file.
    let red_tree = red["record"]["tree"].as_str().unwrap().to_string();
    assert_eq!(red_tree, worktree_tree(&repo));
    assert_eq!(
        repo.git(&["show", &format!("{red_tree}:.rails/notes.md")]),
        "notes\nunstaged line\n"
    );
    assert_eq!(
        repo.git_run(&["cat-file", "-e", &format!("{red_tree}:untracked.txt")])
            .code,
        128
    );
    assert!(red["record"]["untracked"]
        .as_array()
        .unwrap()
        .contains(&json!("untracked.txt")));

    // Changes no commit holds: a RED is refused, and the refusal touches nothing either.
    repo.write("staged.txt", "one\ntwo (staged)\n");
    repo.git(&["add", "staged.txt"]);
    repo.write("README.md", "test repository\nunstaged line\n");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let before = snapshot(&repo);
    repo.rails(&["evidence", "red", "S", "c1"])
        .code(65)
        .stderr_has("README.md, staged.txt differ from HEAD");
    assert_same(&before, &snapshot(&repo));

    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let before = snapshot(&repo);
    let green = accept(&repo, "green", "c1", &[]);
    assert_same(&before, &snapshot(&repo));
    let green_tree = green["record"]["tree"].as_str().unwrap();
    assert_eq!(green_tree, worktree_tree(&repo));
    assert_eq!(
        repo.git(&["show", &format!("{green_tree}:staged.txt")]),
        "one\ntwo (staged)\n"
    );
    assert_eq!(
        repo.git(&["show", &format!("{green_tree}:README.md")]),
        "test repository\nunstaged line\n"
    );
    // No temporary index is left behind.
    let leftovers: Vec<String> = std::fs::read_dir(repo.path().join(".git"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("index") && n != "index")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert!(!Path::new(&repo.path().join(".git/index.lock")).exists());
}

// ---------------------------------------------------------------------------------------------
// the sprint bound to a branch

#[test]
fn bind_records_the_sprint_of_the_branch_and_commands_default_to_it() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    // Unbound: one argument is not enough.
    let run = repo.rails(&["evidence", "red", "c1"]);
    run.code(64)
        .stderr_has("no sprint given, and branch main has none bound")
        .stderr_has("git rails contract bind <sprint>");
    assert_eq!(tip(&repo), None);

    repo.rails(&["contract", "bind", "S"])
        .ok()
        .stdout_has("bound S to branch main (branch.main.railsSprint)");
    assert_eq!(repo.git(&["config", "branch.main.railsSprint"]).trim(), "S");
    let run = repo.rails(&["evidence", "red", "c1"]);
    run.ok().stdout_has("RED S c1 recorded as");
    assert_eq!(state(&repo)["criteria"]["c1"]["status"], "red");
    let msg = repo.git(&["log", "-1", "--format=%B", EV]);
    assert!(msg.contains("Rails-Sprint: S"), "{msg}");
    repo.rails(&["status"])
        .ok()
        .stdout_has("Contract S v1")
        .stdout_has("- [red] c1");
    repo.rails(&["gate"])
        .code(2)
        .stdout_has("git rails evidence green S c1");
    // A refusal through the binding names the sprint in its next command.
    repo.rails(&["evidence", "surface", "c1", "--note", "x"])
        .code(65)
        .stderr_has("git rails evidence green S c1");

    // Another branch has its own binding.
    repo.git(&["checkout", "-q", "-b", "other"]);
    let before = tip(&repo);
    repo.rails(&["evidence", "red", "c1"])
        .code(64)
        .stderr_has("branch other has none bound");
    assert_eq!(tip(&repo), before);

    // A detached HEAD binds nothing.
    repo.git(&["checkout", "-q", "--detach"]);
    repo.rails(&["contract", "bind", "S"])
        .code(65)
        .stderr_has("HEAD is detached");

    // Binding a sprint that is not frozen yet works, and says so.
    repo.git(&["checkout", "-q", "other"]);
    repo.rails(&["contract", "bind", "T-2"])
        .ok()
        .stdout_has("T-2 has no frozen contract yet")
        .stdout_has("git rails contract freeze T-2");
    assert_eq!(
        repo.git(&["config", "branch.other.railsSprint"]).trim(),
        "T-2"
    );
}

#[test]
fn red_from_a_subfolder_records_the_whole_work_tree() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    repo.write("src/lib.txt", "code\n");
    repo.git(&["add", "src/lib.txt"]);
    let before = tip(&repo);
    // From a subfolder too, the whole work tree is what must be committed.
    repo.rails_in("src", &["evidence", "red", "S", "c1"])
        .code(65)
        .stderr_has("src/lib.txt differs from HEAD");
    assert_eq!(tip(&repo), before);
    repo.git(&["commit", "-q", "-m", "lib"]);
    repo.rails_in("src", &["evidence", "red", "S", "c1"])
        .ok()
        .stdout_has("c1 is now red");
    assert_ne!(tip(&repo), before);
    let tree = state(&repo)["criteria"]["c1"]["red"]["tree"].clone();
    assert_eq!(tree, worktree_tree(&repo).as_str());
    assert_eq!(
        repo.git(&["show", &format!("{}:src/lib.txt", tree.as_str().unwrap())]),
        "code\n"
    );
}

#[test]
fn red_in_a_repository_without_commits_is_refused_until_there_is_one() {
    // No commit, so no HEAD and no .git/index yet: nothing a RED could name as its base.
    let repo = TestRepo::bare_init();
    repo.draft("S", json!([needs_file("c1", "feature.txt")]));
    repo.rails(&["contract", "freeze", "S"]).ok();
    repo.write("src/lib.txt", "code\n");
    assert!(!repo.path().join(".git/index").exists());
    // A RED is recorded on a commit (its base): with none, it is refused, saying so...
    repo.rails(&["evidence", "red", "S", "c1"])
        .code(65)
        .stderr_has("there is no commit yet")
        .stderr_has("git add -A && git commit");
    assert_eq!(tip(&repo), None);
    // ...and the user still has no index.
    assert!(!repo.path().join(".git/index").exists());
    repo.git(&["add", "src/lib.txt"]);
    repo.git(&["commit", "-q", "-m", "lib"]);
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let out = accept(&repo, "red", "c1", &[]);
    let rec = &out["record"];
    assert_eq!(rec["exitCode"], 1);
    assert_eq!(rec["head"], head.as_str());
    assert_eq!(rec["base"], head.as_str());
    assert_eq!(rec["dirty"], false);
    assert_eq!(rec["untracked"], json!([".rails/contracts/S.json"]));
    let tree = rec["tree"].as_str().unwrap();
    assert_eq!(
        repo.git(&["show", &format!("{tree}:src/lib.txt")]),
        "code\n"
    );
}

#[test]
fn a_recapture_keeps_no_output_log_of_an_earlier_run() {
    // The first RED prints why it fails; the re-capture prints nothing.
    let repo = frozen(json!([check(
        "c1",
        "command_success",
        json!({"command": "test -f feature.txt || { if [ -f loud ]; then echo 'loud failure' >&2; fi; exit 1; }"})
    )]));
    repo.write("loud", "\n");
    accept(&repo, "red", "c1", &[]);
    let log = repo.git(&["show", &format!("{EV}:cycles/c1/1/red.log")]);
    assert!(log.contains("loud failure"), "{log}");
    std::fs::remove_file(repo.path().join("loud")).unwrap();
    accept(&repo, "red", "c1", &[]);
    // The log beside red.json must be the log of that run (which printed nothing), not the
    // output of the run it replaced.
    let beside = repo.git_run(&["show", &format!("{EV}:cycles/c1/1/red.log")]);
    assert!(
        !beside.stdout.contains("loud failure"),
        "cycles/c1/1/red.log still holds the replaced RED's output next to the new red.json:\n{}",
        beside.stdout
    );
}

// ---------------------------------------------------------------------------------------------
// nothing private leaves the machine; GREEN must follow a change

/// Every path of every commit of the evidence ref.
fn evidence_paths(repo: &TestRepo) -> Vec<String> {
    let mut out = Vec::new();
    for c in repo.git(&["rev-list", EV]).lines() {
        out.extend(
            repo.git(&["ls-tree", "-r", "--name-only", c])
                .lines()
                .map(str::to_string),
        );
    }
    out
}

#[test]
fn an_untracked_file_never_enters_a_record_and_is_listed_by_name() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    repo.write(".env", "TOKEN=never-leaves-the-machine\n");
    repo.write(
        "creds.local.json",
        "{\"token\": \"never-leaves-the-machine\"}\n",
    );
    let red = accept(&repo, "red", "c1", &[]);
    let listed = red["record"]["untracked"].as_array().unwrap().clone();
    assert!(listed.contains(&json!(".env")), "{listed:?}");
    assert!(listed.contains(&json!("creds.local.json")), "{listed:?}");
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    accept(&repo, "surface", "c1", &["--note", "PR"]);
    let paths = evidence_paths(&repo);
    assert!(
        paths.iter().any(|p| p.ends_with("/feature.txt")),
        "{paths:?}"
    );
    for p in &paths {
        assert!(
            !p.ends_with(".env") && !p.ends_with("creds.local.json"),
            "{p} is in the evidence ref"
        );
    }
    // Not one reachable blob holds the secret.
    let objects = repo.git(&["rev-list", "--objects", EV]);
    for line in objects.lines() {
        let id = line.split(' ').next().unwrap();
        if repo.git(&["cat-file", "-t", id]).trim() == "blob" {
            assert!(!repo
                .git(&["cat-file", "blob", id])
                .contains("never-leaves-the-machine"));
        }
    }
}

#[test]
fn a_stray_untracked_file_never_makes_a_proof_stale() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    repo.write("scratch.txt", "notes to self\n");
    prove(&repo, "c1", "feature.txt");
    repo.git(&["commit", "-q", "-m", "feature"]);
    repo.rails(&["gate", "S"]).ok().stdout_has("gate passed");
    std::fs::remove_file(repo.path().join("scratch.txt")).unwrap();
    repo.rails(&["gate", "S"]).ok().stdout_has("gate passed");
}

#[test]
fn green_on_the_reds_tracked_tree_is_refused_until_the_change_is_added() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    repo.write("feature.txt", "done\n");
    refuse(
        &repo,
        &["evidence", "green", "S", "c1"],
        &[
            "GREEN of \"c1\" is on the same tracked tree as its RED",
            "`git add <file>`",
            "--because \"<what changed>\"",
        ],
    );
    repo.git(&["add", "feature.txt"]);
    let out = accept(&repo, "green", "c1", &[]);
    assert!(out["record"].get("because").is_none());
}

#[test]
fn a_green_with_nothing_changed_in_the_tree_needs_because_and_shows_it() {
    // The check passes once an ignored runner is back: nothing git tracks changes.
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
    refuse(
        &repo,
        &["evidence", "green", "S", "c1"],
        &["same tracked tree as its RED"],
    );
    let out = accept(
        &repo,
        "green",
        "c1",
        &["--because", "reinstalled the runner"],
    );
    assert_eq!(out["record"]["because"], "reinstalled the runner");
    repo.rails(&["status", "S"])
        .ok()
        .stdout_has("because: reinstalled the runner");
    let gate = repo.rails(&["gate", "S", "--json"]);
    assert_eq!(gate.code, 2, "{gate}");
    assert_eq!(
        gate.json()["criteria"][0]["because"],
        "reinstalled the runner"
    );
}

#[test]
fn because_is_for_green_only_and_needs_text() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let run = repo.rails(&["evidence", "red", "S", "c1", "--because", "x"]);
    run.code(64).stderr_has("--because is for green only");
    accept(&repo, "red", "c1", &[]);
    repo.rails(&["evidence", "green", "S", "c1", "--because", "  "])
        .code(64)
        .stderr_has("--because needs the text");
    assert_eq!(state(&repo)["criteria"]["c1"]["status"], "red");
}

#[test]
fn a_runtime_check_may_go_green_on_the_reds_tree() {
    let port = crate::harness::free_port();
    let repo = frozen(json!([check(
        "c1",
        "process_listening",
        json!({"port": port, "host": "127.0.0.1"})
    )]));
    accept(&repo, "red", "c1", &[]);
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let out = accept(&repo, "green", "c1", &[]);
    assert_eq!(
        out["record"]["tree"],
        state(&repo)["criteria"]["c1"]["red"]["tree"]
    );
    drop(listener);
}

#[test]
fn doctor_lists_records_whose_trees_carry_files_no_commit_holds() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    // Staged when the GREEN was taken, then unstaged and never committed: the record's tree
    // carries it (as every record written before untracked files were left out may).
    repo.write("secret.txt", "TOKEN=1\n");
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "secret.txt", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    repo.git(&["rm", "-q", "--cached", "secret.txt"]);
    let run = repo.rails(&["doctor"]);
    run.code(1)
        .stdout_has("untracked-content: refs/rails/evidence/S carries trees/")
        .stdout_has("secret.txt")
        .stdout_has("git update-ref -d refs/rails/evidence/S");
    // Once committed, it is no longer reported.
    repo.git(&["add", "secret.txt"]);
    repo.git(&["commit", "-q", "-m", "secret is fine after all"]);
    repo.rails(&["doctor"]).stdout_lacks("untracked-content");
}

// ---------------------------------------------------------------------------------------------
// What a check reads is frozen with it

/// The attack: RED against a strict schema, then replace the schema (and what it `$ref`s) with
/// `{}` and write any JSON. The check validates against the schema as frozen, so GREEN and
/// validate still fail; only a document the frozen schema accepts turns it GREEN.
#[test]
fn artifact_schema_validates_against_the_schema_as_frozen() {
    let repo = TestRepo::new();
    repo.write(
        "schemas/out.schema.json",
        r##"{"$ref": "defs.json#/$defs/out"}"##,
    );
    repo.write(
        "schemas/defs.json",
        r#"{"$defs": {"out": {"type": "object", "required": ["ok"], "properties": {"ok": {"const": true}}}}}"#,
    );
    let c1 = check(
        "c1",
        "artifact_schema",
        json!({"path": "out.json", "schema": "schemas/out.schema.json"}),
    );
    // A schema that is not tracked is not frozen: nothing untracked goes into a record.
    repo.draft("S", json!([c1.clone()]));
    repo.rails(&["contract", "freeze", "S"])
        .code(65)
        .stderr_has("schemas/out.schema.json (schema of c1) is not tracked by git")
        .stderr_has("git add schemas/out.schema.json");
    repo.commit_all("schemas");
    repo.rails(&["contract", "freeze", "S"]).ok();
    let pinned = repo.git(&["show", "refs/rails/contracts/S:pinned.json"]);
    assert!(pinned.contains("\"schemas/defs.json\""), "{pinned}");
    assert!(
        pinned.contains("$ref of schemas/out.schema.json"),
        "{pinned}"
    );
    assert_eq!(
        repo.git(&["show", "refs/rails/contracts/S:pinned/schemas/defs.json"]),
        repo.read("schemas/defs.json")
    );
    repo.write("out.json", r#"{"ok": false}"#);
    accept(&repo, "red", "c1", &[]);

    repo.write("schemas/out.schema.json", "{}");
    repo.write("schemas/defs.json", "{}");
    repo.write("out.json", r#"{"nope": 1}"#);
    repo.commit_all("the attack");
    refuse(&repo, &["evidence", "green", "S", "c1"], &["still fails"]);
    repo.rails(&["contract", "validate", "S", "--no-note"])
        .code(1)
        .stdout_has("FAIL");

    repo.write("out.json", r#"{"ok": true}"#);
    repo.commit_all("the work");
    accept(&repo, "green", "c1", &[]);
    repo.rails(&["contract", "validate", "S", "--no-note"]).ok();
}

/// `checkPaths`: the test files the checks run are frozen; a check that runs one that changed
/// is refused, and a change after the proof makes the criteria that run it ask for reopen —
/// also when a new version froze the new content.
#[test]
fn check_paths_are_frozen_and_a_change_asks_for_reopen() {
    let repo = TestRepo::new();
    repo.write("tests/t.sh", "test -f feature.txt\n");
    repo.write("tests/notes.md", "not a test\n");
    repo.commit_all("tests");
    let c1 = check("c1", "command_success", json!({"command": "sh tests/t.sh"}));
    let mut c2 = check("c2", "file_exists", json!({"path": "other.txt"}));
    c2["scope"] = json!(["other.txt"]);
    repo.draft_with("S", json!([c1, c2]), json!({"checkPaths": ["tests/*.sh"]}));
    repo.rails(&["contract", "freeze", "S"]).ok();
    let pinned = repo.git(&["show", "refs/rails/contracts/S:pinned.json"]);
    assert!(pinned.contains("\"tests/t.sh\""), "{pinned}");
    assert!(!pinned.contains("notes.md"), "{pinned}");
    accept(&repo, "red", "c1", &[]);
    accept(&repo, "red", "c2", &[]);

    // The attack: weaken the test so that it passes without the work.
    repo.write("tests/t.sh", "exit 0\n");
    repo.commit_all("weaker test");
    refuse(
        &repo,
        &["evidence", "green", "S", "c1"],
        &["tests/t.sh differs from what v1 froze (checkPaths)"],
    );
    // c2 does not run it.
    repo.write("other.txt", "x\n");
    repo.commit_all("other");
    accept(&repo, "green", "c2", &[]);

    repo.write("tests/t.sh", "test -f feature.txt\n");
    repo.write("feature.txt", "done\n");
    repo.commit_all("the work");
    accept(&repo, "green", "c1", &[]);
    for id in ["c1", "c2"] {
        accept(&repo, "surface", id, &["--note", "PR"]);
        accept(&repo, "cleanup", id, &["--note", "nothing started"]);
    }
    repo.rails(&["gate", "S"]).ok();

    // Changed after the proof: the criterion that runs it asks for reopen, the other not.
    repo.write("tests/t.sh", "test -f feature.txt && true\n");
    repo.commit_all("test changed");
    let g = repo.rails(&["gate", "S"]);
    g.code(2)
        .stdout_has("c1 the test files it runs changed since v1 froze them (tests/t.sh)");
    assert!(!g.stdout.contains("- c2"), "{g}");
    // Frozen as a new version: still reopen, since c1 was proven against the old test.
    repo.rails(&["contract", "freeze", "S", "--bump"]).ok();
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("c1 v1.1 froze new content of the test files it runs (tests/t.sh)")
        .stdout_has("git rails evidence reopen S c1");
    accept(&repo, "reopen", "c1", &["--note", "the test changed"]);
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("c1 is pending");
}
