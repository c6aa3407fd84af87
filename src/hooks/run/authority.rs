//! What a signing policy adds to judging an update of a protected ref: the pusher never
//! chooses the sprint that judges its push ([`not_counted`]), and the policy itself changes
//! only by a person's signed commit ([`policy_changes`]).

use super::*;
use crate::policy::{Role, POLICY_FILE};

/// A signing policy in force for one update, with the ref's tip before it (None: a new ref).
pub struct Authority<'a> {
    pub policy: &'a crate::policy::Policy,
    pub old: Option<ObjectId>,
}

/// Why `sprint` does not count for an update under a signing policy (with the command that
/// makes it count on the lines after the first), or None when it does.
pub(super) fn not_counted(
    store: &Store,
    a: &Authority,
    sprint: &SprintId,
) -> Result<Option<String>> {
    let Some(frozen) = contract::newest(store, sprint)? else {
        return Ok(None); // the gate says it has no frozen contract, with its own next step
    };
    let signer = a.policy.signer(store, frozen.commit)?;
    if !a.policy.allows(&signer, Role::Planner) {
        let planners = a.policy.principals(Role::Planner);
        return Ok(Some(format!(
            "{sprint} {} is {}; under the signing policy ({}) only a version an allowed planner signed defines done here\n  a planner ({}) signs it: `git rails contract freeze {sprint} --bump --sign`",
            frozen.version,
            a.policy.describe(&signer),
            a.policy.source,
            if planners.is_empty() { "none is named: `rails.planner`".to_string() } else { planners.join(", ") },
        )));
    }
    if let Some(old) = a.old {
        if gate::evaluate(store, sprint, gate::Judged::Commit(old))?.done {
            return Ok(Some(format!(
                "{sprint} {} was already done at {} (the ref's tip before this push): a finished sprint never covers later work\n  this work needs a new sprint, or a bumped one: `git rails contract edit {sprint} --next`, then a planner runs `git rails contract freeze {sprint} --bump --sign`",
                frozen.version,
                &old.to_string()[..7]
            )));
        }
    }
    Ok(None)
}

/// The new commits of an update (reachable from `tip`, not from `stop`) that change the policy
/// file or the allowed-signers file it names, each a refusal line unless a person under the
/// policy in force before the update signed it. Without a policy before, anyone may bring one.
pub(super) fn policy_changes(
    store: &Store,
    a: &Authority,
    tip: ObjectId,
    stop: &HashSet<ObjectId>,
) -> Result<Vec<String>> {
    let mut paths = vec![POLICY_FILE.to_string()];
    if let Some(p) = a.policy.signers_path() {
        paths.push(p.to_string());
    }
    let file_ids = |c: ObjectId| -> Result<Vec<Option<ObjectId>>> {
        let tree = store.tree_of(c)?;
        paths.iter().map(|p| store.file_at(tree, p)).collect()
    };
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut queue = vec![tip];
    while let Some(id) = queue.pop() {
        if seen.len() >= 1000 || stop.contains(&id) || !seen.insert(id) {
            continue;
        }
        let info = store.commit_info(id)?;
        let mine = file_ids(id)?;
        let changed = if info.parents.is_empty() {
            mine.iter().any(Option::is_some)
        } else {
            let mut any = false;
            for p in &info.parents {
                any |= file_ids(*p)? != mine;
            }
            any
        };
        if changed {
            let signer = a.policy.signer(store, id)?;
            if !a.policy.allows(&signer, Role::Person) {
                out.push(format!(
                    "commit {} changes {} and is {}; the signing policy ({}) changes only by a commit an allowed person signs",
                    &id.to_string()[..7],
                    paths.join(" or "),
                    a.policy.describe(&signer),
                    a.policy.source
                ));
            }
        }
        queue.extend(info.parents.iter().copied());
    }
    Ok(out)
}
