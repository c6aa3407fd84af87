//! Sprint contracts: drafts in the work tree, frozen versions as a commit chain under
//! `refs/rails/contracts/<sprint>`, and validation.
//!
//! A draft is `.rails/contracts/<sprint>.json`. Freezing writes its canonical form as
//! `contract.json` in a new commit on the sprint's ref (compare-and-swap from the tip that was
//! read) and makes the draft read-only. Nothing rewrites a frozen version: a change is a new
//! version (v1 → v1.1 → v1.2) on top of the chain.

pub mod checks;
pub mod confine;
pub mod generate;
pub mod junit;
pub mod merge;
mod named;
pub mod pinned;
pub mod schema;
mod sprint;
pub mod validate;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Context, Error, Result};
use crate::store::{self, refs, CommitInfo, ObjectId, Store};
pub use named::{named_by, resolve_for_commit};
use schema::{Contract, Problem};
pub use sprint::SprintId;

/// The file every frozen version's tree holds.
pub const CONTRACT_FILE: &str = "contract.json";
/// The criteria a version dropped on purpose (`freeze --bump --drop <id> --reason …`); absent
/// when it dropped none.
pub const DROPPED_FILE: &str = "dropped.json";

/// A blocking criterion a version removed or made non-blocking, and why: a criterion never
/// vanishes silently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Dropped {
    pub id: String,
    /// `removed` or `made non-blocking`.
    pub change: String,
    /// The last version in which it was a blocking criterion.
    pub blocking_in: String,
    pub reason: String,
}

/// One `--drop <id> --reason <text>` of a freeze.
#[derive(Debug, Clone)]
pub struct DropRequest {
    pub id: String,
    pub reason: String,
}

/// A criterion that was blocking in some version and is not blocking in the newest, with no
/// drop recorded since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vanished {
    pub id: String,
    pub change: &'static str,
    pub blocking_in: String,
}

/// The criteria of `chain` (oldest first: version, contract, its recorded drops) that were
/// blocking in some version, are not blocking in the last one, and whose drop no later version
/// records.
pub fn vanished(chain: &[(&str, &Contract, &[Dropped])]) -> Vec<Vanished> {
    let Some((_, last, _)) = chain.last() else {
        return Vec::new();
    };
    let blocking_in = |c: &Contract, id: &str| c.check(id).is_some_and(|k| k.blocking);
    let mut ids: Vec<&str> = Vec::new();
    for (_, c, _) in chain {
        for k in c.dod.checks.iter().filter(|k| k.blocking) {
            if !ids.contains(&k.id.as_str()) {
                ids.push(&k.id);
            }
        }
    }
    let mut out = Vec::new();
    for id in ids {
        if blocking_in(last, id) {
            continue;
        }
        let Some(l) = chain.iter().rposition(|(_, c, _)| blocking_in(c, id)) else {
            continue;
        };
        if chain[l + 1..]
            .iter()
            .any(|(_, _, d)| d.iter().any(|x| x.id == id))
        {
            continue;
        }
        out.push(Vanished {
            id: id.to_string(),
            change: if last.check(id).is_some() {
                "made non-blocking"
            } else {
                "removed"
            },
            blocking_in: chain[l].0.to_string(),
        });
    }
    out
}

/// Every drop recorded in `versions` whose criterion is not blocking in the newest, with the
/// version that recorded it.
pub fn drops_in_force(versions: &[Frozen]) -> Vec<(String, Dropped)> {
    let Some(newest) = versions.last() else {
        return Vec::new();
    };
    versions
        .iter()
        .flat_map(|f| f.dropped.iter().map(|d| (f.version.clone(), d.clone())))
        .filter(|(_, d)| !newest.contract.check(&d.id).is_some_and(|k| k.blocking))
        .collect()
}

/// The chain of `versions` as [`vanished`] reads it.
pub fn chain_of(versions: &[Frozen]) -> Vec<(&str, &Contract, &[Dropped])> {
    versions
        .iter()
        .map(|f| (f.version.as_str(), &f.contract, f.dropped.as_slice()))
        .collect()
}

