//! Results where people look (issue 22): `--format sarif` of `git spar gate` and `show`, checked
//! against the official SARIF 2.1.0 schema; the `sarif` preset with fake linters and with real
//! ruff; `--format markdown` of both gates; the HTML reports of `git spar report` and
//! `git rails report`, opened in headless Chromium.
//!
//! The schema is `tests/data/sarif/sarif-schema-2.1.0.json`, copied unchanged from
//! oasis-tcs/sarif-spec `sarif-2.1/schema/sarif-schema-2.1.0.json` (commit a560296c).
//!
//! Real tools: ruff (`RAILS_TEST_RUFF`, else `ruff` on PATH) and Chromium
//! (`RAILS_TEST_CHROMIUM`, else `chromium` on PATH). `.ci/run` installs both pinned and sets
//! `RAILS_TEST_REQUIRE_RUFF=1` and `RAILS_TEST_REQUIRE_CHROMIUM=1`, which make a missing one fail
//! instead of skip.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::evidence::{accept, frozen, needs_file};
use crate::harness::Run;
use crate::spar_fixture::{spar_fixture, SparChange};

/// A reviewer claim that tries to run script in a page and to break a markdown table.
const HOSTILE: &str = "<script>document.title='pwned'</script> | `x` <img src=x onerror=alert(1)>";

struct Fx {
    s: SparChange,
}

spar_fixture!(Fx);

impl Fx {
    /// A repository on `feature` with one Python change from `main`.
    fn new() -> Fx {
        let s = SparChange::new(
            &[("app.py", "def f():\n    return 1\n")],
            &[(
                "app.py",
                "import os\n\n\ndef f():\n    x = 1\n    return 1\n",
            )],
            Some("feature"),
            &[],
        );
        Fx { s }
    }

