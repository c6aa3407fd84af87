//! `git rails status` and `git rails gate`: the seed's report, the gate's three outcomes, and
//! staleness (with and without scope, `.rails/` left out, `--commit`, recheck, and contract
//! versions that change a check's spec or leave it alone).

use crate::evidence::{accept, frozen, needs_file, prove, refuse, review, state, tip};
use crate::harness::TestRepo;
use serde_json::{json, Value};

const COULD_NOT: &str = "the verification gate could not run; completion remains blocked";

fn head(repo: &TestRepo) -> String {
    repo.git(&["rev-parse", "HEAD"]).trim().to_string()
}

fn status_json(repo: &TestRepo) -> Value {
    let run = repo.rails(&["status", "S", "--json"]);
    run.ok();
    run.json()
}

fn criterion<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no criterion {id} in {report}"))
}

fn short(v: &Value) -> String {
    v.as_str().unwrap()[..7].to_string()
}

/// A check whose staleness looks only at `scope`.
fn scoped(mut check: Value, scope: &[&str]) -> Value {
    check["scope"] = json!(scope);
    check
}

// ---------------------------------------------------------------------------------------------
// status

#[test]
fn status_prints_the_seeds_report_with_the_record_ids() {
    let repo = frozen(json!([
        needs_file("c1", "feature.txt"),
        needs_file("c2", "second.txt"),
        review("r1", "review.md"),
        needs_file("c3", "third.txt"),
    ]));
    repo.write("review.md", "- [x] read\n");
    repo.commit_all("checklist");
    accept(&repo, "red", "c1", &[]);
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    accept(&repo, "surface", "c1", &["--note", "PR"]);
    // A RED is recorded on committed content (and the frozen test files) only.
    repo.commit_all("work");
    accept(&repo, "red", "c2", &[]);
    accept(&repo, "surface", "r1", &["--note", "read"]);

    let st = state(&repo);
    let c1 = &st["criteria"]["c1"];
    let (r, g, s) = (
        short(&c1["red"]["id"]),
        short(&c1["green"]["id"]),
        short(&c1["surface"]["id"]),
    );
    let r2 = short(&st["criteria"]["c2"]["red"]["id"]);
    let s3 = short(&st["criteria"]["r1"]["surface"]["id"]);

    let run = repo.rails(&["status", "S"]);
    run.ok()
        .stdout_has("Contract S v1 [feature]")
        .stdout_has(&format!(
            "- [surfaced] c1: c1 holds -> command_success (RED:{r} GREEN:{g} SURFACE:{s})\n"
        ))
        .stdout_has(&format!(
            "- [red] c2: c2 holds -> command_success (RED:{r2})\n"
        ))
        .stdout_has(&format!(
            "- [surfaced] r1: r1 holds -> manual_checklist (review) (SURFACE:{s3})\n"
        ))
        .stdout_has("- [pending] c3: c3 holds -> command_success\n")
        .stdout_has("\nNo teardown receipt 1: c1\n")
        .stdout_has("\nStale 0\n");
    // The criteria are listed in the contract's order.
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("- ["))
        .collect();
    assert_eq!(lines.len(), 4, "{run}");
    assert!(
        lines[0].contains(" c1:") && lines[1].contains(" c2:"),
        "{run}"
    );
    assert!(
        lines[2].contains(" r1:") && lines[3].contains(" c3:"),
        "{run}"
    );

    // The document says the same, with ids that are prefixes of the records'.
    let j = status_json(&repo);
    assert_eq!(j["schema"], "rails-status/v1");
    assert_eq!(j["sprint"], "S");
    assert_eq!(j["version"], "v1");
    assert_eq!(j["type"], "feature");
    assert_eq!(j["commit"], head(&repo).as_str());
    assert_eq!(j["done"], false);
    assert_eq!(j["noReceipt"], json!(["c1"]));
    assert_eq!(j["stale"], json!([]));
    let jc1 = criterion(&j, "c1");
    assert_eq!(jc1["status"], "surfaced");
    assert_eq!(jc1["proof"], "check");
    assert_eq!(jc1["receipts"], 0);
    for (key, full) in [("red", &c1["red"]), ("green", &c1["green"])] {
        let shown = jc1[key].as_str().unwrap();
        assert!(
            full["id"].as_str().unwrap().starts_with(shown) && shown.len() >= 7,
            "{key}: {shown} is not a prefix of {}",
            full["id"]
        );
    }
    assert_eq!(jc1["surface"], s.as_str());
    assert_eq!(criterion(&j, "c2")["red"], r2.as_str());
    assert_eq!(criterion(&j, "c2")["green"], Value::Null);
    assert_eq!(criterion(&j, "r1")["proof"], "review");
    assert_eq!(criterion(&j, "c3")["status"], "pending");

    // A receipt and a stale criterion show up in the last two lines.
    accept(&repo, "cleanup", "c1", &["--note", "nothing was started"]);
    repo.write("feature.txt", "changed\n");
    repo.commit_all("change");
    repo.rails(&["status", "S"])
        .ok()
        .stdout_has("\nNo teardown receipt 0\n")
        .stdout_has("\nStale 2: c1, r1\n");
    let j = status_json(&repo);
    assert_eq!(j["stale"], json!(["c1", "r1"]));
    assert_eq!(criterion(&j, "c1")["stale"], json!(["feature.txt"]));
    assert_eq!(criterion(&j, "c1")["receipts"], 1);
}

