//! `git spar list`: the series and their rounds.

use super::*;

pub(super) fn cmd_list(a: ListArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let rows = spar::record::series_rounds(&store)?;
    if a.json {
        crate::cli::print_json(&json!({
            "schema": "spar-list/v1",
            "series": rows.iter().map(|(s, r)| json!({"series": s, "rounds": r})).collect::<Vec<_>>(),
        }))?;
    } else if rows.is_empty() {
        eprintln!("spar: no series yet; run a round with `git spar run --base <rev>`");
    } else {
        for (s, r) in rows {
            outln!("{:<24} {}", s.as_str(), r.join(" "));
        }
    }
    Ok(Outcome::Ok)
}