    /// An executable shell script in the test's folder.
    fn script(&self, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.tmp(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn user(&self, toml: &str) {
        std::fs::write(self.tmp("user.toml"), toml).unwrap();
    }

    fn spar(&self, args: &[&str]) -> Run {
        let mut cmd = self.repo.command("git-spar");
        cmd.args(args)
            .env("SPAR_CONFIG", self.tmp("user.toml"))
            .env("XDG_CONFIG_HOME", self.tmp("xdg"));
        Run::of(&mut cmd)
    }

    /// A `command` reviewer `lint` answering with three findings: an unreadable location with a
    /// false pass (defect), a hardening on app.py:5 and a note on app.py:1-2, whose claim is
    /// hostile.
    fn command_reviewer(&self) {
        let angles: Vec<Value> = [
            "correctness",
            "regression",
            "checks",
            "contract",
            "security",
        ]
        .iter()
        .map(|a| json!({"angle": a, "result": "read"}))
        .collect();
        let finding = |id: &str, class: &str, location: &str, claim: &str, impact: &str| {
            json!({
                "id": id, "proposed_class": class, "angle": "correctness", "location": location,
                "claim": claim, "failure_scenario": "a caller sees the wrong value",
                "evidence": "read the diff", "link_kind": "none", "link": "",
                "introduced_by_change": "yes", "regression": "no", "check_impact": impact,
                "confidence": "high",
            })
        };
        let result = json!({
            "reviewed_head": self.head,
            "verdict": "blocking_findings",
            "angles_checked": angles,
            "angles_unchecked": [],
            "findings": [
                finding("a", "defect", "nowhere/gone.py:3", "the check passes falsely", "false_pass"),
                finding("b", "hardening", "app.py:5", "x is never used", "none"),
                finding("c", "note", "app.py:1-2", HOSTILE, "none"),
            ],
            "limits": "",
        });
        std::fs::write(self.tmp("result.json"), result.to_string()).unwrap();
        let lint = self.script(
            "lint",
            &format!("cat '{}'", self.tmp("result.json").display()),
        );
        self.user(&format!(
            "[[reviewers]]\nname = \"lint\"\npreset = \"command\"\nargv = [\"{}\"]\n",
            lint.display()
        ));
    }
}

/// The SARIF 2.1.0 schema (draft-04), with its `format`s asserted.
struct SarifValidator {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

impl SarifValidator {
    fn validate(&self, v: &Value) -> Result<(), String> {
        self.schemas
            .validate(v, self.index)
            .map_err(|e| format!("{e:#}"))
    }

    fn is_valid(&self, v: &Value) -> bool {
        self.validate(v).is_ok()
    }
}

fn sarif_validator() -> SarifValidator {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let url = "file:///sarif-schema-2.1.0.json";
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V4);
    compiler.enable_format_assertions();
    compiler.add_resource(url, schema).unwrap();
    let mut schemas = boon::Schemas::new();
    let index = compiler
        .compile(url, &mut schemas)
        .expect("the SARIF 2.1.0 schema compiles");
    SarifValidator { schemas, index }
}

#[track_caller]
fn assert_valid_sarif(v: &Value) {
    let validator = sarif_validator();
    if let Err(errors) = validator.validate(v) {
        panic!("not SARIF 2.1.0: {errors}\n{v:#}");
    }
    eprintln!(
        "SARIF 2.1.0 schema: accepted ({} run(s), {} result(s))",
        v["runs"].as_array().map_or(0, Vec::len),
        results(v).len()
    );
}

fn results(log: &Value) -> Vec<Value> {
    log["runs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["results"].as_array().unwrap().clone())
        .collect()
}

fn by_id<'a>(results: &'a [Value], id: &str) -> &'a Value {
    results
        .iter()
        .find(|r| r["properties"]["findingId"] == id)
        .unwrap_or_else(|| panic!("no result for {id} in {results:#?}"))
}

// ---------------------------------------------------------------------------------------------
// SARIF out

#[test]
fn a_rounds_sarif_is_accepted_by_the_official_schema() {
    // The validator is real: a log the schema forbids is refused.
    let bad = json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "level": "fatal"}]}]});
    assert!(!sarif_validator().is_valid(&bad));

    let fx = Fx::new();
    fx.command_reviewer();
    fx.spar(&["run", "--base", "main"]).ok();
    fx.spar(&[
        "triage",
        "feature",
        "code-1",
        "lint-F1",
        "rejected",
        "--evidence",
        "the check is fine",
    ])
    .ok();
    let show = fx.spar(&["show", "feature:code-1", "--format", "sarif"]);
    show.ok();
    let log = show.json();
    assert_valid_sarif(&log);
    assert_eq!(log["version"], "2.1.0");
    let runs = log["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "a run per reviewer");
    assert_eq!(runs[0]["tool"]["driver"]["name"], "spar/lint");
    assert_eq!(
        runs[0]["automationDetails"]["id"],
        "spar/feature/lint/code-1"
    );
    let rs = results(&log);
    assert_eq!(rs.len(), 3, "a result per finding");

    let defect = by_id(&rs, "lint-F1");
    assert_eq!(defect["level"], "error");
    assert_eq!(defect["ruleId"], "correctness");
    assert_eq!(defect["properties"]["class"], "defect");
    assert_eq!(defect["properties"]["triage"], "rejected");
    assert!(
        defect.get("locations").is_none(),
        "unreadable → no location: {defect:#}"
    );
    assert_eq!(defect["suppressions"][0]["kind"], "external");
    assert!(defect["suppressions"][0]["justification"]
        .as_str()
        .unwrap()
        .contains("the check is fine"));

    let hardening = by_id(&rs, "lint-F2");
    assert_eq!(hardening["level"], "warning");
    // Hardening is auto-deferred in the ledger: dismissed in code scanning, saying so.
    assert_eq!(hardening["properties"]["triage"], "auto_deferred");
    assert!(hardening["suppressions"][0]["justification"]
        .as_str()
        .unwrap()
        .contains("auto_deferred"));
    let loc = &hardening["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "app.py");
    assert_eq!(loc["region"]["startLine"], 5);

    let note = by_id(&rs, "lint-F3");
    assert_eq!(note["level"], "note");
    assert_eq!(
        note["locations"][0]["physicalLocation"]["region"]["endLine"],
        2
    );
    assert!(
        note.get("suppressions").is_none(),
        "no triage, no suppression: {note:#}"
    );

    // The same findings in the next round keep their fingerprints; the gate over both is one log.
    fx.spar(&["run", "--base", "main"]).ok();
    let gate = fx.spar(&[
        "gate",
        "feature:code-1",
        "feature:code-2",
        "--format",
        "sarif",
    ]);
    gate.code(2);
    let both = gate.json();
    assert_valid_sarif(&both);
    assert_eq!(both["runs"].as_array().unwrap().len(), 2);
    assert_eq!(both["properties"]["gate"]["result"], "blocked");
    let fp = |log: &Value, run: usize, id: &str| {
        let rs = log["runs"][run]["results"].as_array().unwrap().clone();
        by_id(&rs, id)["partialFingerprints"]["sparFinding/v1"].clone()
    };
    for id in ["lint-F1", "lint-F2", "lint-F3"] {
        assert!(fp(&both, 0, id).is_string());
        assert_eq!(fp(&both, 0, id), fp(&both, 1, id), "{id}");
    }
    assert_ne!(fp(&both, 0, "lint-F1"), fp(&both, 0, "lint-F2"));
    // The category (automationDetails.id up to the last /) is the same for both rounds.
    let cat = |run: usize| {
        let id = both["runs"][run]["automationDetails"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        id[..id.rfind('/').unwrap()].to_string()
    };
    assert_eq!(cat(0), cat(1));
}

#[test]
fn formats_are_checked_before_anything_is_read() {
    let fx = Fx::new();
    fx.spar(&["gate", "feature:code-1", "--format", "xml"])
        .code(64)
        .stderr_has("--format \"xml\" is not one of text, json, sarif, markdown");
    fx.spar(&["show", "feature:code-1", "--format", "markdown"])
        .code(64)
        .stderr_has("is not one of text, json, sarif");
    fx.spar(&["gate", "feature:code-1", "--json", "--format", "sarif"])
        .code(64);
    fx.repo
        .rails(&["gate", "S", "--format", "sarif"])
        .code(64)
        .stderr_has("is not one of text, json, markdown");
}

// ---------------------------------------------------------------------------------------------
// Markdown gates

#[test]
fn spar_gate_as_markdown_escapes_reviewer_text() {
    let fx = Fx::new();
    fx.command_reviewer();
    fx.spar(&["run", "--base", "main"]).ok();
    let md = fx.spar(&["gate", "feature:code-1", "--format", "markdown"]);
    md.code(2);
    md.stdout_has("### ⛔ spar gate: **blocked**")
        .stdout_has("| feature:code-1 | lint | completed | blocking\\_findings | 3 |")
        .stdout_has("| code-1:lint-F2 | hardening | auto\\_deferred | app.py:5 |")
        .stdout_has("lint-F1 (defect) is open")
        .stdout_has("\\<script\\>document")
        .stdout_has("\\| \\`x\\` \\<img src=x onerror=alert(1)\\>");
    // No `<` that markdown could read as the start of a tag.
    let bytes = md.stdout.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'<' {
            assert!(
                i > 0 && bytes[i - 1] == b'\\',
                "an unescaped < at {i}:\n{md}"
            );
        }
    }
    // Every table row keeps its five columns whatever the claim holds.
    for line in md.stdout.lines().filter(|l| l.contains("note")) {
        let unescaped = line.replace("\\|", "");
        assert_eq!(unescaped.matches('|').count(), 6, "{line}");
    }
    fx.spar(&[
        "triage",
        "feature",
        "code-1",
        "lint-F1",
        "rejected",
        "--evidence",
        "fine",
    ])
    .ok();
    fx.spar(&["gate", "feature:code-1", "--format", "markdown"])
        .ok()
        .stdout_has("spar gate: **passed**")
        .stdout_has("| rejected |");
}

#[test]
fn rails_gate_as_markdown() {
    let repo = frozen(json!([needs_file("c1", "feature.txt")]));
    repo.commit_all("contract");
    let md = repo.rails(&["gate", "S", "--format", "markdown"]);
    md.code(2)
        .stdout_has("### ⛔ rails gate: **blocked** — S v1")
        .stdout_has("| c1 | pending | command\\_success | 0 | c1 holds |")
        .stdout_has("**Missing steps**");
    accept(&repo, "red", "c1", &[]);
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    accept(&repo, "surface", "c1", &["--note", "PR"]);
    accept(&repo, "cleanup", "c1", &["--note", "torn down"]);
    repo.commit_all("work");
    repo.rails(&["gate", "S", "--format", "markdown"])
        .ok()
        .stdout_has("rails gate: **passed**")
        .stdout_has("| c1 | surfaced |");
}

// ---------------------------------------------------------------------------------------------
// The sarif preset

/// A SARIF log like ruff's: an error with an absolute file:// URI inside the workspace, a warning
/// with a relative URI, and a note whose URI is outside the workspace.
fn linter_sarif(workspace_var: &str) -> String {
    format!(
        r#"{{"version":"2.1.0","runs":[{{"tool":{{"driver":{{"name":"fakelint","version":"1.2.3","rules":[{{"id":"E1","defaultConfiguration":{{"level":"error"}}}}]}}}},"results":[
{{"ruleId":"E1","message":{{"text":"bad thing"}},"locations":[{{"physicalLocation":{{"artifactLocation":{{"uri":"file://{workspace_var}/head/app.py"}},"region":{{"startLine":5,"endLine":5}}}}}}]}},
{{"ruleId":"W2","level":"warning","message":{{"text":"meh"}},"locations":[{{"physicalLocation":{{"artifactLocation":{{"uri":"head/app.py"}},"region":{{"startLine":1}}}}}}]}},
{{"ruleId":"N3","level":"note","message":{{"text":"elsewhere"}},"locations":[{{"physicalLocation":{{"artifactLocation":{{"uri":"file:///etc/passwd"}}}}}}]}}]}}]}}"#
    )
}

