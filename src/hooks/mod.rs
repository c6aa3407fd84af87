//! Installing the gate where git really runs it, the way the hook manager in charge expects,
//! and restoring exactly what was there on uninstall.
//!
//! The hooks folder is `core.hooksPath` when set (relative to the top level), else the common
//! git dir's `hooks`, so every linked worktree shares them. Who owns it decides the wiring,
//! because each manager rewrites what it owns on its next install:
//! - plain git (or another tool's `core.hooksPath`): our script; a foreign hook is renamed to
//!   `<hook>.local` and `git-rails hook <name>` runs it first with the same arguments and stdin;
//! - pre-commit's shim: our script as `<hook>.legacy`, which pre-commit itself runs first (with
//!   git's stdin) and keeps across `pre-commit install`;
//! - lefthook: a `git rails hook …` command in `lefthook-local.yml` (`lefthook.yml` with
//!   `--shared`), since lefthook renames foreign hooks to `.old` and never runs them;
//! - husky: a line in `.husky/<hook>`, since re-running `husky` rewrites `.husky/_`.
//!
//! `status` does not trust any of this: it runs each hook and looks (see [`probe`]).

pub mod agent;
pub mod blocks;
pub mod probe;
pub mod run;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Context, Error, Result};
use crate::store::{self, Store};

/// The marker every installed script carries.
pub const MARKER: &str = "# rails-spar hook:";

/// The scripts, as shipped in `githooks/`.
pub const PRE_PUSH: &str = include_str!("../../githooks/pre-push");
pub const COMMIT_MSG: &str = include_str!("../../githooks/commit-msg");
pub const PRE_RECEIVE: &str = include_str!("../../githooks/pre-receive");

/// The hooks a work tree gets, or a bare (server) repository gets.
pub fn hooks_for(bare: bool) -> &'static [(&'static str, &'static str)] {
    if bare {
        &[("pre-receive", PRE_RECEIVE)]
    } else {
        &[("pre-push", PRE_PUSH), ("commit-msg", COMMIT_MSG)]
    }
}

/// Where git runs hooks from in this repository, and whether `core.hooksPath` chose it.
pub fn hooks_dir(store: &Store) -> (PathBuf, bool) {
    match store.config_string("core.hooksPath") {
        Some(p) if !p.trim().is_empty() => {
            let p = expand_home(p.trim());
            let path = if p.is_absolute() {
                p
            } else {
                // git resolves a relative hooksPath against the top level (the git dir when bare).
                store
                    .workdir()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|_| store.git_dir().to_path_buf())
                    .join(p)
            };
            (path, true)
        }
        _ => (store.common_dir().join("hooks"), false),
    }
}

fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(p),
    }
}

fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .map(|s| s.contains(MARKER))
        .unwrap_or(false)
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// pre-commit's shim, recognised as pre-commit does: by its `# ID:` line.
fn is_pre_commit(path: &Path) -> bool {
    read(path).is_some_and(|s| {
        s.lines()
            .any(|l| l.starts_with("# ID: ") && l.len() == "# ID: ".len() + 32)
            && s.contains("pre-commit")
    })
}

/// lefthook's shim, recognised as lefthook does: by the word `LEFTHOOK`.
fn is_lefthook(path: &Path) -> bool {
    read(path).is_some_and(|s| s.contains("LEFTHOOK"))
}

/// Who runs the hooks of this repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Manager {
    /// Plain git in `.git/hooks` (pre-commit's shims live here too, hook by hook).
    Git,
    /// husky: `core.hooksPath` is `.husky/_`; the user's scripts are `.husky/<hook>`.
    Husky { scripts: PathBuf },
    /// lefthook: a configuration at the top level.
    Lefthook { top: PathBuf },
    /// Another tool (or the user) set `core.hooksPath`.
    HooksPath,
}

impl Manager {
    pub fn name(&self) -> &'static str {
        match self {
            Manager::Git => "git",
            Manager::Husky { .. } => "husky",
            Manager::Lefthook { .. } => "lefthook",
            Manager::HooksPath => "core.hooksPath",
        }
    }
}

