//! Exclusive file locks (`fs2`) under the git common dir, shared by every worktree of a clone.
//! Every lock has a [`LockName`], built here only: which writers exclude each other is decided
//! in one file (a sync merging a ref takes the lock its local writer takes).

use std::fmt::Display;
use std::fs::File;
use std::path::{Path, PathBuf};

use fs2::FileExt;

use super::refs::Record;
use super::Store;
use crate::error::{Context, Result};

/// The name of one of the tools' locks: a file under the git common dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockName(String);

impl LockName {
    /// Held while a sprint's contract is frozen.
    pub fn contract(sprint: impl Display) -> LockName {
        LockName(format!("rails/locks/contract-{sprint}.lock"))
    }
    /// Held while a transition is appended to a sprint's evidence chain.
    pub fn evidence(sprint: impl Display) -> LockName {
        LockName(format!("rails/locks/evidence-{sprint}.lock"))
    }
    /// Held while a spar series is written (a round, a triage, a waiver).
    pub fn series(series: impl Display) -> LockName {
        LockName(format!("spar/locks/{series}.lock"))
    }
    /// The repository's one pipeline run.
    pub fn pipeline() -> LockName {
        LockName("rails/locks/pipeline.lock".into())
    }
    /// One sync of this clone at a time.
    pub fn sync() -> LockName {
        LockName("rails/locks/sync.lock".into())
    }
    /// The lock a local writer of the record ref holds, so a merge never races one (None when
    /// its writers need none beyond the ref's compare-and-swap).
    pub fn writer_of(record: Record<'_>) -> Option<LockName> {
        match record {
            Record::Evidence(sprint) => Some(LockName::evidence(sprint)),
            Record::SparSeries(series) => Some(LockName::series(series)),
            Record::Contract(_) | Record::Pipeline(_) | Record::Notes => None,
        }
    }
    /// The lock file, relative to the git common dir.
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// The lock file in the clone whose git common dir is `common_dir`.
    pub fn path(&self, common_dir: &Path) -> PathBuf {
        common_dir.join(&self.0)
    }
}

impl Store {
    /// Takes the lock `name`; when another process holds it, `waiting` is called once and the
    /// call blocks until it is free.
    pub fn lock(&self, name: &LockName, waiting: impl FnOnce()) -> Result<Lock> {
        lock(self.common_dir(), name.as_str(), waiting)
    }

    /// Takes the lock `name` if it is free; None when another process holds it.
    pub fn try_lock(&self, name: &LockName) -> Result<Option<Lock>> {
        try_lock(self.common_dir(), name.as_str())
    }

    /// Where the lock `name` lives in this clone.
    pub fn lock_path(&self, name: &LockName) -> PathBuf {
        name.path(self.common_dir())
    }
}

/// A held lock; released when dropped (and by the OS when the process dies).
#[derive(Debug)]
pub struct Lock {
    file: File,
    pub path: PathBuf,
}

impl Lock {
    /// What the holder wrote into the lock file (empty when nothing): a writer notes there what
    /// it is about to leave on disk, so the next holder knows what a killed one left behind.
    pub fn journal(&self) -> String {
        use std::io::{Read, Seek};
        let mut f = &self.file;
        let mut s = String::new();
        if f.seek(std::io::SeekFrom::Start(0)).is_ok() {
            let _ = f.read_to_string(&mut s);
        }
        s
    }

    /// Replaces what the lock file says (see [`Lock::journal`]).
    pub fn set_journal(&self, text: &str) -> Result<()> {
        use std::io::{Seek, Write};
        // Written over the old text, then cut to length: a holder killed in between leaves the
        // new note whole (any rest of the old one follows on a line of its own), never nothing.
        let mut f = &self.file;
        f.seek(std::io::SeekFrom::Start(0))
            .and_then(|_| f.write_all(text.as_bytes()))
            .and_then(|_| f.set_len(text.len() as u64))
            .ctx(format!("writing {}", self.path.display()))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = FileExt::unlock(&self.file);
    }
}

/// Takes the exclusive lock `<common_dir>/<relative>` if it is free; None when another process
/// holds it (nothing waits). Outside the store, use [`Store::try_lock`] with a [`LockName`].
pub(super) fn try_lock(common_dir: &Path, relative: &str) -> Result<Option<Lock>> {
    let path = common_dir.join(relative);
    let file = open(&path)?;
    match file.try_lock_exclusive() {
        Ok(()) => Ok(Some(Lock { file, path })),
        Err(_) => Ok(None),
    }
}

fn open(path: &Path) -> Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).ctx(format!("creating {}", dir.display()))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .ctx(format!("opening the lock {}", path.display()))
}

/// Takes the exclusive lock `<common_dir>/<relative>`, creating folders as needed. When another
/// process holds it, `waiting` is called once and the call blocks until the lock is free.
/// Outside the store, use [`Store::lock`] with a [`LockName`] (spar's last callers move to it).
pub(super) fn lock(common_dir: &Path, relative: &str, waiting: impl FnOnce()) -> Result<Lock> {
    let path = common_dir.join(relative);
    let file = open(&path)?;
    if file.try_lock_exclusive().is_err() {
        waiting();
        file.lock_exclusive()
            .ctx(format!("taking the lock {}", path.display()))?;
    }
    Ok(Lock { file, path })
}