fn sarif_user(fx: &Fx, argv: &[String]) {
    let list: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
    fx.user(&format!(
        "[[reviewers]]\nname = \"lint\"\npreset = \"sarif\"\nargv = [{}]\n",
        list.join(", ")
    ));
}

fn round_findings(fx: &Fx, round: &str) -> Vec<Value> {
    serde_json::from_str(&fx.repo.git(&[
        "show",
        &format!("refs/spar/series/feature:rounds/{round}/findings.json"),
    ]))
    .unwrap()
}

fn reviewer(fx: &Fx, round: &str) -> Value {
    let r: Value = serde_json::from_str(&fx.repo.git(&[
        "show",
        &format!("refs/spar/series/feature:rounds/{round}/round.json"),
    ]))
    .unwrap();
    r["reviewers"][0].clone()
}

#[test]
fn a_sarif_linter_that_exits_1_with_findings_has_completed() {
    let fx = Fx::new();
    let body = linter_sarif("$1");
    let lint = fx.script("fakelint", &format!("cat <<EOF\n{body}\nEOF\nexit 1"));
    sarif_user(&fx, &[lint.display().to_string(), "{workspace}".into()]);
    fx.spar(&["run", "--base", "main"]).ok();
    let rec = reviewer(&fx, "code-1");
    assert_eq!(rec["status"], "completed", "{rec:#}");
    assert_eq!(rec["preset"], "sarif");
    assert_eq!(rec["attempts"][0]["exit_code"], 1);
    assert_eq!(
        rec["angles_unchecked"].as_array().unwrap().len(),
        5,
        "{rec:#}"
    );
    let f = round_findings(&fx, "code-1");
    assert_eq!(f.len(), 3, "{f:#?}");
    // The rule's default level error → proposed defect; file:// inside the workspace → head path.
    assert_eq!(f[0]["proposed_class"], "defect");
    assert_eq!(f[0]["location"], "head/app.py:5");
    assert_eq!(f[0]["path"], "app.py");
    assert_eq!(f[0]["claim"], "E1: bad thing");
    assert_eq!(f[0]["angle"], "E1");
    // Outside the check paths, no confirmed link: a note by rule 6.
    assert_eq!(f[0]["class"], "note", "{:#}", f[0]);
    assert!(f[0]["class_reason"].as_str().unwrap().starts_with("rule 6"));
    assert_eq!(f[1]["proposed_class"], "hardening");
    assert_eq!(f[1]["location"], "head/app.py:1");
    // A URI outside the workspace stays as given: an unreadable location.
    assert_eq!(f[2]["proposed_class"], "note");
    assert_eq!(f[2]["location_unreadable"], true, "{:#}", f[2]);
    fx.spar(&["gate", "feature:code-1"]).ok();
}