const LEFTHOOK_MAIN: &[&str] = &[
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yaml",
    ".config/lefthook.yml",
    ".config/lefthook.yaml",
];
const LEFTHOOK_LOCAL: &[&str] = &[
    "lefthook-local.yml",
    ".lefthook-local.yml",
    "lefthook-local.yaml",
    ".lefthook-local.yaml",
    ".config/lefthook-local.yml",
    ".config/lefthook-local.yaml",
];

/// The repository's hook setup: where git looks, who owns it, and where `core.hooksPath`
/// came from.
#[derive(Debug, Clone)]
pub struct Setup {
    pub dir: PathBuf,
    pub via_config: bool,
    /// `local`, `global`, `system`, `worktree` or `command` when `core.hooksPath` is set.
    pub scope: Option<String>,
    pub manager: Manager,
    /// A `.husky` folder husky has not activated yet (no `core.hooksPath`, e.g. a fresh clone
    /// before `npm install`): the gate goes into its scripts too, so it keeps running once
    /// husky takes over.
    pub husky_pending: Option<PathBuf>,
}

pub fn detect(store: &Store) -> Setup {
    let (dir, via_config) = hooks_dir(store);
    let scope = via_config
        .then(|| store.config_scope("core.hooksPath"))
        .flatten();
    let top = store.workdir().ok().map(Path::to_path_buf);
    let manager = match &top {
        None => Manager::Git,
        Some(top) if via_config => {
            let husky = top.join(".husky");
            if dir.file_name().is_some_and(|n| n == "_")
                && dir.parent().is_some_and(|p| same_path(p, &husky))
            {
                Manager::Husky { scripts: husky }
            } else {
                Manager::HooksPath
            }
        }
        Some(top) => {
            let configured = LEFTHOOK_MAIN
                .iter()
                .chain(LEFTHOOK_LOCAL)
                .any(|f| top.join(f).exists());
            let shims = ["pre-push", "commit-msg", "pre-commit", "prepare-commit-msg"]
                .iter()
                .any(|h| is_lefthook(&dir.join(h)));
            if configured || shims {
                Manager::Lefthook { top: top.clone() }
            } else {
                Manager::Git
            }
        }
    };
    let husky_pending = match (&manager, &top) {
        (Manager::Git, Some(top)) if top.join(".husky").is_dir() => Some(top.join(".husky")),
        _ => None,
    };
    Setup {
        dir,
        via_config,
        scope,
        manager,
        husky_pending,
    }
}

fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// What `install` or `uninstall` did (or, with `--dry-run`, would do) to one hook.
#[derive(Debug, Clone, Serialize)]
pub struct Action {
    pub hook: String,
    pub path: String,
    pub did: String,
    /// The change to a file another tool or the user owns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// How `install` and `uninstall` run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Show the changes; write nothing.
    pub dry_run: bool,
    /// lefthook: edit the shared (tracked) configuration instead of the local one.
    pub shared: bool,
    /// Accept a `core.hooksPath` from the global or system configuration.
    pub global: bool,
}

/// One change to the file system, planned before anything is written.
enum Op {
    Write(PathBuf, String, u32),
    Rename(PathBuf, PathBuf),
    Remove(PathBuf),
}

struct Plan {
    ops: Vec<Op>,
    actions: Vec<Action>,
    /// Run `lefthook install` afterwards so its hooks match the edited configuration.
    lefthook_sync: Option<PathBuf>,
}

