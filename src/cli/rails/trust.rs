//! `git rails trust`: which signers' records this clone believes.

use super::*;

pub(super) fn cmd_trust(a: TrustArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let root = store.workdir()?.to_path_buf();
    let t = crate::pipeline::config::trust(&store, &root)?;
    if a.json {
        crate::cli::print_json(&t)?;
        return Ok(Outcome::Ok);
    }
    outln!(
        "{} {} (sha256 {}) for this clone",
        if t.already {
            "already trusted:"
        } else {
            "trusted"
        },
        t.path,
        &t.sha256[..12]
    );
    if t.runs.is_empty() {
        outln!("it names no command to run");
    }
    for (what, cmd) in &t.runs {
        outln!("  {what}: {cmd}");
    }
    Ok(Outcome::Ok)
}
