//! A hermetic git repository in a temporary folder, and the binaries run inside it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

pub struct TestRepo {
    root: PathBuf,
    _dir: Option<tempfile::TempDir>,
    pub home: tempfile::TempDir,
}

/// What a run printed and how it ended, rendered so a failing assertion explains itself.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}------- stderr -------\n{}[exit status: {}]",
            self.stdout, self.stderr, self.code
        )
    }
}

impl Run {
    /// Runs `cmd` to its end.
    pub fn of(cmd: &mut std::process::Command) -> Run {
        Run::from(cmd.output().unwrap())
    }

    /// Waits for a spawned child (its pipes taken by the caller or piped) to end.
    pub fn of_child(child: std::process::Child) -> Run {
        Run::from(child.wait_with_output().unwrap())
    }

    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
    /// Asserts the exit code, printing the whole transcript when it differs.
    #[track_caller]
    pub fn code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "unexpected exit status:\n{self}");
        self
    }
    #[track_caller]
    pub fn ok(&self) -> &Self {
        self.code(0)
    }
    #[track_caller]
    pub fn stdout_has(&self, s: &str) -> &Self {
        assert!(self.stdout.contains(s), "stdout lacks {s:?}:\n{self}");
        self
    }
    #[track_caller]
    pub fn stderr_has(&self, s: &str) -> &Self {
        assert!(self.stderr.contains(s), "stderr lacks {s:?}:\n{self}");
        self
    }
    #[track_caller]
    pub fn stdout_lacks(&self, s: &str) -> &Self {
        assert!(!self.stdout.contains(s), "stdout has {s:?}:\n{self}");
        self
    }
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{self}"))
    }
}

/// The author and committer date of every commit a test makes (`GIT_AUTHOR_DATE`,
/// `GIT_COMMITTER_DATE`): commits, and so object ids, do not depend on the clock.
pub const FIXED_DATE: &str = "2026-01-01T00:00:00Z";

pub fn bin(name: &str) -> PathBuf {
    assert_cmd::cargo::cargo_bin(name)
}

/// `PATH` with the folder of the binaries under test first, for a git that runs our hooks (the
/// installed scripts find `git-rails` on `PATH`).
pub fn path_with_bins() -> String {
    let dir = bin("git-rails").parent().unwrap().to_path_buf();
    format!("{}:{}", dir.display(), std::env::var("PATH").unwrap())
}

/// The one environment every command a test runs gets (git, the binaries, hook managers, the
/// real agent CLIs, a browser): nothing of the caller's environment but an allow-list, so a
/// developer's `RAILS_SKIP`, `GIT_CONFIG_PARAMETERS`, `SPAR_CONFIG` or editor never reaches a
/// test. Commit dates are fixed, so object ids and dates do not depend on when the test ran.
/// `home` is its `HOME`. What a test needs beyond it is added on top by the functions below
/// ([`path_first`], [`system_path`]) or, for its own variables, by the test where it is seen.
pub fn hermetic(cmd: &mut std::process::Command, home: &Path) {
    cmd.env_clear();
    for (key, value) in std::env::vars_os() {
        let Some(k) = key.to_str() else { continue };
        // TMPDIR: where temporary files go; RAILS_TEST_*: the pinned tools .ci/run names.
        if k == "TMPDIR" || k.starts_with("RAILS_TEST_") {
            cmd.env(&key, value);
        }
    }
    // The binaries under test come first on PATH, so the hooks git runs call them (and
    // not some other installed git-rails).
    let bins = bin("git-rails").parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bins.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Test Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test Committer")
        .env("GIT_COMMITTER_EMAIL", "committer@example.invalid")
        .env("GIT_AUTHOR_DATE", FIXED_DATE)
        .env("GIT_COMMITTER_DATE", FIXED_DATE)
        .env("NO_COLOR", "1")
        .env("LANG", "C")
        .env("TZ", "UTC");
    profile(cmd);
}

/// `program` started in `dir`, outside any test repository, in the [`hermetic`] environment
/// with `home` as `HOME` (a real agent CLI in its workspace, a browser, a fresh machine).
pub fn hermetic_command(
    program: impl AsRef<std::ffi::OsStr>,
    home: &Path,
    dir: &Path,
) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    hermetic(&mut cmd, home);
    cmd.current_dir(dir);
    cmd
}

