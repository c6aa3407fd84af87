//! Nothing private leaves the machine (issue 37), tried as an attacker would, from the
//! binaries: a check's output, a cloned repository's spar configuration, a contract's paths, a
//! record written by hand. Each test ends by reading every object of the local repository and
//! of the server (`git cat-file --batch-all-objects --batch`) and finding 0 bytes of the secret.

use std::path::PathBuf;

use crate::harness::{check, Run, TestRepo};
use serde_json::json;

/// A GitHub token of the documented format (made up). Written into a repository only where a
/// test says so; elsewhere commands build it from pieces (`gh""p_…`), so the contract's own
/// text never holds it.
const GHP: &str = "ghp_R8xk2Lq9Vz3Wm7Tn5Yp1Bc6Df4Gh0Jk2Ls9A";
const GHP_SPLIT: &str = "gh\"\"p_R8xk2Lq9Vz3W\"\"m7Tn5Yp1Bc6Df4Gh0Jk2Ls9A";
/// A value only the environment holds: a secret-named variable's, and an `env_var`
/// prerequisite's (whose name says nothing).
const DEPLOY: &str = "dpl-0123456789abcdef";
const ACCT: &str = "acct-9876543210zyxwv";
const STRIPE: &str = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";

/// A bare server with our hooks, and one clone of it with the hooks installed.
struct World {
    dir: tempfile::TempDir,
    server: TestRepo,
    clone: TestRepo,
    base: String,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let origin = TestRepo::new();
    origin.write(".gitignore", ".env\n");
    origin.write("app/main.rs", "fn main() {}\n");
    origin.commit_all("base");
    origin.write("app/main.rs", "fn main() {\n    println!(\"hello\");\n}\n");
    origin.commit_all("change");
    let base = origin.git(&["rev-parse", "HEAD~1"]).trim().to_string();
    let bare = dir.path().join("server.git");
    origin.git(&[
        "clone",
        "-q",
        "--bare",
        &origin.path().display().to_string(),
        &bare.display().to_string(),
    ]);
    let server = TestRepo::at(&bare);
    server.rails(&["hooks", "install"]).ok();
    let path = dir.path().join("clone");
    origin.git(&[
        "clone",
        "-q",
        &bare.display().to_string(),
        &path.display().to_string(),
    ]);
    let clone = TestRepo::at(&path);
    clone.rails(&["hooks", "install"]).ok();
    World {
        dir,
        server,
        clone,
        base,
    }
}

/// How often `needle` occurs in every object of `repo`, decompressed.
fn in_objects(repo: &TestRepo, needle: &str) -> usize {
    let mut cmd = repo.program("git");
    cmd.args(["cat-file", "--batch-all-objects", "--batch"])
        .current_dir(repo.path());
    let out = cmd.output().unwrap();
    assert!(out.status.success());
    let hay = out.stdout;
    hay.windows(needle.len())
        .filter(|w| *w == needle.as_bytes())
        .count()
}

#[track_caller]
fn nowhere(w: &World, secrets: &[&str]) {
    for repo in [&w.clone, &w.server] {
        for s in secrets {
            assert_eq!(
                in_objects(repo, s),
                0,
                "{s} is in an object of {}",
                repo.path().display()
            );
        }
    }
}

fn env() -> Vec<(&'static str, &'static str)> {
    vec![("DEPLOY_TOKEN", DEPLOY), ("STRIPE_ACCT", ACCT)]
}

