//! `git rails sync` / `git spar sync`: records that travel between clones, nothing lost.
//!
//! 1. **Fetch** the remote's `refs/rails/*`, `refs/spar/*`, `refs/notes/rails` and
//!    `refs/notes/spar` into the staging namespace `refs/rails-sync/<remote>/…` with refspecs
//!    that have no `+`: a local record is never overwritten by a fetch, and a staged ref that the
//!    remote rewrote is refused by git and reported. The fetch prunes the staging namespace, so
//!    it mirrors what the remote holds now, never a stale copy.
//! 2. **Merge** each staged ref into its local ref ([`merge`]): create, fast-forward, or write a
//!    merge commit whose parents are both tips (so every record stays reachable and the remote
//!    can fast-forward to it). A frozen contract never merges: two clones that froze different
//!    contents for one version are a conflict, reported with both versions.
//! 3. **Push** every local record ref the remote lacks, atomically, each with a lease on the oid
//!    just fetched (`--force-with-lease=<ref>:<oid>`); when the remote moved meanwhile, the
//!    lease fails and the whole round runs again (bounded, with a growing pause).

pub mod doctor;
pub mod merge;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::contract::SprintId;
use crate::error::{Error, Result};
use crate::store::refs::{self, Namespace, Record};
use crate::store::{self, LockName, ObjectId, Store};
use merge::{Rejected, Renamed, VersionSide};

pub const SCHEMA: &str = "rails-sync/v1";

/// Where fetched records are staged: `refs/rails-sync/<remote>/`.
pub fn staging_prefix(remote: &str) -> String {
    refs::sync_staging(remote)
}

/// The record namespaces that travel, as (remote side, staged side under the prefix).
const SPACES: [(&str, &str); 4] = refs::SYNC_SPACES;

/// The fetch refspecs (no `+`) that stage the remote's records.
pub fn fetch_refspecs(remote: &str) -> Vec<String> {
    let p = staging_prefix(remote);
    SPACES.iter().map(|(r, s)| format!("{r}:{p}{s}")).collect()
}

/// The push refspecs (no `+`) that carry local records.
pub fn push_refspecs() -> Vec<String> {
    SPACES.iter().map(|(r, _)| format!("{r}:{r}")).collect()
}

/// The local name of a staged ref.
fn local_name(remote: &str, staged: &str) -> Option<String> {
    let local = refs::sync_local(remote, staged)?;
    is_record_ref(&local).then_some(local)
}

/// Whether a ref is one of the records that travel.
pub fn is_record_ref(name: &str) -> bool {
    Record::parse(name).is_some()
}

/// What happened to one ref.
#[derive(Debug, Clone, Serialize)]
pub struct RefResult {
    #[serde(rename = "ref")]
    pub name: String,
    /// `up-to-date`, `created`, `fast-forward`, `merged`, `ahead`, `conflict`.
    pub action: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
}

/// A conflict that sync does not settle by itself.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Conflict {
    #[serde(rename = "ref")]
    pub name: String,
    pub kind: String,
    pub sprint: String,
    /// The last version both sides share.
    pub shared_version: Option<String>,
    pub local: Vec<VersionSide>,
    pub remote: Vec<VersionSide>,
    /// The commands that settle it.
    pub settle: String,
}

/// What a sync did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub schema: &'static str,
    pub remote: String,
    /// How many fetch-merge-push rounds it took.
    pub attempts: u32,
    pub refs: Vec<RefResult>,
    pub pushed: Vec<String>,
    pub conflicts: Vec<Conflict>,
    pub rejected: Vec<Rejected>,
    pub renamed: Vec<Renamed>,
    pub notes: Vec<String>,
}

