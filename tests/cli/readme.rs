//! The README is a promise a newcomer acts on (issue 40): every shell command it shows runs
//! here, as written, so a wrong claim fails the suite. A fenced `sh` block either runs — in the
//! checkout on a fresh machine when it runs one of the repository's scripts, else in a fresh
//! repository of "your own" — or is preceded by `<!-- not run: <reason> -->` and listed in
//! [`NOT_RUN`]. The README stays a front door: at most 15 KB.

use std::path::{Path, PathBuf};

use crate::harness::{bin, hermetic_command, system_path, Run, TestRepo};

/// The blocks the README marks `<!-- not run: … -->`, by their text, with the reason; a marked
/// block missing from here (or a listed one the README no longer marks) fails the test.
const NOT_RUN: &[(&str, &str)] = &[(
    "cargo test --locked\n",
    "it is the test suite itself, running now",
)];

/// One fenced block of a Markdown file: its language and text, and the reason of the
/// `<!-- not run: … -->` comment right above it, if any.
pub(crate) struct Block {
    pub lang: String,
    pub text: String,
    pub not_run: Option<String>,
}

/// The fenced blocks of `markdown` (``` fences only, as the README uses).
pub(crate) fn fenced_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = markdown.lines();
    let mut previous = "";
    while let Some(line) = lines.next() {
        if let Some(lang) = line.strip_prefix("```") {
            let mut text = String::new();
            for inner in lines.by_ref() {
                if inner.starts_with("```") {
                    break;
                }
                text.push_str(inner);
                text.push('\n');
            }
            let not_run = previous
                .trim()
                .strip_prefix("<!-- not run:")
                .and_then(|r| r.strip_suffix("-->"))
                .map(|r| r.trim().to_string());
            blocks.push(Block {
                lang: lang.trim().to_string(),
                text,
                not_run,
            });
            previous = "";
            continue;
        }
        if !line.trim().is_empty() {
            previous = line;
        }
    }
    blocks
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

fn is_shell(lang: &str) -> bool {
    matches!(lang, "sh" | "shell" | "bash" | "console")
}

/// A fresh machine: an empty HOME whose `~/.cargo/bin` holds the binaries under test (as
/// `cargo install` would put them), a PATH of that and the system folders only.
fn fresh_machine() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let b = home.path().join(".cargo/bin");
    std::fs::create_dir_all(&b).unwrap();
    for t in ["git-rails", "git-spar", "rails-spar-extras"] {
        std::fs::copy(bin(t), b.join(t)).unwrap();
    }
    home
}

/// Runs a block with `sh -e` in `dir` on the fresh machine `home`.
fn run_block(text: &str, home: &Path, dir: &Path, extra: &[(&str, &str)]) -> Run {
    let mut cmd = hermetic_command("sh", home, dir);
    system_path(&mut cmd, &[&home.join(".cargo/bin")]);
    cmd.args(["-e", "-c", text]).env("TMPDIR", home);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    Run::of(&mut cmd)
}

#[test]
fn the_readme_is_a_front_door_of_at_most_15_kb() {
    let size = readme().len();
    assert!(
        size <= 15 * 1024,
        "README.md is {size} bytes; the guide (docs/src) is where more goes"
    );
}

/// The README's first screen says how to get help where the man pages are not installed.
#[test]
fn the_first_screen_names_help_that_works_without_man_pages() {
    let text = readme();
    let first_screen: String = text.lines().take(20).collect::<Vec<_>>().join("\n");
    for needle in [
        "`git rails -h`",
        "`git rails help <command>`",
        "Rust 1.89",
        "C compiler",
    ] {
        assert!(
            first_screen.contains(needle),
            "the README's first 20 lines lack {needle}"
        );
    }
    // What it promises is true of the binary alone.
    let repo = TestRepo::new();
    repo.rails(&["-h"])
        .ok()
        .stdout_has("Usage: git rails <COMMAND>");
    repo.rails(&["help", "gate"])
        .ok()
        .stdout_has("Usage: git rails gate");
    repo.spar(&["help", "gate"])
        .ok()
        .stdout_has("Usage: git spar gate");
}

