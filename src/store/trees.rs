//! Reading trees: files and folders at a path, a tree's entries and blobs, what differs
//! between two trees, and a tree written out into a folder. Each tree read is decoded once per
//! store ([`Store::tree_index`]), so a command that reads many files of one record looks each
//! folder up once.

use std::path::Path;

use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;

use super::*;
use crate::error::{Context, Error, Result};

impl Store {
    /// The bytes of `path` in the tree of `commit`, or None when there is no such file.
    pub fn read_file(&self, commit: ObjectId, path: &str) -> Result<Option<Vec<u8>>> {
        let tree_id = self.tree_of(commit)?;
        self.read_file_in_tree(tree_id, path)
    }

    /// The bytes of `path` in `tree`, or None.
    pub fn read_file_in_tree(&self, tree: ObjectId, path: &str) -> Result<Option<Vec<u8>>> {
        let mut current = tree;
        let mut parts = path.split('/').filter(|p| !p.is_empty()).peekable();
        while let Some(name) = parts.next() {
            let index = self.tree_index(current)?;
            let Some(&(id, nature)) = index.get(name.as_bytes()) else {
                return Ok(None);
            };
            match (parts.peek().is_none(), nature) {
                (true, EntryNature::Blob) => {
                    let blob = self.repo.find_blob(id).ctx(format!("reading {path}"))?;
                    return Ok(Some(blob.data.clone()));
                }
                (false, EntryNature::Tree) => current = id,
                _ => return Ok(None),
            }
        }
        Ok(None)
    }

    /// The entries of `tree` by name, read once per store.
    fn tree_index(&self, tree: ObjectId) -> Result<std::rc::Rc<TreeIndex>> {
        if let Some(index) = self.trees.borrow().get(&tree) {
            return Ok(index.clone());
        }
        let t = self
            .repo
            .find_tree(tree)
            .ctx(format!("reading tree {tree}"))?;
        let mut index = TreeIndex::new();
        for entry in t.iter() {
            let entry = entry.ctx(format!("reading tree {tree}"))?;
            let mode = entry.mode();
            let nature = if mode.is_blob() {
                EntryNature::Blob
            } else if mode.is_tree() {
                EntryNature::Tree
            } else {
                EntryNature::Other
            };
            index.insert(entry.filename().to_vec(), (entry.oid().to_owned(), nature));
        }
        let index = std::rc::Rc::new(index);
        self.trees.borrow_mut().insert(tree, index.clone());
        Ok(index)
    }

    /// A tree made from `base` (None: empty) with `files` upserted by blob id.
    pub fn tree_with_blobs(
        &self,
        base: Option<ObjectId>,
        files: &[(String, ObjectId)],
    ) -> Result<ObjectId> {
        let base = base.unwrap_or_else(|| ObjectId::empty_tree(self.repo.object_hash()));
        let mut editor = self.repo.edit_tree(base).ctx("preparing a tree")?;
        for (path, blob) in files {
            editor
                .upsert(path.as_str(), EntryKind::Blob, *blob)
                .ctx(format!("adding {path} to a tree"))?;
        }
        Ok(editor.write().ctx("writing a tree")?.detach())
    }

    /// A tree made from `base` with `files` put in place by blob id, each keeping the mode
    /// (executable or not) its path has in `base`, else in `modes_from`, else a plain file.
    pub fn tree_with_files_in_place(
        &self,
        base: ObjectId,
        files: &[(String, ObjectId)],
        modes_from: Option<ObjectId>,
    ) -> Result<ObjectId> {
        let executable = |tree: ObjectId, path: &str| -> Result<Option<bool>> {
            let t = self
                .repo
                .find_tree(tree)
                .ctx(format!("reading tree {tree}"))?;
            Ok(t.lookup_entry_by_path(path)
                .ctx(format!("looking up {path}"))?
                .filter(|e| e.mode().is_blob())
                .map(|e| e.mode().is_executable()))
        };
        let mut editor = self.repo.edit_tree(base).ctx("preparing a tree")?;
        for (path, blob) in files {
            let exec = match executable(base, path)? {
                Some(x) => x,
                None => match modes_from {
                    Some(m) => executable(m, path)?.unwrap_or(false),
                    None => false,
                },
            };
            let kind = if exec {
                EntryKind::BlobExecutable
            } else {
                EntryKind::Blob
            };
            editor
                .upsert(path.as_str(), kind, *blob)
                .ctx(format!("adding {path} to a tree"))?;
        }
        Ok(editor.write().ctx("writing a tree")?.detach())
    }