impl Report {
    /// What a person must know after a sync, one line each (the CLI prints them on stderr,
    /// `prog` first): contract conflicts and how to settle them, evidence chains left alone,
    /// transitions not applied, spar rounds renamed, and notes.
    pub fn problem_lines(&self, prog: &str, remote: &str) -> Vec<String> {
        let report = self;
        let mut out = Vec::new();
        for c in &report.conflicts {
            if c.kind == "evidence-chain" {
                out.push(format!(
                    "{prog}: {}: not synced, nothing was merged or pushed: {}",
                    c.name, c.settle
                ));
                continue;
            }
            out.push(format!(
                "{prog}: conflict: {} — this clone and {remote} froze different contents after {}:",
                c.name,
                c.shared_version.as_deref().unwrap_or("nothing shared")
            ));
            for v in &c.local {
                out.push(format!(
                    "  here:   {} commit {} contract.json {}",
                    v.version, v.commit, v.digest
                ));
            }
            for v in &c.remote {
                out.push(format!(
                    "  {remote}: {} commit {} contract.json {}",
                    v.version, v.commit, v.digest
                ));
            }
            out.push(format!("  nothing was merged or deleted. To settle, keep {remote}'s and bump yours on top of it:"));
            out.push(format!("    {}", c.settle));
        }
        for r in &report.rejected {
            out.push(format!(
                    "{prog}: {}: transition {} ({}) is illegal in the merged order and was not applied (kept in history): {}",
                    r.refname,
                    r.transition,
                    &r.commit[..12.min(r.commit.len())],
                    r.reason
                ));
        }
        for r in &report.renamed {
            out.push(format!(
                    "{prog}: spar series {}: two clones named a round {}; the later one is now {} (both kept)",
                    r.series, r.round, r.renamed_to
                ));
        }
        for n in &report.notes {
            out.push(format!("{prog}: note: {n}"));
        }
        out
    }

    /// Whether everything merged without anything reported.
    pub fn clean(&self) -> bool {
        self.conflicts.is_empty() && self.rejected.is_empty() && self.renamed.is_empty()
    }

    /// Whether a person must decide something: a frozen contract that diverged. A renamed
    /// round, a union of notes or a transition left out of the merged order are settled by
    /// the merge itself (and reported), so they do not fail the command.
    pub fn needs_decision(&self) -> bool {
        !self.conflicts.is_empty()
    }
}

/// Options of one sync.
pub struct Options<'a> {
    pub remote: &'a str,
    /// How many fetch-merge-push rounds before giving up.
    pub attempts: u32,
}

fn check_remote(store: &Store, remote: &str) -> Result<()> {
    if store
        .config_string(&format!("remote.{remote}.url"))
        .is_none()
    {
        return Err(Error::refused(format!("there is no remote named {remote:?}"))
            .hint(format!("add it with `git remote add {remote} <url>`, or name another: `git rails sync <remote>`")));
    }
    Ok(())
}

/// Fetches the remote's records into the staging namespace.
pub fn fetch(store: &Store, remote: &str) -> Result<()> {
    // --prune: a staged copy of a record the remote no longer has is dropped, so what is
    // compared below is what the remote holds now (a record deleted there is pushed back).
    let fetched = store.fetch_refspecs(remote, &fetch_refspecs(remote))?;
    let (ok, err) = (fetched.ok, fetched.stderr);
    if !ok {
        let rejected: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("[rejected]"))
            .map(str::trim)
            .collect();
        if !rejected.is_empty() {
            // The remote's record moved to something that does not contain what was fetched
            // before: it was rewritten there. The fetch kept the staged copy; nothing merges.
            return Err(Error::refused(format!(
                "{remote} rewrote records that were fetched before (the fetch refused to overwrite them, nothing was merged or pushed):\n  {}",
                rejected.join("\n  ")
            ))
            .hint(format!(
                "find out who rewrote them, and install the server-side hook there (`git rails hooks install` in the bare repository); the copies fetched before are under {}",
                staging_prefix(remote)
            )));
        } else if let Some(e) = store.lock_in_the_way() {
            return Err(e.context(format!("git fetch {remote} failed")));
        } else {
            return Err(
                Error::internal(format!("git fetch {remote} failed: {}", err.trim()))
                    .hint(format!("check the remote: `git ls-remote {remote}`")),
            );
        }
    }
    Ok(())
}

