//! `git spar run`, `record`, `config`, `show` and `list` end to end through the binary (issue 5):
//! command reviewers are small `#!/bin/sh` scripts written by each test, the user configuration
//! is a temporary file named by `SPAR_CONFIG` (with `XDG_CONFIG_HOME` and `HOME` pointing at
//! empty temporary folders), and the project file is the test repository's `.jaekit/spar.toml`.
//! Every refusal is checked for its exit code, for naming the problem on stderr, and for having
//! written nothing: no series ref, no workspace, no note, no reviewer started.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::harness::Run;
use crate::spar_fixture::{spar_fixture, SparChange};
use crate::spar_results::{finding, result, ANGLES};

/// The project file every fixture starts with.
const PROJECT: &str = "check_paths = [\"checks/**\"]\n";

/// A repository with a two-commit change (base = `HEAD~1`, head = `HEAD`) and a folder for the
/// user configuration, the reviewer scripts and what they leave behind.
struct Fixture {
    s: SparChange,
}

spar_fixture!(Fixture);

impl Fixture {
    fn new() -> Fixture {
        let s = SparChange::new(
            &[
                (".jaekit/spar.toml", PROJECT),
                ("AGENTS.md", "Rule one.\nRule two.\n"),
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

    fn tmp_str(&self, rel: &str) -> String {
        self.tmp(rel).display().to_string()
    }

    /// The user file `SPAR_CONFIG` names.
    fn user_file(&self) -> PathBuf {
        self.tmp("user.toml")
    }

    fn user(&self, toml: &str) {
        std::fs::write(self.user_file(), toml).unwrap();
    }

    /// Writes an executable `#!/bin/sh` script and returns its path.
    fn script(&self, name: &str, body: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let path = self.tmp(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    /// A reviewer script that runs `before` and then prints `result` (written next to it).
    fn reviewer(&self, name: &str, before: &str, result: &Value) -> String {
        let json = self.tmp(&format!("{name}.json"));
        std::fs::write(&json, serde_json::to_string_pretty(result).unwrap()).unwrap();
        self.script(
            &format!("{name}.sh"),
            &format!("{before}\ncat '{}'", json.display()),
        )
    }

    /// A reviewer script printing raw text.
    fn reviewer_text(&self, name: &str, before: &str, text: &str) -> String {
        let out = self.tmp(&format!("{name}.out"));
        std::fs::write(&out, text).unwrap();
        self.script(
            &format!("{name}.sh"),
            &format!("{before}\ncat '{}'", out.display()),
        )
    }

    /// Runs `git-spar` in the repository with the hermetic environment plus `extra`.
    fn spar_env(&self, args: &[&str], extra: &[(&str, &str)]) -> Run {
        self.spar_with(args, extra, &[])
    }

    /// Runs `git-spar` with `extra` set and the variables in `remove` unset.
    fn spar_with(&self, args: &[&str], extra: &[(&str, &str)], remove: &[&str]) -> Run {
        let mut cmd = self.repo.command("git-spar");
        cmd.args(args)
            .env("SPAR_CONFIG", self.user_file())
            .env("XDG_CONFIG_HOME", self.tmp("xdg"));
        for (k, v) in extra {
            cmd.env(k, v);
        }
        for k in remove {
            cmd.env_remove(k);
        }
        Run::of(&mut cmd)
    }

    fn spar(&self, args: &[&str]) -> Run {
        self.spar_env(args, &[])
    }

    /// `git spar run --base <base> --series <series> …`.
    fn run(&self, series: &str, extra: &[&str]) -> Run {
        let mut args = vec!["run", "--base", &self.base, "--series", series];
        args.extend_from_slice(extra);
        self.spar(&args)
    }

    fn series_exists(&self, series: &str) -> bool {
        self.repo
            .git_run(&[
                "rev-parse",
                "--verify",
                "-q",
                &format!("refs/spar/series/{series}"),
            ])
            .code
            == 0
    }

    fn series_tip(&self, series: &str) -> String {
        self.repo
            .git(&["rev-parse", &format!("refs/spar/series/{series}")])
            .trim()
            .to_string()
    }

    /// A file of a recorded round, read from the series ref.
    fn round_file(&self, series: &str, round: &str, file: &str) -> String {
        self.repo.git(&[
            "show",
            &format!("refs/spar/series/{series}:rounds/{round}/{file}"),
        ])
    }

    fn round_json(&self, series: &str, round: &str) -> Value {
        serde_json::from_str(&self.round_file(series, round, "round.json")).unwrap()
    }

    fn findings(&self, series: &str, round: &str) -> Vec<Value> {
        serde_json::from_str::<Value>(&self.round_file(series, round, "findings.json"))
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }

    fn ledger(&self, series: &str, round: &str) -> Vec<Value> {
        self.round_file(series, round, "ledger.jsonl")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn tree(&self, series: &str) -> Vec<String> {
        self.repo
            .git(&[
                "ls-tree",
                "-r",
                "--name-only",
                &format!("refs/spar/series/{series}"),
            ])
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn git_dir(&self) -> PathBuf {
        self.repo.path().join(".git")
    }

    fn workspace(&self, series: &str, round: &str) -> PathBuf {
        self.git_dir()
            .join("spar/workspaces")
            .join(series)
            .join(round)
    }

    /// Neither the series ref nor a workspace of `series` exists.
    #[track_caller]
    fn assert_series_absent(&self, series: &str, run: &Run) {
        assert!(
            !self.series_exists(series),
            "refs/spar/series/{series} exists after a refusal:\n{run}"
        );
        assert!(
            !self.git_dir().join("spar/workspaces").join(series).exists(),
            "a workspace of {series} exists after a refusal:\n{run}"
        );
    }

    /// A refusal: nothing of `series` was written, no note, no workspace, no marker.
    #[track_caller]
    fn assert_nothing_written(&self, series: &str, run: &Run) {
        assert!(
            !self.series_exists(series),
            "refs/spar/series/{series} exists after a refusal:\n{run}"
        );
        assert!(
            !self.git_dir().join("spar/workspaces").join(series).exists(),
            "a workspace of {series} exists after a refusal:\n{run}"
        );
        assert_eq!(
            self.repo
                .git_run(&["rev-parse", "--verify", "-q", "refs/notes/spar"])
                .code,
            1,
            "refs/notes/spar exists after a refusal:\n{run}"
        );
        assert!(
            !self.tmp("marker").exists(),
            "a reviewer started before the refusal:\n{run}"
        );
    }
}

fn with(mut v: Value, pairs: &[(&str, &str)]) -> Value {
    for (k, val) in pairs {
        v[*k] = json!(val);
    }
    v
}

/// A TOML string (JSON string syntax is a TOML basic string for these values).
fn q(s: &str) -> String {
    json!(s).to_string()
}

/// A user file with these command reviewers (name, argv) and a top-level timeout.
fn commands(timeout: u64, reviewers: &[(&str, Vec<String>)]) -> String {
    format!("timeout_seconds = {timeout}\n{}", tables(reviewers))
}

/// `[[reviewers]]` tables of command reviewers (name, argv), each after an empty line.
fn tables(reviewers: &[(&str, Vec<String>)]) -> String {
    let mut s = String::new();
    for (name, argv) in reviewers {
        s.push_str(&format!(
            "\n[[reviewers]]\nname = {}\npreset = \"command\"\nargv = [{}]\n",
            q(name),
            argv.iter().map(|a| q(a)).collect::<Vec<_>>().join(", ")
        ));
    }
    s
}

fn argv(script: &str) -> Vec<String> {
    vec![script.to_string()]
}

/// The reviewer record `name` of a round.json.
fn reviewer<'a>(round: &'a Value, name: &str) -> &'a Value {
    round["reviewers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no reviewer {name} in {round:#}"))
}

fn by_id<'a>(findings: &'a [Value], id: &str) -> &'a Value {
    findings
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no finding {id} in {findings:#?}"))
}

fn sha256_hex(bytes: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(bytes);
    format!("{:x}", h.finalize())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether a process is gone (a zombie counts as gone).
fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            // `pid (comm) S …`: the state follows the last `)`.
            let state = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().chars().next())
                .unwrap_or(None);
            matches!(state, Some('Z') | Some('X'))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A clean round and reading it back
// ---------------------------------------------------------------------------------------------

/// A clean round: findings numbered, located, linked and classified; the hardening in the check
/// paths auto-deferred in ledger.jsonl; the round's files on the series ref; summary.md as the
/// note on the head; `show` and `list` read it back; the workspace is gone afterwards.
#[test]
fn clean_round_is_recorded_with_classified_findings() {
    let fx = Fixture::new();
    fx.repo.write(
        ".jaekit/spar.toml",
        &format!("{PROJECT}rules = [\"AGENTS.md\"]\n"),
    );
    let lint_findings = vec![
        // Rule 3: in the check paths, check_impact none → hardening, auto-deferred.
        with(
            finding("L1", "defect", "head/checks/t.py:3"),
            &[("smallest_fix", "assert the return value")],
        ),
        // Rule 5: introduced by the change and a regression → defect.
        with(
            finding("L2", "note", "app/main.rs:2"),
            &[("introduced_by_change", "yes"), ("regression", "yes")],
        ),
        // Unreadable location (a column): §4, the defect proposal stays a defect, no ledger.
        finding("L3", "defect", "head/checks/t.py:3:5"),
        // Rule 6: a defect proposal with an unconfirmed link → note; the claim is kept.
        with(
            finding("L4", "defect", "app/main.rs:1"),
            &[("link_kind", "rule"), ("link", "AGENTS.md:9")],
        ),
        // A confirmed rule link: a defect proposal stays a defect (rule 7).
        with(
            finding("L5", "defect", "app/main.rs:1"),
            &[("link_kind", "rule"), ("link", "AGENTS.md:2")],
        ),
        // Rule 1: in the check paths with false_pass → defect.
        with(
            finding("L6", "note", "./checks/t.py:1-2"),
            &[("check_impact", "false_pass")],
        ),
    ];
    let args = fx.tmp_str("lint-args.txt");
    let lint = fx.reviewer(
        "lint",
        &format!("printf '%s\\n' \"$@\" > '{args}'"),
        &result(&fx.head, lint_findings),
    );
    let peer = fx.reviewer(
        "peer",
        "",
        &result(&fx.head, vec![finding("P1", "note", "head/app/main.rs")]),
    );
    fx.user(&commands(
        30,
        &[
            (
                "lint",
                vec![
                    lint.clone(),
                    "{prompt}".into(),
                    "{workspace}".into(),
                    "{schema}".into(),
                    "x{unknown}".into(),
                ],
            ),
            ("peer", argv(&peer)),
        ],
    ));

    let run = fx.run("s", &[]);
    run.ok()
        .stdout_has("code-1")
        .stdout_has("lint-F1")
        .stderr_has("lint")
        .stderr_has("peer");
    assert!(
        !fx.workspace("s", "code-1").exists(),
        "the workspace is removed once the round is recorded:\n{run}"
    );

    // The placeholders were replaced; anything else in braces is kept.
    let given: Vec<String> = std::fs::read_to_string(&args)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(given.len(), 4, "{given:?}");
    let ws = &given[1];
    assert!(
        ws.ends_with(".git/spar/workspaces/s/code-1"),
        "{{workspace}} is the round's workspace: {given:?}"
    );
    assert_eq!(given[0], format!("{ws}/lint/input.md"), "{given:?}");
    assert_eq!(given[2], format!("{ws}/schema.json"), "{given:?}");
    assert_eq!(given[3], "x{unknown}", "{given:?}");

    // round.json.
    let round = fx.round_json("s", "code-1");
    assert_eq!(round["schema"], "review-round/v1");
    assert_eq!(round["series"], "s");
    assert_eq!(round["round"], "code-1");
    assert_eq!(round["stage"], "code");
    assert_eq!(round["base"], fx.base.as_str());
    assert_eq!(round["head"], fx.head.as_str());
    assert_eq!(round["dry_run"], false);
    assert_eq!(round["config"]["check_paths"], json!(["checks/**"]));
    assert_eq!(round["config"]["angles"], json!(ANGLES));
    let files = round["config"]["files"].as_array().unwrap();
    let user_bytes = std::fs::read(fx.user_file()).unwrap();
    assert!(
        files
            .iter()
            .any(|f| f["sha256"] == sha256_hex(&user_bytes).as_str()),
        "config.files records the user file with its sha256: {files:?}"
    );
    let packet = fx.round_file("s", "code-1", "packet.md");
    assert_eq!(
        round["packet_sha256"],
        sha256_hex(packet.as_bytes()).as_str()
    );
    for r in ["lint", "peer"] {
        let rec = reviewer(&round, r);
        assert_eq!(rec["status"], "completed", "{rec:#}");
        assert_eq!(rec["preset"], "command", "{rec:#}");
        assert_eq!(rec["timeout_seconds"], 30, "{rec:#}");
    }
    assert_eq!(reviewer(&round, "lint")["verdict"], "blocking_findings");
    assert_eq!(reviewer(&round, "peer")["verdict"], "blocking_findings");

    // packet.md and schema.json.
    assert!(
        packet.contains(&fx.head),
        "packet names the head:\n{packet}"
    );
    assert!(
        packet.contains(&fx.base),
        "packet names the base:\n{packet}"
    );
    assert!(packet.contains("checks/**"), "packet lists the check paths");
    assert!(packet.contains("checks/t.py"), "packet holds the change");
    assert!(
        packet.contains("Rule two."),
        "packet holds the rule document"
    );
    let schema: Value = serde_json::from_str(&fx.round_file("s", "code-1", "schema.json")).unwrap();
    assert!(
        schema["properties"]["reviewed_head"].is_object(),
        "{schema:#}"
    );

    // findings.json.
    let findings = fx.findings("s", "code-1");
    let ids: Vec<&str> = findings.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["lint-F1", "lint-F2", "lint-F3", "lint-F4", "lint-F5", "lint-F6", "peer-F1"]
    );
    let f1 = by_id(&findings, "lint-F1");
    assert_eq!(f1["reviewer_id"], "L1");
    assert_eq!(f1["path"], "checks/t.py");
    assert_eq!(f1["in_check_paths"], true);
    assert_eq!(f1["location_unreadable"], false);
    assert_eq!(f1["class"], "hardening");
    assert!(
        f1["class_reason"].as_str().unwrap().contains("rule 3"),
        "{f1:#}"
    );
    assert_eq!(f1["auto_deferred"], true);
    assert_eq!(f1["smallest_fix"], "assert the return value");

    let f2 = by_id(&findings, "lint-F2");
    assert_eq!(f2["path"], "app/main.rs");
    assert_eq!(f2["in_check_paths"], false);
    assert_eq!(f2["class"], "defect");
    assert!(
        f2["class_reason"].as_str().unwrap().contains("rule 5"),
        "{f2:#}"
    );
    assert_eq!(
        f2["smallest_fix"], "",
        "a missing smallest_fix is recorded empty"
    );

    let f3 = by_id(&findings, "lint-F3");
    assert_eq!(f3["path"], "");
    assert_eq!(f3["in_check_paths"], false);
    assert_eq!(f3["location_unreadable"], true);
    assert_eq!(f3["class"], "defect");
    assert!(
        f3["class_reason"]
            .as_str()
            .unwrap()
            .starts_with("unreadable location"),
        "{f3:#}"
    );
    assert_eq!(f3["auto_deferred"], false);

    let f4 = by_id(&findings, "lint-F4");
    assert_eq!(f4["class"], "note", "{f4:#}");
    assert_eq!(f4["link_kind"], "none");
    assert_eq!(f4["link"], "");
    assert_eq!(f4["claimed_link_kind"], "rule");
    assert_eq!(f4["claimed_link"], "AGENTS.md:9");

    let f5 = by_id(&findings, "lint-F5");
    assert_eq!(f5["class"], "defect", "{f5:#}");
    assert_eq!(f5["link_kind"], "rule", "{f5:#}");
    assert!(f5["link"].as_str().unwrap().contains("AGENTS.md"), "{f5:#}");

    let f6 = by_id(&findings, "lint-F6");
    assert_eq!(f6["path"], "checks/t.py");
    assert_eq!(f6["class"], "defect", "{f6:#}");
    assert!(
        f6["class_reason"].as_str().unwrap().contains("rule 1"),
        "{f6:#}"
    );

    let p1 = by_id(&findings, "peer-F1");
    assert_eq!(p1["reviewer"], "peer");
    assert_eq!(p1["path"], "app/main.rs");
    assert_eq!(p1["class"], "note");

    // ledger.jsonl: only the readable hardening is auto-deferred.
    let ledger = fx.ledger("s", "code-1");
    assert_eq!(ledger.len(), 1, "{ledger:?}");
    assert_eq!(ledger[0]["finding"], "lint-F1");
    assert_eq!(ledger[0]["disposition"], "auto_deferred");

    // The tree rounds/code-1/… holds the round's files.
    let tree = fx.tree("s");
    for f in [
        "round.json",
        "packet.md",
        "schema.json",
        "findings.json",
        "ledger.jsonl",
        "summary.md",
    ] {
        assert!(
            tree.contains(&format!("rounds/code-1/{f}")),
            "{f} missing from {tree:?}"
        );
    }
    assert!(
        tree.iter().all(|p| p.starts_with("rounds/code-1/")),
        "{tree:?}"
    );

    // summary.md is the note on the head.
    let summary = fx.round_file("s", "code-1", "summary.md");
    assert!(summary.contains("lint-F1"), "{summary}");
    assert!(summary.contains("(unreadable location)"), "{summary}");
    assert!(summary.contains("assert the return value"), "{summary}");
    let note = fx.repo.git(&["notes", "--ref=spar", "show", "HEAD"]);
    assert!(
        note.contains(summary.trim_end()),
        "the note holds summary.md:\n{note}\n---\n{summary}"
    );

    // show and list read it back.
    let show = fx.spar(&["show", "s:code-1", "--json"]);
    show.ok();
    let shown = show.json();
    assert_eq!(shown["round"]["round"], "code-1");
    assert_eq!(shown["round"]["head"], fx.head.as_str());
    assert_eq!(shown["findings"].as_array().unwrap().len(), 7);
    assert_eq!(shown["findings"][0]["id"], "lint-F1");
    fx.spar(&["show", "s"]).ok().stdout_has("lint-F1");
    let list = fx.spar(&["list", "--json"]);
    list.ok();
    let listed = list.json();
    assert_eq!(listed["schema"], "spar-list/v1");
    assert_eq!(
        listed["series"],
        json!([{"series": "s", "rounds": ["code-1"]}])
    );
    fx.spar(&["list"]).ok().stdout_has("code-1");
    let missing = fx.spar(&["show", "s:code-9", "--json"]);
    missing.code(65).stderr_has("code-9");
}

/// A run reads only git objects: the user's work tree, index and status are byte-for-byte the
/// same afterwards, with unstaged, staged and untracked changes present.
#[test]
fn run_leaves_work_tree_and_index_untouched() {
    let fx = Fixture::new();
    let lint = fx.reviewer("lint", "", &result(&fx.head, vec![]));
    fx.user(&commands(30, &[("lint", argv(&lint))]));
    fx.repo
        .write("app/main.rs", "fn main() { /* unstaged */ }\n");
    fx.repo.write("staged.txt", "staged\n");
    fx.repo.git(&["add", "staged.txt"]);
    fx.repo.write("untracked.txt", "untracked\n");

    let status = fx
        .repo
        .git(&["status", "--porcelain", "--untracked-files=all"]);
    let cached = fx.repo.git(&["diff", "--cached"]);
    let diff = fx.repo.git(&["diff"]);
    let index = std::fs::read(fx.git_dir().join("index")).unwrap();
    let head_ref = fx.repo.git(&["symbolic-ref", "HEAD"]);

    fx.run("s", &[]).ok();
    fx.run("s", &["--dry-run"]).ok();

    assert_eq!(
        fx.repo
            .git(&["status", "--porcelain", "--untracked-files=all"]),
        status
    );
    assert_eq!(fx.repo.git(&["diff", "--cached"]), cached);
    assert_eq!(fx.repo.git(&["diff"]), diff);
    assert_eq!(std::fs::read(fx.git_dir().join("index")).unwrap(), index);
    assert_eq!(fx.repo.git(&["symbolic-ref", "HEAD"]), head_ref);
    assert_eq!(fx.repo.git(&["rev-parse", "HEAD"]).trim(), fx.head);
    assert_eq!(
        fx.repo.read("app/main.rs"),
        "fn main() { /* unstaged */ }\n"
    );
    // The packet is the committed change, not the work tree's.
    let packet = fx.round_file("s", "code-1", "packet.md");
    assert!(!packet.contains("unstaged"), "{packet}");
    assert!(!packet.contains("staged.txt"), "{packet}");
}

/// The reviewer runs in the workspace holding head/, base/, packet.md, schema.json and its
/// input.md; the copies are the base and head commits and are read-only.
#[test]
fn reviewer_runs_in_the_workspace_with_read_only_copies() {
    let fx = Fixture::new();
    let d = fx.dir.path().display().to_string();
    let body = format!(
        "ls > '{d}/ls.txt'
pwd > '{d}/pwd.txt'
cat head/app/main.rs > '{d}/head-main.txt'
cat base/app/main.rs > '{d}/base-main.txt'
test -e base/checks/t.py && echo yes > '{d}/base-has-check.txt'
if (echo x > head/x) 2>/dev/null; then echo wrote; else echo refused; fi > '{d}/write-new.txt'
if (echo x >> head/README.md) 2>/dev/null; then echo wrote; else echo refused; fi > '{d}/write-existing.txt'
if (rm -f base/README.md) 2>/dev/null && test ! -e base/README.md; then echo removed; else echo refused; fi > '{d}/remove.txt'
stat -c '%a %n' head head/README.md head/app head/app/main.rs base base/app > '{d}/modes.txt'"
    );
    let lint = fx.reviewer("lint", &body, &result(&fx.head, vec![]));
    fx.user(&commands(30, &[("lint", argv(&lint))]));
    let run = fx.run("s", &[]);
    run.ok();
    assert_eq!(
        reviewer(&fx.round_json("s", "code-1"), "lint")["status"],
        "completed",
        "{run}"
    );

    let ls = std::fs::read_to_string(fx.tmp("ls.txt")).unwrap();
    for entry in ["base", "head", "packet.md", "schema.json", "lint"] {
        assert!(
            ls.lines().any(|l| l == entry),
            "the workspace lacks {entry}: {ls}"
        );
    }
    let pwd = std::fs::read_to_string(fx.tmp("pwd.txt")).unwrap();
    assert!(
        pwd.trim_end().ends_with(".git/spar/workspaces/s/code-1"),
        "{pwd}"
    );
    assert_eq!(
        std::fs::read_to_string(fx.tmp("head-main.txt")).unwrap(),
        "fn main() {\n    println!(\"hello\");\n}\n"
    );
    assert_eq!(
        std::fs::read_to_string(fx.tmp("base-main.txt")).unwrap(),
        "fn main() {}\n"
    );
    assert!(
        !fx.tmp("base-has-check.txt").exists(),
        "base/ is the base commit"
    );

    let modes = std::fs::read_to_string(fx.tmp("modes.txt")).unwrap();
    for line in modes.lines() {
        let (mode, name) = line.split_once(' ').unwrap();
        let mode = u32::from_str_radix(mode, 8).unwrap();
        assert_eq!(
            mode & 0o222,
            0,
            "{name} in the copies is writable (mode {mode:o}); the copies must be read-only:\n{modes}"
        );
    }
    if !is_root() {
        for (file, what) in [
            ("write-new.txt", "creating head/x"),
            ("write-existing.txt", "appending to head/README.md"),
            ("remove.txt", "removing base/README.md"),
        ] {
            assert_eq!(
                std::fs::read_to_string(fx.tmp(file)).unwrap().trim(),
                "refused",
                "{what} succeeded; the copies must be read-only"
            );
        }
    }
}

/// The reviewers of a round run in parallel: two that sleep 2 s each overlap and the round takes
/// well under 4 s.
#[test]
fn reviewers_run_in_parallel() {
    let fx = Fixture::new();
    let d = fx.dir.path().display().to_string();
    let mut list = Vec::new();
    for name in ["one", "two"] {
        let s = fx.reviewer(
            name,
            &format!("date +%s.%N > '{d}/{name}.start'\nsleep 2\ndate +%s.%N > '{d}/{name}.end'"),
            &result(&fx.head, vec![]),
        );
        list.push((name, argv(&s)));
    }
    fx.user(&commands(30, &list));
    let started = Instant::now();
    let run = fx.run("s", &[]);
    let took = started.elapsed();
    run.ok();
    let round = fx.round_json("s", "code-1");
    for name in ["one", "two"] {
        assert_eq!(reviewer(&round, name)["status"], "completed", "{run}");
    }
    let t = |f: &str| -> f64 {
        std::fs::read_to_string(fx.tmp(f))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let (s1, e1, s2, e2) = (t("one.start"), t("one.end"), t("two.start"), t("two.end"));
    assert!(
        s1 < e2 && s2 < e1,
        "the two reviewers did not overlap: one {s1}..{e1}, two {s2}..{e2}"
    );
    assert!(
        took < Duration::from_millis(3900),
        "two 2 s reviewers took {took:?}"
    );
}

/// A reviewer past its timeout is killed with its whole process group (a grandchild too) and
/// recorded failed with the timeout as the reason; the other reviewer's result is kept.
#[test]
fn timeout_kills_the_process_group() {
    let fx = Fixture::new();
    let pidfile = fx.tmp_str("grandchild.pid");
    let slow = fx.script(
        "slow.sh",
        &format!("sleep 60 &\necho $! > '{pidfile}'\nwait"),
    );
    let quick = fx.reviewer(
        "quick",
        "",
        &result(&fx.head, vec![finding("Q1", "note", "app/main.rs")]),
    );
    fx.user(&format!(
        "{}\n[[reviewers]]\nname = \"slow\"\npreset = \"command\"\nargv = [{}]\ntimeout_seconds = 1\n",
        commands(60, &[("quick", argv(&quick))]),
        q(&slow)
    ));
    let started = Instant::now();
    let run = fx.run("s", &[]);
    let took = started.elapsed();
    run.ok();
    assert!(
        took < Duration::from_secs(20),
        "the 1 s timeout took {took:?}"
    );
    let round = fx.round_json("s", "code-1");
    let slow_rec = reviewer(&round, "slow");
    assert_eq!(slow_rec["status"], "failed", "{slow_rec:#}");
    assert_eq!(slow_rec["timeout_seconds"], 1, "{slow_rec:#}");
    assert!(
        slow_rec["reason"].as_str().unwrap().contains("timed out"),
        "{slow_rec:#}"
    );
    assert_eq!(reviewer(&round, "quick")["status"], "completed");
    assert_eq!(reviewer(&round, "quick")["timeout_seconds"], 60);
    let findings = fx.findings("s", "code-1");
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["id"], "quick-F1");

    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while !process_gone(pid) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let gone = process_gone(pid);
    if !gone {
        // SAFETY: kill with a valid pid; cleans up after the failed assertion.
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
        }
    }
    assert!(
        gone,
        "the grandchild {pid} outlived the timeout (G19: the process group is killed)"
    );
}

/// Every reviewer result out of form is invalid_output with the key in the reason, a
/// non-zero exit and could_not_review are failed, and the rest of the round is kept.
#[test]
fn out_of_form_results_do_not_spoil_the_round() {
    let fx = Fixture::new();
    let head = fx.head.clone();
    let good = fx.reviewer(
        "good",
        "",
        // G2: a 7-character prefix of the head is the head.
        &result(
            &head[..7],
            vec![finding("G1", "hardening", "head/checks/t.py:1")],
        ),
    );
    let garbage = fx.reviewer_text("garbage", "", "Looks fine to me!\n");
    let wrong_head = fx.reviewer("wronghead", "", &result(&fx.base, vec![]));
    let short_head = fx.reviewer("shorthead", "", &result(&head[..6], vec![]));
    let unknown_key = fx.reviewer(
        "unknownkey",
        "",
        &result(
            &head,
            vec![with(
                finding("U1", "defect", "app/main.rs:1"),
                &[("severity", "high")],
            )],
        ),
    );
    let mut no_limits = result(&head, vec![]);
    no_limits.as_object_mut().unwrap().remove("limits");
    let no_limits = fx.reviewer("nolimits", "", &no_limits);
    let mut bad_enum = result(&head, vec![]);
    bad_enum["verdict"] = json!("looks_good");
    let bad_enum = fx.reviewer("badverdict", "", &bad_enum);
    let mut missing_angle = result(&head, vec![]);
    missing_angle["angles_checked"]
        .as_array_mut()
        .unwrap()
        .retain(|a| a["angle"] != "security");
    let missing_angle = fx.reviewer("noangle", "", &missing_angle);
    let exit3 = fx.reviewer_text(
        "exit3",
        "echo 'reviewer crashed: boom' >&2",
        &format!("{}\n", result(&head, vec![])),
    );
    let exit3 = {
        // Print a valid result, then exit 3: the exit status decides.
        let body = std::fs::read_to_string(&exit3).unwrap();
        std::fs::write(&exit3, format!("{body}\nexit 3\n")).unwrap();
        exit3
    };
    let mut cnr = result(&head, vec![]);
    cnr["verdict"] = json!("could_not_review");
    cnr["limits"] = json!("the packet was empty");
    let cnr = fx.reviewer("cnr", "", &cnr);
    fx.user(&commands(
        30,
        &[
            ("good", argv(&good)),
            ("garbage", argv(&garbage)),
            ("wronghead", argv(&wrong_head)),
            ("shorthead", argv(&short_head)),
            ("unknownkey", argv(&unknown_key)),
            ("nolimits", argv(&no_limits)),
            ("badverdict", argv(&bad_enum)),
            ("noangle", argv(&missing_angle)),
            ("exit3", argv(&exit3)),
            ("cnr", argv(&cnr)),
        ],
    ));
    let run = fx.run("s", &[]);
    run.ok();
    let round = fx.round_json("s", "code-1");
    let expect = |name: &str, status: &str, needle: &str| {
        let rec = reviewer(&round, name);
        assert_eq!(rec["status"], status, "{name}: {rec:#}");
        let reason = rec["reason"].as_str().unwrap();
        assert!(
            reason.contains(needle),
            "{name}: the reason {reason:?} does not name {needle:?}"
        );
    };
    expect("good", "completed", "");
    expect("garbage", "invalid_output", "");
    expect("wronghead", "invalid_output", "reviewed_head");
    expect("shorthead", "invalid_output", "reviewed_head");
    expect("unknownkey", "invalid_output", "severity");
    expect("nolimits", "invalid_output", "limits");
    expect("badverdict", "invalid_output", "verdict");
    expect("noangle", "invalid_output", "security");
    expect("exit3", "failed", "3");
    expect("exit3", "failed", "boom");
    expect("cnr", "failed", "could_not_review");
    assert!(
        !reviewer(&round, "garbage")["reason"]
            .as_str()
            .unwrap()
            .is_empty(),
        "an invalid_output has a reason"
    );

    // Only the good reviewer's finding is in the round; it is classified as usual.
    let findings = fx.findings("s", "code-1");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["id"], "good-F1");
    assert_eq!(findings[0]["in_check_paths"], true);
    assert_eq!(findings[0]["class"], "hardening");
    let ledger = fx.ledger("s", "code-1");
    assert_eq!(ledger.len(), 1, "{ledger:?}");
    assert_eq!(ledger[0]["finding"], "good-F1");