/// A failing check prints a bearer token (split across two writes to stderr), an
/// `env_var` prerequisite's value and a GitHub token: RED, validate's note, the HTML report and
/// `sync` leave no byte of any of them in the clone or on the server, and say how many values
/// were redacted.
#[test]
fn a_checks_output_leaves_no_secret_in_any_record_or_on_the_server() {
    let w = world();
    let c = &w.clone;
    let command = format!(
        "{{ printf 'Authorization: Bearer %s' \"${{DEPLOY_TOKEN%%??????????}}\"; sleep 0.3; printf '%s\\n' \"${{DEPLOY_TOKEN#??????????}}\"; }} >&2; echo \"account $STRIPE_ACCT\"; echo \"remote https://x:{GHP_SPLIT}@github.com/o/r\"; exit 1"
    );
    c.draft_with(
        "S",
        json!([check("leak", "command_success", json!({ "command": command }))]),
        json!({"environmentPrerequisites": [{"name": "acct", "check": "env_var", "spec": {"name": "STRIPE_ACCT"}, "reason": "the account"}]}),
    );
    c.rails(&["contract", "freeze", "S"]).ok();
    let red = c.rails_env(&["evidence", "red", "S", "leak"], &env());
    red.ok();
    for s in [DEPLOY, ACCT, GHP] {
        assert!(!red.stdout.contains(s) && !red.stderr.contains(s), "{red}");
    }
    let state = c.git(&["show", "refs/rails/evidence/S:state.json"]);
    assert!(state.contains("values redacted"), "{state}");
    let validate = c.rails_env(&["contract", "validate", "S"], &env());
    assert!(!validate.stdout.contains(DEPLOY), "{validate}");
    let note = c.git(&["notes", "--ref=rails", "show", "HEAD"]);
    assert!(note.contains("[redacted:DEPLOY_TOKEN]"), "{note}");
    // The HTML report: with the user's umask, not 0600.
    let html = w.dir.path().join("report.html");
    let mut sh = c.program("sh");
    sh.args([
        "-c",
        &format!("umask 022; git-rails report S --html '{}'", html.display()),
    ]);
    Run::of(&mut sh).ok();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains(DEPLOY) && !page.contains(GHP), "{page}");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&html).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "the report follows the umask");
    }
    c.rails_env(&["sync"], &env()).ok();
    assert!(
        in_objects(&w.server, "[redacted:DEPLOY_TOKEN]") > 0,
        "the records reached the server"
    );
    assert!(in_objects(c, "[redacted:STRIPE_ACCT]") > 0);
    assert!(in_objects(c, "[redacted:github-pat]") > 0);
    nowhere(&w, &[DEPLOY, ACCT, GHP, &DEPLOY[10..], &GHP[4..20]]);
}

fn refused_at_freeze(c: &TestRepo, path: &str, says: &str) {
    c.draft(
        "P",
        json!([check(
            "r",
            "regex_in_file",
            json!({"path": path, "pattern": "password"})
        )]),
    );
    let run = c.rails(&["contract", "freeze", "P"]);
    run.code(65);
    assert!(run.stderr.contains(says), "{path}: {run}");
    assert!(!run.stderr.contains("hunter2"), "{run}");
}

