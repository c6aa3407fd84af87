//! What the installed hooks do: `git rails hook pre-push|commit-msg|pre-receive|agent-stop`.
//!
//! Every hook fails closed: when it cannot decide it refuses and says how to skip on purpose.
//! Results are returned as lines for stderr and an exit code; the CLI prints them.

use std::collections::{BTreeSet, HashSet};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::contract;
use crate::error::{Error, Result};
use crate::evidence::gate;
use crate::store::{ObjectId, Store};

/// What a hook says and how it ends.
#[derive(Debug, Default)]
pub struct HookResult {
    pub lines: Vec<String>,
    pub code: u8,
}

impl HookResult {
    fn say(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }
}

/// Refs that carry records: never blocked by pre-push.
pub fn is_record_ref(name: &str) -> bool {
    name.starts_with("refs/rails/")
        || name.starts_with("refs/spar/")
        || name.starts_with("refs/notes/")
}

fn is_zero(oid: &str) -> bool {
    oid.bytes().all(|b| b == b'0')
}

fn is_oid(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Runs `<hook>.local` (a hook that was there before ours) first, with the same arguments and
/// stdin. Returns its failing exit code, or None when it passed or is not there. Like git, a
/// `.local` that is not executable is skipped (with a line saying so).
pub fn run_chained(
    hook_dir: Option<&Path>,
    name: &str,
    args: &[String],
    stdin: &[u8],
    out: &mut HookResult,
) -> Result<Option<u8>> {
    let Some(dir) = hook_dir else { return Ok(None) };
    let local = dir.join(format!("{name}.local"));
    if !local.exists() {
        return Ok(None);
    }
    use std::os::unix::fs::PermissionsExt;
    let executable = std::fs::metadata(&local)
        .map(|m| m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false);
    if !executable {
        out.say(format!(
            "git-rails: {} is not executable, so it is skipped as git would skip it",
            local.display()
        ));
        return Ok(None);
    }
    let mut child = Command::new(&local)
        .args(args)
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| Error::refused(format!("cannot run {}: {e}", local.display())))?;
    if let Some(mut input) = child.stdin.take() {
        // A hook that does not read its stdin closes the pipe early; that is fine.
        let _ = input.write_all(stdin);
    }
    let status = child
        .wait()
        .map_err(|e| Error::internal(format!("waiting for {}: {e}", local.display())))?;
    if status.success() {
        Ok(None)
    } else {
        let code = status.code().unwrap_or(1).clamp(1, 255) as u8;
        out.say(format!(
            "git-rails: {name}.local (the hook that was here before ours) failed with exit {code}; it stops the {name} hook"
        ));
        Ok(Some(code))
    }
}

/// One line of pre-push's stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushLine {
    pub local_ref: String,
    pub local_oid: String,
    pub remote_ref: String,
    pub remote_oid: String,
}

/// Parses git's pre-push protocol exactly; anything else is refused.
pub fn parse_push_lines(input: &str) -> Result<Vec<PushLine>> {
    let mut out = Vec::new();
    for (i, line) in input.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() != 4 || !is_oid(f[1]) || !is_oid(f[3]) {
            return Err(Error::refused(format!(
                "pre-push: line {} of stdin is not `<local ref> <local oid> <remote ref> <remote oid>`: {line:?}",
                i + 1
            ))
            .hint("this hook is meant to be run by git push"));
        }
        out.push(PushLine {
            local_ref: f[0].to_string(),
            local_oid: f[1].to_string(),
            remote_ref: f[2].to_string(),
            remote_oid: f[3].to_string(),
        });
    }
    Ok(out)
}

