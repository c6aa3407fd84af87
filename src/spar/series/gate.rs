//! The gate: whether the listed rounds let the change go on, decided from the rounds' gate
//! facts or, when those cannot be trusted, from every record; `gate --out` (G28).

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

/// One listed round that could be read.
pub(super) struct Listed {
    pub(super) round: Round,
    pub(super) findings: Rc<Vec<Finding>>,
    pub(super) order: usize,
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
    // The decision is a function of the series tips, the list and --expect-head: a gate asked
    // again (every push) reads one small file instead of every round.
    let cache = GateCache::new(store, targets, req.expect_head.as_deref());
    let mut decided = match cache.as_ref().and_then(|c| c.read()) {
        Some(hit) => hit,
        None => {
            let decided = decide(store, req, targets)?;
            if let Some(c) = &cache {
                c.write(&decided);
            }
            decided
        }
    };
    // Who made each person's decision is judged after the kept decision: the policy is not
    // part of the records the cache is keyed by.
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

/// The gate's decision over the listed rounds, without the time it was asked at: from the
/// rounds' gate facts ([`facts::view`]), or by reading every record when a listed round names
/// another series or round inside its `round.json` than where it is (only a hand-made record
/// does), or when the facts cannot be read.
pub(super) fn decide(
    store: &Store,
    req: &GateRequest,
    targets: &[(SeriesId, RoundName)],
) -> Result<Decided> {
    let mut views: BTreeMap<String, facts::View> = BTreeMap::new();
    for (s, _) in targets {
        if views.contains_key(s.as_str()) {
            continue;
        }
        match facts::view(store, s) {
            Ok(v) => {
                views.insert(s.to_string(), v);
            }
            Err(_) => return decide_reading_records(store, req, targets),
        }
    }
    let odd = targets.iter().any(|(s, r)| {
        views[s.as_str()]
            .parts
            .get(r.as_str())
            .is_some_and(|p| p.elsewhere)
    });
    if odd {
        return decide_reading_records(store, req, targets);
    }
    // The duplicates left open by their own round, followed to their end through the facts
    // of the rounds they point into (rare: only those rounds are derived).
    let mut still_open: HashMap<(String, String, String), bool> = HashMap::new();
    let mut full: HashMap<(String, String), Option<facts::RoundFacts>> = HashMap::new();
    for (s, r) in targets {
        let Some(p) = views[s.as_str()].parts.get(r.as_str()) else {
            continue;
        };
        for (id, _, _, dup) in &p.open {
            let Some((to, of)) = dup else { continue };
            let mut seen = vec![(r.to_string(), id.clone())];
            match resolved_by_facts(store, s, &views[s.as_str()], &mut full, to, of, &mut seen) {
                Ok(resolved) => {
                    still_open.insert((s.to_string(), r.to_string(), id.clone()), !resolved);
                }
                Err(_) => return decide_reading_records(store, req, targets),
            }
        }
    }
    Ok(decide_from_facts(store, req, targets, &views, &still_open))
}

/// Whether a finding no longer blocks, from the facts of its series: a class that never blocks,
/// a resolving disposition, or a duplicate whose chain ends in a resolved finding. A cycle or a
/// missing target stays open.
/// `full` holds the facts of the rounds read so far, by (series, round).
pub(super) fn resolved_by_facts(
    store: &Store,
    series: &str,
    view: &facts::View,
    full: &mut HashMap<(String, String), Option<facts::RoundFacts>>,
    round: &str,
    id: &str,
    seen: &mut Vec<(String, String)>,
) -> Result<bool> {
    let key = (round.to_string(), id.to_string());
    if seen.contains(&key) {
        return Ok(false);
    }
    seen.push(key);
    let at = (series.to_string(), round.to_string());
    if !full.contains_key(&at) {
        let f = view.facts_of(store, series, round)?;
        full.insert(at.clone(), f);
    }
    let Some(Some(f)) = full.get(&at) else {
        return Ok(false);
    };
    match facts::step(f, id) {
        facts::Step::Resolved => Ok(true),
        facts::Step::Open => Ok(false),
        facts::Step::Duplicate(r, of) => {
            resolved_by_facts(store, series, view, full, &r, &of, seen)
        }
    }
}

/// [`decide_reading_records`] from the gate facts: the same reasons in the same order.
pub(super) fn decide_from_facts(
    store: &Store,
    req: &GateRequest,
    targets: &[(SeriesId, RoundName)],
    views: &BTreeMap<String, facts::View>,
    still_open: &HashMap<(String, String, String), bool>,
) -> Decided {
    let mut reasons: Vec<String> = Vec::new();
    // (order, series, round, part) of each listed round that could be read.
    let mut listed: Vec<(usize, &str, &str, &facts::Part)> = Vec::new();
    for (i, (s, r)) in targets.iter().enumerate() {
        let Some(f) = views[s.as_str()].parts.get(r.as_str()) else {
            reasons.push(format!(
                "{s}:{r}: cannot be read: {}",
                record::not_recorded(s, r).message
            ));
            continue;
        };
        if let Some(e) = &f.round_error {
            reasons.push(format!("{s}:{r}: cannot be read: {e}"));
            continue;
        }
        if f.dry_run {
            reasons.push(format!("{s}:{r}: is a dry run; no reviewer ran"));
            continue;
        }
        if f.stopped {
            reasons.push(format!(
                "{s}:{r}: stopped before recording findings (counts as a dry run)"
            ));
            continue;
        }
        if let Some(e) = &f.findings_error {
            reasons.push(format!("{s}:{r}: cannot be read: {e}"));
            continue;
        }
        listed.push((i, s, r, f));
    }

    // Every recorded round of each named series must be in the list.
    let series_names: Vec<&str> = views.keys().map(String::as_str).collect();
    let wanted: std::collections::HashSet<(&str, &str)> = targets
        .iter()
        .map(|(s, r)| (s.as_str(), r.as_str()))
        .collect();
    for s in &series_names {
        let view = &views[*s];
        for n in &view.names {
            if wanted.contains(&(*s, n.as_str())) {
                continue;
            }
            let skip = view
                .parts
                .get(n)
                .is_some_and(|f| f.round_error.is_none() && (f.dry_run || f.stopped));
            if !skip {
                reasons.push(format!(
                    "{s}: round {n} of the series is not in the gate list"
                ));
            }
        }
    }

    // A history that replaced a completed reviewer's result (a commit written by hand: `git
    // spar record` refuses it) blocks, whatever the tip says now; so do gate facts written by
    // hand that say what the records do not.
    for s in &series_names {
        reasons.extend(views[*s].history.iter().cloned());
        reasons.extend(views[*s].lies.iter().cloned());
    }

    // The newest listed round of each stage: every reviewer completed or waived.
    let mut newest: BTreeMap<(&str, &str), (&str, &facts::Part)> = BTreeMap::new();
    for (_, s, r, f) in &listed {
        let key = (*s, f.stage.as_str());
        let later = newest
            .get(&key)
            .is_none_or(|(n, _)| RoundName::number_of(r) >= RoundName::number_of(n));
        if later {
            newest.insert(key, (r, f));
        }
    }
    for ((s, _), (r, f)) in &newest {
        if let Some(e) = &f.waivers_error {
            reasons.push(format!("{s}:{r}: {e}"));
        }
        for (name, status) in &f.unwaived {
            reasons.push(format!(
                "{s}:{r}: required reviewer {name} is {status} and not waived"
            ));
        }
    }

    // Open blocking findings, duplicates followed to their end.
    let mut open_count = 0usize;
    for (_, s, r, f) in &listed {
        if let Some(e) = &f.ledger_error {
            reasons.push(format!("{s}:{r}: {e}"));
            continue;
        }
        for (id, class, claim, dup) in &f.open {
            let open = dup.is_none()
                || still_open
                    .get(&(s.to_string(), r.to_string(), id.clone()))
                    .copied()
                    .unwrap_or(true);
            if open {
                open_count += 1;
                reasons.push(format!("{s}:{r}: {id} ({class}) is open: {claim}"));
            }
        }
    }

    // The change must not have moved after review (G27).
    let newest_head = listed
        .iter()
        .max_by(|a, b| a.3.started_at.cmp(&b.3.started_at).then(a.0.cmp(&b.0)))
        .map(|l| l.3.head.clone());
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

    let auto_deferred: u64 = listed.iter().map(|l| l.3.auto_deferred).sum();
    let growth: Vec<Growth> = listed
        .iter()
        .map(|(_, s, r, f)| Growth {
            series: s.to_string(),
            round: r.to_string(),
            stage: f.stage.clone(),
            findings: f.findings,
            in_check_paths: f.in_check_paths,
            outside_check_paths: f.findings - f.in_check_paths,
        })
        .collect();
    let mut uncovered: Vec<String> = listed
        .iter()
        .flat_map(|l| l.3.standpoints_uncovered.iter().cloned())
        .collect();
    uncovered.sort();
    uncovered.dedup();
    finish_decision(
        targets,
        reasons,
        newest_head,
        expect,
        open_count,
        auto_deferred as usize,
        growth,
        uncovered,
    )
}

/// The decision document from what the gate found.
#[allow(clippy::too_many_arguments)]
pub(super) fn finish_decision(
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

/// The gate's decision read from every listed round's records and the series' whole history.
pub(super) fn decide_reading_records(
    store: &Store,
    req: &GateRequest,
    targets: &[(SeriesId, RoundName)],
) -> Result<Decided> {
    let mut reasons: Vec<String> = Vec::new();
    let mut listed: Vec<Listed> = Vec::new();
    for (i, (s, r)) in targets.iter().enumerate() {
        let round = match record::load_round(store, s, r) {
            Ok(x) => x,
            Err(e) => {
                reasons.push(format!("{s}:{r}: cannot be read: {}", e.message));
                continue;
            }
        };
        if round.dry_run {
            reasons.push(format!("{s}:{r}: is a dry run; no reviewer ran"));
            continue;
        }
        match stopped(store, s, &round) {
            Ok(true) => {
                reasons.push(format!(
                    "{s}:{r}: stopped before recording findings (counts as a dry run)"
                ));
                continue;
            }
            Ok(false) => {}
            Err(e) => {
                reasons.push(format!("{s}:{r}: cannot be read: {}", e.message));
                continue;
            }
        }
        let findings = match record::load_findings(store, s, r) {
            Ok(f) => f,
            Err(e) => {
                reasons.push(format!("{s}:{r}: cannot be read: {}", e.message));
                continue;
            }
        };
        listed.push(Listed {
            round,
            findings: Rc::new(findings),
            order: i,
        });
    }

    // Every recorded round of each named series must be in the list.
    let mut series_names: Vec<&SeriesId> = targets.iter().map(|(s, _)| s).collect();
    series_names.dedup();
    series_names.sort();
    series_names.dedup();
    for s in &series_names {
        let names = match record::round_names(store, s) {
            Ok(n) => n,
            Err(e) => {
                reasons.push(format!("{s}: cannot be read: {}", e.message));
                continue;
            }
        };
        for n in names {
            if targets.iter().any(|(ts, tr)| ts == *s && *tr == n) {
                continue;
            }
            let skip = match record::load_round(store, s, &n) {
                Ok(r) => r.dry_run || stopped(store, s, &r).unwrap_or(false),
                Err(_) => false,
            };
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
        match record::series_tip(store, s) {
            Ok(Some(tip)) => match record::replaced_results(store, s, tip) {
                Ok(found) => reasons.extend(found),
                Err(e) => reasons.push(format!("{s}: its history cannot be read: {}", e.message)),
            },
            Ok(None) => {}
            Err(e) => reasons.push(format!("{s}: cannot be read: {}", e.message)),
        }
    }

    // The newest listed round of each stage: every reviewer completed or waived.
    let mut newest: BTreeMap<(String, String), &Listed> = BTreeMap::new();
    for l in &listed {
        let key = (l.round.series.clone(), l.round.stage.to_string());
        let later = newest.get(&key).is_none_or(|n| {
            RoundName::number_of(&l.round.round) >= RoundName::number_of(&n.round.round)
        });
        if later {
            newest.insert(key, l);
        }
    }
    for l in newest.values() {
        // Where its round.json says it is (the gate read it at its path, which says the same).
        let (s, r) = (&l.round.series, &l.round.round);
        let waived = match read_waivers(store, &SeriesId::recorded(s), &RoundName::named(r)) {
            Ok((_, w)) => w,
            Err(e) => {
                reasons.push(format!("{s}:{r}: {e}"));
                Vec::new()
            }
        };
        for rev in &l.round.reviewers {
            if rev.status != Status::Completed && !waived.contains(&rev.name) {
                reasons.push(format!(
                    "{s}:{r}: required reviewer {} is {} and not waived",
                    rev.name, rev.status
                ));
            }
        }
    }

    // Open blocking findings, duplicates followed to their end.
    let mut views: HashMap<String, Series<'_>> = HashMap::new();
    let mut open_count = 0usize;
    for l in &listed {
        let (s, r) = (l.round.series.clone(), l.round.round.clone());
        let view = views
            .entry(s.clone())
            .or_insert_with(|| Series::new(store, &SeriesId::recorded(&s)));
        // Parsed once: the listed round's findings are the ones at its path.
        if targets
            .get(l.order)
            .is_some_and(|(ts, tr)| *ts == s && *tr == r)
        {
            view.know(&r, l.findings.clone());
        }
        if let Err(e) = view.state(&r) {
            reasons.push(format!("{s}:{r}: {e}"));
            continue;
        }
        for f in l.findings.iter() {
            if f.class.blocks() && !view.resolved(&r, &f.id, &mut Vec::new()) {
                open_count += 1;
                reasons.push(format!(
                    "{s}:{r}: {} ({}) is open: {}",
                    f.id, f.class, f.claim
                ));
            }
        }
    }

    // The change must not have moved after review (G27).
    let newest_head = listed
        .iter()
        .max_by(|a, b| {
            a.round
                .started_at
                .cmp(&b.round.started_at)
                .then(a.order.cmp(&b.order))
        })
        .map(|l| l.round.head.clone());
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

    let auto_deferred = listed
        .iter()
        .flat_map(|l| l.findings.iter())
        .filter(|f| f.auto_deferred)
        .count();
    let growth: Vec<Growth> = listed
        .iter()
        .map(|l| {
            let inside = l.findings.iter().filter(|f| f.in_check_paths).count() as u64;
            let all = l.findings.len() as u64;
            Growth {
                series: l.round.series.clone(),
                round: l.round.round.clone(),
                stage: l.round.stage.to_string(),
                findings: all,
                in_check_paths: inside,
                outside_check_paths: all - inside,
            }
        })
        .collect();
    let mut uncovered: Vec<String> = listed
        .iter()
        .flat_map(|l| l.round.standpoints_uncovered.iter().cloned())
        .collect();
    uncovered.sort();
    uncovered.dedup();
    Ok(finish_decision(
        targets,
        reasons,
        newest_head,
        expect,
        open_count,
        auto_deferred,
        growth,
        uncovered,
    ))
}