#[test]
fn status_of_a_sprint_without_a_frozen_contract_is_refused() {
    let repo = TestRepo::new();
    repo.rails(&["status", "S"])
        .code(65)
        .stderr_has("S has no frozen contract")
        .stderr_has("git rails contract freeze S");
}

// ---------------------------------------------------------------------------------------------
// the gate's three outcomes

#[test]
fn gate_passes_only_when_every_criterion_is_surfaced_receipted_and_fresh() {
    let repo = frozen(json!([
        needs_file("c1", "feature.txt"),
        review("r1", "review.md")
    ]));
    let short_head = head(&repo)[..7].to_string();
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has(&format!(
            "gate blocked: S v1 is not done at {short_head} (2 steps missing)"
        ))
        .stdout_has("- c1 is pending: git rails evidence red S c1\n")
        .stdout_has("- r1 is pending: git rails evidence surface S r1 --note");

    repo.write("review.md", "- [x] read\n");
    repo.commit_all("checklist");
    accept(&repo, "red", "c1", &[]);
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    accept(&repo, "surface", "c1", &["--note", "PR"]);
    accept(&repo, "surface", "r1", &["--note", "read"]);
    repo.commit_all("work");
    // Surfaced but without a teardown receipt: blocked, and only c1 is asked for one (a review
    // proof is exempt).
    let run = repo.rails(&["gate", "S"]);
    run.code(2)
        .stdout_has("(1 step missing)")
        .stdout_has("- c1 has no teardown receipt: git rails evidence cleanup S c1 --note")
        .stdout_lacks("r1");
    let j = repo.rails(&["gate", "S", "--json"]);
    j.code(2);
    let j = j.json();
    assert_eq!(j["schema"], "rails-status/v1");
    assert_eq!(j["done"], false);
    assert_eq!(j["noReceipt"], json!(["c1"]));
    assert_eq!(j["missing"].as_array().unwrap().len(), 1);
    assert_eq!(j["missing"][0]["criterion"], "c1");
    assert!(j["missing"][0]["command"]
        .as_str()
        .unwrap()
        .starts_with("git rails evidence cleanup S c1"));

    accept(&repo, "cleanup", "c1", &["--note", "nothing was started"]);
    let short_head = head(&repo)[..7].to_string();
    repo.rails(&["gate", "S"])
        .ok()
        .stdout_has(&format!("gate passed: S v1 is done at {short_head}"));
    let j = repo.rails(&["gate", "S", "--json"]);
    j.ok();
    let j = j.json();
    assert_eq!(j["done"], true);
    assert_eq!(j["missing"], json!([]));
    assert_eq!(j["commit"], head(&repo).as_str());
}

