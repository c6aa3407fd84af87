//! `git spar record`: a result or a native subagent's transcript recorded for a reviewer of a
//! round already run, held to the same checks as a run.

use super::*;

/// What `git spar record … --result F` did.
pub struct RecordOutcome {
    pub round: Round,
    pub reviewer: ReviewerRecord,
    pub findings: Vec<Finding>,
}

/// What `git spar record` is given.
#[derive(Debug, Clone)]
pub enum RecordInput {
    /// `--result F`: the reviewer's result object.
    Result(PathBuf),
    /// `--transcript F`: a Claude Code transcript of the native subagent (G15).
    Transcript(PathBuf),
}

/// The largest reviewer result `git spar record --result` reads (a result of 1,000 findings is
/// under 1 MiB): a larger file or stream is refused after reading this much, so memory stays
/// bounded whatever is handed over.
pub const RESULT_LIMIT: u64 = 32 * 1024 * 1024;

/// The largest transcript `git spar record --transcript` reads.
pub const TRANSCRIPT_LIMIT: u64 = 128 * 1024 * 1024;

/// Reads at most `limit` bytes of `file` (a file, a pipe or `/dev/stdin`) as text; more is
/// refused.
pub(super) fn read_bounded(file: &Path, option: &str, limit: u64) -> Result<String> {
    use std::io::Read;
    let unreadable = |e: std::io::Error| {
        Error::refused(format!("{option} {}: cannot be read: {e}", file.display()))
            .hint("name a readable file")
    };
    let f = std::fs::File::open(file).map_err(unreadable)?;
    let mut bytes = Vec::new();
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > limit {
        return Err(Error::refused(format!(
            "{option} {}: larger than {} MiB, the most a reviewer's {} may be; nothing was recorded",
            file.display(),
            limit / (1024 * 1024),
            if option == "--result" { "result" } else { "transcript" }
        ))
        .hint("hand over the reviewer's own result (one JSON object), not its whole output"));
    }
    String::from_utf8(bytes).map_err(|_| {
        unreadable(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ))
    })
}

