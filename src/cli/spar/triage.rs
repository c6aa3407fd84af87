//! `git spar triage`: a disposition for a finding.

use super::*;

pub(super) fn cmd_triage(a: TriageArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let req = series::TriageRequest {
        series: SeriesId::new(&a.series)?,
        round: RoundName::named(&a.round),
        finding: a.finding,
        disposition: a.disposition,
        of: a.of,
        evidence: a.evidence,
        to: a.to,
        user_quote: a.user_quote,
        failed_before: a.failed_before,
        passed_after: a.passed_after,
        commit: a.commit,
        sign: a.sign,
    };
    let mut progress = |l: &str| eprintln!("{l}");
    let entry = series::triage(&store, &req, &mut progress)?;
    if a.json {
        crate::cli::print_json(&entry)?;
    } else {
        outln!(
            "spar: {} {} {}: {}",
            req.series,
            req.round,
            req.finding,
            req.disposition
        );
    }
    Ok(Outcome::Ok)
}
