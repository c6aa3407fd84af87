//! The GitHub Action (action.yml) works on a bare runner (issue 40): its `run:` steps run here,
//! in order, as the runner runs them (`bash --noprofile --norc -eo pipefail`, each step's `env:`
//! evaluated, `$GITHUB_PATH` carried to the next step), on a fresh clone with no git identity,
//! no global or system git configuration and an empty HOME. Its `uses:` steps are GitHub's own
//! actions: they are listed, not run. The install step finds the binaries under test where the
//! action's cache would have put them (a release build is ten minutes; `scripts/ci.sh install`
//! builds only when they are missing).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::harness::{bin, hermetic_command, system_path, Run, TestRepo};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One step of the composite action.
#[derive(Debug, Default)]
struct Step {
    name: String,
    uses: Option<String>,
    condition: Option<String>,
    env: Vec<(String, String)>,
    run: Option<String>,
}

/// The action's inputs with their defaults, and its steps, read from action.yml. A small
/// reader for the shape action.yml keeps (two-space indents, `run: |` blocks); anything else
/// fails the test, so a change of shape is seen.
fn action() -> (BTreeMap<String, String>, Vec<Step>) {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut inputs = BTreeMap::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut section = "";
    let mut input = String::new();
    let mut i = 0;
    let value = |s: &str| s.trim().trim_matches('"').to_string();
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(' ') {
            section = line.split(':').next().unwrap_or("");
            continue;
        }
        match section {
            "inputs" => {
                if let Some(name) = line.strip_prefix("  ").and_then(|l| l.strip_suffix(':')) {
                    if !name.starts_with(' ') {
                        input = name.to_string();
                    }
                } else if let Some(d) = line.trim().strip_prefix("default:") {
                    inputs.insert(input.clone(), value(d));
                }
            }
            "runs" => {
                if let Some(name) = line.strip_prefix("    - name: ") {
                    steps.push(Step {
                        name: name.to_string(),
                        ..Step::default()
                    });
                    continue;
                }
                let Some(step) = steps.last_mut() else {
                    continue;
                };
                let Some(key_line) = line.strip_prefix("      ") else {
                    continue;
                };
                if key_line.starts_with(' ') {
                    continue; // under `with:` or `env:`, read below
                }
                let (key, rest) = key_line.split_once(':').unwrap();
                let rest = rest.trim();
                match key {
                    "uses" => step.uses = Some(rest.to_string()),
                    "if" => step.condition = Some(rest.to_string()),
                    "shell" => assert_eq!(rest, "bash", "step {}: shell", step.name),
                    "with" => {}
                    "env" => {
                        while i < lines.len() && lines[i].starts_with("        ") {
                            let (k, v) = lines[i].trim().split_once(':').unwrap();
                            step.env.push((k.to_string(), value(v)));
                            i += 1;
                        }
                    }
                    "run" if rest == "|" => {
                        let mut script = String::new();
                        while i < lines.len()
                            && (lines[i].starts_with("        ") || lines[i].trim().is_empty())
                        {
                            script.push_str(lines[i].get(8..).unwrap_or(""));
                            script.push('\n');
                            i += 1;
                        }
                        step.run = Some(script);
                    }
                    "run" => step.run = Some(format!("{rest}\n")),
                    other => panic!("action.yml: step {}: unexpected key {other}", step.name),
                }
            }
            _ => {}
        }
    }
    (inputs, steps)
}

