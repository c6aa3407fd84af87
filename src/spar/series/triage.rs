//! Triage: a disposition for a finding in its round's `ledger.jsonl`, checked against the
//! disposition table, and what the ledger says about a finding (in force, resolved through a
//! chain of duplicates).

use super::*;

/// One line of `ledger.jsonl`, as far as the gate and triage need it.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerEntry {
    pub finding: String,
    pub disposition: String,
    /// For `duplicate`: the finding it points to and its round.
    pub of: Option<(String, String)>,
}

/// Reads a round's ledger (an absent file is an empty ledger: old rounds without hardening).
pub(super) fn read_ledger(
    store: &Store,
    series: &SeriesId,
    round: &RoundName,
) -> std::result::Result<(Vec<u8>, Vec<LedgerEntry>), String> {
    let bytes = record::round_file(store, series, round, "ledger.jsonl")
        .map_err(|e| e.message)?
        .unwrap_or_default();
    let out = parse_ledger(&bytes, round)?;
    Ok((bytes, out))
}

/// The entries of a round's `ledger.jsonl` (`round` is the round it belongs to: a duplicate
/// without `of_round` points into it).
pub(crate) fn parse_ledger(
    bytes: &[u8],
    round: &str,
) -> std::result::Result<Vec<LedgerEntry>, String> {
    let lines = parse_jsonl(bytes, "ledger.jsonl")?;
    let mut out = Vec::new();
    for (i, v) in lines.iter().enumerate() {
        let (Some(finding), Some(disposition)) =
            (str_field(v, "finding"), str_field(v, "disposition"))
        else {
            return Err(format!(
                "ledger.jsonl entry {}: finding and disposition must be strings",
                i + 1
            ));
        };
        let of = str_field(v, "of").map(|of| {
            let of_round = str_field(v, "of_round").unwrap_or(round);
            (of_round.to_string(), of.to_string())
        });
        out.push(LedgerEntry {
            finding: finding.to_string(),
            disposition: disposition.to_string(),
            of,
        });
    }
    Ok(out)
}

/// What `git spar show` prints in a finding's triage column: the disposition in force (the
/// newest ledger entry for it; `duplicate of <round>:<id>` for a duplicate), per finding id.
/// A ledger that cannot be read is refused with the round named.
pub fn triage_in_force(
    store: &Store,
    series: &SeriesId,
    round: &RoundName,
) -> Result<HashMap<String, String>> {
    let (_, entries) = read_ledger(store, series, round)
        .map_err(|e| Error::refused(format!("{series}: round {round}: {e}")))?;
    let mut out = HashMap::new();
    for e in entries {
        let shown = match &e.of {
            Some((of_round, of)) if e.disposition == Disposition::Duplicate => {
                format!("duplicate of {of_round}:{of}")
            }
            _ => e.disposition.clone(),
        };
        out.insert(e.finding, shown);
    }
    Ok(out)
}

/// The findings and the entries in force (the newest per finding) of one round.
pub(super) struct RoundState {
    pub(super) findings: Rc<Vec<Finding>>,
    pub(super) in_force: HashMap<String, LedgerEntry>,
}

/// The rounds of a series read on demand, so a duplicate may point into a round the gate list
/// does not name.
pub(super) struct Series<'a> {
    pub(super) store: &'a Store,
    pub(super) series: SeriesId,
    pub(super) rounds: HashMap<String, std::result::Result<RoundState, String>>,
}

impl<'a> Series<'a> {
    pub(super) fn new(store: &'a Store, series: &SeriesId) -> Self {
        Series {
            store,
            series: series.clone(),
            rounds: HashMap::new(),
        }
    }

    pub(super) fn state(&mut self, round: &str) -> &std::result::Result<RoundState, String> {
        let (store, series) = (self.store, self.series.clone());
        self.rounds.entry(round.to_string()).or_insert_with(|| {
            let round = &RoundName::named(round);
            let findings =
                Rc::new(record::load_findings(store, &series, round).map_err(|e| e.message)?);
            let (_, entries) = read_ledger(store, &series, round)?;
            let mut in_force = HashMap::new();
            for e in entries {
                in_force.insert(e.finding.clone(), e);
            }
            Ok(RoundState { findings, in_force })
        })
    }

    /// Whether a finding no longer blocks: a class that never blocks, a resolving disposition,
    /// or a duplicate whose chain ends in a resolved finding. A cycle or a missing target
    /// stays open.
    pub(super) fn resolved(
        &mut self,
        round: &str,
        id: &str,
        seen: &mut Vec<(String, String)>,
    ) -> bool {
        let key = (round.to_string(), id.to_string());
        if seen.contains(&key) {
            return false;
        }
        seen.push(key);
        let Ok(state) = self.state(round) else {
            return false;
        };
        let Some(f) = state.findings.iter().find(|f| f.id == id) else {
            return false;
        };
        let blocking = f.class.blocks();
        match state.in_force.get(id).cloned() {
            None => !blocking,
            Some(e) => match Disposition::parse(&e.disposition) {
                Some(Disposition::Duplicate) => match e.of {
                    Some((r, of)) => self.resolved(&r, &of, seen),
                    None => false,
                },
                Some(_) => true,
                None => !blocking,
            },
        }
    }
}

/// What `git spar triage` was asked. Text options are as given; they are trimmed here.
#[derive(Debug, Clone)]
pub struct TriageRequest {
    pub series: SeriesId,
    pub round: RoundName,
    pub finding: String,
    pub disposition: String,
    pub of: Option<String>,
    pub evidence: Option<String>,
    pub to: Option<String>,
    pub user_quote: Option<String>,
    pub failed_before: Option<String>,
    pub passed_after: Option<String>,
    pub commit: Option<String>,
    /// Write the record commit signed (`--sign`; also when `commit.gpgSign` is true).
    pub sign: bool,
}

