//! `git spar waive`: going on without a reviewer that did not complete, with the user's words.

use super::*;

pub(super) fn cmd_waive(a: WaiveArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let mut progress = |l: &str| eprintln!("{l}");
    let entry = series::waive(
        &store,
        &SeriesId::new(&a.series)?,
        &RoundName::named(&a.round),
        &a.reviewer,
        &a.user_quote,
        a.sign,
        &mut progress,
    )?;
    if a.json {
        crate::cli::print_json(&entry)?;
    } else {
        outln!("spar: {} {} {}: waived", a.series, a.round, a.reviewer);
    }
    Ok(Outcome::Ok)
}
