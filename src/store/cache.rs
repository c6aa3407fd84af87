//! Memos: values derived from git objects, kept on disk so the next command need not derive
//! them again. The one place a memo's file is named, written and read; a domain module hands
//! a namespace, key bytes and value bytes, and never sees a path.
//!
//! A memo is keyed by content: the caller's key names immutable objects (commit or tree ids),
//! and this module adds [`crate::BUILD_ID`], so an entry never goes stale and nothing
//! invalidates one; a newer build or another record is simply another key. An entry lives at
//! `<common dir>/rails/cache/<namespace>/<sha256 of the build and the key>` (under
//! `rails/cache/`, which the agent guard keeps agents' commands out of) and starts with a header
//! naming that digest and the value's length: a file cut short, renamed, written by hand in
//! another shape or by another build is a miss, never an error. Reading costs one `open` and
//! one `read`; writing is a temporary file renamed over the entry, not synced (a crash leaves a
//! miss). Each namespace keeps its newest [`KEPT`] entries; older ones are removed when a new
//! one is written.
//!
//! Local state, not a record: the value is trusted as the repository's own hooks are (whoever
//! can edit it can edit those). What must judge from the objects alone, as a fresh clone in CI
//! does (`verify`), calls [`Store::forgo_memos`] first: that store then reads and writes none.
//! `doctor` derives what a memo holds again and names an entry that disagrees.
//!
//! Two memos exist, each where a benchmark showed the budget needs it (figures in their module
//! docs): the evidence chain's replay (`evidence::chain`) and the spar gate's view of a series
//! (`spar::series::gate_view`).

use std::path::PathBuf;

use super::Store;

/// Entries kept per namespace.
pub const KEPT: usize = 16;

/// The first bytes of every entry.
const MAGIC: &str = "rails-memo/1";

/// A namespace of memos: its own folder, one kind of value.
#[derive(Debug, Clone, Copy)]
pub struct Memo {
    namespace: &'static str,
}

impl Memo {
    /// The memos of `namespace` (lowercase letters, digits and `-`: a folder name).
    pub const fn new(namespace: &'static str) -> Memo {
        Memo { namespace }
    }

    fn dir(&self, store: &Store) -> PathBuf {
        store.common_dir().join("rails/cache").join(self.namespace)
    }

    /// The digest that names the entry of `key` in this build.
    fn digest(&self, key: &[u8]) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(self.namespace.as_bytes());
        h.update([0]);
        h.update(crate::BUILD_ID.as_bytes());
        h.update([0]);
        h.update(key);
        format!("{:x}", h.finalize())
    }

    /// Where the entry of `key` lives, for a message that names it (`doctor`'s fix).
    pub fn location(&self, store: &Store, key: &[u8]) -> PathBuf {
        self.dir(store).join(self.digest(key))
    }

    /// The value kept for `key`, or None (never kept, not readable as this module writes, or
    /// a store that forgoes memos).
    pub fn get(&self, store: &Store, key: &[u8]) -> Option<Vec<u8>> {
        if store.memos_off.get() {
            return None;
        }
        let digest = self.digest(key);
        let bytes = std::fs::read(self.dir(store).join(&digest)).ok()?;
        let end = bytes.iter().position(|b| *b == b'\n')?;
        let header = std::str::from_utf8(&bytes[..end]).ok()?;
        let mut fields = header.split(' ');
        let (magic, named, len) = (fields.next()?, fields.next()?, fields.next()?);
        let len: usize = len.parse().ok()?;
        let value = &bytes[end + 1..];
        (magic == MAGIC && named == digest && value.len() == len && fields.next().is_none())
            .then(|| value.to_vec())
    }

    /// Keeps `value` for `key`. Best effort: a repository that cannot be written still gets
    /// its answer, derived again next time.
    pub fn put(&self, store: &Store, key: &[u8], value: &[u8]) {
        if store.memos_off.get() {
            return;
        }
        let digest = self.digest(key);
        let dir = self.dir(store);
        let mut bytes = format!("{MAGIC} {digest} {}\n", value.len()).into_bytes();
        bytes.extend_from_slice(value);
        if super::cache_write(&dir.join(&digest), &bytes).is_err() {
            return;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if files.len() > KEPT {
            files.sort();
            for (_, old) in &files[..files.len() - KEPT] {
                let _ = std::fs::remove_file(old);
            }
        }
    }
}