#[test]
fn gate_lists_every_missing_step_with_its_command() {
    let repo = frozen(json!([
        needs_file("c1", "one.txt"),
        needs_file("c2", "two.txt"),
        needs_file("c3", "three.txt"),
        needs_file("c4", "four.txt"),
        review("r1", "review.md"),
    ]));
    accept(&repo, "red", "c2", &[]);
    accept(&repo, "red", "c3", &[]);
    accept(&repo, "red", "c4", &[]);
    repo.write("three.txt", "done\n");
    repo.git(&["add", "three.txt"]);
    repo.write("four.txt", "done\n");
    repo.git(&["add", "four.txt"]);
    accept(&repo, "green", "c3", &[]);
    accept(&repo, "green", "c4", &[]);
    accept(&repo, "surface", "c4", &["--note", "PR"]);
    repo.commit_all("work");
    let run = repo.rails(&["gate", "S"]);
    run.code(2)
        .stdout_has("(5 steps missing)")
        .stdout_has("- c1 is pending: git rails evidence red S c1\n")
        .stdout_has("- c2 is red: git rails evidence green S c2\n")
        .stdout_has("- c3 is green: git rails evidence surface S c3 --note")
        .stdout_has("- c4 has no teardown receipt: git rails evidence cleanup S c4 --note")
        .stdout_has("- r1 is pending: git rails evidence surface S r1 --note");
    let j = repo.rails(&["gate", "S", "--json"]).json();
    let steps: Vec<(String, String)> = j["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["criterion"].as_str().unwrap().to_string(),
                m["command"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(steps.len(), 5, "{j}");
    assert_eq!(
        steps[0],
        ("c1".into(), "git rails evidence red S c1".into())
    );
    assert_eq!(
        steps[1],
        ("c2".into(), "git rails evidence green S c2".into())
    );
    assert!(steps[2]
        .1
        .starts_with("git rails evidence surface S c3 --note"));
    assert!(steps[3]
        .1
        .starts_with("git rails evidence cleanup S c4 --note"));
    assert!(steps[4]
        .1
        .starts_with("git rails evidence surface S r1 --note"));
}

#[test]
fn a_gate_that_could_not_decide_exits_with_another_code() {
    let repo = TestRepo::new();
    // No frozen contract.
    let run = repo.rails(&["gate", "S"]);
    run.code(65)
        .stderr_has(COULD_NOT)
        .stderr_has("S has no frozen contract")
        .stdout_lacks("gate passed");
    repo.draft("S", json!([needs_file("c1", "feature.txt")]));
    repo.rails(&["contract", "freeze", "S"]).ok();
    // A revision that does not exist, or is not a commit.
    repo.rails(&["gate", "S", "--commit", "nosuchrev"])
        .code(65)
        .stderr_has(COULD_NOT)
        .stderr_has("nosuchrev")
        .stdout_lacks("gate passed");
    repo.rails(&["gate", "S", "--commit", "HEAD^{tree}"])
        .code(65)
        .stderr_has(COULD_NOT);
    // No sprint named and none bound.
    let run = repo.rails(&["gate"]);
    assert!(run.code != 0 && run.code != 2, "{run}");
    run.stderr_has(COULD_NOT)
        .stderr_has("git rails contract bind");
    assert_eq!(tip(&repo), None);
}

#[test]
fn a_gate_with_no_commit_to_judge_could_not_decide() {
    let repo = TestRepo::bare_init();
    repo.draft("S", json!([needs_file("c1", "feature.txt")]));
    repo.rails(&["contract", "freeze", "S"]).ok();
    let run = repo.rails(&["gate", "S"]);
    assert!(run.code != 0 && run.code != 2, "{run}");
    run.stderr_has(COULD_NOT);
}

// ---------------------------------------------------------------------------------------------
// staleness

#[test]
fn a_change_to_the_proven_tree_makes_a_criterion_stale_until_recheck() {
    let repo = frozen(json!([needs_file("c1", "src/feature.txt")]));
    prove(&repo, "c1", "src/feature.txt");
    // The proof ran on the work tree; HEAD does not have the change yet.
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("- c1 is stale: src/feature.txt changed since it was proven: git rails evidence recheck S c1\n");
    repo.commit_all("feature");
    let proven = head(&repo);
    repo.rails(&["gate", "S"]).ok();

    repo.write("src/feature.txt", "done, then changed\n");
    repo.write("src/more.txt", "more\n");
    repo.commit_all("change the proven code");
    let run = repo.rails(&["gate", "S"]);
    run.code(2)
        .stdout_has("(1 step missing)")
        .stdout_has("- c1 is stale: src/feature.txt, src/more.txt changed since it was proven: git rails evidence recheck S c1\n");
    repo.rails(&["status", "S"])
        .ok()
        .stdout_has("\nStale 1: c1\n");
    let j = repo.rails(&["gate", "S", "--json"]).json();
    assert_eq!(j["stale"], json!(["c1"]));
    assert_eq!(
        criterion(&j, "c1")["stale"],
        json!(["src/feature.txt", "src/more.txt"])
    );
    assert_eq!(
        j["missing"][0]["command"],
        "git rails evidence recheck S c1"
    );

    // --commit judges that commit's tree: the proven one is still done.
    repo.rails(&["gate", "S", "--commit", &proven])
        .ok()
        .stdout_has(&format!("done at {}", &proven[..7]));
    let j = repo.rails(&["gate", "S", "--commit", &proven, "--json"]);
    j.ok();
    assert_eq!(j.json()["commit"], proven.as_str());
    repo.rails(&["gate", "S", "--commit", "HEAD"]).code(2);

    // recheck: the same check passes on the new tree, and the criterion is bound to it.
    let out = accept(&repo, "recheck", "c1", &[]);
    let new_tree = repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
    assert_eq!(out["record"]["tree"], new_tree.as_str());
    assert_eq!(out["record"]["head"], head(&repo).as_str());
    let c1 = &state(&repo)["criteria"]["c1"];
    assert_eq!(c1["binding"]["tree"], new_tree.as_str());
    assert_eq!(c1["binding"]["by"], "recheck");
    assert_eq!(c1["status"], "surfaced");
    repo.rails(&["gate", "S"]).ok();
    repo.rails(&["status", "S"]).ok().stdout_has("\nStale 0\n");
    // Now the older commit is the one that differs from the proven tree.
    repo.rails(&["gate", "S", "--commit", &proven])
        .code(2)
        .stdout_has("c1 is stale");
}

#[test]
fn a_deleted_file_makes_a_criterion_stale() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    repo.commit_all("feature");
    repo.rails(&["gate", "S"]).ok();
    repo.git(&["rm", "-q", "README.md"]);
    repo.git(&["commit", "-q", "-m", "drop the readme"]);
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("- c1 is stale: README.md changed since it was proven");
}

#[test]
fn scope_limits_staleness_to_its_globs() {
    let repo = frozen(json!([
        scoped(needs_file("c1", "src/feature.txt"), &["src/**"]),
        needs_file("c2", "lib/other.txt"),
    ]));
    prove(&repo, "c1", "src/feature.txt");
    repo.commit_all("c1");
    prove(&repo, "c2", "lib/other.txt");
    repo.commit_all("work");
    repo.rails(&["gate", "S"]).ok();

    // Outside c1's scope: c1 stays fresh; c2 declares no scope, so any change counts.
    repo.write("docs/notes.md", "notes\n");
    repo.write("README.md", "reworded\n");
    repo.commit_all("docs");
    let run = repo.rails(&["gate", "S"]);
    run.code(2)
        .stdout_has("- c2 is stale: README.md, docs/notes.md changed since it was proven")
        .stdout_lacks("c1 is stale");
    accept(&repo, "recheck", "c2", &[]);
    repo.rails(&["gate", "S"]).ok();

    // Deep inside the scope.
    repo.write("src/deep/er/mod.txt", "x\n");
    repo.commit_all("src");
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("- c1 is stale: src/deep/er/mod.txt changed since it was proven")
        .stdout_has("- c2 is stale: src/deep/er/mod.txt changed since it was proven");
    let j = repo.rails(&["status", "S", "--json"]).json();
    assert_eq!(j["stale"], json!(["c1", "c2"]));
}

#[test]
fn changes_under_rails_never_make_a_criterion_stale() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    repo.commit_all("work");
    repo.rails(&["gate", "S"]).ok();
    repo.write(".rails/checklists/S.md", "- [ ] later\n");
    repo.write(".rails/notes.txt", "notes\n");
    repo.commit_all("rails files");
    repo.rails(&["gate", "S"]).ok();
    repo.rails(&["status", "S"]).ok().stdout_has("\nStale 0\n");
    // Uncommitted ones neither (the gate judges a commit, not the work tree).
    repo.write(".rails/notes.txt", "more notes\n");
    repo.rails(&["gate", "S"]).ok();
}

