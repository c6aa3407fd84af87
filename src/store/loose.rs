//! The repository's own loose objects, asked first by the reads a hook makes.
//!
//! gix's object store looks in every pack before it looks at the loose objects, and opening a
//! pack's index walks the offset of every object in it (gix-pack's size check): 0.26 M
//! instructions on the 30,000 objects of the benchmark fixture, more the bigger the
//! repository. The commits a hook reads — the ones being pushed, HEAD — are nearly always
//! loose, made since the last `git gc`. So the reads on the hook path (`has_object`,
//! `peel_to_commit`, `commit_info`, `tree_of`) look for a loose object first (one file, one
//! inflate) and fall back to gix's whole store (packs, alternates, a quarantine) when there is
//! none. Objects are content-addressed, so either place gives the same bytes.
//!
//! Once a look-up finds no loose file, the read goes on to gix's store and opens the pack
//! indexes; from then on the reads ask gix first ([`Store::loose_read`] answers None). A push
//! that walks 1,000 packed commits otherwise tried 1,000 loose paths that do not exist, one
//! failed `openat` each: nothing callgrind counts, but 1,032 of the hook's 1,100 system calls and
//! a millisecond of its wall time. The new commits, loose, come first in such a walk.
//!
//! A loose object is read with one `read` (gix maps each file, an `mmap` and `munmap` for ~160
//! bytes) and inflated by one decoder the store keeps and resets (gix makes a new one, with its
//! state allocated, for every object): a push of ten commits reads eleven of them.

use super::{CommitInfo, ObjectId, Store};

/// A loose object's kind and bytes.
pub(super) struct Loose {
    pub kind: gix::object::Kind,
    pub data: Vec<u8>,
}

impl Store {
    fn loose_db(&self) -> gix::odb::loose::Store {
        gix::odb::loose::Store::at(
            self.repo.objects.store_ref().path(),
            self.repo.object_hash(),
        )
    }

    /// Whether `id` is a loose object of this repository (false once the packs come first:
    /// the caller asks gix's whole store, which finds loose objects too).
    pub(super) fn loose_has(&self, id: ObjectId) -> bool {
        if self.packs_first.get() {
            return false;
        }
        let found = self.loose_db().contains(&id);
        self.packs_first.set(!found);
        found
    }

    /// The loose object `id`, or None (not loose here, unreadable, not hashing to `id`, or the
    /// packs come first now: the caller asks gix). git looks in the packs first, so a loose file written by hand under
    /// the id of a packed commit would make this read see another commit than git does; its
    /// content is therefore hashed and must be `id`.
    pub(super) fn loose_read(&self, id: ObjectId) -> Option<Loose> {
        let hex = id.to_hex().to_string();
        let path = self
            .repo
            .objects
            .store_ref()
            .path()
            .join(&hex[..2])
            .join(&hex[2..]);
        if self.packs_first.get() {
            return None;
        }
        let Ok(file) = std::fs::read(path) else {
            self.packs_first.set(true);
            return None;
        };
        let mut slot = self.inflate.borrow_mut();
        let inflate = slot.get_or_insert_with(Default::default);
        inflate.reset();
        let (kind, data) = inflate_loose(inflate, &file)?;
        let hashed = gix::objs::compute_hash(id.kind(), kind, &data).ok()?;
        (hashed == id).then_some(Loose { kind, data })
    }

    /// The commit `id` decoded from its loose object, or None.
    pub(super) fn loose_commit(&self, id: ObjectId) -> Option<CommitInfo> {
        let o = self.loose_read(id)?;
        if o.kind != gix::object::Kind::Commit {
            return None;
        }
        let c = gix::objs::CommitRef::from_bytes(&o.data, id.kind()).ok()?;
        let time = c.committer().ok()?.time().ok()?.seconds;
        Some(CommitInfo {
            id,
            tree: c.tree(),
            parents: c.parents().collect(),
            message: String::from_utf8_lossy(c.message.as_ref()).into_owned(),
            time,
        })
    }
}

