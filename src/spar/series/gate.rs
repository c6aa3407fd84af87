//! The gate: whether the listed rounds let the change go on, decided from the rounds' records
//! and the series' history; `gate --out` (G28).

use super::*;
use crate::policy::{Policy, Source as PolicySource};

/// The schema of the file `git spar gate --out` writes.
pub const GATE_SCHEMA: &str = "review-gate/v1";

/// What `git spar gate` was asked.
#[derive(Debug, Clone, Default)]
pub struct GateRequest {
    /// The rounds in the order given (see [`gate_targets`]).
    pub rounds: Vec<(SeriesId, RoundName)>,
    pub expect_head: Option<String>,
    pub out: Option<PathBuf>,
    /// Read the signing policy from this revision (CI: the pull request's base) instead of
    /// HEAD's `.rails/policy.toml`; git configuration still only tightens it.
    pub policy_from: Option<String>,
}

/// The rounds a gate is asked about, each given as `<series>:<round>`: refused when there is
/// none, then when one is not `<series>:<round>` (usage errors, in that order). Where a command,
/// a tool or a hook names the rounds, this is the one check of them.
pub fn gate_targets(given: &[String]) -> Result<Vec<(SeriesId, RoundName)>> {
    if given.is_empty() {
        return Err(no_rounds());
    }
    // A list names one series over and over: its name is checked once.
    let mut out: Vec<(SeriesId, RoundName)> = Vec::with_capacity(given.len());
    for t in given {
        let same = out.last().and_then(|(last, _)| {
            let (s, r) = t.split_once(':')?;
            (s == last.as_str() && !r.is_empty()).then(|| (last.clone(), RoundName::named(r)))
        });
        out.push(match same {
            Some(target) => target,
            None => parse_target(t)?,
        });
    }
    Ok(out)
}

fn no_rounds() -> Error {
    Error::usage("name at least one round as <series>:<round>")
}

/// The gate's decision and everything it reports.
#[derive(Debug, Clone)]
pub struct GateOutcome {
    pub passed: bool,
    pub document: GateDocument,
    pub reasons: Vec<String>,
}

impl GateOutcome {
    /// The document as JSON, for the reports that read it as such.
    pub fn document_json(&self) -> Value {
        serde_json::to_value(&self.document).unwrap_or(Value::Null)
    }
}

/// The decision document (`git spar gate --json`, `--out`), field by field in the order it is
/// printed. Typed, so a kept decision is read without building a JSON tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateDocument {
    pub schema: String,
    pub result: String,
    pub reasons: Vec<String>,
    pub rounds: Vec<String>,
    pub head: Option<String>,
    pub expect_head: Option<String>,
    pub open_findings: usize,
    pub auto_deferred: usize,
    pub growth: Vec<Growth>,
    pub standpoints_uncovered: Vec<String>,
    pub previous_gate_digest: Option<String>,
    pub at: Option<String>,
    /// The decisions only a person can make in the listed rounds, with who made each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<Decision>,
    /// Said when decisions counted without a signing policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// How many findings one listed round has, inside and outside the check paths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Growth {
    pub series: String,
    pub round: String,
    pub stage: String,
    pub findings: u64,
    pub in_check_paths: u64,
    pub outside_check_paths: u64,
}