/// Records a disposition in the round's `ledger.jsonl` (one commit). Every check happens
/// under the series lock on records read after taking it; any refusal writes nothing.
pub fn triage(store: &Store, req: &TriageRequest, progress: &mut dyn FnMut(&str)) -> Result<Value> {
    let series = &req.series;
    let Some((disposition, (classes, needs))) =
        Disposition::parse(&req.disposition).and_then(|d| Some((d, d.rule()?)))
    else {
        return Err(Error::refused(format!(
            "disposition {:?} is not one of {}",
            req.disposition,
            Disposition::TRIAGE.map(Disposition::as_str).join(", ")
        )));
    };
    let given: Vec<(&str, Option<String>)> = vec![
        ("--of", text(&req.of)),
        ("--evidence", text(&req.evidence)),
        ("--to", text(&req.to)),
        ("--user-quote", text(&req.user_quote)),
        ("--failed-before", text(&req.failed_before)),
        ("--passed-after", text(&req.passed_after)),
    ];
    let missing: Vec<&str> = needs
        .iter()
        .copied()
        .filter(|n| given.iter().any(|(k, v)| k == n && v.is_none()))
        .collect();
    if !missing.is_empty() {
        return Err(Error::refused(format!(
            "{} needs {} (empty after trimming counts as not given)",
            req.disposition,
            missing.join(" and ")
        )));
    }
    // An option the disposition does not take would be recorded nowhere: refuse it rather
    // than silently drop what the caller meant to say.
    let extra: Vec<&str> = given
        .iter()
        .filter(|(k, v)| v.is_some() && !needs.contains(k))
        .map(|(k, _)| *k)
        .chain((req.commit.is_some() && disposition != Disposition::Fixed).then_some("--commit"))
        .collect();
    if !extra.is_empty() {
        return Err(Error::refused(format!(
            "{} does not take {}",
            req.disposition,
            extra.join(", ")
        )));
    }
    let commit = match &req.commit {
        Some(rev) => Some(
            store
                .resolve_commit(rev)
                .map_err(|e| e.context("--commit"))?
                .to_string(),
        ),
        None => None,
    };

    let _lock = lock_series(store, series, progress)?;
    // Re-read under the lock (G33).
    record::load_round(store, series, &req.round)?;
    let findings = record::load_findings(store, series, &req.round)?;
    let Some(finding) = findings.iter().find(|f| f.id == req.finding) else {
        return Err(Error::refused(format!(
            "{series}: round {} has no finding {:?}",
            req.round, req.finding
        ))
        .hint(format!("see `git spar show {series}:{}`", req.round)));
    };
    if !finding.class.known().is_some_and(|c| classes.contains(&c)) {
        let allowed: Vec<&str> = classes.iter().map(|c| c.as_str()).collect();
        return Err(Error::refused(format!(
            "{} is a {}; {} is allowed for {} only",
            finding.id,
            finding.class,
            req.disposition,
            allowed.join(", ")
        )));
    }
    let (ledger_bytes, _) = read_ledger(store, series, &req.round)
        .map_err(|e| Error::refused(format!("{series}: round {}: {e}", req.round)))?;
    let mut entry = json!({
        "finding": finding.id,
        "disposition": req.disposition,
    });
    if let Some(of) = text(&req.of) {
        let (of_round, of_id) = resolve_of(store, series, &req.round, &of)?;
        if req.round == of_round && of_id == finding.id {
            return Err(Error::refused(format!(
                "{} cannot be a duplicate of itself",
                finding.id
            )));
        }
        entry["of"] = json!(of_id);
        entry["of_round"] = json!(of_round);
    }
    for (key, value) in &given {
        if let (Some(v), false) = (value, *key == "--of") {
            entry[key.trim_start_matches("--").replace('-', "_")] = json!(v);
        }
    }
    if let Some(c) = commit {
        entry["commit"] = json!(c);
    }
    entry["at"] = json!(now());
    let mut bytes = ledger_bytes;
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    bytes.extend(record::jsonl(std::slice::from_ref(&entry)));
    let tip = record::series_tip(store, series)?;
    record::write_round_as(
        store,
        series,
        &req.round,
        tip,
        vec![("ledger.jsonl".to_string(), bytes)],
        &format!(
            "spar {series} {}: triage {} {}",
            req.round, finding.id, req.disposition
        ),
        &[("Spar-Finding", finding.id.clone())],
        signs(store, req.sign),
    )?
    .ok_or_else(|| moved(series))?;
    Ok(entry)
}

/// `--of`: a finding id of the same round as written (G30), or `<round>:<id>` for a finding of
/// another round of the same series.
pub(super) fn resolve_of(
    store: &Store,
    series: &SeriesId,
    round: &RoundName,
    of: &str,
) -> Result<(String, String)> {
    let same = record::load_findings(store, series, round)?;
    if same.iter().any(|f| f.id == of) {
        return Ok((round.to_string(), of.to_string()));
    }
    if let Some((r, id)) = of.split_once(':') {
        if let Some(r) = record::round_names(store, series)?
            .into_iter()
            .find(|n| *n == *r)
        {
            let other = record::load_findings(store, series, &r)?;
            if other.iter().any(|f| f.id == id) {
                return Ok((r.to_string(), id.to_string()));
            }
        }
    }
    Err(Error::refused(format!(
        "--of {of:?}: no such finding in {series} (name one of round {round}, or <round>:<id>)"
    )))
}