#[test]
fn a_rule_document_naming_the_linters_rule_makes_its_error_block() {
    let fx = Fx::new();
    let body = linter_sarif("$1");
    let lint = fx.script("fakelint", &format!("cat <<EOF\n{body}\nEOF\nexit 1"));
    sarif_user(&fx, &[lint.display().to_string(), "{workspace}".into()]);
    std::fs::write(
        fx.tmp("lint-policy.md"),
        "# Blocking lint rules\n\n- E1: never\n",
    )
    .unwrap();
    let policy = fx.tmp("lint-policy.md").display().to_string();
    fx.spar(&["run", "--base", "main", "--rules", &policy]).ok();
    let f = round_findings(&fx, "code-1");
    assert_eq!(f[0]["link_kind"], "rule", "{:#}", f[0]);
    assert_eq!(f[0]["link"], "lint-policy.md:3");
    assert_eq!(f[0]["class"], "defect", "{:#}", f[0]);
    // The warning names no rule of the document: no link, its proposed class stays.
    assert_eq!(f[1]["link_kind"], "none");
    fx.spar(&["gate", "feature:code-1"])
        .code(2)
        .stdout_has("lint-F1 (defect) is open: E1: bad thing");
}

#[test]
fn sarif_to_the_sarif_placeholder_and_broken_output() {
    let fx = Fx::new();
    let body = linter_sarif("$1");
    let lint = fx.script(
        "fakelint",
        &format!("cat > \"$2\" <<EOF\n{body}\nEOF\necho 'not json on stdout'\nexit 2"),
    );
    sarif_user(
        &fx,
        &[
            lint.display().to_string(),
            "{workspace}".into(),
            "{sarif}".into(),
        ],
    );
    fx.spar(&["run", "--base", "main"]).ok();
    assert_eq!(reviewer(&fx, "code-1")["status"], "completed");
    assert_eq!(round_findings(&fx, "code-1").len(), 3);

    // A non-zero exit without SARIF failed, with the exit and the last stderr line.
    let crash = fx.script("crash", "echo 'config error: no such rule' >&2\nexit 2");
    sarif_user(&fx, &[crash.display().to_string()]);
    fx.spar(&["run", "--base", "main"]).ok();
    let rec = reviewer(&fx, "code-2");
    assert_eq!(rec["status"], "failed", "{rec:#}");
    let reason = rec["reason"].as_str().unwrap();
    assert!(
        reason.contains("exit") && reason.contains("config error: no such rule"),
        "{reason}"
    );

    // Exit 0 with something else than SARIF 2.1.0 is out of form.
    let old = fx.script("old", "echo '{\"version\":\"2.0.0\",\"runs\":[]}'");
    sarif_user(&fx, &[old.display().to_string()]);
    fx.spar(&["run", "--base", "main"]).ok();
    let rec = reviewer(&fx, "code-3");
    assert_eq!(rec["status"], "invalid_output", "{rec:#}");
    assert!(rec["reason"].as_str().unwrap().contains("2.0.0"), "{rec:#}");

    // {sarif} named but never written: failed, saying so.
    let quiet = fx.script("quiet", "exit 1");
    sarif_user(&fx, &[quiet.display().to_string(), "{sarif}".into()]);
    fx.spar(&["run", "--base", "main"]).ok();
    let rec = reviewer(&fx, "code-4");
    assert_eq!(rec["status"], "failed", "{rec:#}");
    assert!(
        rec["reason"].as_str().unwrap().contains("wrote no SARIF"),
        "{rec:#}"
    );
}