impl Plan {
    fn new() -> Plan {
        Plan {
            ops: Vec::new(),
            actions: Vec::new(),
            lefthook_sync: None,
        }
    }
    fn act(&mut self, hook: &str, path: &Path, did: impl Into<String>, diff: Option<String>) {
        self.actions.push(Action {
            hook: hook.to_string(),
            path: path.display().to_string(),
            did: did.into(),
            diff,
        });
    }
    /// Writes `new` over a user file (or removes it when None), recording the diff.
    fn edit(&mut self, hook: &str, path: &Path, old: Option<&str>, new: Option<String>, did: &str) {
        let d = blocks::diff(&path.display().to_string(), old, new.as_deref());
        match new {
            Some(n) => {
                let mode = file_mode(path).unwrap_or(0o644);
                self.ops.push(Op::Write(path.to_path_buf(), n, mode));
            }
            None => self.ops.push(Op::Remove(path.to_path_buf())),
        }
        self.act(hook, path, did, Some(d));
    }
    fn apply(self, dry_run: bool) -> Result<Vec<Action>> {
        let mut actions = self.actions;
        if dry_run {
            for a in &mut actions {
                a.did = format!("would be {}", a.did);
            }
            if let Some(top) = &self.lefthook_sync {
                actions.push(Action {
                    hook: "lefthook".into(),
                    path: top.display().to_string(),
                    did: "would run `lefthook install` so lefthook's hooks match its configuration"
                        .into(),
                    diff: None,
                });
            }
            return Ok(actions);
        }
        for op in self.ops {
            match op {
                Op::Write(p, text, mode) => {
                    store::atomic_write_mode(&p, text.as_bytes(), Some(mode))?
                }
                Op::Rename(a, b) => std::fs::rename(&a, &b).ctx(format!(
                    "renaming {} to {}",
                    a.display(),
                    b.display()
                ))?,
                Op::Remove(p) => {
                    std::fs::remove_file(&p).ctx(format!("removing {}", p.display()))?
                }
            }
        }
        if let Some(top) = &self.lefthook_sync {
            actions.push(lefthook_install(top));
        }
        Ok(actions)
    }
}

fn file_mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}

/// The lefthook program the repository's shims would find: `LEFTHOOK_BIN`, PATH, then the
/// project's `node_modules`.
fn lefthook_bin(top: &Path) -> Option<PathBuf> {
    if let Some(b) = std::env::var_os("LEFTHOOK_BIN").map(PathBuf::from) {
        if crate::process::is_executable(&b) {
            return Some(b);
        }
    }
    find_on_path("lefthook").or_else(|| {
        let p = top.join("node_modules/.bin/lefthook");
        crate::process::is_executable(&p).then_some(p)
    })
}

fn lefthook_install(top: &Path) -> Action {
    let did = match lefthook_bin(top) {
        None => "lefthook is not on PATH, so its hooks were not re-synced: run `lefthook install` (lefthook also re-syncs on its next run)".to_string(),
        Some(bin) => match std::process::Command::new(&bin)
            .arg("install")
            .current_dir(top)
            .output()
        {
            Ok(o) if o.status.success() => {
                "ran `lefthook install` so lefthook's hooks match its configuration".into()
            }
            Ok(o) => format!(
                "`lefthook install` failed ({}): {}; run it yourself",
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            ),
            Err(e) => format!("could not run {}: {e}; run `lefthook install`", bin.display()),
        },
    };
    Action {
        hook: "lefthook".into(),
        path: top.display().to_string(),
        did,
        diff: None,
    }
}

/// The line husky's script runs for `hook`.
fn gate_command(hook: &str) -> String {
    format!("git rails hook {hook} \"$@\"")
}

/// Our command's keys in a lefthook configuration (`file`, relative to the top level).
///
/// lefthook substitutes `{1}` unquoted, so pre-push passes only the remote's name (git allows
/// no spaces in it), never the URL. lefthook also skips a pre-push command when HEAD has no
/// files to push (`git diff HEAD @{push}`), whatever refs are pushed; a `files` command that
/// names a file that always exists, used in `run`, keeps the gate running on every push.
fn lefthook_fields(hook: &str, file: &str) -> String {
    match hook {
        "pre-push" => format!(
            "# `files` + `{{files}}`: lefthook would skip the gate when HEAD has nothing to push\n\
             run: \"git rails hook pre-push {{1}} # {{files}}\"\n\
             files: echo {file}\n\
             use_stdin: true\n"
        ),
        h => format!("run: git rails hook {h} {{1}}\n"),
    }
}