#[test]
fn recheck_of_a_broken_tree_is_refused_and_the_gate_stays_blocked() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    repo.commit_all("work");
    repo.git(&["rm", "-q", "feature.txt"]);
    repo.git(&["commit", "-q", "-m", "oops"]);
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("git rails evidence recheck S c1");
    refuse(
        &repo,
        &["evidence", "recheck", "S", "c1"],
        &["c1 fails on this tree", "git rails evidence reopen S c1"],
    );
    repo.rails(&["gate", "S"]).code(2).stdout_has("c1 is stale");
}

// ---------------------------------------------------------------------------------------------
// new contract versions

#[test]
fn a_bump_that_changes_a_checks_spec_needs_reopen() {
    let repo = frozen(json!([
        needs_file("c1", "feature.txt"),
        needs_file("c2", "second.txt")
    ]));
    prove(&repo, "c1", "feature.txt");
    repo.commit_all("c1");
    prove(&repo, "c2", "second.txt");
    // c1 was proven before second.txt existed.
    accept(&repo, "recheck", "c1", &[]);
    repo.commit_all("work");
    repo.rails(&["gate", "S"]).ok();

    // v1.1 asks c1 for something else; c2 is unchanged.
    repo.draft(
        "S",
        json!([
            needs_file("c1", "feature-v2.txt"),
            needs_file("c2", "second.txt")
        ]),
    );
    repo.rails(&["contract", "freeze", "S", "--bump"])
        .ok()
        .stdout_has("v1.1");
    let reopen = "git rails evidence reopen S c1 --note \"<what changed>\"";
    let run = repo.rails(&["gate", "S"]);
    run.code(2)
        .stdout_has("S v1.1 is not done")
        .stdout_has("(1 step missing)")
        .stdout_has(&format!(
            "- c1 its check changed in v1.1 since it was proven, so its subject changed: {reopen}"
        ))
        .stdout_lacks("- c2");
    repo.rails(&["status", "S"])
        .ok()
        .stdout_has("Contract S v1.1 [feature]")
        .stdout_has("[check changed: reopen]");
    let j = repo.rails(&["status", "S", "--json"]).json();
    assert_eq!(criterion(&j, "c1")["needsReopen"], true);
    assert_eq!(criterion(&j, "c2")["needsReopen"], false);
    assert_eq!(criterion(&j, "c2")["status"], "surfaced");

    // The subject changed: a recheck would prove something else, a new GREEN is the seed's hole.
    refuse(
        &repo,
        &["evidence", "recheck", "S", "c1"],
        &[
            "The check of criterion \"c1\" changed in a newer contract version",
            reopen,
        ],
    );
    refuse(
        &repo,
        &["evidence", "green", "S", "c1"],
        &["Criterion \"c1\" is already surfaced", reopen],
    );
    // The unchanged c2 can still be rechecked.
    accept(&repo, "recheck", "c2", &[]);

    // Reopen, and earn the new check from RED.
    let out = accept(
        &repo,
        "reopen",
        "c1",
        &["--note", "v1.1 checks feature-v2.txt"],
    );
    assert_eq!(out["status"], "pending");
    assert_eq!(out["contractVersion"], "v1.1");
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("- c1 is pending: git rails evidence red S c1\n");
    accept(&repo, "red", "c1", &[]);
    repo.write("feature-v2.txt", "done\n");
    repo.git(&["add", "feature-v2.txt"]);
    accept(&repo, "green", "c1", &[]);
    accept(&repo, "surface", "c1", &["--note", "PR"]);
    repo.commit_all("v2");
    // The receipts of the archived cycle do not count for the new one.
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("- c1 has no teardown receipt: git rails evidence cleanup S c1");
    accept(&repo, "cleanup", "c1", &["--note", "nothing was started"]);
    // c2 was rechecked before the v2 commit; its tree moved again.
    accept(&repo, "recheck", "c2", &[]);
    repo.rails(&["gate", "S"]).ok();
    let j = repo.rails(&["status", "S", "--json"]).json();
    assert_eq!(criterion(&j, "c1")["needsReopen"], false);
    assert_eq!(criterion(&j, "c1")["cycle"], 2);
}