/// One frozen version of a sprint's contract.
#[derive(Debug, Clone)]
pub struct Frozen {
    pub sprint: String,
    /// `v1`, `v1.1`, …
    pub version: String,
    pub commit: ObjectId,
    /// The version commit's tree (`contract.json`, and what `pinned.json` captured).
    pub tree: ObjectId,
    /// The commit HEAD pointed at when the version was frozen.
    pub base: Option<ObjectId>,
    /// Seconds since the epoch.
    pub frozen_at: i64,
    pub contract: Contract,
    /// The criteria this version dropped on purpose.
    pub dropped: Vec<Dropped>,
}

/// The ref of a sprint's frozen versions.
pub fn contract_ref(sprint: &str) -> String {
    refs::Namespace::Contracts.name(sprint)
}

/// Where a sprint's draft lives in the work tree.
pub fn draft_path(root: &Path, sprint: &SprintId) -> PathBuf {
    root.join(".rails")
        .join("contracts")
        .join(format!("{sprint}.json"))
}

/// The version after `v`: v1 → v1.1, v1.1 → v1.2.
pub fn next_version(v: &str) -> String {
    match v.rsplit_once('.') {
        Some((major, minor)) if v.matches('.').count() == 1 => match minor.parse::<u64>() {
            Ok(n) => format!("{major}.{}", n + 1),
            Err(_) => format!("{v}.1"),
        },
        _ => format!("{v}.1"),
    }
}

/// A refusal listing every problem of a contract document.
pub fn problems_error(what: &str, problems: &[Problem], hint: &str) -> Error {
    let mut msg = format!("{what} is out of form:");
    for p in problems {
        msg.push_str("\n  ");
        msg.push_str(&p.to_string());
    }
    Error::refused(msg).hint(hint)
}

/// Reads and checks a sprint's draft. A missing draft or a draft out of form is refused.
pub fn load_draft(root: &Path, sprint: &SprintId) -> Result<(PathBuf, Contract)> {
    let path = draft_path(root, sprint);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::refused(format!(
                "no draft for {sprint}: {} does not exist",
                rel(root, &path)
            ))
            .hint(format!(
                "draft one from the sprint document with `git rails contract generate <sprint-doc.md> --sprint {sprint}`"
            )))
        }
        Err(e) => return Err(Error::internal(format!("reading {}: {e}", path.display()))),
    };
    let contract = parse_for(&bytes, sprint, Some(root)).map_err(|p| {
        problems_error(
            &format!("the draft {}", rel(root, &path)),
            &p,
            &format!("fix it with `git rails contract edit {sprint}` and run the command again"),
        )
    })?;
    Ok((path, contract))
}

/// Parses a contract document that must belong to `sprint`.
pub fn parse_for(
    bytes: &[u8],
    sprint: &SprintId,
    root: Option<&Path>,
) -> std::result::Result<Contract, Vec<Problem>> {
    let contract = schema::parse_at(bytes, root)?;
    if contract.sprint_id != sprint.as_str() {
        return Err(vec![Problem {
            path: "sprintId".into(),
            message: format!(
                "{:?} does not match the sprint {sprint}",
                contract.sprint_id
            ),
        }]);
    }
    Ok(contract)
}

/// `path` relative to `root` for messages.
pub fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn frozen_from(store: &Store, sprint: &SprintId, info: &CommitInfo) -> Result<Frozen> {
    let bytes = store
        .read_file_in_tree(info.tree, CONTRACT_FILE)?
        .ok_or_else(|| {
            Error::internal(format!(
                "{} at {} has no {CONTRACT_FILE}; the record is damaged",
                contract_ref(sprint),
                info.id
            ))
        })?;
    let contract = schema::parse(&bytes).map_err(|p| {
        problems_error(
            &format!(
                "the frozen contract {} at {}",
                contract_ref(sprint),
                info.id
            ),
            &p,
            "the record was written by another tool or damaged; inspect it with `git show`",
        )
    })?;
    let version = info.trailer("Rails-Contract-Version").ok_or_else(|| {
        Error::internal(format!(
            "commit {} on {} has no Rails-Contract-Version trailer",
            info.id,
            contract_ref(sprint)
        ))
    })?;
    let base = info
        .trailer("Rails-Base")
        .and_then(|b| ObjectId::from_hex(b.as_bytes()).ok());
    let dropped = match store.read_file_in_tree(info.tree, DROPPED_FILE)? {
        None => Vec::new(),
        Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            Error::internal(format!(
                "{} at {}: {DROPPED_FILE} cannot be read: {e}; the record is damaged",
                contract_ref(sprint),
                info.id
            ))
        })?,
    };
    Ok(Frozen {
        sprint: sprint.to_string(),
        version,
        commit: info.id,
        tree: info.tree,
        base,
        frozen_at: info.time,
        contract,
        dropped,
    })
}