    // The raw output is kept, and the summary shows every reviewer.
    let tree = fx.tree("s");
    assert!(
        tree.iter().any(|p| p.starts_with("rounds/code-1/garbage/")),
        "the invalid reviewer's raw output is kept: {tree:?}"
    );
    let summary = fx.round_file("s", "code-1", "summary.md");
    for name in ["good", "garbage", "wronghead", "exit3", "cnr"] {
        assert!(summary.contains(name), "{summary}");
    }
    assert!(summary.contains("invalid_output"), "{summary}");
}

/// A dry run prepares and records the round without starting any reviewer.
#[test]
fn dry_run_starts_no_reviewer() {
    let fx = Fixture::new();
    let marker = fx.tmp_str("marker");
    let lint = fx.reviewer(
        "lint",
        &format!("touch '{marker}'"),
        &result(&fx.head, vec![finding("L1", "defect", "app/main.rs:1")]),
    );
    fx.user(&commands(30, &[("lint", argv(&lint))]));
    let run = fx.run("s", &["--dry-run"]);
    run.ok().stdout_has("dry run");
    assert!(
        !Path::new(&marker).exists(),
        "a dry run started the reviewer:\n{run}"
    );
    let round = fx.round_json("s", "code-1");
    assert_eq!(round["dry_run"], true);
    let rec = reviewer(&round, "lint");
    assert_ne!(rec["status"], "completed", "{rec:#}");
    assert!(rec["attempts"].as_array().unwrap().is_empty(), "{rec:#}");
    assert!(fx.findings("s", "code-1").is_empty());
    let tree = fx.tree("s");
    for f in ["round.json", "packet.md", "schema.json", "summary.md"] {
        assert!(
            tree.contains(&format!("rounds/code-1/{f}")),
            "{f} missing from {tree:?}"
        );
    }
    assert!(!fx.workspace("s", "code-1").exists());
    // A real run after it is the next round of the stage.
    fx.run("s", &[]).ok();
    assert!(Path::new(&marker).exists());
    assert_eq!(fx.round_json("s", "code-2")["dry_run"], false);
}