/// `${{ … }}` as the runner evaluates it, for the expressions the action's `run:` steps use.
fn evaluate(text: &str, inputs: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("${{") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find("}}").unwrap() + i;
        let expr = rest[i + 3..end].trim();
        let v = if expr == "github.action_path" {
            root().display().to_string()
        } else if let Some(name) = expr.strip_prefix("inputs.") {
            inputs
                .get(name)
                .unwrap_or_else(|| panic!("no input {name}"))
                .clone()
        } else {
            panic!(
                "action.yml: a run step uses ${{{{ {expr} }}}}, which this test does not evaluate"
            );
        };
        assert!(!v.contains("${{"), "input {expr} left unevaluated: {v}");
        out.push_str(&v);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// A step's `if:` for the forms the action's `run:` steps use: `inputs.X != 'v'`, `== 'v'`.
fn condition_holds(cond: &str, inputs: &BTreeMap<String, String>) -> bool {
    for (op, want) in [("!=", false), ("==", true)] {
        if let Some((l, r)) = cond.split_once(op) {
            let name = l
                .trim()
                .strip_prefix("inputs.")
                .expect("an input on the left");
            let value = r.trim().trim_matches('\'');
            return (inputs[name] == value) == want;
        }
    }
    panic!("action.yml: a run step's if: {cond} is not evaluated by this test");
}

/// A runner: an empty HOME (no dotfiles, no git identity), system folders on PATH.
struct Runner {
    home: tempfile::TempDir,
    files: tempfile::TempDir,
}

impl Runner {
    fn new() -> Runner {
        let runner = Runner {
            home: tempfile::tempdir().unwrap(),
            files: tempfile::tempdir().unwrap(),
        };
        // Where actions/cache restores the built tools on a later run (see the module doc).
        let cached = runner.home.path().join(".rails-spar/bin");
        std::fs::create_dir_all(&cached).unwrap();
        for t in ["git-rails", "git-spar", "rails-spar-extras"] {
            std::fs::copy(bin(t), cached.join(t)).unwrap();
        }
        for f in ["path", "summary"] {
            std::fs::write(runner.files.path().join(f), "").unwrap();
        }
        runner
    }

    /// A command in `dir` as the runner starts it: nothing of a person's git setup.
    fn command(&self, program: &str, dir: &Path) -> std::process::Command {
        let mut cmd = hermetic_command(program, self.home.path(), dir);
        for var in [
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL",
            "GIT_AUTHOR_DATE",
            "GIT_COMMITTER_DATE",
            "EMAIL",
        ] {
            cmd.env_remove(var);
        }
        // git may guess an identity from the host name; a runner's guess is not to be relied
        // on, so it is forbidden here.
        cmd.env("GIT_CONFIG_PARAMETERS", "'user.useconfigonly'='true'");
        let added = std::fs::read_to_string(self.files.path().join("path")).unwrap();
        let dirs: Vec<PathBuf> = added.lines().rev().map(PathBuf::from).collect();
        let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
        system_path(&mut cmd, &refs);
        cmd.env("RUNNER_TEMP", self.files.path())
            .env("GITHUB_PATH", self.files.path().join("path"))
            .env("GITHUB_STEP_SUMMARY", self.files.path().join("summary"))
            .env("GITHUB_ACTION_PATH", root())
            .env("GITHUB_REF_NAME", "main")
            .env("GITHUB_HEAD_REF", "");
        cmd
    }

    /// Runs every step of the action in `dir` with `inputs` over the defaults; the outcome of
    /// each `run:` step, and the `uses:` steps (listed, not run).
    fn run_action(&self, dir: &Path, given: &[(&str, &str)]) -> (Vec<(String, Run)>, Vec<String>) {
        let (mut inputs, steps) = action();
        for (k, v) in given {
            inputs.insert(k.to_string(), v.to_string());
        }
        let mut ran = Vec::new();
        let mut listed = Vec::new();
        for step in steps {
            if let Some(uses) = &step.uses {
                listed.push(uses.clone());
                continue;
            }
            if let Some(cond) = &step.condition {
                if !condition_holds(cond, &inputs) {
                    continue;
                }
            }
            let script = step.run.as_deref().expect("a step runs or uses");
            let mut cmd = self.command("bash", dir);
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script]);
            for (k, v) in &step.env {
                cmd.env(k, evaluate(v, &inputs));
            }
            let out = Run::of(&mut cmd);
            let failed = out.code != 0;
            ran.push((step.name.clone(), out));
            if failed {
                break; // as the runner does: later steps without `if: always()` are skipped
            }
        }
        (ran, listed)
    }
}