/// Every frozen version of `sprint`, oldest first (empty when never frozen).
pub fn versions(store: &Store, sprint: &SprintId) -> Result<Vec<Frozen>> {
    let Some(tip) = store.ref_target(&contract_ref(sprint))? else {
        return Ok(Vec::new());
    };
    store
        .chain(tip)?
        .iter()
        .map(|info| frozen_from(store, sprint, info))
        .collect()
}

/// Whether the sprint has a frozen contract: its contract ref exists. What the commit-msg
/// hook needs on every commit of a bound branch; reading the contract itself would open the
/// pack it was gc'ed into (a third of that hook's instructions). The gate, which reads it, is
/// what judges it.
pub fn is_frozen(store: &Store, sprint: &SprintId) -> Result<bool> {
    Ok(store.ref_target(&contract_ref(sprint))?.is_some())
}

/// The newest frozen version, or None.
pub fn newest(store: &Store, sprint: &SprintId) -> Result<Option<Frozen>> {
    let Some(tip) = store.ref_target(&contract_ref(sprint))? else {
        return Ok(None);
    };
    let info = store.commit_info(tip)?;
    frozen_from(store, sprint, &info).map(Some)
}

/// The newest frozen version, refused when the sprint was never frozen.
pub fn require_newest(store: &Store, sprint: &SprintId) -> Result<Frozen> {
    newest(store, sprint)?.ok_or_else(|| not_frozen(sprint))
}

fn not_frozen(sprint: &SprintId) -> Error {
    Error::refused(format!("{sprint} has no frozen contract")).hint(format!(
        "freeze its draft with `git rails contract freeze {sprint}` (see `git rails contract list`)"
    ))
}

/// A given version (`v1.1`), or the newest when `version` is None.
pub fn find(store: &Store, sprint: &SprintId, version: Option<&str>) -> Result<Frozen> {
    match version {
        None => require_newest(store, sprint),
        Some(v) => {
            let all = versions(store, sprint)?;
            if all.is_empty() {
                return Err(not_frozen(sprint));
            }
            let known: Vec<String> = all.iter().map(|f| f.version.clone()).collect();
            all.into_iter().find(|f| f.version == v).ok_or_else(|| {
                Error::refused(format!(
                    "{sprint} has no version {v} (versions: {})",
                    known.join(", ")
                ))
                .hint(format!("see `git rails contract history {sprint}`"))
            })
        }
    }
}

/// Every frozen sprint with its newest version.
pub fn list(store: &Store) -> Result<Vec<Frozen>> {
    let mut out = Vec::new();
    for (sprint, _) in store.refs_under(refs::CONTRACTS)? {
        if let Some(f) = newest(store, &SprintId::recorded(&sprint))? {
            out.push(f);
        }
    }
    Ok(out)
}

