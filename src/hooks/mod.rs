//! Installing the hook scripts of `githooks/` where git really looks for them, keeping and
//! chaining any hook that is not ours, and restoring exactly what was there on uninstall.
//!
//! The hooks folder is `core.hooksPath` when set (relative to the top level), else the common
//! git dir's `hooks`, so every linked worktree shares them. A foreign hook is renamed to
//! `<hook>.local`; `git-rails hook <name>` runs it first with the same arguments and stdin.

pub mod agent;
pub mod run;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Context, Error, Result};
use crate::store::{self, Store};

/// The marker every installed script carries.
pub const MARKER: &str = "# rails-spar hook:";

/// The scripts, as shipped in `githooks/`.
pub const PRE_PUSH: &str = include_str!("../../githooks/pre-push");
pub const COMMIT_MSG: &str = include_str!("../../githooks/commit-msg");
pub const PRE_RECEIVE: &str = include_str!("../../githooks/pre-receive");

/// The hooks a work tree gets, or a bare (server) repository gets.
pub fn hooks_for(bare: bool) -> &'static [(&'static str, &'static str)] {
    if bare {
        &[("pre-receive", PRE_RECEIVE)]
    } else {
        &[("pre-push", PRE_PUSH), ("commit-msg", COMMIT_MSG)]
    }
}

/// Where git runs hooks from in this repository, and whether `core.hooksPath` chose it.
pub fn hooks_dir(store: &Store) -> (PathBuf, bool) {
    match store.config_string("core.hooksPath") {
        Some(p) if !p.trim().is_empty() => {
            let p = expand_home(p.trim());
            let path = if p.is_absolute() {
                p
            } else {
                // git resolves a relative hooksPath against the top level (the git dir when bare).
                store
                    .workdir()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|_| store.git_dir().to_path_buf())
                    .join(p)
            };
            (path, true)
        }
        _ => (store.common_dir().join("hooks"), false),
    }
}

fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(p),
    }
}

fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .map(|s| s.contains(MARKER))
        .unwrap_or(false)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// What `install` or `uninstall` did to one hook.
#[derive(Debug, Clone, Serialize)]
pub struct Action {
    pub hook: String,
    pub path: String,
    pub did: String,
}

/// Installs our hooks; idempotent. A foreign hook is kept as `<hook>.local` and chained.
pub fn install(store: &Store) -> Result<Vec<Action>> {
    let (dir, _) = hooks_dir(store);
    let bare = store.workdir().is_err();
    std::fs::create_dir_all(&dir).ctx(format!("creating {}", dir.display()))?;
    let mut actions = Vec::new();
    for (name, script) in hooks_for(bare) {
        let path = dir.join(name);
        let local = dir.join(format!("{name}.local"));
        let did = if path.exists() || path.symlink_metadata().is_ok() {
            if is_ours(&path) {
                if std::fs::read_to_string(&path).ok().as_deref() == Some(*script)
                    && is_executable(&path)
                {
                    "already installed".to_string()
                } else {
                    store::atomic_write_mode(&path, script.as_bytes(), Some(0o755))?;
                    "updated".to_string()
                }
            } else {
                if local.exists() {
                    return Err(Error::refused(format!(
                        "{} is not ours and {} already exists, so the hook cannot be kept safely",
                        path.display(),
                        local.display()
                    ))
                    .hint(format!(
                        "merge the two into {} yourself, then run `git rails hooks install` again",
                        local.display()
                    )));
                }
                std::fs::rename(&path, &local).ctx(format!(
                    "keeping {} as {}",
                    path.display(),
                    local.display()
                ))?;
                store::atomic_write_mode(&path, script.as_bytes(), Some(0o755))?;
                format!("installed; the existing hook is kept as {name}.local and runs first")
            }
        } else {
            store::atomic_write_mode(&path, script.as_bytes(), Some(0o755))?;
            "installed".to_string()
        };
        actions.push(Action {
            hook: name.to_string(),
            path: path.display().to_string(),
            did,
        });
    }
    Ok(actions)
}