enum Reconciled {
    Done(RefResult),
    Conflict(RefResult, Conflict),
}

/// Brings one local ref together with its staged remote tip.
fn reconcile(
    store: &Store,
    remote: &str,
    name: &str,
    theirs: ObjectId,
    report: &mut Report,
) -> Result<Reconciled> {
    let record = Record::parse(name)
        .ok_or_else(|| Error::internal(format!("{name} is not a record ref")))?;
    // The lock a local writer of this ref holds, so a merge never races one.
    let _lock = match LockName::writer_of(record) {
        Some(lock) => Some(store.lock(&lock, || {})?),
        None => None,
    };
    for _ in 0..20 {
        let ours = store.ref_target(name)?;
        let result = |action: &str, local: Option<ObjectId>| RefResult {
            name: name.to_string(),
            action: action.to_string(),
            local: local.map(|l| l.to_string()),
            remote: Some(theirs.to_string()),
        };
        // An evidence chain that does not replay is neither taken from the remote nor merged
        // into (and so never pushed): its state would be a summary nobody observed.
        if let Record::Evidence(sprint) = record {
            let sprint = &SprintId::recorded(sprint);
            for (side, tip) in [("the remote's", Some(theirs)), ("this clone's", ours)] {
                let Some(tip) = tip else { continue };
                if let Some(p) = crate::evidence::chain::derive_at(store, sprint, tip)?.problem {
                    let conflict = Conflict {
                        name: name.to_string(),
                        kind: "evidence-chain".into(),
                        sprint: sprint.to_string(),
                        shared_version: None,
                        local: Vec::new(),
                        remote: Vec::new(),
                        settle: format!(
                            "{side} chain: {}; {}",
                            p.line(sprint),
                            if side == "this clone's" {
                                p.fix(sprint)
                            } else {
                                format!("ask whoever pushed it to drop {} there; nothing of it was taken", &p.commit[..12.min(p.commit.len())])
                            }
                        ),
                    };
                    return Ok(Reconciled::Conflict(result("conflict", ours), conflict));
                }
            }
        }
        let Some(ours) = ours else {
            if store.cas_ref(name, theirs, None, "sync: created from the remote")? {
                return Ok(Reconciled::Done(result("created", Some(theirs))));
            }
            continue;
        };
        if ours == theirs {
            return Ok(Reconciled::Done(result("up-to-date", Some(ours))));
        }
        if store.is_ancestor(&theirs.to_string(), &ours.to_string())? {
            return Ok(Reconciled::Done(result("ahead", Some(ours))));
        }
        if store.is_ancestor(&ours.to_string(), &theirs.to_string())? {
            if store.cas_ref(name, theirs, Some(ours), "sync: fast-forward")? {
                return Ok(Reconciled::Done(result("fast-forward", Some(theirs))));
            }
            continue;
        }
        // Diverged.
        let merged = if let Record::Contract(sprint) = record {
            let (local, remote_side, shared) = crate::contract::merge::sides(store, ours, theirs)?;
            let same =
                |x: &VersionSide, y: &VersionSide| x.version == y.version && x.digest == y.digest;
            if local.len() == remote_side.len()
                && local.iter().zip(&remote_side).all(|(x, y)| same(x, y))
            {
                // The same contents frozen twice (two clones froze one committed draft): no
                // conflict. The remote's commits win, since the remote cannot take ours without
                // a rewrite; ours stay reachable under refs/rails-sync/kept/.
                let kept = refs::sync_kept_contract(sprint, ours);
                store.cas_ref(&kept, ours, None, "sync: the same versions, frozen twice")?;
                if store.cas_ref(
                    name,
                    theirs,
                    Some(ours),
                    "sync: the same versions as the remote",
                )? {
                    report.notes.push(format!(
                        "{name}: this clone and {remote} froze the same contents; now at {remote}'s commits (this clone's kept at {kept})"
                    ));
                    return Ok(Reconciled::Done(result("same-contents", Some(theirs))));
                }
                continue;
            }
            let conflict = Conflict {
                name: name.to_string(),
                kind: "contract-version".into(),
                sprint: sprint.to_string(),
                shared_version: shared,
                local,
                remote: remote_side,
                settle: format!(
                    "git rails sync --keep-remote {sprint} {remote} && git rails contract freeze {sprint} --bump"
                ),
            };
            return Ok(Reconciled::Conflict(
                result("conflict", Some(ours)),
                conflict,
            ));
        } else {
            merge::merge(store, name, record, ours, theirs)?
        };
        let mut trailers: Vec<(&str, String)> = vec![("Rails-Sync-Merge", theirs.to_string())];
        trailers.extend(merged.trailers.iter().cloned());
        let msg = store::message(
            &format!("sync: merge {name} from {remote}"),
            "Both tips are parents: every record of both clones stays in history.",
            &trailers,
        );
        let commit = store.write_commit(merged.tree, &[ours, theirs], &msg)?;
        if store.cas_ref(name, commit, Some(ours), "sync: merge")? {
            report.rejected.extend(merged.rejected);
            report.renamed.extend(merged.renamed);
            report.notes.extend(merged.notes);
            return Ok(Reconciled::Done(result("merged", Some(commit))));
        }
    }
    Err(Error::internal(format!(
        "{name} kept moving while sync merged it; run `git rails sync {remote}` again"
    )))
}