/// A sprint proven on `main` with the hooks installed, a clean spar round of its last change,
/// and every record pushed to a bare remote; returns the remote.
fn proven_remote() -> (TestRepo, tempfile::TempDir) {
    let dev = TestRepo::new();
    dev.rails(&["hooks", "install", "--no-sync-setup"]).ok();
    dev.write(
        "sprint.md",
        "# SPRINT-001: Release notes\n\n## Done criteria\n- `NOTES.md` exists\n",
    );
    dev.rails(&["contract", "generate", "sprint.md"]).ok();
    dev.rails(&["contract", "freeze", "SPRINT-001"]).ok();
    dev.rails(&["contract", "bind", "SPRINT-001", "--no-sync-setup"])
        .ok();
    dev.rails(&["evidence", "red", "notes-md-exists"]).ok();
    dev.write("NOTES.md", "0.1: first release\n");
    dev.git(&["add", "NOTES.md"]);
    dev.git(&["commit", "-q", "-m", "release notes"]);
    let message = dev.git(&["log", "-1", "--format=%B"]);
    assert!(
        message.contains("Rails-Sprint: SPRINT-001"),
        "the commit-msg hook adds the trailer: {message}"
    );
    dev.rails(&["evidence", "green", "notes-md-exists"]).ok();
    dev.rails(&[
        "evidence",
        "surface",
        "notes-md-exists",
        "--note",
        "in the PR",
    ])
    .ok();
    dev.rails(&[
        "evidence",
        "cleanup",
        "notes-md-exists",
        "--note",
        "nothing started",
    ])
    .ok();

    // A reviewer that finds nothing: a command printing a clean result for the reviewed head.
    let tools = tempfile::tempdir().unwrap();
    let review = tools.path().join("review.sh");
    std::fs::write(
        &review,
        r#"#!/bin/sh
head=$(sed -n 's/^- head: //p' "$2/packet.md")
checked=""
for a in correctness regression checks contract security; do
  checked="$checked${checked:+,}{\"angle\": \"$a\", \"result\": \"read the change\"}"
done
printf '{"reviewed_head": "%s", "verdict": "no_blocking_findings", "angles_checked": [%s], "angles_unchecked": [], "findings": [], "limits": "a test reviewer"}\n' "$head" "$checked"
"#,
    )
    .unwrap();
    let config = tools.path().join("spar.toml");
    std::fs::write(
        &config,
        format!(
            "[[reviewers]]\nname = \"clean\"\npreset = \"command\"\nargv = [\"sh\", \"{}\", \"{{prompt}}\", \"{{workspace}}\", \"{{schema}}\"]\n",
            review.display()
        ),
    )
    .unwrap();
    let config = config.display().to_string();
    dev.spar_env(&["run", "--base", "HEAD~1"], &[("SPAR_CONFIG", &config)])
        .ok();

    let remote = tempfile::tempdir().unwrap();
    let url = remote.path().display().to_string();
    dev.git(&["init", "-q", "--bare", "-b", "main", &url]);
    dev.git(&["remote", "add", "origin", &url]);
    dev.git(&[
        "push",
        "-q",
        "origin",
        "main",
        "refs/rails/*:refs/rails/*",
        "refs/spar/*:refs/spar/*",
        "refs/notes/*:refs/notes/*",
    ]);
    (dev, remote)
}