/// Objects larger than this are left to gix (a hook reads commits, tags and trees; a loose file
/// whose header claims gigabytes must not make this allocate them).
const LARGEST: usize = 64 << 20;

/// A loose object's kind and content from its zlib stream, as gix-odb's loose store decodes it
/// (header, then the body of exactly the size the header gives), or None when it is anything
/// else (the caller asks gix, which says what is wrong).
fn inflate_loose(
    inflate: &mut gix::zlib::Inflate,
    file: &[u8],
) -> Option<(gix::object::Kind, Vec<u8>)> {
    let mut header = [0u8; 64];
    let (status, consumed_in, consumed_out) = inflate.prefix(file, &mut header).ok()?;
    if status == gix::zlib::Status::BufError {
        return None;
    }
    let (kind, size, header_size) =
        gix::objs::decode::loose_header(&header[..consumed_out]).ok()?;
    let size = usize::try_from(size).ok().filter(|s| *s <= LARGEST)?;
    let body_prefix = consumed_out.checked_sub(header_size)?;
    let ended = status == gix::zlib::Status::StreamEnd;
    if body_prefix > size || (ended && body_prefix != size) {
        return None;
    }
    let mut out = Vec::new();
    if ended {
        out.extend_from_slice(&header[header_size..consumed_out]);
    } else {
        let n = inflate
            .rest(
                &file[consumed_in..],
                &header[..consumed_out],
                header_size,
                &mut out,
                size,
            )
            .ok()?;
        if n != size {
            return None;
        }
    }
    Some((kind, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &std::path::Path, args: &[&str]) -> String {
        crate::store::test_git(dir, args, &[("GIT_COMMITTER_DATE", "1700000000 +0200")])
    }

    /// A loose commit reads the same through the fast path as through gix's store, and a
    /// packed one (no loose file) is left to gix; tags and trees peel as before.
    #[test]
    fn loose_reads_match_the_object_store() {
        for format in ["sha1", "sha256"] {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            git(d, &["init", "-q", &format!("--object-format={format}")]);
            std::fs::write(d.join("f"), "x\n").unwrap();
            git(d, &["add", "f"]);
            git(d, &["commit", "-q", "-m", "first"]);
            git(
                d,
                &[
                    "commit",
                    "-q",
                    "--allow-empty",
                    "-m",
                    "second\n\nbody é\nRails-Sprint: S",
                ],
            );
            git(d, &["tag", "-a", "-m", "t", "v1"]);
            // A blob bigger than the first inflate step, read whole, with the decoder reused
            // after it; a loose file cut short is no object.
            let big: String = (0..20_000).map(|i| format!("{i} ")).collect();
            std::fs::write(d.join("big"), &big).unwrap();
            let big_id = git(d, &["hash-object", "-w", "big"]);
            let big_id = ObjectId::from_hex(big_id.as_bytes()).unwrap();
            let store = Store::open(d).unwrap();
            let read = store.loose_read(big_id).expect("the loose blob");
            assert_eq!(read.kind, gix::object::Kind::Blob);
            assert_eq!(read.data, big.as_bytes());
            let small = store
                .loose_read(
                    ObjectId::from_hex(git(d, &["rev-parse", "HEAD:f"]).as_bytes()).unwrap(),
                )
                .expect("the loose file f");
            assert_eq!(small.data, b"x\n");
            let hex = big_id.to_string();
            let path = d.join(".git/objects").join(&hex[..2]).join(&hex[2..]);
            let whole = std::fs::read(&path).unwrap();
            std::fs::remove_file(&path).unwrap();
            std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
            assert!(store.loose_read(big_id).is_none(), "a file cut short");

            let store = Store::open(d).unwrap();
            let head = ObjectId::from_hex(git(d, &["rev-parse", "HEAD"]).as_bytes()).unwrap();
            let tag = ObjectId::from_hex(git(d, &["rev-parse", "v1"]).as_bytes()).unwrap();
            let tree =
                ObjectId::from_hex(git(d, &["rev-parse", "HEAD^{tree}"]).as_bytes()).unwrap();

            let fast = store.loose_commit(head).expect("a loose commit");
            let c = store.repo.find_commit(head).unwrap();
            assert_eq!(fast.tree, c.tree_id().unwrap().detach());
            let parents: Vec<ObjectId> = c.parent_ids().map(|p| p.detach()).collect();
            assert_eq!(fast.parents, parents);
            assert_eq!(fast.message, c.message_raw().unwrap().to_string());
            assert_eq!(fast.time, c.time().unwrap().seconds);
            assert_eq!(fast.time, 1_700_000_000);
            assert_eq!(fast.trailer("Rails-Sprint").as_deref(), Some("S"));
            assert!(store.loose_has(head));
            assert_eq!(store.peel_to_commit(tag).unwrap(), Some(head));
            assert_eq!(store.peel_to_commit(tree).unwrap(), None);
            assert_eq!(store.tree_of(head).unwrap(), tree);

            git(d, &["gc", "-q", "--prune=now"]);
            let store = Store::open(d).unwrap();
            assert!(store.loose_commit(head).is_none(), "packed now");

            assert!(!store.loose_has(head));
            assert!(store.has_object(head));
            assert_eq!(store.commit_info(head).unwrap().message, fast.message);
            assert_eq!(store.tree_of(head).unwrap(), tree);
            assert_eq!(store.peel_to_commit(tag).unwrap(), Some(head));

            // A loose file written by hand under the packed commit's id, holding another
            // commit (one without the trailer): never read in its place.
            let other = git(d, &["commit-tree", &tree.to_string(), "-m", "forged"]);
            let other = ObjectId::from_hex(other.as_bytes()).unwrap();
            let objects = d.join(".git/objects");
            let hex = |o: ObjectId| o.to_string();
            let forged =
                std::fs::read(objects.join(&hex(other)[..2]).join(&hex(other)[2..])).unwrap();
            let target = objects.join(&hex(head)[..2]);
            std::fs::create_dir_all(&target).unwrap();
            std::fs::write(target.join(&hex(head)[2..]), forged).unwrap();
            let store = Store::open(d).unwrap();
            assert!(
                store.loose_commit(head).is_none(),
                "a loose file that does not hash to its id"
            );
            assert!(store.loose_read(head).is_none());
            // … and the whole store's read refuses it rather than hand it on.
            let e = store.commit_info(head).unwrap_err();
            assert!(
                e.message.contains("does not hash to its id"),
                "{}",
                e.message
            );
        }
    }

    /// After a look-up that found no loose file (a packed commit), reads ask gix's store
    /// first: the loose path is not tried again, and a loose commit still reads whole.
    #[test]
    fn after_a_loose_miss_the_packs_come_first() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q"]);
        git(d, &["commit", "-q", "--allow-empty", "-m", "old"]);
        git(d, &["gc", "-q", "--prune=now"]);
        git(
            d,
            &[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "new\n\nRails-Sprint: S",
            ],
        );
        let id = |rev: &str| ObjectId::from_hex(git(d, &["rev-parse", rev]).as_bytes()).unwrap();
        let (new, old) = (id("HEAD"), id("HEAD~1"));

        let store = Store::open(d).unwrap();
        assert!(
            store.loose_read(new).is_some(),
            "a fresh store reads loose first"
        );
        assert!(store.loose_has(new));
        assert_eq!(store.commit_info(old).unwrap().message, "old\n");
        assert!(store.loose_read(new).is_none(), "the packs come first now");
        assert!(!store.loose_has(new));
        let info = store.commit_info(new).unwrap();
        assert_eq!(info.trailer("Rails-Sprint").as_deref(), Some("S"));
        assert_eq!(info.parents, vec![old]);
        assert!(store.has_object(new));
        assert_eq!(store.peel_to_commit(new).unwrap(), Some(new));

        // A miss of has_object switches too.
        let store = Store::open(d).unwrap();
        assert!(!store.loose_has(old));
        assert!(store.has_object(old));
        assert!(store.loose_read(new).is_none());
    }
}
