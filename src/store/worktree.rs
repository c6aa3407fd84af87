//! The work tree as git sees it: the tree of the tracked (and optionally untracked) files
//! through a temporary index, the index's own tree, tracked and untracked paths, and checkouts
//! of a tree into a folder of their own. git's porcelain is the reference for what is tracked,
//! so these run git with a temporary index instead of reading the index in process.

use std::path::Path;

use super::*;
use crate::error::{Context, Result};

impl Store {
    /// The tree id of the tracked content as it is now (HEAD, the index, and the changes to
    /// tracked files in the work tree), written through a temporary index so the user's index
    /// and work tree are untouched; and whether it differs from HEAD's tree. Files git does not
    /// track never enter it: a record carries this tree to every clone the records reach.
    pub fn worktree_tree(&self) -> Result<(ObjectId, bool)> {
        self.workdir()?;
        let tree = self.tree_through_temp_index(&self.git_dir.join("index"), true)?;
        let dirty = match self.head_commit()? {
            Some(head) => self.tree_of(head)? != tree,
            None => true,
        };
        Ok((tree, dirty))
    }

    /// The tree of the tracked files as they are in the work tree now (untracked files left
    /// out), through a temporary index: what an agent changed since a point in time.
    pub fn tracked_tree(&self) -> Result<ObjectId> {
        self.workdir()?;
        let tmp_dir = tempfile::Builder::new()
            .prefix("rails-index-")
            .tempdir_in(&self.git_dir)
            .ctx("creating a temporary index folder")?;
        let tmp_index = tmp_dir.path().join("index");
        let index = self.git_dir.join("index");
        if index.exists() {
            std::fs::copy(&index, &tmp_index).ctx(format!("copying {}", index.display()))?;
        }
        let env = [("GIT_INDEX_FILE", tmp_index.as_path())];
        self.git_with(&["add", "-u", "--", "."], &env)?;
        let hex = self.git_with(&["write-tree"], &env)?;
        ObjectId::from_hex(hex.trim().as_bytes())
            .ctx(format!("reading the tree id {:?}", hex.trim()))
    }

    /// The tree of the index git is committing (`GIT_INDEX_FILE` in a hook, else the
    /// repository's index), computed from a copy so the index itself is not touched.
    pub fn index_tree(&self) -> Result<ObjectId> {
        let index = match std::env::var_os("GIT_INDEX_FILE") {
            Some(p) => absolute(Path::new(&p)),
            None => self.git_dir.join("index"),
        };
        self.tree_through_temp_index(&index, false)
    }

    /// `git write-tree` on a copy of `index` (optionally after `git add -u`: changes to tracked
    /// files only), so neither the index nor the work tree changes.
    fn tree_through_temp_index(&self, index: &Path, add_all: bool) -> Result<ObjectId> {
        // A fresh path in a private folder: git refuses an existing empty file as an index.
        let tmp_dir = tempfile::Builder::new()
            .prefix("rails-index-")
            .tempdir_in(&self.git_dir)
            .ctx("creating a temporary index folder")?;
        let tmp_index = tmp_dir.path().join("index");
        if index.exists() {
            // Starting from a copy lets git reuse the index's stat data.
            std::fs::copy(index, &tmp_index).ctx(format!("copying {}", index.display()))?;
        }
        let env = [("GIT_INDEX_FILE", tmp_index.as_path())];
        if add_all {
            self.git_with(&["add", "-u"], &env)?;
        }
        let hex = self.git_with(&["write-tree"], &env)?;
        ObjectId::from_hex(hex.trim().as_bytes())
            .ctx(format!("reading the tree id {:?}", hex.trim()))
    }

    /// The paths of the work tree git does not track and does not ignore (by name only: their
    /// content is never read), at most `limit` of them.
    pub fn untracked_paths(&self, limit: usize) -> Result<Vec<String>> {
        let out = self.git(&[
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
            "--full-name",
        ])?;
        Ok(out
            .split('\0')
            .filter(|p| !p.is_empty())
            .take(limit)
            .map(str::to_string)
            .collect())
    }

    /// The paths git tracks (the index's entries), as `git ls-files` lists them. Off the hot
    /// path: `contract freeze` reads it to capture only tracked files.
    pub fn tracked_files(&self) -> Result<Vec<String>> {
        let out = self.git(&["ls-files", "-z"])?;
        Ok(out
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// Checks out `tree` into a new folder `dir` (a detached `git worktree`, hooks off), for
    /// re-running a check on exactly that content; the user's work tree and index are not
    /// touched. Remove it with [`Store::remove_checkout`].
    pub fn checkout_tree(&self, tree: ObjectId, dir: &Path) -> Result<()> {
        // The commit only carries the tree into `git worktree add` and is never referenced, so
        // it needs no one's identity: a CI runner has none, and git refuses `commit-tree`
        // without one ("Author identity unknown").
        let commit = self.git(&[
            "-c",
            "user.name=git-rails verify",
            "-c",
            "user.email=git-rails@localhost",
            "commit-tree",
            &tree.to_string(),
            "-m",
            "git-rails verify: a temporary checkout",
        ])?;
        let no_hooks = dir.with_extension("hooks");
        std::fs::create_dir_all(&no_hooks).ctx(format!("creating {}", no_hooks.display()))?;
        let hooks = format!("core.hooksPath={}", no_hooks.display());
        let target = dir.to_string_lossy();
        self.git(&[
            "-c",
            &hooks,
            "worktree",
            "add",
            "--detach",
            "--quiet",
            target.as_ref(),
            commit.trim(),
        ])?;
        Ok(())
    }

    /// Removes a checkout made by [`Store::checkout_tree`] and its worktree entry.
    pub fn remove_checkout(&self, dir: &Path) -> Result<()> {
        let target = dir.to_string_lossy();
        self.git(&["worktree", "remove", "--force", target.as_ref()])?;
        let _ = std::fs::remove_dir_all(dir.with_extension("hooks"));
        Ok(())
    }
}
