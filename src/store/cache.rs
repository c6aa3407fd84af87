//! Memos: what a decision derived from records, kept so the next ask with the same inputs does
//! not derive it again. The one place that owns their files, keys and invalidation; no domain
//! module reads or writes a memo file itself.
//!
//! A memo is local state under `<common dir>/rails/cache/<memo>/<name>`: one file per name,
//! holding the build that wrote it ([`crate::BUILD_ID`], a hash of the sources), the key it was
//! derived for (the ids of the records it read: ref tips, tree ids), and the value. A read
//! answers only for the same build and the same key; anything else (another build, another
//! key, a file cut short by a crash, a file that is not ours) is a miss, never an error, and
//! the caller derives again and overwrites it. Nothing is ever deleted to invalidate: a new key
//! misses.
//!
//! A memo is trusted as the repository's own hooks are: whoever can write it can also delete
//! the hooks. Records that leave the clone are judged by their receivers, who have none of this
//! clone's memos; `git rails doctor` derives every memo again and names one that disagrees.

use std::path::PathBuf;

use super::Store;
use crate::error::Result;

/// What is memoised. Each is one derivation, named here so its files are found in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memo {
    /// An evidence chain's replay (`evidence::chain`), per sprint.
    EvidenceReplay,
    /// Where each decision line of a spar series came from (`spar::series::decisions`), per
    /// series, keyed by its tip.
    DecisionOrigins,
    /// Who signed a commit (`spar::series::decisions`), per commit, keyed by the
    /// allowed-signers file it was checked against.
    CommitSigner,
}

impl Memo {
    fn folder(self) -> &'static str {
        match self {
            Memo::EvidenceReplay => "evidence",
            Memo::DecisionOrigins => "decisions",
            Memo::CommitSigner => "signers",
        }
    }
}

impl Store {
    /// Where `memo` keeps `name` (for messages that name the file).
    pub fn memo_path(&self, memo: Memo, name: &str) -> PathBuf {
        self.common_dir()
            .join("rails/cache")
            .join(memo.folder())
            .join(format!("{name}.memo"))
    }

    /// From now on this store neither reads nor writes memos: everything it is asked is
    /// derived from the records alone, as a fresh clone derives it (`verify`, what CI runs).
    pub fn forgo_memos(&self) {
        self.memos_off.set(true);
    }

    /// The value kept under `name` for exactly `key` by this build; None for anything else.
    pub fn memo_get(&self, memo: Memo, name: &str, key: &str) -> Option<Vec<u8>> {
        if self.memos_off.get() {
            return None;
        }
        let bytes = std::fs::read(self.memo_path(memo, name)).ok()?;
        let (build, rest) = split_line(&bytes)?;
        let (kept_key, value) = split_line(rest)?;
        (build == crate::BUILD_ID.as_bytes() && kept_key == key.as_bytes()).then(|| value.to_vec())
    }

    /// Keeps `value` under `name` for `key` (replacing what was kept). A memo that cannot be
    /// written only costs the next reader time, so callers may ignore the error.
    pub fn memo_put(&self, memo: Memo, name: &str, key: &str, value: &[u8]) -> Result<()> {
        if self.memos_off.get() || key.contains('\n') {
            return Ok(()); // a key that cannot be told apart from the value is not kept
        }
        let mut bytes = Vec::with_capacity(crate::BUILD_ID.len() + key.len() + value.len() + 2);
        bytes.extend_from_slice(crate::BUILD_ID.as_bytes());
        bytes.push(b'\n');
        bytes.extend_from_slice(key.as_bytes());
        bytes.push(b'\n');
        bytes.extend_from_slice(value);
        super::cache_write(&self.memo_path(memo, name), &bytes)
    }
}

fn split_line(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = bytes.iter().position(|b| *b == b'\n')?;
    Some((&bytes[..at], &bytes[at + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memo_answers_only_for_its_build_and_key() {
        let (_dir, store) = crate::store::temp_repo();
        assert_eq!(store.memo_get(Memo::EvidenceReplay, "S", "k1"), None);
        store
            .memo_put(Memo::EvidenceReplay, "S", "k1", b"value\nwith lines")
            .unwrap();
        assert_eq!(
            store.memo_get(Memo::EvidenceReplay, "S", "k1").as_deref(),
            Some(&b"value\nwith lines"[..])
        );
        assert_eq!(store.memo_get(Memo::EvidenceReplay, "S", "k2"), None);
        assert_eq!(store.memo_get(Memo::EvidenceReplay, "T", "k1"), None);
        // Another build's file, or one cut short, is a miss.
        let path = store.memo_path(Memo::EvidenceReplay, "S");
        std::fs::write(&path, b"another-build\nk1\nvalue").unwrap();
        assert_eq!(store.memo_get(Memo::EvidenceReplay, "S", "k1"), None);
        std::fs::write(&path, crate::BUILD_ID.as_bytes()).unwrap();
        assert_eq!(store.memo_get(Memo::EvidenceReplay, "S", "k1"), None);
        // A store that forgoes memos reads none and writes none.
        store
            .memo_put(Memo::EvidenceReplay, "S", "k1", b"v")
            .unwrap();
        store.forgo_memos();
        assert_eq!(store.memo_get(Memo::EvidenceReplay, "S", "k1"), None);
        store
            .memo_put(Memo::EvidenceReplay, "S", "k1", b"w")
            .unwrap();
        assert!(std::fs::read(&path).unwrap().ends_with(b"\nv"));
    }
}