#[test]
fn a_sarif_reviewer_needs_argv() {
    let fx = Fx::new();
    fx.user("[[reviewers]]\nname = \"lint\"\npreset = \"sarif\"\n");
    fx.spar(&["run", "--base", "main"])
        .code(65)
        .stderr_has("preset \"sarif\" needs argv");
}

fn tool(var: &str, name: &str, require: &str) -> Option<PathBuf> {
    let found = std::env::var_os(var).map(PathBuf::from).or_else(|| {
        std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .find(|c| c.is_file())
        })
    });
    if found.is_none() {
        assert!(
            std::env::var_os(require).is_none(),
            "{require} is set but {name} is not installed (set {var})"
        );
        eprintln!("skipped: {name} is not installed (set {var})");
    }
    found
}

#[test]
fn real_ruff_reviews_a_python_change() {
    let Some(ruff) = tool("RAILS_TEST_RUFF", "ruff", "RAILS_TEST_REQUIRE_RUFF") else {
        return;
    };
    let fx = Fx::new();
    sarif_user(
        &fx,
        &[
            ruff.display().to_string(),
            "check".into(),
            "--no-cache".into(),
            "--isolated".into(),
            "--output-format".into(),
            "sarif".into(),
            "head".into(),
        ],
    );
    std::fs::write(fx.tmp("lint-policy.md"), "# Blocking\n\n- F841 blocks\n").unwrap();
    let policy = fx.tmp("lint-policy.md").display().to_string();
    let run = fx.spar(&["run", "--base", "main", "--rules", &policy]);
    run.ok();
    let rec = reviewer(&fx, "code-1");
    assert_eq!(rec["status"], "completed", "{rec:#}\n{run}");
    assert_eq!(
        rec["attempts"][0]["exit_code"], 1,
        "ruff exits 1 when it finds something"
    );
    let f = round_findings(&fx, "code-1");
    let rule = |id: &str| {
        f.iter()
            .find(|x| x["angle"] == id)
            .unwrap_or_else(|| panic!("no {id} in {f:#?}"))
            .clone()
    };
    let unused_import = rule("F401");
    assert_eq!(unused_import["path"], "app.py");
    assert_eq!(unused_import["lines"], json!([1, 1]));
    assert_eq!(unused_import["proposed_class"], "defect");
    assert_eq!(unused_import["class"], "note");
    let unused_var = rule("F841");
    assert_eq!(unused_var["lines"], json!([5, 5]));
    assert_eq!(unused_var["class"], "defect", "{unused_var:#}");
    let gate = fx.spar(&["gate", "feature:code-1", "--format", "sarif"]);
    gate.code(2);
    assert_valid_sarif(&gate.json());
}