/// Freezes the draft of `sprint`: v1 when the sprint was never frozen, or (with `bump`) the
/// next version on top of the tip. Returns the new version.
///
/// With `sign` (or `commit.gpgSign` true) the version's commit is signed as `git commit -S`
/// signs one, so a policy's planner can vouch for it; a signed bump of a draft that equals the
/// frozen version re-states it (the way to sign a version frozen unsigned).
pub fn freeze(
    store: &Store,
    sprint: &SprintId,
    bump: bool,
    drops: &[DropRequest],
    sign: bool,
) -> Result<Frozen> {
    let sign = sign || store.config_flag("commit.gpgSign");
    if !bump && !drops.is_empty() {
        return Err(Error::usage(
            "--drop needs --bump: only a new version can drop a criterion of an earlier one",
        ));
    }
    for (i, d) in drops.iter().enumerate() {
        if d.reason.trim().is_empty() {
            return Err(Error::usage(format!(
                "--drop {}: the --reason is empty; say why the criterion is no longer needed",
                d.id
            )));
        }
        if drops[..i].iter().any(|x| x.id == d.id) {
            return Err(Error::usage(format!("--drop {} is given twice", d.id)));
        }
    }
    let root = store.workdir()?.to_path_buf();
    let _lock = store.lock(&store::LockName::contract(sprint), || {})?;
    let (path, contract) = load_draft(&root, sprint)?;
    let tip = newest(store, sprint)?;
    // What the checks read is frozen with them (see `pinned`).
    let (pins, pin_files) = pinned::capture(store, &root, &contract)?;
    let version = match (&tip, bump) {
        (Some(t), false) => {
            return Err(Error::refused(format!(
                "{sprint} is already frozen at {}; a frozen version is never rewritten",
                t.version
            ))
            .hint(format!(
                "to change it, edit a new draft with `git rails contract edit {sprint} --next` and freeze it with `git rails contract freeze {sprint} --bump`"
            )))
        }
        (None, true) => {
            return Err(Error::refused(format!(
                "{sprint} has no frozen version to bump"
            ))
            .hint(format!("freeze the first version with `git rails contract freeze {sprint}`")))
        }
        (None, false) => "v1".to_string(),
        (Some(t), true) => {
            let tip_pins = pinned::load(store, t.tree)?.unwrap_or_default();
            let same_pins =
                tip_pins.files == pins.files && tip_pins.checklists == pins.checklists;
            if t.contract.to_canonical_json() == contract.to_canonical_json()
                && drops.is_empty()
                && same_pins
                && !sign
            {
                return Err(Error::refused(format!(
                    "the draft of {sprint} equals the frozen {}; there is nothing to bump",
                    t.version
                ))
                .hint(format!(
                    "change the draft with `git rails contract edit {sprint} --next` first (or sign the same checks with `git rails contract freeze {sprint} --bump --sign`)"
                )));
            }
            next_version(&t.version)
        }
    };
    let dropped = match &tip {
        Some(_) => check_drops(store, sprint, &version, &contract, drops)?,
        None => Vec::new(),
    };
    let base = store.head_commit()?;
    let changes = match &tip {
        Some(t) => describe_changes(&t.contract, &contract),
        None => vec![format!(
            "{} checks, {} prerequisites, {} runtime commands",
            contract.dod.checks.len(),
            contract.environment_prerequisites.len(),
            contract.runtime_validation.commands.len()
        )],
    };
    let mut changes = changes;
    if changes.is_empty() && sign {
        changes.push("the same checks, frozen again to be signed".to_string());
    }
    for d in &dropped {
        changes.push(format!(
            "dropped {} ({}; blocking in {}): {}",
            d.id, d.change, d.blocking_in, d.reason
        ));
    }
    if !pins.files.is_empty() {
        let paths: Vec<&str> = pins.files.keys().map(String::as_str).collect();
        changes.push(format!("froze what its checks read: {}", paths.join(", ")));
    }
    let mut trailers = vec![
        ("Rails-Sprint", sprint.to_string()),
        ("Rails-Contract-Version", version.clone()),
        ("Rails-Contract-Id", contract.id.clone()),
        (
            "Rails-Base",
            base.map(|b| b.to_string()).unwrap_or_else(|| "none".into()),
        ),
    ];
    for d in &dropped {
        trailers.push(("Rails-Dropped", d.id.clone()));
    }
    let msg = store::message(
        &format!("contract {sprint} {version}"),
        &changes.join("\n"),
        &trailers,
    );
    let mut files = vec![(CONTRACT_FILE.to_string(), contract.to_canonical_json())];
    files.extend(pin_files);
    if !dropped.is_empty() {
        let mut bytes = serde_json::to_vec_pretty(&dropped)
            .map_err(|e| Error::internal(format!("rendering {DROPPED_FILE}: {e}")))?;
        bytes.push(b'\n');
        files.push((DROPPED_FILE.to_string(), bytes));
    }
    let expected = tip.as_ref().map(|t| t.commit);
    let written = if sign {
        store.append_commit_signed(&contract_ref(sprint), expected, &files, &msg)?
    } else {
        store.append_commit(&contract_ref(sprint), expected, &files, &msg)?
    };
    let Some(commit) = written else {
        return Err(Error::refused(format!(
            "another freeze of {sprint} landed while this one was being written; nothing was written"
        ))
        .hint(format!("see `git rails contract history {sprint}` and try again")));
    };
    make_read_only(&path)?;
    let info = store.commit_info(commit)?;
    frozen_from(store, sprint, &info)
}