/// Sprints named by `Rails-Sprint:` trailers in the commits being pushed: those reachable from
/// `tip` and not from `stop` (the remote's value) or the remote's tracking refs, at most 1,000.
fn trailer_sprints(
    store: &Store,
    tip: ObjectId,
    stop: &HashSet<ObjectId>,
) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    let mut seen = HashSet::new();
    let mut queue = vec![tip];
    while let Some(id) = queue.pop() {
        if seen.len() >= 1000 || stop.contains(&id) || !seen.insert(id) {
            continue;
        }
        let info = store.commit_info(id)?;
        for line in info.message.lines() {
            if let Some((k, v)) = line.split_once(':') {
                if k.trim().eq_ignore_ascii_case("Rails-Sprint") && !v.trim().is_empty() {
                    out.insert(v.trim().to_string());
                }
            }
        }
        queue.extend(info.parents.iter().copied());
    }
    Ok(out)
}

fn config_true(store: &Store, key: &str) -> bool {
    store
        .config_string(key)
        .map(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "true" | "yes" | "on" | "1"
            )
        })
        .unwrap_or(false)
}

fn gate_lines(report: &gate::Report, out: &mut HookResult) {
    for m in &report.missing {
        out.say(format!("  - {} {}: {}", m.criterion, m.reason, m.command));
    }
}

/// The commit a pushed `oid` stands for (an annotated tag peeled); `None` for a tree or a
/// blob. An object the repository does not have is a refusal: git only hands a hook objects it
/// has, so such a line did not come from git.
fn pushed_commit(store: &Store, hook: &str, name: &str, oid: ObjectId) -> Result<Option<ObjectId>> {
    if !store.has_object(oid) {
        return Err(Error::refused(format!(
            "{hook}: {name} names {oid}, which is not an object in this repository"
        ))
        .hint("this hook is meant to be run by git, with the objects it pushes"));
    }
    store.peel_to_commit(oid)
}

/// `pre-push <remote> <url>`: every pushed tip must pass the gate of its sprint.
pub fn pre_push(store: &Store, remote: &str, stdin: &str) -> Result<HookResult> {
    let mut out = HookResult::default();
    let lines = parse_push_lines(stdin)?;
    let require_sprint = config_true(store, "rails.requireSprint");
    let require_spar = config_true(store, "spar.requireGate");
    let mut blocked = false;
    // The remote's tracking refs bound the walk for trailers; read only when a branch has no
    // sprint bound (the common case reads nothing but its own records).
    let remote_tips: std::cell::OnceCell<HashSet<ObjectId>> = std::cell::OnceCell::new();
    let tips = || -> HashSet<ObjectId> {
        remote_tips
            .get_or_init(|| {
                store
                    .refs_under(&format!("refs/remotes/{remote}/"))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(_, id)| id)
                    .collect()
            })
            .clone()
    };
    for l in &lines {
        if is_zero(&l.local_oid) || is_record_ref(&l.remote_ref) {
            continue;
        }
        let tip = ObjectId::from_hex(l.local_oid.as_bytes())
            .map_err(|e| Error::refused(format!("pre-push: bad oid {}: {e}", l.local_oid)))?;
        let Some(tip) = pushed_commit(store, "pre-push", &l.local_ref, tip)? else {
            out.say(format!(
                "git-rails: {} is not a commit; nothing to gate",
                l.local_ref
            ));
            continue;
        };
        if require_spar && !spar_gate(store, l, &mut out)? {
            blocked = true;
        }
        let mut sprints = BTreeSet::new();
        if let Some(branch) = l.local_ref.strip_prefix("refs/heads/") {
            if let Some(s) = store.config_string(&format!("branch.{branch}.railsSprint")) {
                if !s.trim().is_empty() {
                    sprints.insert(s.trim().to_string());
                }
            }
        }
        if sprints.is_empty() {
            let mut stop = tips();
            if !is_zero(&l.remote_oid) {
                if let Ok(r) = ObjectId::from_hex(l.remote_oid.as_bytes()) {
                    stop.insert(r);
                }
            }
            sprints = trailer_sprints(store, tip, &stop)?;
        }
        if sprints.is_empty() {
            if require_sprint {
                blocked = true;
                out.say(format!(
                    "git-rails: {} names no sprint, and rails.requireSprint is true: push refused",
                    l.local_ref
                ));
                out.say("  bind one with `git rails contract bind <sprint>`, or add a `Rails-Sprint: <sprint>` trailer");
            } else {
                out.say(format!(
                    "git-rails: {} names no sprint; nothing to gate (bind one with `git rails contract bind <sprint>`)",
                    l.local_ref
                ));
            }
            continue;
        }
        for sprint in &sprints {
            contract::check_sprint(sprint).map_err(|e| e.context("pre-push"))?;
            let report = gate::evaluate(store, sprint, Some(tip)).map_err(|e| {
                e.context(format!(
                    "the verification gate could not run for {sprint} on {}; completion remains blocked (skip on purpose with RAILS_SKIP=1)",
                    l.local_ref
                ))
            })?;
            if report.done {
                out.say(format!(
                    "git-rails: {} {} is done at {} ({})",
                    sprint,
                    report.version,
                    &l.local_oid[..7],
                    l.remote_ref
                ));
            } else {
                blocked = true;
                out.say(format!(
                    "git-rails: push of {} refused: {} {} is not done at {} ({} step{} missing)",
                    l.local_ref,
                    sprint,
                    report.version,
                    &l.local_oid[..7],
                    report.missing.len(),
                    if report.missing.len() == 1 { "" } else { "s" }
                ));
                gate_lines(&report, &mut out);
            }
        }
    }
    if blocked {
        out.say("git-rails: prove the missing steps above and push again (RAILS_SKIP=1 skips on purpose)");
        out.code = 2;
    }
    Ok(out)
}