/// Round names: `<stage>-<n>` counted per stage; the default series is the current branch
/// (`/` replaced by `-`), which `git spar show` without an argument shows.
#[test]
fn rounds_are_named_per_stage_and_series_defaults_to_the_branch() {
    let fx = Fixture::new();
    let lint = fx.reviewer("lint", "", &result(&fx.head, vec![]));
    fx.user(&commands(30, &[("lint", argv(&lint))]));
    fx.run("s", &[]).ok().stdout_has("code-1");
    let second = fx.run("s", &["--json"]);
    second.ok();
    let printed = second.json();
    assert_eq!(printed["schema"], "review-round/v1");
    assert_eq!(printed["round"], "code-2");
    assert_eq!(printed, fx.round_json("s", "code-2"));
    fx.run("s", &["--stage", "plan"]).ok().stdout_has("plan-1");
    fx.run("s", &["--stage", "plan-delta"])
        .ok()
        .stdout_has("plan-delta-1");
    fx.run("s", &["--stage", "code"]).ok().stdout_has("code-3");
    assert_eq!(fx.round_json("s", "plan-1")["stage"], "plan");
    assert_eq!(fx.round_json("s", "plan-delta-1")["stage"], "plan-delta");
    let list = fx.spar(&["list", "--json"]).json();
    assert_eq!(
        list["series"][0]["rounds"],
        json!(["code-1", "code-2", "plan-1", "plan-delta-1", "code-3"])
    );

    // --stage out of form: a usage error, nothing written (G31).
    let bad = fx.run("t", &["--stage", "review"]);
    bad.code(64).stderr_has("review");
    assert!(!fx.series_exists("t"));

    // Default series: the branch, with / replaced by -.
    fx.repo.git(&["checkout", "-q", "-b", "feature/x"]);
    let run = fx.spar(&["run", "--base", &fx.base]);
    run.ok().stdout_has("feature-x");
    assert!(fx.series_exists("feature-x"));
    let show = fx.spar(&["show", "--json"]);
    show.ok();
    assert_eq!(show.json()["round"]["series"], "feature-x");

    // An explicit --head.
    fx.spar(&[
        "run", "--base", &fx.base, "--head", "HEAD~0", "--series", "h",
    ])
    .ok();
    assert_eq!(fx.round_json("h", "code-1")["head"], fx.head.as_str());
}