/// The drops of a new version `version` (the draft `next`): every blocking criterion of an
/// earlier version that `next` removes or makes non-blocking must be named by a `--drop`, and
/// every `--drop` must name one of them.
fn check_drops(
    store: &Store,
    sprint: &SprintId,
    version: &str,
    next: &Contract,
    drops: &[DropRequest],
) -> Result<Vec<Dropped>> {
    let versions = versions(store, sprint)?;
    let mut chain = chain_of(&versions);
    chain.push((version, next, &[]));
    let gone = vanished(&chain);
    for d in drops {
        if !gone.iter().any(|g| g.id == d.id) {
            let what = if gone.is_empty() {
                "it drops none".to_string()
            } else {
                let ids: Vec<&str> = gone.iter().map(|g| g.id.as_str()).collect();
                format!("it drops {}", ids.join(", "))
            };
            return Err(Error::refused(format!(
                "--drop {}: {version} does not remove {} or make it non-blocking ({what}); nothing was written",
                d.id, d.id
            ))
            .hint(format!(
                "name only the criteria the draft drops (see `git rails contract show {sprint}` and the draft)"
            )));
        }
    }
    let silent: Vec<&Vanished> = gone
        .iter()
        .filter(|g| !drops.iter().any(|d| d.id == g.id))
        .collect();
    if !silent.is_empty() {
        let list: Vec<String> = silent
            .iter()
            .map(|g| format!("{} ({}; blocking in {})", g.id, g.change, g.blocking_in))
            .collect();
        let flags: Vec<String> = silent
            .iter()
            .map(|g| format!("--drop {} --reason \"<why it is no longer needed>\"", g.id))
            .collect();
        return Err(Error::refused(format!(
            "{version} of {sprint} would drop {} without saying so: {}. A criterion never vanishes silently; nothing was written",
            if silent.len() == 1 { "a criterion" } else { "criteria" },
            list.join(", ")
        ))
        .hint(format!(
            "name each one: `git rails contract freeze {sprint} --bump {}`, or keep it in the draft (`git rails contract edit {sprint} --next`)",
            flags.join(" ")
        )));
    }
    Ok(gone
        .into_iter()
        .map(|g| Dropped {
            reason: drops
                .iter()
                .find(|d| d.id == g.id)
                .map(|d| d.reason.trim().to_string())
                .unwrap_or_default(),
            id: g.id,
            change: g.change.to_string(),
            blocking_in: g.blocking_in,
        })
        .collect())
}

/// Sets 0444 on a draft (the seed's "contract file is read-only").
pub fn make_read_only(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o444))
        .ctx(format!("making {} read-only", path.display()))
}

/// What changed from one version to the next, one line each.
pub fn describe_changes(old: &Contract, new: &Contract) -> Vec<String> {
    let mut out = Vec::new();
    for c in &new.dod.checks {
        match old.check(&c.id) {
            None => out.push(format!("added check {} ({})", c.id, c.kind.as_str())),
            Some(o) if o.kind != c.kind || o.spec != c.spec => {
                out.push(format!("changed the spec of check {}", c.id))
            }
            Some(o) if o != c => out.push(format!("changed check {}", c.id)),
            Some(_) => {}
        }
    }
    for c in &old.dod.checks {
        if new.check(&c.id).is_none() {
            out.push(format!("removed check {}", c.id));
        }
    }
    if old.environment_prerequisites != new.environment_prerequisites {
        out.push("changed environmentPrerequisites".into());
    }
    if old.runtime_validation != new.runtime_validation {
        out.push("changed runtimeValidation".into());
    }
    if old.non_goals != new.non_goals {
        out.push("changed nonGoals".into());
    }
    if old.risk_flags != new.risk_flags {
        out.push("changed riskFlags".into());
    }
    if old.reviewer_profile != new.reviewer_profile {
        out.push("changed reviewerProfile".into());
    }
    if old.approval_gates != new.approval_gates {
        out.push("changed approvalGates".into());
    }
    if old.sprint_type != new.sprint_type {
        out.push("changed type".into());
    }
    if out.is_empty() {
        out.push("no change to checks or settings".into());
    }
    out
}

/// RFC 3339 (UTC) for seconds since the epoch.
pub fn rfc3339(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| seconds.to_string())
}