/// Removes our hooks and puts back any hook that was kept as `<hook>.local`.
pub fn uninstall(store: &Store) -> Result<Vec<Action>> {
    let (dir, _) = hooks_dir(store);
    let bare = store.workdir().is_err();
    let mut actions = Vec::new();
    for (name, _) in hooks_for(bare) {
        let path = dir.join(name);
        let local = dir.join(format!("{name}.local"));
        let did = if is_ours(&path) {
            std::fs::remove_file(&path).ctx(format!("removing {}", path.display()))?;
            if local.exists() {
                std::fs::rename(&local, &path).ctx(format!("restoring {}", path.display()))?;
                "removed; the hook that was there before is restored".to_string()
            } else {
                "removed".to_string()
            }
        } else if path.exists() {
            "not ours; left alone".to_string()
        } else {
            "not installed".to_string()
        };
        actions.push(Action {
            hook: name.to_string(),
            path: path.display().to_string(),
            did,
        });
    }
    Ok(actions)
}

/// One hook's state.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookState {
    pub hook: String,
    pub path: String,
    /// `installed`, `missing`, `foreign`, `not-executable`, `outdated`.
    pub state: String,
    pub chained: Option<String>,
    pub problems: Vec<String>,
}

/// The `rails-hooks/v1` status document.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub schema: &'static str,
    pub hooks_dir: String,
    pub core_hooks_path: bool,
    pub git_rails: Option<String>,
    pub hooks: Vec<HookState>,
    pub problems: Vec<String>,
}

/// `git-rails` as the hook scripts find it (PATH lookup).
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// What is installed where, and every problem that would make a hook not run.
pub fn status(store: &Store) -> Status {
    let (dir, via_config) = hooks_dir(store);
    let bare = store.workdir().is_err();
    let mut problems = Vec::new();
    let mut hooks = Vec::new();
    for (name, script) in hooks_for(bare) {
        let path = dir.join(name);
        let local = dir.join(format!("{name}.local"));
        let mut hp = Vec::new();
        let state = if !path.exists() {
            hp.push(format!(
                "{name} is not installed (run `git rails hooks install`)"
            ));
            "missing"
        } else if !is_ours(&path) {
            hp.push(format!(
                "{name} is another tool's hook; ours is not installed (run `git rails hooks install` to chain it)"
            ));
            "foreign"
        } else if !is_executable(&path) {
            hp.push(format!(
                "{name} lost its run bit, so git skips it silently (run `git rails hooks install`)"
            ));
            "not-executable"
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(*script) {
            hp.push(format!(
                "{name} is an older version of our script (run `git rails hooks install`)"
            ));
            "outdated"
        } else {
            "installed"
        };
        let chained = local.exists().then(|| format!("{name}.local"));
        if chained.is_some() && !is_executable(&local) {
            hp.push(format!(
                "{name}.local is not executable, so it is skipped as git would skip it"
            ));
        }
        problems.extend(hp.iter().cloned());
        hooks.push(HookState {
            hook: name.to_string(),
            path: path.display().to_string(),
            state: state.to_string(),
            chained,
            problems: hp,
        });
    }
    // Hooks left in .git/hooks while core.hooksPath points elsewhere are shadowed.
    if via_config {
        let default = store.common_dir().join("hooks");
        for (name, _) in hooks_for(bare) {
            if default != dir && is_ours(&default.join(name)) {
                problems.push(format!(
                    "{} is shadowed: core.hooksPath points git at {}",
                    default.join(name).display(),
                    dir.display()
                ));
            }
        }
    }
    let git_rails = find_on_path("git-rails");
    if git_rails.is_none() {
        problems.push(
            "git-rails is not on PATH, so the installed hooks refuse every push and commit they guard"
                .into(),
        );
    }
    Status {
        schema: "rails-hooks/v1",
        hooks_dir: dir.display().to_string(),
        core_hooks_path: via_config,
        git_rails: git_rails.map(|p| p.display().to_string()),
        hooks,
        problems,
    }
}
