//! `git rails gate`: exit 0 when the sprint is done, 2 with each missing step. On the hot
//! path (see `HotCli` in the parent).

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
    let sprint =
        crate::contract::resolve_sprint(&store, a.sprint).map_err(|e| e.context(could_not))?;
    let commit = match &a.commit {
        Some(rev) => store
            .resolve_commit(rev)
            .map_err(|e| e.context(could_not))?,
        None => store.head_commit()?.ok_or_else(|| {
            Error::refused(format!("{could_not}: there is no commit to judge yet")).hint(
                "commit the work (`git add` and `git commit`), then run `git rails gate` again",
            )
        })?,
    };
    let mut report = crate::evidence::gate::evaluate(&store, &sprint, Judged::Commit(commit))
        .map_err(|e| e.context(could_not))?;
    let policy = crate::policy::Policy::load(&store, crate::policy::Source::Clone)
        .map_err(|e| e.context(could_not))?;
    crate::evidence::gate::judge_signer(&store, &mut report, policy.as_ref())
        .map_err(|e| e.context(could_not))?;
    if format == "markdown" {
        out!("{}", crate::report::rails::markdown(&report));
    } else if format == "json" {
        crate::cli::print_json(&report)?;
    } else if report.done {
        outln!(
            "gate passed: {} {} is done at {} ({} criteria surfaced, receipts in, none stale)",
            report.sprint,
            report.version,
            short(&commit.to_string()),
            report.criteria.len()
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
    if !a.json {
        for d in &report.dropped {
            outln!("{}", crate::evidence::gate::dropped_line(d));
        }
    }
    Ok(if report.done {
        Outcome::Ok
    } else {
        Outcome::Blocked
    })
}
