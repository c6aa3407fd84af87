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
    };
    let out = series::gate(&store, &req)?;
    if format == "sarif" || format == "markdown" {
        // The rounds that can be read; one that cannot is among the gate's reasons.
        let views: Vec<_> = req
            .rounds
            .iter()
            .filter_map(|(s, r)| view::load(&store, s, r).ok())
            .collect();
        if format == "sarif" {
            crate::cli::print_json(&sarif::log(&views, Some(&out.document)))?;
        } else {
            out!(
                "{}",
                crate::report::spar::markdown(
                    &views,
                    &crate::report::spar::GateView {
                        passed: out.passed,
                        reasons: &out.reasons,
                        document: &out.document,
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
        let deferred = out.document["auto_deferred"].as_u64().unwrap_or(0);
        let _ = writeln!(text, "auto_deferred: {deferred}");
        if let Some(growth) = out.document["growth"].as_array() {
            for g in growth {
                let _ = writeln!(
                    text,
                    "growth {}:{}: {} finding(s), {} in check paths, {} outside",
                    g["series"].as_str().unwrap_or(""),
                    g["round"].as_str().unwrap_or(""),
                    g["findings"],
                    g["in_check_paths"],
                    g["outside_check_paths"]
                );
            }
        }
        out!("{text}");
    }
    Ok(if out.passed {
        Outcome::Ok
    } else {
        Outcome::Blocked
    })
}