// ---------------------------------------------------------------------------------------------
// HTML reports in a real browser

fn chromium() -> Option<PathBuf> {
    tool(
        "RAILS_TEST_CHROMIUM",
        "chromium",
        "RAILS_TEST_REQUIRE_CHROMIUM",
    )
}

/// Runs headless Chromium on `url` with `args` and a fresh profile; its stdout.
fn browse(chromium: &Path, args: &[&str], url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = crate::harness::hermetic_command(chromium, profile.path(), profile.path())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The DOM Chromium built from `file`.
fn dom(chromium: &Path, file: &Path) -> String {
    browse(
        chromium,
        &["--dump-dom"],
        &format!("file://{}", file.display()),
    )
}

/// A screenshot of `url`; its size in bytes.
fn screenshot(chromium: &Path, url: &str, png: &Path) -> u64 {
    let shot = format!("--screenshot={}", png.display());
    browse(
        chromium,
        &[&shot, "--window-size=1280,900", "--hide-scrollbars"],
        url,
    );
    let bytes = std::fs::read(png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    bytes.len() as u64
}

#[test]
fn spar_report_html_shows_findings_and_the_verdict_in_chromium() {
    let fx = Fx::new();
    fx.command_reviewer();
    fx.spar(&["run", "--base", "main"]).ok();
    fx.spar(&[
        "triage",
        "feature",
        "code-1",
        "lint-F2",
        "deferred",
        "--to",
        "issue 9",
        "--user-quote",
        "later",
    ])
    .ok();
    let html = fx.tmp("report.html");
    let out = fx.spar(&[
        "report",
        "feature:code-1",
        "--html",
        &html.display().to_string(),
    ]);
    out.ok().stdout_has("gate blocked");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("<script"), "the page carries no script");
    assert!(
        page.contains("&lt;script&gt;document.title"),
        "the claim is escaped"
    );
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "nothing external"
    );

    // Refusals write nothing.
    fx.spar(&[
        "report",
        "feature:code-1",
        "--html",
        &fx.tmp("").display().to_string(),
    ])
    .code(65)
    .stderr_has("is a folder");
    fx.spar(&[
        "report",
        "feature:code-9",
        "--html",
        &fx.tmp("x.html").display().to_string(),
    ])
    .code(65);
    assert!(!fx.tmp("x.html").exists());
    // An existing file that is not a report is never replaced; an earlier report is.
    fx.spar(&[
        "report",
        "feature:code-1",
        "--html",
        &fx.tmp("user.toml").display().to_string(),
    ])
    .code(65)
    .stderr_has("exists and is not a report written before");
    assert!(std::fs::read_to_string(fx.tmp("user.toml"))
        .unwrap()
        .contains("[[reviewers]]"));
    fx.spar(&[
        "report",
        "feature:code-1",
        "--html",
        &html.display().to_string(),
    ])
    .ok();

    let Some(chromium) = chromium() else { return };
    let d = dom(&chromium, &html);
    assert!(d.contains("data-verdict=\"blocked\""), "{d}");
    assert!(d.contains(">gate blocked</p>"), "{d}");
    assert!(d.contains("lint-F1 (defect) is open"), "{d}");
    for (id, class, triage) in [
        ("lint-F1", "defect", "open"),
        ("lint-F2", "hardening", "deferred"),
        ("lint-F3", "note", "none needed"),
    ] {
        assert!(
            d.contains(&format!(
                "data-id=\"{id}\" data-class=\"{class}\" data-triage=\"{triage}\""
            )),
            "{id} {class} {triage}: {d}"
        );
    }
    // The hostile claim is text in the DOM, not an element, and did not run.
    assert!(
        d.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"),
        "{d}"
    );
    assert!(!d.contains("<script") && !d.contains("<img"), "{d}");
    assert!(
        d.contains("<title>spar report: feature:code-1</title>"),
        "{d}"
    );

    let shot = screenshot(
        &chromium,
        &format!("file://{}", html.display()),
        &fx.tmp("spar.png"),
    );
    let blank = screenshot(&chromium, "about:blank", &fx.tmp("blank.png"));
    assert!(
        shot > blank * 5,
        "the screenshot looks blank: {shot} bytes, a blank page {blank}"
    );
}