/// G28 for `run --out`: an existing folder and an unignored folder inside the repository are
/// refused with nothing written; an ignored folder and a folder outside are accepted and hold
/// the round's files.
#[test]
fn out_dir_rules() {
    let fx = Fixture::new();
    let lint = fx.reviewer(
        "lint",
        "",
        &result(&fx.head, vec![finding("L1", "note", "app/main.rs:1")]),
    );
    fx.user(&commands(30, &[("lint", argv(&lint))]));

    let exists = fx.tmp_str("exists");
    std::fs::create_dir(&exists).unwrap();
    let run = fx.run("s", &["--out", &exists]);
    run.code(65).stderr_has("exists");
    fx.assert_nothing_written("s", &run);

    let run = fx.run("s", &["--out", "inside"]);
    run.code(65).stderr_has("inside");
    fx.assert_nothing_written("s", &run);
    assert!(!fx.repo.path().join("inside").exists());

    // Inside the repository, under a tracked folder, not ignored.
    let run = fx.run("s", &["--out", "app/review"]);
    run.code(65).stderr_has("app/review");
    fx.assert_nothing_written("s", &run);

    // Ignored inside the repository: accepted.
    fx.repo.write(".gitignore", "ignored/\n");
    fx.repo.commit_all("ignore");
    let head = fx.repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let lint = fx.reviewer("lint", "", &result(&head, vec![]));
    fx.user(&commands(30, &[("lint", argv(&lint))]));
    let run = fx.run("s", &["--out", "ignored/ws"]);
    run.ok();
    let out = fx.repo.path().join("ignored/ws");
    for f in [
        "round.json",
        "packet.md",
        "schema.json",
        "findings.json",
        "ledger.jsonl",
        "summary.md",
        "head/app/main.rs",
        "base/app/main.rs",
    ] {
        assert!(out.join(f).exists(), "--out lacks {f}:\n{run}");
    }
    let exported: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("round.json")).unwrap()).unwrap();
    assert_eq!(exported, fx.round_json("s", "code-1"));
    assert_eq!(
        fx.repo.git(&["status", "--porcelain"]),
        "",
        "an ignored --out leaves the status clean"
    );

    // A nested repository in the ignored folder decides too: refused until it ignores the path.
    fx.repo.git(&["init", "-q", "ignored/nested"]);
    let run = fx.run("n", &["--out", "ignored/nested/ws"]);
    run.code(65).stderr_has("ignored/nested");
    fx.assert_series_absent("n", &run);
    fx.repo.write("ignored/nested/.gitignore", "ws\n");
    fx.run("n", &["--out", "ignored/nested/ws"]).ok();
    assert!(fx.repo.path().join("ignored/nested/ws/round.json").exists());

    // An ignored path with tracked files below it is refused.
    fx.repo.write("gone/file.txt", "tracked\n");
    fx.repo.commit_all("gone");
    std::fs::remove_dir_all(fx.repo.path().join("gone")).unwrap();
    fx.repo.write(".gitignore", "ignored/\ngone/\n");
    let run = fx.run("g", &["--out", "gone"]);
    run.code(65).stderr_has("gone");
    fx.assert_series_absent("g", &run);
    assert!(!fx.repo.path().join("gone").exists());

    // Outside the repository: accepted.
    let outside = fx.tmp_str("outside/ws");
    fx.run("s", &["--out", &outside]).ok();
    assert!(Path::new(&outside).join("round.json").exists());
    assert!(Path::new(&outside).join("summary.md").exists());
    assert_eq!(fx.round_json("s", "code-2")["round"], "code-2");
}

// ---------------------------------------------------------------------------------------------
// git spar record
// ---------------------------------------------------------------------------------------------