/// Every local record ref with its tip.
fn local_records(store: &Store) -> Result<BTreeMap<String, ObjectId>> {
    let mut out = BTreeMap::new();
    for space in Namespace::TRAVELLING {
        for (rest, id) in store.refs_under(space.prefix())? {
            out.insert(space.name(rest), id);
        }
    }
    for n in refs::TRAVELLING_NOTES {
        if let Some(id) = store.ref_target(n)? {
            out.insert(n.to_string(), id);
        }
    }
    Ok(out)
}

/// The staged remote tips, by local name.
pub fn staged(store: &Store, remote: &str) -> Result<BTreeMap<String, ObjectId>> {
    let prefix = staging_prefix(remote);
    let mut out = BTreeMap::new();
    for (rest, id) in store.refs_under(&prefix)? {
        if let Some(local) = local_name(remote, &format!("{prefix}{rest}")) {
            out.insert(local, id);
        }
    }
    Ok(out)
}

/// The report with what several rounds found once each.
fn finish(mut r: Report) -> Report {
    let mut seen = std::collections::BTreeSet::new();
    r.rejected.retain(|x| seen.insert(x.commit.clone()));
    let mut seen = std::collections::BTreeSet::new();
    r.renamed
        .retain(|x| seen.insert((x.series.clone(), x.round.clone(), x.renamed_to.clone())));
    let mut seen = std::collections::BTreeSet::new();
    r.notes.retain(|x| seen.insert(x.clone()));
    r
}