/// G28 for `gate --out`: inside any git repository the file must be ignored by every
/// repository around it; an existing file must be a previous gate file, whose digest is kept.
pub(super) fn check_gate_out(
    out: &Path,
    listed: &[(SeriesId, RoundName)],
) -> Result<(PathBuf, Option<String>)> {
    let abs = crate::spar::absolute(out)?;
    let shown = out.display();
    let previous = match std::fs::symlink_metadata(&abs) {
        Err(_) => None,
        Ok(m) if !m.is_file() => {
            return Err(Error::refused(format!(
                "--out {shown}: exists and is not a regular file"
            )))
        }
        Ok(_) => {
            let bytes = std::fs::read(&abs).ctx(format!("reading {shown}"))?;
            let is_gate = serde_json::from_slice::<Value>(&bytes)
                .ok()
                .is_some_and(|v| v.get("schema").and_then(Value::as_str) == Some(GATE_SCHEMA));
            if !is_gate {
                return Err(Error::refused(format!(
                    "--out {shown}: exists and is not a {GATE_SCHEMA} file"
                ))
                .hint("name a new file, or a gate file written before"));
            }
            Some(sha256_hex(&bytes))
        }
    };
    let mut dir = abs.parent().map(Path::to_path_buf);
    while let Some(d) = dir {
        // Not inside the folder of a listed round (a round exported with `run --out`).
        if let Ok(bytes) = std::fs::read(d.join("round.json")) {
            if let Ok(r) = serde_json::from_slice::<Round>(&bytes) {
                if listed.iter().any(|(s, n)| *s == r.series && *n == r.round) {
                    return Err(Error::refused(format!(
                        "--out {shown}: inside the folder of round {}:{}",
                        r.series, r.round
                    )));
                }
            }
        }
        if d.join(".git").exists() {
            let rel = abs.strip_prefix(&d).unwrap_or(&abs);
            match Store::ignores(&d, rel.as_os_str())? {
                Some(true) => {}
                Some(false) => {
                    return Err(Error::refused(format!(
                        "--out {shown}: it is inside the git repository {} and not ignored there (or tracked)",
                        d.display()
                    ))
                    .hint("choose a file outside the repository, or one its .gitignore ignores"))
                }
                None => {
                    return Err(Error::refused(format!(
                        "--out {shown}: git cannot tell whether {} ignores it",
                        d.display()
                    )))
                }
            }
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    Ok((abs, previous))
}

/// Decides the gate over the listed rounds. Never locks (G33): a record that cannot be read,
/// e.g. one being written, is a blocked reason.
pub fn gate(store: &Store, req: &GateRequest) -> Result<GateOutcome> {
    if req.rounds.is_empty() {
        return Err(no_rounds());
    }
    let targets = &req.rounds;
    let out = match &req.out {
        Some(o) => Some(check_gate_out(o, targets)?),
        None => None,
    };
    let mut decided = decide(store, req, targets)?;
    // Who made each person's decision: the policy is read here, the decision above is the
    // records' alone.
    let policy = match &req.policy_from {
        Some(rev) => {
            let at = store
                .resolve_commit(rev)
                .map_err(|e| e.context("--policy-from"))?;
            Policy::load(store, PolicySource::At(at))?
        }
        None => Policy::load(store, PolicySource::Clone)?,
    };
    weigh(store, targets, policy.as_ref(), &mut decided)?;
    let (passed, reasons, mut document) = decided;
    document.at = Some(now());
    if let Some((path, previous)) = out {
        document.previous_gate_digest = previous;
        store::atomic_write(&path, &record::pretty(&document))?;
    }
    Ok(GateOutcome {
        passed,
        document,
        reasons,
    })
}

pub(super) type Decided = (bool, Vec<String>, GateDocument);

/// The decision document from what the gate found.
#[allow(clippy::too_many_arguments)]
fn finish_decision(
    targets: &[(SeriesId, RoundName)],
    reasons: Vec<String>,
    newest_head: Option<String>,
    expect: Option<String>,
    open_count: usize,
    auto_deferred: usize,
    growth: Vec<Growth>,
    uncovered: Vec<String>,
) -> Decided {
    // One reason per line, whatever a reviewer's claim or an error message holds.
    let reasons: Vec<String> = reasons
        .into_iter()
        .map(|r| r.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let passed = reasons.is_empty();
    let document = GateDocument {
        schema: GATE_SCHEMA.to_string(),
        result: if passed { "passed" } else { "blocked" }.to_string(),
        reasons: reasons.clone(),
        rounds: targets.iter().map(|(s, r)| format!("{s}:{r}")).collect(),
        head: newest_head,
        expect_head: expect,
        open_findings: open_count,
        auto_deferred,
        growth,
        standpoints_uncovered: uncovered,
        previous_gate_digest: None,
        at: None,
        decisions: Vec::new(),
        notice: None,
    };
    (passed, reasons, document)
}

/// The gate's decision, without the time it was asked at: from each named series' view at its
/// tip ([`SeriesView`]: every round's part, the round names, the history rule's findings).
fn decide(store: &Store, req: &GateRequest, targets: &[(SeriesId, RoundName)]) -> Result<Decided> {
    let mut series_names: Vec<&SeriesId> = targets.iter().map(|(s, _)| s).collect();
    series_names.sort();
    series_names.dedup();
    let views: HashMap<&SeriesId, std::result::Result<SeriesView, String>> = series_names
        .iter()
        .map(|s| (*s, SeriesView::at_tip(store, s).map_err(|e| e.message)))
        .collect();

    let mut reasons: Vec<String> = Vec::new();
    // (order, part) of each listed round that could be read.
    let mut listed: Vec<(usize, std::borrow::Cow<'_, Part>)> = Vec::new();
    for (i, (s, r)) in targets.iter().enumerate() {
        let p = match &views[s] {
            Ok(v) => v.part(store, s, r.as_str()),
            Err(e) => {
                reasons.push(format!("{s}:{r}: cannot be read: {e}"));
                continue;
            }
        };
        if let Some(e) = &p.round_error {
            reasons.push(format!("{s}:{r}: cannot be read: {e}"));
            continue;
        }
        if p.dry_run {
            reasons.push(format!("{s}:{r}: is a dry run; no reviewer ran"));
            continue;
        }
        match &p.stopped {
            Ok(true) => {
                reasons.push(format!(
                    "{s}:{r}: stopped before recording findings (counts as a dry run)"
                ));
                continue;
            }
            Ok(false) => {}
            Err(e) => {
                reasons.push(format!("{s}:{r}: cannot be read: {e}"));
                continue;
            }
        }
        if let Some(e) = &p.findings_error {
            reasons.push(format!("{s}:{r}: cannot be read: {e}"));
            continue;
        }
        listed.push((i, p));
    }

    // Every recorded round of each named series must be in the list.
    let wanted: std::collections::HashSet<(&str, &str)> = targets
        .iter()
        .map(|(s, r)| (s.as_str(), r.as_str()))
        .collect();
    for s in &series_names {
        let view = match &views[*s] {
            Ok(v) => v,
            Err(e) => {
                reasons.push(format!("{s}: cannot be read: {e}"));
                continue;
            }
        };
        for n in view.names() {
            if wanted.contains(&(s.as_str(), n.as_str())) {
                continue;
            }
            let p = view.part(store, s, n);
            let skip = p.round_error.is_none() && (p.dry_run || p.stopped == Ok(true));
            if !skip {
                reasons.push(format!(
                    "{s}: round {n} of the series is not in the gate list"
                ));
            }
        }
    }

    // A history that replaced a completed reviewer's result (a commit written by hand: `git
    // spar record` refuses it) blocks, whatever the tip says now.
    for s in &series_names {
        match &views[*s] {
            Ok(v) => match v.history() {
                Ok(found) => reasons.extend(found.iter().cloned()),
                Err(e) => reasons.push(format!("{s}: its history cannot be read: {e}")),
            },
            Err(e) => reasons.push(format!("{s}: cannot be read: {e}")),
        }
    }

    // The newest listed round of each stage: every reviewer completed or waived.
    let mut newest: BTreeMap<(&str, &str), &Part> = BTreeMap::new();
    for (_, p) in &listed {
        let key = (p.series.as_str(), p.stage.as_str());
        let later = newest
            .get(&key)
            .is_none_or(|n| RoundName::number_of(&p.round) >= RoundName::number_of(&n.round));
        if later {
            newest.insert(key, p);
        }
    }
    for p in newest.values() {
        // Where its round.json says it is.
        let (s, r) = (&p.series, &p.round);
        if let Some(e) = &p.waivers_error {
            reasons.push(format!("{s}:{r}: {e}"));
        }
        for (name, status) in &p.unwaived {
            reasons.push(format!(
                "{s}:{r}: required reviewer {name} is {status} and not waived"
            ));
        }
    }

    // Open blocking findings, duplicates followed to their end.
    let mut chains: HashMap<String, Series<'_>> = HashMap::new();
    let mut open_count = 0usize;
    for (_, p) in &listed {
        let (s, r) = (&p.series, &p.round);
        if let Some(e) = &p.ledger_error {
            reasons.push(format!("{s}:{r}: {e}"));
            continue;
        }
        for (id, class, claim, dup) in &p.open {
            let open = match dup {
                None => true,
                Some((to, of)) => {
                    let view = chains
                        .entry(s.clone())
                        .or_insert_with(|| Series::new(store, &SeriesId::recorded(s)));
                    !view.resolved(to, of, &mut vec![(r.clone(), id.clone())])
                }
            };
            if open {
                open_count += 1;
                reasons.push(format!("{s}:{r}: {id} ({class}) is open: {claim}"));
            }
        }
    }

    // The change must not have moved after review (G27).
    let newest_head = listed
        .iter()
        .max_by(|a, b| a.1.started_at.cmp(&b.1.started_at).then(a.0.cmp(&b.0)))
        .map(|(_, p)| p.head.clone());
    let mut expect = None;
    if let Some(rev) = &req.expect_head {
        match store.resolve_commit(rev) {
            Err(e) => reasons.push(format!("--expect-head {rev:?}: {}", e.message)),
            Ok(id) => {
                let id = id.to_string();
                expect = Some(id.clone());
                if let Some(h) = &newest_head {
                    if *h != id {
                        reasons.push(format!(
                            "--expect-head {rev} is {id}, but the newest round reviewed {h}: the change moved after review"
                        ));
                    }
                }
            }
        }
    }

    let auto_deferred: u64 = listed.iter().map(|(_, p)| p.auto_deferred).sum();
    let growth: Vec<Growth> = listed
        .iter()
        .map(|(_, p)| Growth {
            series: p.series.clone(),
            round: p.round.clone(),
            stage: p.stage.clone(),
            findings: p.findings,
            in_check_paths: p.in_check_paths,
            outside_check_paths: p.findings - p.in_check_paths,
        })
        .collect();
    let mut uncovered: Vec<String> = listed
        .iter()
        .flat_map(|(_, p)| p.uncovered.iter().cloned())
        .collect();
    uncovered.sort();
    uncovered.dedup();
    Ok(finish_decision(
        targets,
        reasons,
        newest_head,
        expect,
        open_count,
        auto_deferred as usize,
        growth,
        uncovered,
    ))
}
