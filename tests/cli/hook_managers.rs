//! The gate beside the real hook managers: pre-commit (PyPI), lefthook and husky (npm), in both
//! install orders and after each tool installs again. Every step pushes proven work (accepted)
//! and unproven work (refused), commits a bad `Rails-Sprint:` trailer (refused), and checks
//! the manager's own hooks still run.
//!
//! Where the managers are: `RAILS_TEST_HOOK_MANAGERS` (a folder with `venv/bin/pre-commit` and
//! `node_modules/.bin/{lefthook,husky}`), else `.ci/hook-managers`, where `.ci/run` installs the
//! pinned versions. When one is absent the test prints `skipped: …` and returns, unless
//! `RAILS_TEST_REQUIRE_HOOK_MANAGERS=1` (CI), where it fails.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::harness::{bin, Run, TestRepo};
use crate::hooks::{prove, remote_ref, repo_with_remote};

struct Managers {
    pre_commit: PathBuf,
    lefthook: PathBuf,
    husky: PathBuf,
    /// PATH with the binaries under test first, then the managers.
    path: String,
}

fn managers() -> Option<Managers> {
    let dir = std::env::var_os("RAILS_TEST_HOOK_MANAGERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/hook-managers"));
    let m = Managers {
        pre_commit: dir.join("venv/bin/pre-commit"),
        lefthook: dir.join("node_modules/.bin/lefthook"),
        husky: dir.join("node_modules/.bin/husky"),
        path: format!(
            "{}:{}:{}:{}",
            bin("git-rails").parent().unwrap().display(),
            dir.join("venv/bin").display(),
            dir.join("node_modules/.bin").display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    };
    for p in [&m.pre_commit, &m.lefthook, &m.husky] {
        if !p.exists() {
            let why = format!(
                "{} is not installed (`.ci/run` installs the pinned hook managers into .ci/hook-managers; RAILS_TEST_HOOK_MANAGERS names another folder)",
                p.display()
            );
            if std::env::var("RAILS_TEST_REQUIRE_HOOK_MANAGERS").as_deref() == Ok("1") {
                panic!("RAILS_TEST_REQUIRE_HOOK_MANAGERS=1 but {why}");
            }
            let _ = writeln!(std::io::stderr(), "skipped: {why}");
            return None;
        }
    }
    Some(m)
}

impl Managers {
    fn git(&self, repo: &TestRepo, args: &[&str]) -> Run {
        repo.git_env(args, &[("PATH", &self.path)])
    }
    fn rails(&self, repo: &TestRepo, args: &[&str]) -> Run {
        repo.rails_env(args, &[("PATH", &self.path)])
    }
    fn run(&self, repo: &TestRepo, program: &Path, args: &[&str]) -> Run {
        repo.tool(program, args, &[("PATH", &self.path)])
    }
    fn commit(&self, repo: &TestRepo, file: &str, text: &str, msg: &str) {
        repo.write(file, text);
        self.git(repo, &["add", "--", file]).ok();
        self.git(repo, &["commit", "-q", "-m", msg]).ok();
    }
}