    /// Every blob of a tree with its path and id, path-sorted.
    pub fn tree_blobs(&self, tree: ObjectId) -> Result<Vec<(String, ObjectId)>> {
        let mut out = Vec::new();
        self.walk(tree, "", &mut |path, mode, id| {
            if mode.is_blob() {
                out.push((path, id));
            }
        })?;
        out.sort();
        Ok(out)
    }

    /// Every non-tree entry below `tree` with its path (`prefix/…`), its mode and its id, in
    /// tree order: what [`Store::tree_blobs`] and [`Store::tree_entries`] are made of.
    fn walk(
        &self,
        tree: ObjectId,
        prefix: &str,
        each: &mut dyn FnMut(String, gix::objs::tree::EntryMode, ObjectId),
    ) -> Result<()> {
        let t = self
            .repo
            .find_tree(tree)
            .ctx(format!("reading tree {tree}"))?;
        for entry in t.iter() {
            let entry = entry.ctx("reading a tree entry")?;
            let name = entry.filename().to_str_lossy();
            let path = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}/{name}")
            };
            if entry.mode().is_tree() {
                self.walk(entry.oid().to_owned(), &path, each)?;
            } else {
                each(path, entry.mode(), entry.oid().to_owned());
            }
        }
        Ok(())
    }

    /// The names of the entries of folder `path` in the tree of `commit` (empty when absent).
    pub fn list_dir(&self, commit: ObjectId, path: &str) -> Result<Vec<String>> {
        let tree = self
            .repo
            .find_tree(self.tree_of(commit)?)
            .ctx(format!("reading the tree of {commit}"))?;
        let Some(entry) = tree
            .lookup_entry_by_path(path)
            .ctx(format!("looking up {path}"))?
        else {
            return Ok(Vec::new());
        };
        if !entry.mode().is_tree() {
            return Ok(Vec::new());
        }
        let sub = self
            .repo
            .find_tree(entry.object_id())
            .ctx(format!("reading {path}"))?;
        let mut out = Vec::new();
        for e in sub.iter() {
            let e = e.ctx("reading a tree entry")?;
            out.push(e.filename().to_str_lossy().into_owned());
        }
        Ok(out)
    }

    /// Every blob, symlink and submodule entry of a commit's tree, with its git mode
    /// (`100644`, `100755`, `120000`, `160000`), path-sorted.
    pub fn tree_entries(&self, commit: ObjectId) -> Result<Vec<(String, String)>> {
        let tree = self.tree_of(commit)?;
        let mut out = Vec::new();
        self.walk(tree, "", &mut |path, mode, _| {
            let m = match mode.kind() {
                EntryKind::BlobExecutable => "100755",
                EntryKind::Link => "120000",
                EntryKind::Commit => "160000",
                _ => "100644",
            };
            out.push((path, m.to_string()));
        })?;
        Ok(out)
    }

    /// Writes a commit's tree into `dir` as plain files (raw blobs: no filters, no attributes),
    /// refusing entry names git itself would refuse; the user's work tree and index are not
    /// touched. Files are left read-only.
    pub fn extract_tree(&self, commit: ObjectId, dir: &Path) -> Result<usize> {
        let tree = self.tree_of(commit)?;
        std::fs::create_dir_all(dir).ctx(format!("creating {}", dir.display()))?;
        let mut n = 0;
        self.extract_into(tree, dir, &mut n)?;
        read_only_folders(dir).ctx(format!("making {} read-only", dir.display()))?;
        Ok(n)
    }

    fn extract_into(&self, tree: ObjectId, dir: &Path, n: &mut usize) -> Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let t = self
            .repo
            .find_tree(tree)
            .ctx(format!("reading tree {tree}"))?;
        for entry in t.iter() {
            let entry = entry.ctx("reading a tree entry")?;
            let name = entry.filename();
            let vmode = entry
                .mode()
                .is_link()
                .then_some(gix::validate::path::component::Mode::Symlink);
            gix::validate::path::component(name, vmode, Default::default())
                .map_err(|e| Error::refused(format!("refusing tree entry {name:?}: {e}")))?;
            let path = dir.join(name.to_str_lossy().as_ref());
            let oid = entry.oid().to_owned();
            match entry.mode().kind() {
                EntryKind::Tree => {
                    std::fs::create_dir(&path).ctx(format!("creating {}", path.display()))?;
                    self.extract_into(oid, &path, n)?;
                }
                kind @ (EntryKind::Blob | EntryKind::BlobExecutable) => {
                    let blob = self
                        .repo
                        .find_blob(oid)
                        .ctx(format!("reading {}", path.display()))?;
                    let mode = if kind == EntryKind::BlobExecutable {
                        0o555
                    } else {
                        0o444
                    };
                    let mut f = std::fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .mode(mode)
                        .open(&path)
                        .ctx(format!("creating {}", path.display()))?;
                    f.write_all(&blob.data)
                        .ctx(format!("writing {}", path.display()))?;
                    *n += 1;
                }
                EntryKind::Link => {
                    let blob = self
                        .repo
                        .find_blob(oid)
                        .ctx(format!("reading {}", path.display()))?;
                    let target = String::from_utf8_lossy(&blob.data).into_owned();
                    std::os::unix::fs::symlink(target, &path)
                        .ctx(format!("linking {}", path.display()))?;
                    *n += 1;
                }
                EntryKind::Commit => {
                    std::fs::create_dir(&path).ctx(format!("creating {}", path.display()))?;
                }
            }
        }
        Ok(())
    }

    /// Paths that differ between two trees (files only), as `git diff --name-only` lists them.
    pub fn changed_paths(&self, a: ObjectId, b: ObjectId) -> Result<Vec<String>> {
        use gix::diff::tree::recorder::Change;
        let ta = self.repo.find_tree(a).ctx(format!("reading tree {a}"))?;
        let tb = self.repo.find_tree(b).ctx(format!("reading tree {b}"))?;
        let mut rec = gix::diff::tree::Recorder::default();
        gix::diff::tree(
            gix::objs::TreeRefIter::from_bytes(&ta.data, ta.id.kind()),
            gix::objs::TreeRefIter::from_bytes(&tb.data, tb.id.kind()),
            &mut gix::diff::tree::State::default(),
            &self.repo.objects,
            &mut rec,
        )
        .ctx("comparing trees")?;
        let mut out = Vec::new();
        for c in rec.records {
            match c {
                Change::Addition {
                    entry_mode, path, ..
                }
                | Change::Deletion {
                    entry_mode, path, ..
                } if !entry_mode.is_tree() => out.push(path.to_str_lossy().into_owned()),
                Change::Modification {
                    entry_mode,
                    previous_entry_mode,
                    path,
                    ..
                } if !entry_mode.is_tree() || !previous_entry_mode.is_tree() => {
                    out.push(path.to_str_lossy().into_owned())
                }
                _ => {}
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// The id of the entry at `path` in `tree` (a file or a folder), or None; each folder is
    /// read once per store.
    pub fn entry_at(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>> {
        let mut current = tree;
        let mut parts = path.split('/').filter(|p| !p.is_empty()).peekable();
        while let Some(name) = parts.next() {
            let index = self.tree_index(current)?;
            let Some(&(id, nature)) = index.get(name.as_bytes()) else {
                return Ok(None);
            };
            if parts.peek().is_none() {
                return Ok(Some(id));
            }
            if nature != EntryNature::Tree {
                return Ok(None);
            }
            current = id;
        }
        Ok(Some(current))
    }

    /// The id of the folder at `path` in `tree`, or None when there is none or it is a file;
    /// each folder is read once per store.
    pub fn folder_at(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>> {
        let mut current = tree;
        for name in path.split('/').filter(|p| !p.is_empty()) {
            let index = self.tree_index(current)?;
            match index.get(name.as_bytes()) {
                Some(&(id, EntryNature::Tree)) => current = id,
                _ => return Ok(None),
            }
        }
        Ok(Some(current))
    }

    /// The id of the file at `path` in `tree`, or None when there is none or it is a folder;
    /// each folder is read once per store.
    pub fn file_at(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>> {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        let Some(folder) = self.folder_at(tree, dir)? else {
            return Ok(None);
        };
        Ok(match self.tree_index(folder)?.get(name.as_bytes()) {
            Some(&(id, EntryNature::Blob)) => Some(id),
            _ => None,
        })
    }

    /// The names of the entries of a folder (files and folders), sorted by name.
    pub fn folder_names(&self, folder: ObjectId) -> Result<Vec<String>> {
        let mut out: Vec<String> = self
            .tree_index(folder)?
            .keys()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        out.sort();
        Ok(out)
    }

    /// The names of the entries that differ between two folders (added, removed or changed),
    /// one level deep, sorted.
    pub fn differing_entries(
        &self,
        a: Option<ObjectId>,
        b: Option<ObjectId>,
    ) -> Result<Vec<String>> {
        Ok(self
            .changed_entries(a, b)?
            .into_iter()
            .map(|c| c.name)
            .collect())
    }

    /// The entries that differ between two folders (added, removed or changed), one level
    /// deep, sorted by name, each with its id on either side. The two trees are walked side by
    /// side in their stored order, an entry compared by name and id without being looked into
    /// or indexed: comparing two folders of thousands of rounds where one was added costs a
    /// pass over their bytes. (A name whose order git's rules would put elsewhere, such as a
    /// file and a folder of one name, is reported as differing: never too few.)
    pub fn changed_entries(
        &self,
        a: Option<ObjectId>,
        b: Option<ObjectId>,
    ) -> Result<Vec<ChangedEntry>> {
        if a == b {
            return Ok(Vec::new());
        }
        if let Some(known) = self.diffs.borrow().get(&(a, b)) {
            return Ok(known.clone());
        }
        let read = |t: Option<ObjectId>| -> Result<Vec<u8>> {
            match t {
                None => Ok(Vec::new()),
                Some(t) => Ok(self
                    .repo
                    .find_tree(t)
                    .ctx(format!("reading tree {t}"))?
                    .detach()
                    .data),
            }
        };
        let (da, db) = (read(a)?, read(b)?);
        let mut ia = gix::objs::TreeRefIter::from_bytes(&da, self.repo.object_hash());
        let mut ib = gix::objs::TreeRefIter::from_bytes(&db, self.repo.object_hash());
        fn next<'a>(
            it: &mut gix::objs::TreeRefIter<'a>,
        ) -> Result<Option<gix::objs::tree::EntryRef<'a>>> {
            it.next().transpose().ctx("reading a tree")
        }
        let mut out: Vec<ChangedEntry> = Vec::new();
        let (mut ea, mut eb) = (next(&mut ia)?, next(&mut ib)?);
        loop {
            let order = match (&ea, &eb) {
                (None, None) => break,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(x), Some(y)) => git_order(x, y),
            };
            match order {
                std::cmp::Ordering::Less => {
                    if let Some(x) = ea.take() {
                        out.push(ChangedEntry::new(
                            x.filename,
                            Some(x.oid.to_owned()),
                            None,
                            false,
                        ));
                    }
                    ea = next(&mut ia)?;
                }
                std::cmp::Ordering::Greater => {
                    if let Some(y) = eb.take() {
                        let folder = y.mode.is_tree();
                        out.push(ChangedEntry::new(
                            y.filename,
                            None,
                            Some(y.oid.to_owned()),
                            folder,
                        ));
                    }
                    eb = next(&mut ib)?;
                }
                std::cmp::Ordering::Equal => {
                    if let (Some(x), Some(y)) = (ea.take(), eb.take()) {
                        if x.oid != y.oid {
                            let folder = y.mode.is_tree();
                            out.push(ChangedEntry::new(
                                x.filename,
                                Some(x.oid.to_owned()),
                                Some(y.oid.to_owned()),
                                folder,
                            ));
                        }
                    }
                    ea = next(&mut ia)?;
                    eb = next(&mut ib)?;
                }
            }
        }
        // One name on both sides out of order (see above) is one entry, both ids kept.
        out.sort_by(|x, y| x.name.cmp(&y.name));
        let mut merged: Vec<ChangedEntry> = Vec::with_capacity(out.len());
        for c in out {
            match merged.last_mut() {
                Some(last) if last.name == c.name => {
                    last.before = last.before.or(c.before);
                    if c.after.is_some() {
                        last.after = c.after;
                        last.folder = c.folder;
                    }
                }
                _ => merged.push(c),
            }
        }
        self.diffs.borrow_mut().insert((a, b), merged.clone());
        Ok(merged)
    }
}

/// One entry that differs between two folders: its name and its id before and after (None:
/// absent on that side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedEntry {
    pub name: String,
    pub before: Option<ObjectId>,
    pub after: Option<ObjectId>,
    /// The entry after is a folder.
    pub folder: bool,
}

impl ChangedEntry {
    fn new(
        name: &gix::bstr::BStr,
        before: Option<ObjectId>,
        after: Option<ObjectId>,
        folder: bool,
    ) -> ChangedEntry {
        ChangedEntry {
            name: String::from_utf8_lossy(name).into_owned(),
            before,
            after,
            folder,
        }
    }
}

/// git's order of two entries of one tree: by name, a folder's name compared as if it ended in
/// '/'.
fn git_order(
    a: &gix::objs::tree::EntryRef<'_>,
    b: &gix::objs::tree::EntryRef<'_>,
) -> std::cmp::Ordering {
    let tail = |e: &gix::objs::tree::EntryRef<'_>| e.mode.is_tree().then_some(b'/');
    let (x, y): (&[u8], &[u8]) = (a.filename, b.filename);
    let common = x.len().min(y.len());
    x[..common].cmp(&y[..common]).then_with(|| {
        let nx = x.get(common).copied().or(tail(a));
        let ny = y.get(common).copied().or(tail(b));
        nx.cmp(&ny)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        crate::store::test_git(dir, args, &[])
    }

    /// Walking two folders side by side finds exactly the entries a lookup by name finds:
    /// added, removed, changed, and a name that is a file on one side and a folder on the
    /// other (which git orders elsewhere in each tree), with the ids of either side.
    #[test]
    fn changed_entries_are_those_that_differ_by_name_and_id() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q"]);
        let write = |p: &str, s: &str| {
            let p = d.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, s).unwrap();
        };
        for (p, s) in [
            ("r/a", "a"),
            ("r/b/f", "1"),
            ("r/b-c", "bc"),
            ("r/x", "x"),
            ("r/same/f", "s"),
            ("r/b.d/f", "d"),
        ] {
            write(p, s);
        }
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", "one"]);
        let one = git(d, &["rev-parse", "HEAD:r"]);
        git(d, &["rm", "-q", "r/b-c", "r/x"]);
        for (p, s) in [("r/b/f", "2"), ("r/x/f", "now a folder"), ("r/y", "new")] {
            write(p, s);
        }
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", "two"]);
        let two = git(d, &["rev-parse", "HEAD:r"]);
        let store = Store::open(d).unwrap();
        let id = |s: &str| ObjectId::from_hex(s.as_bytes()).unwrap();
        let at = |rev: &str| Some(id(&git(d, &["rev-parse", rev])));
        let got = store
            .changed_entries(Some(id(&one)), Some(id(&two)))
            .unwrap();
        let want = [
            ("b", at("HEAD~1:r/b"), at("HEAD:r/b"), true),
            ("b-c", at("HEAD~1:r/b-c"), None, false),
            ("x", at("HEAD~1:r/x"), at("HEAD:r/x"), true),
            ("y", None, at("HEAD:r/y"), false),
        ];
        let got: Vec<_> = got
            .iter()
            .map(|c| (c.name.as_str(), c.before, c.after, c.folder))
            .collect();
        assert_eq!(got, want);
        // From nothing: every entry, as added.
        let all = store.changed_entries(None, Some(id(&two))).unwrap();
        let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "b.d", "same", "x", "y"]);
        assert!(all.iter().all(|c| c.before.is_none() && c.after.is_some()));
        assert!(store
            .changed_entries(Some(id(&two)), Some(id(&two)))
            .unwrap()
            .is_empty());
    }
}