#[test]
fn the_actions_steps_judge_a_fresh_clone_on_a_bare_runner() {
    let (dev, remote) = proven_remote();
    let head = dev.git(&["rev-parse", "HEAD"]).trim().to_string();
    let runner = Runner::new();
    let work = runner.files.path().join("work");
    let clone = Run::of(runner.command("git", runner.files.path()).args([
        "clone",
        "-q",
        &remote.path().display().to_string(),
        "work",
    ]));
    clone.ok();
    // The runner has no identity: git refuses to commit there, so nothing below may need one.
    let commit = Run::of(
        runner
            .command("git", &work)
            .args(["commit", "--allow-empty", "-m", "x"]),
    );
    assert_ne!(
        commit.code, 0,
        "the runner must have no git identity:\n{commit}"
    );

    let (ran, listed) = runner.run_action(&work, &[("commit", &head), ("base", "")]); // a push: no pull request base
    let names: Vec<&str> = ran.iter().map(|(n, _)| n.as_str()).collect();
    for (name, out) in &ran {
        assert_eq!(out.code, 0, "step {name:?} failed:\n{out}");
    }
    assert_eq!(
        names,
        [
            "build and install git-rails and git-spar",
            "fetch the records",
            "git rails verify --rerun",
            "git spar gate",
            "fail when a gate blocked",
        ]
    );
    assert_eq!(
        listed,
        [
            "actions/cache@v4",
            "github/codeql-action/upload-sarif@v3",
            "actions/upload-artifact@v4",
        ]
    );
    // The sprint came from the commit's trailer; both gates passed; the reports are there.
    let out = work.join("rails-spar-results");
    let read =
        |f: &str| std::fs::read_to_string(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    assert!(
        ran[2]
            .1
            .stderr
            .contains("git rails verify --rerun --commit"),
        "{}",
        ran[2].1
    );
    assert_eq!(read("rails.code").trim(), "0");
    assert_eq!(read("spar.code").trim(), "0");
    assert!(read("rails-verify.xml").contains("<testsuite"), "JUnit");
    // git rails found the sprint from the commit itself.
    assert!(
        read("rails-verify.xml").contains("rails verify SPRINT-001"),
        "JUnit of the sprint the commit names"
    );
    assert!(
        read("spar.sarif").contains("\"version\": \"2.1.0\""),
        "SARIF"
    );
    assert!(
        read("rails-report.html").contains("<html"),
        "the rails report"
    );
    assert!(
        read("spar-report.html").contains("<html"),
        "the spar report"
    );
    let summary = std::fs::read_to_string(runner.files.path().join("summary")).unwrap();
    assert!(
        summary.contains("SPRINT-001"),
        "the job summary has the rails gate: {summary}"
    );
    assert!(
        ran[4].1.stderr.contains("rails gate: passed"),
        "{}",
        ran[4].1
    );
    assert!(
        ran[4].1.stderr.contains("spar gate: passed"),
        "{}",
        ran[4].1
    );
    // The man pages were installed with the tools.
    assert!(runner
        .home
        .path()
        .join(".rails-spar/share/man/man1/git-rails.1")
        .exists());
}

/// The same action on the commit before the proof: the reports are written, then the job
/// fails — the proof was recorded for another tree, and the review saw another head.
#[test]
fn the_action_fails_the_job_when_a_gate_blocks() {
    let (dev, remote) = proven_remote();
    let before = dev.git(&["rev-parse", "HEAD~1"]).trim().to_string();
    let runner = Runner::new();
    let work = runner.files.path().join("work");
    Run::of(runner.command("git", runner.files.path()).args([
        "clone",
        "-q",
        &remote.path().display().to_string(),
        "work",
    ]))
    .ok();
    let (ran, _) = runner.run_action(
        &work,
        &[("commit", &before), ("sprint", "SPRINT-001"), ("base", "")],
    );
    let (last, out) = ran.last().unwrap();
    assert_eq!(last, "fail when a gate blocked");
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("rails gate: blocked (exit 2)"), "{out}");
    assert!(out.stderr.contains("spar gate: blocked (exit 2)"), "{out}");
    assert!(work.join("rails-spar-results/rails-verify.xml").exists());
    assert!(work.join("rails-spar-results/spar.sarif").exists());
}

/// The `scripts/ci.sh` steps a file calls, in order.
fn ci_steps(text: &str) -> Vec<String> {
    let mut steps = Vec::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        let mut rest = line;
        while let Some(i) = rest.find("scripts/ci.sh\" ") {
            rest = &rest[i + "scripts/ci.sh\" ".len()..];
            steps.push(rest.split_whitespace().next().unwrap_or("").to_string());
        }
    }
    steps
}

/// The GitLab template is not run here (it needs GitLab's runner and a clone URL of this
/// repository), so it is held to the action: the same `scripts/ci.sh` steps in the same order,
/// and only steps the script has.
#[test]
fn the_gitlab_template_runs_the_same_steps_as_the_action() {
    let action = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let gitlab = std::fs::read_to_string(root().join("ci/gitlab/rails-spar.yml")).unwrap();
    let script = std::fs::read_to_string(root().join("scripts/ci.sh")).unwrap();
    let want = ["install", "fetch", "verify", "review", "finish"];
    assert_eq!(ci_steps(&action), want);
    assert_eq!(ci_steps(&gitlab), want);
    for step in want {
        assert!(
            script.contains(&format!("\n{step})\n")),
            "scripts/ci.sh has no step {step}"
        );
    }
    assert!(
        gitlab.contains("GIT_DEPTH: \"0\""),
        "the template checks out the whole history"
    );
}