/// With `spar.requireGate`: the spar gate of the pushed branch's series (the branch name with
/// `/` replaced by `-`), over every recorded round that is not a dry run, expecting the pushed
/// tip as the reviewed head. Returns whether it passed; the reasons go to `out`.
fn spar_gate(store: &Store, l: &PushLine, out: &mut HookResult) -> Result<bool> {
    use crate::spar::{record, series};
    let Some(branch) = l.local_ref.strip_prefix("refs/heads/") else {
        out.say(format!(
            "git-rails: spar.requireGate is true and {} is not a branch, so it has no review series; push refused",
            l.local_ref
        ));
        return Ok(false);
    };
    let name = branch.replace('/', "-");
    let mut rounds = Vec::new();
    for r in record::round_names(store, &name)? {
        let dry = record::load_round(store, &name, &r)
            .map(|x| x.dry_run)
            .unwrap_or(false);
        if !dry {
            rounds.push(format!("{name}:{r}"));
        }
    }
    if rounds.is_empty() {
        out.say(format!(
            "git-rails: push of {} refused: spar.requireGate is true and series {name} has no review round",
            l.local_ref
        ));
        out.say(format!(
            "  review it with `git spar run --base <rev> --series {name}`"
        ));
        return Ok(false);
    }
    let g = series::gate(
        store,
        &series::GateRequest {
            rounds,
            expect_head: Some(l.local_oid.clone()),
            out: None,
        },
    )
    .map_err(|e| e.context("the spar gate could not run; the push is refused"))?;
    if g.passed {
        out.say(format!("git-rails: spar gate of {name} passed"));
    } else {
        out.say(format!(
            "git-rails: push of {} refused: the spar gate of {name} is blocked",
            l.local_ref
        ));
        for r in &g.reasons {
            out.say(format!("  - {r}"));
        }
    }
    Ok(g.passed)
}

/// The trailers of a commit message (`key: value` lines; comment lines ignored).
fn trailers(message: &str, key: &str) -> Vec<String> {
    message
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, v)| k.trim().eq_ignore_ascii_case(key) && !v.trim().is_empty())
        .map(|(_, v)| v.trim().to_string())
        .collect()
}

