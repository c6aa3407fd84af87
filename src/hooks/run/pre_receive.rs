//! `pre-receive` on a shared bare repository: records never deleted or rewritten, and
//! protected refs judged from the pushed commits and records alone.

use super::*;

/// `pre-receive` on a shared bare repository: records are never deleted or rewritten there,
/// and with `rails.receiveGate`, `rails.protect` or `rails.requireSprint` an update of a
/// protected ref is judged as [`pre_push`] judges it, from the pushed commits and records.
pub fn pre_receive(store: &Store, stdin: &str) -> Result<HookResult> {
    let mut out = HookResult::default();
    let receive_gate = store.config_flag("rails.receiveGate");
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
        } else if Namespace::SparSeries.key_of(name).is_some() {
            // A fast-forward can still carry a commit that rewrites a completed result.
            let tip = ObjectId::from_hex(new.as_bytes())
                .map_err(|e| Error::refused(format!("pre-receive: bad oid {new}: {e}")))?;
            // The pushed objects are still in quarantine: read them through the view.
            pushed_records::say(&mut out, pushed_records::problems(&view, name, tip)?);
        }
    }
    // A pushed evidence chain must replay from its first commit. The view reads the pushed
    // tip; the server's own kept replay of what it accepted before means only the new commits
    // are replayed.
    if out.code == 0 {
        for (_, new, name) in &updates {
            if is_zero(new) || Namespace::Evidence.key_of(name).is_none() {
                continue;
            }
            let tip = ObjectId::from_hex(new.as_bytes())
                .map_err(|e| Error::refused(format!("pre-receive: bad oid {new}: {e}")))?;
            pushed_records::say(&mut out, pushed_records::problems(&view, name, tip)?);
        }
    }
    // No record arrives holding a known token format (`pushed_secrets`).
    if out.code == 0 {
        let series_tips: Vec<ObjectId> = updates
            .iter()
            .filter(|(_, new, name)| !is_zero(new) && Namespace::SparSeries.key_of(name).is_some())
            .filter_map(|(_, new, _)| ObjectId::from_hex(new.as_bytes()).ok())
            .collect();
        for (old, new, name) in &updates {
            if is_zero(new) || !is_record_ref(name) {
                continue;
            }
            let tip = ObjectId::from_hex(new.as_bytes())
                .map_err(|e| Error::refused(format!("pre-receive: bad oid {new}: {e}")))?;
            let Some(tip) = view.peel_to_commit(tip)? else {
                continue; // only commits hold records
            };
            let old = ObjectId::from_hex(old.as_bytes())
                .ok()
                .filter(|id| !is_zero(old) && view.has_object(*id))
                .and_then(|id| view.peel_to_commit(id).ok().flatten());
            let lines = super::pushed_secrets::problems(&view, name, old, tip, &series_tips)?;
            pushed_records::say(&mut out, lines);
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
            // The signing policy: this server's own configuration, else the file on the
            // protected ref as it stood before this push (never the pushed commits').
            let old_tip = (!is_zero(old))
                .then(|| ObjectId::from_hex(old.as_bytes()).ok())
                .flatten()
                .and_then(|id| store.peel_to_commit(id).ok().flatten());
            let signing =
                crate::policy::Policy::load(store, crate::policy::Source::Server(old_tip))?;
            let authority = signing.as_ref().map(|policy| Authority {
                policy,
                old: old_tip,
            });
            if let Some(a) = &authority {
                for c in authority::policy_changes(&view, a, tip, &stop)? {
                    out.code = 1;
                    out.say(format!("git-rails: update of {name} refused: {c}"));
                }
            }
            if judge_update(
                &view,
                &policy,
                authority.as_ref(),
                &format!("update of {name}"),
                name,
                (tip, &stop),
                &owed::binding_of(store, name)
                    .into_iter()
                    .collect::<Vec<_>>(),
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
