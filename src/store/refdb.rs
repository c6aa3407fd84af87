//! How refs are read and moved: one interface, two backends, and only the store knows which.
//!
//! * **files** (loose refs and `packed-refs`, git's classic layout): read in process by gix;
//!   moved by our own compare-and-swap on the loose ref (`<ref>.lock` created exclusively, the
//!   value checked under it, renamed over the ref), as git's files backend does. An update never
//!   takes `packed-refs.lock` (a loose ref overrides its packed copy), so a `packed-refs.lock`
//!   that a dead `git pack-refs` left behind does not stop records from being written.
//! * **reftable** (`extensions.refStorage = reftable`, Git 3.0's default), which gix cannot read:
//!   refs are read with git's plumbing (`git for-each-ref`, `git symbolic-ref`,
//!   `git rev-parse`) and moved with `git update-ref --stdin` transactions
//!   (`start`, `update <ref> <new> <old>`, `prepare`, `commit`), which compare and swap in any
//!   backend. The listing is read once from the reftable files in process ([`super::reftable`];
//!   `git for-each-ref` when that reader is not sure) and kept while `reftable/tables.list` is
//!   unchanged (git rewrites that file on every ref update). Objects are still read and
//!   written by gix in process.
//!
//! Locks: our writers of refs serialise on one fs2 lock (`rails/locks/refs.lock`); its holder
//! notes there the `<ref>.lock` it created, so the next holder recognises a lock file left by a
//! killed writer of ours and removes it. A lock that may belong to a running git (a foreign
//! ref's lock, `packed-refs.lock`, `reftable/tables.list.lock`, or a fresh one nobody noted) is
//! never removed: the write waits briefly, then fails with 75 naming the file and the remedy.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use gix::bstr::ByteSlice;

use super::{ObjectId, Store};
use crate::error::{Context, Error, Result};

/// The fs2 lock every writer of ours holds while it moves a ref.
const WRITER_LOCK: &str = "rails/locks/refs.lock";
/// How long a write waits for a ref lock held by someone else before it gives up (75).
const LOCK_WAIT: Duration = Duration::from_millis(1500);
/// A lock file of one of our refs this old, found while we hold the writer lock, is left over
/// from a writer that died (git holds a ref lock for milliseconds).
const STALE_AFTER: Duration = Duration::from_secs(10);

/// Which ref storage the repository uses.
pub(super) enum Backend {
    Files,
    Reftable(GitRefs),
}

/// The reftable backend's state: the last listing of every ref.
#[derive(Default)]
pub(super) struct GitRefs {
    snapshot: RefCell<Option<Rc<Snapshot>>>,
}

struct Snapshot {
    /// `tables.list` of the common dir and of the worktree's own refs when it was taken.
    key: Vec<u8>,
    refs: BTreeMap<String, ObjectId>,
    /// HEAD as listed: (the branch it names, its commit); None when the listing had no HEAD
    /// (an unborn branch, or a git without `--include-root-refs`).
    head: Option<(Option<String>, Option<ObjectId>)>,
}

/// Where HEAD is.
pub(super) struct Head {
    /// The full name of the branch HEAD names, None when detached.
    pub branch: Option<String>,
    /// Its commit, None on an unborn branch.
    pub id: Option<ObjectId>,
}

/// A lock file found in the repository (for `doctor`).
#[derive(Debug, Clone)]
pub struct LeftLock {
    pub path: PathBuf,
    pub age: Duration,
    /// The lock of one of our own refs (`refs/rails/`, `refs/spar/`, our notes and staging
    /// refs): our next write removes it once it is stale.
    pub ours: bool,
}

/// Refs only the tools write.
fn ours(name: &str) -> bool {
    name.starts_with("refs/rails/")
        || name.starts_with("refs/spar/")
        || name.starts_with("refs/rails-sync/")
        || name == super::refs::NOTES_RAILS
        || name == super::refs::NOTES_SPAR
}

/// Refs that belong to one worktree (git keeps them in that worktree's git dir).
fn per_worktree(name: &str) -> bool {
    !name.starts_with("refs/")
        || name.starts_with("refs/bisect/")
        || name.starts_with("refs/worktree/")
        || name.starts_with("refs/rewritten/")
}

fn age(path: &Path) -> Option<Duration> {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .map(|t| t.elapsed().unwrap_or_default())
}

