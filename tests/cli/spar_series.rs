//! `git spar triage`, `waive`, `extend`, `cap-report`, `gate` and the caps of `run` end to end
//! through the binary (issue 6). Rounds are produced by small `#!/bin/sh` command reviewers
//! with a hermetic `SPAR_CONFIG`, as in `spar_run.rs`. Every refusal is checked for its exit
//! code and for having written nothing (the series ref did not move).

use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::harness::{Run, TestRepo};
use crate::spar_fixture::{spar_fixture, SparChange};
use crate::spar_results::{finding, result};

struct Fixture {
    s: SparChange,
}

spar_fixture!(Fixture);

impl Fixture {
    /// A two-commit change; `project` is the project file `.jaekit/spar.toml`.
    fn new(project: &str) -> Fixture {
        let s = SparChange::new(
            &[
                (".jaekit/spar.toml", project),
                (".gitignore", "ignored/\n"),
                ("app/main.rs", "fn main() {}\n"),
            ],
            &[
                ("app/main.rs", "fn main() {\n    println!(\"hello\");\n}\n"),
                ("checks/t.py", "import app\n\nassert app.main()\n"),
            ],
            None,
            &["xdg"],
        );
        Fixture { s }
    }

    /// The user file: these command reviewers, each printing its result file.
    fn reviewers(&self, reviewers: &[(&str, &str)]) {
        let mut toml = "timeout_seconds = 30\n".to_string();
        for (name, script) in reviewers {
            toml.push_str(&format!(
                "\n[[reviewers]]\nname = {}\npreset = \"command\"\nargv = [{}]\n",
                json!(name),
                json!(script)
            ));
        }
        std::fs::write(self.tmp("user.toml"), toml).unwrap();
    }

