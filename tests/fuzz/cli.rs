//! Targets that drive the real binaries on a temporary repository (a lower rate: a process per
//! input): a refused input exits 65 with a message, never 70 or a panic, and writes no ref, no
//! note and no draft.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::corpus;
use crate::engine::{budget, fuzz_for};
use crate::gen::Corpus;

/// A repository with one commit on `main`, and a home of its own.
pub struct Repo {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
    pub head: String,
    pub tree: String,
    pub blob: String,
}

impl Repo {
    pub fn new() -> Repo {
        let repo = Repo {
            dir: tempfile::tempdir().expect("a temp dir"),
            home: tempfile::tempdir().expect("a temp dir"),
            head: String::new(),
            tree: String::new(),
            blob: String::new(),
        };
        repo.git(&["init", "-q", "-b", "main"]);
        std::fs::write(repo.path().join("README.md"), "fuzz\n").expect("write");
        repo.git(&["add", "README.md"]);
        repo.git(&["commit", "-q", "-m", "initial\n\nRails-Sprint: S-1"]);
        Repo {
            head: repo.git(&["rev-parse", "HEAD"]),
            tree: repo.git(&["rev-parse", "HEAD^{tree}"]),
            blob: repo.git(&["rev-parse", "HEAD:README.md"]),
            ..repo
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        for var in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_NOTES_REF",
            "SPAR_CONFIG",
            "XDG_CONFIG_HOME",
        ] {
            cmd.env_remove(var);
        }
        cmd.current_dir(self.path())
            .env("HOME", self.home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "Fuzz")
            .env("GIT_AUTHOR_EMAIL", "fuzz@example.invalid")
            .env("GIT_COMMITTER_NAME", "Fuzz")
            .env("GIT_COMMITTER_EMAIL", "fuzz@example.invalid")
            .env("NO_COLOR", "1")
            .env("TZ", "UTC");
        cmd
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = self.command("git").args(args).output().expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Every ref with its value (notes are refs too), and the record files of the work tree.
    pub fn refs(&self) -> String {
        let mut s = self.git(&["for-each-ref", "--format=%(refname) %(objectname)"]);
        s.push('\n');
        s.push_str(&files_under(&self.path().join(".rails")).join("\n"));
        s
    }

    /// Runs a binary with `stdin`; returns the exit code and stderr.
    pub fn run(&self, bin: &str, args: &[&str], stdin: &[u8]) -> (i32, String) {
        let mut child = self
            .command(bin)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        if let Some(mut i) = child.stdin.take() {
            let _ = i.write_all(stdin);
        }
        let out = child.wait_with_output().expect("the binary ends");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap_or_default();
                out.push(format!("{} {}", p.display(), bytes.len()));
            }
        }
    }
    out.sort();
    out
}

fn rails() -> &'static str {
    env!("CARGO_BIN_EXE_git-rails")
}

/// The binaries get a share of the budget: a process per input is slow.
fn cli_budget() -> Duration {
    budget()
}

/// The exit code is one the README lists for the case, and a refusal says something.
fn judge(what: &str, code: i32, stderr: &str, allowed: &[i32]) {
    assert!(!stderr.contains("panicked"), "{what}: a panic: {stderr}");
    assert!(
        allowed.contains(&code),
        "{what}: exit {code} (allowed {allowed:?}): {stderr}"
    );
    if code == 65 {
        assert!(
            stderr.starts_with("git-rails: ") || stderr.starts_with("spar: "),
            "{what}: refusal without its prefix: {stderr}"
        );
    }
}

