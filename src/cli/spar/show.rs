//! `git spar show`: recorded rounds as text, JSON or SARIF.

use super::*;

pub(super) fn cmd_show(a: ShowArgs) -> Result<Outcome> {
    let format = output_format(a.format.as_deref(), a.json, &["text", "json", "sarif"])?;
    let store = Store::discover()?;
    let (series, shown) = view::show_target(&store, a.target.as_deref())?;
    if format == "sarif" {
        let mut views = Vec::new();
        for r in &shown {
            views.push(view::load(&store, &series, r)?);
        }
        crate::cli::print_json(&sarif::log(&views, None))?;
        return Ok(Outcome::Ok);
    }
    if format == "json" {
        crate::cli::print_json(&crate::spar::view::show_json(&store, &series, &shown)?)?;
        return Ok(Outcome::Ok);
    }
    let mut docs = Vec::new();
    for r in &shown {
        let round = spar::record::load_round(&store, &series, r)?;
        let findings = spar::record::load_findings(&store, &series, r)?;
        let triage = series::triage_in_force(&store, &series, r)?;
        docs.push((round, findings, triage));
    }
    {
        for (r, f, t) in &docs {
            out!("{}\n", crate::spar::summary::render_with_triage(r, f, t));
        }
    }
    Ok(Outcome::Ok)
}