/// `regex_in_file` on `../x`, `/etc/passwd`, `.git/config` and a tracked symbolic link to a
/// file outside: refused at freeze with the reason; a link that changes after the freeze is
/// refused at the run; `evidence … --path` outside the repository is refused.
#[test]
fn contract_paths_stay_inside_the_repository() {
    let w = world();
    let c = &w.clone;
    let outside = w.dir.path().join("netrc");
    std::fs::write(&outside, "machine example.com password hunter2hunter2\n").unwrap();
    std::os::unix::fs::symlink(&outside, c.path().join("netrc-link")).unwrap();
    c.commit_all("a tracked link");
    refused_at_freeze(c, "../netrc", "goes up with `..`");
    refused_at_freeze(c, "/etc/passwd", "is not relative to the repository's top");
    refused_at_freeze(c, ".git/config", "inside `.git/`");
    refused_at_freeze(c, "netrc-link", "symbolic link");
    c.draft(
        "P",
        json!([check(
            "r",
            "regex_in_file",
            json!({"path": "notes.txt", "pattern": "password"})
        )]),
    );
    c.write("notes.txt", "no secret here\n");
    c.commit_all("notes");
    c.rails(&["contract", "freeze", "P"]).ok();
    // Afterwards the file becomes a link to outside: every run refuses it again.
    std::fs::remove_file(c.path().join("notes.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, c.path().join("notes.txt")).unwrap();
    c.commit_all("the link");
    let v = c.rails(&["contract", "validate", "P", "--json"]);
    assert!(v.stdout.contains("symbolic link"), "{v}");
    assert!(!v.stdout.contains("hunter2"), "{v}");
    let red = c.rails(&["evidence", "red", "P", "r"]);
    red.code(65);
    assert!(red.stderr.contains("symbolic link"), "{red}");
    let receipt = c.rails(&["evidence", "cleanup", "P", "r", "--path", "/etc/passwd"]);
    receipt.code(65);
    assert!(receipt.stderr.contains("--path"), "{receipt}");
    c.rails(&["sync"]).ok();
    nowhere(&w, &["hunter2hunter2"]);
}

/// A reviewer that finds a token and prints another to stderr, for `git spar run` in `repo`.
fn reviewer(w: &World) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let mut f = crate::spar_results::finding("L1", "defect", "app/main.rs:2");
    f["claim"] = json!(format!("the deploy log prints {GHP}"));
    f["evidence"] = json!(format!("Authorization: Bearer {DEPLOY}"));
    let result = crate::spar_results::result("HEADSHA", vec![f]);
    let body = serde_json::to_string(&result)
        .unwrap()
        .replace("HEADSHA", "'\"$head\"'");
    let script = w.dir.path().join("reviewer.sh");
    let repo = w.clone.path().display().to_string();
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nhead=$(git -C '{repo}' rev-parse HEAD)\necho 'token {GHP}' >&2\necho '{body}'\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let user = w.dir.path().join("user.toml");
    std::fs::write(
        &user,
        format!(
            "timeout_seconds = 30\n\n[[reviewers]]\nname = \"peer\"\npreset = \"command\"\nargv = [{}]\n",
            json!(script.display().to_string())
        ),
    )
    .unwrap();
    let xdg = w.dir.path().join("xdg");
    std::fs::create_dir_all(&xdg).unwrap();
    (user, xdg)
}

fn spar(w: &World, args: &[&str]) -> Run {
    let (user, xdg) = reviewer(w);
    let mut cmd = w.clone.command("git-spar");
    cmd.args(args)
        .env("SPAR_CONFIG", user)
        .env("XDG_CONFIG_HOME", xdg)
        .env("DEPLOY_TOKEN", DEPLOY);
    Run::of(&mut cmd)
}

/// A cloned repository's `.jaekit/spar.toml` naming `.git/config` or an untracked `.env` is
/// refused; a document from outside named with `--rules` reaches the packet redacted; the
/// reviewer's finding text and stderr are redacted; `git spar sync` leaves no byte of any
/// secret in the clone or on the server.
#[test]
fn a_rounds_documents_findings_and_transcripts_leave_no_secret() {
    let w = world();
    let c = &w.clone;
    c.git(&[
        "remote",
        "set-url",
        "origin",
        &format!("https://x-access-token:{GHP}@example.invalid/o/r"),
    ]);
    c.write(".env", &format!("STRIPE_KEY={STRIPE}\n"));
    for (rules, says) in [
        ("[\".git/config\"]", ".git/"),
        ("[\".env\"]", "not in the head commit"),
    ] {
        c.write(".jaekit/spar.toml", &format!("rules = {rules}\n"));
        let run = spar(&w, &["run", "--base", &w.base, "--series", "s"]);
        run.code(65);
        assert!(run.stderr.contains(says), "{rules}: {run}");
        assert!(
            !run.stderr.contains(STRIPE) && !run.stderr.contains(GHP),
            "{run}"
        );
    }
    std::fs::remove_file(c.path().join(".jaekit/spar.toml")).unwrap();
    // The same through --rules: a file of the repository that is not committed is refused.
    let run = spar(
        &w,
        &["run", "--base", &w.base, "--series", "s", "--rules", ".env"],
    );
    run.code(65);
    // A document from outside, named on the command line: used, redacted.
    let policy = w.dir.path().join("policy.md");
    std::fs::write(&policy, format!("# Policy\n\nSTRIPE_KEY={STRIPE}\n")).unwrap();
    let run = spar(
        &w,
        &[
            "run",
            "--base",
            &w.base,
            "--series",
            "s",
            "--rules",
            &policy.display().to_string(),
        ],
    );
    assert!(run.code == 0 || run.code == 1, "{run}");
    let packet = c.git(&["show", "refs/spar/series/s:rounds/code-1/packet.md"]);
    assert!(
        packet.contains("STRIPE_KEY=[redacted:stripe-access-token]"),
        "{packet}"
    );
    let findings = c.git(&["show", "refs/spar/series/s:rounds/code-1/findings.json"]);
    assert!(findings.contains("[redacted:github-pat]"), "{findings}");
    assert!(findings.contains("[redacted:DEPLOY_TOKEN]"), "{findings}");
    let round = c.git(&["show", "refs/spar/series/s:rounds/code-1/round.json"]);
    assert!(round.contains("values redacted"), "{round}");
    // Sync to the server (its URL set back: the one with a token was the attack).
    c.git(&[
        "remote",
        "set-url",
        "origin",
        &w.server.path().display().to_string(),
    ]);
    let mut sync = c.command("git-spar");
    sync.arg("sync").env("DEPLOY_TOKEN", DEPLOY);
    Run::of(&mut sync).ok();
    assert!(in_objects(&w.server, "[redacted:stripe-access-token]") > 0);
    nowhere(&w, &[STRIPE, GHP, DEPLOY]);
}

/// A record written by hand with a token: pre-push refuses it naming the ref and the rule;
/// past pre-push (`--no-verify`), the server's pre-receive refuses it; doctor names it with
/// the command that rewrites it, since it was never pushed.
#[test]
fn a_record_holding_a_token_is_refused_at_the_push_and_named_by_doctor() {
    let w = world();
    let c = &w.clone;
    c.git(&[
        "notes",
        "--ref=rails",
        "add",
        "-m",
        &format!("deploy with {GHP}"),
        "HEAD",
    ]);
    let push = c.git_run(&["push", "origin", "refs/notes/rails"]);
    assert_ne!(push.code, 0, "{push}");
    assert!(push.stderr.contains("refs/notes/rails refused"), "{push}");
    assert!(push.stderr.contains("github-pat"), "{push}");
    let forced = c.git_run(&["push", "--no-verify", "origin", "refs/notes/rails"]);
    assert_ne!(forced.code, 0, "{forced}");
    assert!(forced.stderr.contains("github-pat"), "{forced}");
    assert_eq!(in_objects(&w.server, GHP), 0);
    let doctor = c.rails(&["doctor", "--json"]);
    let doc = doctor.json();
    let found = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "secret")
        .unwrap_or_else(|| panic!("{doctor}"))
        .clone();
    assert!(
        found["what"].as_str().unwrap().contains("refs/notes/rails"),
        "{found}"
    );
    assert!(
        found["fix"]
            .as_str()
            .unwrap()
            .contains("git update-ref -d refs/notes/rails"),
        "{found}"
    );
    assert!(!doctor.stdout.contains(GHP), "{doctor}");
}

