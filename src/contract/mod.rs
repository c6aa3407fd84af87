//! Sprint contracts: drafts in the work tree, frozen versions as a commit chain under
//! `refs/rails/contracts/<sprint>`, and validation.
//!
//! A draft is `.rails/contracts/<sprint>.json`. Freezing writes its canonical form as
//! `contract.json` in a new commit on the sprint's ref (compare-and-swap from the tip that was
//! read) and makes the draft read-only. Nothing rewrites a frozen version: a change is a new
//! version (v1 → v1.1 → v1.2) on top of the chain.

pub mod checks;
pub mod generate;
pub mod junit;
pub mod schema;
pub mod validate;

use std::path::{Path, PathBuf};

use crate::error::{Context, Error, Result};
use crate::store::{self, refs, CommitInfo, ObjectId, Store};
use schema::{Contract, Problem};

/// The file every frozen version's tree holds.
pub const CONTRACT_FILE: &str = "contract.json";

/// One frozen version of a sprint's contract.
#[derive(Debug, Clone)]
pub struct Frozen {
    pub sprint: String,
    /// `v1`, `v1.1`, …
    pub version: String,
    pub commit: ObjectId,
    /// The commit HEAD pointed at when the version was frozen.
    pub base: Option<ObjectId>,
    /// Seconds since the epoch.
    pub frozen_at: i64,
    pub contract: Contract,
}

/// The ref of a sprint's frozen versions.
pub fn contract_ref(sprint: &str) -> String {
    format!("{}{sprint}", refs::CONTRACTS)
}

/// Where a sprint's draft lives in the work tree.
pub fn draft_path(root: &Path, sprint: &str) -> PathBuf {
    root.join(".rails")
        .join("contracts")
        .join(format!("{sprint}.json"))
}

/// Refuses a sprint id that cannot be a ref component or a file name.
pub fn check_sprint(sprint: &str) -> Result<()> {
    schema::check_sprint_id(sprint).map_err(Error::usage)
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
pub fn load_draft(root: &Path, sprint: &str) -> Result<(PathBuf, Contract)> {
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
    sprint: &str,
    root: Option<&Path>,
) -> std::result::Result<Contract, Vec<Problem>> {
    let contract = schema::parse_at(bytes, root)?;
    if contract.sprint_id != sprint {
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

fn frozen_from(store: &Store, sprint: &str, info: &CommitInfo) -> Result<Frozen> {
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
    Ok(Frozen {
        sprint: sprint.to_string(),
        version,
        commit: info.id,
        base,
        frozen_at: info.time,
        contract,
    })
}

/// Every frozen version of `sprint`, oldest first (empty when never frozen).
pub fn versions(store: &Store, sprint: &str) -> Result<Vec<Frozen>> {
    let Some(tip) = store.ref_target(&contract_ref(sprint))? else {
        return Ok(Vec::new());
    };
    store
        .chain(tip)?
        .iter()
        .map(|info| frozen_from(store, sprint, info))
        .collect()
}

/// The newest frozen version, or None.
pub fn newest(store: &Store, sprint: &str) -> Result<Option<Frozen>> {
    let Some(tip) = store.ref_target(&contract_ref(sprint))? else {
        return Ok(None);
    };
    let info = store.commit_info(tip)?;
    frozen_from(store, sprint, &info).map(Some)
}

/// The newest frozen version, refused when the sprint was never frozen.
pub fn require_newest(store: &Store, sprint: &str) -> Result<Frozen> {
    newest(store, sprint)?.ok_or_else(|| not_frozen(sprint))
}

fn not_frozen(sprint: &str) -> Error {
    Error::refused(format!("{sprint} has no frozen contract")).hint(format!(
        "freeze its draft with `git rails contract freeze {sprint}` (see `git rails contract list`)"
    ))
}

/// A given version (`v1.1`), or the newest when `version` is None.
pub fn find(store: &Store, sprint: &str, version: Option<&str>) -> Result<Frozen> {
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
        if let Some(f) = newest(store, &sprint)? {
            out.push(f);
        }
    }
    Ok(out)
}

/// Freezes the draft of `sprint`: v1 when the sprint was never frozen, or (with `bump`) the
/// next version on top of the tip. Returns the new version.
pub fn freeze(store: &Store, sprint: &str, bump: bool) -> Result<Frozen> {
    check_sprint(sprint)?;
    let root = store.workdir()?.to_path_buf();
    let _lock = store::lock(
        store.common_dir(),
        &format!("rails/locks/contract-{sprint}.lock"),
        || {},
    )?;
    let (path, contract) = load_draft(&root, sprint)?;
    let tip = newest(store, sprint)?;
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
            if t.contract.to_canonical_json() == contract.to_canonical_json() {
                return Err(Error::refused(format!(
                    "the draft of {sprint} equals the frozen {}; there is nothing to bump",
                    t.version
                ))
                .hint(format!(
                    "change the draft with `git rails contract edit {sprint} --next` first"
                )));
            }
            next_version(&t.version)
        }
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
    let msg = store::message(
        &format!("contract {sprint} {version}"),
        &changes.join("\n"),
        &[
            ("Rails-Sprint", sprint.to_string()),
            ("Rails-Contract-Version", version.clone()),
            ("Rails-Contract-Id", contract.id.clone()),
            (
                "Rails-Base",
                base.map(|b| b.to_string()).unwrap_or_else(|| "none".into()),
            ),
        ],
    );
    let files = vec![(CONTRACT_FILE.to_string(), contract.to_canonical_json())];
    let expected = tip.as_ref().map(|t| t.commit);
    let Some(commit) = store.append_commit(&contract_ref(sprint), expected, &files, &msg)? else {
        return Err(Error::refused(format!(
            "another freeze of {sprint} landed while this one was being written; nothing was written"
        ))
        .hint(format!("see `git rails contract history {sprint}` and try again")));
    };
    make_read_only(&path)?;
    let info = store.commit_info(commit)?;
    frozen_from(store, sprint, &info)
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

#[cfg(test)]
mod tests {
    use super::next_version;

    #[test]
    fn versions_count_up() {
        assert_eq!(next_version("v1"), "v1.1");
        assert_eq!(next_version("v1.1"), "v1.2");
        assert_eq!(next_version("v1.9"), "v1.10");
    }
}