/// On top of the hermetic environment, on purpose: `dirs` first on its PATH (the real CLIs of
/// `RAILS_TEST_CLI_BIN`), before the binaries under test and the rest.
pub fn path_first(cmd: &mut std::process::Command, dirs: &[&Path]) {
    let rest = cmd
        .get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v)
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut path: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    path.push(rest);
    cmd.env("PATH", path.join(":"));
}

/// On top of the hermetic environment, on purpose: a PATH of only `dirs` and the system
/// folders, as on a machine where nothing else is installed (the real CLIs and their node, the
/// binaries as an install puts them). Nothing of the caller's PATH.
pub fn system_path(cmd: &mut std::process::Command, dirs: &[&Path]) {
    let mut path: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    path.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(str::to_string));
    cmd.env("PATH", path.join(":"));
}

/// Whether the suite runs under the "git3" profile (`RAILS_TEST_GIT_PROFILE=git3`, a second
/// pass in `.ci/run`): every repository a test makes is a Git 3.0 one, with SHA-256 objects,
/// reftable refs, `main` as the first branch and `safe.bareRepository=explicit`. Any other
/// value than unset, empty, `default` or `git3` fails the test that asks.
pub fn git3() -> bool {
    match std::env::var("RAILS_TEST_GIT_PROFILE").as_deref() {
        Err(_) | Ok("") | Ok("default") => false,
        Ok("git3") => true,
        Ok(other) => {
            panic!("RAILS_TEST_GIT_PROFILE={other:?}: known profiles are default and git3")
        }
    }
}

/// Puts the profile's git settings on a command (nothing in the default profile). The
/// `safe.bareRepository` setting is protected configuration, so it goes in as command-line
/// configuration (`GIT_CONFIG_COUNT`), which a repository's own config cannot override.
pub fn profile(cmd: &mut std::process::Command) {
    if git3() {
        cmd.env("GIT_DEFAULT_HASH", "sha256")
            .env("GIT_DEFAULT_REF_FORMAT", "reftable")
            .env("GIT_CONFIG_COUNT", "2")
            .env("GIT_CONFIG_KEY_0", "safe.bareRepository")
            .env("GIT_CONFIG_VALUE_0", "explicit")
            .env("GIT_CONFIG_KEY_1", "init.defaultBranch")
            .env("GIT_CONFIG_VALUE_1", "main");
    }
}

/// The zero id of the hook protocol in the profile's object format (40 or 64 zeros).
pub fn zero_id() -> String {
    "0".repeat(if git3() { 64 } else { 40 })
}