/// Content already committed in the change under review is not redacted: a reviewer quoting a
/// token the diff holds is recorded exactly (the location resolver and the reviewers' copies
/// stay exact), and the push carries it, since it is in git already.
#[test]
fn a_committed_token_quoted_by_a_reviewer_stays_exact_and_travels() {
    let w = world();
    let c = &w.clone;
    c.write(
        "app/fixture.rs",
        &format!("pub const FIXTURE: &str = \"{GHP}\";\n"),
    );
    c.commit_all("a test fixture with a token");
    let run = spar(&w, &["run", "--base", &w.base, "--series", "s"]);
    assert!(run.code == 0 || run.code == 1, "{run}");
    let findings = c.git(&["show", "refs/spar/series/s:rounds/code-1/findings.json"]);
    assert!(
        findings.contains(GHP),
        "the committed token is quoted exactly: {findings}"
    );
    assert!(findings.contains("[redacted:DEPLOY_TOKEN]"), "{findings}");
    let mut sync = c.command("git-spar");
    sync.arg("sync").env("DEPLOY_TOKEN", DEPLOY);
    Run::of(&mut sync).ok();
    nowhere(&w, &[DEPLOY]);
}

/// What a freeze copies into the version (a schema's `$ref`, a check path's file) is never a
/// tracked symbolic link's target outside the repository.
#[test]
fn a_freeze_copies_no_file_from_outside_through_a_tracked_link() {
    let w = world();
    let c = &w.clone;
    let outside = w.dir.path().join("secret.json");
    std::fs::write(&outside, "{\"description\": \"hunter2hunter2\"}\n").unwrap();
    std::os::unix::fs::symlink(&outside, c.path().join("defs.json")).unwrap();
    c.write(
        "schema.json",
        "{\"type\": \"object\", \"required\": [\"a\"], \"properties\": {\"a\": {\"$ref\": \"defs.json\"}}}\n",
    );
    c.write("out.json", "{\"a\": 1}\n");
    c.commit_all("a schema whose $ref is a link");
    c.draft(
        "Q",
        json!([check(
            "s",
            "artifact_schema",
            json!({"path": "out.json", "schema": "schema.json"})
        )]),
    );
    let run = c.rails(&["contract", "freeze", "Q"]);
    run.code(65);
    assert!(run.stderr.contains("symbolic link"), "{run}");
    nowhere(&w, &["hunter2hunter2"]);
}
