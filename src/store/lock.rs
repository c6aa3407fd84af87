//! Exclusive file locks (`fs2`) under the git common dir, shared by every worktree of a clone.

use std::fs::File;
use std::path::{Path, PathBuf};

use fs2::FileExt;

use crate::error::{Context, Result};

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
/// holds it (nothing waits).
pub fn try_lock(common_dir: &Path, relative: &str) -> Result<Option<Lock>> {
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
pub fn lock(common_dir: &Path, relative: &str, waiting: impl FnOnce()) -> Result<Lock> {
    let path = common_dir.join(relative);
    let file = open(&path)?;
    if file.try_lock_exclusive().is_err() {
        waiting();
        file.lock_exclusive()
            .ctx(format!("taking the lock {}", path.display()))?;
    }
    Ok(Lock { file, path })
}
