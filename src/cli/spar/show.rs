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
    let (policy, decisions) = view::decisions(&store, &series)?;
    for (r, f, t) in &docs {
        let mut text = crate::spar::summary::render_with_triage(r, f, t);
        let made: Vec<_> = decisions.iter().filter(|d| d.round == r.round).collect();
        if !made.is_empty() {
            text.push_str("\ndecisions only a person can make (who made them):\n");
            for d in made {
                text.push_str(&format!("  {}\n", view::decision_line(d)));
            }
        }
        out!("{text}\n");
    }
    if !policy && !decisions.is_empty() {
        eprintln!("spar: notice: {}", series::NO_POLICY_DECISIONS);
    }
    Ok(Outcome::Ok)
}
