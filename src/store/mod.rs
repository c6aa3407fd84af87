//! The only module that reads or writes git objects, refs and notes, and the records' files.
//!
//! Objects go through `gix` in process (SHA-1 or SHA-256 repositories alike): commit chains
//! under a ref moved by compare-and-swap, notes that `git notes --ref=<name> show <commit>`
//! reads, file reads at a commit. Refs go through [`refdb`], which knows whether the repository
//! keeps them as files (read in process) or in reftable (read and moved with git's plumbing);
//! nothing outside this module knows which. Files in the work tree are written atomically
//! ([`atomic_write`]); writers serialise on `fs2` locks under the git common dir ([`lock`]).

mod atomic;
mod cache;
mod config;
mod in_place;
mod lock;
mod porcelain;
mod refdb;
pub mod refs;
mod reftable;
mod review;
mod signed;
mod trees;
mod worktree;

pub use atomic::{atomic_write, atomic_write_mode, cache_write, replace_file};
pub use cache::Memo;
pub use in_place::rewrite_from_difference;
pub use lock::{Lock, LockName};
pub use porcelain::RemoteOutcome;
#[cfg(test)]
pub use porcelain::{temp_repo, test_git};
pub use refdb::LeftLock;
pub use signed::CommitSignature;
use signed::Signing;
pub use trees::ChangedEntry;

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
    /// The entries that differ between two folders, by their ids (a gate compares the same
    /// two `rounds/` folders for the history rule and for what to derive again).
    diffs: std::cell::RefCell<HashMap<FolderPair, Vec<ChangedEntry>>>,
    /// Set by [`Store::forgo_memos`]: no memo is read or written ([`cache`]).
    memos_off: std::cell::Cell<bool>,
}

/// Two folders compared (None: no folder).
type FolderPair = (Option<ObjectId>, Option<ObjectId>);

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

    /// Opens the repository `dir` is in, discovering upwards from it as git does (an agent's
    /// hook event names its folder; the process's own directory is left as it is).
    pub fn discover_from(dir: &Path) -> Result<Store> {
        let repo = gix::discover(dir).map_err(|e| {
            Error::refused(format!(
                "{} is not in a git repository ({e:#})",
                dir.display()
            ))
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
            diffs: Default::default(),
            memos_off: Default::default(),
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
        let c = self
            .repo
            .find_commit(id)
            .ctx(format!("reading commit {id}"))?;
        // gix does not check that an object's bytes hash to its id; a loose file written by
        // hand under a packed commit's id would be read in its place (git reads the pack). The
        // commits the hooks judge must be the ones git has.
        let hashed = gix::objs::compute_hash(id.kind(), gix::object::Kind::Commit, &c.data)
            .ctx(format!("hashing commit {id}"))?;
        if hashed != id {
            return Err(Error::refused(format!(
                "commit {id} in this repository's objects does not hash to its id (it hashes to {hashed}): an object file was written by hand or is corrupt"
            ))
            .hint("run `git fsck` and remove the bad object file"));
        }
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

    /// [`Store::append_commit`] whose commit is signed as `git commit -S` signs one.
    pub fn append_commit_signed(
        &self,
        refname: &str,
        expected: Option<ObjectId>,
        files: &[(String, Vec<u8>)],
        message: &str,
    ) -> Result<Option<ObjectId>> {
        self.write_record_commit(refname, expected, files, &[], message, Signing::AsGitSigns)
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
        self.write_record_commit(refname, expected, files, trees, message, Signing::Unsigned)
    }

    fn write_record_commit(
        &self,
        refname: &str,
        expected: Option<ObjectId>,
        files: &[(String, Vec<u8>)],
        trees: &[(String, ObjectId)],
        message: &str,
        sign: Signing,
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
        let commit = match sign {
            Signing::Unsigned => {
                let sig = self.signature();
                let mut buf = gix::date::parse::TimeBuf::default();
                let s = sig.to_ref(&mut buf);
                self.repo
                    .new_commit_as(s, s, message, tree, expected)
                    .ctx("writing the record commit")?
                    .id
            }
            Signing::AsGitSigns => self.signed_commit(tree, expected, message)?,
        };
        let log = message.lines().next().unwrap_or("record");
        if self.refdb_cas(refname, commit, expected, log)? {
            Ok(Some(commit))
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

    /// A blob's bytes.
    pub fn blob(&self, id: ObjectId) -> Result<Vec<u8>> {
        Ok(self
            .repo
            .find_blob(id)
            .ctx(format!("reading blob {id}"))?
            .data
            .clone())
    }

    /// Whether commit `id` carries a signature (`gpgsig` header): such a record is never
    /// rewritten. A commit that cannot be read counts as signed (it is left alone).
    pub fn is_signed(&self, id: ObjectId) -> bool {
        match self.repo.find_commit(id) {
            Ok(c) => c
                .decode()
                .map(|d| d.extra_headers().pgp_signature().is_some())
                .unwrap_or(true),
            Err(_) => true,
        }
    }

    /// Whether an object exists in the repository.
    pub fn has_object(&self, id: ObjectId) -> bool {
        self.repo.has_object(id)
    }

    /// The commit `id` names, peeling annotated tags; `None` when it is a tree or a blob (which
    /// git may push too). An object that is not in the repository is an error the caller words.
    pub fn peel_to_commit(&self, id: ObjectId) -> Result<Option<ObjectId>> {
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
