//! `git rails hooks install`: wiring the gate into every hook it needs, the way the manager in
//! charge expects (see the module doc of [`super`]), keeping any hook that was there before.
//!
//! Kept apart from `uninstall` and `status`: this is the only code that decides where our
//! script goes beside pre-commit's shim, a foreign hook, husky's scripts or lefthook's file.

use std::path::Path;

use super::blocks;
use super::lefthook::{lefthook_fields, lefthook_has, lefthook_target};
use super::plan::{planned_text, refuse_global, Action, Op, Options, Plan};
use super::setup::{detect, is_pre_commit, same_path, Manager};
use super::uninstall::plan_remove_scripts;
use super::{hooks_for, is_ours, read};
use crate::error::{Context, Error, Result};
use crate::store::Store;

/// The line husky's script runs for `hook`.
fn gate_command(hook: &str) -> String {
    format!("git rails hook {hook} \"$@\"")
}

/// Installs the gate for every hook it needs; idempotent.
pub fn install(store: &Store, opts: Options) -> Result<Vec<Action>> {
    let setup = detect(store);
    refuse_global(&setup, opts)?;
    let bare = store.workdir().is_err();
    let mut plan = Plan::new();
    let default_dir = store.common_dir().join("hooks");
    for (name, script) in hooks_for(bare) {
        // Our scripts in .git/hooks are shadowed once core.hooksPath points elsewhere.
        if setup.via_config && !same_path(&default_dir, &setup.dir) {
            plan_remove_scripts(&mut plan, &default_dir, name);
        }
        let husky = match (&setup.manager, &setup.husky_pending) {
            (Manager::Husky { scripts }, _) | (_, Some(scripts)) => Some(scripts.clone()),
            _ => None,
        };
        if let Some(scripts) = husky {
            // An earlier install of ours may sit in `.husky/_`: take it out first.
            if matches!(setup.manager, Manager::Husky { .. }) {
                plan_remove_scripts(&mut plan, &setup.dir, name);
            }
            let path = scripts.join(name);
            let old = read(&path);
            if old.as_deref().is_some_and(blocks::has_block) {
                plan.act(name, &path, "already installed in husky's script", None);
            } else {
                let body = format!("{}\n", gate_command(name));
                let new = blocks::insert_shell(old.as_deref(), &body);
                plan.edit(
                    name,
                    &path,
                    old.as_deref(),
                    Some(new),
                    "installed: added the gate's line to husky's script (commit it to share the gate with the team)",
                );
            }
        }
        match &setup.manager {
            Manager::Husky { .. } => {}
            Manager::Lefthook { top } => {
                plan_remove_scripts(&mut plan, &setup.dir, name);
                let path = lefthook_target(top, opts.shared);
                let other = lefthook_target(top, !opts.shared);
                let has = |p: &Path| read(p).is_some_and(|t| lefthook_has(&t, name));
                if has(&path) || has(&other) {
                    let p = if has(&path) { &path } else { &other };
                    plan.act(name, p, "already installed (lefthook runs it)", None);
                    continue;
                }
                // Several hooks may go into one new file: plan on top of the planned text.
                let old = planned_text(&plan, &path).or_else(|| read(&path));
                let rel = path
                    .strip_prefix(top)
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                let new = blocks::insert_lefthook(
                    old.as_deref(),
                    name,
                    &lefthook_fields(name, &rel),
                    &rel,
                )?;
                let base = read(&path);
                let shown = path.display().to_string();
                let mut hooks_done: Vec<String> = plan
                    .actions
                    .iter()
                    .filter(|a| a.path == shown && a.diff.is_some())
                    .map(|a| a.hook.clone())
                    .collect();
                hooks_done.push(name.to_string());
                plan.ops
                    .retain(|op| !matches!(op, Op::Write(p, _, _) if p == &path));
                plan.actions
                    .retain(|a| !(a.path == shown && a.diff.is_some()));
                let label = hooks_done.join(", ");
                let did = format!("installed: added the gate's commands to {rel} (lefthook runs them; pre-push gets git's stdin)");
                plan.edit(&label, &path, base.as_deref(), Some(new), &did);
                plan.lefthook_sync = Some(top.clone());
            }
            Manager::Git | Manager::HooksPath => {
                plan_script(&mut plan, &setup.dir, name, script)?;
            }
        }
    }
    // The local lefthook file must stay out of commits: a `git add -A` on a branch would
    // track it, and leaving that branch would delete it (and the gate with it).
    if let (Manager::Lefthook { top }, false) = (&setup.manager, opts.shared) {
        let local = lefthook_target(top, false);
        let rel = local
            .strip_prefix(top)
            .unwrap_or(&local)
            .display()
            .to_string();
        let exclude = store.common_dir().join("info/exclude");
        let old = read(&exclude);
        let ignored = store.is_ignored(&rel) || old.as_deref().is_some_and(blocks::has_block);
        if planned_text(&plan, &local).is_some() && !ignored {
            let new = blocks::insert_at_end(old.as_deref(), &format!("/{rel}\n"));
            plan.edit(
                "lefthook",
                &exclude,
                old.as_deref(),
                Some(new),
                &format!("added /{rel} to .git/info/exclude, so it stays untracked"),
            );
        }
    }
    if !plan.ops.is_empty() && !opts.dry_run {
        std::fs::create_dir_all(&setup.dir).ctx(format!("creating {}", setup.dir.display()))?;
    }
    plan.apply(opts.dry_run)
}

