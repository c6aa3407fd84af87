//! One pipeline per repository: the lock a run, resume or abort takes without waiting, and the
//! holder file that lets a refusal name who holds it.
//!
//! Kept apart from the run loop because every command that writes the pipeline takes it first.

use super::now;
use crate::contract::SprintId;
use crate::error::{Error, Result};
use crate::store::{self, Store};

/// Holds the one-pipeline-per-repository lock; the holder file beside it says who holds it.
pub struct RunLock {
    _lock: store::Lock,
    holder: std::path::PathBuf,
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.holder);
    }
}

/// Takes the repository's pipeline lock without waiting, or refuses naming the holder: a
/// second run must not queue silently behind a long one.
pub fn take_lock(store: &Store, sprint: &SprintId) -> Result<RunLock> {
    let name = store::LockName::pipeline();
    let holder = store.lock_path(&name).with_extension("holder");
    let Some(lock) = store.try_lock(&name)? else {
        let who = std::fs::read_to_string(&holder).unwrap_or_default();
        let who = if who.trim().is_empty() {
            "holder unknown".to_string()
        } else {
            who.trim().to_string()
        };
        return Err(Error::refused(format!(
            "another pipeline is running in this repository ({who})"
        ))
        .hint("wait for it to end, or see `git rails pipeline status <sprint>`; one pipeline runs per repository"));
    };
    let _ = std::fs::write(
        &holder,
        format!(
            "sprint {sprint}, pid {}, since {}",
            std::process::id(),
            now()
        ),
    );
    Ok(RunLock {
        _lock: lock,
        holder,
    })
}