/// The lefthook file our command goes into, and whether it exists.
fn lefthook_target(top: &Path, shared: bool) -> PathBuf {
    let list = if shared {
        LEFTHOOK_MAIN
    } else {
        LEFTHOOK_LOCAL
    };
    if let Some(f) = list.iter().find(|f| top.join(f).exists()) {
        return top.join(f);
    }
    if shared {
        return top.join("lefthook.yml");
    }
    // The local file mirrors the main one's name (`.lefthook.yml` → `.lefthook-local.yml`).
    let dotted = LEFTHOOK_MAIN
        .iter()
        .find(|f| top.join(f).exists())
        .is_some_and(|f| f.starts_with('.') && !f.starts_with(".config"));
    top.join(if dotted {
        ".lefthook-local.yml"
    } else {
        "lefthook-local.yml"
    })
}

/// Takes our script out of the hooks folder: at `<hook>`, `<hook>.legacy` (pre-commit's
/// migration mode) or `<hook>.old` (lefthook's backup), putting back what we kept as `.local`.
fn plan_remove_scripts(plan: &mut Plan, dir: &Path, name: &str) -> bool {
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

fn planned_text(plan: &Plan, path: &Path) -> Option<String> {
    plan.ops.iter().find_map(|op| match op {
        Op::Write(p, t, _) if p == path => Some(t.clone()),
        _ => None,
    })
}

/// Whether a lefthook configuration text has our command for `hook`.
fn lefthook_has(text: &str, hook: &str) -> bool {
    let mut inside = false;
    for l in text.lines() {
        let t = l.trim_start();
        if t.starts_with(blocks::BEGIN) {
            inside = true;
        } else if t.trim_end() == blocks::END {
            inside = false;
        } else if inside && t.contains(&format!("git rails hook {hook} ")) {
            return true;
        }
    }
    false
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

/// A `core.hooksPath` from the global or system configuration serves every repository of the
/// user: hooks put there gate all of them, so that takes `--global`.
fn refuse_global(setup: &Setup, opts: Options) -> Result<()> {
    match setup.scope.as_deref() {
        Some(scope @ ("global" | "system")) if !opts.global => Err(Error::refused(format!(
            "core.hooksPath is set in your {scope} git configuration ({}), so hooks written there would run in every repository that uses it, not just this one; nothing was written",
            setup.dir.display()
        ))
        .hint("run `git rails hooks install --global` to gate every such repository on purpose, or give this repository its own folder: `git config --local core.hooksPath .git/hooks`")),
        _ => Ok(()),
    }
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

/// One hook's state.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookState {
    pub hook: String,
    /// Where our gate is (or would be) wired.
    pub path: String,
    /// `installed`, `missing`, `foreign`, `not-executable`, `outdated`.
    pub state: String,
    /// Who runs it: `git`, `pre-commit`, `lefthook`, `husky`, `core.hooksPath`.
    pub manager: String,
    /// Whether running the hook as git would reached our gate (with its arguments and stdin).
    pub gate_runs: bool,
    /// What else runs in this hook.
    pub also_runs: Vec<String>,
    pub chained: Option<String>,
    pub probe: Option<probe::Probe>,
    pub problems: Vec<String>,
}

/// The `rails-hooks/v1` status document.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub schema: &'static str,
    pub hooks_dir: String,
    pub core_hooks_path: bool,
    pub core_hooks_path_scope: Option<String>,
    pub manager: String,
    pub git_rails: Option<String>,
    pub hooks: Vec<HookState>,
    pub problems: Vec<String>,
    /// Facts that do not stop the gate (a shadowed script `hooks install` would clean up).
    pub notes: Vec<String>,
}

impl Status {
    /// Whether every hook the gate needs runs it.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// `git-rails` as the hook scripts find it (PATH lookup).
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    crate::process::find_on_path(name, std::env::var_os("PATH").as_deref()).found()
}

/// The other commands a husky script runs (its lines that are not ours, comments or blank).
fn husky_others(text: &str) -> Vec<String> {
    let stripped = blocks::remove(text)
        .map(|(t, _)| t)
        .unwrap_or_else(|| text.to_string());
    stripped
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| format!("husky: {l}"))
        .collect()
}

