//! `git spar gate`: exit 0 when the listed rounds let the change go on, 2 with the reasons.

use super::*;

pub(super) fn cmd_gate(a: GateArgs) -> Result<Outcome> {
    let format = output_format(
        a.format.as_deref(),
        a.json,
        &["text", "json", "sarif", "markdown"],
    )?;
    let store = Store::discover()?;
    let req = series::GateRequest {
        rounds: series::gate_targets(&a.rounds)?,
        expect_head: a.expect_head,
        out: a.out,
        policy_from: a.policy_from,
    };
    let out = series::gate(&store, &req)?;
    if format == "sarif" || format == "markdown" {
        let document = out.document_json();
        // The rounds that can be read; one that cannot is among the gate's reasons.
        let views: Vec<_> = req
            .rounds
            .iter()
            .filter_map(|(s, r)| view::load(&store, s, r).ok())
            .collect();
        if format == "sarif" {
            crate::cli::print_json(&sarif::log(&views, Some(&document)))?;
        } else {
            out!(
                "{}",
                crate::report::spar::markdown(
                    &views,
                    &crate::report::spar::GateView {
                        passed: out.passed,
                        reasons: &out.reasons,
                        document: &document,
                    }
                )
            );
        }
    } else if format == "json" {
        crate::cli::print_json(&out.document)?;
    } else {
        // One write: a gate over hundreds of rounds prints a line for each.
        use std::fmt::Write as _;
        let mut text = String::new();
        let verdict = if out.passed { "passed" } else { "blocked" };
        let _ = writeln!(text, "spar gate: {verdict}");
        for r in &out.reasons {
            let _ = writeln!(text, "{r}");
        }
        let _ = writeln!(text, "auto_deferred: {}", out.document.auto_deferred);
        for g in &out.document.growth {
            let _ = writeln!(
                text,
                "growth {}:{}: {} finding(s), {} in check paths, {} outside",
                g.series, g.round, g.findings, g.in_check_paths, g.outside_check_paths
            );
        }
        for d in &out.document.decisions {
            let _ = writeln!(text, "decision {}:{}", d.series, view::decision_line(d));
        }
        out!("{text}");
    }
    if let Some(n) = &out.document.notice {
        eprintln!("spar: notice: {n}");
    }
    Ok(if out.passed {
        Outcome::Ok
    } else {
        Outcome::Blocked
    })
}
