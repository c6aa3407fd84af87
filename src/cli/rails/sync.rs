//! `git rails sync` (shared with `git spar sync`) and `git rails doctor`; the set-up of record
//! sync that `hooks install` and `contract bind` do too. What a sync leaves to decide is worded
//! by `sync::Report::problem_lines`.

use super::*;
use crate::store::refs;

/// What `hooks install` and `contract bind` do for the records to travel as the README says:
/// the default remote's refspecs, as `git rails sync --setup` writes them (said on stderr). A
/// bare repository (a server) or a clone with no such remote is left alone, with a line saying so.
pub(super) fn setup_record_sync(store: &Store, say_no_remote: bool) -> Result<()> {
    if store.workdir().is_err() {
        return Ok(());
    }
    let remote = crate::sync::default_remote(store);
    if store
        .config_string(&format!("remote.{remote}.url"))
        .is_none()
    {
        if say_no_remote {
            eprintln!("git-rails: no remote {remote:?} yet; once there is one, `git rails sync --setup <remote>` makes plain `git push` / `git fetch` carry the records");
        }
        return Ok(());
    }
    let added = crate::sync::setup(store, &remote)?;
    if !added.is_empty() {
        eprintln!("git-rails: set up {remote} so plain `git push` / `git fetch` carry the records (skip with --no-sync-setup):");
        for l in &added {
            eprintln!("git-rails:   {l}");
        }
    }
    Ok(())
}

/// `git rails sync` and `git spar sync` (one implementation; `prog` prefixes progress lines).
pub fn cmd_sync(a: SyncArgs, prog: &str) -> Result<Outcome> {
    let store = Store::discover()?;
    let remote = a
        .remote
        .clone()
        .unwrap_or_else(|| crate::sync::default_remote(&store));
    if a.setup {
        let added = crate::sync::setup(&store, &remote)?;
        if a.json {
            crate::cli::print_json(
                &json!({"schema": "rails-sync-setup/v1", "remote": remote, "added": added}),
            )?;
        } else if added.is_empty() {
            outln!(
                "{remote}: already set up; `git fetch {remote}` stages records under {} and `git push {remote}` carries them",
                refs::sync_staging(&remote)
            );
        } else {
            for l in &added {
                outln!("added {l}");
            }
            outln!(
                "`git fetch {remote}` now stages records under {}; `git push {remote}` carries them (and still the current branch); merge with `git rails sync {remote}`",
                refs::sync_staging(&remote)
            );
        }
        return Ok(Outcome::Ok);
    }
    if let Some(sprint) = &a.keep_remote {
        let (ours, theirs) = crate::sync::keep_remote(&store, &remote, sprint)?;
        let kept = refs::sync_kept_contract(sprint, ours);
        let json_doc = json!({
            "schema": "rails-sync-keep/v1", "sprint": sprint, "remote": remote,
            "kept": theirs.to_string(), "superseded": ours.to_string(),
            "supersededRef": kept,
            "next": format!("git rails contract freeze {sprint} --bump"),
        });
        if a.json {
            crate::cli::print_json(&json_doc)?;
        } else {
            outln!("{sprint}: now at {remote}'s versions ({theirs}); this clone's chain is kept at {kept}");
            outln!("next: freeze this clone's content on top: git rails contract freeze {sprint} --bump");
        }
        return Ok(Outcome::Ok);
    }
    let mut progress = |line: &str| eprintln!("{prog}: {line}");
    let report = crate::sync::sync(
        &store,
        &crate::sync::Options {
            remote: &remote,
            attempts: 12,
        },
        &mut progress,
    )?;
    if a.json {
        crate::cli::print_json(&report)?;
    } else {
        let moved = report
            .refs
            .iter()
            .filter(|r| r.action != "up-to-date" && r.action != "ahead")
            .count();
        outln!(
            "synced with {remote}: {} ref(s) changed here, {} pushed ({} attempt(s))",
            moved,
            report.pushed.len(),
            report.attempts
        );
        for line in report.problem_lines(prog, &remote) {
            eprintln!("{line}");
        }
    }
    Ok(if report.needs_decision() {
        Outcome::Fail
    } else {
        Outcome::Ok
    })
}

pub(super) fn cmd_doctor(a: DoctorArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let remote = a
        .remote
        .clone()
        .unwrap_or_else(|| crate::sync::default_remote(&store));
    let report = crate::sync::doctor::run(&store, &remote)?;
    if a.json {
        crate::cli::print_json(&report)?;
    } else if report.findings.is_empty() {
        for n in &report.notices {
            outln!("notice: {n}");
        }
        outln!("no problems found");
    } else {
        for n in &report.notices {
            outln!("notice: {n}");
        }
        for f in &report.findings {
            outln!("{}: {}", f.kind, f.what);
            outln!("  fix: {}", f.fix);
        }
    }
    Ok(if report.findings.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Fail
    })
}
