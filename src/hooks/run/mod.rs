//! What the installed hooks do: `git rails hook pre-push|commit-msg|pre-receive|agent-stop`.
//!
//! Every hook fails closed: when it cannot decide it refuses and says how to skip on purpose.
//! Results are returned as lines for stderr and an exit code; the CLI prints them.

use std::collections::{BTreeSet, HashSet};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::contract;
use crate::contract::SprintId;
use crate::error::{Error, Result};
use crate::evidence::gate;
use crate::store::refs::Namespace;
use crate::store::{ObjectId, Store};
use authority::Authority;

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
    crate::store::refs::carries_records(name)
}

fn is_zero(oid: &str) -> bool {
    oid.bytes().all(|b| b == b'0')
}

fn is_oid(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A full object id of `len` hex digits: 40 in a SHA-1 repository, 64 in a SHA-256 one (whose
/// zero id, for a ref that does not exist, is 64 zeros).
fn is_oid_len(s: &str, len: Option<usize>) -> bool {
    is_oid(s) && len.is_none_or(|n| s.len() == n)
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

/// Parses git's pre-push protocol exactly; anything else is refused. Ids may be of either
/// object format; [`parse_push_lines_in`] holds them to the repository's.
pub fn parse_push_lines(input: &str) -> Result<Vec<PushLine>> {
    parse_push_lines_len(input, None)
}

/// [`parse_push_lines`] for the repository at hand: ids of its object format only.
pub fn parse_push_lines_in(store: &Store, input: &str) -> Result<Vec<PushLine>> {
    parse_push_lines_len(input, Some(store.null_id().to_string().len()))
}

fn parse_push_lines_len(input: &str, len: Option<usize>) -> Result<Vec<PushLine>> {
    let mut out = Vec::new();
    for (i, line) in input.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() != 4 || !is_oid_len(f[1], len) || !is_oid_len(f[3], len) {
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

fn gate_lines(report: &gate::Report, out: &mut HookResult) {
    for m in &report.missing {
        out.say(format!("  - {} {}: {}", m.criterion, m.reason, m.command));
    }
}

/// Which pushes are judged: `rails.protect` (ref patterns, `*` within one component, `**`
/// across; a name without `refs/` is a branch) and `rails.requireSprint`. Read alike by
/// pre-push on the client and pre-receive on the server, so both decide from the same rule.
pub struct Policy {
    patterns: Vec<String>,
    matcher: globset::GlobSet,
    pub require_sprint: bool,
}

impl Policy {
    pub fn read(store: &Store) -> Result<Policy> {
        let mut patterns = Vec::new();
        let mut b = globset::GlobSetBuilder::new();
        for p in store.config_strings("rails.protect") {
            for p in p.split_whitespace() {
                let full = if p.starts_with("refs/") {
                    p.to_string()
                } else {
                    format!("refs/heads/{p}")
                };
                let glob = globset::GlobBuilder::new(&full)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| {
                        Error::refused(format!("rails.protect: {p:?} is not a ref pattern: {e}"))
                            .hint("fix it with `git config rails.protect refs/heads/main`")
                    })?;
                b.add(glob);
                patterns.push(full);
            }
        }
        let matcher = b
            .build()
            .map_err(|e| Error::refused(format!("rails.protect: {e}")))?;
        Ok(Policy {
            patterns,
            matcher,
            require_sprint: store.config_flag("rails.requireSprint"),
        })
    }

    /// Whether a push to `target` (the ref on the receiving side) is judged: a protected ref,
    /// or any branch when no pattern is set.
    pub fn protects(&self, target: &str) -> bool {
        if self.patterns.is_empty() {
            target.starts_with("refs/heads/")
        } else {
            self.matcher.is_match(target)
        }
    }

    pub fn has_patterns(&self) -> bool {
        !self.patterns.is_empty()
    }
}

/// Judges one update of `target` to `tip`: it owes every sprint any source names
/// ([`owed::owed`]: the new commits' trailers — those not reachable from `stop` — with what a
/// new commit inherits from its nearest new ancestor, the `bindings` of the branches involved,
/// and a signing policy's `owes`), and each must be done at `tip`; with requireSprint, owing
/// none is refused. `label` names the update for the user ("push of refs/heads/tmp" when it
/// differs from `target`, else the whole phrase). Returns whether it blocked.
///
/// With a signing policy in force ([`Authority`]) the pusher cannot choose the sprint that
/// judges the push: the sprints the policy says `target` owes are judged too; a sprint counts
/// only when its frozen version (the contract ref's tip) is signed by an allowed planner, and
/// only when its gate had not already passed at the ref's old tip (a finished sprint never
/// covers later work); and a protected ref's update must name or owe one.
#[allow(clippy::too_many_arguments)]
fn judge_update(
    store: &Store,
    policy: &Policy,
    authority: Option<&Authority>,
    label: &str,
    target: &str,
    (tip, stop): (ObjectId, &HashSet<ObjectId>),
    bindings: &[owed::Binding],
    out: &mut HookResult,
) -> Result<bool> {
    let owes: &[String] = authority.map_or(&[], |a| a.policy.owed_by(target));
    let owed = owed::owed(store, (tip, stop), bindings, owes)?;
    owed::unnamed_lines(&owed, bindings, out);
    let sprints = owed.sprints;
    let short = &tip.to_string()[..7];
    let what = if label.contains(' ') || label == target {
        label.to_string()
    } else {
        format!("push of {label} to {target}")
    };
    if sprints.is_empty() {
        if let Some(a) = authority.filter(|_| policy.has_patterns()) {
            out.say(format!(
                "git-rails: {what} refused: its new commits name no sprint, and under the signing policy ({}) a protected ref is judged by a sprint a planner signed",
                a.policy.source
            ));
            out.say("  commit on a branch bound with `git rails contract bind <sprint>` (the commit-msg hook adds the `Rails-Sprint:` trailer), or name the sprint the ref owes in the policy (`owes`)");
            return Ok(true);
        }
        if policy.require_sprint {
            out.say(format!(
                "git-rails: {what} refused: its new commits name no sprint, and rails.requireSprint is true"
            ));
            out.say("  commit on a branch bound with `git rails contract bind <sprint>` (the commit-msg hook adds the `Rails-Sprint:` trailer), or add the trailer yourself");
            return Ok(true);
        }
        out.say(format!(
            "git-rails: {what}: its new commits name no sprint; nothing to gate (bind one with `git rails contract bind <sprint>`)"
        ));
        return Ok(false);
    }
    let mut blocked = false;
    for (sprint, sources) in &sprints {
        let sprint = &SprintId::parse(sprint).map_err(|e| {
            e.context(match sources.first() {
                Some(owed::Source::Binding(b)) => format!("the sprint bound to {b}"),
                Some(owed::Source::Owes) => {
                    format!("the sprint the signing policy says {target} owes")
                }
                _ => format!("a Rails-Sprint trailer in {label}"),
            })
        })?;
        if let Some(a) = authority {
            if let Some(why) = authority::not_counted(store, a, sprint)? {
                blocked = true;
                let mut lines = why.lines();
                out.say(format!(
                    "git-rails: {what} refused: {}",
                    lines.next().unwrap_or_default()
                ));
                for l in lines {
                    out.say(l.to_string());
                }
                continue;
            }
        }
        let report = gate::evaluate(store, sprint, gate::Judged::Commit(tip)).map_err(|e| {
            e.context(format!(
                "the verification gate could not run for {sprint} on {label}; completion remains blocked (skip on purpose with RAILS_SKIP=1)"
            ))
        })?;
        if report.done {
            out.say(format!(
                "git-rails: {} {} is done at {short} ({target})",
                sprint, report.version
            ));
        } else {
            blocked = true;
            out.say(format!(
                "git-rails: {what} refused: {} {} is not done at {short} ({} step{} missing; owed by {})",
                sprint,
                report.version,
                report.missing.len(),
                if report.missing.len() == 1 { "" } else { "s" },
                owed::describe(sources),
            ));
            gate_lines(&report, out);
        }
    }
    Ok(blocked)
}

/// The commits a push of `target` already has on the receiving side: the ref's old value,
/// or, when the push creates the ref, the tips of every branch `existing` holds.
fn stop_set(old: &str, existing: impl FnOnce() -> HashSet<ObjectId>) -> HashSet<ObjectId> {
    if is_zero(old) {
        existing()
    } else {
        ObjectId::from_hex(old.as_bytes())
            .ok()
            .into_iter()
            .collect()
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

mod agent_stop;
mod authority;
mod commit_msg;
mod owed;
mod pre_push;
mod pre_receive;
mod pushed_records;
pub mod pushed_secrets;

pub use agent_stop::{agent_hold, agent_stop, event_cwd};
pub use commit_msg::commit_msg;
pub use pre_push::pre_push;
pub use pre_receive::pre_receive;

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

/// Whether a commit message says anything outside comment lines.
fn has_text(message: &str) -> bool {
    message
        .lines()
        .take_while(|l| !l.starts_with("# ------------------------ >8"))
        .any(|l| !l.starts_with('#') && !l.trim().is_empty())
}

/// The sprint bound to the checked-out branch (`git rails contract bind`), if any.
fn bound_sprint(store: &Store) -> Result<Option<String>> {
    let Some(branch) = store.current_branch()? else {
        return Ok(None);
    };
    Ok(store
        .config_string(&format!("branch.{branch}.railsSprint"))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty()))
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
