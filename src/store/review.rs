//! The git subprocesses spar's review rounds need, behind named functions so no module above
//! the store runs git itself: the change as the review packet shows it, and whether a folder or
//! file spar is asked to write (`run --out`, `gate --out`) is ignored by a repository around it.

use std::ffi::OsStr;
use std::path::Path;

use super::{ObjectId, Store};
use crate::error::{Context, Result};

impl Store {
    /// `git diff --stat base..head`, without colour or external diff drivers.
    pub fn review_diff_stat(&self, base: ObjectId, head: ObjectId) -> Result<String> {
        let range = format!("{base}..{head}");
        self.git(&["diff", "--no-color", "--no-ext-diff", "--stat", &range])
    }

    /// `git diff base..head`, without colour or external diff drivers.
    pub fn review_diff(&self, base: ObjectId, head: ObjectId) -> Result<String> {
        let range = format!("{base}..{head}");
        self.git(&["diff", "--no-color", "--no-ext-diff", &range])
    }

    /// Whether the repository whose work tree is `repo` ignores `path` (relative to it):
    /// `Some(true)` ignored, `Some(false)` not ignored (or tracked), `None` when git cannot
    /// tell. It asks any repository, not only this store's: an output path may sit inside
    /// several.
    pub fn ignores(repo: &Path, path: &OsStr) -> Result<Option<bool>> {
        let status = std::process::Command::new("git")
            .args(["check-ignore", "-q", "--"])
            .arg(path)
            .current_dir(repo)
            .status()
            .ctx("running git check-ignore")?;
        Ok(match status.code() {
            Some(0) => Some(true),
            Some(1) => Some(false),
            _ => None,
        })
    }
}
