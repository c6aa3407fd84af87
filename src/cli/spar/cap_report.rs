//! `git spar cap-report`: the rounds counted against each stage's cap.

use super::*;

pub(super) fn cmd_cap_report(a: CapReportArgs) -> Result<Outcome> {
    if a.format != "md" && a.format != "json" {
        return Err(Error::usage(format!(
            "--format {:?} is not md or json",
            a.format
        )));
    }
    crate::spar::ids::SeriesId::check(&a.series)?;
    let store = Store::discover()?;
    if spar::record::series_tip(&store, &a.series)?.is_none() {
        return Err(
            Error::refused(format!("series {} does not exist", a.series))
                .hint("see `git spar list`"),
        );
    }
    let root = store.workdir()?.to_path_buf();
    let cfg = spar::config::Config::load(&spar::config::Env::from_process(root))?;
    let caps = series::stage_caps(&store, &cfg, &a.series)?;
    if a.format == "json" {
        crate::cli::print_json(&series::caps_json(&a.series, &caps))?;
    } else {
        out!("{}", series::render_caps_md(&a.series, &caps));
    }
    Ok(Outcome::Ok)
}