/// A ref name git accepts, or 64 naming the rule it broke.
pub(super) fn check_ref_name(name: &str) -> Result<()> {
    gix::validate::reference::name(name.as_bytes().as_bstr()).map_err(|e| {
        Error::usage(format!("{name:?} cannot be a git ref name: {e}")).hint(
            "ids become ref names: use letters, digits, '-', '_' and '.', not starting or ending with '.', without '..', '@{', spaces or '~^:?*[\\'",
        )
    })?;
    Ok(())
}

fn lock_in_the_way(lock: &Path, what: &str) -> Error {
    Error::temporary(format!(
        "{} exists: {what}; nothing was written",
        lock.display()
    ))
    .hint(format!(
        "run the command again in a moment; if no git command is running in this repository, the lock is left over from one that died: rm '{}'",
        lock.display()
    ))
}

impl Backend {
    pub(super) fn detect(repo: &gix::Repository) -> Backend {
        let reftable = repo
            .config_snapshot()
            .string("extensions.refStorage")
            .is_some_and(|v| v.eq_ignore_ascii_case(b"reftable"));
        if reftable {
            Backend::Reftable(GitRefs::default())
        } else {
            Backend::Files
        }
    }

    pub(super) fn fresh(&self) -> Backend {
        match self {
            Backend::Files => Backend::Files,
            Backend::Reftable(_) => Backend::Reftable(GitRefs::default()),
        }
    }
}