/// The rails-contract/v1 document of one frozen version (`contract show --json`, and the MCP
/// `contract` tool).
pub fn frozen_json(f: &Frozen) -> serde_json::Value {
    serde_json::json!({
        "schema": "rails-contract/v1",
        "sprint": f.sprint,
        "version": f.version,
        "commit": f.commit.to_string(),
        "base": f.base.map(|b| b.to_string()),
        "frozenAt": rfc3339(f.frozen_at),
        "dropped": f.dropped,
        "contract": f.contract,
    })
}

/// The rails-contract-list/v1 document of `contract list --json` (and the MCP `contracts` tool).
pub fn list_json(all: &[Frozen]) -> serde_json::Value {
    serde_json::json!({
        "schema": "rails-contract-list/v1",
        "sprints": all.iter().map(|f| serde_json::json!({
            "sprint": f.sprint,
            "version": f.version,
            "type": f.contract.sprint_type.as_str(),
            "checks": f.contract.dod.checks.len(),
            "commit": f.commit.to_string(),
            "frozenAt": rfc3339(f.frozen_at),
        })).collect::<Vec<_>>(),
    })
}

/// The sprint given, or the one bound to the current branch.
pub fn resolve_sprint(store: &Store, given: Option<String>) -> Result<SprintId> {
    if let Some(s) = given {
        return SprintId::parse(&s);
    }
    let Some(branch) = store.current_branch()? else {
        return Err(
            Error::usage("no sprint given, and HEAD is detached so no branch names one").hint(
                "name the sprint, or bind one to a branch with `git rails contract bind <sprint>`",
            ),
        );
    };
    match store.config_string(&format!("branch.{branch}.railsSprint")) {
        Some(s) if !s.trim().is_empty() => SprintId::parse(s.trim()),
        _ => Err(Error::usage(format!(
            "no sprint given, and branch {branch} has none bound"
        ))
        .hint("name the sprint, or bind one with `git rails contract bind <sprint>`")),
    }
}

#[cfg(test)]
mod tests {
    use super::{next_version, vanished, Dropped};
    use crate::contract::schema::Contract;

    fn contract(checks: &[(&str, bool)]) -> Contract {
        let checks: Vec<serde_json::Value> = checks
            .iter()
            .map(|(id, blocking)| {
                serde_json::json!({"id": id, "description": "d", "kind": "file_exists",
                    "spec": {"path": "x"}, "blocking": blocking})
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "version": "v1", "id": "01JDQ7ZK3M8T5V2W9X4Y6Z0ABC", "sprintId": "S",
            "createdAt": "2026-11-30T12:00:00Z", "type": "feature", "dod": {"checks": checks},
            "environmentPrerequisites": [], "nonGoals": [], "runtimeValidation": {"commands": []},
            "riskFlags": [], "reviewerProfile": "static",
            "approvalGates": {"impl": true, "review": true, "deploy": false}
        }))
        .unwrap()
    }

    #[test]
    fn vanished_criteria_are_those_no_later_version_dropped() {
        let v1 = contract(&[("a", true), ("b", true), ("c", false)]);
        let v2 = contract(&[("a", false)]);
        let none: &[Dropped] = &[];
        let got: Vec<(String, &str, String)> = vanished(&[("v1", &v1, none), ("v1.1", &v2, none)])
            .into_iter()
            .map(|v| (v.id, v.change, v.blocking_in))
            .collect();
        assert_eq!(
            got,
            [
                ("a".to_string(), "made non-blocking", "v1".to_string()),
                ("b".to_string(), "removed", "v1".to_string())
            ]
        );
        let drop_b = [Dropped {
            id: "b".into(),
            change: "removed".into(),
            blocking_in: "v1".into(),
            reason: "r".into(),
        }];
        let got = vanished(&[("v1", &v1, none), ("v1.1", &v2, &drop_b)]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].id, "a");
        // Restored later: nothing vanished.
        let v3 = contract(&[("a", true), ("b", true)]);
        assert!(
            vanished(&[("v1", &v1, none), ("v1.1", &v2, none), ("v1.2", &v3, none)]).is_empty()
        );
    }

    #[test]
    fn versions_count_up() {
        assert_eq!(next_version("v1"), "v1.1");
        assert_eq!(next_version("v1.1"), "v1.2");
        assert_eq!(next_version("v1.9"), "v1.10");
    }
}
