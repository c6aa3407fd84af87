//! lefthook: the files its configuration may live in, our command's keys in them, reading
//! them back, and re-syncing lefthook's own hooks after an edit.
//!
//! Kept apart because lefthook is the one manager whose configuration we edit as YAML (it
//! never runs a foreign hook, so a script beside it would never run), and because `install`,
//! `uninstall` and `status` all read the same files the same way.

use std::path::{Path, PathBuf};

use super::blocks;
use super::find_on_path;
use super::plan::Action;

pub(super) const LEFTHOOK_MAIN: &[&str] = &[
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yaml",
    ".config/lefthook.yml",
    ".config/lefthook.yaml",
];

pub(super) const LEFTHOOK_LOCAL: &[&str] = &[
    "lefthook-local.yml",
    ".lefthook-local.yml",
    "lefthook-local.yaml",
    ".lefthook-local.yaml",
    ".config/lefthook-local.yml",
    ".config/lefthook-local.yaml",
];

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

pub(super) fn lefthook_install(top: &Path) -> Action {
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

/// Our command's keys in a lefthook configuration (`file`, relative to the top level).
///
/// lefthook substitutes `{1}` unquoted, so pre-push passes only the remote's name (git allows
/// no spaces in it), never the URL. lefthook also skips a pre-push command when HEAD has no
/// files to push (`git diff HEAD @{push}`), whatever refs are pushed; a `files` command that
/// names a file that always exists, used in `run`, keeps the gate running on every push.
pub(super) fn lefthook_fields(hook: &str, file: &str) -> String {
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
pub(super) fn lefthook_target(top: &Path, shared: bool) -> PathBuf {
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

/// Whether a lefthook configuration text has our command for `hook`.
pub(super) fn lefthook_has(text: &str, hook: &str) -> bool {
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

/// The other commands lefthook runs for `hook`: the names under its `commands:`/`jobs:`.
pub(super) fn lefthook_others(text: &str, hook: &str) -> Vec<String> {
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