#[test]
fn a_bump_that_keeps_a_checks_spec_keeps_it_surfaced() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    repo.commit_all("work");
    repo.rails(&["gate", "S"]).ok();

    // Reworded, with a scope now, and a new criterion beside it: c1's kind and spec are the same.
    let mut c1 = scoped(needs_file("c1", "feature.txt"), &["feature.txt"]);
    c1["description"] = json!("the feature file is there");
    repo.draft("S", json!([c1, needs_file("c2", "second.txt")]));
    repo.rails(&["contract", "freeze", "S", "--bump"]).ok();
    let run = repo.rails(&["gate", "S"]);
    run.code(2)
        .stdout_has("S v1.1 is not done")
        .stdout_has("(1 step missing)")
        .stdout_has("- c2 is pending: git rails evidence red S c2\n")
        .stdout_lacks("- c1");
    repo.rails(&["status", "S"])
        .ok()
        .stdout_has("- [surfaced] c1: the feature file is there -> command_success (RED:")
        .stdout_lacks("[check changed: reopen]");
    let j = repo.rails(&["status", "S", "--json"]).json();
    assert_eq!(criterion(&j, "c1")["status"], "surfaced");
    assert_eq!(criterion(&j, "c1")["needsReopen"], false);
    // A recheck is fine: the subject did not change.
    accept(&repo, "recheck", "c1", &[]);

    prove(&repo, "c2", "second.txt");
    repo.commit_all("second");
    // second.txt is outside c1's new scope; c2 was proven on this very tree.
    repo.rails(&["gate", "S"])
        .ok()
        .stdout_has("gate passed: S v1.1 is done");
}

#[test]
fn a_stale_criterion_lists_at_most_five_paths() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    repo.commit_all("work");
    for i in 1..=7 {
        repo.write(&format!("src/f{i}.txt"), "x\n");
    }
    repo.commit_all("seven files");
    repo.rails(&["gate", "S"]).code(2).stdout_has(
        "- c1 is stale: src/f1.txt, src/f2.txt, src/f3.txt, src/f4.txt, src/f5.txt, … changed since it was proven",
    );
    let j = repo.rails(&["gate", "S", "--json"]).json();
    assert_eq!(criterion(&j, "c1")["stale"].as_array().unwrap().len(), 7);
}

#[test]
fn evidence_survives_a_rewrite_that_keeps_the_proven_tree() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "part one", "--", ".rails"]);
    repo.commit_all("part two");
    repo.rails(&["gate", "S"]).ok();
    // Squash the two commits into one: a new commit, the same tree.
    let before = head(&repo);
    repo.git(&["reset", "-q", "--soft", "HEAD~2"]);
    repo.git(&["commit", "-q", "-m", "squashed"]);
    assert_ne!(head(&repo), before);
    repo.rails(&["gate", "S"]).ok();
    repo.git(&["commit", "-q", "--amend", "-m", "reworded"]);
    repo.rails(&["gate", "S"]).ok();
}

#[test]
fn the_gate_is_recomputed_from_fetched_records_alone() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    repo.commit_all("work");
    let sha = head(&repo);
    repo.rails(&["gate", "S"]).ok();

    // CI: a fresh repository that fetched the branch, then the records.
    let ci = TestRepo::bare_init();
    let origin = repo.path().to_str().unwrap();
    ci.git(&[
        "fetch",
        "-q",
        origin,
        "refs/heads/main:refs/remotes/origin/main",
    ]);
    ci.rails(&["gate", "S", "--commit", &sha])
        .code(65)
        .stderr_has(COULD_NOT)
        .stderr_has("S has no frozen contract");
    ci.git(&[
        "fetch",
        "-q",
        origin,
        "refs/rails/contracts/*:refs/rails/contracts/*",
    ]);
    ci.rails(&["gate", "S", "--commit", &sha])
        .code(2)
        .stdout_has("- c1 is pending: git rails evidence red S c1");
    ci.git(&[
        "fetch",
        "-q",
        origin,
        "refs/rails/evidence/*:refs/rails/evidence/*",
    ]);
    ci.rails(&["gate", "S", "--commit", &sha])
        .ok()
        .stdout_has(&format!("done at {}", &sha[..7]));
    ci.rails(&["gate", "S", "--commit", "origin/main"]).ok();
}

#[test]
fn a_damaged_evidence_ref_blocks_the_gate_naming_its_commit() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    let empty = repo.git(&["mktree"]);
    let bogus = repo.git(&["commit-tree", empty.trim(), "-m", "not a record"]);
    repo.git(&["update-ref", "refs/rails/evidence/S", bogus.trim()]);
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has(&format!("chain does not replay at {}", &bogus.trim()[..12]))
        .stdout_has("no Rails-Transition trailer");
}