#[test]
fn every_shell_block_of_the_readme_runs_or_is_listed() {
    let blocks: Vec<Block> = fenced_blocks(&readme())
        .into_iter()
        .filter(|b| is_shell(&b.lang))
        .collect();
    assert!(
        blocks.len() >= 3,
        "the README shows its install, tests and quick start"
    );
    let marked: Vec<&Block> = blocks.iter().filter(|b| b.not_run.is_some()).collect();
    for b in &marked {
        assert!(
            NOT_RUN.iter().any(|(text, _)| *text == b.text),
            "README block marked not run ({:?}) is not listed in NOT_RUN:\n{}",
            b.not_run,
            b.text
        );
    }
    for (text, reason) in NOT_RUN {
        assert!(
            marked.iter().any(|b| b.text == *text),
            "NOT_RUN lists a block the README no longer marks ({reason}):\n{text}"
        );
    }
    let mut ran = 0;
    for b in blocks.iter().filter(|b| b.not_run.is_none()) {
        let home = fresh_machine();
        let out = if b.text.starts_with("sh scripts/") {
            // The repository's own scripts, from the checkout; the install's `cargo install`
            // is skipped (the binaries are the ones just built, already in ~/.cargo/bin).
            run_block(
                &b.text,
                home.path(),
                &root(),
                &[("RAILS_INSTALL_SKIP_CARGO", "1")],
            )
        } else {
            // Anything else is run in a repository of the reader's own: one commit, and the
            // git identity a person has configured.
            let own = TestRepo::new();
            own.git(&["config", "user.name", "A Reader"]);
            own.git(&["config", "user.email", "reader@example.invalid"]);
            run_block(&b.text, home.path(), own.path(), &[])
        };
        assert_eq!(out.code, 0, "README block failed:\n{}\n{out}", b.text);
        ran += 1;
    }
    assert!(ran >= 2, "only {ran} README blocks ran");
}

/// The quick start ends where the README says: the gate passes, and a push asks it.
#[test]
fn the_quick_start_reaches_a_passing_gate_and_the_push_hook() {
    let block = fenced_blocks(&readme())
        .into_iter()
        .find(|b| b.text.starts_with("git rails hooks install"))
        .expect("the README's quick start starts with `git rails hooks install`");
    let home = fresh_machine();
    let own = TestRepo::new();
    let out = run_block(&block.text, home.path(), own.path(), &[]);
    out.ok().stdout_has("gate passed: SPRINT-001 v1 is done");
    let remote = tempfile::tempdir().unwrap();
    own.git(&["init", "-q", "--bare", &remote.path().display().to_string()]);
    own.git(&[
        "remote",
        "add",
        "origin",
        &remote.path().display().to_string(),
    ]);
    let push = run_block("git push origin main", home.path(), own.path(), &[]);
    push.ok().stderr_has("SPRINT-001 v1 is done");
}

/// The install on a machine without Rust says what the README's requirements say, instead of
/// ending in `cargo: not found` (127).
#[test]
fn the_install_without_cargo_names_the_requirements() {
    let home = tempfile::tempdir().unwrap();
    // A PATH holding only what the script needs before it looks for cargo.
    let tools = home.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::os::unix::fs::symlink("/usr/bin/dirname", tools.join("dirname")).unwrap();
    let mut cmd = hermetic_command("/bin/sh", home.path(), &root());
    cmd.arg(root().join("scripts/install.sh"))
        .env("PATH", &tools)
        .env("CARGO_INSTALL_ROOT", home.path().join("root"));
    let out = Run::of(&mut cmd);
    out.code(1)
        .stderr_has("install: cargo is not installed")
        .stderr_has("Rust 1.89 or newer (https://rustup.rs) and a C compiler");
    assert!(
        !home.path().join("root").exists(),
        "nothing was installed: {out}"
    );
}
