//! Where git runs this repository's hooks and which hook manager owns that folder.
//!
//! Kept apart from the wiring because every command reads it first: `install` and `uninstall`
//! choose how to wire from it, and `status` names the manager it found.

use std::path::{Path, PathBuf};

use super::lefthook::{LEFTHOOK_LOCAL, LEFTHOOK_MAIN};
use super::read;
use crate::store::Store;

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

/// pre-commit's shim, recognised as pre-commit does: by its `# ID:` line.
pub(super) fn is_pre_commit(path: &Path) -> bool {
    read(path).is_some_and(|s| {
        s.lines()
            .any(|l| l.starts_with("# ID: ") && l.len() == "# ID: ".len() + 32)
            && s.contains("pre-commit")
    })
}

/// lefthook's shim, recognised as lefthook does: by the word `LEFTHOOK`.
pub(super) fn is_lefthook(path: &Path) -> bool {
    read(path).is_some_and(|s| s.contains("LEFTHOOK"))
}

/// Who runs the hooks of this repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Manager {
    /// Plain git in `.git/hooks` (pre-commit's shims live here too, hook by hook).
    Git,
    /// husky: `core.hooksPath` is `.husky/_`; the user's scripts are `.husky/<hook>`.
    Husky { scripts: PathBuf },
    /// lefthook: a configuration at the top level.
    Lefthook { top: PathBuf },
    /// Another tool (or the user) set `core.hooksPath`.
    HooksPath,
}

impl Manager {
    pub fn name(&self) -> &'static str {
        match self {
            Manager::Git => "git",
            Manager::Husky { .. } => "husky",
            Manager::Lefthook { .. } => "lefthook",
            Manager::HooksPath => "core.hooksPath",
        }
    }
}

/// The repository's hook setup: where git looks, who owns it, and where `core.hooksPath`
/// came from.
#[derive(Debug, Clone)]
pub struct Setup {
    pub dir: PathBuf,
    pub via_config: bool,
    /// `local`, `global`, `system`, `worktree` or `command` when `core.hooksPath` is set.
    pub scope: Option<String>,
    pub manager: Manager,
    /// A `.husky` folder husky has not activated yet (no `core.hooksPath`, e.g. a fresh clone
    /// before `npm install`): the gate goes into its scripts too, so it keeps running once
    /// husky takes over.
    pub husky_pending: Option<PathBuf>,
}

pub fn detect(store: &Store) -> Setup {
    let (dir, via_config) = hooks_dir(store);
    let scope = via_config
        .then(|| store.config_scope("core.hooksPath"))
        .flatten();
    let top = store.workdir().ok().map(Path::to_path_buf);
    let manager = match &top {
        None => Manager::Git,
        Some(top) if via_config => {
            let husky = top.join(".husky");
            if dir.file_name().is_some_and(|n| n == "_")
                && dir.parent().is_some_and(|p| same_path(p, &husky))
            {
                Manager::Husky { scripts: husky }
            } else {
                Manager::HooksPath
            }
        }
        Some(top) => {
            let configured = LEFTHOOK_MAIN
                .iter()
                .chain(LEFTHOOK_LOCAL)
                .any(|f| top.join(f).exists());
            let shims = ["pre-push", "commit-msg", "pre-commit", "prepare-commit-msg"]
                .iter()
                .any(|h| is_lefthook(&dir.join(h)));
            if configured || shims {
                Manager::Lefthook { top: top.clone() }
            } else {
                Manager::Git
            }
        }
    };
    let husky_pending = match (&manager, &top) {
        (Manager::Git, Some(top)) if top.join(".husky").is_dir() => Some(top.join(".husky")),
        _ => None,
    };
    Setup {
        dir,
        via_config,
        scope,
        manager,
        husky_pending,
    }
}

pub(super) fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