#[test]
fn a_red_of_an_older_spec_is_no_cover_for_the_new_check() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    repo.draft("S", json!([needs_file("c1", "feature-v2.txt")]));
    repo.rails(&["contract", "freeze", "S", "--bump"]).ok();
    let reopen = "git rails evidence reopen S c1 --note \"<what changed>\"";
    repo.rails(&["gate", "S"]).code(2).stdout_has(&format!(
        "- c1 its check changed in v1.1 since it was proven, so its subject changed: {reopen}"
    ));
    // Whatever happens after, the sprint is not done on the old RED.
    repo.write("feature-v2.txt", "done\n");
    if repo.rails(&["evidence", "green", "S", "c1"]).code == 0 {
        accept(&repo, "surface", "c1", &["--note", "PR"]);
        accept(&repo, "cleanup", "c1", &["--note", "nothing was started"]);
        repo.commit_all("work");
        repo.rails(&["gate", "S"]).code(2).stdout_has(reopen);
        accept(
            &repo,
            "reopen",
            "c1",
            &["--note", "v1.1 checks feature-v2.txt"],
        );
    }
    // A re-capture of RED under the new spec is the way back from red.
    std::fs::remove_file(repo.path().join("feature-v2.txt")).unwrap();
    accept(&repo, "red", "c1", &[]);
    let j = repo.rails(&["status", "S", "--json"]).json();
    assert_eq!(criterion(&j, "c1")["needsReopen"], false);
    assert_eq!(criterion(&j, "c1")["status"], "red");
}

#[test]
fn a_checklist_counts_once_committed_and_rails_never_makes_it_stale() {
    // generate writes manual checklists to .rails/checklists/. Ticks that are not committed
    // do not count: surface says so and writes nothing (the gate judges commits, and .rails/
    // never makes a proof stale, so such a tick would otherwise be called stale forever).
    let repo = TestRepo::new();
    repo.write(".rails/checklists/S.md", "- [ ] a person looked\n");
    repo.draft("S", json!([review("r1", ".rails/checklists/S.md")]));
    repo.rails(&["contract", "freeze", "S"]).ok();
    repo.write(".rails/checklists/S.md", "- [x] a person looked\n");
    repo.rails(&["evidence", "surface", "S", "r1", "--note", "QA call"])
        .code(65)
        .stderr_has("is not committed; a checklist's ticks count only once they are committed")
        .stderr_has("git add .rails/checklists/S.md");
    assert_eq!(tip(&repo), None);
    repo.write(".rails/checklists/S.md", "- [ ] a person looked\n");
    repo.commit_all("checklist");
    repo.write(".rails/checklists/S.md", "- [x] a person looked\n");
    repo.rails(&["evidence", "surface", "S", "r1", "--note", "QA call"])
        .code(65)
        .stderr_has("has uncommitted changes, which do not count");
    assert_eq!(tip(&repo), None);
    repo.commit_all("ticked");
    accept(&repo, "surface", "r1", &["--note", "QA call"]);
    repo.rails(&["gate", "S"]).ok();
    // Later changes under .rails/, committed or not, the checklist included: never stale.
    repo.write(".rails/contracts/other.json", "{}\n");
    repo.commit_all("a draft");
    repo.rails(&["gate", "S"]).ok();
    repo.write(
        ".rails/checklists/S.md",
        "- [x] a person looked\n- [ ] more\n",
    );
    repo.rails(&["gate", "S"]).ok();
    repo.commit_all("more");
    repo.rails(&["gate", "S"]).ok();
    repo.rails(&["status", "S"]).ok().stdout_has("\nStale 0\n");
}

/// A checklist's items are those frozen: deleting the unticked ones does not surface it.
#[test]
fn a_checklists_items_are_those_frozen() {
    let repo = TestRepo::new();
    repo.write("qa.md", "- [ ] login works\n- [ ] logout works\n");
    repo.draft("S", json!([review("r1", "qa.md")]));
    repo.rails(&["contract", "freeze", "S"]).ok();
    let pinned: Value =
        serde_json::from_str(&repo.git(&["show", "refs/rails/contracts/S:pinned.json"])).unwrap();
    assert_eq!(
        pinned["checklists"]["r1"],
        json!(["login works", "logout works"])
    );
    // The attack: tick one, delete the other.
    repo.write("qa.md", "- [x] login works\n");
    repo.commit_all("qa");
    repo.rails(&["evidence", "surface", "S", "r1", "--note", "QA"])
        .code(65)
        .stderr_has("logout works");
    assert_eq!(tip(&repo), None);
    repo.write(
        "qa.md",
        "- [x] login works\n- [x] logout works\n- [ ] added later\n",
    );
    repo.commit_all("qa");
    accept(&repo, "surface", "r1", &["--note", "QA"]);
}

// ---------------------------------------------------------------------------------------------
// the state is derived from the records, never read on trust

