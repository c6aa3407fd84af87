//! Inputs the fuzz campaign (tests/fuzz, benches/fuzz.sh) found, minimised, kept here so the
//! normal suite fails if they come back. Each says what it broke before.

use std::io::Write;

use crate::harness::{Run, TestRepo};
use rails_spar::spar::preset::shell::check_line;

/// Runs `git-rails hook <args>` in `repo` with `stdin` (from a file, as `Run::of` reads the
/// output).
fn hook(repo: &TestRepo, args: &[&str], stdin: &str) -> Run {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(stdin.as_bytes()).unwrap();
    let mut cmd = repo.command("git-rails");
    cmd.arg("hook")
        .args(args)
        .stdin(std::fs::File::open(file.path()).unwrap());
    Run::of(&mut cmd)
}

fn refs(repo: &TestRepo) -> String {
    repo.git(&["for-each-ref", "--format=%(refname) %(objectname)"])
}

/// Was 70 ("reading commit …: not found"): a pre-push line naming an object the repository
/// does not have, also with the empty ref names the fuzzer reduced it to.
#[test]
fn pre_push_naming_an_unknown_object_is_refused() {
    let repo = TestRepo::new();
    let before = refs(&repo);
    let n = repo.git(&["rev-parse", "HEAD"]).trim().len();
    let (unknown, zero) = ("1".repeat(n), "0".repeat(n));
    for line in [
        format!("refs/heads/main {unknown} refs/heads/main {zero}\n"),
        format!(" {unknown}  {zero}\n"),
    ] {
        let out = hook(&repo, &["pre-push", "origin", "url"], &line);
        out.code(65)
            .stderr_has("which is not an object in this repository");
        assert!(out.stderr.starts_with("git-rails: pre-push: "), "{out}");
    }
    assert_eq!(refs(&repo), before);
}

/// Was 70: a pre-receive line naming an object the repository does not have (git never sends
/// one; a hand-made or fuzzed input does), for a record ref and for a branch.
#[test]
fn pre_receive_naming_an_unknown_object_is_refused() {
    let repo = TestRepo::new();
    let before = refs(&repo);
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let (unknown, zero) = ("1".repeat(head.len()), "0".repeat(head.len()));
    for line in [
        format!("{zero} {unknown} refs/rails/evidence/S\n"),
        format!("{head} {unknown} refs/heads/main\n"),
    ] {
        let out = hook(&repo, &["pre-receive"], &line);
        out.code(65)
            .stderr_has("which is not an object in this repository");
    }
    assert_eq!(refs(&repo), before);
}

/// Was 70: an annotated tag's object (what `git push origin v1` hands the hook) or a blob
/// was read as a commit. A tag is peeled to its commit; a tree or blob has nothing to gate.
#[test]
fn pre_push_of_a_tag_or_a_blob_is_not_an_internal_error() {
    let repo = TestRepo::new();
    repo.git(&["tag", "-a", "-m", "release", "v1"]);
    // Tags are judged only where rails.protect names them; then the tag is peeled to its commit.
    repo.git(&["config", "rails.protect", "refs/tags/*"]);
    let tag = repo.git(&["rev-parse", "v1"]).trim().to_string();
    let blob = repo
        .git(&["rev-parse", "HEAD:README.md"])
        .trim()
        .to_string();
    let zero = "0".repeat(tag.len());
    hook(
        &repo,
        &["pre-push", "origin", "url"],
        &format!("refs/tags/v1 {tag} refs/tags/v1 {zero}\n"),
    )
    .ok()
    .stderr_has("push of refs/tags/v1: its new commits name no sprint");
    hook(
        &repo,
        &["pre-push", "origin", "url"],
        &format!("refs/tags/b {blob} refs/tags/b {zero}\n"),
    )
    .ok()
    .stderr_has("refs/tags/b is not a commit; nothing to gate");
}

/// Was an empty reason: a trailing `\` (line continuation) and an empty program name (`''`).
/// Both are refused and named.
#[test]
fn agy_shell_line_reasons_are_never_empty() {
    assert_eq!(check_line("\\"), Err("\\".to_string()));
    assert_eq!(check_line("ls head \\"), Err("\\".to_string()));
    assert_eq!(check_line("'' head"), Err("''".to_string()));
    assert_eq!(check_line("\"\" head"), Err("''".to_string()));
    assert!(check_line("\\ ; touch pwned").is_err());
    // An escaped character inside the line is still one word.
    assert_eq!(check_line("grep a\\ b head"), Ok(()));
}