impl Store {
    /// From now on this store neither reads nor writes memos: everything it is asked is
    /// derived from the records alone, as a fresh clone derives it (`verify`, what CI runs).
    pub fn forgo_memos(&self) {
        self.memos_off.set(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: Memo = Memo::new("test-memo");

    #[test]
    fn a_value_reads_back_under_its_key_only() {
        let (_d, store) = crate::store::temp_repo();
        assert_eq!(M.get(&store, b"k"), None);
        M.put(&store, b"k", b"value\nwith lines");
        assert_eq!(
            M.get(&store, b"k").as_deref(),
            Some(&b"value\nwith lines"[..])
        );
        assert_eq!(M.get(&store, b"other"), None);
        assert_eq!(Memo::new("other-memo").get(&store, b"k"), None);
        // An empty value is a value.
        M.put(&store, b"e", b"");
        assert_eq!(M.get(&store, b"e").as_deref(), Some(&b""[..]));
    }

    /// A file cut short, grown, with another header, or moved to another key's name is a miss.
    #[test]
    fn an_entry_not_as_written_is_a_miss() {
        let (_d, store) = crate::store::temp_repo();
        M.put(&store, b"k", b"0123456789");
        let path = M.dir(&store).join(M.digest(b"k"));
        let written = std::fs::read(&path).unwrap();
        let cut = written[..written.len() - 1].to_vec();
        let mut grown = written.clone();
        grown.push(b'x');
        let other_header = String::from_utf8(written.clone())
            .unwrap()
            .replacen(MAGIC, "rails-memo/0", 1)
            .into_bytes();
        for bad in [cut, grown, other_header, Vec::new(), b"{}".to_vec()] {
            std::fs::write(&path, &bad).unwrap();
            assert_eq!(
                M.get(&store, b"k"),
                None,
                "{}",
                String::from_utf8_lossy(&bad)
            );
        }
        // Another key's entry renamed to this key's name.
        M.put(&store, b"j", b"0123456789");
        std::fs::copy(M.dir(&store).join(M.digest(b"j")), &path).unwrap();
        assert_eq!(M.get(&store, b"k"), None);
        // A folder where the entry should be: a miss, and put does not fail either.
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert_eq!(M.get(&store, b"k"), None);
        M.put(&store, b"k", b"v");
        assert_eq!(M.get(&store, b"k"), None);
    }

    #[test]
    fn a_store_that_forgoes_memos_reads_and_writes_none() {
        let (_d, store) = crate::store::temp_repo();
        M.put(&store, b"k", b"v");
        store.forgo_memos();
        assert_eq!(M.get(&store, b"k"), None);
        M.put(&store, b"j", b"w");
        let (_e, fresh) = (0, Store::open(store.git_dir()).unwrap());
        assert_eq!(M.get(&fresh, b"k").as_deref(), Some(&b"v"[..]));
        assert_eq!(M.get(&fresh, b"j"), None);
    }

    #[test]
    fn a_namespace_keeps_its_newest_entries() {
        let (_d, store) = crate::store::temp_repo();
        for i in 0..KEPT + 5 {
            M.put(&store, format!("k{i}").as_bytes(), b"v");
            // Distinct modification times, oldest first.
            let path = M.dir(&store).join(M.digest(format!("k{i}").as_bytes()));
            let t = std::time::SystemTime::UNIX_EPOCH
                + std::time::Duration::from_secs(1_000 + i as u64);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
        M.put(&store, b"newest", b"v");
        let left = std::fs::read_dir(M.dir(&store)).unwrap().count();
        assert_eq!(left, KEPT);
        assert!(M.get(&store, b"newest").is_some());
        assert!(M.get(&store, b"k0").is_none());
        assert!(M.get(&store, format!("k{}", KEPT + 4).as_bytes()).is_some());
    }
}
