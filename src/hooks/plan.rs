//! The changes `install` and `uninstall` make, planned in full before anything is written.
//!
//! Kept apart from the two commands so that both go through one path: a `--dry-run` shows
//! exactly the planned changes (with the diff of every file another tool or the user owns),
//! and a refusal found while planning leaves nothing half written.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::blocks;
use super::lefthook::lefthook_install;
use super::setup::Setup;
use crate::error::{Context, Error, Result};
use crate::store;

/// What `install` or `uninstall` did (or, with `--dry-run`, would do) to one hook.
#[derive(Debug, Clone, Serialize)]
pub struct Action {
    pub hook: String,
    pub path: String,
    pub did: String,
    /// The change to a file another tool or the user owns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// How `install` and `uninstall` run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Show the changes; write nothing.
    pub dry_run: bool,
    /// lefthook: edit the shared (tracked) configuration instead of the local one.
    pub shared: bool,
    /// Accept a `core.hooksPath` from the global or system configuration.
    pub global: bool,
}

/// One change to the file system, planned before anything is written.
pub(super) enum Op {
    Write(PathBuf, String, u32),
    Rename(PathBuf, PathBuf),
    Remove(PathBuf),
}

pub(super) struct Plan {
    pub(super) ops: Vec<Op>,
    pub(super) actions: Vec<Action>,
    /// Run `lefthook install` afterwards so its hooks match the edited configuration.
    pub(super) lefthook_sync: Option<PathBuf>,
}

impl Plan {
    pub(super) fn new() -> Plan {
        Plan {
            ops: Vec::new(),
            actions: Vec::new(),
            lefthook_sync: None,
        }
    }
    pub(super) fn act(
        &mut self,
        hook: &str,
        path: &Path,
        did: impl Into<String>,
        diff: Option<String>,
    ) {
        self.actions.push(Action {
            hook: hook.to_string(),
            path: path.display().to_string(),
            did: did.into(),
            diff,
        });
    }
    /// Writes `new` over a user file (or removes it when None), recording the diff.
    pub(super) fn edit(
        &mut self,
        hook: &str,
        path: &Path,
        old: Option<&str>,
        new: Option<String>,
        did: &str,
    ) {
        let d = blocks::diff(&path.display().to_string(), old, new.as_deref());
        match new {
            Some(n) => {
                let mode = file_mode(path).unwrap_or(0o644);
                self.ops.push(Op::Write(path.to_path_buf(), n, mode));
            }
            None => self.ops.push(Op::Remove(path.to_path_buf())),
        }
        self.act(hook, path, did, Some(d));
    }
    pub(super) fn apply(self, dry_run: bool) -> Result<Vec<Action>> {
        let mut actions = self.actions;
        if dry_run {
            for a in &mut actions {
                a.did = format!("would be {}", a.did);
            }
            if let Some(top) = &self.lefthook_sync {
                actions.push(Action {
                    hook: "lefthook".into(),
                    path: top.display().to_string(),
                    did: "would run `lefthook install` so lefthook's hooks match its configuration"
                        .into(),
                    diff: None,
                });
            }
            return Ok(actions);
        }
        for op in self.ops {
            match op {
                Op::Write(p, text, mode) => {
                    store::atomic_write_mode(&p, text.as_bytes(), Some(mode))?
                }
                Op::Rename(a, b) => std::fs::rename(&a, &b).ctx(format!(
                    "renaming {} to {}",
                    a.display(),
                    b.display()
                ))?,
                Op::Remove(p) => {
                    std::fs::remove_file(&p).ctx(format!("removing {}", p.display()))?
                }
            }
        }
        if let Some(top) = &self.lefthook_sync {
            actions.push(lefthook_install(top));
        }
        Ok(actions)
    }
}

fn file_mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}

pub(super) fn planned_text(plan: &Plan, path: &Path) -> Option<String> {
    plan.ops.iter().find_map(|op| match op {
        Op::Write(p, t, _) if p == path => Some(t.clone()),
        _ => None,
    })
}

/// A `core.hooksPath` from the global or system configuration serves every repository of the
/// user: hooks put there gate all of them, so that takes `--global`.
pub(super) fn refuse_global(setup: &Setup, opts: Options) -> Result<()> {
    match setup.scope.as_deref() {
        Some(scope @ ("global" | "system")) if !opts.global => Err(Error::refused(format!(
            "core.hooksPath is set in your {scope} git configuration ({}), so hooks written there would run in every repository that uses it, not just this one; nothing was written",
            setup.dir.display()
        ))
        .hint("run `git rails hooks install --global` to gate every such repository on purpose, or give this repository its own folder: `git config --local core.hooksPath .git/hooks`")),
        _ => Ok(()),
    }
}
