//! `git spar record`: a reviewer's result or a native subagent's transcript recorded into a round.

use super::*;

pub(super) fn cmd_record(a: RecordArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let mut progress = |l: &str| eprintln!("{l}");
    let input = match (a.result, a.transcript) {
        (Some(f), _) => round::RecordInput::Result(f),
        (None, Some(f)) => round::RecordInput::Transcript(f),
        (None, None) => {
            return Err(crate::error::Error::usage(
                "give --result F or --transcript F",
            ))
        }
    };
    let out = round::record_result(
        &store,
        &SeriesId::new(&a.series)?,
        &RoundName::named(&a.round),
        &a.reviewer,
        &input,
        &mut progress,
    )?;
    if a.json {
        crate::cli::print_json(&json!({"reviewer": out.reviewer, "findings": out.findings}))?;
    } else {
        outln!(
            "spar: {} {} {}: {}{} ({} finding{})",
            a.series,
            a.round,
            a.reviewer,
            out.reviewer.status,
            if out.reviewer.reason.is_empty() {
                String::new()
            } else {
                format!(": {}", out.reviewer.reason)
            },
            out.findings.len(),
            if out.findings.len() == 1 { "" } else { "s" }
        );
    }
    Ok(Outcome::Ok)
}
