//! The sprints a commit names: what CI judges when no sprint is given.
//!
//! A CI job runs in a fresh clone where no branch is bound; the commit carries its sprint in
//! the `Rails-Sprint:` trailer the commit-msg hook adds. `gate --commit REV` and `verify
//! --commit REV` with no sprint named judge every sprint REV names, and with `--since BASE`
//! every sprint the commits after BASE name (a pull request's merge commit names none; its
//! commits do). With none named the branch's binding decides, as without `--commit`.

use std::collections::BTreeSet;

use super::{resolve_sprint, SprintId};
use crate::error::{Error, Result};
use crate::store::{ObjectId, Store};

/// Every sprint named by a `Rails-Sprint:` line of `commit`'s message, or, with `since`, of
/// the messages of the commits reachable from `commit` and not from `since`; sorted, once
/// each. A name that is no sprint name is refused (it names the commit).
pub fn named_by(store: &Store, commit: ObjectId, since: Option<ObjectId>) -> Result<Vec<SprintId>> {
    let commits = match since {
        Some(base) => store.commits_between(base, commit)?,
        None => vec![commit],
    };
    let mut names = BTreeSet::new();
    for c in commits {
        let info = store.commit_info(c)?;
        for line in info.message.lines().filter(|l| !l.starts_with('#')) {
            if let Some((k, v)) = line.split_once(':') {
                if k.trim().eq_ignore_ascii_case("Rails-Sprint") && !v.trim().is_empty() {
                    let s = SprintId::parse(v.trim()).map_err(|e| {
                        e.context(format!("the Rails-Sprint trailer of commit {}", short(c)))
                    })?;
                    names.insert(s);
                }
            }
        }
    }
    Ok(names.into_iter().collect())
}

/// The sprints a command judges: the one `given`; else, when a commit is named (`--commit`,
/// `--since`), every sprint those commits name; else (or when they name none) the one bound
/// to the branch. Returns the sprints and whether they came from the commits.
pub fn resolve_for_commit(
    store: &Store,
    given: Option<String>,
    commit: Option<ObjectId>,
    since: Option<ObjectId>,
) -> Result<(Vec<SprintId>, bool)> {
    if given.is_some() {
        return Ok((vec![resolve_sprint(store, given)?], false));
    }
    let Some(commit) = commit else {
        return Ok((vec![resolve_sprint(store, None)?], false));
    };
    let named = named_by(store, commit, since)?;
    if !named.is_empty() {
        return Ok((named, true));
    }
    let what = match since {
        Some(base) => format!("no commit of {}..{} names one", short(base), short(commit)),
        None => format!("commit {} names none", short(commit)),
    };
    resolve_sprint(store, None)
        .map(|s| (vec![s], false))
        .map_err(|e| {
            Error::usage(format!("{} ({what} in a `Rails-Sprint:` trailer)", e.message)).hint(
                "name the sprint (`git rails gate <sprint> --commit REV`), judge the commits after the base with `--since BASE`, or bind one with `git rails contract bind <sprint>`",
            )
        })
}

fn short(id: ObjectId) -> String {
    id.to_string()[..7].to_string()
}
