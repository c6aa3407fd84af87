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
use crate::evidence::{gate, kept};
use crate::store::refs::Namespace;
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
            require_sprint: config_true(store, "rails.requireSprint"),
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

/// Where a verdict comes from: what this machine kept for the same records and tree (the
/// client's hooks), or computed afresh (the server, which trusts no client's files).
#[derive(Clone, Copy)]
enum Judge {
    Kept,
    Fresh,
}

/// Judges one update of `target` to `tip`: every sprint the new commits name (those not
/// reachable from `stop`) must be done at `tip`; with requireSprint, naming none is refused.
/// `label` names the update for the user ("push of refs/heads/tmp" when it differs from
/// `target`, else the whole phrase). Returns whether it blocked.
fn judge_update(
    store: &Store,
    policy: &Policy,
    label: &str,
    target: &str,
    (tip, stop): (ObjectId, &HashSet<ObjectId>),
    judge: Judge,
    out: &mut HookResult,
) -> Result<bool> {
    let sprints = trailer_sprints(store, tip, stop)?;
    let short = &tip.to_string()[..7];
    let what = if label.contains(' ') || label == target {
        label.to_string()
    } else {
        format!("push of {label} to {target}")
    };
    if sprints.is_empty() {
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
    for sprint in &sprints {
        let sprint = &SprintId::parse(sprint)
            .map_err(|e| e.context(format!("a Rails-Sprint trailer in {label}")))?;
        // The client may read what it kept; the server judges every push afresh.
        let report = match judge {
            Judge::Kept => kept::evaluate(store, sprint, Some(tip)),
            Judge::Fresh => gate::evaluate(store, sprint, Some(tip)),
        }
        .map_err(|e| {
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
                "git-rails: {what} refused: {} {} is not done at {short} ({} step{} missing)",
                sprint,
                report.version,
                report.missing.len(),
                if report.missing.len() == 1 { "" } else { "s" }
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

/// `pre-push <remote> <url>`: every push to a protected ref (any branch when `rails.protect`
/// is unset) must pass the gate of each sprint its new commits name, whatever the local
/// branch is called; the local binding plays no part, so the server decides alike.
pub fn pre_push(store: &Store, remote: &str, stdin: &str) -> Result<HookResult> {
    let mut out = HookResult::default();
    let lines = parse_push_lines_in(store, stdin)?;
    let policy = Policy::read(store)?;
    let require_spar = config_true(store, "spar.requireGate");
    let mut blocked = false;
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
        if !policy.protects(&l.remote_ref) {
            if policy.has_patterns() {
                out.say(format!(
                    "git-rails: {} is not protected (rails.protect); not gated",
                    l.remote_ref
                ));
            }
            continue;
        }
        // What the remote already has: the old value of the ref, else (a new ref) what the
        // remote-tracking branches say it holds, as the server's own branches bound its walk.
        let stop = stop_set(&l.remote_oid, || {
            store
                .refs_under(&format!("refs/remotes/{remote}/"))
                .unwrap_or_default()
                .into_iter()
                .map(|(_, id)| id)
                .collect()
        });
        let label = if l.local_ref == l.remote_ref {
            format!("push of {}", l.local_ref)
        } else {
            l.local_ref.clone()
        };
        if judge_update(
            store,
            &policy,
            &label,
            &l.remote_ref,
            (tip, &stop),
            Judge::Kept,
            &mut out,
        )? {
            blocked = true;
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

/// `commit-msg <file>`: while the branch is bound, adds `Rails-Sprint: <sprint>` (as
/// `git interpret-trailers` would, never a second one); a `Rails-Sprint:` the author wrote
/// must name a frozen contract; `Rails-Done:` needs the
/// sprint's gate to pass for the tree being committed (the index's tree).
pub fn commit_msg(store: &Store, message_file: &Path) -> Result<HookResult> {
    let mut out = HookResult::default();
    let read = || {
        std::fs::read_to_string(message_file).map_err(|e| {
            Error::refused(format!(
                "commit-msg: cannot read the message file {}: {e}",
                message_file.display()
            ))
        })
    };
    let mut message = read()?;
    let written = trailers(&message, "Rails-Sprint");
    // The bound sprint travels in the commit (as Gerrit's hook adds Change-Id), so a clone,
    // CI and the server find it from the pushed commits alone. A message that is only
    // comments is left alone: git aborts such a commit, and a trailer would keep it alive.
    if written.is_empty() && has_text(&message) {
        if let Some(sprint) = bound_sprint(store)? {
            let sprint = SprintId::parse(&sprint)
                .map_err(|e| e.context("commit-msg: the sprint bound to the branch"))?;
            store.add_trailer(message_file, "Rails-Sprint", &sprint)?;
            message = read()?;
            if contract::newest(store, &sprint)?.is_none() {
                out.say(format!(
                    "git-rails: note: the branch is bound to {sprint}, which has no frozen contract yet; a push of this commit is refused until `git rails contract freeze {sprint}`"
                ));
            }
        }
    }
    for sprint in written {
        let sprint = SprintId::parse(&sprint).map_err(|e| e.context("commit-msg: Rails-Sprint"))?;
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
            let sprint =
                SprintId::parse(&sprint).map_err(|e| e.context("commit-msg: Rails-Done"))?;
            let report = kept::evaluate_tree(store, &sprint, Some("the index".into()), Some(tree))
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
/// and with `rails.receiveGate`, `rails.protect` or `rails.requireSprint` an update of a
/// protected ref is judged as [`pre_push`] judges it, from the pushed commits and records.
pub fn pre_receive(store: &Store, stdin: &str) -> Result<HookResult> {
    let mut out = HookResult::default();
    let receive_gate = config_true(store, "rails.receiveGate");
    let id_len = Some(store.null_id().to_string().len());
    let mut updates = Vec::new();
    for (i, line) in stdin.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() != 3 || !is_oid_len(f[0], id_len) || !is_oid_len(f[1], id_len) {
            return Err(Error::refused(format!(
                "pre-receive: line {} of stdin is not `<old oid> <new oid> <ref>`: {line:?}",
                i + 1
            )));
        }
        updates.push((f[0].to_string(), f[1].to_string(), f[2].to_string()));
    }
    // Every rule below reads through one view: the pushed objects (still in quarantine) and the
    // pushed record refs laid over the server's own.
    let overrides: Vec<(String, ObjectId)> = updates
        .iter()
        .filter(|(_, new, name)| !is_zero(new) && name.starts_with(crate::store::refs::RAILS))
        .filter_map(|(_, new, name)| {
            ObjectId::from_hex(new.as_bytes())
                .ok()
                .map(|id| (name.clone(), id))
        })
        .collect();
    let view = store.with_ref_overrides(overrides)?;
    // git hands pre-receive only objects it has or has just received: an id in neither did
    // not come from git, and is refused before any rule reads it.
    for (_, new, name) in &updates {
        let known =
            is_zero(new) || ObjectId::from_hex(new.as_bytes()).is_ok_and(|id| view.has_object(id));
        if !known {
            return Err(Error::refused(format!(
                "pre-receive: {name} names {new}, which is not an object in this repository"
            ))
            .hint("this hook is meant to be run by git, with the objects it receives"));
        }
    }
    for (old, new, name) in &updates {
        let guarded = crate::store::refs::is_guarded(name);
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
        } else if let Some(series) = Namespace::SparSeries.key_of(name) {
            // A fast-forward can still carry a commit that rewrites a completed result.
            let tip = ObjectId::from_hex(new.as_bytes())
                .map_err(|e| Error::refused(format!("pre-receive: bad oid {new}: {e}")))?;
            // The pushed objects are still in quarantine: read them through the view.
            let found = crate::spar::record::replaced_results(&view, series, tip)?;
            if !found.is_empty() {
                out.code = 1;
                out.say(format!(
                    "git-rails: update of {name} refused: its history replaces a completed review result"
                ));
                for f in found {
                    out.say(format!("  {f}"));
                }
            }
            // Gate facts are a summary anyone can write: each pushed round's must agree with
            // the round's own records, derived again here.
            let lies = crate::spar::facts::lies_at(&view, series, tip)?;
            if !lies.is_empty() {
                out.code = 1;
                out.say(format!(
                    "git-rails: update of {name} refused: its gate facts do not agree with its records"
                ));
                for l in lies {
                    out.say(format!("  {l}"));
                }
                out.say("  record rounds with `git spar` (run, record, triage, waive), which write the facts; never by hand");
            }
        }
    }
    // A pushed evidence chain must replay from its first commit: a summary written by hand,
    // or a record without its observation, never lands.
    let evidence_updates: Vec<&(String, String, String)> = updates
        .iter()
        .filter(|(_, new, name)| !is_zero(new) && Namespace::Evidence.key_of(name).is_some())
        .collect();
    if out.code == 0 && !evidence_updates.is_empty() {
        for (_, _, name) in evidence_updates {
            let sprint = Namespace::Evidence.key_of(name).unwrap_or_default();
            // The view reads the pushed tip; the server's own kept replay of what it accepted
            // before means only the new commits are replayed.
            let sprint = &SprintId::recorded(sprint);
            let derived = crate::evidence::chain::derive(&view, sprint)?;
            if let Some(p) = derived.problem {
                out.code = 1;
                out.say(format!(
                    "git-rails: update of {name} refused: {}",
                    p.line(sprint)
                ));
                out.say(format!("  {}", p.fix(sprint)));
            }
        }
    }
    let policy = Policy::read(store)?;
    let gated = receive_gate || policy.has_patterns() || policy.require_sprint;
    if gated && out.code == 0 {
        for (old, new, name) in &updates {
            if is_zero(new) || is_record_ref(name) || !policy.protects(name) {
                continue;
            }
            let tip = ObjectId::from_hex(new.as_bytes())
                .map_err(|e| Error::refused(format!("pre-receive: bad oid {new}: {e}")))?;
            let stop = stop_set(old, || {
                view.refs_under("refs/heads/")
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(_, id)| id)
                    .collect()
            });
            let mut lines = HookResult::default();
            if judge_update(
                &view,
                &policy,
                &format!("update of {name}"),
                name,
                (tip, &stop),
                Judge::Fresh,
                &mut lines,
            )? {
                out.code = 1;
                out.lines.extend(lines.lines);
                out.say("  push the evidence refs with the branch (`git rails sync`), or prove the missing steps");
            }
        }
    }
    Ok(out)
}

/// The fields of a Claude Code hook event that agent-stop reads.
#[derive(Debug, Default, serde::Deserialize)]
struct AgentEvent {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    stop_hook_active: bool,
    #[serde(default)]
    hook_event_name: Option<String>,
}

/// The working directory a hook event names (`cwd`), when it has one.
pub fn event_cwd(event: &str) -> Option<std::path::PathBuf> {
    serde_json::from_str::<serde_json::Value>(event)
        .ok()?
        .get("cwd")?
        .as_str()
        .filter(|c| !c.is_empty())
        .map(std::path::PathBuf::from)
}

const DEFAULT_AGENT_STOP_LIMIT: u32 = 3;

/// `rails.agentStopLimit`: how many Stops in a row with nothing moved are blocked.
fn agent_stop_limit(store: &Store, out: &mut HookResult) -> u32 {
    match store.config_string("rails.agentStopLimit") {
        None => DEFAULT_AGENT_STOP_LIMIT,
        Some(v) => match v.trim().parse::<u32>() {
            Ok(n) if n >= 1 => n,
            _ => {
                out.say(format!(
                    "git-rails: rails.agentStopLimit = {v:?} is not a whole number of at least 1; using {DEFAULT_AGENT_STOP_LIMIT}"
                ));
                DEFAULT_AGENT_STOP_LIMIT
            }
        },
    }
}

/// The sprint HEAD's own commit names in a `Rails-Sprint:` trailer.
fn head_trailer_sprint(store: &Store) -> Result<Option<String>> {
    let Some(head) = store.head_commit()? else {
        return Ok(None);
    };
    Ok(trailers(&store.commit_info(head)?.message, "Rails-Sprint")
        .into_iter()
        .last())
}

/// `agent-stop`: a Claude Code Stop or PreToolUse hook. Exit 2 with the gate's report while
/// the session's sprint is unproven, 0 when it is done or no sprint is named.
///
/// The sprint is the one this session was last blocked on (kept under the common git dir,
/// whatever branch HEAD is on now), else the branch's binding, else HEAD's `Rails-Sprint:`.
/// A Stop with `stop_hook_active` after a block where nothing moved (same evidence tip, same
/// tracked tree) counts; after `rails.agentStopLimit` of them in a row the turn is let end
/// (exit 0), said on stderr and recorded. A PreToolUse event blocks the tool call (exit 2).
pub fn agent_stop(store: &Store, event: &str) -> Result<HookResult> {
    use super::agent;
    let mut out = HookResult::default();
    let ev: AgentEvent = if event.trim().is_empty() {
        AgentEvent::default()
    } else {
        serde_json::from_str(event).map_err(|e| {
            Error::refused(format!("agent-stop: stdin is not a hook event (JSON): {e}"))
        })?
    };
    let session = ev.session_id.as_deref().filter(|s| !s.is_empty());
    let pre_tool = ev.hook_event_name.as_deref() == Some("PreToolUse");
    let head = store.head_commit()?;
    let mut kept = match session {
        Some(id) => agent::load(store, id)?,
        None => None,
    };
    let mut sprint = kept.as_ref().map(|k| k.sprint.clone());
    // A kept sprint that is done now releases the session; the branch's sprint is next.
    // The agent asks here, so its verdict is computed, never read from a kept report it
    // could have written itself (evidence::kept).
    if let (Some(id), Some(s)) = (session, sprint.as_deref()) {
        if gate::evaluate(store, &SprintId::recorded(s), head).is_ok_and(|r| r.done) {
            agent::forget(store, id)?;
            out.say(format!("git-rails: {s} is done; session {id} is released"));
            kept = None;
            sprint = None;
        }
    }
    if sprint.is_none() {
        sprint = match bound_sprint(store)? {
            Some(s) => Some(s),
            None => head_trailer_sprint(store)?,
        };
    }
    let Some(sprint) = sprint else {
        out.say("git-rails: no sprint is bound to the branch or named by HEAD; nothing to gate");
        return Ok(out);
    };
    let checked = SprintId::parse(&sprint).and_then(|s| Ok((gate::evaluate(store, &s, head)?, s)));
    let (report, sprint) = match checked {
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
        if let Some(id) = session {
            agent::forget(store, id)?;
        }
        out.say(format!("git-rails: {sprint} {} is done", report.version));
        return Ok(out);
    }
    let unproven = |out: &mut HookResult| {
        out.code = 2;
        out.say(format!(
            "The contract {sprint} {} still has unproven criteria. Prove each before you {}:",
            report.version,
            if pre_tool { "use this tool" } else { "stop" }
        ));
        gate_lines(&report, out);
    };
    let Some(id) = session else {
        unproven(&mut out);
        return Ok(out);
    };
    let evidence_tip = store
        .ref_target(&Namespace::Evidence.name(&sprint))?
        .map(|t| t.to_string());
    let tree = store.tracked_tree().ok().map(|t| t.to_string());
    let still = kept.as_ref().is_some_and(|k| {
        sprint == k.sprint.as_str() && k.evidence_tip == evidence_tip && k.tree == tree
    });
    let mut state = agent::Session {
        sprint: sprint.to_string(),
        blocks: 1,
        evidence_tip,
        tree,
    };
    if pre_tool {
        // A tool call is blocked while unproven; it does not count toward the Stop limit.
        state.blocks = kept.as_ref().map(|k| k.blocks).unwrap_or(0);
        agent::save(store, id, &state)?;
        unproven(&mut out);
        return Ok(out);
    }
    if ev.stop_hook_active && still {
        let limit = agent_stop_limit(store, &mut out);
        let blocks = kept.as_ref().map(|k| k.blocks).unwrap_or(0);
        if blocks >= limit {
            let message = agent::record_ended_turn(store, &sprint, id, head)?;
            state.blocks = 0;
            agent::save(store, id, &state)?;
            out.say(format!(
                "git-rails: {sprint} {} is still unproven, but nothing moved in {blocks} blocked stops in a row (rails.agentStopLimit = {limit}); the turn ends here",
                report.version
            ));
            out.say(format!("git-rails: recorded: {message}"));
            out.say(format!("  see `git rails status {sprint}`"));
            return Ok(out);
        }
        state.blocks = blocks + 1;
    }
    agent::save(store, id, &state)?;
    unproven(&mut out);
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
