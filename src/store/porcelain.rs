//! The git subprocesses the domain still needs, each behind a function that says what it asks:
//! the work tree's view (ignored, tracked, changed, untracked), history questions doctor asks,
//! and the network (fetch and push of the record namespaces) with the remote's configuration.
//! Git's own porcelain is the reference for these and none is on the hot path; nothing outside
//! the store builds a git command line.

use std::collections::HashSet;

use crate::error::{Context, Error, Result};

use super::{ObjectId, Store};

/// What a git command that talks to a remote did: whether it succeeded, its stdout and stderr.
#[derive(Debug)]
pub struct RemoteOutcome {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Store {
    /// Whether git ignores `path` (relative to the top of the work tree), as
    /// `git check-ignore` decides it; false when git cannot say.
    pub fn is_ignored(&self, path: &str) -> bool {
        self.git(&["check-ignore", "-q", "--", path]).is_ok()
    }

    /// Paths changed in the work tree since the commit `base` (committed or not; renames as a
    /// deletion and an addition), as `git diff --name-only` lists them.
    pub fn changed_since_commit(&self, base: ObjectId) -> Result<Vec<String>> {
        let out = self.git(&[
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            &base.to_string(),
        ])?;
        Ok(nul_separated(&out))
    }

    /// Every path of the work tree git does not track and does not ignore, as
    /// `git ls-files --others --exclude-standard` lists them.
    pub fn untracked_files(&self) -> Result<Vec<String>> {
        let out = self.git(&["ls-files", "-z", "--others", "--exclude-standard"])?;
        Ok(nul_separated(&out))
    }

    /// Whether the index holds `path` (false when git cannot say).
    pub fn is_in_index(&self, path: &str) -> bool {
        let out = self
            .git(&["ls-files", "--cached", "--", path])
            .unwrap_or_default();
        !out.trim().is_empty()
    }

    /// Whether any commit of any ref touched `path` (false when git cannot say).
    pub fn path_in_history(&self, path: &str) -> bool {
        let out = self
            .git(&["log", "--all", "--format=%H", "-1", "--", path])
            .unwrap_or_default();
        !out.trim().is_empty()
    }

    /// The commits reachable from `tip` and not from `base`, as `git rev-list base..tip` lists
    /// them (newest first).
    pub fn commits_between(&self, base: ObjectId, tip: ObjectId) -> Result<Vec<ObjectId>> {
        let out = self.git(&["rev-list", &format!("{base}..{tip}")])?;
        out.lines()
            .map(|l| {
                ObjectId::from_hex(l.trim().as_bytes())
                    .map_err(|e| Error::internal(format!("git rev-list printed {l:?}: {e}")))
            })
            .collect()
    }

    /// The commits a branch, tag or remote-tracking ref holds (what `git gc` keeps), as hex;
    /// empty when git cannot say.
    pub fn commits_on_branches_tags_remotes(&self) -> HashSet<String> {
        self.git(&["rev-list", "--branches", "--tags", "--remotes"])
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// `git fetch --no-tags --no-write-fetch-head --prune <remote> <refspecs…>`, never asking
    /// for credentials on a terminal.
    pub fn fetch_refspecs(&self, remote: &str, refspecs: &[String]) -> Result<RemoteOutcome> {
        let mut args: Vec<String> = ["fetch", "--no-tags", "--no-write-fetch-head", "--prune"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(remote.to_string());
        args.extend(refspecs.iter().cloned());
        self.remote_git(&args)
    }

    /// Pushes each `(ref, tip, lease)` atomically to `remote` (`--atomic --no-verify
    /// --porcelain`), each with `--force-with-lease=<ref>:<lease>` (an empty lease: the remote
    /// must not have the ref), never asking for credentials on a terminal.
    pub fn push_with_leases(
        &self,
        remote: &str,
        pushes: &[(String, ObjectId, Option<ObjectId>)],
    ) -> Result<RemoteOutcome> {
        let mut args: Vec<String> = vec![
            "push".into(),
            "--quiet".into(),
            "--atomic".into(),
            "--no-verify".into(),
            "--porcelain".into(),
        ];
        for (name, _, theirs) in pushes {
            args.push(format!(
                "--force-with-lease={name}:{}",
                theirs.map(|t| t.to_string()).unwrap_or_default()
            ));
        }
        args.push(remote.to_string());
        for (name, tip, _) in pushes {
            args.push(format!("{tip}:{name}"));
        }
        self.remote_git(&args)
    }

    /// Every value of `key` in the repository's own configuration (`git config --local
    /// --get-all`); empty when it has none.
    pub fn local_config_all(&self, key: &str) -> Result<Vec<String>> {
        let out = self.remote_git(&[
            "config".into(),
            "--local".into(),
            "--get-all".into(),
            key.to_string(),
        ])?;
        Ok(out.stdout.lines().map(str::to_string).collect())
    }

    /// Adds a value to a multi-valued key of the repository's own configuration
    /// (`git config --local --add`).
    pub fn local_config_add(&self, key: &str, value: &str) -> Result<RemoteOutcome> {
        self.remote_git(&[
            "config".into(),
            "--local".into(),
            "--add".into(),
            key.into(),
            value.into(),
        ])
    }

    /// Runs git with `args` in the work tree (or the git dir) with the caller's environment
    /// and no terminal prompt, as sync always has: a remote's helpers see what the user's
    /// `git fetch` would.
    fn remote_git(&self, args: &[String]) -> Result<RemoteOutcome> {
        let dir = self.workdir.clone().unwrap_or_else(|| self.git_dir.clone());
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .ctx(format!("running git {}", args.join(" ")))?;
        Ok(RemoteOutcome {
            ok: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}

fn nul_separated(out: &str) -> Vec<String> {
    out.split('\0')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Runs git in `dir` for a unit test, hermetic (no system or global configuration, fixed
/// author and committer), and gives its trimmed stdout; panics when git fails.
#[cfg(test)]
pub fn test_git(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "a")
        .env("GIT_AUTHOR_EMAIL", "a@example.invalid")
        .env("GIT_COMMITTER_NAME", "c")
        .env("GIT_COMMITTER_EMAIL", "c@example.invalid")
        .envs(env.iter().copied())
        .output()
        .expect("running git");
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout)
        .expect("git's output is UTF-8")
        .trim()
        .to_string()
}

/// A new repository (`git init -q`) in a temporary folder, for unit tests that need real
/// objects; the folder lives as long as the returned guard.
#[cfg(test)]
pub fn temp_repo() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.path())
        .status()
        .expect("running git init")
        .success();
    assert!(ok, "git init failed");
    let store = Store::open(dir.path()).expect("opening the new repository");
    (dir, store)
}