/// One full sync with `remote`.
pub fn sync(store: &Store, opts: &Options<'_>, progress: &mut dyn FnMut(&str)) -> Result<Report> {
    let remote = opts.remote;
    check_remote(store, remote)?;
    let _lock = store.lock(&LockName::sync(), || {
        progress("waiting for another sync of this clone to finish")
    })?;
    let mut report = Report {
        schema: SCHEMA,
        remote: remote.to_string(),
        attempts: 0,
        refs: Vec::new(),
        pushed: Vec::new(),
        conflicts: Vec::new(),
        rejected: Vec::new(),
        renamed: Vec::new(),
        notes: Vec::new(),
    };
    let attempts = opts.attempts.max(1);
    for attempt in 1..=attempts {
        report.attempts = attempt;
        report.refs.clear();
        report.conflicts.clear();
        report.pushed.clear();
        progress(&format!("fetching records from {remote}"));
        fetch(store, remote)?;
        let remote_tips = staged(store, remote)?;
        let mut conflicted = Vec::new();
        for (name, theirs) in &remote_tips {
            match reconcile(store, remote, name, *theirs, &mut report)? {
                Reconciled::Done(r) => {
                    if r.action == "merged" || r.action == "fast-forward" || r.action == "created" {
                        progress(&format!("{}: {}", r.name, r.action));
                    }
                    report.refs.push(r);
                }
                Reconciled::Conflict(r, c) => {
                    progress(&format!("{}: conflict (see below)", r.name));
                    conflicted.push(r.name.clone());
                    report.refs.push(r);
                    report.conflicts.push(c);
                }
            }
        }
        // Push what the remote lacks, each with a lease on the oid just fetched.
        let locals = local_records(store)?;
        let mut pushes: Vec<(String, ObjectId, Option<ObjectId>)> = Vec::new();
        for (name, tip) in &locals {
            if conflicted.contains(name) {
                continue;
            }
            if let Some(sprint) = Namespace::Evidence.key_of(name) {
                let sprint = &SprintId::recorded(sprint);
                if let Some(p) = crate::evidence::chain::derive(store, sprint)?.problem {
                    report.conflicts.push(Conflict {
                        name: name.clone(),
                        kind: "evidence-chain".into(),
                        sprint: sprint.to_string(),
                        shared_version: None,
                        local: Vec::new(),
                        remote: Vec::new(),
                        settle: format!(
                            "this clone's chain: {}; {}",
                            p.line(sprint),
                            p.fix(sprint)
                        ),
                    });
                    conflicted.push(name.clone());
                    continue;
                }
            }
            let theirs = remote_tips.get(name).copied();
            if theirs == Some(*tip) {
                continue;
            }
            // The lease would let a non-fast-forward through: push only what contains the
            // remote's record (a local writer can only have added on top since the merge).
            if let Some(t) = theirs {
                if !store.is_ancestor(&t.to_string(), &tip.to_string())? {
                    report.notes.push(format!(
                        "{name} does not contain {remote}'s record; not pushed (run `git rails sync {remote}` again)"
                    ));
                    continue;
                }
            }
            if !remote_tips.contains_key(name) {
                report.refs.push(RefResult {
                    name: name.clone(),
                    action: "new".into(),
                    local: Some(tip.to_string()),
                    remote: None,
                });
            }
            pushes.push((name.clone(), *tip, theirs));
        }
        if pushes.is_empty() {
            return Ok(finish(report));
        }
        progress(&format!(
            "pushing {} record ref(s) to {remote}",
            pushes.len()
        ));
        let pushed = store.push_with_leases(remote, &pushes)?;
        let (ok, out, err) = (pushed.ok, pushed.stdout, pushed.stderr);
        if ok {
            for (name, tip, theirs) in &pushes {
                let staged_name = refs::sync_staged(remote, name);
                let _ = store.cas_ref(&staged_name, *tip, *theirs, "sync: pushed")?;
                report.pushed.push(name.clone());
            }
            return Ok(finish(report));
        }
        let text = format!("{out}\n{err}");
        let remote_moved = text.contains("stale info")
            || text.contains("fetch first")
            || text.contains("non-fast-forward")
            || text.contains("atomic push failed")
            || text.contains("cannot lock ref")
            || text.contains("failed to update ref");
        if text.contains("pre-receive hook declined") || !remote_moved {
            return Err(Error::refused(format!(
                "{remote} refused the records: {}",
                err.trim()
            ))
            .hint(format!(
                "see `git rails doctor`; the remote's pre-receive hook says why (records are never rewritten there); fetch and merge with `git rails sync {remote}`"
            )));
        }
        progress(&format!(
            "{remote} moved while pushing (attempt {attempt} of {attempts}); fetching again"
        ));
        // A growing pause, different per process, so racing clones stop colliding.
        let jitter = u64::from(std::process::id() % 17) * 3;
        std::thread::sleep(Duration::from_millis(
            20 * u64::from(attempt) * u64::from(attempt) + jitter,
        ));
    }
    Err(Error::internal(format!(
        "{remote} kept moving: {attempts} rounds of fetch, merge and push lost the race; nothing local was lost, run `git rails sync {remote}` again"
    )))
}

