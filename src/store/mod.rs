//! The only module that reads or writes git objects, refs and notes, and the records' files.
//!
//! Objects go through `gix` in process (SHA-1 or SHA-256 repositories alike): commit chains
//! under a ref moved by compare-and-swap, notes that `git notes --ref=<name> show <commit>`
//! reads, file reads at a commit. Refs go through [`refdb`], which knows whether the repository
//! keeps them as files (read in process) or in reftable (read and moved with git's plumbing);
//! nothing outside this module knows which. Files in the work tree are written atomically
//! ([`atomic_write`]); writers serialise on `fs2` locks under the git common dir ([`lock`]).

mod atomic;
mod lock;
mod loose;
mod porcelain;
mod refdb;
pub mod refs;
mod reftable;
mod review;

pub use atomic::{atomic_write, atomic_write_mode, cache_append, cache_write};
pub use lock::{Lock, LockName};
#[cfg(test)]
pub use porcelain::temp_repo;
pub use porcelain::RemoteOutcome;
pub use refdb::LeftLock;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;
pub use gix::ObjectId;

use crate::error::{Context, Error, Result};

/// An open repository.
pub struct Store {
    repo: gix::Repository,
    /// How refs are stored (files or reftable), and that backend's state.
    refdb: refdb::Backend,
    git_dir: PathBuf,
    common_dir: PathBuf,
    workdir: Option<PathBuf>,
    /// Refs read as if they pointed here (a pre-receive hook judging a push before it lands).
    overrides: HashMap<String, ObjectId>,
    /// A folder that makes quarantined objects readable; kept alive with the store.
    _shadow: Option<tempfile::TempDir>,
    /// Trees already read by [`Store::read_file_in_tree`], by name: a command that reads many
    /// files of one record (a gate over 1,000 rounds) looks each folder up once, not once per
    /// file by a linear scan.
    trees: std::cell::RefCell<HashMap<ObjectId, std::rc::Rc<TreeIndex>>>,
}

/// A tree's entries by name: the object id and whether it is a blob or a tree.
type TreeIndex = HashMap<Vec<u8>, (ObjectId, EntryNature)>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryNature {
    Blob,
    Tree,
    Other,
}

/// One commit of a record chain.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    pub id: ObjectId,
    pub tree: ObjectId,
    pub parents: Vec<ObjectId>,
    pub message: String,
    /// Seconds since the epoch (committer time).
    pub time: i64,
}

impl CommitInfo {
    /// The value of the last trailer `key:` in the message.
    pub fn trailer(&self, key: &str) -> Option<String> {
        let prefix = format!("{key}:");
        self.message
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix(&prefix).map(|v| v.trim().to_string()))
    }
    pub fn subject(&self) -> &str {
        self.message.lines().next().unwrap_or("")
    }
}

/// Makes `dir` and every folder below it read-only (0555), deepest first.
fn read_only_folders(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            read_only_folders(&e.path())?;
        }
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555))
}

/// The last value of `key` in git's `GIT_CONFIG_PARAMETERS` (`'a.b'='v' 'c.d=w'`): section and
/// key names compare without case, the subsection with case.
fn command_line_config(params: &str, key: &str) -> Option<String> {
    // Split into shell-single-quoted words; `'\''` is an escaped quote.
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut in_quote = false;
    let mut chars = params.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => in_quote = !in_quote,
            '\\' if !in_quote => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            ' ' if !in_quote => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    let norm = |k: &str| -> String {
        match (k.find('.'), k.rfind('.')) {
            (Some(a), Some(b)) if a != b => format!(
                "{}.{}.{}",
                k[..a].to_ascii_lowercase(),
                &k[a + 1..b],
                k[b + 1..].to_ascii_lowercase()
            ),
            _ => k.to_ascii_lowercase(),
        }
    };
    let want = norm(key);
    words
        .iter()
        .filter_map(|w| w.split_once('='))
        .filter(|(k, _)| norm(k) == want)
        .map(|(_, v)| v.to_string())
        .next_back()
}