/// `commit-msg <file>`: `Rails-Sprint:` must name a frozen contract; `Rails-Done:` needs the
/// sprint's gate to pass for the tree being committed (the index's tree).
pub fn commit_msg(store: &Store, message_file: &Path) -> Result<HookResult> {
    let mut out = HookResult::default();
    let message = std::fs::read_to_string(message_file).map_err(|e| {
        Error::refused(format!(
            "commit-msg: cannot read the message file {}: {e}",
            message_file.display()
        ))
    })?;
    for sprint in trailers(&message, "Rails-Sprint") {
        contract::check_sprint(&sprint).map_err(|e| e.context("commit-msg: Rails-Sprint"))?;
        if contract::newest(store, &sprint)?.is_none() {
            out.code = 65;
            out.say(format!(
                "git-rails: commit refused: Rails-Sprint: {sprint} names no frozen contract"
            ));
            out.say(format!(
                "  freeze it first with `git rails contract freeze {sprint}`, or fix the trailer (see `git rails contract list`)"
            ));
        }
    }
    let done = trailers(&message, "Rails-Done");
    if !done.is_empty() {
        let tree = store.index_tree()?;
        for sprint in done {
            contract::check_sprint(&sprint).map_err(|e| e.context("commit-msg: Rails-Done"))?;
            let report = gate::evaluate_tree(store, &sprint, Some("the index".into()), Some(tree))
                .map_err(|e| {
                    e.context(format!(
                        "the verification gate could not run for {sprint}; completion remains blocked"
                    ))
                })?;
            if !report.done {
                out.code = 2;
                out.say(format!(
                    "git-rails: commit refused: Rails-Done: {sprint} claims completion, but {sprint} {} is not done for the tree being committed ({} step{} missing)",
                    report.version,
                    report.missing.len(),
                    if report.missing.len() == 1 { "" } else { "s" }
                ));
                gate_lines(&report, &mut out);
            }
        }
    }
    Ok(out)
}

/// `pre-receive` on a shared bare repository: records are never deleted or rewritten there,
/// and with `rails.receiveGate` a branch update must pass its sprint's gate.
pub fn pre_receive(store: &Store, stdin: &str) -> Result<HookResult> {
    let mut out = HookResult::default();
    let receive_gate = config_true(store, "rails.receiveGate");
    let mut updates = Vec::new();
    for (i, line) in stdin.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() != 3 || !is_oid(f[0]) || !is_oid(f[1]) {
            return Err(Error::refused(format!(
                "pre-receive: line {} of stdin is not `<old oid> <new oid> <ref>`: {line:?}",
                i + 1
            )));
        }
        updates.push((f[0].to_string(), f[1].to_string(), f[2].to_string()));
    }
    for (old, new, name) in &updates {
        let guarded = name.starts_with("refs/rails/") || name.starts_with("refs/spar/");
        if !guarded {
            continue;
        }
        if is_zero(new) {
            out.code = 1;
            out.say(format!(
                "git-rails: deleting {name} is refused: records are never deleted (history is the audit log)"
            ));
        } else if !is_zero(old) && !store.is_ancestor(old, new)? {
            out.code = 1;
            out.say(format!(
                "git-rails: {name} {}..{} is not a fast-forward: a frozen record is never rewritten",
                &old[..7.min(old.len())],
                &new[..7.min(new.len())]
            ));
            out.say("  fetch the records (`git rails sync`) and add yours on top of them");
        }
    }
    if receive_gate && out.code == 0 {
        let overrides: Vec<(String, ObjectId)> = updates
            .iter()
            .filter(|(_, new, name)| !is_zero(new) && name.starts_with("refs/rails/"))
            .filter_map(|(_, new, name)| {
                ObjectId::from_hex(new.as_bytes())
                    .ok()
                    .map(|id| (name.clone(), id))
            })
            .collect();
        let view = store.with_ref_overrides(overrides)?;
        for (old, new, name) in &updates {
            if is_zero(new) || !name.starts_with("refs/heads/") {
                continue;
            }
            let tip = ObjectId::from_hex(new.as_bytes())
                .map_err(|e| Error::refused(format!("pre-receive: bad oid {new}: {e}")))?;
            let mut stop = HashSet::new();
            if !is_zero(old) {
                if let Ok(o) = ObjectId::from_hex(old.as_bytes()) {
                    stop.insert(o);
                }
            }
            let branch = &name["refs/heads/".len()..];
            let mut sprints = trailer_sprints(&view, tip, &stop)?;
            if let Some(s) = view.config_string(&format!("branch.{branch}.railsSprint")) {
                sprints.insert(s.trim().to_string());
            }
            for sprint in sprints {
                contract::check_sprint(&sprint).map_err(|e| e.context("pre-receive"))?;
                let report = gate::evaluate(&view, &sprint, Some(tip)).map_err(|e| {
                    e.context(format!(
                        "the verification gate could not run for {sprint} on {name}; the update is refused"
                    ))
                })?;
                if !report.done {
                    out.code = 1;
                    out.say(format!(
                        "git-rails: update of {name} refused: {sprint} {} is not done at {} (rails.receiveGate)",
                        report.version,
                        &new[..7]
                    ));
                    gate_lines(&report, &mut out);
                    out.say("  push the evidence refs with the branch (`git rails sync`), or prove the missing steps");
                }
            }
        }
    }
    Ok(out)
}