/// `--keep-remote <sprint>`: settles a contract conflict by taking the remote's chain. The local
/// chain stays reachable at `refs/rails-sync/kept/contracts/<sprint>/<commit>`, and the local
/// draft (the content this clone froze) can then be frozen on top with `--bump`.
pub fn keep_remote(store: &Store, remote: &str, sprint: &str) -> Result<(ObjectId, ObjectId)> {
    check_remote(store, remote)?;
    // The sprint is checked here, where it enters, after the remote (as it always was).
    let sprint = &SprintId::parse(sprint)?;
    fetch(store, remote)?;
    let name = Namespace::Contracts.name(sprint);
    let staged_name = refs::sync_staged(remote, &name);
    let theirs = store.ref_target(&staged_name)?.ok_or_else(|| {
        Error::refused(format!("{remote} has no frozen contract {sprint}"))
            .hint(format!("push yours with `git rails sync {remote}`"))
    })?;
    let ours = store.ref_target(&name)?.ok_or_else(|| {
        Error::refused(format!("this clone has no frozen contract {sprint}"))
            .hint(format!("`git rails sync {remote}` fetches it"))
    })?;
    if store.is_ancestor(&ours.to_string(), &theirs.to_string())?
        || store.is_ancestor(&theirs.to_string(), &ours.to_string())?
    {
        return Err(Error::refused(format!(
            "{sprint}: the local and remote chains have not diverged; nothing to settle"
        ))
        .hint(format!("run `git rails sync {remote}`")));
    }
    let kept = refs::sync_kept_contract(sprint, ours);
    store.cas_ref(&kept, ours, None, "sync: kept the superseded local chain")?;
    if !store.cas_ref(&name, theirs, Some(ours), "sync: keep the remote's chain")? {
        return Err(
            Error::refused(format!("{name} moved meanwhile; nothing changed")).hint(format!(
                "run `git rails sync --keep-remote {sprint} {remote}` again"
            )),
        );
    }
    Ok((ours, theirs))
}

/// `--setup`: the remote's configuration that makes plain `git fetch` stage the records and
/// plain `git push` carry them, without `+`. Returns the lines added (none when already set).
pub fn setup(store: &Store, remote: &str) -> Result<Vec<String>> {
    check_remote(store, remote)?;
    let existing = |key: &str| store.local_config_all(key);
    let mut added = Vec::new();
    let fetch_key = format!("remote.{remote}.fetch");
    let have = existing(&fetch_key)?;
    for spec in fetch_refspecs(remote) {
        if !have.contains(&spec) {
            add_config(store, &fetch_key, &spec)?;
            added.push(format!("{fetch_key} = {spec}"));
        }
    }
    let push_key = format!("remote.{remote}.push");
    let have = existing(&push_key)?;
    // With any push refspec configured, a plain `git push` pushes only those: keep pushing the
    // current branch as before.
    let mut wanted = Vec::new();
    if have.is_empty() {
        wanted.push("HEAD".to_string());
    }
    wanted.extend(push_refspecs());
    for spec in wanted {
        if !have.contains(&spec) {
            add_config(store, &push_key, &spec)?;
            added.push(format!("{push_key} = {spec}"));
        }
    }
    Ok(added)
}

fn add_config(store: &Store, key: &str, value: &str) -> Result<()> {
    let added = store.local_config_add(key, value)?;
    let (ok, err) = (added.ok, added.stderr);
    if !ok {
        if let Some(e) = store.git_too_old() {
            return Err(e);
        }
        return Err(Error::internal(format!(
            "git config --add {key} failed: {}",
            err.trim()
        )));
    }
    Ok(())
}

/// The remote to use when none is named: the current branch's, else `origin`.
pub fn default_remote(store: &Store) -> String {
    store
        .current_branch()
        .ok()
        .flatten()
        .and_then(|b| store.config_string(&format!("branch.{b}.remote")))
        .filter(|r| r != ".")
        .unwrap_or_else(|| "origin".to_string())
}