/// Builds a commit message with trailers.
pub fn message(subject: &str, body: &str, trailers: &[(&str, String)]) -> String {
    let mut m = String::from(subject.trim_end());
    m.push('\n');
    if !body.trim().is_empty() {
        m.push('\n');
        m.push_str(body.trim_end());
        m.push('\n');
    }
    if !trailers.is_empty() {
        m.push('\n');
        for (k, v) in trailers {
            m.push_str(&format!("{k}: {v}\n"));
        }
    }
    m
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

impl Store {
    /// Opens the repository the way git does: `GIT_DIR`/`GIT_WORK_TREE` when set (hooks),
    /// else discovery upwards from the current directory.
    pub fn discover() -> Result<Store> {
        let cwd = std::env::current_dir().ctx("reading the current directory")?;
        let repo = gix::discover_with_environment_overrides(&cwd).map_err(|e| {
            Error::refused(format!("not in a git repository ({e:#})"))
                .hint("run the command inside a git work tree, or `git init` one")
        })?;
        Ok(Store::from_repo(repo))
    }

    /// Opens the repository at `path` (used by tests and benchmarks).
    pub fn open(path: &Path) -> Result<Store> {
        let repo = gix::open(path).ctx(format!("opening {}", path.display()))?;
        Ok(Store::from_repo(repo))
    }

    fn from_repo(mut repo: gix::Repository) -> Store {
        // Records are written even where no git identity is configured (a fresh CI machine):
        // gix's notes need one, so the tool's own stands in, in memory only.
        // (Asking gix for the committer would compute "now" in the local time zone, which
        // walks the zoneinfo database: too slow for a hook, so the configuration is read.)
        let missing: Vec<&str> = [
            (
                "user.name",
                ["GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"],
                "user.name=git-rails",
            ),
            (
                "user.email",
                ["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"],
                "user.email=git-rails@localhost",
            ),
        ]
        .into_iter()
        .filter(|(key, vars, _)| {
            repo.config_snapshot().string(*key).is_none()
                && !vars.iter().all(|v| std::env::var_os(v).is_some())
        })
        .map(|(_, _, fallback)| fallback)
        .collect();
        if !missing.is_empty() {
            let mut cfg = repo.config_snapshot_mut();
            let _ = cfg.append_config(missing, gix::config::Source::Api);
            let _ = cfg.commit();
        }
        // Records are read again and again within one command (a gate over 200 rounds looks up
        // `rounds/` for each of their files): decoded objects are kept, up to 4 MiB.
        repo.object_cache_size_if_unset(4 * 1024 * 1024);
        let git_dir = absolute(repo.git_dir());
        let common_dir = absolute(repo.common_dir());
        let workdir = repo.workdir().map(absolute);
        let refdb = refdb::Backend::detect(&repo);
        Store {
            repo,
            refdb,
            git_dir,
            common_dir,
            workdir,
            overrides: Default::default(),
            _shadow: None,
            trees: Default::default(),
        }
    }

    /// A view of the repository in which the given refs point at new values, as a push that
    /// has not landed yet would leave them. Inside a pre-receive hook git keeps the pushed
    /// objects in a quarantine folder (`GIT_OBJECT_DIRECTORY`); the view reads them too.
    pub fn with_ref_overrides(&self, overrides: Vec<(String, ObjectId)>) -> Result<Store> {
        let quarantine = std::env::var_os("GIT_OBJECT_DIRECTORY").map(PathBuf::from);
        let mut view = match quarantine {
            None => {
                let mut s = Store::from_repo(self.repo.clone());
                s.refdb = self.refdb.fresh();
                s
            }
            Some(q) => {
                let shadow = tempfile::Builder::new()
                    .prefix("rails-receive-")
                    .tempdir()
                    .ctx("creating a folder to read the pushed objects")?;
                let dir = shadow.path();
                let real = &self.common_dir;
                std::fs::copy(real.join("HEAD"), dir.join("HEAD")).ctx("copying HEAD")?;
                for name in ["config", "refs", "packed-refs", "reftable"] {
                    if real.join(name).exists() {
                        std::os::unix::fs::symlink(real.join(name), dir.join(name))
                            .ctx(format!("linking {name}"))?;
                    }
                }
                std::fs::create_dir_all(dir.join("objects/info")).ctx("creating objects/info")?;
                let mut alternates = vec![absolute(&q), real.join("objects")];
                if let Some(more) = std::env::var_os("GIT_ALTERNATE_OBJECT_DIRECTORIES") {
                    alternates.extend(std::env::split_paths(&more).map(|p| absolute(&p)));
                }
                let list: String = alternates
                    .iter()
                    .map(|p| format!("{}\n", p.display()))
                    .collect();
                std::fs::write(dir.join("objects/info/alternates"), list)
                    .ctx("writing objects/info/alternates")?;
                let repo = gix::open(dir).ctx("opening the pushed objects")?;
                let mut s = Store::from_repo(repo);
                s.refdb = self.refdb.fresh();
                s.git_dir = self.git_dir.clone();
                s.common_dir = self.common_dir.clone();
                s.workdir = self.workdir.clone();
                s._shadow = Some(shadow);
                s
            }
        };
        view.overrides = overrides.into_iter().collect();
        Ok(view)
    }

    pub fn repo(&self) -> &gix::Repository {
        &self.repo
    }

    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The directory shared by every worktree of the clone (locks live here).
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// The top level of the work tree, or a refusal in a bare repository.
    pub fn workdir(&self) -> Result<&Path> {
        self.workdir.as_deref().ok_or_else(|| {
            Error::refused("this command needs a work tree, and the repository is bare")
        })
    }

    /// HEAD's commit, or None on an unborn branch.
    pub fn head_commit(&self) -> Result<Option<ObjectId>> {
        Ok(self.refdb_head()?.id)
    }

    /// The current branch's short name, or None when HEAD is detached.
    pub fn current_branch(&self) -> Result<Option<String>> {
        Ok(self
            .refdb_head()?
            .branch
            .map(|b| b.strip_prefix("refs/heads/").unwrap_or(&b).to_string()))
    }

    /// Resolves a revision to a commit id; an unknown revision is a refusal.
    pub fn resolve_commit(&self, rev: &str) -> Result<ObjectId> {
        let id = match self.refdb_resolve(rev)? {
            Some(id) => id,
            None => self
                .repo
                .rev_parse_single(rev)
                .map_err(|e| {
                    Error::refused(format!("cannot resolve revision {rev:?}: {e:#}"))
                        .hint("name a commit, branch or tag that exists (see `git log --oneline`)")
                })?
                .detach(),
        };
        let object = self
            .repo
            .find_object(id)
            .map_err(|e| Error::refused(format!("revision {rev:?} names no object here: {e:#}")))?;
        let commit = object.peel_to_commit().map_err(|e| {
            Error::refused(format!("revision {rev:?} does not name a commit: {e:#}"))
        })?;
        Ok(commit.id)
    }

    /// A commit's tree id.
    pub fn tree_of(&self, commit: ObjectId) -> Result<ObjectId> {
        if let Some(c) = self.loose_commit(commit) {
            return Ok(c.tree);
        }
        let c = self
            .repo
            .find_commit(commit)
            .ctx(format!("reading commit {commit}"))?;
        Ok(c.tree_id()
            .ctx(format!("reading the tree of {commit}"))?
            .detach())
    }

    /// Where a ref points now, without peeling.
    pub fn ref_target(&self, name: &str) -> Result<Option<ObjectId>> {
        if let Some(id) = self.overrides.get(name) {
            return Ok(Some(*id));
        }
        self.refdb_read(name)
    }

    /// Every ref under `prefix` (e.g. `refs/rails/contracts/`) with the rest of its name.
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>> {
        self.refdb_list(prefix)
    }

    pub fn commit_info(&self, id: ObjectId) -> Result<CommitInfo> {
        if let Some(c) = self.loose_commit(id) {
            return Ok(c);
        }
        let c = self
            .repo
            .find_commit(id)
            .ctx(format!("reading commit {id}"))?;
        let tree = c
            .tree_id()
            .ctx(format!("reading the tree of {id}"))?
            .detach();
        let parents = c.parent_ids().map(|p| p.detach()).collect();
        let message = c
            .message_raw()
            .ctx(format!("reading the message of {id}"))?
            .to_str_lossy()
            .into_owned();
        let time = c.time().ctx(format!("reading the time of {id}"))?.seconds;
        Ok(CommitInfo {
            id,
            tree,
            parents,
            message,
            time,
        })
    }

    /// The first-parent chain from `tip`, oldest first.
    pub fn chain(&self, tip: ObjectId) -> Result<Vec<CommitInfo>> {
        let mut out = Vec::new();
        let mut next = Some(tip);
        while let Some(id) = next {
            let info = self.commit_info(id)?;
            next = info.parents.first().copied();
            out.push(info);
        }
        out.reverse();
        Ok(out)
    }

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

    fn signature(&self) -> gix::actor::Signature {
        let time = gix::date::Time::now_local_or_utc();
        if let Some(Ok(sig)) = self.repo.committer() {
            return gix::actor::Signature {
                name: sig.name.to_owned(),
                email: sig.email.to_owned(),
                time,
            };
        }
        gix::actor::Signature {
            name: "git-rails".into(),
            email: "git-rails@localhost".into(),
            time,
        }
    }

    /// Adds one commit on top of `expected` (None: the ref must not exist) holding the parent's
    /// tree with `files` upserted, and moves `refname` to it by compare-and-swap.
    ///
    /// Returns None when another writer moved the ref first (nothing is written to the ref).
    pub fn append_commit(
        &self,
        refname: &str,
        expected: Option<ObjectId>,
        files: &[(String, Vec<u8>)],
        message: &str,
    ) -> Result<Option<ObjectId>> {
        self.append_commit_with_trees(refname, expected, files, &[], message)
    }

    /// [`Store::append_commit`] that also puts existing trees at paths of the record tree, so a
    /// record carries what it points at: a push or fetch of the ref brings those trees along.
    pub fn append_commit_with_trees(
        &self,
        refname: &str,
        expected: Option<ObjectId>,
        files: &[(String, Vec<u8>)],
        trees: &[(String, ObjectId)],
        message: &str,
    ) -> Result<Option<ObjectId>> {
        let base_tree = match expected {
            Some(parent) => self.tree_of(parent)?,
            None => ObjectId::empty_tree(self.repo.object_hash()),
        };
        let mut editor = self
            .repo
            .edit_tree(base_tree)
            .ctx("preparing a record tree")?;
        for (path, bytes) in files {
            let blob = self.repo.write_blob(bytes).ctx(format!("writing {path}"))?;
            editor
                .upsert(path.as_str(), EntryKind::Blob, blob)
                .ctx(format!("adding {path} to the record tree"))?;
        }
        for (path, id) in trees {
            editor
                .upsert(path.as_str(), EntryKind::Tree, *id)
                .ctx(format!("adding {path} to the record tree"))?;
        }
        let tree = editor.write().ctx("writing the record tree")?.detach();
        let sig = self.signature();
        let mut buf = gix::date::parse::TimeBuf::default();
        let s = sig.to_ref(&mut buf);
        let commit = self
            .repo
            .new_commit_as(s, s, message, tree, expected)
            .ctx("writing the record commit")?;
        let log = message.lines().next().unwrap_or("record");
        if self.refdb_cas(refname, commit.id, expected, log)? {
            Ok(Some(commit.id))
        } else {
            Ok(None)
        }
    }

    /// Writes a blob and returns its id (the id `git hash-object` gives the same bytes).
    pub fn blob_id(&self, bytes: &[u8]) -> Result<ObjectId> {
        Ok(self.repo.write_blob(bytes).ctx("writing a blob")?.detach())
    }

    /// The note on `target` under `notes_ref`, as `git notes --ref show` prints it.
    pub fn note(&self, notes_ref: &str, target: ObjectId) -> Result<Option<Vec<u8>>> {
        let Some(tip) = self.ref_target(notes_ref)? else {
            return Ok(None);
        };
        let tree = self.tree_of(tip)?;
        let mut state = gix::note::plumbing::State::new(tree, &self.repo)
            .ctx(format!("reading the notes of {notes_ref}"))?;
        let Some(blob) = state
            .get(&target, &self.repo)
            .ctx(format!("reading the note on {target}"))?
        else {
            return Ok(None);
        };
        Ok(Some(self.blob(blob)?))
    }

    /// Appends `text` to the note on `target` the way `git notes append` does (a blank line
    /// between parts): a notes commit on top of the ref's, moved by compare-and-swap, and
    /// written again when another writer won the race.
    pub fn note_append(&self, notes_ref: &str, target: ObjectId, text: &str) -> Result<()> {
        let mut part = text.trim_end_matches('\n').to_string();
        part.push('\n');
        for _ in 0..50 {
            let tip = self.ref_target(notes_ref)?;
            let base = match tip {
                Some(t) => self.tree_of(t)?,
                None => ObjectId::empty_tree(self.repo.object_hash()),
            };
            let mut state = gix::note::plumbing::State::new(base, &self.repo)
                .ctx(format!("reading the notes of {notes_ref}"))?;
            let old = state
                .get(&target, &self.repo)
                .ctx(format!("reading the note on {target}"))?;
            let new = match old {
                Some(old) => {
                    let old = self.blob(old)?;
                    let mut s = String::from_utf8_lossy(&old).into_owned();
                    if !s.is_empty() {
                        if !s.ends_with('\n') {
                            s.push('\n');
                        }
                        s.push('\n');
                    }
                    s.push_str(&part);
                    s
                }
                None => part.clone(),
            };
            let blob = self.repo.write_blob(new.as_bytes()).ctx("writing a note")?;
            let edit = state
                .replace(target, blob.detach(), &self.repo)
                .ctx(format!("adding the note on {target}"))?;
            let commit = self.write_commit(
                edit.tree,
                &tip.into_iter().collect::<Vec<_>>(),
                "Notes added by 'git-rails'\n",
            )?;
            if self.refdb_cas(notes_ref, commit, tip, "notes: Notes added by 'git-rails'")? {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Err(Error::internal(format!(
            "writing the note on {target} under {notes_ref}: other writers kept winning the race; try again"
        )))
    }

    // ---- Helpers for `sync` (merging record chains between clones) ----

    /// Moves `name` to `new` by compare-and-swap from `expected` (None: must not exist).
    /// Returns false when the ref was not at `expected` (nothing written).
    pub fn cas_ref(
        &self,
        name: &str,
        new: ObjectId,
        expected: Option<ObjectId>,
        log: &str,
    ) -> Result<bool> {
        self.refdb_cas(name, new, expected, log)
    }

    /// Writes a commit with the given tree and parents (the first parent is the chain's).
    pub fn write_commit(
        &self,
        tree: ObjectId,
        parents: &[ObjectId],
        message: &str,
    ) -> Result<ObjectId> {
        let sig = self.signature();
        let mut buf = gix::date::parse::TimeBuf::default();
        let s = sig.to_ref(&mut buf);
        let commit = self
            .repo
            .new_commit_as(s, s, message, tree, parents.iter().copied())
            .ctx("writing a merge commit")?;
        Ok(commit.id)
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

    /// Every blob of a tree with its path and id, path-sorted.
    pub fn tree_blobs(&self, tree: ObjectId) -> Result<Vec<(String, ObjectId)>> {
        let mut out = Vec::new();
        self.walk_blobs(tree, "", &mut out)?;
        out.sort();
        Ok(out)
    }

    fn walk_blobs(
        &self,
        tree: ObjectId,
        prefix: &str,
        out: &mut Vec<(String, ObjectId)>,
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
                self.walk_blobs(entry.oid().to_owned(), &path, out)?;
            } else if entry.mode().is_blob() {
                out.push((path, entry.oid().to_owned()));
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

    /// The blob id at `path` in `tree`, or None.
    pub fn blob_id_at(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>> {
        let tree = self
            .repo
            .find_tree(tree)
            .ctx(format!("reading tree {tree}"))?;
        let entry = tree
            .lookup_entry_by_path(path)
            .ctx(format!("looking up {path}"))?;
        Ok(entry.filter(|e| e.mode().is_blob()).map(|e| e.object_id()))
    }

    /// A blob's bytes.
    pub fn blob(&self, id: ObjectId) -> Result<Vec<u8>> {
        Ok(self
            .repo
            .find_blob(id)
            .ctx(format!("reading blob {id}"))?
            .data
            .clone())
    }

    /// Whether an object exists in the repository.
    pub fn has_object(&self, id: ObjectId) -> bool {
        self.loose_has(id) || self.repo.has_object(id)
    }

    /// The commit `id` names, peeling annotated tags; `None` when it is a tree or a blob (which
    /// git may push too). An object that is not in the repository is an error the caller words.
    pub fn peel_to_commit(&self, id: ObjectId) -> Result<Option<ObjectId>> {
        if let Some(o) = self.loose_read(id) {
            match o.kind {
                gix::object::Kind::Commit => return Ok(Some(id)),
                gix::object::Kind::Tree | gix::object::Kind::Blob => return Ok(None),
                gix::object::Kind::Tag => {} // peeled below
            }
        }
        let object = self
            .repo
            .find_object(id)
            .ctx(format!("reading object {id}"))?;
        let end = object
            .peel_tags_to_end()
            .ctx(format!("peeling object {id}"))?;
        Ok((end.kind == gix::object::Kind::Commit).then_some(end.id))
    }

    /// Every commit reachable from `tips` (all parents, not only the first).
    pub fn reachable(&self, tips: &[ObjectId]) -> Result<Vec<CommitInfo>> {
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<ObjectId> = tips.to_vec();
        let mut out = Vec::new();
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            let info = self.commit_info(id)?;
            stack.extend(info.parents.iter().copied());
            out.push(info);
        }
        Ok(out)
    }

    /// Writes `text` as the note of each target into the notes tree `base` (None: empty), the
    /// way gix's notes writer fans out, and returns the new tree.
    pub fn notes_tree_with(
        &self,
        base: Option<ObjectId>,
        notes: &[(ObjectId, Vec<u8>)],
    ) -> Result<ObjectId> {
        let base = base.unwrap_or_else(|| ObjectId::empty_tree(self.repo.object_hash()));
        let mut state =
            gix::note::plumbing::State::new(base, &self.repo).ctx("reading a notes tree")?;
        for (target, text) in notes {
            let blob = self.repo.write_blob(text).ctx("writing a note")?.detach();
            state
                .edit(*target, Some(blob), &self.repo)
                .ctx(format!("adding the note on {target}"))?;
        }
        state.write(&self.repo).ctx("writing a notes tree")
    }

    /// Every blob, symlink and submodule entry of a commit's tree, with its git mode
    /// (`100644`, `100755`, `120000`, `160000`), path-sorted.
    pub fn tree_entries(&self, commit: ObjectId) -> Result<Vec<(String, String)>> {
        let tree = self.tree_of(commit)?;
        let mut out = Vec::new();
        self.walk_tree(tree, "", &mut out)?;
        Ok(out)
    }

    fn walk_tree(
        &self,
        tree: ObjectId,
        prefix: &str,
        out: &mut Vec<(String, String)>,
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
            let mode = entry.mode();
            if mode.is_tree() {
                self.walk_tree(entry.oid().to_owned(), &path, out)?;
            } else {
                let m = match mode.kind() {
                    EntryKind::BlobExecutable => "100755",
                    EntryKind::Link => "120000",
                    EntryKind::Commit => "160000",
                    _ => "100644",
                };
                out.push((path, m.to_string()));
            }
        }
        Ok(())
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
    /// one level deep; each folder is read once per store.
    pub fn differing_entries(
        &self,
        a: Option<ObjectId>,
        b: Option<ObjectId>,
    ) -> Result<Vec<String>> {
        if a == b {
            return Ok(Vec::new());
        }
        let empty = TreeIndex::new();
        let ia = a.map(|t| self.tree_index(t)).transpose()?;
        let ib = b.map(|t| self.tree_index(t)).transpose()?;
        let (ia, ib) = (
            ia.as_deref().unwrap_or(&empty),
            ib.as_deref().unwrap_or(&empty),
        );
        let mut out: Vec<String> = Vec::new();
        for (name, (id, _)) in ia {
            if ib.get(name).map(|e| e.0) != Some(*id) {
                out.push(String::from_utf8_lossy(name).into_owned());
            }
        }
        for name in ib.keys() {
            if !ia.contains_key(name) {
                out.push(String::from_utf8_lossy(name).into_owned());
            }
        }
        out.sort();
        Ok(out)
    }

    /// The id of the tree at `path` in `tree` (a folder), or None.
    pub fn tree_id_at(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>> {
        let tree = self
            .repo
            .find_tree(tree)
            .ctx(format!("reading tree {tree}"))?;
        let entry = tree
            .lookup_entry_by_path(path)
            .ctx(format!("looking up {path}"))?;
        Ok(entry.filter(|e| e.mode().is_tree()).map(|e| e.object_id()))
    }

    /// Checks out `tree` into a new folder `dir` (a detached `git worktree`, hooks off), for
    /// re-running a check on exactly that content; the user's work tree and index are not
    /// touched. Remove it with [`Store::remove_checkout`].
    pub fn checkout_tree(&self, tree: ObjectId, dir: &Path) -> Result<()> {
        let commit = self.git(&[
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

    /// Whether `old` is an ancestor of `new` (a fast-forward), as git decides it; works on
    /// quarantined objects inside a pre-receive hook.
    pub fn is_ancestor(&self, old: &str, new: &str) -> Result<bool> {
        let args = ["merge-base", "--is-ancestor", old, new];
        let out = self
            .git_command()
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .ctx("running git merge-base")?;
        match out.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(self.git_failed(&args, &out.stderr)),
        }
    }

    /// A configuration value as git reads it (all scopes), including `git -c key=value`
    /// given to the git command that runs a hook (`GIT_CONFIG_PARAMETERS`, which gix does not
    /// read).
    pub fn config_string(&self, key: &str) -> Option<String> {
        if let Some(v) = std::env::var("GIT_CONFIG_PARAMETERS")
            .ok()
            .and_then(|p| command_line_config(&p, key))
        {
            return Some(v);
        }
        self.repo
            .config_snapshot()
            .string(key)
            .map(|v| v.to_str_lossy().into_owned())
    }

    /// Every value of a multi-valued configuration key (all scopes, then `git -c`).
    pub fn config_strings(&self, key: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .repo
            .config_snapshot()
            .strings(key)
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.to_str_lossy().into_owned())
            .collect();
        if let Some(v) = std::env::var("GIT_CONFIG_PARAMETERS")
            .ok()
            .and_then(|p| command_line_config(&p, key))
        {
            out.push(v);
        }
        out
    }

    /// Adds `key: value` to the trailers of the commit message in `file` as
    /// `git interpret-trailers` does, unless a `key` trailer is already there.
    pub fn add_trailer(&self, file: &Path, key: &str, value: &str) -> Result<()> {
        let trailer = format!("{key}: {value}");
        let file = absolute(file);
        let file = file.to_string_lossy();
        self.git(&[
            "interpret-trailers",
            "--in-place",
            "--if-exists",
            "doNothing",
            "--trailer",
            &trailer,
            &file,
        ])
        .map(|_| ())
    }

    /// Which configuration file sets `key` last, as git reports it: `local`, `global`,
    /// `system`, `worktree` or `command` (None when it is not set).
    pub fn config_scope(&self, key: &str) -> Option<String> {
        let out = self.git(&["config", "--show-scope", "--get", key]).ok()?;
        out.split('\t').next().map(|s| s.trim().to_string())
    }

    /// Runs a hook exactly as git would (`git hook run`), with `stdin` fed from a file and
    /// extra environment. Returns the exit code and everything it printed (git sends a hook's
    /// stdout to stderr too).
    pub fn run_hook(
        &self,
        name: &str,
        args: &[&str],
        stdin_file: &Path,
        env: &[(&str, &Path)],
    ) -> Result<(i32, String)> {
        let dir = self.workdir.clone().unwrap_or_else(|| self.git_dir.clone());
        let mut cmd = std::process::Command::new("git");
        cmd.arg("hook")
            .arg("run")
            .arg("--ignore-missing")
            .arg(format!("--to-stdin={}", stdin_file.display()))
            .arg(name)
            .arg("--")
            .args(args)
            .current_dir(&dir)
            .stdin(std::process::Stdio::null());
        for var in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "RAILS_SKIP"] {
            cmd.env_remove(var);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().ctx(format!("running git hook run {name}"))?;
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        Ok((out.status.code().unwrap_or(-1), text))
    }

    /// Sets a value in the repository's own configuration (`.git/config`).
    pub fn set_config(&self, key: &str, value: &str) -> Result<()> {
        self.git(&["config", "--local", key, value]).map(|_| ())
    }

    /// Runs `git` with `args` in the work tree (or git dir) and returns stdout. Used only off
    /// the hot path, where git's own porcelain is the reference (work-tree status). Private to
    /// the store: a need elsewhere gets a named function (`porcelain.rs`, `review.rs`).
    fn git(&self, args: &[&str]) -> Result<String> {
        self.git_with(args, &[])
    }

    fn git_with(&self, args: &[&str], env: &[(&str, &Path)]) -> Result<String> {
        let mut cmd = self.git_command();
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd
            .output()
            .ctx(format!("running git {}", args.join(" ")))?;
        if !out.status.success() {
            return Err(self.git_failed(args, &out.stderr));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::command_line_config;

    #[test]
    fn git_dash_c_parameters() {
        let p = "'rails.requireSprint'='true' 'branch.Main.railsSprint'='S-1' 'core.x=y'";
        assert_eq!(
            command_line_config(p, "rails.requiresprint").as_deref(),
            Some("true")
        );
        assert_eq!(
            command_line_config(p, "branch.Main.railsSprint").as_deref(),
            Some("S-1")
        );
        assert_eq!(command_line_config(p, "branch.main.railsSprint"), None);
        assert_eq!(command_line_config(p, "core.x").as_deref(), Some("y"));
        assert_eq!(
            command_line_config("'a.b'='it'\\''s'", "a.b").as_deref(),
            Some("it's")
        );
        assert_eq!(
            command_line_config("'a.b'='1' 'a.b'='2'", "a.b").as_deref(),
            Some("2")
        );
    }
}