/// Our script in a plain hooks folder, aware of pre-commit's migration mode.
fn plan_script(plan: &mut Plan, dir: &Path, name: &str, script: &str) -> Result<()> {
    let path = dir.join(name);
    let local = dir.join(format!("{name}.local"));
    let legacy = dir.join(format!("{name}.legacy"));
    let write = |plan: &mut Plan, p: &Path| {
        plan.ops
            .push(Op::Write(p.to_path_buf(), script.to_string(), 0o755));
    };
    let current = |p: &Path| read(p).as_deref() == Some(script) && crate::process::is_executable(p);

    // The loop an older install could build: ours at <hook>, pre-commit's shim kept as
    // .local, and ours again as .legacy. Put pre-commit's shim back and keep ours as .legacy.
    if is_ours(&path) && is_pre_commit(&local) {
        plan.ops.push(Op::Remove(path.clone()));
        plan.ops.push(Op::Rename(local.clone(), path.clone()));
        if !is_ours(&legacy) {
            if legacy.exists() {
                return Err(Error::refused(format!(
                    "{} holds pre-commit's shim and {} is not ours, so the hooks cannot be untangled safely",
                    local.display(),
                    legacy.display()
                ))
                .hint("run `pre-commit uninstall`, then `git rails hooks install`, then `pre-commit install`"));
            }
            write(plan, &legacy);
        } else if !current(&legacy) {
            write(plan, &legacy);
        }
        plan.act(name, &legacy, format!("repaired: pre-commit's shim is back at {name} and runs ours as {name}.legacy (they used to call each other in a loop)"), None);
        return Ok(());
    }
    if is_pre_commit(&path) {
        let did = if is_ours(&legacy) {
            if current(&legacy) {
                format!("already installed (pre-commit runs it as {name}.legacy)")
            } else {
                write(plan, &legacy);
                format!("updated (pre-commit runs it as {name}.legacy)")
            }
        } else if legacy.exists() {
            if local.exists() {
                return Err(Error::refused(format!(
                    "{} is another hook pre-commit runs and {} already exists, so it cannot be kept safely",
                    legacy.display(),
                    local.display()
                ))
                .hint(format!("merge the two into {} yourself, then run `git rails hooks install` again", local.display())));
            }
            plan.ops.push(Op::Rename(legacy.clone(), local.clone()));
            write(plan, &legacy);
            format!("installed as {name}.legacy, which pre-commit runs first; the hook that was {name}.legacy is kept as {name}.local and runs before ours")
        } else {
            write(plan, &legacy);
            format!("installed as {name}.legacy, which pre-commit's {name} runs first with git's arguments and stdin")
        };
        plan.act(name, &legacy, did, None);
        return Ok(());
    }
    let did = if path.symlink_metadata().is_ok() {
        if is_ours(&path) {
            if current(&path) {
                "already installed".to_string()
            } else {
                write(plan, &path);
                "updated".to_string()
            }
        } else {
            if local.exists() {
                return Err(Error::refused(format!(
                    "{} is not ours and {} already exists, so the hook cannot be kept safely",
                    path.display(),
                    local.display()
                ))
                .hint(format!(
                    "merge the two into {} yourself, then run `git rails hooks install` again",
                    local.display()
                )));
            }
            plan.ops.push(Op::Rename(path.clone(), local.clone()));
            write(plan, &path);
            format!("installed; the existing hook is kept as {name}.local and runs first")
        }
    } else {
        write(plan, &path);
        "installed".to_string()
    };
    plan.act(name, &path, did, None);
    Ok(())
}