#[test]
fn cli_pre_push() {
    let repo = Repo::new();
    let known = vec![repo.head.clone(), repo.tree.clone(), repo.blob.clone()];
    let seeds = vec![
        format!(
            "refs/heads/main {} refs/heads/main {}\n",
            repo.head,
            "0".repeat(40)
        )
        .into_bytes(),
        // A record ref naming an object that is not in the repository (found by this target
        // once pre-push began to judge pushed records): a refusal, not 70.
        format!(
            "refs/spar/series/s {} refs/spar/series/s {}\n",
            "2496fe91bd55de355968016893fc187899ff9600",
            "0".repeat(40)
        )
        .into_bytes(),
        format!(
            "refs/rails/evidence/S {} refs/rails/evidence/S {}\n",
            repo.blob,
            "0".repeat(40)
        )
        .into_bytes(),
        // An object that is not in the repository (issue 24): a refusal, not 70.
        format!(
            "refs/heads/main {} refs/heads/main {}\n",
            "1".repeat(40),
            "0".repeat(40)
        )
        .into_bytes(),
        format!(
            "refs/heads/main {} refs/heads/main {}\n",
            repo.blob,
            "0".repeat(40)
        )
        .into_bytes(),
    ];
    let before = repo.refs();
    let mut make = |u: &mut arbitrary::Unstructured<'_>| crate::parsers::hook_lines(u, &known);
    fuzz_for("cli_pre_push", &seeds, cli_budget(), &mut make, &|input| {
        let (code, err) = repo.run(rails(), &["hook", "pre-push", "origin", "/dev/null"], input);
        judge("pre-push", code, &err, &[0, 2, 65]);
        assert_eq!(
            repo.refs(),
            before,
            "pre-push changed a ref, a note or a record file"
        );
    });
}

#[test]
fn cli_agent_stop() {
    let repo = Repo::new();
    repo.git(&["config", "branch.main.railsSprint", "S-1"]);
    let seeds = corpus::seeds("hook-events.jsonl");
    let c = Corpus::new(seeds.clone(), &[]);
    let before = repo.refs();
    let mut make = |u: &mut arbitrary::Unstructured<'_>| c.input(u, None);
    fuzz_for(
        "cli_agent_stop",
        &seeds,
        cli_budget(),
        &mut make,
        &|input| {
            let (code, err) = repo.run(rails(), &["hook", "agent-stop"], input);
            judge("agent-stop", code, &err, &[0, 2, 65]);
            assert_eq!(
                repo.refs(),
                before,
                "agent-stop changed a ref, a note or a record file"
            );
        },
    );
}

#[test]
fn cli_contract_freeze() {
    let repo = Repo::new();
    let now = jiff::Timestamp::from_second(1_800_000_000).expect("a time");
    // Drafts of sprint S: the generated contracts with their sprint renamed.
    let mut seeds: Vec<Vec<u8>> = corpus::sprints()
        .iter()
        .filter_map(|d| {
            rails_spar::contract::generate::generate(&String::from_utf8_lossy(d), Some("S"), now)
                .ok()
        })
        .map(|g| g.contract.to_canonical_json())
        .collect();
    seeds.extend(corpus::seeds("contracts.jsonl"));
    let c = Corpus::new(seeds.clone(), &[]);
    let draft = repo.path().join(".rails/contracts/S.json");
    std::fs::create_dir_all(draft.parent().expect("a folder")).expect("mkdir");
    let mut make = |u: &mut arbitrary::Unstructured<'_>| c.input(u, None);
    fuzz_for(
        "cli_contract_freeze",
        &seeds,
        cli_budget(),
        &mut make,
        &|input| {
            std::fs::write(&draft, input).expect("write");
            let before = repo.refs();
            let (code, err) = repo.run(rails(), &["contract", "freeze", "S"], b"");
            judge("contract freeze", code, &err, &[0, 65]);
            if code == 0 {
                // Frozen: start again from no contract.
                repo.git(&["update-ref", "-d", "refs/rails/contracts/S"]);
            } else {
                assert_eq!(repo.refs(), before, "a refused freeze wrote something");
            }
        },
    );
}

#[test]
fn cli_contract_generate() {
    let repo = Repo::new();
    let seeds = corpus::sprints();
    let c = Corpus::new(
        seeds.clone(),
        &["\n## Done criteria\n- ", "Sprint: S-1\n", "\n```sh\n"],
    );
    std::fs::create_dir_all(repo.path().join("plans")).expect("mkdir");
    let doc = repo.path().join("plans/sprint.md");
    let mut make = |u: &mut arbitrary::Unstructured<'_>| c.input(u, None);
    fuzz_for(
        "cli_contract_generate",
        &seeds,
        cli_budget(),
        &mut make,
        &|input| {
            let _ = std::fs::remove_dir_all(repo.path().join(".rails"));
            std::fs::write(&doc, input).expect("write");
            let before = repo.refs();
            let (code, err) = repo.run(rails(), &["contract", "generate", "plans/sprint.md"], b"");
            judge("contract generate", code, &err, &[0, 65]);
            if code != 0 {
                assert_eq!(repo.refs(), before, "a refused generate wrote something");
            }
        },
    );
}