/// How many lines a manager's own hook appended to `.git/<log>`.
fn own_runs(repo: &TestRepo, log: &str) -> usize {
    std::fs::read_to_string(repo.path().join(".git").join(log))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

/// A proven, pushed `main` (with upstream, so HEAD has nothing to push afterwards).
fn proven(repo: &TestRepo, m: &Managers) {
    prove(repo);
    m.git(repo, &["push", "-q", "-u", "origin", "main"]).ok();
}

/// The gate holds: proven work goes through, unproven work and bad trailers are refused.
#[track_caller]
fn gate_holds(repo: &TestRepo, m: &Managers, remote: &Path, step: &str) {
    // A new commit that names the sprint and leaves the proven tree as it is: the push has
    // something to judge (a push of commits the remote already has names no sprint).
    let ok = format!("refs/heads/ok-{step}");
    let proven_branch = format!("okb-{step}");
    m.git(repo, &["checkout", "-q", "-b", &proven_branch, "main"])
        .ok();
    m.git(
        repo,
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            &format!("proven {step}\n\nRails-Sprint: S"),
        ],
    )
    .ok();
    m.git(repo, &["checkout", "-q", "main"]).ok();
    let out = m.git(repo, &["push", "origin", &format!("{proven_branch}:{ok}")]);
    assert_eq!(out.code, 0, "[{step}] a proven push is accepted:\n{out}");
    assert!(out.stderr.contains("S v1 is done at"), "[{step}]\n{out}");
    assert!(remote_ref(remote, &ok).is_some(), "[{step}]");

    // Unproven work on another branch, pushed while HEAD (main) has nothing to push: lefthook
    // would skip a plain command here.
    let bad = format!("bad-{step}");
    m.git(repo, &["checkout", "-q", "-b", &bad, "main"]).ok();
    repo.git(&["config", &format!("branch.{bad}.railsSprint"), "S"]);
    m.commit(
        repo,
        "done.txt",
        &format!("changed in {step}\n"),
        "unproven change",
    );
    m.git(repo, &["checkout", "-q", "main"]).ok();
    let out = m.git(repo, &["push", "origin", &bad]);
    assert_ne!(out.code, 0, "[{step}] an unproven push is refused:\n{out}");
    assert!(out.stderr.contains("S v1 is not done"), "[{step}]\n{out}");
    assert_eq!(
        remote_ref(remote, &format!("refs/heads/{bad}")),
        None,
        "[{step}]"
    );

    let head = repo.git(&["rev-parse", "HEAD"]);
    let out = m.git(
        repo,
        &["commit", "--allow-empty", "-m", "x\n\nRails-Sprint: NOPE-9"],
    );
    assert_ne!(out.code, 0, "[{step}] a bad trailer is refused:\n{out}");
    assert!(
        out.stderr.contains("NOPE-9 names no frozen contract"),
        "[{step}]\n{out}"
    );
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head, "[{step}]");
}

#[track_caller]
fn status_ok(repo: &TestRepo, m: &Managers, manager: &str) -> serde_json::Value {
    let run = m.rails(repo, &["hooks", "status", "--json"]);
    let st = run.json();
    assert_eq!(run.code, 0, "status finds no problem:\n{run}");
    for h in st["hooks"].as_array().unwrap() {
        assert_eq!(h["gateRuns"], true, "{run}");
        assert_eq!(h["manager"], manager, "{run}");
        assert_eq!(h["probe"]["gateRuns"], 1, "{run}");
    }
    assert_eq!(st["hooks"][0]["probe"]["stdinPassed"], true, "{run}");
    st
}