#[test]
fn rails_report_html_shows_the_timeline_and_receipts_in_chromium() {
    let repo = frozen(json!([
        needs_file("c1", "feature.txt"),
        needs_file("c2", "second.txt"),
    ]));
    accept(&repo, "red", "c1", &[]);
    repo.write("feature.txt", "done\n");
    repo.git(&["add", "feature.txt"]);
    accept(&repo, "green", "c1", &[]);
    accept(&repo, "surface", "c1", &["--note", "<b>PR</b> #12"]);
    accept(&repo, "cleanup", "c1", &["--note", "torn down"]);
    repo.commit_all("work");
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("sprint.html");
    repo.rails(&["report", "S", "--html", &html.display().to_string()])
        .ok()
        .stdout_has("gate blocked");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("<script") && !page.contains("<b>PR"),
        "{page}"
    );
    assert!(
        page.contains("feature.txt is missing"),
        "the RED output tail: {page}"
    );

    let Some(chromium) = chromium() else { return };
    let d = dom(&chromium, &html);
    assert!(d.contains("data-verdict=\"blocked\""), "{d}");
    assert!(d.contains("data-id=\"c1\" data-status=\"surfaced\""), "{d}");
    assert!(d.contains("data-id=\"c2\" data-status=\"pending\""), "{d}");
    // c1's cycle in order: RED (with the failing output), GREEN, SURFACE, then the receipt.
    let at = |s: &str| d.find(s).unwrap_or_else(|| panic!("{s} not in {d}"));
    let red = at("data-step=\"red\"");
    let green = at("data-step=\"green\"");
    let surface = at("data-step=\"surface\"");
    let receipt = at("data-step=\"cleanup-1\"");
    assert!(red < green && green < surface && surface < receipt, "{d}");
    assert!(d[red..green].contains("feature.txt is missing"), "{d}");
    assert!(
        d[surface..receipt].contains("&lt;b&gt;PR&lt;/b&gt; #12"),
        "{d}"
    );
    assert!(d[receipt..].contains("torn down"), "{d}");
    assert!(
        d.contains("class=\"missing-step\">c2 "),
        "the missing step: {d}"
    );

    let shot = screenshot(
        &chromium,
        &format!("file://{}", html.display()),
        &dir.path().join("r.png"),
    );
    let blank = screenshot(&chromium, "about:blank", &dir.path().join("b.png"));
    assert!(
        shot > blank * 5,
        "the screenshot looks blank: {shot} bytes, a blank page {blank}"
    );
}
