//! `pre-push <remote> <url>`: every push to a protected ref must pass the gate of each sprint it
//! owes (`owed`: its new commits' trailers, the bindings of the branch pushed and of the
//! destination in this clone, the signing policy's `owes`), and, with `spar.requireGate`, the
//! spar gate of the branch's series.

use super::*;

/// `pre-push <remote> <url>`: every push to a protected ref (any branch when `rails.protect`
/// is unset) must pass the gate of each sprint it owes, whatever the local branch is called:
/// what its new commits name (a commit without a trailer through its nearest new ancestor),
/// and the sprints bound here to the branch pushed and to the destination branch. The server
/// judges the same commits alike (it adds what it binds itself).
pub fn pre_push(store: &Store, remote: &str, stdin: &str) -> Result<HookResult> {
    let mut out = HookResult::default();
    let lines = parse_push_lines_in(store, stdin)?;
    let policy = Policy::read(store)?;
    let require_spar = store.config_flag("spar.requireGate");
    let mut blocked = false;
    let mut records_refused = false;
    for l in &lines {
        if is_zero(&l.local_oid) {
            continue;
        }
        if is_record_ref(&l.remote_ref) {
            records_refused |= record_refused(store, l, &mut out)?;
            records_refused |= secrets_refused(store, l, &mut out)?;
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
        // The signing policy as the server will read it: from the remote's ref before the
        // push (when this clone has that commit), tightened by this clone's configuration.
        let old = ObjectId::from_hex(l.remote_oid.as_bytes())
            .ok()
            .filter(|id| !is_zero(&l.remote_oid) && store.has_object(*id))
            .and_then(|id| store.peel_to_commit(id).ok().flatten());
        let source = old.map_or(crate::policy::Source::Clone, crate::policy::Source::At);
        let signing = crate::policy::Policy::load(store, source)?;
        let authority = signing.as_ref().map(|policy| Authority { policy, old });
        if let Some(a) = &authority {
            let changes = authority::policy_changes(store, a, tip, &stop)?;
            if !changes.is_empty() {
                blocked = true;
                for c in changes {
                    out.say(format!("git-rails: push of {} refused: {c}", l.remote_ref));
                }
            }
        }
        // The bindings in this clone of the branch pushed and of the destination branch.
        let mut bindings: Vec<owed::Binding> = Vec::new();
        for r in [&l.local_ref, &l.remote_ref] {
            if let Some(b) = owed::binding_of(store, r) {
                if !bindings.iter().any(|x| x.branch == b.branch) {
                    bindings.push(b);
                }
            }
        }
        if judge_update(
            store,
            &policy,
            authority.as_ref(),
            &label,
            &l.remote_ref,
            (tip, &stop),
            &bindings,
            &mut out,
        )? {
            blocked = true;
        }
    }
    if blocked {
        out.say("git-rails: prove the missing steps above and push again (RAILS_SKIP=1 skips on purpose)");
        out.code = 2;
    }
    if records_refused {
        out.code = 2;
    }
    Ok(out)
}

/// A record ref leaves only as a guarded server would take it ([`pushed_records`]): an
/// evidence chain that replays, a spar series that replaces no completed result. Records are
/// never gated otherwise (a proof must be able to travel before the work it proves).
fn record_refused(store: &Store, l: &PushLine, out: &mut HookResult) -> Result<bool> {
    let judged = Namespace::Evidence.key_of(&l.remote_ref).is_some()
        || Namespace::SparSeries.key_of(&l.remote_ref).is_some();
    if !judged {
        return Ok(false);
    }
    let tip = ObjectId::from_hex(l.local_oid.as_bytes())
        .map_err(|e| Error::refused(format!("pre-push: bad oid {}: {e}", l.local_oid)))?;
    // git pushes only objects it has; a record that is no commit holds no chain to judge.
    if pushed_commit(store, "pre-push", &l.local_ref, tip)?.is_none() {
        return Ok(false);
    }
    // The ref as the remote will hold it, whatever the local one is called.
    let view = store.with_ref_overrides(vec![(l.remote_ref.clone(), tip)])?;
    let lines = super::pushed_records::problems(&view, &l.remote_ref, tip)?;
    let refused = !lines.is_empty();
    super::pushed_records::say(out, lines);
    Ok(refused)
}

/// A record ref whose new blobs hold a known token format never leaves ([`pushed_secrets`]).
fn secrets_refused(store: &Store, l: &PushLine, out: &mut HookResult) -> Result<bool> {
    let tip = ObjectId::from_hex(l.local_oid.as_bytes())
        .map_err(|e| Error::refused(format!("pre-push: bad oid {}: {e}", l.local_oid)))?;
    // Only commits hold records: a tree or blob pushed or held there has no history to scan.
    let Some(tip) = pushed_commit(store, "pre-push", &l.local_ref, tip)? else {
        return Ok(false);
    };
    let old = ObjectId::from_hex(l.remote_oid.as_bytes())
        .ok()
        .filter(|id| !is_zero(&l.remote_oid) && store.has_object(*id))
        .and_then(|id| store.peel_to_commit(id).ok().flatten());
    let lines = super::pushed_secrets::problems(store, &l.remote_ref, old, tip, &[])?;
    let refused = !lines.is_empty();
    super::pushed_records::say(out, lines);
    Ok(refused)
}

/// With `spar.requireGate`: the spar gate of the pushed branch's series (the branch name with
/// `/` replaced by `-`), over every recorded round that is not a dry run, expecting the pushed
/// tip as the reviewed head. Returns whether it passed; the reasons go to `out`.
fn spar_gate(store: &Store, l: &PushLine, out: &mut HookResult) -> Result<bool> {
    use crate::spar::ids::SeriesId;
    use crate::spar::{record, series};
    let Some(branch) = l.local_ref.strip_prefix("refs/heads/") else {
        out.say(format!(
            "git-rails: spar.requireGate is true and {} is not a branch, so it has no review series; push refused",
            l.local_ref
        ));
        return Ok(false);
    };
    let name = SeriesId::recorded(&branch.replace('/', "-"));
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
    // The rounds as a command names them, checked the same way (a branch's series may be no
    // series name at all).
    let g = series::gate_targets(&rounds)
        .and_then(|rounds| {
            series::gate(
                store,
                &series::GateRequest {
                    rounds,
                    expect_head: Some(l.local_oid.clone()),
                    out: None,
                    policy_from: None,
                },
            )
        })
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