/// Records a result for a reviewer of an existing round, with the same checks as a run: a
/// result file, or a native subagent's transcript with its G15 warnings.
pub fn record_result(
    store: &Store,
    series: &SeriesId,
    round_name: &RoundName,
    reviewer: &str,
    input: &RecordInput,
    progress: &mut dyn FnMut(&str),
) -> Result<RecordOutcome> {
    let (option, file) = match input {
        RecordInput::Result(f) => ("--result", f),
        RecordInput::Transcript(f) => ("--transcript", f),
    };
    let limit = match input {
        RecordInput::Result(_) => RESULT_LIMIT,
        RecordInput::Transcript(_) => TRANSCRIPT_LIMIT,
    };
    let raw = read_bounded(file, option, limit)?;
    let _lock = records::lock_series(store, series, progress)?;
    // Re-read under the lock (G33).
    let mut round = records::load_round(store, series, round_name)?;
    let Some(idx) = round.reviewers.iter().position(|r| r.name == reviewer) else {
        let names: Vec<&str> = round.reviewers.iter().map(|r| r.name.as_str()).collect();
        return Err(Error::refused(format!(
            "{series}: round {round_name} has no reviewer {} (its reviewers: {})",
            config::quote(reviewer),
            names.join(", ")
        )));
    };
    // A completed result is final: recording over it would let a clean result hide the
    // defects the first one found. Only a reviewer without a completed result takes one.
    let current = &round.reviewers[idx];
    if current.status == Status::Completed {
        let found = records::load_findings(store, series, round_name)?
            .iter()
            .filter(|f| f.reviewer == reviewer)
            .count();
        return Err(Error::refused(format!(
            "{series}: round {round_name}: {} already completed (verdict {}, {found} finding{}); a completed result is never replaced",
            config::quote(reviewer),
            current.verdict.as_ref().map_or("none", Word::as_str),
            if found == 1 { "" } else { "s" }
        ))
        .hint(format!(
            "triage its findings (`git spar show {series}:{round_name}`, then `git spar triage {series} {round_name} <finding-id> …`), or review the change again in a new round (`git spar run --base <rev> --series {series}`)"
        )));
    }
    let head = ObjectId::from_hex(round.head.as_bytes())
        .map_err(|e| Error::refused(format!("round.json: bad head {}: {e}", round.head)))?;
    let base = ObjectId::from_hex(round.base.as_bytes())
        .map_err(|e| Error::refused(format!("round.json: bad base {}: {e}", round.base)))?;
    let angles: Vec<Angle> = round.config["angles"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().and_then(Angle::parse))
                .collect()
        })
        .unwrap_or_default();
    let check_paths = strings(&round.config["check_paths"]);
    let standpoints = recorded_standpoints(&round);
    let mut rec = round.reviewers[idx].clone();
    rec.started_at = Some(now());
    // A new result replaces what an earlier one reported.
    rec.standpoint_report = None;
    let ctx_result = ResultContext {
        head: &round.head,
        requested_angles: &angles,
        round_has_standpoints: round.has_standpoints(),
        reviewer_standpoint: standpoint_of(&standpoints, reviewer),
    };
    // A transcript: its result, its observed model and its warnings (G15).
    let mut text = raw.clone();
    let mut warnings = Vec::new();
    let mut no_answer = false;
    if let RecordInput::Transcript(f) = input {
        let ws = workspace_of(store, series, round_name);
        let prompt = rec
            .prompt
            .as_ref()
            .map(PathBuf::from)
            .unwrap_or_else(|| ws.join(reviewer).join("prompt.md"));
        let workspace = prompt
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or(ws);
        let t = preset::native::read(&raw, &workspace, &prompt).map_err(|why| {
            Error::refused(format!(
                "--transcript {}: not a Claude Code transcript: {why}",
                f.display()
            ))
            .hint("give the subagent's transcript (JSONL), or its result with --result")
        })?;
        no_answer = t.result.is_none();
        text = t.result.unwrap_or_default();
        rec.observed_model = t.observed_model;
        warnings = t
            .warnings
            .iter()
            .map(|w| format!("{reviewer}: {w}"))
            .collect();
    }
    let mut new_findings = Vec::new();
    match result::check_result(&text, &ctx_result) {
        Err(_) if no_answer => {
            rec.status = Status::InvalidOutput.into();
            rec.reason = "the transcript holds no StructuredOutput call and no final answer".into();
        }
        Err(invalid) => {
            rec.status = Status::InvalidOutput.into();
            rec.reason = invalid.reason;
        }
        Ok(res) => {
            apply_result(&mut rec, &res);
            let rules: Vec<(Document, String)> = round.links["rules"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(doc_from_facts)
                        .map(|d| (d, String::new()))
                        .collect()
                })
                .unwrap_or_default();
            let criteria = round
                .links
                .get("criteria")
                .and_then(doc_from_facts)
                .map(|d| {
                    let ids = strings(&round.links["criteria_ids"]);
                    (d, ids.join(" "))
                });
            let subject = round.links.get("subject").and_then(doc_from_facts);
            let cp = CheckPaths::new(check_paths.iter().cloned())
                .map_err(|e| Error::refused(e.to_string()))?;
            let ctx = RoundContext::build(
                store,
                base,
                head,
                cp,
                &rules,
                criteria.as_ref(),
                subject.as_ref(),
            )?;
            new_findings = ctx.findings(store, reviewer, &res);
        }
    }
    rec.finished_at = Some(now());
    round.reviewers[idx] = rec;
    // The result a person passes in is free text from outside: redacted like a run's.
    let words = match (
        ObjectId::from_hex(round.base.as_bytes()),
        ObjectId::from_hex(round.head.as_bytes()),
    ) {
        (Ok(b), Ok(h)) => super::secrets::redactor(store, b, h),
        _ => crate::redact::Redactor::from_env(),
    };
    let (raw, in_raw) = words.bytes(raw.as_bytes());
    let redacted = in_raw
        + super::secrets::findings(&words, &mut new_findings)
        + super::secrets::reasons(&words, &mut round);
    super::secrets::count(&mut round, redacted);
    // The reviewer's warnings are those of its newest record.
    let prefix = format!("{reviewer}: ");
    round.warnings.retain(|w| !w.starts_with(&prefix));
    round.warnings.extend(warnings);
    let mut findings: Vec<Finding> = records::load_findings(store, series, round_name)?
        .into_iter()
        .filter(|f| f.reviewer != reviewer)
        .collect();
    findings.extend(new_findings.iter().cloned());
    let mut ledger =
        records::round_file(store, series, round_name, "ledger.jsonl")?.unwrap_or_default();
    ledger.extend(records::jsonl(&ledger_lines(&new_findings)));
    // The workspace was kept for the pending reviewers; once none is, it goes.
    write_ending(
        store,
        &mut round,
        Ending {
            series,
            round_name,
            findings: &findings,
            ledger,
            extra: vec![(format!("{reviewer}/output.txt"), raw)],
            export: false,
            subject: format!("spar {series} {round_name}: record {reviewer}"),
            trailers: vec![("Spar-Reviewer", reviewer.to_string())],
            written: "result",
            note_on: Some(head),
            workspace: &workspace_of(store, series, round_name),
            keep: false,
            dry_run: false,
        },
    )?;
    let rec = round.reviewers[idx].clone();
    Ok(RecordOutcome {
        round,
        reviewer: rec,
        findings: new_findings,
    })
}

/// The strings of a recorded JSON array (none when it is not one).
fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