/// The other commands lefthook runs for `hook`: the names under its `commands:`/`jobs:`.
fn lefthook_others(text: &str, hook: &str) -> Vec<String> {
    let stripped = blocks::remove(text)
        .map(|(t, _)| t)
        .unwrap_or_else(|| text.to_string());
    let mut out = Vec::new();
    let mut in_hook = false;
    let mut list: Option<usize> = None;
    let mut child: Option<usize> = None;
    for l in stripped.lines() {
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let ind = l.len() - l.trim_start().len();
        if ind == 0 {
            in_hook = t == format!("{hook}:");
            list = None;
            child = None;
            continue;
        }
        if !in_hook {
            continue;
        }
        if t == "commands:" || t == "jobs:" || t == "scripts:" {
            list = Some(ind);
            child = None;
            continue;
        }
        match list {
            Some(li) if ind > li => {
                let c = *child.get_or_insert(ind);
                if ind == c {
                    let name = t
                        .strip_prefix("- name:")
                        .or_else(|| t.strip_suffix(':'))
                        .map(|s| s.trim().trim_matches('"').to_string());
                    if let Some(n) = name {
                        out.push(format!("lefthook: {n}"));
                    }
                }
            }
            Some(li) if ind <= li => list = None,
            _ => {}
        }
    }
    out
}

