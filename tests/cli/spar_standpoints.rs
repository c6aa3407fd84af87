//! `git spar run --decision/--decision-quote` (G35) and `--standpoint NAME=TEXT` ("관점 인자",
//! "관점 전달", "관점 보고와 기록") end to end through the binary, with command reviewers that
//! are small `#!/bin/sh` scripts, a hermetic `SPAR_CONFIG`, and the test repository's
//! `.jaekit/spar.toml`. Every refusal is checked for its exit code, its message, and for having
//! written nothing and started no reviewer.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::harness::Run;
use crate::spar_fixture::{spar_fixture, SparChange};
use crate::spar_results::ANGLES;

/// The project file: enough cap for the rounds a test runs.
const PROJECT: &str = "check_paths = [\"checks/**\"]\n[caps]\ncode = 9\n";

/// A repository with a two-commit change, and a folder outside it for the user file, the
/// reviewer scripts and what they leave behind.
struct Fixture {
    s: SparChange,
}

spar_fixture!(Fixture);

impl Fixture {
    fn new() -> Fixture {
        let s = SparChange::new(
            &[
                (".jaekit/spar.toml", PROJECT),
                ("app/main.rs", "fn main() {}\n"),
            ],
            &[("app/main.rs", "fn main() {\n    println!(\"hello\");\n}\n")],
            None,
            &["xdg"],
        );
        Fixture { s }
    }