/// A native reviewer is pending with prompt.md in the kept workspace; `git spar record --result`
/// then records it with the same checks and classification as a run.
#[test]
fn record_native_reviewer_result() {
    let fx = Fixture::new();
    let lint = fx.reviewer(
        "lint",
        "",
        &result(&fx.head, vec![finding("L1", "note", "app/main.rs:1")]),
    );
    fx.user(&format!(
        "{}\n[[reviewers]]\nname = \"host\"\npreset = \"native\"\n",
        commands(30, &[("lint", argv(&lint))])
    ));
    let run = fx.run("s", &[]);
    run.ok().stdout_has("workspace kept");
    let round = fx.round_json("s", "code-1");
    let host = reviewer(&round, "host");
    assert_eq!(host["status"], "pending", "{host:#}");
    assert_eq!(host["preset"], "native");
    let ws = fx.workspace("s", "code-1");
    let prompt = std::fs::read_to_string(ws.join("host/prompt.md"))
        .unwrap_or_else(|e| panic!("no host/prompt.md in the kept workspace ({e}):\n{run}"));
    assert!(prompt.contains(&fx.head), "{prompt}");
    assert!(ws.join("head/app/main.rs").exists());
    assert!(ws.join("packet.md").exists());

    // Refusals first: nothing changes.
    let tip = fx.series_tip("s");
    let host_result = fx.tmp_str("host-result.json");
    std::fs::write(
        &host_result,
        serde_json::to_string(&result(
            &fx.head,
            vec![
                finding("H1", "defect", "head/checks/t.py:2"),
                with(
                    finding("H2", "note", "app/main.rs:2"),
                    &[("introduced_by_change", "yes"), ("regression", "yes")],
                ),
            ],
        ))
        .unwrap(),
    )
    .unwrap();
    let r = fx.spar(&["record", "s", "code-1", "nobody", "--result", &host_result]);
    r.code(65).stderr_has("nobody");
    // Names compare exactly (G20).
    let r = fx.spar(&["record", "s", "code-1", "Host", "--result", &host_result]);
    r.code(65).stderr_has("Host");
    let r = fx.spar(&["record", "s", "code-9", "host", "--result", &host_result]);
    r.code(65).stderr_has("code-9");
    let r = fx.spar(&[
        "record",
        "nosuch",
        "code-1",
        "host",
        "--result",
        &host_result,
    ]);
    r.code(65);
    assert!(!fx.series_exists("nosuch"));
    let r = fx.spar(&[
        "record",
        "s",
        "code-1",
        "host",
        "--result",
        &fx.tmp_str("missing.json"),
    ]);
    r.code(65).stderr_has("missing.json");
    assert_eq!(fx.series_tip("s"), tip, "a refused record wrote something");

    // The result.
    let r = fx.spar(&["record", "s", "code-1", "host", "--result", &host_result]);
    r.ok().stdout_has("completed");
    let round = fx.round_json("s", "code-1");
    assert_eq!(reviewer(&round, "host")["status"], "completed");
    assert_eq!(reviewer(&round, "lint")["status"], "completed");
    let findings = fx.findings("s", "code-1");
    let ids: Vec<&str> = findings.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["lint-F1", "host-F1", "host-F2"]);
    let h1 = by_id(&findings, "host-F1");
    assert_eq!(h1["path"], "checks/t.py");
    assert_eq!(h1["in_check_paths"], true);
    assert_eq!(h1["class"], "hardening");
    assert_eq!(h1["auto_deferred"], true);
    assert_eq!(by_id(&findings, "host-F2")["class"], "defect");
    let ledger = fx.ledger("s", "code-1");
    assert_eq!(ledger.len(), 1, "{ledger:?}");
    assert_eq!(ledger[0]["finding"], "host-F1");
    let note = fx.repo.git(&["notes", "--ref=spar", "show", "HEAD"]);
    assert!(note.contains("host-F1"), "{note}");

    // A completed result is final: recording over it (here lint's, from the run) is refused
    // and writes nothing, whatever the new result says.
    let tip = fx.series_tip("s");
    let clean = fx.tmp_str("clean-result.json");
    std::fs::write(
        &clean,
        serde_json::to_string(&result(&fx.head, vec![])).unwrap(),
    )
    .unwrap();
    for who in ["lint", "host"] {
        let r = fx.spar(&["record", "s", "code-1", who, "--result", &clean]);
        r.code(65).stderr_has("already completed");
    }
    assert_eq!(fx.series_tip("s"), tip, "a refused record wrote something");
    assert_eq!(fx.findings("s", "code-1").len(), 3);
}

/// A reviewer whose result was out of form did not complete: its result is invalid_output,
/// naming the key, its findings are not used, and a later record may take its place.
#[test]
fn record_over_a_reviewer_that_did_not_complete() {
    let fx = Fixture::new();
    fx.user("[[reviewers]]\nname = \"host\"\npreset = \"native\"\n");
    fx.run("s", &[]).ok();
    let bad = fx.tmp_str("bad-result.json");
    std::fs::write(
        &bad,
        serde_json::to_string(&result(
            &fx.head,
            vec![with(
                finding("B1", "note", "app/main.rs"),
                &[("extra", "x")],
            )],
        ))
        .unwrap(),
    )
    .unwrap();
    let r = fx.spar(&["record", "s", "code-1", "host", "--result", &bad]);
    r.ok();
    let rec = reviewer(&fx.round_json("s", "code-1"), "host").clone();
    assert_eq!(rec["status"], "invalid_output", "{rec:#}");
    assert!(rec["reason"].as_str().unwrap().contains("extra"), "{rec:#}");
    assert!(
        fx.findings("s", "code-1").is_empty(),
        "an invalid result's findings are not used"
    );
    let good = fx.tmp_str("good-result.json");
    std::fs::write(
        &good,
        serde_json::to_string(&result(
            &fx.head,
            vec![finding("G1", "note", "app/main.rs:1")],
        ))
        .unwrap(),
    )
    .unwrap();
    fx.spar(&["record", "s", "code-1", "host", "--result", &good])
        .ok()
        .stdout_has("completed");
    assert_eq!(
        reviewer(&fx.round_json("s", "code-1"), "host")["status"],
        "completed"
    );
    fx.spar(&["record", "s", "code-1", "host", "--result", &bad])
        .code(65)
        .stderr_has("already completed");
}

/// "kept while a reviewer is pending (native) and otherwise removed once the round is
/// recorded": once `record` leaves no reviewer pending, the workspace goes.
#[test]
fn record_removes_the_workspace_once_nothing_is_pending() {
    let fx = Fixture::new();
    fx.user("[[reviewers]]\nname = \"host\"\npreset = \"native\"\n");
    fx.run("s", &[]).ok();
    let ws = fx.workspace("s", "code-1");
    assert!(ws.join("host/prompt.md").exists());
    let res = fx.tmp_str("r.json");
    std::fs::write(&res, result(&fx.head, vec![]).to_string()).unwrap();
    fx.spar(&["record", "s", "code-1", "host", "--result", &res])
        .ok();
    assert_eq!(
        reviewer(&fx.round_json("s", "code-1"), "host")["status"],
        "completed"
    );
    assert!(
        !ws.exists(),
        "the workspace {} is still there with no reviewer pending",
        ws.display()
    );
}

// ---------------------------------------------------------------------------------------------
// Executables (G14)
// ---------------------------------------------------------------------------------------------

/// argv[0]: a missing path or a bare name not on PATH is unavailable; a file without execute
/// permission and a folder are failed; the other reviewers run.
#[test]
fn missing_executables_are_unavailable_or_failed() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    let good = fx.reviewer("good", "", &result(&fx.head, vec![]));
    let noexec = fx.script("noexec.sh", "echo never");
    std::fs::set_permissions(&noexec, std::fs::Permissions::from_mode(0o644)).unwrap();
    let folder = fx.tmp_str("folder");
    std::fs::create_dir(&folder).unwrap();
    let presets = format!(
        "\n[[reviewers]]\nname = \"cl\"\npreset = \"claude\"\nbinary = \"/nonexistent/claude\"\n\n[[reviewers]]\nname = \"cx\"\npreset = \"codex\"\nbinary = {}\n",
        q(&noexec)
    );
    fx.user(&format!(
        "{}{presets}",
        commands(
            30,
            &[
                ("good", argv(&good)),
                ("abs", argv("/nonexistent/x")),
                ("bare", argv("spar-no-such-reviewer-on-path")),
                ("noexec", argv(&noexec)),
                ("folder", argv(&folder)),
            ],
        )
    ));
    let run = fx.run("s", &[]);
    run.ok();
    let round = fx.round_json("s", "code-1");
    let expect = |name: &str, status: &str, needle: &str| {
        let rec = reviewer(&round, name);
        assert_eq!(rec["status"], status, "{name}: {rec:#}");
        assert!(
            rec["reason"].as_str().unwrap().contains(needle),
            "{name}: {rec:#}"
        );
    };
    expect("good", "completed", "");
    expect("abs", "unavailable", "/nonexistent/x");
    expect("bare", "unavailable", "spar-no-such-reviewer-on-path");
    expect("noexec", "failed", "noexec.sh");
    expect("folder", "failed", "folder");
    // G14 for a preset's binary: the same rules.
    expect("cl", "unavailable", "/nonexistent/claude");
    expect("cx", "failed", "noexec.sh");
}

/// A relative argv[0] such as the README's `./tools/review` is looked up and run as the same
/// file: here, relative to the work tree where `git spar` runs.
#[test]
fn relative_argv0_is_checked_and_run_as_the_same_file() {
    let fx = Fixture::new();
    let src = fx.reviewer("rel", "", &result(&fx.head, vec![]));
    std::fs::create_dir_all(fx.repo.path().join("tools")).unwrap();
    let dest = fx.repo.path().join("tools/review.sh");
    std::fs::copy(&src, &dest).unwrap();
    fx.user(&commands(30, &[("rel", argv("./tools/review.sh"))]));
    let run = fx.run("s", &[]);
    run.ok();
    let rec = reviewer(&fx.round_json("s", "code-1"), "rel").clone();
    assert_eq!(
        rec["status"], "completed",
        "./tools/review.sh passed the executable check but was not run:\n{rec:#}"
    );
}

// ---------------------------------------------------------------------------------------------
// Configuration errors (G16–G22): exit 65 with <file>:<line>, nothing started, nothing written
// ---------------------------------------------------------------------------------------------

/// A user file whose one reviewer would leave a marker if started.
fn marker_reviewer(fx: &Fixture) -> String {
    let marker = fx.tmp_str("marker");
    fx.reviewer(
        "marker",
        &format!("touch '{marker}'"),
        &result(&fx.head, vec![]),
    )
}

