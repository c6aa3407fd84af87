//! `git rails gate`: exit 0 when the sprint is done, 2 with each missing step. On the hot
//! path (see `HotCli` in the parent). With `--commit`/`--since` and no sprint named, every
//! sprint the commits name is judged (`contract::resolve_for_commit`), the worst exit wins.

use super::*;
use crate::evidence::gate::Judged;

pub(super) fn cmd_gate(a: GateArgs) -> Result<Outcome> {
    let format = match a
        .format
        .as_deref()
        .unwrap_or(if a.json { "json" } else { "text" })
    {
        f @ ("text" | "json" | "markdown") => f.to_string(),
        f => {
            return Err(Error::usage(format!(
                "--format {f:?} is not one of text, json, markdown"
            )))
        }
    };
    let could_not = "the verification gate could not run; completion remains blocked";
    let store = Store::discover().map_err(|e| e.context(could_not))?;
    let (commit, since) = judged_commit(&store, a.commit.as_deref(), a.since.as_deref())
        .map_err(|e| e.context(could_not))?;
    let named = a.commit.is_some() || since.is_some();
    let (sprints, from_commits) =
        crate::contract::resolve_for_commit(&store, a.sprint, named.then_some(commit), since)
            .map_err(|e| e.context(could_not))?;
    let policy = crate::policy::Policy::load(&store, crate::policy::Source::Clone)
        .map_err(|e| e.context(could_not))?;
    let mut reports = Vec::new();
    for sprint in &sprints {
        let mut report = crate::evidence::gate::evaluate(&store, sprint, Judged::Commit(commit))
            .map_err(|e| e.context(could_not))?;
        crate::evidence::gate::judge_signer(&store, &mut report, policy.as_ref())
            .map_err(|e| e.context(could_not))?;
        reports.push(report);
    }
    let done = reports.iter().all(|r| r.done);
    if format == "json" && from_commits {
        // One entry per sprint the commits name.
        crate::cli::print_json(&json!({
            "schema": "rails-gate-list/v1",
            "commit": commit.to_string(),
            "done": done,
            "sprints": reports,
        }))?;
    } else {
        for report in &reports {
            print_one(report, &format, commit)?;
            if !a.json {
                for d in &report.dropped {
                    outln!("{}", crate::evidence::gate::dropped_line(d));
                }
            }
        }
    }
    // The worst of them: blocked when any is.
    Ok(if done { Outcome::Ok } else { Outcome::Blocked })
}

/// The commit judged (`--commit`, else HEAD) and the base of `--since`.
pub(super) fn judged_commit(
    store: &Store,
    commit: Option<&str>,
    since: Option<&str>,
) -> Result<(crate::store::ObjectId, Option<crate::store::ObjectId>)> {
    let id = match commit {
        Some(rev) => store.resolve_commit(rev)?,
        None => store.head_commit()?.ok_or_else(|| {
            Error::refused("there is no commit to judge yet")
                .hint("commit the work (`git add` and `git commit`), then run the command again")
        })?,
    };
    let since = since.map(|b| store.resolve_commit(b)).transpose()?;
    Ok((id, since))
}

fn print_one(
    report: &crate::evidence::gate::Report,
    format: &str,
    commit: crate::store::ObjectId,
) -> Result<()> {
    if format == "markdown" {
        out!("{}", crate::report::rails::markdown(report));
    } else if format == "json" {
        crate::cli::print_json(report)?;
    } else if report.done {
        let blocking = report.criteria.iter().filter(|c| c.blocking).count();
        let guards = report
            .criteria
            .iter()
            .filter(|c| c.blocking && c.proof == crate::evidence::Proof::Guard)
            .count();
        outln!(
            "gate passed: {} {} is done at {} ({blocking} blocking criteria proven{}, receipts in, none stale)",
            report.sprint,
            report.version,
            short(&commit.to_string()),
            if guards == 0 {
                String::new()
            } else {
                format!(
                    ", {guards} of them {}",
                    if guards == 1 {
                        "a regression guard"
                    } else {
                        "regression guards"
                    }
                )
            }
        );
    } else {
        outln!(
            "gate blocked: {} {} is not done at {} ({} step{} missing)",
            report.sprint,
            report.version,
            short(&commit.to_string()),
            report.missing.len(),
            if report.missing.len() == 1 { "" } else { "s" }
        );
        for m in &report.missing {
            outln!("- {} {}: {}", m.criterion, m.reason, m.command);
        }
    }
    if format != "markdown" && format != "json" {
        for m in &report.not_blocking {
            outln!(
                "- {} (non-blocking, not blocking the gate) {}: {}",
                m.criterion,
                m.reason,
                m.command
            );
        }
    }
    Ok(())
}
