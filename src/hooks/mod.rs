//! Installing the gate where git really runs it, the way the hook manager in charge expects,
//! and restoring exactly what was there on uninstall.
//!
//! The hooks folder is `core.hooksPath` when set (relative to the top level), else the common
//! git dir's `hooks`, so every linked worktree shares them. Who owns it decides the wiring,
//! because each manager rewrites what it owns on its next install:
//! - plain git (or another tool's `core.hooksPath`): our script; a foreign hook is renamed to
//!   `<hook>.local` and `git-rails hook <name>` runs it first with the same arguments and stdin;
//! - pre-commit's shim: our script as `<hook>.legacy`, which pre-commit itself runs first (with
//!   git's stdin) and keeps across `pre-commit install`;
//! - lefthook: a `git rails hook …` command in `lefthook-local.yml` (`lefthook.yml` with
//!   `--shared`), since lefthook renames foreign hooks to `.old` and never runs them;
//! - husky: a line in `.husky/<hook>`, since re-running `husky` rewrites `.husky/_`.
//!
//! `status` does not trust any of this: it runs each hook and looks (see [`probe`]).
//!
//! One concept a file: `setup` (where git runs hooks, which manager owns them), `plan` (the
//! changes, planned before anything is written), `install` and `uninstall`, `lefthook` (its
//! configuration files), `status`; [`blocks`] (our marked blocks in other tools' files),
//! [`probe`], [`run`] and [`agent`] (what the hooks do when git runs them).

pub mod agent;
pub mod blocks;
mod install;
mod lefthook;
mod plan;
pub mod probe;
pub mod run;
mod setup;
mod status;
pub mod trailer;
mod uninstall;

use std::path::{Path, PathBuf};

pub use install::install;
pub use plan::{Action, Options};
pub use setup::{detect, hooks_dir, Manager, Setup};
pub use status::{status, HookState, Status};
pub use uninstall::uninstall;

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

fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .map(|s| s.contains(MARKER))
        .unwrap_or(false)
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// `git-rails` as the hook scripts find it (PATH lookup).
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    crate::process::find_on_path(name, std::env::var_os("PATH").as_deref()).found()
}
