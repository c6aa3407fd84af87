//! Waivers: going on without a reviewer of a round that did not complete, with the user's
//! words (`waivers.jsonl`, G30, G32).

use super::*;

/// Reads a round's waivers (G32): absent means none; every line needs reviewer, preset and a
/// non-empty user_quote.
pub(super) fn read_waivers(
    store: &Store,
    series: &SeriesId,
    round: &RoundName,
) -> std::result::Result<(Vec<u8>, Vec<String>), String> {
    let bytes = record::round_file(store, series, round, "waivers.jsonl")
        .map_err(|e| e.message)?
        .unwrap_or_default();
    let names = parse_waivers(&bytes)?;
    Ok((bytes, names))
}

/// The reviewers a round's `waivers.jsonl` waives.
pub(crate) fn parse_waivers(bytes: &[u8]) -> std::result::Result<Vec<String>, String> {
    let lines = parse_jsonl(bytes, "waivers.jsonl")?;
    let mut names = Vec::new();
    for (i, v) in lines.iter().enumerate() {
        let quote = str_field(v, "user_quote").map(str::trim).unwrap_or("");
        match (str_field(v, "reviewer"), str_field(v, "preset")) {
            (Some(r), Some(_)) if !quote.is_empty() => names.push(r.to_string()),
            _ => {
                return Err(format!(
                    "waivers.jsonl line {}: needs reviewer, preset and a non-empty user_quote",
                    i + 1
                ))
            }
        }
    }
    Ok(names)
}

/// Waives a reviewer of a round that did not complete, with the user's words (G30, G32). The
/// record commit is signed when `sign` or `commit.gpgSign` says so: under a signing policy only
/// a waiver a person signed counts at the gate ([`super::decisions`]).
pub fn waive(
    store: &Store,
    series: &SeriesId,
    round: &RoundName,
    reviewer: &str,
    user_quote: &Option<String>,
    sign: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Value> {
    let Some(quote) = text(user_quote) else {
        return Err(Error::refused(
            "waive needs --user-quote: the user's words agreeing to go on without this reviewer",
        ));
    };
    let _lock = lock_series(store, series, progress)?;
    let r = record::load_round(store, series, round)?;
    let Some(rev) = r.reviewers.iter().find(|x| x.name == reviewer) else {
        let names: Vec<&str> = r.reviewers.iter().map(|x| x.name.as_str()).collect();
        return Err(Error::refused(format!(
            "{series}: round {round} has no required reviewer {reviewer:?} (its reviewers: {})",
            names.join(", ")
        )));
    };
    if rev.status == Status::Completed {
        return Err(Error::refused(format!(
            "{series}: round {round}: {reviewer} completed; only a reviewer that did not complete can be waived"
        )));
    }
    let (mut bytes, _) = read_waivers(store, series, round)
        .map_err(|e| Error::refused(format!("{series}: round {round}: {e}")))?;
    let entry = json!({
        "reviewer": rev.name,
        "preset": rev.preset,
        "status": rev.status,
        "user_quote": quote,
        "at": now(),
    });
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    bytes.extend(record::jsonl(std::slice::from_ref(&entry)));
    let tip = record::series_tip(store, series)?;
    record::write_round_as(
        store,
        series,
        round,
        tip,
        vec![("waivers.jsonl".to_string(), bytes)],
        &format!("spar {series} {round}: waive {reviewer}"),
        &[("Spar-Reviewer", reviewer.to_string())],
        signs(store, sign),
    )?
    .ok_or_else(|| moved(series))?;
    Ok(entry)
}