    /// A reviewer script that runs `before` and prints `result`.
    fn reviewer(&self, name: &str, before: &str, result: &Value) -> String {
        use std::os::unix::fs::PermissionsExt;
        let json_path = self.tmp(&format!("{name}.json"));
        std::fs::write(&json_path, serde_json::to_string_pretty(result).unwrap()).unwrap();
        let path = self.tmp(&format!("{name}.sh"));
        std::fs::write(
            &path,
            format!("#!/bin/sh\n{before}\ncat '{}'\n", json_path.display()),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.repo.command("git-spar");
        cmd.args(args)
            .env("SPAR_CONFIG", self.tmp("user.toml"))
            .env("XDG_CONFIG_HOME", self.tmp("xdg"));
        cmd
    }

    fn spar(&self, args: &[&str]) -> Run {
        Run::of(&mut self.command(args))
    }

    fn run(&self, series: &str, extra: &[&str]) -> Run {
        let mut args = vec!["run", "--base", &self.base, "--series", series];
        args.extend_from_slice(extra);
        self.spar(&args)
    }

    fn tip(&self, series: &str) -> String {
        self.repo
            .git_run(&[
                "rev-parse",
                "-q",
                "--verify",
                &format!("refs/spar/series/{series}"),
            ])
            .stdout
            .trim()
            .to_string()
    }

    fn show(&self, series: &str, path: &str) -> String {
        self.repo
            .git(&["show", &format!("refs/spar/series/{series}:{path}")])
    }

    fn jsonl(&self, series: &str, path: &str) -> Vec<Value> {
        self.show(series, path)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Runs `args` expecting a refusal (or usage error) that wrote nothing: the exit code, a
    /// message naming the problem, and the series ref where it was.
    #[track_caller]
    fn refuse(&self, series: &str, code: i32, args: &[&str], says: &str) {
        let before = self.tip(series);
        let run = self.spar(args);
        assert_eq!(run.code, code, "{run}");
        assert!(run.stderr.contains(says), "stderr lacks {says:?}:\n{run}");
        assert_eq!(self.tip(series), before, "the series moved:\n{run}");
    }
}

/// A defect by rule 5 (introduced by the change and a regression).
fn defect(id: &str) -> Value {
    let mut f = finding(id, "defect", "app/main.rs:1");
    f["introduced_by_change"] = json!("yes");
    f["regression"] = json!("yes");
    f
}

/// One round `code-1` of series `s` by reviewer `lint`: lint-F1 defect, lint-F2
/// requirement-question, lint-F3 note, lint-F4 hardening (auto-deferred), lint-F5 defect.
fn mixed_round(fx: &Fixture) {
    let lint = fx.reviewer(
        "lint",
        "",
        &result(
            &fx.head,
            vec![
                defect("L1"),
                finding("L2", "requirement-question", "app/main.rs:2"),
                finding("L3", "note", "app/main.rs:1"),
                finding("L4", "defect", "checks/t.py:1"),
                defect("L5"),
            ],
        ),
    );
    fx.reviewers(&[("lint", &lint)]);
    fx.run("s", &[]).ok();
}

// ---------------------------------------------------------------------------------------------
// Triage

#[test]
fn triage_follows_the_disposition_table() {
    let fx = Fixture::new("check_paths = [\"checks/**\"]\n");
    mixed_round(&fx);
    let f = fx.show("s", "rounds/code-1/findings.json");
    let classes: Vec<String> = serde_json::from_str::<Vec<Value>>(&f)
        .unwrap()
        .iter()
        .map(|f| f["class"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        classes,
        [
            "defect",
            "requirement-question",
            "note",
            "hardening",
            "defect"
        ]
    );
    let t = |args: &[&str]| {
        let mut all = vec!["triage", "s", "code-1"];
        all.extend_from_slice(args);
        fx.spar(&all)
    };

    let tr = |args: &[&str], says: &str| {
        let mut all = vec!["triage", "s", "code-1"];
        all.extend_from_slice(args);
        fx.refuse("s", 65, &all, says)
    };

    // Refusals (65), nothing written.
    tr(&["lint-F9", "rejected", "--evidence", "x"], "no finding");
    tr(&["LINT-F1", "rejected", "--evidence", "x"], "no finding");
    tr(&["lint-F3", "duplicate", "--of", "lint-F1"], "note");
    tr(
        &["lint-F1", "answered", "--user-quote", "ok"],
        "requirement-question only",
    );
    tr(
        &["lint-F2", "accepted", "--user-quote", "ok"],
        "defect only",
    );
    tr(
        &[
            "lint-F2",
            "fixed",
            "--failed-before",
            "a",
            "--passed-after",
            "b",
        ],
        "defect, hardening only",
    );
    tr(
        &["lint-F1", "fixed", "--failed-before", "a"],
        "--passed-after",
    );
    tr(
        &[
            "lint-F1",
            "fixed",
            "--failed-before",
            "a",
            "--passed-after",
            "  ",
        ],
        "--passed-after",
    );
    tr(&["lint-F1", "deferred", "--to", "ISSUE-1"], "--user-quote");
    tr(&["lint-F1", "rejected"], "--evidence");
    tr(
        &["lint-F1", "rejected", "--evidence", "x", "--to", "y"],
        "does not take --to",
    );
    tr(&["lint-F1", "waved"], "not one of");
    tr(&["lint-F1", "duplicate", "--of", "lint-F1"], "itself");
    tr(
        &["lint-F1", "duplicate", "--of", "lint-F7"],
        "no such finding",
    );
    // G27: --commit is a revision naming a commit, never read as an option.
    for rev in ["no-such-rev", "--version", "HEAD^{tree}"] {
        tr(
            &[
                "lint-F1",
                "fixed",
                "--failed-before",
                "a",
                "--passed-after",
                "b",
                "--commit",
                rev,
            ],
            "--commit",
        );
    }
    fx.refuse(
        "s",
        65,
        &[
            "triage",
            "s",
            "code-9",
            "lint-F1",
            "rejected",
            "--evidence",
            "x",
        ],
        "not recorded",
    );

    // The gate is blocked by the two defects and the requirement-question, not by the note or
    // the auto-deferred hardening.
    let g = fx.spar(&["gate", "s:code-1"]);
    assert_eq!(g.code, 2, "{g}");
    for id in ["lint-F1", "lint-F2", "lint-F5"] {
        assert!(g.stdout.contains(&format!("s:code-1: {id} (")), "{g}");
    }
    assert!(!g.stdout.contains("lint-F3"), "{g}");
    assert!(!g.stdout.contains("lint-F4 ("), "{g}");
    assert!(g.stdout.contains("auto_deferred: 1"), "{g}");

    // Accepted ones: text trimmed, the commit resolved to its full id.
    t(&[
        "lint-F1",
        "fixed",
        "--failed-before",
        "  test_x failed ",
        "--passed-after",
        "test_x passes",
        "--commit",
        "HEAD",
    ])
    .ok();
    t(&["lint-F2", "answered", "--user-quote", "\"yes, that way\""]).ok();
    t(&["lint-F5", "rejected", "--evidence", "-1 is not reachable"]).ok();
    let ledger = fx.jsonl("s", "rounds/code-1/ledger.jsonl");
    assert_eq!(ledger[0]["disposition"], "auto_deferred");
    assert_eq!(ledger[0]["finding"], "lint-F4");
    let fixed = &ledger[1];
    assert_eq!(fixed["finding"], "lint-F1");
    assert_eq!(fixed["failed_before"], "test_x failed");
    assert_eq!(fixed["commit"], fx.head.as_str());
    assert_eq!(ledger[3]["evidence"], "-1 is not reachable");
    let g = fx.spar(&["gate", "s:code-1"]);
    assert_eq!(g.code, 0, "{g}");
    assert!(g.stdout.starts_with("spar gate: passed"), "{g}");

    // The newest entry is in force: a later duplicate into a cycle reopens a fixed finding.
    t(&["lint-F1", "duplicate", "--of", "lint-F5"]).ok();
    t(&["lint-F5", "duplicate", "--of", "lint-F1"]).ok();
    let g = fx.spar(&["gate", "s:code-1"]);
    assert_eq!(g.code, 2, "{g}");
    assert!(g.stdout.contains("lint-F1 (defect) is open"), "{g}");
    t(&[
        "lint-F5",
        "deferred",
        "--to",
        "ISSUE-7",
        "--user-quote",
        "later",
    ])
    .ok();
    fx.spar(&["gate", "s:code-1"]).ok();
}

/// Where a command takes a series and a round, what is refused first stays the same on every
/// path: a series name that is no series name is a usage error before anything else is looked
/// at; a round name is only looked up (an empty one is "not recorded" like any other); the
/// options a command checks on their own come before the series is read.
#[test]
fn series_and_round_names_are_refused_in_the_same_order_on_every_path() {
    let fx = Fixture::new("");
    mixed_round(&fx);
    let not_recorded = "s: round  is not recorded";
    for args in [
        vec![
            "triage",
            "s",
            "",
            "lint-F1",
            "accepted",
            "--user-quote",
            "q",
        ],
        vec!["waive", "s", "", "lint", "--user-quote", "q"],
        vec!["show", "s:"],
    ] {
        fx.refuse("s", 65, &args, not_recorded);
    }
    let result = fx.tmp("result.json");
    std::fs::write(&result, "{}").unwrap();
    let result = result.display().to_string();
    fx.refuse(
        "s",
        65,
        &["record", "s", "", "lint", "--result", &result],
        not_recorded,
    );
    // The result file is read before the round is looked up; the series name before both.
    fx.refuse(
        "s",
        65,
        &["record", "s", "", "lint", "--result", "/nonexistent"],
        "--result /nonexistent: cannot be read",
    );
    let invalid = "series \"S.\" is not valid";
    fx.refuse(
        "s",
        64,
        &["record", "S.", "code-1", "lint", "--result", "/nonexistent"],
        invalid,
    );
    // triage: the series name, then the disposition and its options, then the records.
    fx.refuse("s", 64, &["triage", "S.", "code-1", "x", "bogus"], invalid);
    fx.refuse(
        "s",
        65,
        &["triage", "nosuch", "code-1", "x", "bogus"],
        "disposition \"bogus\" is not one of",
    );
    fx.refuse(
        "s",
        65,
        &["triage", "nosuch", "code-1", "x", "accepted"],
        "accepted needs --user-quote",
    );
    fx.refuse(
        "s",
        65,
        &[
            "triage",
            "nosuch",
            "code-1",
            "x",
            "accepted",
            "--user-quote",
            "q",
        ],
        "nosuch: round code-1 is not recorded",
    );
    // waive: the series name, then the user's words, then the records.
    fx.refuse("s", 64, &["waive", "S.", "", "lint"], invalid);
    fx.refuse(
        "s",
        65,
        &["waive", "nosuch", "code-1", "lint"],
        "waive needs --user-quote",
    );
    // gate and report: every listed name is checked before any round is read or --out is
    // looked at; a round that is not recorded is then a reason, not an error.
    fx.refuse("s", 64, &["gate", "nosuch:code-1", "S.:x"], invalid);
    fx.refuse(
        "s",
        64,
        &["gate", "s:code-1", "x:", "--out", "app/main.rs"],
        "\"x:\" is not <series>:<round>",
    );
    fx.refuse(
        "s",
        65,
        &["gate", "s:code-1", "--out", "app/main.rs"],
        "--out app/main.rs: exists and is not a review-gate/v1 file",
    );
    let html = fx.tmp("report.html").display().to_string();
    fx.refuse(
        "s",
        64,
        &["report", "s:code-1", "bad", "--html", &html],
        "\"bad\" is not <series>:<round>",
    );
    fx.refuse(
        "s",
        65,
        &["report", "s:code-1", "nosuch:code-2", "--html", &html],
        "nosuch: round code-2 is not recorded",
    );
    assert!(!fx.tmp("report.html").exists());
    let g = fx.spar(&["gate", "s:nosuch"]);
    g.code(2)
        .stdout_has("s:nosuch: cannot be read: s: round nosuch is not recorded")
        .stdout_has("s: round code-1 of the series is not in the gate list");
}

#[test]
fn duplicates_are_followed_and_a_cycle_stays_open() {
    let fx = Fixture::new("check_paths = [\"checks/**\"]\n");
    mixed_round(&fx);
    let t = |args: &[&str]| {
        let mut all = vec!["triage", "s", "code-1"];
        all.extend_from_slice(args);
        fx.spar(&all)
    };
    t(&["lint-F2", "answered", "--user-quote", "yes"]).ok();
    t(&["lint-F1", "duplicate", "--of", "lint-F5"]).ok();
    t(&["lint-F5", "duplicate", "--of", "lint-F1"]).ok();
    let g = fx.spar(&["gate", "s:code-1"]);
    assert_eq!(g.code, 2, "{g}");
    assert!(g.stdout.contains("lint-F1 (defect) is open"), "{g}");
    assert!(g.stdout.contains("lint-F5 (defect) is open"), "{g}");
    // Resolving the end resolves the chain.
    t(&["lint-F5", "rejected", "--evidence", "not a bug"]).ok();
    fx.spar(&["gate", "s:code-1"]).ok();
    // A duplicate of a note is resolved: the note never blocks.
    t(&["lint-F5", "duplicate", "--of", "lint-F3"]).ok();
    fx.spar(&["gate", "s:code-1"]).ok();
}

/// G33: ten triage calls at once on different findings are all recorded.
#[test]
fn concurrent_triage_calls_are_all_recorded() {
    let fx = Fixture::new("");
    let findings: Vec<Value> = (1..=10).map(|i| defect(&format!("D{i}"))).collect();
    let lint = fx.reviewer("lint", "", &result(&fx.head, findings));
    fx.reviewers(&[("lint", &lint)]);
    fx.run("s", &[]).ok();
    let children: Vec<_> = (1..=10)
        .map(|i| {
            let id = format!("lint-F{i}");
            fx.command(&[
                "triage",
                "s",
                "code-1",
                &id,
                "rejected",
                "--evidence",
                &format!("reason {i}"),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let ledger = fx.jsonl("s", "rounds/code-1/ledger.jsonl");
    let mut ids: Vec<String> = ledger
        .iter()
        .map(|e| e["finding"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    let mut want: Vec<String> = (1..=10).map(|i| format!("lint-F{i}")).collect();
    want.sort();
    assert_eq!(ids, want);
    fx.spar(&["gate", "s:code-1"]).ok();
}

// ---------------------------------------------------------------------------------------------
// Gate

#[test]
fn gate_lists_every_reason() {
    let fx = Fixture::new("");
    let ok = fx.reviewer("ok", "", &result(&fx.head, vec![]));
    let bad = fx.reviewer("bad", "exit 3", &result(&fx.head, vec![]));
    fx.reviewers(&[("ok", &ok), ("bad", &bad)]);
    fx.run("s", &[]).ok(); // code-1: bad failed
    fx.run("s", &["--dry-run"]).ok(); // code-2: dry run
    fx.run("s", &[]).ok(); // code-3: bad failed

    // code-1 missing from the list; the dry run listed; an unknown round; bad not completed in
    // the newest round; the change moved after review.
    let g = fx.spar(&[
        "gate",
        "s:code-3",
        "s:code-2",
        "s:code-7",
        "--expect-head",
        &fx.base,
    ]);
    assert_eq!(g.code, 2, "{g}");
    for want in [
        "spar gate: blocked",
        "s: round code-1 of the series is not in the gate list",
        "s:code-2: is a dry run",
        "s:code-7: cannot be read",
        "s:code-3: required reviewer bad is failed and not waived",
        "the change moved after review",
    ] {
        assert!(g.stdout.contains(want), "missing {want:?}:\n{g}");
    }
    // The dry run may be left out; code-1's failure is not in the newest round.
    let g = fx.spar(&["gate", "s:code-1", "s:code-3"]);
    assert_eq!(g.code, 2, "{g}");
    assert!(!g.stdout.contains("s:code-1: required"), "{g}");
    // G27: an --expect-head that is no commit is a blocked reason.
    let g = fx.spar(&["gate", "s:code-1", "s:code-3", "--expect-head", "--nope"]);
    assert!(g.stdout.contains("--expect-head \"--nope\""), "{g}");

    // Waive: refusals first, nothing written.
    fx.refuse("s", 65, &["waive", "s", "code-3", "bad"], "--user-quote");
    fx.refuse(
        "s",
        65,
        &["waive", "s", "code-3", "bad", "--user-quote", "   "],
        "--user-quote",
    );
    fx.refuse(
        "s",
        65,
        &["waive", "s", "code-3", "ok", "--user-quote", "go"],
        "completed",
    );
    fx.refuse(
        "s",
        65,
        &["waive", "s", "code-3", "Bad", "--user-quote", "go"],
        "no required reviewer",
    );
    fx.spar(&[
        "waive",
        "s",
        "code-3",
        "bad",
        "--user-quote",
        " go without it ",
    ])
    .ok();
    let w = fx.jsonl("s", "rounds/code-3/waivers.jsonl");
    assert_eq!(w.len(), 1);
    assert_eq!(w[0]["reviewer"], "bad");
    assert_eq!(w[0]["preset"], "command");
    assert_eq!(w[0]["user_quote"], "go without it");

    let g = fx.spar(&[
        "gate",
        "s:code-1",
        "s:code-3",
        "--expect-head",
        "HEAD",
        "--json",
    ]);
    assert_eq!(g.code, 0, "{g}");
    let doc: Value = serde_json::from_str(&g.stdout).unwrap();
    assert_eq!(doc["schema"], "review-gate/v1");
    assert_eq!(doc["result"], "passed");
    assert_eq!(doc["head"], fx.head.as_str());

    // A bad target is a usage error.
    assert_eq!(fx.spar(&["gate", "code-1"]).code, 64);
    assert_eq!(fx.spar(&["gate"]).code, 64);
}

#[test]
fn gate_out_writes_a_chain_of_gate_files() {
    let fx = Fixture::new("");
    let ok = fx.reviewer("ok", "", &result(&fx.head, vec![defect("D1")]));
    fx.reviewers(&[("ok", &ok)]);
    fx.run("s", &[]).ok();
    let out = fx.tmp("gate.json");
    let out_s = out.display().to_string();
    let g = fx.spar(&["gate", "s:code-1", "--out", &out_s]);
    assert_eq!(g.code, 2, "{g}");
    let first = std::fs::read(&out).unwrap();
    let doc: Value = serde_json::from_slice(&first).unwrap();
    assert_eq!(doc["schema"], "review-gate/v1");
    assert_eq!(doc["result"], "blocked");
    assert_eq!(doc["previous_gate_digest"], Value::Null);
    assert_eq!(doc["growth"][0]["findings"], 1);
    assert_eq!(doc["growth"][0]["outside_check_paths"], 1);

    fx.spar(&[
        "triage",
        "s",
        "code-1",
        "ok-F1",
        "rejected",
        "--evidence",
        "no",
    ])
    .ok();
    fx.spar(&["gate", "s:code-1", "--out", &out_s]).ok();
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["result"], "passed");
    use sha2::Digest;
    let digest = format!("{:x}", sha2::Sha256::digest(&first));
    assert_eq!(doc["previous_gate_digest"], digest.as_str());

    // G28: an existing file that is no gate file, or a path in the repository not ignored.
    let other = fx.tmp("notes.txt");
    std::fs::write(&other, "keep me").unwrap();
    let g = fx.spar(&["gate", "s:code-1", "--out", &other.display().to_string()]);
    assert_eq!(g.code, 65, "{g}");
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "keep me");
    let g = fx.spar(&["gate", "s:code-1", "--out", "gate.json"]);
    assert_eq!(g.code, 65, "{g}");
    assert!(!fx.repo.path().join("gate.json").exists());
    std::fs::create_dir_all(fx.repo.path().join("ignored")).unwrap();
    fx.spar(&["gate", "s:code-1", "--out", "ignored/gate.json"])
        .ok();
}

// ---------------------------------------------------------------------------------------------
// Extend, caps, cap-report

#[test]
fn extend_checks_g31_and_writes_nothing_on_error() {
    let fx = Fixture::new("");
    let ok = fx.reviewer("ok", "", &result(&fx.head, vec![]));
    fx.reviewers(&[("ok", &ok)]);
    fx.run("s", &[]).ok();
    let e = |args: &[&str]| {
        let mut all = vec!["extend", "s"];
        all.extend_from_slice(args);
        fx.spar(&all)
    };
    for (args, code, says) in [
        (
            vec!["--stage", "Code", "--by", "1", "--cause", "churn"],
            64,
            "--stage",
        ),
        (
            vec!["--stage", "code", "--by", "0", "--cause", "churn"],
            64,
            "--by",
        ),
        (
            vec!["--stage", "code", "--by", "-1", "--cause", "churn"],
            64,
            "--by",
        ),
        (
            vec!["--stage", "code", "--by", "+1", "--cause", "churn"],
            64,
            "--by",
        ),
        (vec!["--stage", "code", "--by", "1"], 64, "--cause"),
        (
            vec!["--stage", "code", "--by", "1", "--cause", "Churn"],
            64,
            "--cause",
        ),
        (
            vec!["--stage", "plan", "--by", "1", "--cause", "churn"],
            64,
            "--cause",
        ),
        (
            vec!["--stage", "plan", "--by", "1", "--reason", "r"],
            64,
            "--reason",
        ),
        (
            vec!["--stage", "code", "--by", "2", "--cause", "churn"],
            65,
            "--reason",
        ),
        (
            vec![
                "--stage", "code", "--by", "1", "--cause", "other", "--reason", " ",
            ],
            65,
            "--reason",
        ),
    ] {
        let mut all = vec!["extend", "s"];
        all.extend_from_slice(&args);
        fx.refuse("s", code, &all, says);
    }
    let r = fx.spar(&["extend", "nope", "--stage", "plan", "--by", "1"]);
    assert_eq!(r.code, 65, "{r}");
    assert_eq!(fx.tip("nope"), "");

    e(&[
        "--stage",
        "code",
        "--by",
        "2",
        "--cause",
        "recurring",
        "--reason",
        " flaky ",
    ])
    .ok();
    e(&["--stage", "plan", "--by", "1"]).ok();
    let lines = fx.jsonl("s", "extensions.jsonl");
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["cause"], "recurring");
    assert_eq!(lines[0]["reason"], "flaky");
    assert_eq!(lines[1]["by"], 1);
    assert!(lines[1].get("cause").is_none());
    // The extension commit is no round.
    let list = fx.spar(&["list"]);
    assert!(list.stdout.contains("code-1"), "{list}");
    assert!(!list.stdout.contains("extensions"), "{list}");
}

#[test]
fn caps_refuse_a_run_past_the_cap_and_cap_report_shows_them() {
    let fx = Fixture::new("[caps]\ncode = 1\n");
    let ok = fx.reviewer("ok", "", &result(&fx.head, vec![]));
    // Fails on its first run, passes afterwards.
    let flaky_marker = fx.tmp("flaky-ran");
    let flaky = fx.reviewer(
        "flaky",
        &format!(
            "if [ ! -e '{m}' ]; then : > '{m}'; exit 1; fi",
            m = flaky_marker.display()
        ),
        &result(&fx.head, vec![]),
    );
    fx.reviewers(&[("ok", &ok), ("flaky", &flaky)]);
    fx.run("s", &[]).ok(); // code-1, counted; flaky failed
    fx.run("s", &["--dry-run"]).ok(); // code-2, not counted

    let run = ["run", "--base", &fx.base, "--series", "s"];
    fx.refuse(
        "s",
        65,
        &run,
        "cap reached for stage code (1 of 1); extend it with `git spar extend s --stage code --by 1 --cause …`",
    );
    // Re-running only the unfinished reviewer over the same change is not counted.
    fx.run("s", &["--reviewers", "flaky"]).ok(); // code-3
    let mut only_ok = run.to_vec();
    only_ok.extend(["--reviewers", "ok"]);
    fx.refuse("s", 65, &only_ok, "cap reached");

    fx.spar(&[
        "extend", "s", "--stage", "code", "--by", "1", "--cause", "churn",
    ])
    .code(0);
    fx.run("s", &[]).ok(); // code-4, counted
    fx.refuse("s", 65, &run, "(2 of 2)");
    fx.spar(&["extend", "s", "--stage", "plan", "--by", "1"])
        .ok();

    let md = fx.spar(&["cap-report", "s"]);
    md.ok();
    for want in [
        "## code",
        "- cap: 2 (configured 1 + 1 extended)",
        "- counted: 2 · left: 0",
        "- extension +1: cause churn",
        "- code-1: counted",
        "- code-2: not counted (dry run)",
        "- code-3: not counted (re-run of the unfinished reviewers of code-1)",
        "- code-4: counted",
        "## plan",
        "- cap: 3 (configured 2 + 1 extended)",
        "- extension +1: cause not recorded",
    ] {
        assert!(md.stdout.contains(want), "missing {want:?}:\n{md}");
    }
    let j = fx.spar(&["cap-report", "s", "--format", "json"]);
    let v = j.json();
    let code = v["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stage"] == "code")
        .unwrap();
    assert_eq!(code["cap"], 2);
    assert_eq!(code["left"], 0);
    assert_eq!(code["extensions"][0]["cause_recorded"], true);

    assert_eq!(fx.spar(&["cap-report", "s", "--format", "xml"]).code, 64);
    assert_eq!(fx.spar(&["cap-report"]).code, 64);
    assert_eq!(fx.spar(&["cap-report", "nope"]).code, 65);
}

/// G33: a write waits for the series lock held by another writer, says so on stderr, and then
/// records on what it re-reads; the gate never waits.
#[test]
fn writes_wait_for_the_series_lock_and_the_gate_does_not() {
    let fx = Fixture::new("");
    let ok = fx.reviewer("ok", "", &result(&fx.head, vec![defect("D1")]));
    fx.reviewers(&[("ok", &ok)]);
    fx.run("s", &[]).ok();
    let lock = fx.repo.path().join(".git/spar/locks/s.lock");
    assert!(lock.exists(), "run takes the series lock");
    let ready = fx.tmp("held");
    let mut holder = fx
        .repo
        .program("flock")
        .arg(&lock)
        .arg("sh")
        .arg("-c")
        .arg(format!(": > '{}'; sleep 1", ready.display()))
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !ready.exists() {
        assert!(start.elapsed().as_secs() < 10, "flock never took the lock");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let g = fx.spar(&["gate", "s:code-1"]);
    assert_eq!(g.code, 2, "{g}");
    assert!(!g.stderr.contains("waiting"), "{g}");
    let t = fx.spar(&[
        "triage",
        "s",
        "code-1",
        "ok-F1",
        "rejected",
        "--evidence",
        "no",
    ]);
    t.ok()
        .stderr_has("spar: waiting for another write of s to finish");
    holder.wait().unwrap();
    fx.spar(&["gate", "s:code-1"]).ok();
}

/// A gate asked again decides the same; after a new record it decides anew.
#[test]
fn a_gate_asked_again_decides_the_same_and_follows_new_records() {
    let fx = Fixture::new("check_paths = [\"checks/**\"]\n");
    mixed_round(&fx);
    let gate = || fx.spar(&["gate", "s:code-1", "--json"]);
    let doc = |r: &Run| -> Value {
        let mut v: Value = serde_json::from_str(&r.stdout).unwrap();
        v.as_object_mut().unwrap().remove("at");
        v
    };
    let cold = gate();
    assert_eq!(cold.code, 2, "{cold}");
    let warm = gate();
    assert_eq!((warm.code, doc(&warm)), (2, doc(&cold)));
    assert_eq!(warm.stderr, cold.stderr);

    // Triage moves the series tip: the next gate decides anew and passes.
    let t = |args: &[&str]| {
        let mut all = vec!["triage", "s", "code-1"];
        all.extend_from_slice(args);
        fx.spar(&all).ok();
    };
    t(&["lint-F2", "answered", "--user-quote", "yes"]);
    t(&["lint-F1", "rejected", "--evidence", "not a bug"]);
    t(&["lint-F5", "rejected", "--evidence", "not a bug"]);
    let after = gate();
    assert_eq!(after.code, 0, "{after}");
    // A list is its own question, even one whose round name holds a line break.
    let twice = fx.spar(&["gate", "s:code-1", "s:code-1"]);
    assert_eq!(twice.code, 0, "{twice}");
    let joined = fx.spar(&["gate", "s:code-1\ns:code-1"]);
    assert_eq!(joined.code, 2, "{joined}");
    // --expect-head is part of the question: the same list with another answer.
    let moved = fx.spar(&["gate", "s:code-1", "--expect-head", "HEAD~1"]);
    assert_eq!(moved.code, 2, "{moved}");
    assert!(
        moved.stdout.contains("the change moved after review"),
        "{moved}"
    );
}

// ---------------------------------------------------------------------------------------------
// Completed results are final

/// Twenty `git spar record` calls at once for one pending native reviewer: exactly one lands,
/// the other nineteen are refused (65) because the reviewer has completed by then.
#[test]
fn of_twenty_concurrent_records_of_one_reviewer_exactly_one_lands() {
    let fx = Fixture::new("");
    std::fs::write(
        fx.tmp("user.toml"),
        "timeout_seconds = 30\n[[reviewers]]\nname = \"host\"\npreset = \"native\"\n",
    )
    .unwrap();
    fx.run("s", &[]).ok();
    let before = fx.tip("s");
    let files: Vec<String> = (1..=20)
        .map(|i| {
            let findings = (0..i).map(|n| defect(&format!("D{n}"))).collect();
            let path = fx.tmp(&format!("result-{i}.json"));
            std::fs::write(&path, result(&fx.head, findings).to_string()).unwrap();
            path.display().to_string()
        })
        .collect();
    let children: Vec<_> = files
        .iter()
        .map(|f| {
            fx.command(&["record", "s", "code-1", "host", "--result", f])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut landed = 0;
    for c in children {
        let out = c.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => landed += 1,
            Some(65) => assert!(stderr.contains("already completed"), "{stderr}"),
            other => panic!("exit {other:?}: {stderr}"),
        }
    }
    assert_eq!(landed, 1, "exactly one record lands");
    let log = fx.repo.git(&[
        "log",
        "--format=%s",
        &format!("{before}..refs/spar/series/s"),
    ]);
    assert_eq!(log.lines().count(), 1, "{log}");
    // The one that landed is whole: its findings are those of one result file.
    let round: Value = serde_json::from_str(&fx.show("s", "rounds/code-1/round.json")).unwrap();
    assert_eq!(round["reviewers"][0]["status"], "completed");
    let findings: Vec<Value> =
        serde_json::from_str(&fx.show("s", "rounds/code-1/findings.json")).unwrap();
    assert!((1..=20).contains(&findings.len()));
}

/// A bare server with the rails hooks installed, holding the series `s` as pushed now; the
/// PATH under which its hooks find our binaries.
fn guarded_server(fx: &Fixture) -> (tempfile::TempDir, TestRepo, String) {
    let remote = tempfile::tempdir().unwrap();
    let remote_path = remote.path().to_str().unwrap();
    fx.repo.git(&["init", "-q", "--bare", remote_path]);
    let server = TestRepo::at(remote.path());
    server.rails(&["hooks", "install"]).ok();
    let path = crate::harness::path_with_bins();
    fx.repo
        .git_env(
            &["push", remote_path, "refs/spar/series/s"],
            &[("PATH", &path)],
        )
        .ok();
    (remote, server, path)
}

/// A commit written with plain git on top of the series that keeps `round.json` but empties a
/// completed reviewer's findings (so the tip alone has nothing open): the spar gate refuses the
/// series, and so does the server's pre-receive on a fast-forward push of it.
#[test]
fn a_hand_made_commit_replacing_a_completed_result_is_refused_by_gate_and_server() {
    let fx = Fixture::new("");
    mixed_round(&fx);
    fx.spar(&["gate", "s:code-1"]).code(2);
    let (remote, server, path) = guarded_server(&fx);
    let remote_path = remote.path().to_str().unwrap();

    let tip = fx.tip("s");
    let index = fx.tmp("forged-index");
    let index = index.to_str().unwrap();
    let env = [("GIT_INDEX_FILE", index)];
    fx.repo.git_env(&["read-tree", &tip], &env).ok();
    let blob = {
        std::fs::write(fx.tmp("empty.json"), "[]\n").unwrap();
        fx.repo
            .git(&["hash-object", "-w", fx.tmp("empty.json").to_str().unwrap()])
    };
    let cacheinfo = format!("100644,{},rounds/code-1/findings.json", blob.trim());
    fx.repo
        .git_env(&["update-index", "--cacheinfo", &cacheinfo], &env)
        .ok();
    let tree = fx.repo.git_env(&["write-tree"], &env);
    let tree = tree.ok().stdout.trim().to_string();
    let forged = fx.repo.git(&[
        "commit-tree",
        &tree,
        "-p",
        &tip,
        "-m",
        "spar s code-1: record lint\n\nSpar-Series: s\nSpar-Round: code-1",
    ]);
    fx.repo
        .git(&["update-ref", "refs/spar/series/s", forged.trim(), &tip]);

    let g = fx.spar(&["gate", "s:code-1"]);
    assert_eq!(g.code, 2, "{g}");
    assert!(
        g.stdout
            .contains("replaces the completed result of lint in round code-1"),
        "{g}"
    );
    let push = fx.repo.git_env(
        &["push", remote_path, "refs/spar/series/s"],
        &[("PATH", &path)],
    );
    assert_ne!(push.code, 0, "{push}");
    assert!(
        push.stderr
            .contains("its history replaces a completed review result"),
        "{push}"
    );
    assert_eq!(
        server.git(&["rev-parse", "refs/spar/series/s"]).trim(),
        tip,
        "the server kept its records"
    );
}

/// Commits `bytes` at `path` of series `s` with plain git (a hand-made record), moving the ref;
/// returns the tip before.
fn forge(fx: &Fixture, path: &str, bytes: &[u8]) -> String {
    let tip = fx.tip("s");
    let index = fx.tmp("forged-index");
    let _ = std::fs::remove_file(&index);
    let index = index.to_str().unwrap();
    let env = [("GIT_INDEX_FILE", index)];
    fx.repo.git_env(&["read-tree", &tip], &env).ok();
    std::fs::write(fx.tmp("forged-file"), bytes).unwrap();
    let blob = fx
        .repo
        .git(&["hash-object", "-w", fx.tmp("forged-file").to_str().unwrap()]);
    let cacheinfo = format!("100644,{},{path}", blob.trim());
    fx.repo
        .git_env(&["update-index", "--add", "--cacheinfo", &cacheinfo], &env)
        .ok();
    let tree = fx.repo.git_env(&["write-tree"], &env);
    let tree = tree.ok().stdout.clone();
    let forged = fx.repo.git(&[
        "commit-tree",
        tree.trim(),
        "-p",
        &tip,
        "-m",
        "spar s code-1: triage\n\nSpar-Series: s\nSpar-Round: code-1",
    ]);
    fx.repo
        .git(&["update-ref", "refs/spar/series/s", forged.trim(), &tip]);
    tip
}

/// Versions before issue 33 wrote a `gate-facts.json` into every round's folder. Such a file,
/// even one that says nothing blocks, changes nothing: the gate judges the round by its
/// records, never names the file, and the server's pre-receive takes the series as it is.
#[test]
fn a_rounds_retired_gate_facts_file_is_ignored() {
    let fx = Fixture::new("check_paths = [\"checks/**\"]\n");
    mixed_round(&fx);
    let (remote, server, path) = guarded_server(&fx);
    let remote_path = remote.path().to_str().unwrap();
    let honest = fx.spar(&["gate", "s:code-1", "--json"]);
    assert_eq!(honest.code, 2, "{honest}");
    let doc = |r: &Run| -> Value {
        let mut v: Value = serde_json::from_str(&r.stdout).unwrap();
        v.as_object_mut().unwrap().remove("at");
        v
    };
    // What the old versions wrote, edited to say the round has nothing open.
    let lie = json!({
        "schema": "spar-gate-facts/1",
        "series": "s",
        "folder": "code-1",
        "blocking": [],
        "blocks": "nnnnnn",
    });
    forge(
        &fx,
        "rounds/code-1/gate-facts.json",
        &serde_json::to_vec_pretty(&lie).unwrap(),
    );
    let g = fx.spar(&["gate", "s:code-1", "--json"]);
    assert_eq!(g.code, 2, "{g}");
    assert_eq!(doc(&g), doc(&honest));
    assert_eq!(doc(&g)["open_findings"], 3, "{g}");
    assert!(!g.stdout.contains("gate-facts"), "{g}");
    let text = fx.spar(&["gate", "s:code-1"]);
    assert!(text.stdout.contains("lint-F1 (defect) is open"), "{text}");
    assert!(!text.stdout.contains("gate-facts"), "{text}");
    // A triage on top keeps the old file where it is and still reads the round.
    fx.spar(&[
        "triage",
        "s",
        "code-1",
        "lint-F2",
        "answered",
        "--user-quote",
        "yes",
    ])
    .ok();
    assert!(fx
        .show("s", "rounds/code-1/gate-facts.json")
        .contains("spar-gate-facts/1"));
    let g = fx.spar(&["gate", "s:code-1", "--json"]);
    assert_eq!(doc(&g)["open_findings"], 2, "{g}");
    // The server takes it: the file replaces no result and is no record of its own.
    let push = fx.repo.git_env(
        &["push", remote_path, "refs/spar/series/s"],
        &[("PATH", &path)],
    );
    assert_eq!(push.code, 0, "{push}");
    assert_eq!(
        server.git(&["rev-parse", "refs/spar/series/s"]).trim(),
        fx.tip("s")
    );
}

/// The history rule holds as the series moves: a commit replacing a completed result found
/// after an earlier gate is reported, and stays reported under later writes; when the ref is
/// set back to before it, it is not.
#[test]
fn the_replaced_result_rule_holds_as_the_series_moves() {
    let fx = Fixture::new("");
    mixed_round(&fx);
    let first = fx.spar(&["gate", "s:code-1"]);
    assert_eq!(first.code, 2, "{first}");
    assert!(!first.stdout.contains("replaces"), "{first}");
    let tip = forge(&fx, "rounds/code-1/findings.json", b"[]\n");
    let g = fx.spar(&["gate", "s:code-1"]);
    assert_eq!(g.code, 2, "{g}");
    assert!(
        g.stdout
            .contains("replaces the completed result of lint in round code-1"),
        "{g}"
    );
    // Later writes keep it: the history is the audit log.
    fx.spar(&[
        "extend", "s", "--stage", "code", "--by", "1", "--cause", "churn",
    ])
    .ok();
    let g = fx.spar(&["gate", "s:code-1"]);
    assert!(g.stdout.contains("replaces the completed result"), "{g}");
    fx.repo
        .git(&["update-ref", "refs/spar/series/s", &tip, &fx.tip("s")]);
    let back = fx.spar(&["gate", "s:code-1"]);
    assert_eq!(back.code, 2, "{back}");
    assert!(!back.stdout.contains("replaces"), "{back}");
}

/// A reviewer result handed to `git spar record` as a stream of 1 GiB is refused once 32 MiB
/// have been read (memory stays bounded; nothing is recorded), and a result of the allowed
/// size on the same stream still lands.
#[test]
fn record_refuses_a_result_larger_than_32_mib_from_a_stream() {
    use std::io::Write;
    let fx = Fixture::new("");
    std::fs::write(
        fx.tmp("user.toml"),
        "timeout_seconds = 30\n[[reviewers]]\nname = \"host\"\npreset = \"native\"\n",
    )
    .unwrap();
    fx.run("s", &[]).ok();
    let before = fx.tip("s");
    let mut child = fx
        .command(&["record", "s", "code-1", "host", "--result", "/dev/stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk = vec![b' '; 1 << 20];
        let _ = stdin.write_all(b"{\"findings\": [");
        let mut sent = 0usize;
        for _ in 0..1024 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
            sent += chunk.len();
        }
        sent
    });
    let out = child.wait_with_output().unwrap();
    let sent = writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(65), "{stderr}");
    assert!(
        stderr.contains("--result /dev/stdin: larger than 32 MiB"),
        "{stderr}"
    );
    assert!(sent < 1 << 30, "the whole stream was read");
    assert_eq!(fx.tip("s"), before, "nothing was recorded");

    let mut child = fx
        .command(&["record", "s", "code-1", "host", "--result", "/dev/stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let body = result(&fx.head, vec![defect("D1")]).to_string();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(fx.tip("s"), before);
}

/// The gate that builds on what an earlier gate kept (the memo of the series at a commit: each
/// round's part of the decision, the duplicates followed at decision time) decides exactly as
/// a gate with nothing kept, at every step: new records, triage into and out of a duplicate
/// chain that crosses rounds, the ref set back to an older commit and forward again, a commit
/// no gate saw (written aside by hand), a sublist, and memo entries edited by hand.
#[test]
fn a_gate_on_kept_parts_decides_as_a_cold_gate() {
    let fx = Fixture::new("check_paths = [\"checks/**\"]\n[caps]\ncode = 20\n");
    mixed_round(&fx);
    for _ in 0..3 {
        fx.run("s", &[]).ok();
    }
    let cache = fx.repo.path().join(".git/rails/cache");
    let aside = fx.tmp("cache-aside");
    let doc = |r: &Run| -> Value {
        let mut v: Value = serde_json::from_str(&r.stdout).unwrap();
        v.as_object_mut().unwrap().remove("at");
        v
    };
    let rounds = |n: usize| -> Vec<String> { (1..=n).map(|i| format!("s:code-{i}")).collect() };
    // The gate over `list` with what is kept, then with nothing kept: the same exit code, the
    // same document, the same text; afterwards the kept state is put back, so the next step
    // builds on it. Returns the document.
    let same = |list: &[String], what: &str| -> Value {
        let mut args = vec!["gate", "--json"];
        args.extend(list.iter().map(String::as_str));
        let warm = fx.spar(&args);
        let mut text_args = args.clone();
        text_args.remove(1);
        let warm_text = fx.spar(&text_args);
        let _ = std::fs::remove_dir_all(&aside);
        std::fs::rename(&cache, &aside).unwrap();
        let cold = fx.spar(&args);
        let _ = std::fs::remove_dir_all(&cache);
        let cold_text = fx.spar(&text_args);
        std::fs::remove_dir_all(&cache).unwrap();
        std::fs::rename(&aside, &cache).unwrap();
        assert_eq!(warm.code, cold.code, "{what}: {warm}\n{cold}");
        assert_eq!(doc(&warm), doc(&cold), "{what}");
        assert_eq!(warm_text.stdout, cold_text.stdout, "{what}");
        assert_eq!(warm_text.code, cold_text.code, "{what}");
        doc(&warm)
    };
    let open = |d: &Value| d["open_findings"].as_u64().unwrap();
    let t = |round: &str, args: &[&str]| {
        let mut all = vec!["triage", "s", round];
        all.extend_from_slice(args);
        fx.spar(&all).ok();
    };

    let d = same(&rounds(4), "four rounds");
    assert_eq!(open(&d), 12, "{d}");
    fx.run("s", &[]).ok();
    let d = same(&rounds(5), "first gate after a new record");
    assert_eq!(open(&d), 15, "{d}");
    // code-5's F1 a duplicate of code-1's F1, which is open: still open.
    t(
        "code-5",
        &["lint-F1", "duplicate", "--of", "code-1:lint-F1"],
    );
    let d = same(&rounds(5), "a duplicate into an open finding");
    assert_eq!(open(&d), 15, "{d}");
    // code-1's F1 rejected: code-5's duplicate resolves though code-5 did not change.
    t(
        "code-1",
        &["lint-F1", "rejected", "--evidence", "not a bug"],
    );
    let d = same(&rounds(5), "the end of a duplicate chain resolved");
    assert_eq!(open(&d), 13, "{d}");
    // A chain through three rounds, and a cycle.
    t(
        "code-4",
        &["lint-F5", "duplicate", "--of", "code-5:lint-F1"],
    );
    let d = same(&rounds(5), "a chain through three rounds");
    assert_eq!(open(&d), 12, "{d}");
    t(
        "code-1",
        &["lint-F1", "duplicate", "--of", "code-4:lint-F5"],
    );
    let d = same(&rounds(5), "a cycle");
    assert_eq!(open(&d), 15, "{d}");
    let d = same(
        &["s:code-5".to_string(), "s:code-4".to_string()],
        "a sublist",
    );
    assert_eq!(d["result"], "blocked");
    let before_more = fx.tip("s");
    t("code-2", &["lint-F2", "answered", "--user-quote", "yes"]);
    fx.run("s", &[]).ok();
    fx.run("s", &[]).ok();
    same(&rounds(7), "a triage and two records since the last gate");

    // The ref set back to an older commit (the kept tip is not in its history) and forward.
    let newest = fx.tip("s");
    fx.repo
        .git(&["update-ref", "refs/spar/series/s", &before_more, &newest]);
    same(&rounds(5), "the ref set back");
    fx.repo
        .git(&["update-ref", "refs/spar/series/s", &newest, &before_more]);
    same(&rounds(7), "the ref forward again");
    // A commit the kept facts never saw, on top of an older one (not a fast-forward).
    fx.repo
        .git(&["update-ref", "refs/spar/series/s", &before_more, &newest]);
    forge(&fx, "rounds/code-1/ledger.jsonl", b"");
    same(&rounds(5), "a commit written aside by hand");

    // Every kept entry edited by hand (a byte more, a byte less, emptied): each a miss,
    // decided from the records.
    let memo = cache.join("spar-gate");
    let entries: Vec<_> = std::fs::read_dir(&memo)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!entries.is_empty());
    for (i, e) in entries.iter().enumerate() {
        let mut bytes = std::fs::read(e).unwrap();
        match i % 3 {
            0 => bytes.push(b' '),
            1 => {
                bytes.pop();
            }
            _ => bytes.clear(),
        }
        std::fs::write(e, &bytes).unwrap();
    }
    same(&rounds(5), "memo entries edited by hand");
}

/// A client with our hooks stops the same hand-made commit before it leaves, also for a
/// remote that runs no hook of ours (a forge): pre-push judges a pushed series as the guarded
/// server does. The honest tip is pushed.
#[test]
fn pre_push_refuses_a_series_that_replaces_a_completed_result() {
    let fx = Fixture::new("");
    mixed_round(&fx);
    fx.repo.rails(&["hooks", "install"]).ok();
    let remote = tempfile::tempdir().unwrap();
    let remote_path = remote.path().to_str().unwrap();
    fx.repo.git(&["init", "-q", "--bare", remote_path]);
    let path = crate::harness::path_with_bins();
    let tip = forge(&fx, "rounds/code-1/findings.json", b"[]\n");
    let push = fx.repo.git_env(
        &["push", remote_path, "refs/spar/series/s"],
        &[("PATH", &path)],
    );
    assert_ne!(push.code, 0, "{push}");
    assert!(
        push.stderr.contains(
            "git-rails: update of refs/spar/series/s refused: its history replaces a completed review result"
        ),
        "{push}"
    );
    let server = TestRepo::at(remote.path());
    assert!(
        server
            .git_run(&["rev-parse", "-q", "--verify", "refs/spar/series/s"])
            .stdout
            .trim()
            .is_empty(),
        "nothing reached the remote"
    );
    fx.repo.git(&["update-ref", "refs/spar/series/s", &tip]);
    fx.repo
        .git_env(
            &["push", remote_path, "refs/spar/series/s"],
            &[("PATH", &path)],
        )
        .ok();
    assert_eq!(server.git(&["rev-parse", "refs/spar/series/s"]).trim(), tip);
}

// ---------------------------------------------------------------------------------------------
// Decisions only a person can make (issue 34): who made each is read from the commit that
// first added its line, and under a signing policy only a person's signed one counts.

/// Round code-1 of series `s`: reviewer `ok` completed with defect ok-F1, reviewer `bad`
/// failed. The policy in force (when `policy`): alice's and bob's keys are allowed, bob is the
/// person, alice only a planner; mallory's key is in no policy.
fn person_round(policy: bool) -> (Fixture, crate::harness::People) {
    let p = crate::harness::people();
    let fx = Fixture::new("");
    let ok = fx.reviewer("ok", "", &result(&fx.head, vec![defect("D1")]));
    let bad = fx.reviewer("bad", "exit 3", &result(&fx.head, vec![]));
    fx.reviewers(&[("ok", &ok), ("bad", &bad)]);
    fx.run("s", &[]).ok();
    if policy {
        fx.repo.git(&[
            "config",
            "rails.allowedSigners",
            p.allowed.to_str().unwrap(),
        ]);
        fx.repo.git(&["config", "rails.person", "bob@example.com"]);
        fx.repo
            .git(&["config", "rails.planner", "alice@example.com"]);
    }
    (fx, p)
}

impl Fixture {
    /// Runs `args` signed by `key` (`--sign` added), then forgets the key.
    fn signed(&self, key: &crate::harness::Key, args: &[&str]) -> Run {
        crate::harness::sign_as(&self.repo, key);
        let mut all = args.to_vec();
        all.push("--sign");
        let run = self.spar(&all);
        self.repo.git(&["config", "--unset", "user.signingKey"]);
        run
    }

    fn gate_json(&self) -> (i32, Value) {
        let g = self.spar(&["gate", "s:code-1", "--json"]);
        (g.code, serde_json::from_str(&g.stdout).unwrap())
    }
}

/// The made_by of each decision in a gate document.
fn made_by(doc: &Value) -> Vec<String> {
    doc["decisions"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|x| x["made_by"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn under_a_policy_only_a_waiver_a_person_signed_counts() {
    let (fx, p) = person_round(true);
    fx.spar(&[
        "triage",
        "s",
        "code-1",
        "ok-F1",
        "rejected",
        "--evidence",
        "not reachable",
    ])
    .ok();

    // Unsigned: shown, blocks, and names the command a person runs and who may run it.
    fx.spar(&["waive", "s", "code-1", "bad", "--user-quote", "go on"])
        .ok();
    let g = fx.spar(&["gate", "s:code-1"]);
    assert_eq!(g.code, 2, "{g}");
    for want in [
        "s:code-1: the waiver of bad is unsigned",
        "only a decision signed by a person counts",
        "a person (bob@example.com) runs `git spar waive s code-1 bad --user-quote \"<their words>\" --sign`",
        "decision s:waiver of bad: unsigned, does not count",
    ] {
        assert!(g.stdout.contains(want), "missing {want:?}:\n{g}");
    }
    assert!(!g.stderr.contains("notice"), "{g}");

    // Signed by a key outside the policy, then by a planner who is no person: still blocked.
    fx.signed(
        &p.mallory,
        &[
            "waive",
            "s",
            "code-1",
            "bad",
            "--user-quote",
            "mallory says",
        ],
    )
    .ok();
    let (code, doc) = fx.gate_json();
    assert_eq!(code, 2, "{doc}");
    assert!(
        made_by(&doc)[1].starts_with("signed by a key outside the policy"),
        "{doc}"
    );
    fx.signed(
        &p.alice,
        &["waive", "s", "code-1", "bad", "--user-quote", "alice says"],
    )
    .ok();
    let (code, doc) = fx.gate_json();
    assert_eq!(code, 2, "{doc}");
    assert_eq!(made_by(&doc)[2], "alice@example.com (planner)", "{doc}");
    assert_eq!(doc["decisions"][2]["counts"], false, "{doc}");

    // The person signs: it counts, and everyone sees who.
    fx.signed(
        &p.bob,
        &["waive", "s", "code-1", "bad", "--user-quote", "bob says go"],
    )
    .ok();
    let (code, doc) = fx.gate_json();
    assert_eq!(code, 0, "{doc}");
    assert_eq!(made_by(&doc)[3], "bob@example.com (person)", "{doc}");
    assert_eq!(doc["decisions"][3]["counts"], true, "{doc}");
    let show = fx.spar(&["show", "s:code-1"]);
    assert!(
        show.stdout
            .contains("waiver of bad: bob@example.com (person)"),
        "{show}"
    );
    assert!(
        show.stdout
            .contains("waiver of bad: unsigned, does not count"),
        "{show}"
    );
    let json: Value =
        serde_json::from_str(&fx.spar(&["show", "s:code-1", "--json"]).stdout).unwrap();
    assert_eq!(json["decisions"][3]["made_by"], "bob@example.com (person)");
    // --policy-from: the committed policy of a revision (here none) replaces HEAD's, and git
    // configuration alone still makes one.
    assert_eq!(
        fx.spar(&["gate", "s:code-1", "--policy-from", "HEAD"]).code,
        0
    );
}

#[test]
fn under_a_policy_an_acceptance_counts_only_signed_by_a_person() {
    let (fx, p) = person_round(true);
    fx.signed(
        &p.bob,
        &["waive", "s", "code-1", "bad", "--user-quote", "go on"],
    )
    .ok();
    fx.spar(&[
        "triage",
        "s",
        "code-1",
        "ok-F1",
        "accepted",
        "--user-quote",
        "ship it",
    ])
    .ok();
    let g = fx.spar(&["gate", "s:code-1"]);
    assert_eq!(g.code, 2, "{g}");
    assert!(
        g.stdout.contains(
            "s:code-1: ok-F1 accepted is unsigned; under the signing policy only a decision signed by a person counts: a person (bob@example.com) runs `git spar triage s code-1 ok-F1 accepted --user-quote \"<their words>\" --sign`"
        ),
        "{g}"
    );
    let (_, doc) = fx.gate_json();
    assert_eq!(doc["open_findings"], 1, "{doc}");

    fx.signed(
        &p.bob,
        &[
            "triage",
            "s",
            "code-1",
            "ok-F1",
            "accepted",
            "--user-quote",
            "bob: ship it",
        ],
    )
    .ok();
    let (code, doc) = fx.gate_json();
    assert_eq!(code, 0, "{doc}");
    // The HTML report shows who made each decision.
    let html = fx.tmp("report.html");
    fx.spar(&["report", "s:code-1", "--html", html.to_str().unwrap()])
        .ok();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Decisions only a person can make"), "{page}");
    assert!(
        page.contains("<td class=\"made-by\">bob@example.com (person)</td>"),
        "{page}"
    );
    assert!(
        page.contains("<td class=\"made-by\">unsigned</td>"),
        "{page}"
    );
}

#[test]
fn a_signed_waiver_line_copied_into_a_merge_or_a_larger_commit_is_unverified() {
    let (fx, p) = person_round(true);
    fx.spar(&[
        "triage",
        "s",
        "code-1",
        "ok-F1",
        "rejected",
        "--evidence",
        "not reachable",
    ])
    .ok();
    let t0 = fx.tip("s");
    fx.signed(
        &p.bob,
        &["waive", "s", "code-1", "bad", "--user-quote", "go on"],
    )
    .ok();
    assert_eq!(fx.gate_json().0, 0);
    let waived = fx.tip("s");
    // Another record after it: a tree holding the waiver and one more line.
    fx.spar(&[
        "triage",
        "s",
        "code-1",
        "ok-F1",
        "accepted",
        "--user-quote",
        "ship",
    ])
    .ok();
    let both = fx.tip("s");

    let r = &fx.repo;
    crate::harness::sign_as(r, &p.bob);
    let tree = |c: &str| {
        r.git(&["rev-parse", &format!("{c}^{{tree}}")])
            .trim()
            .to_string()
    };
    let series = "refs/spar/series/s";
    // A commit signed by the person that adds the waiver line and the ledger line at once.
    let mixed = r
        .git(&[
            "commit-tree",
            "-S",
            &tree(&both),
            "-p",
            &t0,
            "-m",
            "spar s code-1: waive bad",
        ])
        .trim()
        .to_string();
    r.git(&["update-ref", series, &mixed]);
    let (code, doc) = fx.gate_json();
    assert_eq!(code, 2, "{doc}");
    let shown = made_by(&doc);
    assert!(
        shown
            .iter()
            .any(|m| m
                == "unverified: added by a commit that also changes rounds/code-1/ledger.jsonl"),
        "{doc}"
    );
    // A merge signed by the person that brings the line in from neither parent.
    let side = r
        .git(&["commit-tree", &tree(&t0), "-p", &t0, "-m", "side"])
        .trim()
        .to_string();
    let merge = r
        .git(&[
            "commit-tree",
            "-S",
            &tree(&waived),
            "-p",
            &t0,
            "-p",
            &side,
            "-m",
            "spar s code-1: waive bad",
        ])
        .trim()
        .to_string();
    r.git(&["update-ref", series, &merge]);
    let (code, doc) = fx.gate_json();
    assert_eq!(code, 2, "{doc}");
    assert_eq!(
        made_by(&doc),
        ["unverified: brought in by a merge commit"],
        "{doc}"
    );
    // The same tree on the person's signed commit counts: the rule, not the key, refused.
    r.git(&["update-ref", series, &waived]);
    assert_eq!(fx.gate_json().0, 0);
}

#[test]
fn without_a_policy_decisions_count_shown_unverified_with_a_notice() {
    let (fx, _p) = person_round(false);
    fx.spar(&["waive", "s", "code-1", "bad", "--user-quote", "go on"])
        .ok();
    fx.spar(&[
        "triage",
        "s",
        "code-1",
        "ok-F1",
        "accepted",
        "--user-quote",
        "ship it",
    ])
    .ok();
    let g = fx.spar(&["gate", "s:code-1"]);
    assert_eq!(g.code, 0, "{g}");
    assert!(
        g.stdout.contains("decision s:waiver of bad: unverified"),
        "{g}"
    );
    assert!(
        g.stdout.contains("decision s:ok-F1 accepted: unverified"),
        "{g}"
    );
    assert!(
        g.stderr
            .contains("spar: notice: no signing policy is in force"),
        "{g}"
    );
    let (_, doc) = fx.gate_json();
    assert_eq!(made_by(&doc), ["unverified", "unverified"], "{doc}");
    assert!(
        doc["notice"].as_str().unwrap().contains("anyone can waive"),
        "{doc}"
    );
    let show = fx.spar(&["show", "s:code-1"]);
    assert!(show.stdout.contains("waiver of bad: unverified"), "{show}");
    assert!(show.stderr.contains("spar: notice:"), "{show}");
}
