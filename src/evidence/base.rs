//! A RED's reviewable content: its base commit and the test files the contract froze.
//!
//! A RED used to record whatever the tracked content of the work tree was, uncommitted edits
//! included, and `verify --rerun` checked that tree out and ran the check in it. Code in no
//! commit — an implementation file the pinned test sources, carrying anything — then ran in CI
//! and no pull request ever showed it. So a RED is recorded only where the tracked content
//! differs from HEAD (its base) in nothing but the criterion's pinned `checkPaths` files (the
//! new failing test, frozen and so reviewed with the contract) and the tool folders; and a
//! re-run rebuilds the RED's tree from those two reviewable things alone — the base commit's
//! tree with the pinned blobs put in place — never from the recorded tree, whose tool folders
//! could carry anything.

use super::subject::subject_path;
use super::Record;
use crate::contract::{self, pinned, Frozen, SprintId};
use crate::error::{Error, Result};
use crate::store::{ObjectId, Store};

/// The `checkPaths` files of the version whose tree is `tree`, by path: their frozen blobs.
fn pinned_tests(store: &Store, tree: ObjectId) -> Result<Vec<(String, ObjectId)>> {
    let Some(p) = pinned::load(store, tree)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (path, blob) in p.check_path_blobs() {
        let id = ObjectId::from_hex(blob.as_bytes()).map_err(|e| {
            Error::internal(format!(
                "{} names a bad blob for {path}: {e}",
                pinned::PINNED_FILE
            ))
        })?;
        out.push((path.to_string(), id));
    }
    Ok(out)
}

/// The base a RED is recorded on: HEAD, when the tracked content `tree` differs from it only
/// in the pinned `checkPaths` files (as frozen) and the tool folders. Anything else is refused
/// with the command to commit or stash it.
pub(super) fn reviewable(
    store: &Store,
    frozen: &Frozen,
    id: &str,
    tree: ObjectId,
) -> Result<ObjectId> {
    let sprint = &frozen.sprint;
    let Some(head) = store.head_commit()? else {
        return Err(Error::refused(
            "there is no commit yet: a RED is recorded on a commit (its base), so that CI re-runs only what a reviewer can see",
        )
        .hint(format!(
            "commit the work so far (`git add -A && git commit`), then run `git rails evidence red {sprint} {id}` again"
        )));
    };
    let head_tree = store.tree_of(head)?;
    if head_tree == tree {
        return Ok(head);
    }
    let pins = pinned_tests(store, frozen.tree)?;
    let mut other = Vec::new();
    for path in store.changed_paths(head_tree, tree)? {
        if !subject_path(&path) {
            continue;
        }
        let frozen_blob = pins.iter().find(|(p, _)| *p == path).map(|(_, b)| *b);
        if frozen_blob.is_some() && store.entry_at(tree, &path)? == frozen_blob {
            continue;
        }
        other.push(path);
    }
    if other.is_empty() {
        return Ok(head);
    }
    let shown: Vec<&str> = other.iter().take(8).map(String::as_str).collect();
    Err(Error::refused(format!(
        "{}{} differ{} from HEAD and {} no test file the contract froze (checkPaths): a RED is recorded on committed content plus the frozen test files only, so that CI re-runs what a reviewer can see, and nothing was recorded",
        shown.join(", "),
        if other.len() > shown.len() { ", …" } else { "" },
        if other.len() == 1 { "s" } else { "" },
        if other.len() == 1 { "is" } else { "are" },
    ))
    .hint(format!(
        "commit them (`git add -A && git commit`) or put them aside (`git stash`), then run `git rails evidence red {sprint} {id}` again"
    )))
}

/// Why a RED cannot be rebuilt from reviewable content: what `verify --rerun` says of it
/// ("could not run"), never a verdict on the proof.
pub type NotRebuilt = String;

/// The tree a re-run of `red` runs on: its base commit's tree with the `checkPaths` files of
/// the version it was recorded under put in place. Never the tree the record names.
pub fn rebuild(
    store: &Store,
    sprint: &SprintId,
    red: &Record,
) -> Result<std::result::Result<ObjectId, NotRebuilt>> {
    let Some(base) = red.base.as_deref() else {
        return Ok(Err(
            "it was recorded before a RED named its base commit, so it cannot be rebuilt from reviewable content; reopen it and record a new RED".into(),
        ));
    };
    let Some(base) = ObjectId::from_hex(base.as_bytes())
        .ok()
        .filter(|b| store.has_object(*b))
    else {
        return Ok(Err(format!(
            "its base commit {} is not in this clone (fetch the branch it was recorded on)",
            &base[..12.min(base.len())]
        )));
    };
    let base_tree = store.tree_of(base)?;
    let version = match contract::find(store, sprint, Some(&red.contract_version)) {
        Ok(f) => f,
        Err(e) if e.kind == crate::error::Kind::Internal => return Err(e),
        Err(_) => {
            return Ok(Err(format!(
                "the contract version {} it was recorded under is not in this clone",
                red.contract_version
            )))
        }
    };
    let pins = pinned_tests(store, version.tree)?;
    if pins.is_empty() {
        return Ok(Ok(base_tree));
    }
    let modes = red
        .tree
        .as_deref()
        .and_then(|t| ObjectId::from_hex(t.as_bytes()).ok())
        .filter(|t| store.has_object(*t));
    Ok(Ok(store.tree_with_files_in_place(base_tree, &pins, modes)?))
}

/// What a RED's recorded tree changed from its base commit (tool folders included, as they
/// were): what `verify` and the report show of it. None when either is not in this clone.
pub fn difference(store: &Store, red: &Record) -> Result<Option<Vec<String>>> {
    let parse = |s: Option<&str>| {
        s.and_then(|s| ObjectId::from_hex(s.as_bytes()).ok())
            .filter(|id| store.has_object(*id))
    };
    let (Some(base), Some(tree)) = (parse(red.base.as_deref()), parse(red.tree.as_deref())) else {
        return Ok(None);
    };
    Ok(Some(store.changed_paths(store.tree_of(base)?, tree)?))
}