#[test]
fn user_file_errors_are_configuration_errors() {
    let fx = Fixture::new();
    let m = marker_reviewer(&fx);
    let user = fx.user_file().display().to_string();
    let lint = tables(&[("lint", argv(&m))]);
    let good = format!("timeout_seconds = 30\n{lint}");
    let cases: Vec<(String, String, &str)> = vec![
        (
            format!("timeout_seconds = 30\nbogus = 1\n{lint}"),
            format!("{user}:2"),
            "bogus",
        ),
        (
            format!("{good}colour = \"red\"\n"),
            format!("{user}:7"),
            "colour",
        ),
        (
            "[[reviewers]]\nname = \"lint\"\npreset = \"command\"\n".into(),
            format!("{user}:"),
            "argv",
        ),
        (
            "[[reviewers]]\nname = \"-lint\"\npreset = \"native\"\n".into(),
            format!("{user}:2"),
            "-lint",
        ),
        (
            "[[reviewers]]\nname = \"round.json\"\npreset = \"native\"\n".into(),
            format!("{user}:2"),
            "round.json",
        ),
        (
            "[[reviewers]]\nname = \"Summary.MD.tmp\"\npreset = \"native\"\n".into(),
            format!("{user}:2"),
            "Summary.MD.tmp",
        ),
        (
            format!(
                "[[reviewers]]\nname = \"{}\"\npreset = \"native\"\n",
                "a".repeat(65)
            ),
            format!("{user}:2"),
            "aaaa",
        ),
        (
            "[[reviewers]]\nname = \"Lint\"\npreset = \"native\"\n\n[[reviewers]]\nname = \"lint\"\npreset = \"native\"\n".into(),
            format!("{user}:6"),
            "lint",
        ),
        (
            "[[reviewers]]\nname = \"x\"\npreset = \"gpt\"\n".into(),
            format!("{user}:3"),
            "gpt",
        ),
        (
            format!("[[reviewers]]\nname = \"x\"\npreset = \"native\"\nargv = [{}]\n", q(&m)),
            format!("{user}:4"),
            "argv",
        ),
        (
            format!("timeout_seconds = 0\n{lint}"),
            format!("{user}:1"),
            "timeout_seconds",
        ),
        (
            "timeout_seconds = \"30\"\n".into(),
            format!("{user}:1"),
            "timeout_seconds",
        ),
        (
            format!("[[reviewers]]\nname = \"x\"\npreset = \"command\"\nargv = [{}, \"\"]\n", q(&m)),
            format!("{user}:4"),
            "argv",
        ),
        ("timeout_seconds = \n".into(), format!("{user}:1"), ""),
    ];
    for (i, (toml, at, key)) in cases.iter().enumerate() {
        fx.user(toml);
        let series = format!("c{i}");
        let run = fx.run(&series, &[]);
        run.code(65).stderr_has(at).stderr_has(key);
        fx.assert_nothing_written(&series, &run);
        let config = fx.spar(&["config", "--json"]);
        config.code(65).stderr_has(at);
        assert!(config.stdout.is_empty(), "{config}");
    }
}

#[test]
fn project_file_errors_are_configuration_errors() {
    let fx = Fixture::new();
    let m = marker_reviewer(&fx);
    fx.user(&commands(30, &[("lint", argv(&m))]));
    let project = fx.repo.path().join(".jaekit/spar.toml");
    let cases: Vec<(String, &str, &str)> = vec![
        // A user key anywhere in the project file.
        (format!("{PROJECT}argv = [\"/bin/sh\"]\n"), ":2", "argv"),
        (
            format!("{PROJECT}[caps]\ncode = 3\nargv = [\"x\"]\n"),
            ":4",
            "argv",
        ),
        (
            format!("{PROJECT}[caps.deep]\nbinary = \"x\"\n"),
            ":3",
            "binary",
        ),
        (
            format!("{PROJECT}[[reviewers]]\nname = \"evil\"\npreset = \"command\"\n"),
            ":2",
            "reviewers",
        ),
        (
            format!("{PROJECT}timeout_seconds = 5\n"),
            ":2",
            "timeout_seconds",
        ),
        (format!("{PROJECT}model = \"x\"\n"), ":2", "model"),
        (
            format!("{PROJECT}allowed_models = [\"x\"]\n"),
            ":2",
            "allowed_models",
        ),
        // Unknown keys and values out of form.
        (format!("{PROJECT}colour = 1\n"), ":2", "colour"),
        ("check_paths = [\"/abs/**\"]\n".into(), ":1", "check_paths"),
        ("check_paths = [\"../x\"]\n".into(), ":1", "check_paths"),
        ("check_paths = [\"checks/[\"]\n".into(), ":1", "check_paths"),
        (format!("{PROJECT}angles = []\n"), ":2", "angles"),
        (format!("{PROJECT}angles = [\"style\"]\n"), ":2", "style"),
        (
            format!("{PROJECT}angles = [\"checks\", \"checks\"]\n"),
            ":2",
            "checks",
        ),
        (format!("{PROJECT}[caps]\ncode = -1\n"), ":3", "code"),
        (
            format!("{PROJECT}rules = [\"missing.md\"]\n"),
            ":2",
            "missing.md",
        ),
        (
            format!("{PROJECT}rules = [\"/etc/passwd\"]\n"),
            ":2",
            "/etc/passwd",
        ),
        (format!("{PROJECT}check_paths = [\"x\"]\n"), ":2", ""),
        ("check_paths = [\"checks/**\"\n".into(), ":", ""),
    ];
    for (i, (toml, line, key)) in cases.iter().enumerate() {
        std::fs::write(&project, toml).unwrap();
        let series = format!("p{i}");
        let at = format!("{}{line}", project.display());
        let run = fx.run(&series, &[]);
        run.code(65).stderr_has(&at).stderr_has(key);
        fx.assert_nothing_written(&series, &run);
        fx.spar(&["config"]).code(65).stderr_has(&at);
    }
    // A project folder where the file should be is a configuration error too (G16).
    std::fs::remove_file(&project).unwrap();
    std::fs::create_dir(&project).unwrap();
    let run = fx.run("pdir", &[]);
    run.code(65).stderr_has(".jaekit/spar.toml");
    fx.assert_nothing_written("pdir", &run);
}

// ---------------------------------------------------------------------------------------------
// Command-line inputs (G24–G27): each out-of-form input gives exactly its row's result
// ---------------------------------------------------------------------------------------------

#[test]
fn command_line_refusals_write_nothing() {
    let fx = Fixture::new();
    let m = marker_reviewer(&fx);
    fx.user(&format!(
        "{}\n[[reviewers]]\nname = \"claude\"\npreset = \"claude\"\nmodel = \"opus\"\n",
        commands(30, &[("lint", argv(&m))])
    ));
    let cases: Vec<(Vec<&str>, i32, Vec<&str>)> = vec![
        // G20/G25: --reviewers.
        (vec!["--reviewers", "nosuch"], 65, vec!["\"nosuch\""]),
        (vec!["--reviewers", "lint,nosuch"], 65, vec!["\"nosuch\""]),
        (vec!["--reviewers", "lint,LINT"], 65, vec!["LINT"]),
        (vec!["--reviewers=-x"], 65, vec!["-x"]),
        (vec!["--reviewers", "command"], 65, vec!["command"]),
        (vec!["--reviewers", "round.json"], 65, vec!["round.json"]),
        // G25: --model / --effort.
        (vec!["--model", "lint"], 64, vec!["--model", "\"lint\""]),
        (vec!["--model", "=x"], 64, vec!["--model", "\"=x\""]),
        (vec!["--effort", "lint"], 64, vec!["--effort"]),
        (vec!["--model", "lint=gpt"], 65, vec!["\"lint\"", "\"gpt\""]),
        (
            vec!["--effort", "lint=high"],
            65,
            vec!["\"lint\"", "\"high\""],
        ),
        (
            vec!["--model", "nobody=gpt"],
            65,
            vec!["\"nobody\"", "\"gpt\""],
        ),
        (
            vec!["--model", "claude=sonnet"],
            65,
            vec!["\"claude\"", "\"sonnet\""],
        ),
        (
            vec!["--reviewers", "lint,codex", "--model", "codex=-x"],
            65,
            vec!["\"codex\"", "\"-x\""],
        ),
        (
            vec!["--reviewers", "lint,codex", "--model", "codex=a b"],
            65,
            vec!["\"codex\"", "\"a b\""],
        ),
        (
            vec![
                "--reviewers",
                "lint,codex",
                "--model",
                "codex=a",
                "--model",
                "codex=b",
            ],
            65,
            vec!["\"codex\""],
        ),
        // G24: --check-path.
        (vec!["--check-path", "/abs"], 65, vec!["/abs"]),
        (vec!["--check-path", "../x"], 65, vec!["../x"]),
        (vec!["--check-path", ""], 65, vec!["--check-path"]),
        (vec!["--check-path", "checks/["], 65, vec!["checks/["]),
        (vec!["--check-path", "checks\\"], 65, vec!["checks\\\\"]),
        // G26: documents.
        (vec!["--criteria", "missing.md"], 65, vec!["missing.md"]),
        (vec!["--subject", "nosubject.md"], 65, vec!["nosubject.md"]),
        (vec!["--rules", "norules.md"], 65, vec!["norules.md"]),
        (vec!["--criteria", "app"], 65, vec!["app"]),
        // G27: revisions.
        (vec!["--head", "nosuchrev"], 65, vec!["nosuchrev"]),
        (vec!["--head", "HEAD^{tree}"], 65, vec!["HEAD^{tree}"]),
        // G31: the stage.
        (vec!["--stage", "Code"], 64, vec!["Code"]),
    ];
    for (i, (args, code, needles)) in cases.iter().enumerate() {
        let series = format!("r{i}");
        let run = fx.run(&series, args);
        run.code(*code);
        for n in needles {
            run.stderr_has(n);
        }
        fx.assert_nothing_written(&series, &run);
    }
    let run = fx.spar(&["run", "--base", "nosuchrev", "--series", "rb"]);
    run.code(65).stderr_has("nosuchrev");
    fx.assert_nothing_written("rb", &run);
    // A blob is not a commit.
    let run = fx.spar(&["run", "--base", "HEAD:README.md", "--series", "rc"]);
    run.code(65).stderr_has("HEAD:README.md");
    fx.assert_nothing_written("rc", &run);
}

/// G27: a revision is never read as an option: `--base -x` is the revision "-x", which does not
/// resolve (refused, 65), not an unknown option (usage, 64).
#[test]
fn revision_that_looks_like_an_option_is_read_as_a_revision() {
    let fx = Fixture::new();
    let m = marker_reviewer(&fx);
    fx.user(&commands(30, &[("lint", argv(&m))]));
    for (i, args) in [
        vec!["--base", "-x"],
        vec!["--base", "--dry-run"],
        vec!["--base", "HEAD~1", "--head", "-x"],
    ]
    .iter()
    .enumerate()
    {
        let series = format!("o{i}");
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--series", &series]);
        let run = fx.spar(&all);
        run.code(65).stderr_has(args[args.len() - 1]);
        fx.assert_nothing_written(&series, &run);
    }
}