/// `agent-stop`: a Claude Code Stop/PreToolUse hook. Exit 2 with the gate's report on stderr
/// while the branch's sprint is unproven, 0 when it is done or no sprint is bound.
pub fn agent_stop(store: &Store, event: &str) -> Result<HookResult> {
    let mut out = HookResult::default();
    if !event.trim().is_empty() {
        serde_json::from_str::<serde_json::Value>(event).map_err(|e| {
            Error::refused(format!("agent-stop: stdin is not a hook event (JSON): {e}"))
        })?;
    }
    let Some(branch) = store.current_branch()? else {
        out.say("git-rails: HEAD is detached; no sprint is bound, nothing to gate");
        return Ok(out);
    };
    let Some(sprint) = store
        .config_string(&format!("branch.{branch}.railsSprint"))
        .filter(|s| !s.trim().is_empty())
    else {
        out.say(format!(
            "git-rails: branch {branch} has no sprint bound; nothing to gate"
        ));
        return Ok(out);
    };
    let sprint = sprint.trim().to_string();
    let head = store.head_commit()?;
    let report = match gate::evaluate(store, &sprint, head) {
        Ok(r) => r,
        Err(e) => {
            out.code = 2;
            out.say(format!(
                "The verification gate could not run; completion remains blocked: {}",
                e.message
            ));
            return Ok(out);
        }
    };
    if report.done {
        out.say(format!("git-rails: {sprint} {} is done", report.version));
    } else {
        out.code = 2;
        out.say(format!(
            "The contract {sprint} {} still has unproven criteria. Prove each before you stop:",
            report.version
        ));
        gate_lines(&report, &mut out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_lines_parse_exactly() {
        let z40 = "0".repeat(40);
        let a = "a".repeat(40);
        let l = parse_push_lines(&format!("refs/heads/main {a} refs/heads/main {z40}\n")).unwrap();
        assert_eq!(l.len(), 1);
        let a64 = "b".repeat(64);
        let z64 = "0".repeat(64);
        assert!(parse_push_lines(&format!("refs/heads/x {a64} refs/heads/x {z64}\n")).is_ok());
        assert!(parse_push_lines("").unwrap().is_empty());
        assert!(parse_push_lines(&format!("refs/heads/main {a} refs/heads/main\n")).is_err());
        assert!(parse_push_lines(&format!(
            "refs/heads/main {a} refs/heads/main {}\n",
            "0".repeat(39)
        ))
        .is_err());
        assert!(
            parse_push_lines(&format!("refs/heads/main {a}  refs/heads/main {z40}\n")).is_err()
        );
    }

    #[test]
    fn trailer_lookup_ignores_comments_and_case() {
        let m = "subject\n\nbody\n# Rails-Sprint: X\nrails-sprint: S-1\nRails-Done: S-1\n";
        assert_eq!(trailers(m, "Rails-Sprint"), vec!["S-1"]);
        assert_eq!(trailers(m, "Rails-Done"), vec!["S-1"]);
    }
}