/// Fails the test when a repository is not in the profile's formats: a git too old to make
/// Git 3.0 repositories must not let the git3 pass run the default profile's tests again.
#[track_caller]
pub fn assert_profile_formats(git_dir: &Path) {
    if !git3() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let mut cmd = hermetic_command("git", home.path(), git_dir);
    cmd.arg("--git-dir").arg(git_dir).args([
        "rev-parse",
        "--show-object-format",
        "--show-ref-format",
    ]);
    let out = cmd.output().unwrap();
    let formats = String::from_utf8_lossy(&out.stdout).into_owned();
    let version = hermetic_command("git", home.path(), git_dir)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    assert!(
        out.status.success() && formats.split_whitespace().eq(["sha256", "reftable"]),
        "the git3 profile needs a git that makes SHA-256 + reftable repositories (2.45 or newer); {version} made {} ({})",
        formats.trim(),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

impl TestRepo {
    /// An empty repository on `main` with one commit.
    pub fn new() -> TestRepo {
        let repo = TestRepo::bare_init();
        repo.write("README.md", "test repository\n");
        repo.git(&["add", "README.md"]);
        repo.git(&["commit", "-q", "-m", "initial"]);
        repo
    }

    /// A repository with no commit yet.
    pub fn bare_init() -> TestRepo {
        let dir = tempfile::tempdir().unwrap();
        let repo = TestRepo {
            root: dir.path().to_path_buf(),
            _dir: Some(dir),
            home: tempfile::tempdir().unwrap(),
        };
        repo.git(&["init", "-q", "-b", "main"]);
        assert_profile_formats(&repo.root.join(".git"));
        repo
    }

    /// A repository with one commit in the given object format (`sha1`, `sha256`) and ref
    /// format (`files`, `reftable`), whatever the profile.
    pub fn with_formats(objects: &str, refs: &str) -> TestRepo {
        let dir = tempfile::tempdir().unwrap();
        let repo = TestRepo {
            root: dir.path().to_path_buf(),
            _dir: Some(dir),
            home: tempfile::tempdir().unwrap(),
        };
        repo.git(&[
            "init",
            "-q",
            "-b",
            "main",
            &format!("--object-format={objects}"),
            &format!("--ref-format={refs}"),
        ]);
        repo.write("README.md", "test repository\n");
        repo.git(&["add", "README.md"]);
        repo.git(&["commit", "-q", "-m", "initial"]);
        repo
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// `files` or `reftable`: how this repository keeps its refs (a test that looks at ref
    /// storage on purpose, such as a lock file left behind, asks).
    pub fn ref_format(&self) -> String {
        self.git(&["rev-parse", "--show-ref-format"])
            .trim()
            .to_string()
    }

    /// [`hermetic`] in this repository (named by `GIT_DIR` when it is a bare one).
    fn env(&self, cmd: &mut std::process::Command) {
        hermetic(cmd, self.home.path());
        // A bare repository is named explicitly, as `safe.bareRepository=explicit` (the git3
        // profile, Git 3.0's default) requires of anything run inside one.
        if !self.root.join(".git").exists() && self.root.join("HEAD").is_file() {
            cmd.env("GIT_DIR", &self.root);
        }
        cmd.current_dir(self.path());
    }

    /// Runs git and returns stdout, failing the test when git fails.
    #[track_caller]
    pub fn git(&self, args: &[&str]) -> String {
        let mut cmd = self.program("git");
        cmd.args(args);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// An existing repository (e.g. a bare remote) driven like a test repository; the folder
    /// belongs to the caller.
    pub fn at(path: &Path) -> TestRepo {
        TestRepo {
            root: path.to_path_buf(),
            _dir: None,
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// Runs git with extra environment and returns the whole result.
    pub fn git_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.program("git");
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Run::from(cmd.output().unwrap())
    }

    /// Runs git and returns the whole result, whatever it was.
    pub fn git_run(&self, args: &[&str]) -> Run {
        let mut cmd = self.program("git");
        cmd.args(args);
        Run::from(cmd.output().unwrap())
    }

    pub fn write(&self, rel: &str, content: &str) {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path().join(rel)).unwrap()
    }

    pub fn commit_all(&self, msg: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", msg]);
    }

    /// Runs `git-rails` with `args` (and extra environment).
    pub fn rails_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.command("git-rails");
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Run::from(cmd.output().unwrap())
    }

    /// One of the binaries under test (`git-rails`, `git-spar`), in the repository, with the
    /// hermetic environment every test uses; the caller adds its own variables.
    pub fn command(&self, program: &str) -> std::process::Command {
        self.program(bin(program))
    }

    /// Another program (a real agent CLI, `sh`, `flock`, git fed on stdin) in the repository
    /// with the hermetic environment; the caller adds the rest.
    pub fn program(&self, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
        let mut cmd = std::process::Command::new(program);
        self.env(&mut cmd);
        cmd
    }

    /// Runs git in `dir` (a linked worktree of this repository, say) with the hermetic
    /// environment.
    pub fn git_in(&self, dir: &Path, args: &[&str]) -> Run {
        let mut cmd = self.program("git");
        cmd.args(args).current_dir(dir);
        Run::of(&mut cmd)
    }

    /// Runs another program (a hook manager) in the repository with the hermetic environment.
    pub fn tool(&self, program: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.program(program);
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Run::from(cmd.output().unwrap())
    }

    /// Runs `git-rails` from a subfolder of the work tree.
    pub fn rails_in(&self, sub: &str, args: &[&str]) -> Run {
        let mut cmd = self.command("git-rails");
        cmd.args(args);
        let dir = self.path().join(sub);
        std::fs::create_dir_all(&dir).unwrap();
        cmd.current_dir(dir);
        Run::from(cmd.output().unwrap())
    }

    pub fn rails(&self, args: &[&str]) -> Run {
        self.rails_env(args, &[])
    }

    pub fn spar_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.command("git-spar");
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Run::from(cmd.output().unwrap())
    }

    pub fn spar(&self, args: &[&str]) -> Run {
        self.spar_env(args, &[])
    }

    /// Writes a draft for `sprint` with these DoD checks (and optional other fields).
    pub fn draft(&self, sprint: &str, checks: Value) {
        self.draft_with(sprint, checks, json!({}));
    }

    pub fn draft_with(&self, sprint: &str, checks: Value, extra: Value) {
        let mut c = contract(sprint, checks);
        if let (Some(obj), Some(extra)) = (c.as_object_mut(), extra.as_object()) {
            for (k, v) in extra {
                obj.insert(k.clone(), v.clone());
            }
        }
        let path = format!(".rails/contracts/{sprint}.json");
        let full = self.path().join(&path);
        if full.exists() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&full, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        self.write(&path, &serde_json::to_string_pretty(&c).unwrap());
    }
}

/// A valid contract document with these checks.
pub fn contract(sprint: &str, checks: Value) -> Value {
    json!({
        "version": "v1",
        "id": "01JDQ7ZK3M8T5V2W9X4Y6Z0ABC",
        "sprintId": sprint,
        "createdAt": "2026-11-30T12:00:00Z",
        "type": "feature",
        "dod": {"checks": checks},
        "environmentPrerequisites": [],
        "nonGoals": [],
        "runtimeValidation": {"commands": []},
        "riskFlags": [],
        "reviewerProfile": "static",
        "approvalGates": {"impl": true, "review": true, "deploy": false}
    })
}

/// One check.
pub fn check(id: &str, kind: &str, spec: Value) -> Value {
    json!({"id": id, "description": format!("{id} holds"), "kind": kind, "spec": spec})
}

/// A real HTTP/1.1 server on loopback answering every request with `status`, for a bounded
/// time; it stops by itself.
pub fn http_server(status: u16) -> u16 {
    http_server_after(status, std::time::Duration::ZERO)
}

/// Like [`http_server`], but it starts listening only after `delay` (a server that is starting).
pub fn http_server_after(status: u16, delay: std::time::Duration) -> u16 {
    use std::io::{Read, Write};
    let port = free_port();
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
        listener.set_nonblocking(true).unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::time::Instant::now() < until {
            match listener.accept() {
                Ok((mut s, _)) => {
                    s.set_nonblocking(false).unwrap();
                    s.set_read_timeout(Some(std::time::Duration::from_secs(2)))
                        .unwrap();
                    let mut buf = [0u8; 4096];
                    let _ = s.read(&mut buf);
                    let body = format!("status {status}\n");
                    let _ = write!(
                        s,
                        "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
    });
    port
}

/// A TCP port that nothing listens on right now.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    l.local_addr().unwrap().port()
}

/// `chmod +x` without a program: the file's mode gets the execute bits its read bits have.
pub fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).unwrap().permissions().mode();
    std::fs::set_permissions(
        path,
        std::fs::Permissions::from_mode(mode | (mode & 0o444) >> 2),
    )
    .unwrap();
}

/// `touch -d '<by> ago'` without a program: the file's modification time moved `by` back.
pub fn age(path: &Path, by: std::time::Duration) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(std::time::SystemTime::now() - by)
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// Signing keys (issue 34): real ed25519 keys made with ssh-keygen, for signed records.

/// A key made with ssh-keygen: its private file and its allowed-signers line.
pub struct Key {
    pub file: PathBuf,
    pub line: String,
}

pub fn key(dir: &Path, name: &str, who: &str) -> Key {
    let file = dir.join(name);
    let out = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", who, "-f"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let public = std::fs::read_to_string(file.with_extension("pub")).unwrap();
    let mut parts = public.split_whitespace();
    let line = format!(
        "{who} {} {}\n",
        parts.next().unwrap(),
        parts.next().unwrap()
    );
    Key { file, line }
}

/// The people of these tests: alice plans and decides, bob decides only, mallory is nobody.
pub struct People {
    _dir: tempfile::TempDir,
    pub alice: Key,
    pub bob: Key,
    pub mallory: Key,
    /// The allowed-signers file: alice's and bob's keys (mallory's is in no policy).
    pub allowed: PathBuf,
}

pub fn people() -> People {
    let dir = tempfile::tempdir().unwrap();
    let alice = key(dir.path(), "alice", "alice@example.com");
    let bob = key(dir.path(), "bob", "bob@example.com");
    let mallory = key(dir.path(), "mallory", "mallory@example.com");
    let allowed = dir.path().join("allowed_signers");
    std::fs::write(&allowed, format!("{}{}", alice.line, bob.line)).unwrap();
    People {
        _dir: dir,
        alice,
        bob,
        mallory,
        allowed,
    }
}

/// Signs with `key` from now on in `repo` (as `git config user.signingKey` does).
pub fn sign_as(repo: &TestRepo, key: &Key) {
    repo.git(&["config", "gpg.format", "ssh"]);
    repo.git(&["config", "user.signingKey", key.file.to_str().unwrap()]);
}
