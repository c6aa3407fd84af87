//! `git spar extend`: a stage's cap raised.

use super::*;

pub(super) fn cmd_extend(a: ExtendArgs) -> Result<Outcome> {
    let req = series::ExtendRequest {
        series: SeriesId::new(&a.series)?,
        stage: a.stage,
        by: a.by,
        cause: a.cause,
        reason: a.reason,
    };
    // Usage errors and refusals of G31 come before the repository is even opened.
    series::check_extension(&req)?;
    let store = Store::discover()?;
    let mut progress = |l: &str| eprintln!("{l}");
    let ext = series::extend(&store, &req, &mut progress)?;
    if a.json {
        crate::cli::print_json(&ext)?;
    } else {
        outln!(
            "spar: {} {} cap extended by {}",
            req.series,
            ext.stage,
            ext.by
        );
    }
    Ok(Outcome::Ok)
}
