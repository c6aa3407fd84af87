//! Atomic file writes: a temporary file in the same folder, synced, then renamed over the
//! target, so a crash leaves the old file or the new one, never half of one.

use std::io::Write;
use std::path::Path;

use crate::error::{Context, Result};

/// Writes `bytes` to `path` atomically with the default mode (0666 less the user's umask, as
/// any file a program creates: reports and exported records are the user's, readable as the
/// user's other files are; a temporary file's own 0600 is never left on them).
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    atomic_write_mode(path, bytes, None)
}

/// Writes `bytes` to `path` atomically and, when `mode` is given, sets those permission bits
/// before the rename (so the file never exists with other bits).
pub fn atomic_write_mode(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let perms = mode.map(std::fs::Permissions::from_mode);
    write_renamed(path, bytes, Durability::Synced, perms)
}

/// Writes a cache file (something derived again when it is missing or cannot be read): a
/// temporary file renamed over the target, not synced. A crash may leave it empty or cut
/// short, which a reader takes as no cache; a gate on every push does not wait for the disk.
pub fn cache_write(path: &Path, bytes: &[u8]) -> Result<()> {
    write_renamed(path, bytes, Durability::Unsynced, None)
}

/// Replaces a file git reads right after (the commit message a commit-msg hook was given) the
/// way `git interpret-trailers --in-place` does: a temporary file with the old file's
/// permissions, renamed over it, not synced (git does not sync that file either).
pub fn replace_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let perms = std::fs::metadata(path)
        .ctx(format!("reading {}", path.display()))?
        .permissions();
    write_renamed(path, bytes, Durability::Unsynced, Some(perms))
}

/// Whether the temporary file reaches the disk before it is renamed over the target.
#[derive(PartialEq)]
enum Durability {
    Synced,
    Unsynced,
}

/// The one way every writer above replaces a file: a temporary file in the same folder (made
/// when missing), written, synced or not, given `perms` when some, then renamed over `path`.
fn write_renamed(
    path: &Path,
    bytes: &[u8],
    sync: Durability,
    perms: Option<std::fs::Permissions>,
) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).ctx(format!("creating {}", dir.display()))?;
    use std::os::unix::fs::PermissionsExt;
    // Created 0666 less the umask (open(2) applies it), not tempfile's private 0600.
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .ctx(format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .ctx(format!("writing {}", path.display()))?;
    if sync == Durability::Synced {
        tmp.as_file()
            .sync_all()
            .ctx(format!("syncing {}", path.display()))?;
    }
    if let Some(perms) = perms {
        std::fs::set_permissions(tmp.path(), perms)
            .ctx(format!("setting the mode of {}", path.display()))?;
    }
    tmp.persist(path)
        .map_err(|e| e.error)
        .ctx(format!("replacing {}", path.display()))?;
    Ok(())
}