/// Every file under the listed paths, with its bytes (to compare after uninstall).
fn snapshot(repo: &TestRepo, paths: &[&str]) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, p: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        if p.is_dir() {
            for e in std::fs::read_dir(p).unwrap() {
                walk(root, &e.unwrap().path(), out);
            }
        } else if let Ok(b) = std::fs::read(p) {
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            if !rel.ends_with(".sample") {
                out.insert(rel, b);
            }
        }
    }
    let mut out = BTreeMap::new();
    for p in paths {
        walk(repo.path(), &repo.path().join(p), &mut out);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// husky

const HUSKY_OWN: &str = "echo own >> .git/own-pre-push.log\n";

fn husky_repo(m: &Managers) -> (TestRepo, tempfile::TempDir) {
    let (repo, remote) = repo_with_remote();
    std::fs::create_dir_all(repo.path().join(".husky")).unwrap();
    repo.write(".husky/pre-push", HUSKY_OWN);
    m.git(&repo, &["add", ".husky"]).ok();
    m.git(&repo, &["commit", "-q", "-m", "husky scripts"]).ok();
    (repo, remote)
}

#[test]
fn husky_first_then_the_gate_survives_husky_reinstalls_and_uninstalls_exactly() {
    let Some(m) = managers() else { return };
    let (repo, remote) = husky_repo(&m);
    m.run(&repo, &m.husky, &[]).ok();
    assert_eq!(repo.git(&["config", "core.hooksPath"]).trim(), ".husky/_");
    proven(&repo, &m);
    let before = snapshot(&repo, &[".husky", ".git/hooks"]);

    // Nothing is written with --dry-run; the diff shows the line that would go in.
    let dry = m.rails(&repo, &["hooks", "install", "--dry-run"]);
    dry.ok()
        .stdout_has("would be installed: added the gate's line to husky's script")
        .stdout_has("+git rails hook pre-push \"$@\"");
    assert_eq!(snapshot(&repo, &[".husky", ".git/hooks"]), before);
    let st = m.rails(&repo, &["hooks", "status"]);
    st.code(1).stdout_has("gate does NOT run");

    m.rails(&repo, &["hooks", "install"])
        .ok()
        .stdout_has("installed: added the gate's line to husky's script");
    let text = repo.read(".husky/pre-push");
    assert!(text.starts_with("# rails-spar gate: begin"), "{text}");
    assert!(text.ends_with(HUSKY_OWN), "{text}");
    let st = status_ok(&repo, &m, "husky");
    assert_eq!(
        st["hooks"][0]["alsoRuns"][0],
        "husky: echo own >> .git/own-pre-push.log"
    );
    let own = own_runs(&repo, "own-pre-push.log");
    gate_holds(&repo, &m, remote.path(), "husky-1");
    assert!(
        own_runs(&repo, "own-pre-push.log") > own,
        "husky's own pre-push still runs"
    );

    // npm's `prepare` runs husky again: it rewrites .husky/_, the gate stays.
    m.run(&repo, &m.husky, &[]).ok();
    status_ok(&repo, &m, "husky");
    gate_holds(&repo, &m, remote.path(), "husky-2");
    m.rails(&repo, &["hooks", "install"])
        .ok()
        .stdout_has("already installed");
    assert_eq!(repo.read(".husky/pre-push"), text, "install is idempotent");

    m.rails(&repo, &["hooks", "uninstall"])
        .ok()
        .stdout_has("removed the gate's line");
    assert_eq!(snapshot(&repo, &[".husky", ".git/hooks"]), before);
    let own = own_runs(&repo, "own-pre-push.log");
    let out = m.git(
        &repo,
        &["push", "origin", "main:refs/heads/after-uninstall"],
    );
    out.ok();
    assert!(!out.stderr.contains("git-rails"), "{out}");
    assert!(
        own_runs(&repo, "own-pre-push.log") > own,
        "husky still works"
    );
}

#[test]
fn the_gate_first_then_husky_keeps_both_and_repairs_an_old_install() {
    let Some(m) = managers() else { return };
    let (repo, remote) = husky_repo(&m);
    proven(&repo, &m);
    // A fresh clone before `npm install`: .husky is there, husky is not active yet. The gate
    // goes into .git/hooks (running now) and into .husky's scripts (running once husky is).
    m.rails(&repo, &["hooks", "install"])
        .ok()
        .stdout_has(".husky/pre-push")
        .stdout_has(".git/hooks/pre-push");
    status_ok(&repo, &m, "git");
    gate_holds(&repo, &m, remote.path(), "plain");
    m.run(&repo, &m.husky, &[]).ok();
    let st = m.rails(&repo, &["hooks", "status"]);
    st.ok()
        .stdout_has("gate runs through husky")
        .stdout_has("note: ");
    gate_holds(&repo, &m, remote.path(), "husky");
    // Installing again cleans up the shadowed scripts in .git/hooks.
    m.rails(&repo, &["hooks", "install"]).ok();
    assert!(!repo.path().join(".git/hooks/pre-push").exists());
    m.rails(&repo, &["hooks", "status"])
        .ok()
        .stdout_lacks("note: ");

    // The layout an older install left: ours in .husky/_ with husky's stub kept as .local,
    // which husky's `h` then never found. Installing puts the stub back.
    m.rails(&repo, &["hooks", "uninstall"]).ok();
    let stub = repo.read(".husky/_/pre-push");
    std::fs::rename(
        repo.path().join(".husky/_/pre-push"),
        repo.path().join(".husky/_/pre-push.local"),
    )
    .unwrap();
    let ours = include_str!("../../githooks/pre-push");
    repo.write(".husky/_/pre-push", ours);
    std::fs::set_permissions(
        repo.path().join(".husky/_/pre-push"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    m.rails(&repo, &["hooks", "install"]).ok();
    assert_eq!(repo.read(".husky/_/pre-push"), stub);
    assert!(!repo.path().join(".husky/_/pre-push.local").exists());
    status_ok(&repo, &m, "husky");
    let own = own_runs(&repo, "own-pre-push.log");
    gate_holds(&repo, &m, remote.path(), "repaired");
    assert!(own_runs(&repo, "own-pre-push.log") > own);
}

// ---------------------------------------------------------------------------------------------
// lefthook

const LEFTHOOK_YML: &str =
    "pre-commit:\n  commands:\n    own:\n      run: echo own >> .git/own-pre-commit.log\n";

fn lefthook_repo(m: &Managers) -> (TestRepo, tempfile::TempDir) {
    let (repo, remote) = repo_with_remote();
    repo.write("lefthook.yml", LEFTHOOK_YML);
    m.git(&repo, &["add", "lefthook.yml"]).ok();
    m.git(&repo, &["commit", "-q", "-m", "lefthook config"])
        .ok();
    (repo, remote)
}

#[test]
fn lefthook_first_then_the_gate_survives_resyncs_and_uninstalls_exactly() {
    let Some(m) = managers() else { return };
    let (repo, remote) = lefthook_repo(&m);
    m.run(&repo, &m.lefthook, &["install"]).ok();
    proven(&repo, &m);
    let before = snapshot(&repo, &["lefthook.yml", ".git/hooks"]);

    let dry = m.rails(&repo, &["hooks", "install", "--dry-run"]);
    dry.ok()
        .stdout_has("+++ ")
        .stdout_has("lefthook-local.yml")
        .stdout_has("use_stdin: true")
        .stdout_has("would run `lefthook install`");
    assert!(!repo.path().join("lefthook-local.yml").exists());

    m.rails(&repo, &["hooks", "install"])
        .ok()
        .stdout_has("added the gate's commands to lefthook-local.yml")
        .stdout_has("ran `lefthook install`");
    assert_eq!(
        repo.read("lefthook.yml"),
        LEFTHOOK_YML,
        "the shared file is untouched"
    );
    status_ok(&repo, &m, "lefthook");
    let own = own_runs(&repo, "own-pre-commit.log");
    gate_holds(&repo, &m, remote.path(), "lefthook-1");
    assert!(
        own_runs(&repo, "own-pre-commit.log") > own,
        "lefthook's own hook still runs"
    );

    // lefthook.yml changes: the next commit re-syncs lefthook's hooks (the failure).
    let changed =
        format!("{LEFTHOOK_YML}    own2:\n      run: echo own2 >> .git/own-pre-commit.log\n");
    m.commit(&repo, "lefthook.yml", &changed, "more lefthook");
    // The re-synced hooks still gate: main is stale now (any change counts), then proven again.
    let out = m.git(&repo, &["push", "origin", "main"]);
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("lefthook.yml changed since it was proven"),
        "{out}"
    );
    m.rails(&repo, &["evidence", "recheck", "S", "c1"]).ok();
    m.git(&repo, &["push", "-q", "origin", "main"]).ok();
    status_ok(&repo, &m, "lefthook");
    gate_holds(&repo, &m, remote.path(), "lefthook-resynced");
    m.run(&repo, &m.lefthook, &["install", "--force"]).ok();
    status_ok(&repo, &m, "lefthook");
    gate_holds(&repo, &m, remote.path(), "lefthook-reinstalled");
    m.rails(&repo, &["hooks", "install"])
        .ok()
        .stdout_has("already installed");

    let before = BTreeMap::from_iter(before.into_iter().map(|(k, v)| {
        if k == "lefthook.yml" {
            (k, changed.clone().into_bytes())
        } else {
            (k, v)
        }
    }));
    m.rails(&repo, &["hooks", "uninstall"])
        .ok()
        .stdout_has("removed the gate's commands");
    assert!(!repo.path().join("lefthook-local.yml").exists());
    assert_eq!(snapshot(&repo, &["lefthook.yml", ".git/hooks"]), before);
    let own = own_runs(&repo, "own-pre-commit.log");
    m.commit(&repo, "x.txt", "x\n", "lefthook still works");
    assert!(own_runs(&repo, "own-pre-commit.log") > own);
}

#[test]
fn the_gate_first_then_lefthook_and_a_shared_config() {
    let Some(m) = managers() else { return };
    let (repo, remote) = lefthook_repo(&m);
    proven(&repo, &m);
    // lefthook is configured but its hooks are not installed yet; PATH without lefthook, so
    // the gate only edits the configuration and says what to run.
    // The git the tests use comes first (Debian's /usr/bin/git may be too old for the git3
    // profile's repositories).
    let path = std::env::var("PATH").unwrap_or_default();
    let git_dir = path
        .split(':')
        .find(|d| Path::new(d).join("git").is_file())
        .unwrap_or("/usr/bin");
    let no_lefthook = format!(
        "{}:{git_dir}:/usr/bin:/bin",
        bin("git-rails").parent().unwrap().display()
    );
    repo.rails_env(&["hooks", "install"], &[("PATH", &no_lefthook)])
        .ok()
        .stdout_has("run `lefthook install`");
    let st = m.rails(&repo, &["hooks", "status"]);
    st.code(1).stdout_has("gate does NOT run");
    m.run(&repo, &m.lefthook, &["install"]).ok();
    status_ok(&repo, &m, "lefthook");
    gate_holds(&repo, &m, remote.path(), "lefthook-after");

    // --shared moves nothing when the local file has it; after uninstall it edits lefthook.yml.
    m.rails(&repo, &["hooks", "uninstall"]).ok();
    m.rails(&repo, &["hooks", "install", "--shared"])
        .ok()
        .stdout_has("lefthook.yml");
    assert!(!repo.path().join("lefthook-local.yml").exists());
    let shared = repo.read("lefthook.yml");
    assert!(shared.starts_with(LEFTHOOK_YML), "{shared}");
    assert!(shared.contains("files: echo lefthook.yml"), "{shared}");
    status_ok(&repo, &m, "lefthook");
    gate_holds(&repo, &m, remote.path(), "lefthook-shared");
    m.rails(&repo, &["hooks", "uninstall"]).ok();
    assert_eq!(repo.read("lefthook.yml"), LEFTHOOK_YML);
}

// ---------------------------------------------------------------------------------------------
// pre-commit

const PRE_COMMIT_CONFIG: &str = "default_install_hook_types: [pre-commit, pre-push, commit-msg]
repos:
- repo: local
  hooks:
  - id: own
    name: own pre-push hook
    entry: sh -c 'echo own >> .git/own-pre-push.log'
    language: system
    stages: [pre-push]
    always_run: true
    pass_filenames: false
";

fn pre_commit_repo(m: &Managers) -> (TestRepo, tempfile::TempDir) {
    let (repo, remote) = repo_with_remote();
    repo.write(".pre-commit-config.yaml", PRE_COMMIT_CONFIG);
    m.git(&repo, &["add", ".pre-commit-config.yaml"]).ok();
    m.git(&repo, &["commit", "-q", "-m", "pre-commit config"])
        .ok();
    (repo, remote)
}

#[test]
fn pre_commit_first_then_the_gate_runs_as_its_legacy_hook() {
    let Some(m) = managers() else { return };
    let (repo, remote) = pre_commit_repo(&m);
    m.run(&repo, &m.pre_commit, &["install"]).ok();
    proven(&repo, &m);
    let before = snapshot(&repo, &[".git/hooks", ".pre-commit-config.yaml"]);
    m.rails(&repo, &["hooks", "install"])
        .ok()
        .stdout_has("installed as pre-push.legacy, which pre-commit's pre-push runs first");
    assert!(repo.path().join(".git/hooks/pre-push.legacy").exists());
    status_ok(&repo, &m, "pre-commit");
    let own = own_runs(&repo, "own-pre-push.log");
    gate_holds(&repo, &m, remote.path(), "pc-1");
    assert!(
        own_runs(&repo, "own-pre-push.log") > own,
        "pre-commit's own hook still runs"
    );

    // `pre-commit install` again keeps the legacy hook.
    m.run(&repo, &m.pre_commit, &["install"]).ok();
    status_ok(&repo, &m, "pre-commit");
    gate_holds(&repo, &m, remote.path(), "pc-2");

    // `pre-commit install -f` drops it: status says so (exit 1), install puts it back.
    m.run(&repo, &m.pre_commit, &["install", "-f"]).ok();
    let st = m.rails(&repo, &["hooks", "status"]);
    st.code(1).stdout_has("gate does NOT run");
    m.rails(&repo, &["doctor"])
        .code(1)
        .stdout_has("hooks install");
    m.rails(&repo, &["hooks", "install"]).ok();
    status_ok(&repo, &m, "pre-commit");
    gate_holds(&repo, &m, remote.path(), "pc-3");

    m.rails(&repo, &["hooks", "uninstall"]).ok();
    assert_eq!(
        snapshot(&repo, &[".git/hooks", ".pre-commit-config.yaml"]),
        before
    );
    let own = own_runs(&repo, "own-pre-push.log");
    m.git(&repo, &["push", "origin", "main:refs/heads/after"])
        .ok();
    m.commit(&repo, "y.txt", "y\n", "new work");
    m.git(&repo, &["push", "origin", "main:refs/heads/after2"])
        .ok();
    assert!(
        own_runs(&repo, "own-pre-push.log") > own,
        "pre-commit still works"
    );
}

#[test]
fn the_gate_first_then_pre_commit_and_the_old_loop_is_repaired() {
    let Some(m) = managers() else { return };
    let (repo, remote) = pre_commit_repo(&m);
    proven(&repo, &m);
    m.rails(&repo, &["hooks", "install"]).ok();
    let ours = repo.read(".git/hooks/pre-push");
    m.run(&repo, &m.pre_commit, &["install"])
        .ok()
        .stdout_has("migration mode");
    assert_eq!(repo.read(".git/hooks/pre-push.legacy"), ours);
    // Status knows pre-commit runs ours; installing again changes nothing.
    status_ok(&repo, &m, "pre-commit");
    let shim = repo.read(".git/hooks/pre-push");
    m.rails(&repo, &["hooks", "install"])
        .ok()
        .stdout_has("already installed (pre-commit runs it as pre-push.legacy)");
    assert_eq!(repo.read(".git/hooks/pre-push"), shim);
    gate_holds(&repo, &m, remote.path(), "pc-after");

    // The loop an older install built from that state: ours → pre-commit (.local) → ours
    // (.legacy) → … Installing untangles it.
    let hooks = repo.path().join(".git/hooks");
    std::fs::rename(hooks.join("pre-push"), hooks.join("pre-push.local")).unwrap();
    std::fs::copy(hooks.join("pre-push.legacy"), hooks.join("pre-push")).unwrap();
    m.rails(&repo, &["hooks", "install"])
        .ok()
        .stdout_has("repaired: pre-commit's shim is back");
    assert_eq!(repo.read(".git/hooks/pre-push"), shim);
    assert!(!hooks.join("pre-push.local").exists());
    status_ok(&repo, &m, "pre-commit");
    gate_holds(&repo, &m, remote.path(), "pc-repaired");

    // pre-commit's own uninstall puts ours back in place, still gating.
    m.run(&repo, &m.pre_commit, &["uninstall"]).ok();
    assert_eq!(repo.read(".git/hooks/pre-push"), ours);
    status_ok(&repo, &m, "git");
}

// ---------------------------------------------------------------------------------------------
// A global core.hooksPath (no manager needed)

#[test]
fn a_global_hooks_path_takes_global() {
    let repo = TestRepo::new();
    let global_dir = tempfile::tempdir().unwrap();
    let cfg = global_dir.path().join("gitconfig");
    let hooks = global_dir.path().join("hooks");
    std::fs::write(&cfg, format!("[core]\n\thooksPath = {}\n", hooks.display())).unwrap();
    let env = [("GIT_CONFIG_GLOBAL", cfg.to_str().unwrap())];
    let out = repo.rails_env(&["hooks", "install"], &env);
    out.code(65);
    assert!(
        out.stderr
            .contains("core.hooksPath is set in your global git configuration"),
        "{out}"
    );
    assert!(out.stderr.contains("--global"), "{out}");
    assert!(!hooks.exists(), "nothing was written");
    repo.rails_env(&["hooks", "uninstall"], &env).code(65);
    let st = repo.rails_env(&["hooks", "status"], &env);
    st.code(1).stdout_has("global git configuration");
    repo.rails_env(&["hooks", "install", "--global"], &env)
        .ok()
        .stdout_has(&hooks.join("pre-push").display().to_string());
    // Installed there on purpose, status runs it and only notes where it comes from.
    repo.rails_env(&["hooks", "status"], &env)
        .ok()
        .stdout_has("note: core.hooksPath comes from your global git configuration");
    // A local setting wins over the global one and needs no flag.
    repo.git(&["config", "core.hooksPath", ".githooks"]);
    repo.rails_env(&["hooks", "install"], &env).ok();
}
