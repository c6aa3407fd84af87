//! `git rails hooks status`: what is installed where, judged from a real run of each hook
//! (see [`super::probe`]), not from the files `install` wrote.
//!
//! Kept apart from the wiring because it trusts none of it: every problem it reports is a way
//! a push or commit the gate should judge would get through unjudged.

use serde::Serialize;

use super::lefthook::{
    lefthook_has, lefthook_others, lefthook_target, LEFTHOOK_LOCAL, LEFTHOOK_MAIN,
};
use super::setup::{detect, is_pre_commit, Manager};
use super::{blocks, find_on_path, hooks_for, is_ours, probe, read};
use crate::store::Store;

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