    /// Writes a command reviewer `name` that leaves a marker, copies its `{prompt}` to
    /// `<name>.got`, and prints `result`.
    fn reviewer(&self, name: &str, result: &Value) -> String {
        use std::os::unix::fs::PermissionsExt;
        let json = self.tmp(&format!("{name}.json"));
        std::fs::write(&json, serde_json::to_string_pretty(result).unwrap()).unwrap();
        let path = self.tmp(&format!("{name}.sh"));
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\ntouch '{marker}'\ncp \"$1\" '{got}'\ncat '{json}'\n",
                marker = self.tmp("marker").display(),
                got = self.tmp(&format!("{name}.got")).display(),
                json = json.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    /// The user file with these command reviewers (name, script), each given `{prompt}`.
    fn reviewers(&self, reviewers: &[(&str, &str)]) {
        let mut s = String::from("timeout_seconds = 60\n");
        for (name, script) in reviewers {
            s.push_str(&format!(
                "\n[[reviewers]]\nname = {}\npreset = \"command\"\nargv = [{}, \"{{prompt}}\"]\n",
                json!(name),
                json!(script)
            ));
        }
        std::fs::write(self.tmp("user.toml"), s).unwrap();
    }

    /// Both reviewers `alpha` and `beta` answering `alpha` and `beta`.
    fn two(&self, alpha: &Value, beta: &Value) {
        let a = self.reviewer("alpha", alpha);
        let b = self.reviewer("beta", beta);
        self.reviewers(&[("alpha", &a), ("beta", &b)]);
    }

    /// What reviewer `name` was given through `{prompt}`.
    fn got(&self, name: &str) -> String {
        std::fs::read_to_string(self.tmp(&format!("{name}.got"))).unwrap()
    }

    /// Runs `git-spar` with raw arguments in the hermetic environment.
    fn spar_os(&self, args: &[OsString]) -> Run {
        let mut cmd = self.repo.command("git-spar");
        cmd.args(args)
            .env("SPAR_CONFIG", self.tmp("user.toml"))
            .env("XDG_CONFIG_HOME", self.tmp("xdg"));
        Run::of(&mut cmd)
    }

    /// `git spar run --base <base> --series <series> <extra…>`.
    fn run_os(&self, series: &str, extra: &[OsString]) -> Run {
        let mut args: Vec<OsString> = ["run", "--base", &self.base, "--series", series]
            .iter()
            .map(OsString::from)
            .collect();
        args.extend(extra.iter().cloned());
        self.spar_os(&args)
    }

    fn run(&self, series: &str, extra: &[&str]) -> Run {
        let extra: Vec<OsString> = extra.iter().map(OsString::from).collect();
        self.run_os(series, &extra)
    }

    fn spar(&self, args: &[&str]) -> Run {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        self.spar_os(&args)
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

    /// A refusal: no series ref, no workspace, no note, no reviewer started.
    #[track_caller]
    fn assert_nothing_written(&self, series: &str, run: &Run) {
        assert!(
            !self.series_exists(series),
            "refs/spar/series/{series} exists after a refusal:\n{run}"
        );
        assert!(
            !self
                .repo
                .path()
                .join(".git/spar/workspaces")
                .join(series)
                .exists(),
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

    fn round_file(&self, series: &str, round: &str, file: &str) -> String {
        self.repo.git(&[
            "show",
            &format!("refs/spar/series/{series}:rounds/{round}/{file}"),
        ])
    }

    fn round_json(&self, series: &str, round: &str) -> Value {
        serde_json::from_str(&self.round_file(series, round, "round.json")).unwrap()
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
}

/// A result with every angle checked, no findings, and these extra keys.
fn result(head: &str, extra: &[(&str, Value)]) -> Value {
    let mut v = json!({
        "reviewed_head": head,
        "verdict": "no_blocking_findings",
        "angles_checked": ANGLES.iter().map(|a| json!({"angle": a, "result": "looked"})).collect::<Vec<_>>(),
        "angles_unchecked": [],
        "findings": [],
        "limits": "",
    });
    for (k, val) in extra {
        v[*k] = val.clone();
    }
    v
}

fn report(checked: bool, detail: &str) -> Value {
    json!({"checked": checked, "detail": detail})
}

fn reviewer<'a>(round: &'a Value, name: &str) -> &'a Value {
    round["reviewers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no reviewer {name} in {round:#}"))
}

fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

fn os(s: &str) -> OsString {
    OsString::from(s)
}

fn non_utf8(prefix: &str) -> OsString {
    let mut bytes = prefix.as_bytes().to_vec();
    bytes.extend_from_slice(b"\xff\xfe");
    OsStr::from_bytes(&bytes).to_os_string()
}

// ---------------------------------------------------------------------------------------------
// G35: decisions
// ---------------------------------------------------------------------------------------------

/// Every out-of-form decision pairing is refused (65) naming the decision's number and the
/// option, before any reviewer starts or anything is written.
#[test]
fn decision_refusals_write_nothing() {
    let fx = Fixture::new();
    fx.two(&result(&fx.head, &[]), &result(&fx.head, &[]));
    let cases: Vec<(Vec<OsString>, &str)> = vec![
        (
            vec![os("--decision"), os("keep the cache")],
            "decision 1: --decision has no --decision-quote",
        ),
        (
            vec![os("--decision-quote"), os("yes")],
            "decision 1: --decision-quote comes before any --decision",
        ),
        (
            vec![
                os("--decision"),
                os("a"),
                os("--decision"),
                os("b"),
                os("--decision-quote"),
                os("q"),
            ],
            "decision 1: --decision has no --decision-quote before the next --decision",
        ),
        (
            vec![
                os("--decision"),
                os("a"),
                os("--decision-quote"),
                os("q"),
                os("--decision-quote"),
                os("r"),
            ],
            "decision 2: --decision-quote without a --decision",
        ),
        (
            vec![
                os("--decision"),
                os("a"),
                os("--decision-quote"),
                os("q"),
                os("--decision"),
                os("b"),
            ],
            "decision 2: --decision has no --decision-quote",
        ),
        (
            vec![os("--dry-run"), os("--decision")],
            "decision 1: --decision at the end of the command line has no value",
        ),
        (
            vec![
                os("--decision"),
                os("a"),
                os("--decision-quote"),
                os("q"),
                os("--decision"),
                os("b"),
                os("--decision-quote"),
            ],
            "decision 2: --decision-quote at the end of the command line has no value",
        ),
        (
            vec![
                os("--decision"),
                os(" \n\t "),
                os("--decision-quote"),
                os("q"),
            ],
            "decision 1: --decision \" \\n\\t \" is empty",
        ),
        (
            vec![os("--decision"), os("a"), os("--decision-quote"), os("   ")],
            "decision 1: --decision-quote \"   \" is empty",
        ),
        (
            vec![
                os("--decision"),
                non_utf8("bad"),
                os("--decision-quote"),
                os("q"),
            ],
            "decision 1: --decision \"bad\\xff\\xfe\" is not valid UTF-8",
        ),
        (
            vec![
                os("--decision"),
                os("a"),
                os("--decision-quote"),
                non_utf8("q"),
            ],
            "decision 1: --decision-quote \"q\\xff\\xfe\" is not valid UTF-8",
        ),
    ];
    for (args, message) in cases {
        let run = fx.run_os("s", &args);
        run.code(65).stderr_has(message);
        fx.assert_nothing_written("s", &run);
    }
    // Another option without a value at the end stays clap's usage error.
    let run = fx.run(
        "s",
        &["--decision", "a", "--decision-quote", "q", "--stage"],
    );
    run.code(64);
    fx.assert_nothing_written("s", &run);
}

/// Decisions are kept verbatim and in order: multi-line, backticks and fences, a leading `-`,
/// `=`, `:`, leading and trailing spaces — in the packet (so in packet_sha256) and round.json.
#[test]
fn decisions_are_recorded_verbatim_in_order() {
    let fx = Fixture::new();
    fx.two(&result(&fx.head, &[]), &result(&fx.head, &[]));
    let pairs = [
        (
            "  keep `Cache::get` as is:\n```rust\nlet x = 1;\n```\n",
            "-- the user: \"yes, keep it\" ",
        ),
        ("--dry-run", "a=b: c"),
        ("-x", "  spaces around  "),
    ];
    let mut args = Vec::new();
    for (d, q) in pairs {
        args.extend([os("--decision"), os(d), os("--decision-quote"), os(q)]);
    }
    let run = fx.run_os("s", &args);
    run.ok();
    assert!(fx.tmp("marker").exists(), "the reviewers ran:\n{run}");
    let round = fx.round_json("s", "code-1");
    assert_eq!(round["dry_run"], false, "--dry-run was a decision's text");
    assert_eq!(
        round["decisions"],
        json!(pairs
            .iter()
            .map(|(d, q)| json!({"decision": d, "quote": q}))
            .collect::<Vec<_>>())
    );
    let packet = fx.round_file("s", "code-1", "packet.md");
    assert_eq!(round["packet_sha256"], json!(sha256_hex(packet.as_bytes())));
    let section = packet
        .split_once("## Decisions the user made\n")
        .unwrap_or_else(|| panic!("no decisions section:\n{packet}"))
        .1;
    let mut at = 0;
    for (d, q) in pairs {
        let di = section[at..].find(d).expect("decision verbatim") + at;
        let qi = section[di..].find(q).expect("quote verbatim after it") + di;
        at = qi + q.len();
    }
    assert!(section.find("## The change").unwrap() > at);
    // Decisions without standpoints: every reviewer gets the packet itself.
    assert_eq!(fx.got("alpha"), packet);
    // The decisions are part of the input: different words, a different packet_sha256.
    let run = fx.run("s", &["--decision", "-x", "--decision-quote", "no"]);
    run.ok();
    assert_ne!(
        fx.round_json("s", "code-2")["packet_sha256"],
        round["packet_sha256"]
    );
}

// ---------------------------------------------------------------------------------------------
// Standpoint arguments
// ---------------------------------------------------------------------------------------------

/// `--standpoint` out of form: usage errors (64) and refusals (65) showing the name or value,
/// all before any reviewer starts or anything is written.
#[test]
fn standpoint_refusals_write_nothing() {
    let fx = Fixture::new();
    fx.two(&result(&fx.head, &[]), &result(&fx.head, &[]));
    let cases: Vec<(Vec<OsString>, i32, &str)> = vec![
        (
            vec![os("--standpoint"), os("alpha")],
            64,
            "--standpoint \"alpha\": expected NAME=TEXT",
        ),
        (
            vec![os("--standpoint"), os("=the cache")],
            64,
            "the reviewer name before `=` is empty",
        ),
        (
            vec![os("--standpoint"), os("gamma=the cache")],
            65,
            "\"gamma\" is not a reviewer of this run",
        ),
        (
            vec![os("--standpoint"), os("Alpha=the cache")],
            65,
            "\"Alpha\" is not a reviewer of this run",
        ),
        (
            vec![
                os("--standpoint"),
                os("alpha=the cache"),
                os("--standpoint"),
                os("alpha=the lock"),
            ],
            65,
            "--standpoint \"alpha=the lock\": \"alpha\" already has a standpoint",
        ),
        (
            vec![os("--standpoint"), os("alpha= \t ")],
            65,
            "the text for \"alpha\" is empty",
        ),
        (
            vec![os("--standpoint"), non_utf8("alpha=")],
            65,
            "--standpoint \"alpha=\\xff\\xfe\": the text for \"alpha\" is not valid UTF-8",
        ),
        (
            vec![
                os("--reviewers"),
                os("alpha"),
                os("--standpoint"),
                os("alpha"),
            ],
            64,
            "expected NAME=TEXT",
        ),
    ];
    for (args, code, message) in cases {
        let run = fx.run_os("s", &args);
        run.code(code).stderr_has(message);
        fx.assert_nothing_written("s", &run);
    }
}

/// The accepted names: the configured reviewers and those `--reviewers` picked, even one that
/// this run leaves out; the first `=` splits, the rest is the text as given.
#[test]
fn standpoint_names_are_the_configured_and_selected_reviewers() {
    let fx = Fixture::new();
    fx.two(&result(&fx.head, &[]), &result(&fx.head, &[]));
    let run = fx.run(
        "s",
        &[
            "--dry-run",
            "--reviewers",
            "alpha",
            "--standpoint",
            "beta=x = y",
        ],
    );
    run.ok();
    let round = fx.round_json("s", "code-1");
    assert_eq!(
        round["standpoints"],
        json!([{"reviewer": "beta", "text": "x = y"}])
    );
    assert_eq!(round["standpoints_uncovered"], json!(["beta"]));
    assert_eq!(reviewer(&round, "alpha")["standpoint"], Value::Null);
}

// ---------------------------------------------------------------------------------------------
// Delivery and records
// ---------------------------------------------------------------------------------------------

/// A round with standpoints: the packet lists every standpoint and its reviewer; each reviewer
/// gets the packet and its own instruction through `{prompt}`, recorded as `<reviewer>/input.md`;
/// schema.json has standpoint_report; round.json and summary.md show standpoints and reports.
#[test]
fn standpoints_are_delivered_and_recorded() {
    let fx = Fixture::new();
    fx.two(
        &result(
            &fx.head,
            &[("standpoint_report", report(true, "walked every cache read"))],
        ),
        &result(&fx.head, &[]),
    );
    let text = "a stale cache after `reload`:\nline two";
    let run = fx.run("s", &["--standpoint", &format!("alpha={text}")]);
    run.ok();
    let packet = fx.round_file("s", "code-1", "packet.md");
    let section = packet
        .split_once("## Standpoints for this round\n")
        .unwrap_or_else(|| panic!("no standpoints section:\n{packet}"))
        .1;
    assert!(section.contains("### alpha\n"), "{packet}");
    assert!(section.contains(text), "{packet}");
    let round = fx.round_json("s", "code-1");
    assert_eq!(round["packet_sha256"], json!(sha256_hex(packet.as_bytes())));

    let alpha_in = fx.round_file("s", "code-1", "alpha/input.md");
    let beta_in = fx.round_file("s", "code-1", "beta/input.md");
    assert_eq!(alpha_in, fx.got("alpha"));
    assert_eq!(beta_in, fx.got("beta"));
    let alpha_own = alpha_in
        .strip_prefix(packet.as_str())
        .expect("packet first");
    assert!(alpha_own.contains(text), "{alpha_own}");
    assert!(
        alpha_own.contains("Check every angle while attacking that risk"),
        "{alpha_own}"
    );
    let beta_own = beta_in.strip_prefix(packet.as_str()).expect("packet first");
    assert!(beta_own.contains("review the whole change"), "{beta_own}");
    assert!(!beta_own.contains(text), "{beta_own}");

    let schema: Value = serde_json::from_str(&fx.round_file("s", "code-1", "schema.json")).unwrap();
    assert!(schema["properties"].get("standpoint_report").is_some());
    assert!(schema["required"]
        .as_array()
        .unwrap()
        .contains(&json!("standpoint_report")));

    assert_eq!(
        round["standpoints"],
        json!([{"reviewer": "alpha", "text": text}])
    );
    assert_eq!(round["standpoints_uncovered"], json!([]));
    let alpha = reviewer(&round, "alpha");
    assert_eq!(alpha["status"], "completed");
    assert_eq!(alpha["standpoint"], json!(text));
    assert_eq!(
        alpha["standpoint_report"],
        report(true, "walked every cache read")
    );
    let beta = reviewer(&round, "beta");
    assert_eq!(beta["status"], "completed");
    assert!(beta.get("standpoint").is_some_and(Value::is_null), "{beta}");
    assert!(
        beta.get("standpoint_report").is_some_and(Value::is_null),
        "{beta}"
    );

    let summary = fx.round_file("s", "code-1", "summary.md");
    assert!(summary.contains("## Standpoints"), "{summary}");
    assert!(summary.contains("walked every cache read"), "{summary}");
    assert!(
        summary.contains("a stale cache after `reload`: line two"),
        "{summary}"
    );
}

/// A dry run with standpoints records every reviewer's input.md too, and starts none of them;
/// the standpoints are uncovered.
#[test]
fn dry_run_with_standpoints_records_inputs() {
    let fx = Fixture::new();
    fx.two(&result(&fx.head, &[]), &result(&fx.head, &[]));
    let run = fx.run("s", &["--dry-run", "--standpoint", "beta=the lock order"]);
    run.ok();
    assert!(!fx.tmp("marker").exists(), "a dry run started a reviewer");
    let tree = fx.tree("s");
    for name in ["alpha", "beta"] {
        assert!(
            tree.contains(&format!("rounds/code-1/{name}/input.md")),
            "{tree:?}"
        );
    }
    let packet = fx.round_file("s", "code-1", "packet.md");
    let beta_in = fx.round_file("s", "code-1", "beta/input.md");
    assert!(beta_in.starts_with(&packet));
    assert!(beta_in[packet.len()..].contains("the lock order"));
    let round = fx.round_json("s", "code-1");
    assert_eq!(round["standpoints_uncovered"], json!(["beta"]));
}

/// A reviewer with a standpoint must report on it; one without may leave the report out or send
/// null; a well-formed `checked: false` report still completes.
#[test]
fn standpoint_report_rules() {
    // Missing, null and malformed reports are invalid_output naming standpoint_report.
    for bad in [None, Some(Value::Null), Some(json!({"checked": true}))] {
        let fx = Fixture::new();
        let extra: Vec<(&str, Value)> = bad
            .iter()
            .map(|b| ("standpoint_report", b.clone()))
            .collect();
        fx.two(&result(&fx.head, &extra), &result(&fx.head, &[]));
        fx.run("s", &["--standpoint", "alpha=the cache"]).ok();
        let round = fx.round_json("s", "code-1");
        let alpha = reviewer(&round, "alpha");
        assert_eq!(alpha["status"], "invalid_output", "{alpha}");
        assert!(
            alpha["reason"]
                .as_str()
                .unwrap()
                .contains("standpoint_report"),
            "{alpha}"
        );
        assert_eq!(alpha["standpoint_report"], Value::Null);
        assert_eq!(round["standpoints_uncovered"], json!(["alpha"]));
        let summary = fx.round_file("s", "code-1", "summary.md");
        assert!(summary.contains("alpha"), "{summary}");
        assert!(summary.contains("uncovered"), "{summary}");
    }
    // checked false with a detail completes; a reviewer without a standpoint may send null.
    let fx = Fixture::new();
    fx.two(
        &result(
            &fx.head,
            &[(
                "standpoint_report",
                report(false, "no tests reach the cache"),
            )],
        ),
        &result(&fx.head, &[("standpoint_report", Value::Null)]),
    );
    fx.run("s", &["--standpoint", "alpha=the cache"]).ok();
    let round = fx.round_json("s", "code-1");
    assert_eq!(reviewer(&round, "alpha")["status"], "completed");
    assert_eq!(
        reviewer(&round, "alpha")["standpoint_report"],
        report(false, "no tests reach the cache")
    );
    assert_eq!(reviewer(&round, "beta")["status"], "completed");
    assert_eq!(reviewer(&round, "beta")["standpoint_report"], Value::Null);
    assert_eq!(round["standpoints_uncovered"], json!([]));
    // Without standpoints, standpoint_report stays an unknown key.
    fx.two(
        &result(&fx.head, &[("standpoint_report", Value::Null)]),
        &result(&fx.head, &[]),
    );
    fx.run("s", &[]).ok();
    let round = fx.round_json("s", "code-2");
    let alpha = reviewer(&round, "alpha");
    assert_eq!(alpha["status"], "invalid_output");
    assert!(alpha["reason"]
        .as_str()
        .unwrap()
        .contains("unknown key \"standpoint_report\""));
}

/// A native reviewer gets its standpoint instruction after the fixed prompt; `git spar record`
/// holds its result to the same standpoint rules and updates the uncovered standpoints.
#[test]
fn record_holds_native_results_to_the_standpoint() {
    let fx = Fixture::new();
    std::fs::write(
        fx.tmp("user.toml"),
        "[[reviewers]]\nname = \"nat\"\npreset = \"native\"\n",
    )
    .unwrap();
    fx.run("s", &["--standpoint", "nat=the migration order"])
        .ok();
    let prompt = std::fs::read_to_string(
        fx.repo
            .path()
            .join(".git/spar/workspaces/s/code-1/nat/prompt.md"),
    )
    .unwrap();
    let packet = fx.round_file("s", "code-1", "packet.md");
    assert!(prompt.starts_with(&packet));
    assert!(prompt[packet.len()..].contains("the migration order"));
    assert_eq!(fx.round_file("s", "code-1", "nat/input.md"), prompt);
    assert_eq!(
        fx.round_json("s", "code-1")["standpoints_uncovered"],
        json!(["nat"])
    );

    let file = fx.tmp("nat-result.json");
    std::fs::write(&file, result(&fx.head, &[]).to_string()).unwrap();
    let file = file.display().to_string();
    fx.spar(&["record", "s", "code-1", "nat", "--result", &file])
        .ok();
    let nat = reviewer(&fx.round_json("s", "code-1"), "nat").clone();
    assert_eq!(nat["status"], "invalid_output");
    assert!(nat["reason"]
        .as_str()
        .unwrap()
        .contains("standpoint_report"));

    std::fs::write(
        &file,
        result(
            &fx.head,
            &[("standpoint_report", report(true, "read every migration"))],
        )
        .to_string(),
    )
    .unwrap();
    fx.spar(&["record", "s", "code-1", "nat", "--result", &file])
        .ok();
    let round = fx.round_json("s", "code-1");
    let nat = reviewer(&round, "nat");
    assert_eq!(nat["status"], "completed");
    assert_eq!(nat["standpoint"], "the migration order");
    assert_eq!(
        nat["standpoint_report"],
        report(true, "read every migration")
    );
    assert_eq!(round["standpoints_uncovered"], json!([]));
}

// ---------------------------------------------------------------------------------------------
// The invariant: without standpoints nothing changes
// ---------------------------------------------------------------------------------------------

/// Without standpoints, the reviewer's input is the packet byte for byte, the packet is the
/// standpoint round's packet without its standpoints section (same base, head, series), the
/// schema has no standpoint_report, summary.md never mentions standpoints, and round.json only
/// gains `standpoints: []`. Two identical runs give the same packet_sha256.
#[test]
fn without_standpoints_nothing_changes() {
    let fx = Fixture::new();
    fx.two(&result(&fx.head, &[]), &result(&fx.head, &[]));
    fx.run("s", &[]).ok();
    let plain_alpha = fx.got("alpha");
    let plain_beta = fx.got("beta");
    fx.two(
        &result(&fx.head, &[("standpoint_report", report(true, "done"))]),
        &result(&fx.head, &[]),
    );
    fx.run("s", &["--standpoint", "alpha=the cache"]).ok();
    fx.two(&result(&fx.head, &[]), &result(&fx.head, &[]));
    fx.run("s", &[]).ok();

    let plain = fx.round_file("s", "code-1", "packet.md");
    let with = fx.round_file("s", "code-2", "packet.md");
    let again = fx.round_file("s", "code-3", "packet.md");
    assert_eq!(plain, again);
    assert_eq!(
        fx.round_json("s", "code-1")["packet_sha256"],
        fx.round_json("s", "code-3")["packet_sha256"]
    );
    assert_eq!(plain_alpha, plain);
    assert_eq!(plain_beta, plain);
    assert_eq!(fx.got("alpha"), plain);
    // The standpoint round's packet is the plain one with exactly one section more.
    let (before, rest) = with
        .split_once("\n## Standpoints for this round\n")
        .unwrap();
    let after = &rest[rest.find("\n## The change\n").unwrap()..];
    assert_eq!(format!("{before}{after}"), plain);
    assert!(!plain.contains("tandpoint"), "{plain}");

    let schema = fx.round_file("s", "code-1", "schema.json");
    assert!(!schema.contains("standpoint"), "{schema}");
    assert_eq!(schema, fx.round_file("s", "code-3", "schema.json"));
    let with_schema: Value =
        serde_json::from_str(&fx.round_file("s", "code-2", "schema.json")).unwrap();
    let mut stripped = with_schema.clone();
    stripped["properties"]
        .as_object_mut()
        .unwrap()
        .shift_remove("standpoint_report");
    stripped["required"]
        .as_array_mut()
        .unwrap()
        .retain(|k| k != "standpoint_report");
    assert_eq!(stripped, serde_json::from_str::<Value>(&schema).unwrap());

    let summary = fx.round_file("s", "code-1", "summary.md");
    assert!(!summary.to_lowercase().contains("standpoint"), "{summary}");
    assert_eq!(
        summary.replace("code-1", "code-3"),
        fx.round_file("s", "code-3", "summary.md")
    );

    let raw = fx.round_file("s", "code-1", "round.json");
    let round: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(round["standpoints"], json!([]));
    assert_eq!(round["decisions"], json!([]));
    assert!(round.get("standpoints_uncovered").is_none(), "{raw}");
    for r in round["reviewers"].as_array().unwrap() {
        assert!(r.get("standpoint").is_none(), "{r}");
        assert!(r.get("standpoint_report").is_none(), "{r}");
    }
    assert_eq!(raw.matches("standpoint").count(), 1, "{raw}");
    let tree = fx.tree("s");
    assert!(!tree
        .iter()
        .any(|p| p.starts_with("rounds/code-1/") && p.ends_with("/input.md")));
    assert!(!tree
        .iter()
        .any(|p| p.starts_with("rounds/code-3/") && p.ends_with("/input.md")));
}