/// Writes a commit on top of the evidence ref with `files` replaced (plain git, as an attacker
/// would), moves the ref to it, and returns it.
pub fn forge(repo: &TestRepo, files: &[(&str, String)], message: &str) -> String {
    let ev = "refs/rails/evidence/S";
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("index");
    let index = index.to_str().unwrap();
    let env = [("GIT_INDEX_FILE", index)];
    repo.git_env(&["read-tree", ev], &env).ok();
    for (path, content) in files {
        let f = tmp.path().join("blob");
        std::fs::write(&f, content).unwrap();
        let blob = repo.git(&["hash-object", "-w", f.to_str().unwrap()]);
        repo.git_env(
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("100644,{},{path}", blob.trim()),
            ],
            &env,
        )
        .ok();
    }
    let tree = repo.git_env(&["write-tree"], &env);
    tree.ok();
    let commit = repo.git(&["commit-tree", tree.stdout.trim(), "-p", ev, "-m", message]);
    repo.git(&["update-ref", ev, commit.trim()]);
    commit.trim().to_string()
}

/// The attack: after a real RED, a hand-made commit whose state.json says surfaced, with a
/// receipt and a binding, and no GREEN or SURFACE record at all.
pub fn forge_surfaced(repo: &TestRepo) -> String {
    let mut st = state(repo);
    let red_tree = st["criteria"]["c1"]["red"]["tree"].clone();
    let c1 = &mut st["criteria"]["c1"];
    c1["status"] = json!("surfaced");
    c1["cleanupReceipts"] = json!(1);
    c1["binding"] = json!({"tree": red_tree, "dirty": false, "by": "green"});
    forge(
        repo,
        &[("state.json", serde_json::to_string_pretty(&st).unwrap())],
        "evidence S surface c1\n\nRails-Sprint: S\nRails-Transition: surface c1\nRails-Status: surfaced",
    )
}

#[test]
fn a_hand_made_surfaced_state_blocks_the_gate_naming_the_commit() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    let bad = forge_surfaced(&repo);
    let at = format!("does not replay at {}", &bad[..12]);
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has(&format!("chain does not replay at {}", &bad[..12]))
        .stdout_has("cycles/c1/1/surface.json is missing");
    let report = repo.rails(&["gate", "S", "--json"]);
    assert_eq!(report.code, 2, "{report}");
    let report = report.json();
    assert_eq!(report["done"], false);
    assert_eq!(report["chainProblem"]["commit"], bad.as_str());
    // The criteria are as the records replay: c1 is red.
    assert_eq!(criterion(&report, "c1")["status"], "red");
    repo.rails(&["status", "S"])
        .ok()
        .stdout_has("[red] c1")
        .stdout_has(&at)
        .stdout_has("git update-ref refs/rails/evidence/S");
    let doctor = repo.rails(&["doctor"]);
    doctor
        .code(1)
        .stdout_has("evidence-chain: ")
        .stdout_has(&at);
    // Nothing is recorded on top of a chain that does not replay.
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    refuse(
        &repo,
        &["evidence", "green", "S", "c1"],
        &[&at, "nothing is recorded on top of it"],
    );
    // The fix it names works.
    let good = repo.git(&["rev-parse", &format!("{bad}^")]);
    repo.git(&["update-ref", "refs/rails/evidence/S", good.trim()]);
    accept(&repo, "green", "c1", &[]);
}

#[test]
fn a_state_that_lies_beside_a_real_record_blocks_the_gate() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    let mut st = state(&repo);
    st["criteria"]["c1"]["status"] = json!("surfaced");
    st["criteria"]["c1"]["cleanupReceipts"] = json!(1);
    let receipt = json!({"transition": "cleanup", "at": "2026-12-01T00:00:00Z",
        "note": "nothing was started", "contractVersion": "v1"});
    forge(
        &repo,
        &[
            (
                "cycles/c1/1/cleanup-1.json",
                serde_json::to_string_pretty(&receipt).unwrap(),
            ),
            ("state.json", serde_json::to_string_pretty(&st).unwrap()),
        ],
        "evidence S cleanup c1\n\nRails-Sprint: S\nRails-Transition: cleanup c1",
    );
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("its state.json says c1 is surfaced, but its records replay to red");
}

#[test]
fn a_hand_written_green_record_without_a_change_does_not_replay() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    let mut st = state(&repo);
    let mut green = st["criteria"]["c1"]["red"].clone();
    green.as_object_mut().unwrap().remove("id");
    green["transition"] = json!("green");
    green["checkStatus"] = json!("pass");
    green["exitCode"] = json!(0);
    st["criteria"]["c1"]["status"] = json!("green");
    forge(
        &repo,
        &[
            (
                "cycles/c1/1/green.json",
                serde_json::to_string_pretty(&green).unwrap(),
            ),
            ("state.json", serde_json::to_string_pretty(&st).unwrap()),
        ],
        "evidence S green c1\n\nRails-Sprint: S\nRails-Transition: green c1",
    );
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("same tracked tree as its RED");
    // A GREEN record that holds a failing observation is no GREEN either.
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    let mut st = state(&repo);
    let mut green = st["criteria"]["c1"]["red"].clone();
    green.as_object_mut().unwrap().remove("id");
    green["transition"] = json!("green");
    st["criteria"]["c1"]["status"] = json!("green");
    forge(
        &repo,
        &[
            (
                "cycles/c1/1/green.json",
                serde_json::to_string_pretty(&green).unwrap(),
            ),
            ("state.json", serde_json::to_string_pretty(&st).unwrap()),
        ],
        "evidence S green c1\n\nRails-Sprint: S\nRails-Transition: green c1",
    );
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("holds no passing observation of the check");
}

