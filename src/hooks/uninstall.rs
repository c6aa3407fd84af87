//! `git rails hooks uninstall`: taking the gate out of wherever it is wired and putting back
//! what was there before (a kept `.local` hook, a file we created, lefthook's shims).
//!
//! Kept apart from `install`, which only borrows `plan_remove_scripts` to clear an earlier
//! install of ours before wiring anew.

use std::path::{Path, PathBuf};

use super::blocks;
use super::lefthook::{LEFTHOOK_LOCAL, LEFTHOOK_MAIN};
use super::plan::{planned_text, refuse_global, Action, Op, Options, Plan};
use super::setup::{detect, is_lefthook};
use super::{hooks_for, is_ours, read};
use crate::error::Result;
use crate::store::Store;

/// Takes our script out of the hooks folder: at `<hook>`, `<hook>.legacy` (pre-commit's
/// migration mode) or `<hook>.old` (lefthook's backup), putting back what we kept as `.local`.
pub(super) fn plan_remove_scripts(plan: &mut Plan, dir: &Path, name: &str) -> bool {
    let path = dir.join(name);
    let local = dir.join(format!("{name}.local"));
    let mut any = false;
    for (slot, what) in [
        (path.clone(), "removed our script"),
        (
            dir.join(format!("{name}.legacy")),
            "removed our script that pre-commit ran as",
        ),
        (
            dir.join(format!("{name}.old")),
            "removed our script that lefthook had set aside as",
        ),
    ] {
        if !is_ours(&slot) {
            continue;
        }
        any = true;
        plan.ops.push(Op::Remove(slot.clone()));
        let file = slot
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        if local.exists() {
            plan.ops.push(Op::Rename(local.clone(), slot.clone()));
            plan.act(
                name,
                &slot,
                format!("{what} {file}; the hook that was there before is restored"),
                None,
            );
        } else {
            plan.act(name, &slot, format!("{what} {file}"), None);
        }
        // Only one slot holds the kept hook.
        if local.exists() {
            break;
        }
    }
    any
}

/// Removes the gate from wherever it is wired and puts back what was there before.
pub fn uninstall(store: &Store, opts: Options) -> Result<Vec<Action>> {
    let setup = detect(store);
    refuse_global(&setup, opts)?;
    let bare = store.workdir().is_err();
    let mut plan = Plan::new();
    // lefthook files hold the blocks of both hooks.
    if let Ok(top) = store.workdir() {
        for f in LEFTHOOK_MAIN.iter().chain(LEFTHOOK_LOCAL) {
            let path = top.join(f);
            let Some(old) = read(&path) else { continue };
            if let Some((left, created)) = blocks::remove(&old) {
                let new = (!(created && left.is_empty())).then_some(left);
                plan.edit(
                    "lefthook",
                    &path,
                    Some(&old),
                    new,
                    "removed the gate's commands",
                );
                plan.lefthook_sync = Some(top.to_path_buf());
            }
        }
    }
    let exclude = store.common_dir().join("info/exclude");
    if let Some(old) = read(&exclude) {
        if let Some((left, created)) = blocks::remove(&old) {
            plan.edit(
                "lefthook",
                &exclude,
                Some(&old),
                (!(created && left.is_empty())).then_some(left),
                "removed the local lefthook file from .git/info/exclude",
            );
        }
    }
    let in_lefthook = plan.lefthook_sync.is_some();
    // lefthook installed a shim for pre-push / commit-msg only because of our commands; with
    // them gone no configuration names the hook, and lefthook itself would not remove it.
    if let (true, Ok(top)) = (in_lefthook, store.workdir()) {
        let texts: Vec<String> = LEFTHOOK_MAIN
            .iter()
            .chain(LEFTHOOK_LOCAL)
            .map(|f| top.join(f))
            .filter(|p| {
                !plan
                    .ops
                    .iter()
                    .any(|op| matches!(op, Op::Remove(r) if r == p))
            })
            .filter_map(|p| planned_text(&plan, &p).or_else(|| read(&p)))
            .collect();
        for (name, _) in hooks_for(bare) {
            let shim = setup.dir.join(name);
            let key = format!("{name}:");
            let configured = texts.iter().any(|t| {
                t.lines()
                    .any(|l| l.trim_end() == key || l.starts_with(&format!("{key} ")))
            });
            if !configured && is_lefthook(&shim) {
                plan.ops.push(Op::Remove(shim.clone()));
                plan.act(
                    name,
                    &shim,
                    "removed lefthook's shim, which only ran the gate",
                    None,
                );
            }
        }
    }
    for (name, _) in hooks_for(bare) {
        let mut any = plan_remove_scripts(&mut plan, &setup.dir, name) || in_lefthook;
        let mut files: Vec<PathBuf> = Vec::new();
        if let Ok(top) = store.workdir() {
            files.push(top.join(".husky").join(name));
        }
        for path in &files {
            if let Some(old) = read(path) {
                if let Some((left, created)) = blocks::remove(&old) {
                    any = true;
                    let new = (!(created && left.is_empty())).then_some(left);
                    plan.edit(
                        name,
                        path,
                        Some(&old),
                        new,
                        "removed the gate's line from husky's script",
                    );
                }
            }
        }
        if !any {
            plan.act(name, &setup.dir.join(name), "not installed", None);
        }
    }
    plan.apply(opts.dry_run)
}