impl Store {
    /// `files` or `reftable`: how this repository stores its refs.
    pub fn ref_format(&self) -> &'static str {
        match self.refdb {
            Backend::Files => "files",
            Backend::Reftable(_) => "reftable",
        }
    }

    /// `sha1` or `sha256`: the repository's object format.
    pub fn object_format(&self) -> &'static str {
        match self.repo.object_hash() {
            gix::hash::Kind::Sha1 => "sha1",
            _ => "sha256",
        }
    }

    /// The all-zero id of this repository's object format (40 or 64 zeros): what the hook
    /// protocol sends for a ref that does not exist.
    pub fn null_id(&self) -> ObjectId {
        ObjectId::null(self.repo.object_hash())
    }

    /// Whether `hex` is a full object id of this repository's format (40 or 64 hex digits).
    pub fn is_full_id(&self, hex: &str) -> bool {
        hex.len() == self.repo.object_hash().len_in_hex()
            && hex.bytes().all(|b| b.is_ascii_hexdigit())
    }

    /// A `git` command for this repository: `GIT_DIR` (and `GIT_WORK_TREE`) given explicitly,
    /// so git never has to discover the repository (`safe.bareRepository = explicit`).
    pub(super) fn git_command(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.env("GIT_DIR", &self.git_dir);
        match &self.workdir {
            Some(w) => {
                cmd.env("GIT_WORK_TREE", w).current_dir(w);
            }
            None => {
                cmd.env_remove("GIT_WORK_TREE").current_dir(&self.git_dir);
            }
        }
        cmd
    }

    /// Runs plumbing git with `args` (and `stdin`); a failure is an error that names a git too
    /// old for this repository when that is the cause.
    fn plumbing(&self, args: &[&str], stdin: Option<&[u8]>) -> Result<Output> {
        let mut cmd = self.git_command();
        cmd.args(args)
            .env("LC_ALL", "C")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let out = match stdin {
            None => cmd.stdin(Stdio::null()).output(),
            Some(input) => {
                cmd.stdin(Stdio::piped());
                let mut child = cmd.spawn().ctx(format!("running git {}", args.join(" ")))?;
                if let Some(mut w) = child.stdin.take() {
                    let _ = w.write_all(input);
                }
                child.wait_with_output()
            }
        };
        out.ctx(format!("running git {}", args.join(" ")))
    }

    /// The error for a git command that failed: a git too old for this repository is named,
    /// anything else is internal with git's own words.
    pub(super) fn git_failed(&self, args: &[&str], stderr: &[u8]) -> Error {
        if let Some(e) = self.git_too_old() {
            return e;
        }
        Error::internal(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(stderr).trim()
        ))
    }

    /// A refusal naming the installed git when it is older than this repository needs
    /// (reftable refs: 2.45; SHA-256 objects: 2.29), else None.
    pub fn git_too_old(&self) -> Option<Error> {
        let mut needs: Vec<((u32, u32), &str)> = Vec::new();
        if matches!(self.refdb, Backend::Reftable(_)) {
            needs.push((
                (2, 45),
                "its refs are stored in reftable (extensions.refStorage = reftable)",
            ));
        }
        if self.object_format() == "sha256" {
            needs.push((
                (2, 29),
                "its objects use SHA-256 (extensions.objectFormat = sha256)",
            ));
        }
        if needs.is_empty() {
            return None;
        }
        let out = Command::new("git").arg("--version").output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let version = parse_git_version(&text)?;
        let (need, why) = needs.into_iter().find(|(need, _)| version < *need)?;
        Some(
            Error::refused(format!(
                "{text} is too old for this repository: {why}, which needs git {}.{} or newer",
                need.0, need.1
            ))
            .hint("install a newer git (https://git-scm.com/downloads) and put it first on PATH"),
        )
    }

    // ---- reading ----

    /// Where HEAD is.
    pub(super) fn refdb_head(&self) -> Result<Head> {
        match &self.refdb {
            Backend::Files => {
                let head = self.repo.head().ctx("reading HEAD")?;
                let branch = head
                    .referent_name()
                    .map(|n| n.as_bstr().to_str_lossy().into_owned());
                Ok(Head {
                    branch,
                    id: head.id().map(|id| id.detach()),
                })
            }
            Backend::Reftable(g) => {
                let snap = self.snapshot(g)?;
                if let Some((branch, id)) = &snap.head {
                    return Ok(Head {
                        branch: branch.clone(),
                        id: *id,
                    });
                }
                // Not listed: an unborn branch, or a git that cannot list HEAD.
                let out = self.plumbing(&["symbolic-ref", "-q", "HEAD"], None)?;
                if out.status.success() {
                    let branch = String::from_utf8_lossy(&out.stdout).trim().to_string();
                    let id = snap.refs.get(&branch).copied();
                    return Ok(Head {
                        branch: Some(branch),
                        id,
                    });
                }
                let out = self.plumbing(&["rev-parse", "-q", "--verify", "HEAD"], None)?;
                let id = self.parse_id_output(&out.stdout);
                Ok(Head { branch: None, id })
            }
        }
    }

    fn parse_id_output(&self, stdout: &[u8]) -> Option<ObjectId> {
        ObjectId::from_hex(stdout.trim_ascii()).ok()
    }

    /// Where a ref points (not peeled). A name git would refuse is a usage error (64).
    pub(super) fn refdb_read(&self, name: &str) -> Result<Option<ObjectId>> {
        check_ref_name(name)?;
        match &self.refdb {
            Backend::Files => {
                let r = self
                    .repo
                    .try_find_reference(name)
                    .ctx(format!("reading {name}"))?;
                Ok(r.and_then(|r| r.try_id().map(|id| id.detach())))
            }
            Backend::Reftable(g) => Ok(self.snapshot(g)?.refs.get(name).copied()),
        }
    }

    /// Every direct ref under `prefix`, with the rest of its name, sorted.
    pub(super) fn refdb_list(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>> {
        let mut out = Vec::new();
        match &self.refdb {
            Backend::Files => {
                let platform = self.repo.references().ctx("listing refs")?;
                let iter = platform
                    .prefixed(prefix)
                    .ctx(format!("listing refs under {prefix}"))?;
                for r in iter {
                    let r = r.map_err(|e| {
                        Error::internal(format!("listing refs under {prefix}: {e:#}"))
                    })?;
                    let full = r.name().as_bstr().to_str_lossy().into_owned();
                    if let (Some(rest), Some(id)) = (full.strip_prefix(prefix), r.try_id()) {
                        out.push((rest.to_string(), id.detach()));
                    }
                }
            }
            Backend::Reftable(g) => {
                let snap = self.snapshot(g)?;
                for (name, id) in snap.refs.range(prefix.to_string()..) {
                    let Some(rest) = name.strip_prefix(prefix) else {
                        break;
                    };
                    out.push((rest.to_string(), *id));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// A revision as a commit id, in a reftable repository (gix cannot resolve names there):
    /// full ids and listed ref names in process, anything else by `git rev-parse`.
    pub(super) fn refdb_resolve(&self, rev: &str) -> Result<Option<ObjectId>> {
        let Backend::Reftable(g) = &self.refdb else {
            return Ok(None);
        };
        if self.is_full_id(rev) {
            return Ok(ObjectId::from_hex(rev.as_bytes()).ok());
        }
        let snap = self.snapshot(g)?;
        if rev == "HEAD" || rev == "@" {
            if let Some((_, Some(id))) = &snap.head {
                return Ok(Some(*id));
            }
        } else if rev.starts_with("refs/") {
            if let Some(id) = snap.refs.get(rev) {
                return Ok(Some(*id));
            }
        }
        let spec = format!("{rev}^{{commit}}");
        let out = self.plumbing(
            &["rev-parse", "-q", "--verify", "--end-of-options", &spec],
            None,
        )?;
        if !out.status.success() {
            if let Some(e) = self.git_too_old() {
                return Err(e);
            }
            return Err(Error::refused(format!(
                "cannot resolve revision {rev:?}: git rev-parse knows no commit by that name"
            ))
            .hint("name a commit, branch or tag that exists (see `git log --oneline`)"));
        }
        Ok(self.parse_id_output(&out.stdout))
    }

    fn snapshot(&self, g: &GitRefs) -> Result<Rc<Snapshot>> {
        // The stacks' `tables.list` change whenever a ref of this repository moves.
        let common_list =
            std::fs::read(self.common_dir.join("reftable/tables.list")).unwrap_or_default();
        let own_list = (self.git_dir != self.common_dir)
            .then(|| std::fs::read(self.git_dir.join("reftable/tables.list")).unwrap_or_default());
        let mut key = common_list.clone();
        if let Some(own) = &own_list {
            key.push(0);
            key.extend_from_slice(own);
        }
        if let Some(s) = g.snapshot.borrow().as_ref() {
            if s.key == key {
                return Ok(s.clone());
            }
        }
        if let Some(snap) = self.read_reftables(&common_list, own_list.as_deref(), key.clone()) {
            let snap = Rc::new(snap);
            *g.snapshot.borrow_mut() = Some(snap.clone());
            return Ok(snap);
        }
        let format = "--format=%(refname)%00%(objectname)%00%(symref)";
        let mut with_head = true;
        let mut args = vec!["for-each-ref", "--include-root-refs", format];
        let mut out = self.plumbing(&args, None)?;
        if !out.status.success() && out.status.code() == Some(129) {
            // A git before `--include-root-refs`: HEAD is read on its own when asked for.
            with_head = false;
            args.remove(1);
            out = self.plumbing(&args, None)?;
        }
        if !out.status.success() {
            return Err(self.git_failed(&args, &out.stderr));
        }
        let mut refs = BTreeMap::new();
        let mut head = None;
        for line in out.stdout.lines() {
            let mut parts = line.split(|b| *b == 0);
            let (Some(name), Some(hex), symref) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            let name = name.to_str_lossy().into_owned();
            let Ok(id) = ObjectId::from_hex(hex) else {
                continue;
            };
            let symref = symref.filter(|s| !s.is_empty());
            if name == "HEAD" {
                head = Some((symref.map(|s| s.to_str_lossy().into_owned()), Some(id)));
            } else if symref.is_none() {
                refs.insert(name, id);
            }
        }
        if !with_head {
            head = None;
        }
        let snap = Rc::new(Snapshot { key, refs, head });
        *g.snapshot.borrow_mut() = Some(snap.clone());
        Ok(snap)
    }

    /// The listing read from the reftable files in process, or None when the reader is not
    /// sure (then git lists the refs).
    fn read_reftables(&self, common: &[u8], own: Option<&[u8]>, key: Vec<u8>) -> Option<Snapshot> {
        let hash_len = self.repo.object_hash().len_in_bytes();
        let mut all =
            super::reftable::read_stack(&self.common_dir.join("reftable"), common, hash_len)?;
        if let Some(own) = own {
            // A linked worktree's own refs (its HEAD, refs/bisect/...) are in its own stack.
            let mine = super::reftable::read_stack(&self.git_dir.join("reftable"), own, hash_len)?;
            all.retain(|name, _| !per_worktree(name));
            all.extend(mine);
        }
        let mut refs = BTreeMap::new();
        for (name, value) in &all {
            if let super::reftable::Value::Direct(bytes) = value {
                let id = gix::hash::oid::try_from_bytes(bytes).ok()?.to_owned();
                refs.insert(name.clone(), id);
            }
        }
        let head = match all.get("HEAD") {
            Some(super::reftable::Value::Symbolic(target)) => {
                Some((Some(target.clone()), refs.get(target).copied()))
            }
            Some(super::reftable::Value::Direct(_)) => Some((None, refs.get("HEAD").copied())),
            None => None,
        };
        refs.retain(|name, _| name.starts_with("refs/"));
        Some(Snapshot { key, refs, head })
    }

    // ---- writing ----

    /// Moves `name` to `new` if it is at `expected` now (None: it must not exist). False when it
    /// was elsewhere (nothing written).
    pub(super) fn refdb_cas(
        &self,
        name: &str,
        new: ObjectId,
        expected: Option<ObjectId>,
        log: &str,
    ) -> Result<bool> {
        check_ref_name(name)?;
        let guard = super::lock::lock(&self.common_dir, WRITER_LOCK, || {})?;
        recover_journal(&guard);
        match &self.refdb {
            Backend::Files => self.files_cas(&guard, name, new, expected, log),
            Backend::Reftable(g) => {
                let r = self.reftable_cas(g, name, new, expected, log);
                *g.snapshot.borrow_mut() = None;
                r
            }
        }
    }

    fn ref_path(&self, name: &str) -> PathBuf {
        if per_worktree(name) {
            self.git_dir.join(name)
        } else {
            self.common_dir.join(name)
        }
    }

    fn files_cas(
        &self,
        guard: &super::Lock,
        name: &str,
        new: ObjectId,
        expected: Option<ObjectId>,
        log: &str,
    ) -> Result<bool> {
        let path = self.ref_path(name);
        let lock_path = PathBuf::from(format!("{}.lock", path.display()));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                Error::refused(format!(
                    "cannot write {name}: {} is in the way ({e})",
                    dir.display()
                ))
                .hint("a ref and a folder of refs cannot share a name; pick another id")
            })?;
        }
        let file = self.take_ref_lock(guard, name, &lock_path)?;
        let result = self.files_cas_locked(file, name, &path, &lock_path, new, expected, log);
        if !matches!(result, Ok(true)) {
            let _ = std::fs::remove_file(&lock_path);
        }
        let _ = guard.set_journal("");
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn files_cas_locked(
        &self,
        mut file: std::fs::File,
        name: &str,
        path: &Path,
        lock_path: &Path,
        new: ObjectId,
        expected: Option<ObjectId>,
        log: &str,
    ) -> Result<bool> {
        // Read under the ref's lock: loose first, then packed-refs (read without its lock; git's
        // pack-refs never drops a loose ref whose lock someone holds).
        let current = self.refdb_read(name)?;
        if current != expected {
            return Ok(false);
        }
        file.write_all(format!("{new}\n").as_bytes())
            .ctx(format!("writing {}", lock_path.display()))?;
        drop(file);
        if path.is_dir() {
            return Err(Error::refused(format!(
                "cannot write {name}: refs exist below it ({} is a folder)",
                path.display()
            ))
            .hint("a ref and a folder of refs cannot share a name; pick another id"));
        }
        std::fs::rename(lock_path, path).ctx(format!("moving {name}"))?;
        self.append_reflog(name, current, new, log);
        Ok(true)
    }

    /// Creates `<ref>.lock` exclusively. A lock file already there is removed when it is ours
    /// and stale; otherwise the call waits up to [`LOCK_WAIT`], then fails with 75.
    fn take_ref_lock(
        &self,
        guard: &super::Lock,
        name: &str,
        lock_path: &Path,
    ) -> Result<std::fs::File> {
        let deadline = Instant::now() + LOCK_WAIT;
        loop {
            // Noted before the lock exists: a kill between creating it and noting its inode
            // leaves a `pending` note, and a lock made after the note is then ours.
            let _ = guard.set_journal(&format!("{}\tpending\t\n", lock_path.display()));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(lock_path)
            {
                Ok(f) => {
                    // Noted for the next holder: a kill from here on leaves a lock it recognises.
                    if let Ok(m) = f.metadata() {
                        use std::os::unix::fs::MetadataExt;
                        let _ = guard.set_journal(&format!(
                            "{}\t{}\t{}\n",
                            lock_path.display(),
                            m.dev(),
                            m.ino()
                        ));
                    }
                    return Ok(f);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    // We hold the writer lock, so no writer of ours holds this one: an old lock of
                    // one of our refs is left over from a writer that died.
                    if ours(name) && age(lock_path).is_some_and(|a| a >= STALE_AFTER) {
                        let _ = std::fs::remove_file(lock_path);
                        continue;
                    }
                    if Instant::now() >= deadline {
                        let _ = guard.set_journal("");
                        return Err(lock_in_the_way(
                            lock_path,
                            &format!("another process (a running git?) is writing {name}"),
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(25));
                }
                Err(e) => {
                    return Err(Error::internal(format!(
                        "creating {}: {e}",
                        lock_path.display()
                    )))
                }
            }
        }
    }

    /// Appends to the ref's reflog where git would keep one (`core.logAllRefUpdates`).
    fn append_reflog(&self, name: &str, old: Option<ObjectId>, new: ObjectId, msg: &str) {
        let log = if per_worktree(name) {
            self.git_dir.join("logs").join(name)
        } else {
            self.common_dir.join("logs").join(name)
        };
        let setting = self
            .repo
            .config_snapshot()
            .string("core.logAllRefUpdates")
            .map(|v| v.to_str_lossy().to_ascii_lowercase());
        let create = match setting.as_deref() {
            Some("always") => true,
            Some("false") | Some("no") | Some("off") | Some("0") => false,
            Some(_) => default_logged(name),
            None => self.workdir.is_some() && default_logged(name),
        };
        if !create && !log.exists() {
            return;
        }
        let sig = self.signature();
        let off = sig.time.offset;
        let line = format!(
            "{} {new} {} <{}> {} {}{:02}{:02}\t{}\n",
            old.unwrap_or_else(|| self.null_id()),
            sig.name,
            sig.email,
            sig.time.seconds,
            if off < 0 { '-' } else { '+' },
            off.abs() / 3600,
            off.abs() % 3600 / 60,
            msg.lines().next().unwrap_or("")
        );
        if let Some(dir) = log.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }

    fn reftable_cas(
        &self,
        g: &GitRefs,
        name: &str,
        new: ObjectId,
        expected: Option<ObjectId>,
        log: &str,
    ) -> Result<bool> {
        let old = expected.unwrap_or_else(|| self.null_id());
        let input = format!("start\nupdate {name} {new} {old}\nprepare\ncommit\n");
        let msg = log.lines().next().unwrap_or("record");
        let args = ["update-ref", "-m", msg, "--stdin"];
        let deadline = Instant::now() + LOCK_WAIT;
        loop {
            let out = self.plumbing(&args, Some(input.as_bytes()))?;
            *g.snapshot.borrow_mut() = None;
            if out.status.success() {
                return Ok(true);
            }
            // Moved by someone else (compare-and-swap lost) or not written at all (a lock)?
            if self.refdb_read(name)? != expected {
                return Ok(false);
            }
            if let Some(e) = self.git_too_old() {
                return Err(e);
            }
            let locks: Vec<PathBuf> = ["reftable/tables.list.lock"]
                .iter()
                .map(|l| self.common_dir.join(l))
                .chain(
                    (self.git_dir != self.common_dir)
                        .then(|| self.git_dir.join("reftable/tables.list.lock")),
                )
                .filter(|p| p.exists())
                .collect();
            if Instant::now() >= deadline {
                return Err(match locks.first() {
                    Some(lock) => lock_in_the_way(
                        lock,
                        &format!("a running git may be writing refs, so {name} could not move"),
                    ),
                    None => self.git_failed(&args, &out.stderr),
                });
            }
            if locks.is_empty() {
                return Err(self.git_failed(&args, &out.stderr));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// After a git command failed: the 75 error naming a ref lock file that is in the way (the
    /// likely cause), or None when there is none.
    pub fn lock_in_the_way(&self) -> Option<Error> {
        let lock = self.lock_files().into_iter().next()?;
        Some(lock_in_the_way(
            &lock.path,
            "a running git may be writing refs, or one that died left it",
        ))
    }

    /// Lock files git or a writer left in the repository: every `*.lock` under `refs/`,
    /// `packed-refs.lock`, and reftable's `tables.list.lock`.
    pub fn lock_files(&self) -> Vec<LeftLock> {
        let mut out = Vec::new();
        let mut roots = vec![self.common_dir.clone()];
        if self.git_dir != self.common_dir {
            roots.push(self.git_dir.clone());
        }
        for root in roots {
            for single in ["packed-refs.lock", "reftable/tables.list.lock", "HEAD.lock"] {
                let p = root.join(single);
                if let Some(a) = age(&p) {
                    out.push(LeftLock {
                        path: p,
                        age: a,
                        ours: false,
                    });
                }
            }
            let mut stack = vec![root.join("refs")];
            while let Some(d) = stack.pop() {
                let Ok(rd) = std::fs::read_dir(&d) else {
                    continue;
                };
                for e in rd.flatten() {
                    let p = e.path();
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        stack.push(p);
                    } else if p.extension().is_some_and(|x| x == "lock") {
                        let name = p
                            .strip_prefix(&root)
                            .map(|r| r.with_extension("").to_string_lossy().into_owned())
                            .unwrap_or_default();
                        if let Some(a) = age(&p) {
                            out.push(LeftLock {
                                path: p,
                                age: a,
                                ours: ours(&name),
                            });
                        }
                    }
                }
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }
}

/// Refs git logs by default (`core.logAllRefUpdates = true`).
fn default_logged(name: &str) -> bool {
    name == "HEAD"
        || name.starts_with("refs/heads/")
        || name.starts_with("refs/remotes/")
        || name.starts_with("refs/notes/")
}

/// Removes the ref lock a killed writer of ours noted in the writer lock (the same file, by
/// device and inode, so a lock git created later at that path is never touched).
fn recover_journal(guard: &super::Lock) {
    use std::os::unix::fs::MetadataExt;
    let journal = guard.journal();
    if journal.is_empty() {
        return;
    }
    // When the note was written: a `pending` note's lock is ours if it was made after it.
    let noted_at = std::fs::metadata(&guard.path)
        .and_then(|m| m.modified())
        .ok();
    for line in journal.lines() {
        let mut f = line.split('\t');
        let (Some(path), Some(dev), Some(ino)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let path = Path::new(path);
        if let Ok(m) = std::fs::metadata(path) {
            let same_file = m.dev().to_string() == dev && m.ino().to_string() == ino;
            let made_after_note = dev == "pending"
                && matches!((m.modified(), noted_at), (Ok(made), Some(noted)) if made >= noted);
            if same_file || made_after_note {
                let _ = std::fs::remove_file(path);
            }
        }
    }
    let _ = guard.set_journal("");
}

/// `git version 2.47.3` (or `2.39.2.windows.1`, `2.45.0.rc1`) as (major, minor).
fn parse_git_version(text: &str) -> Option<(u32, u32)> {
    let v = text.strip_prefix("git version ")?;
    let mut parts = v.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_versions() {
        assert_eq!(parse_git_version("git version 2.47.3"), Some((2, 47)));
        assert_eq!(
            parse_git_version("git version 2.39.2.windows.1"),
            Some((2, 39))
        );
        assert_eq!(parse_git_version("git version 2.45.0.rc1"), Some((2, 45)));
        assert_eq!(parse_git_version("hub version 2"), None);
    }

    #[test]
    fn ref_names_git_refuses_are_usage_errors() {
        for bad in [
            "refs/rails/contracts/S.",
            "refs/rails/contracts/a..b",
            "refs/rails/contracts/x.lock",
            "refs/rails/contracts/a b",
        ] {
            let e = check_ref_name(bad).unwrap_err();
            assert_eq!(e.kind, crate::error::Kind::Usage, "{bad}");
        }
        check_ref_name("refs/rails/contracts/SPRINT-001").unwrap();
        check_ref_name("HEAD").unwrap();
    }

    #[test]
    fn a_noted_lock_is_removed_and_a_foreign_one_at_the_same_path_is_not() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let guard = super::super::lock::lock(dir.path(), WRITER_LOCK, || {}).unwrap();
        let lock = dir.path().join("x.lock");
        std::fs::write(&lock, "").unwrap();
        let m = std::fs::metadata(&lock).unwrap();
        guard
            .set_journal(&format!("{}\t{}\t{}\n", lock.display(), m.dev(), m.ino()))
            .unwrap();
        recover_journal(&guard);
        assert!(!lock.exists());
        assert_eq!(guard.journal(), "");
        // A journal naming a path whose file is another one (git made it later): kept.
        std::fs::write(&lock, "").unwrap();
        // The inode the journal names is not the new file's (the file system may hand the new
        // file any inode, the old one's included).
        let now = std::fs::metadata(&lock).unwrap();
        guard
            .set_journal(&format!(
                "{}\t{}\t{}\n",
                lock.display(),
                now.dev(),
                now.ino() + 1
            ))
            .unwrap();
        recover_journal(&guard);
        assert!(lock.exists());
    }
}