/// Inputs in form are accepted: --check-path adds to this round's check paths (G24), documents
/// outside the repository are fine (G26), --reviewers trims and skips empty items (G25).
#[test]
fn accepted_command_line_forms() {
    let fx = Fixture::new();
    let lint = fx.reviewer(
        "lint",
        "",
        &result(
            &fx.head,
            vec![
                finding("L1", "defect", "app/main.rs:1"),
                with(
                    finding("L2", "defect", "app/main.rs:2"),
                    &[("link_kind", "criterion"), ("link", "AC-2")],
                ),
                // G7: a location may name the subject document by its name (outside the
                // repository: the file name).
                finding("L3", "note", "PLAN.md:2"),
                // G8: a rule document given with --rules, outside the repository.
                with(
                    finding("L4", "defect", "PLAN.md"),
                    &[("link_kind", "rule"), ("link", "review.md:5")],
                ),
            ],
        ),
    );
    let plan = fx.tmp_str("PLAN.md");
    std::fs::write(&plan, "# Plan\nStep one\n").unwrap();
    let rules = fx.tmp_str("review.md");
    std::fs::write(&rules, "1\n2\n3\n4\n5\n6\n").unwrap();
    let other = fx.reviewer("other", "", &result(&fx.head, vec![]));
    fx.user(&commands(
        30,
        &[("lint", argv(&lint)), ("other", argv(&other))],
    ));
    let criteria = fx.tmp_str("criteria.md");
    std::fs::write(&criteria, "AC-1 works\nAC-2 holds\n").unwrap();
    let run = fx.run(
        "s",
        &[
            "--reviewers",
            " lint ,, ",
            "--check-path",
            "app/**",
            "--criteria",
            &criteria,
            "--subject",
            &plan,
            "--rules",
            &rules,
        ],
    );
    run.ok();
    let round = fx.round_json("s", "code-1");
    let names: Vec<&str> = round["reviewers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["lint"], "--reviewers picks lint only");
    assert_eq!(
        round["config"]["check_paths"],
        json!(["checks/**", "app/**"])
    );
    let findings = fx.findings("s", "code-1");
    let f1 = by_id(&findings, "lint-F1");
    assert_eq!(f1["in_check_paths"], true, "{f1:#}");
    assert_eq!(f1["class"], "hardening", "{f1:#}");
    let f2 = by_id(&findings, "lint-F2");
    assert_eq!(f2["link_kind"], "criterion", "{f2:#}");
    let f3 = by_id(&findings, "lint-F3");
    assert_eq!(f3["path"], "PLAN.md", "{f3:#}");
    assert_eq!(f3["location_unreadable"], false, "{f3:#}");
    let f4 = by_id(&findings, "lint-F4");
    assert_eq!(f4["link_kind"], "rule", "{f4:#}");
    assert_eq!(f4["class"], "defect", "{f4:#}");
    let packet = fx.round_file("s", "code-1", "packet.md");
    assert!(packet.contains("AC-2 holds"), "{packet}");
    assert!(packet.contains("Step one"), "{packet}");
    assert!(packet.contains("app/**"), "{packet}");
    // G25: an empty --reviewers list is one native reviewer, with the file's top-level timeout
    // (G19).
    fx.run("e", &["--reviewers", " , "]).ok();
    let empty = fx.round_json("e", "code-1");
    assert_eq!(empty["reviewers"].as_array().unwrap().len(), 1, "{empty:#}");
    let native = reviewer(&empty, "native");
    assert_eq!(native["status"], "pending");
    assert_eq!(native["timeout_seconds"], 30);
    // The config digest reflects --check-path.
    let plain = fx.spar(&["config", "--json"]).json();
    assert_ne!(round["config"]["digest"], plain["digest"]);
    assert_eq!(empty["config"]["digest"], plain["digest"]);
}

// ---------------------------------------------------------------------------------------------
// git spar config
// ---------------------------------------------------------------------------------------------

#[test]
fn config_json_shows_values_sources_and_files() {
    let fx = Fixture::new();
    let lint = fx.reviewer("lint", "", &result(&fx.head, vec![]));
    fx.user(&commands(45, &[("lint", argv(&lint))]));
    let run = fx.spar(&["config", "--json"]);
    run.ok();
    let c = run.json();
    let user = fx.user_file().display().to_string();
    let project = fx.repo.path().join(".jaekit/spar.toml");
    assert_eq!(c["schema"], "spar-config/v1");
    assert_eq!(c["digest"].as_str().unwrap().len(), 64);
    assert_eq!(c["sources"]["user"]["source"], "SPAR_CONFIG");
    assert_eq!(c["sources"]["user"]["path"], user.as_str());
    assert_eq!(c["sources"]["project"]["present"], true);
    let files = c["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(files[0]["path"], user.as_str());
    assert_eq!(
        files[0]["sha256"],
        sha256_hex(&std::fs::read(fx.user_file()).unwrap()).as_str()
    );
    assert!(files[1]["path"]
        .as_str()
        .unwrap()
        .ends_with(".jaekit/spar.toml"));
    assert_eq!(
        files[1]["sha256"],
        sha256_hex(&std::fs::read(&project).unwrap()).as_str()
    );
    assert_eq!(c["timeout_seconds"]["value"], 45);
    assert_eq!(c["timeout_seconds"]["from"], format!("{user}:1").as_str());
    let list = c["reviewers"]["list"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["name"]["value"], "lint");
    assert_eq!(list[0]["preset"]["value"], "command");
    assert_eq!(list[0]["argv"]["value"], json!([lint]));
    assert_eq!(c["check_paths"][0]["value"], "checks/**");
    assert!(c["check_paths"][0]["from"]
        .as_str()
        .unwrap()
        .ends_with(".jaekit/spar.toml:1"));
    assert_eq!(c["angles"]["from"], "default");
    fx.spar(&["config"]).ok().stdout_has("lint");

    // The digest a run records is the one config shows.
    fx.run("s", &[]).ok();
    assert_eq!(
        fx.round_json("s", "code-1")["config"]["digest"],
        c["digest"]
    );
    // The project file's sha256 is recorded in the round too.
    let recorded = fx.round_json("s", "code-1")["config"]["files"].clone();
    assert!(
        recorded
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["sha256"] == sha256_hex(&std::fs::read(&project).unwrap()).as_str()),
        "{recorded:#}"
    );
}

/// G16: the user sources in order, each absent one skipped with its reason; an empty
/// SPAR_CONFIG is absent; the clean-review file only when no TOML exists; the default list is
/// claude, codex.
#[test]
fn config_sources_in_order() {
    let fx = Fixture::new();
    let xdg_file = fx.tmp("xdg/jaekit/spar.toml");
    std::fs::create_dir_all(xdg_file.parent().unwrap()).unwrap();
    std::fs::write(
        &xdg_file,
        "[[reviewers]]\nname = \"fromxdg\"\npreset = \"native\"\n",
    )
    .unwrap();
    // SPAR_CONFIG empty: skipped; XDG decides.
    let c = fx.spar_env(&["config", "--json"], &[("SPAR_CONFIG", "")]);
    c.ok();
    let c = c.json();
    assert_eq!(
        c["sources"]["user"]["source"],
        "$XDG_CONFIG_HOME/jaekit/spar.toml"
    );
    assert_eq!(c["sources"]["skipped"][0]["source"], "SPAR_CONFIG");
    assert_eq!(c["reviewers"]["list"][0]["name"]["value"], "fromxdg");
    // SPAR_CONFIG naming a missing file: skipped, XDG decides.
    let c = fx.spar_env(
        &["config", "--json"],
        &[("SPAR_CONFIG", &fx.tmp_str("nope.toml"))],
    );
    c.ok();
    assert_eq!(c.json()["reviewers"]["list"][0]["name"]["value"], "fromxdg");
    // SPAR_CONFIG naming a folder: configuration error.
    let c = fx.spar_env(
        &["config", "--json"],
        &[("SPAR_CONFIG", &fx.tmp_str("xdg"))],
    );
    c.code(65).stderr_has("xdg");

    // No TOML: the clean-review file.
    std::fs::remove_file(&xdg_file).unwrap();
    let cr = fx.tmp("xdg/clean-review/config.json");
    std::fs::create_dir_all(cr.parent().unwrap()).unwrap();
    std::fs::write(&cr, "{\"reviewers\": [\" native \", \"\"]}").unwrap();
    let c = fx.spar_env(&["config", "--json"], &[("SPAR_CONFIG", "")]);
    c.ok();
    let c = c.json();
    assert_eq!(
        c["sources"]["user"]["source"],
        "$XDG_CONFIG_HOME/clean-review/config.json"
    );
    let names: Vec<&str> = c["reviewers"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"]["value"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["native"]);
    let run = fx.spar_env(
        &["run", "--base", &fx.base, "--series", "cr"],
        &[("SPAR_CONFIG", "")],
    );
    run.ok();
    assert_eq!(
        reviewer(&fx.round_json("cr", "code-1"), "native")["status"],
        "pending"
    );
    // A clean-review file out of form: configuration error with its line.
    std::fs::write(&cr, "{\n\"reviewers\": [\"gpt\"]\n}").unwrap();
    let run = fx.spar_env(
        &["run", "--base", &fx.base, "--series", "cr2"],
        &[("SPAR_CONFIG", "")],
    );
    run.code(65)
        .stderr_has("clean-review/config.json")
        .stderr_has("gpt");
    fx.assert_series_absent("cr2", &run);

    // Nothing at all: the default list claude, codex.
    std::fs::remove_file(&cr).unwrap();
    let c = fx.spar_env(&["config", "--json"], &[("SPAR_CONFIG", "")]);
    c.ok();
    let c = c.json();
    assert!(c["sources"]["user"].is_null(), "{c:#}");
    let names: Vec<&str> = c["reviewers"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"]["value"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["claude", "codex"]);
    assert!(
        c["sources"]["skipped"].as_array().unwrap().len() >= 4,
        "{c:#}"
    );
}

/// `record --result` uses the same location, link and classification rules as a run: the same
/// result given to a command reviewer and recorded for a native one comes out the same.
#[test]
fn record_classifies_exactly_like_a_run() {
    let fx = Fixture::new();
    fx.repo.write(
        ".jaekit/spar.toml",
        &format!("{PROJECT}rules = [\"AGENTS.md\"]\n"),
    );
    let criteria = fx.tmp_str("criteria.md");
    std::fs::write(&criteria, "AC-1 works\nAC-2 holds\n").unwrap();
    let link = |id: &str, kind: &str, link: &str, proposed: &str, loc: &str| {
        with(
            finding(id, proposed, loc),
            &[("link_kind", kind), ("link", link)],
        )
    };
    let same = result(
        &fx.head,
        vec![
            link("A", "rule", "AGENTS.md:2", "defect", "app/main.rs:1"),
            link("B", "rule", "AGENTS.md:3", "defect", "app/main.rs:1"),
            link("C", "criterion", "AC-2", "defect", "app/main.rs:2"),
            link("D", "criterion", "AC-3", "defect", "app/main.rs:2"),
            link(
                "E",
                "contract",
                "head/app/main.rs:3",
                "defect",
                "app/main.rs",
            ),
            link("F", "contract", "app/main.rs:4", "defect", "app/main.rs"),
            with(
                link("G", "rule", "./AGENTS.md:1-2", "note", "head/checks/t.py:1"),
                &[("check_impact", "contract_violation")],
            ),
            with(
                link("H", "rule", "AGENTS.md:7", "note", "head/checks/t.py:1"),
                &[("check_impact", "contract_violation")],
            ),
            link("I", "none", "", "requirement-question", "checks/"),
            link("J", "none", "", "defect", "head/"),
            link("K", "none", "", "defect", "base/nothing.rs:1"),
            link("L", "rule", "review.md:5", "defect", "PLAN.md:2"),
            link("M", "rule", "review.md:7", "defect", "head/PLAN.md"),
        ],
    );
    let plan = fx.tmp_str("PLAN.md");
    std::fs::write(&plan, "# Plan\nStep one\n").unwrap();
    let rules = fx.tmp_str("review.md");
    std::fs::write(&rules, "1\n2\n3\n4\n5\n6\n").unwrap();
    let cmd = fx.reviewer("cmd", "", &same);
    fx.user(&format!(
        "{}\n[[reviewers]]\nname = \"host\"\npreset = \"native\"\n",
        commands(30, &[("cmd", argv(&cmd))])
    ));
    fx.run(
        "s",
        &[
            "--criteria",
            &criteria,
            "--subject",
            &plan,
            "--rules",
            &rules,
        ],
    )
    .ok();
    let res = fx.tmp_str("same.json");
    std::fs::write(&res, same.to_string()).unwrap();
    fx.spar(&["record", "s", "code-1", "host", "--result", &res])
        .ok();
    let findings = fx.findings("s", "code-1");
    assert_eq!(findings.len(), 26, "{findings:#?}");
    let keys = [
        "path",
        "lines",
        "in_check_paths",
        "location_unreadable",
        "class",
        "class_reason",
        "link_kind",
        "link",
        "claimed_link_kind",
        "claimed_link",
        "auto_deferred",
    ];
    for n in 1..=13 {
        let a = by_id(&findings, &format!("cmd-F{n}"));
        let b = by_id(&findings, &format!("host-F{n}"));
        for k in keys {
            assert_eq!(a[k], b[k], "{k} of finding {n}: run {a:#} vs record {b:#}");
        }
    }
    let class = |n: usize| by_id(&findings, &format!("cmd-F{n}"))["class"].clone();
    let kind = |n: usize| by_id(&findings, &format!("cmd-F{n}"))["link_kind"].clone();
    assert_eq!((kind(1), class(1)), (json!("rule"), json!("defect")));
    assert_eq!((kind(2), class(2)), (json!("none"), json!("note")));
    assert_eq!((kind(3), class(3)), (json!("criterion"), json!("defect")));
    assert_eq!((kind(4), class(4)), (json!("none"), json!("note")));
    assert_eq!((kind(5), class(5)), (json!("contract"), json!("defect")));
    assert_eq!((kind(6), class(6)), (json!("none"), json!("note")));
    assert_eq!(class(7), json!("defect"), "rule 2");
    assert_eq!(class(8), json!("hardening"), "rule 3");
    assert_eq!(class(9), json!("hardening"), "rule 3 before rule 4");
    let root = by_id(&findings, "cmd-F10");
    assert_eq!(root["path"], "");
    assert_eq!(root["in_check_paths"], false);
    assert_eq!(root["location_unreadable"], false);
    let missing = by_id(&findings, "cmd-F11");
    assert_eq!(missing["location_unreadable"], true);
    assert_eq!(missing["class"], "defect");
    let plan_finding = by_id(&findings, "cmd-F12");
    assert_eq!(plan_finding["path"], "PLAN.md", "{plan_finding:#}");
    assert_eq!((kind(12), class(12)), (json!("rule"), json!("defect")));
    assert_eq!((kind(13), class(13)), (json!("none"), json!("note")));
    assert_eq!(by_id(&findings, "cmd-F13")["path"], "PLAN.md");
    let ledger = fx.ledger("s", "code-1");
    let deferred: Vec<&str> = ledger
        .iter()
        .map(|l| l["finding"].as_str().unwrap())
        .collect();
    assert_eq!(deferred, ["cmd-F8", "cmd-F9", "host-F8", "host-F9"]);
}

/// G28: `--out DIR` is always a folder, so a folder pattern (`review-out/`, the usual way to
/// ignore a folder) ignores it.
#[test]
fn out_dir_ignored_by_a_folder_pattern_is_accepted() {
    let fx = Fixture::new();
    fx.repo.write(".gitignore", "review-out/\n");
    fx.repo.commit_all("ignore");
    let head = fx.repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let lint = fx.reviewer("lint", "", &result(&head, vec![]));
    fx.user(&commands(30, &[("lint", argv(&lint))]));
    let run = fx.run("s", &["--out", "review-out"]);
    run.ok();
    assert!(fx.repo.path().join("review-out/round.json").exists());
    assert_eq!(fx.repo.git(&["status", "--porcelain"]), "");
}

/// A machine without a git identity (no user.name/user.email, no GIT_AUTHOR_*): the series
/// commit falls back to spar's own identity, and so must the note, or the run ends in an
/// internal error after the round was already written.
#[test]
fn run_without_a_git_identity_writes_round_and_note() {
    let fx = Fixture::new();
    let lint = fx.reviewer("lint", "", &result(&fx.head, vec![]));
    fx.user(&commands(30, &[("lint", argv(&lint))]));
    let run = fx.spar_with(
        &["run", "--base", &fx.base, "--series", "s"],
        &[],
        &[
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL",
            "EMAIL",
        ],
    );
    run.ok();
    assert!(fx.series_exists("s"));
    let note = fx.repo.git(&["notes", "--ref=spar", "show", "HEAD"]);
    assert!(note.contains("code-1"), "{note}");
}

/// A run in which no reviewer could run (issue 19): exit 4, the exact configuration that makes
/// one run on stderr, the round recorded but never counted against the cap.
#[test]
fn a_run_where_no_reviewer_could_run_exits_4_says_how_to_configure_one_and_is_not_counted() {
    let f = Fixture::new();
    f.repo
        .write(".jaekit/spar.toml", &format!("{PROJECT}[caps]\ncode = 1\n"));
    f.repo.commit_all("cap 1");
    let base = f.repo.git(&["rev-parse", "HEAD~2"]).trim().to_string();
    f.user(
        "[[reviewers]]\npreset = \"claude\"\nbinary = \"/nonexistent/claude\"\n\n\
         [[reviewers]]\npreset = \"codex\"\nbinary = \"/nonexistent/codex\"\n",
    );
    for round in ["code-1", "code-2"] {
        let out = f.spar(&["run", "--base", &base, "--series", "s"]);
        out.code(4)
            .stdout_has(&format!("spar: s {round} recorded"))
            .stderr_has("no reviewer could run, so nothing was reviewed")
            .stderr_has("not counted against the code cap")
            .stderr_has("spar:   claude: ")
            .stderr_has("preset = \"command\"")
            .stderr_has("argv = [\"./review.sh\", \"{prompt}\", \"{workspace}\", \"{schema}\"]")
            .stderr_has(&format!("git spar run --base {base} --reviewers local"))
            .stderr_has("`codex login`")
            .stderr_has(&f.user_file().display().to_string());
    }
    let caps = f.spar(&["cap-report", "s"]);
    caps.ok()
        .stdout_has("- code-1: not counted (no reviewer could run)")
        .stdout_has("- code-2: not counted (no reviewer could run)")
        .stdout_has("counted: 0 · left: 1");
    // With the cap at 1, a real round still runs: the empty ones were not counted.
    let ok = f.reviewer(
        "lint",
        "",
        &result(&f.repo.git(&["rev-parse", "HEAD"]).trim()[..12], vec![]),
    );
    f.user(&commands(60, &[("lint", argv(&ok))]));
    f.spar(&["run", "--base", &base, "--series", "s"])
        .ok()
        .stdout_has("spar: s code-3 recorded");
    // A reviewer that ran and failed is not "could not run": exit 0 and counted.
    let bad = f.script("bad.sh", "exit 3");
    f.user(&commands(60, &[("lint", argv(&bad))]));
    f.spar(&["run", "--base", &base, "--series", "t"]).ok();
}

/// `show` displays each finding's triage in force, and a class that differs from the proposed
/// one says why in plain words, in `run` and in `show` (issue 19).
#[test]
fn show_has_the_triage_in_force_and_why_a_class_differs_from_the_proposal() {
    let f = Fixture::new();
    let mut regress = finding("r1", "note", "head/app/main.rs:2");
    regress["introduced_by_change"] = json!("yes");
    regress["regression"] = json!("yes");
    let res = result(
        &f.head[..12],
        vec![finding("d1", "defect", "head/app/main.rs:1"), regress],
    );
    let lint = f.reviewer("lint", "", &res);
    f.user(&commands(60, &[("lint", argv(&lint))]));
    let run = f.run("s", &[]);
    run.ok()
        .stdout_has("proposed defect, classified note: a defect must link to a rule, contract or criterion that spar can confirm, and it gave no link")
        .stdout_has("proposed note, classified defect: the change introduced it and it is a regression")
        .stdout_lacks("rule 6");
    f.spar(&[
        "triage",
        "s",
        "code-1",
        "lint-F2",
        "rejected",
        "--evidence",
        "main prints on purpose",
    ])
    .ok();
    let show = f.spar(&["show", "s:code-1"]);
    show.ok()
        .stdout_has("| lint-F2 | defect | head/app/main.rs:2 | claim of r1 | rejected |")
        .stdout_has("| lint-F1 | note | head/app/main.rs:1 | claim of d1 | - |")
        .stdout_has("## Classes that differ from the proposal")
        .stdout_has("- lint-F1: proposed defect, classified note: a defect must link")
        .stdout_lacks("rule 6");
    let j = f.spar(&["show", "s:code-1", "--json"]).json();
    assert_eq!(j["triage"]["lint-F2"], "rejected", "{j:#}");
}
