//! `git spar report`: the HTML report of rounds and their gate.

use super::*;

pub(super) fn cmd_report(a: ReportArgs) -> Result<Outcome> {
    crate::report::check_out_file(&a.html)?;
    let store = Store::discover()?;
    let req = series::GateRequest {
        rounds: series::gate_targets(&a.rounds)?,
        expect_head: None,
        out: None,
        policy_from: None,
    };
    let out = series::gate(&store, &req)?;
    let views = view::load_targets(&store, &req.rounds)?;
    let document = out.document_json();
    let page = crate::report::spar::html_report(
        &views,
        &crate::report::spar::GateView {
            passed: out.passed,
            reasons: &out.reasons,
            document: &document,
        },
    );
    crate::store::atomic_write(&a.html, page.as_bytes())?;
    outln!(
        "spar: wrote {} ({} round{}, gate {})",
        a.html.display(),
        views.len(),
        if views.len() == 1 { "" } else { "s" },
        if out.passed { "passed" } else { "blocked" }
    );
    Ok(Outcome::Ok)
}