#[test]
fn a_replayed_chain_is_kept_by_tip_and_a_changed_tip_is_replayed_again() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    prove(&repo, "c1", "feature.txt");
    repo.git(&["commit", "-q", "-m", "feature"]);
    repo.rails(&["gate", "S"]).ok();
    assert!(!memos(&repo).is_empty());
    // A forged commit on top of a cached, good chain is still caught.
    let mut st = state(&repo);
    st["criteria"]["c1"]["cleanupReceipts"] = json!(5);
    forge(
        &repo,
        &[("state.json", serde_json::to_string_pretty(&st).unwrap())],
        "evidence S cleanup c1\n\nRails-Sprint: S\nRails-Transition: cleanup c1",
    );
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("cycles/c1/1/cleanup-2.json is missing");
}

#[test]
fn a_transition_that_also_rewrites_an_earlier_record_does_not_replay() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    let mut st = state(&repo);
    st["criteria"]["c1"]["cleanupReceipts"] = json!(1);
    let receipt = json!({"transition": "cleanup", "at": "2026-12-01T00:00:00Z",
        "note": "nothing was started", "contractVersion": "v1"});
    let mut red: Value =
        serde_json::from_str(&repo.git(&["show", "refs/rails/evidence/S:cycles/c1/1/red.json"]))
            .unwrap();
    red["summary"] = json!("rewritten");
    forge(
        &repo,
        &[
            (
                "cycles/c1/1/cleanup-1.json",
                serde_json::to_string_pretty(&receipt).unwrap(),
            ),
            (
                "cycles/c1/1/red.json",
                serde_json::to_string_pretty(&red).unwrap(),
            ),
            ("state.json", serde_json::to_string_pretty(&st).unwrap()),
        ],
        "evidence S cleanup c1\n\nRails-Sprint: S\nRails-Transition: cleanup c1",
    );
    repo.rails(&["gate", "S"])
        .code(2)
        .stdout_has("it also changes cycles/c1/1/red.json, which is not this transition's record");
}

/// The replay memos (`store::Memo` "evidence-replay"): each entry's file and its kept state.
fn memos(repo: &TestRepo) -> Vec<(std::path::PathBuf, Value)> {
    let dir = repo.path().join(".git/rails/cache/evidence-replay");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let bytes = std::fs::read(e.path()).ok()?;
            let at = bytes.iter().position(|b| *b == b'\n')?;
            Some((e.path(), serde_json::from_slice(&bytes[at + 1..]).ok()?))
        })
        .collect()
}

/// The memo whose state holds criterion c1 at `status` with `receipts` teardown receipts.
fn memo_at(repo: &TestRepo, status: &str, receipts: u64) -> (std::path::PathBuf, Value) {
    memos(repo)
        .into_iter()
        .find(|(_, v)| {
            let c = &v["criteria"]["c1"];
            c["status"] == status && c["cleanupReceipts"].as_u64().unwrap_or(0) == receipts
        })
        .unwrap_or_else(|| panic!("no memo with c1 {status}: {:?}", memos(repo)))
}

/// The cheapest forgery of the one memo of the rails gate: the replay kept for a chain set back
/// to its RED replaced by the proven one. `doctor` names it; `verify` (what CI runs) never
/// reads a memo.
#[test]
fn a_hand_written_kept_replay_is_caught_by_doctor_and_verify() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    accept(&repo, "red", "c1", &[]);
    let red_tip = tip(&repo).unwrap();
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    accept(&repo, "surface", "c1", &["--note", "PR"]);
    accept(&repo, "cleanup", "c1", &["--note", "nothing was started"]);
    repo.commit_all("feature");
    // A reader replays the chain and keeps the replay.
    repo.rails(&["status", "S"]).ok();
    // The forgery: the chain set back to its RED, and the proven replay written into the
    // entry kept for that tip (its header names the entry and the value's length).
    let (red_file, _) = memo_at(&repo, "red", 0);
    let (_, proven) = memo_at(&repo, "surfaced", 1);
    let value = proven.to_string();
    let name = red_file.file_name().unwrap().to_str().unwrap().to_string();
    std::fs::write(
        &red_file,
        format!("rails-memo/1 {name} {}\n{value}", value.len()),
    )
    .unwrap();
    repo.git(&["update-ref", "refs/rails/evidence/S", &red_tip]);
    // The local gate believes it (the memo is trusted as the hooks are) ...
    repo.rails(&["gate", "S"]).ok();

    let doctor = repo.rails(&["doctor", "--json"]);
    assert_eq!(doctor.code, 1, "{doctor}");
    assert!(
        doctor.json()["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "kept-replay"),
        "{doctor}"
    );
    // verify reaches what a fresh clone reaches: c1 is red.
    let verify = repo.rails(&["verify", "S", "--json"]);
    assert_ne!(verify.code, 0, "{verify}");
    assert!(verify.stdout.contains("\"red\""), "{verify}");
    assert!(!verify.stdout.contains("\"done\": true"), "{verify}");

    // verify neither read nor replaced it: the local gate still believes it.
    repo.rails(&["gate", "S"]).ok();
}