/// What is installed where, from a real run of each hook. Every problem would let a push or
/// commit the gate should judge through unjudged.
pub fn status(store: &Store) -> Status {
    let setup = detect(store);
    let bare = store.workdir().is_err();
    let dir = &setup.dir;
    let mut problems = Vec::new();
    let mut hooks = Vec::new();
    let git_rails = find_on_path("git-rails");
    for (name, script) in hooks_for(bare) {
        let hook_path = dir.join(name);
        let legacy = dir.join(format!("{name}.legacy"));
        let mut hp = Vec::new();
        let mut also = Vec::new();
        let (manager, wired, state) = match &setup.manager {
            Manager::Husky { scripts } => {
                let p = scripts.join(name);
                let text = read(&p).unwrap_or_default();
                also = husky_others(&text);
                let st = if blocks::has_block(&text) {
                    "installed"
                } else {
                    "missing"
                };
                ("husky".to_string(), p, st.to_string())
            }
            Manager::Lefthook { top } => {
                let mut st = "missing";
                let mut wired = lefthook_target(top, false);
                for f in LEFTHOOK_MAIN.iter().chain(LEFTHOOK_LOCAL) {
                    let p = top.join(f);
                    if let Some(t) = read(&p) {
                        if lefthook_has(&t, name) {
                            st = "installed";
                            wired = p.clone();
                        }
                        also.extend(lefthook_others(&t, name));
                    }
                }
                ("lefthook".to_string(), wired, st.to_string())
            }
            _ => {
                let (mgr, p) = if is_pre_commit(&hook_path) {
                    also.push(format!(
                        "pre-commit: the {name} hooks of .pre-commit-config.yaml"
                    ));
                    ("pre-commit".to_string(), legacy.clone())
                } else {
                    (setup.manager.name().to_string(), hook_path.clone())
                };
                let st = if p.symlink_metadata().is_err() {
                    "missing"
                } else if !is_ours(&p) {
                    "foreign"
                } else if !crate::process::is_executable(&p) {
                    "not-executable"
                } else if read(&p).as_deref() != Some(*script) {
                    hp.push(format!(
                        "{name} is an older version of our script (run `git rails hooks install`)"
                    ));
                    "outdated"
                } else {
                    "installed"
                };
                (mgr, p, st.to_string())
            }
        };
        let local = dir.join(format!("{name}.local"));
        let chained = local.exists().then(|| format!("{name}.local"));
        if chained.is_some() {
            also.push(format!(
                "{name}.local (the hook that was there before ours)"
            ));
            if !crate::process::is_executable(&local) {
                hp.push(format!(
                    "{name}.local is not executable, so it is skipped as git would skip it"
                ));
            }
        }
        let probe = if git_rails.is_some() {
            probe::run(store, name).ok()
        } else {
            None
        };
        let runs = probe
            .as_ref()
            .is_some_and(|p| p.gate_runs >= 1 && p.args_passed && p.stdin_passed.unwrap_or(true));
        if let Some(p) = &probe {
            if p.gate_runs == 0 {
                hp.push(match state.as_str() {
                    "missing" => format!("{name} does not run our gate: it is not installed (run `git rails hooks install`)"),
                    "foreign" => format!("{name} is another tool's hook and does not run our gate (run `git rails hooks install` to chain it)"),
                    "not-executable" => format!("{name} lost its run bit, so git skips it silently (run `git rails hooks install`)"),
                    _ => format!("{name} is wired ({}) but running the hook did not reach our gate; {}", wired.display(), not_reached_hint(&setup.manager)),
                });
            } else {
                if p.gate_runs > 1 {
                    hp.push(format!("{name} runs our gate {} times: it is wired more than once (run `git rails hooks uninstall`, then `git rails hooks install`)", p.gate_runs));
                }
                if !p.args_passed {
                    hp.push(format!("{name} runs our gate without git's arguments, so it cannot judge what git does (run `git rails hooks install`)"));
                }
                if p.stdin_passed == Some(false) {
                    hp.push(format!("{name} runs our gate without git's stdin, so it would pass every push unjudged (lefthook needs `use_stdin: true`)"));
                }
            }
        } else if state == "not-executable" {
            hp.push(format!(
                "{name} lost its run bit, so git skips it silently (run `git rails hooks install`)"
            ));
        } else if state == "missing" {
            hp.push(format!(
                "{name} is not installed (run `git rails hooks install`)"
            ));
        }
        problems.extend(hp.iter().cloned());
        let manager = if probe.as_ref().is_some_and(|p| p.pre_commit_legacy) {
            "pre-commit".to_string()
        } else {
            manager
        };
        hooks.push(HookState {
            hook: name.to_string(),
            path: wired.display().to_string(),
            state,
            manager,
            gate_runs: runs,
            also_runs: also,
            chained,
            probe,
            problems: hp,
        });
    }
    // Hooks left in .git/hooks while core.hooksPath points elsewhere are shadowed: harmless
    // when the gate runs anyway (husky took over after our install), a problem otherwise.
    let mut notes = Vec::new();
    let all_run = hooks.iter().all(|h| h.gate_runs);
    if let Some(sc @ ("global" | "system")) = setup.scope.as_deref() {
        // Installed there on purpose (`--global`) it is a fact to know; otherwise the reason.
        let list = if all_run { &mut notes } else { &mut problems };
        list.push(format!(
            "core.hooksPath comes from your {sc} git configuration ({}): hooks there run in every repository that uses it",
            dir.display()
        ));
    }
    if setup.via_config {
        let default = store.common_dir().join("hooks");
        for (name, _) in hooks_for(bare) {
            if default != *dir && is_ours(&default.join(name)) {
                let list = if all_run { &mut notes } else { &mut problems };
                list.push(format!(
                    "{} is shadowed: core.hooksPath points git at {}",
                    default.join(name).display(),
                    dir.display()
                ));
            }
        }
    }
    if git_rails.is_none() {
        problems.push(
            "git-rails is not on PATH, so the installed hooks refuse every push and commit they guard"
                .into(),
        );
    }
    Status {
        schema: "rails-hooks/v1",
        hooks_dir: dir.display().to_string(),
        core_hooks_path: setup.via_config,
        core_hooks_path_scope: setup.scope.clone(),
        manager: setup.manager.name().to_string(),
        git_rails: git_rails.map(|p| p.display().to_string()),
        hooks,
        problems,
        notes,
    }
}

fn not_reached_hint(m: &Manager) -> &'static str {
    match m {
        Manager::Lefthook { .. } => "lefthook has not installed this hook or cannot find its own binary (run `lefthook install`)",
        Manager::Husky { .. } => "husky's `.husky/_` is missing or stale (run `npx husky`)",
        _ => "run `git rails hooks install`",
    }
}
