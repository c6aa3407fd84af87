//! `git spar config`: the effective configuration and where each value came from.

use super::*;

pub(super) fn cmd_config(a: ConfigArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let root = store.workdir()?.to_path_buf();
    let cfg = spar::config::Config::load(&spar::config::Env::from_process(root))?;
    if a.json {
        crate::cli::print_json(&cfg.effective_json())?;
    } else {
        out!("{}", cfg.render_text());
    }
    Ok(Outcome::Ok)
}
