//! `git spar cap-report`: the rounds counted against each stage's cap.

use super::*;

pub(super) fn cmd_cap_report(a: CapReportArgs) -> Result<Outcome> {
    if a.format != "md" && a.format != "json" {
        return Err(Error::usage(format!(
            "--format {:?} is not md or json",
            a.format
        )));
    }
    let series_id = SeriesId::new(&a.series)?;
    let store = Store::discover()?;
    let caps = series::cap_report(&store, &series_id)?;
    if a.format == "json" {
        crate::cli::print_json(&series::caps_json(&a.series, &caps))?;
    } else {
        out!("{}", series::render_caps_md(&a.series, &caps));
    }
    Ok(Outcome::Ok)
}
