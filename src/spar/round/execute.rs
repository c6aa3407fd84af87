//! Running the round's reviewers: one reviewer by its preset (a command, a claude, codex or
//! agy CLI, a SARIF tool, or a native subagent left pending), all of them in parallel, and each
//! result held to G1–G6.

use super::*;

/// How one reviewer of the round came out.
pub(super) struct ReviewerRun {
    pub(super) record: ReviewerRecord,
    pub(super) stdout: String,
    pub(super) stderr: String,
    pub(super) result: Option<result::ReviewerResult>,
}

pub(super) fn base_record(
    sel: &SelectedReviewer,
    status: Status,
    reason: String,
) -> ReviewerRecord {
    ReviewerRecord {
        name: sel.name().to_string(),
        preset: sel.preset().as_str().to_string(),
        status: status.into(),
        reason,
        timeout_seconds: sel.timeout_seconds(),
        model: sel.model.as_ref().map(|m| m.value.clone()),
        observed_model: None,
        attempts: Vec::new(),
        resets: None,
        prompt: None,
        verdict: None,
        angles_checked: Vec::new(),
        angles_unchecked: Vec::new(),
        limits: None,
        standpoint: None,
        standpoint_report: None,
        started_at: None,
        finished_at: None,
    }
}

/// What a reviewer is held to besides the round's head and angles.
#[derive(Clone, Copy)]
pub(super) struct Holding<'a> {
    pub(super) head: &'a str,
    pub(super) angles: &'a [Angle],
    /// Whether the round has standpoints (the schema allows `standpoint_report`).
    pub(super) round_has_standpoints: bool,
    /// This reviewer's standpoint, if it was given one (`standpoint_report` is then required).
    pub(super) standpoint: Option<&'a str>,
    /// The round's rule documents with their text (a `sarif` reviewer links to them).
    pub(super) rules: &'a [(Document, String)],
}

/// Runs one reviewer: a `command` reviewer's argv, or a claude, codex or agy CLI
/// ([`preset::run_cli`]); a native reviewer is recorded pending with its `prompt.md`. `input` is
/// what the reviewer is given (for agy the `-p` text); `report` gets one text per event.
pub(super) fn run_reviewer(
    sel: &SelectedReviewer,
    workspace: &Path,
    holding: Holding<'_>,
    input: &str,
    report: &mut dyn FnMut(&str),
) -> ReviewerRun {
    let started = now();
    let name = sel.name().to_string();
    let finish = |mut rec: ReviewerRecord, stdout: String, stderr: String, result| {
        rec.started_at = Some(started.clone());
        rec.finished_at = Some(now());
        ReviewerRun {
            record: rec,
            stdout,
            stderr,
            result,
        }
    };
    match sel.preset() {
        Preset::Native => {
            let prompt = workspace.join(&name).join("prompt.md");
            let mut rec = base_record(
                sel,
                Status::Pending,
                format!(
                    "native: run a subagent on {} and record it with `git spar record <series> <round> {name} --transcript F`",
                    prompt.display()
                ),
            );
            rec.prompt = Some(prompt.to_string_lossy().into_owned());
            return finish(rec, String::new(), String::new(), None);
        }
        Preset::Command => {}
        Preset::Sarif => {
            let target = preset::sarif::Target {
                head: holding.head,
                angles: holding.angles,
                standpoint: holding.standpoint,
                rules: holding.rules,
            };
            let run = preset::sarif::run(sel, workspace, &target);
            let mut rec = base_record(sel, Status::Completed, String::new());
            rec.attempts = run.attempts;
            return match run.result {
                Err((status, why)) => {
                    rec.status = status.into();
                    rec.reason = why;
                    finish(rec, run.stdout, run.stderr, None)
                }
                Ok(text) => check_into(rec, &text, holding, run.stdout, run.stderr, finish),
            };
        }
        _ => {
            let exe = match preset::executable(sel) {
                Ok(p) => p,
                Err((status, why)) => {
                    let rec = base_record(sel, status, why);
                    return finish(rec, String::new(), String::new(), None);
                }
            };
            let schema = std::fs::read_to_string(workspace.join("schema.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .map(|v| v.to_string())
                .unwrap_or_default();
            let cli = preset::run_cli(sel, &exe, workspace, input, &schema, report);
            let mut rec = base_record(sel, Status::Completed, String::new());
            rec.attempts = cli.attempts;
            rec.observed_model = cli.observed_model;
            rec.resets = cli.resets;
            if let Some(status) = cli.status {
                rec.status = status.into();
                rec.reason = cli.reason;
                return finish(rec, cli.stdout, cli.stderr, None);
            }
            let text = cli.result.unwrap_or_default();
            return check_into(rec, &text, holding, cli.stdout, cli.stderr, finish);
        }
    }
    let argv = sel
        .reviewer
        .argv
        .as_ref()
        .map(|a| a.value.clone())
        .unwrap_or_default();
    let Some(program) = argv.first() else {
        let rec = base_record(sel, Status::Failed, "command reviewer without argv".into());
        return finish(rec, String::new(), String::new(), None);
    };
    let exe = match config::find_executable(program, std::env::var_os("PATH").as_deref()) {
        // The check and the run must name the same file: the reviewer runs in the workspace.
        Ok(p) if p.is_relative() => std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p),
        Ok(p) => p,
        Err((status, why)) => {
            let rec = base_record(sel, status, why);
            return finish(rec, String::new(), String::new(), None);
        }
    };
    let prompt = workspace.join(&name).join("input.md");
    let schema = workspace.join("schema.json");
    let args = config::substitute_argv(
        &argv,
        &config::Placeholders {
            prompt: prompt.as_os_str(),
            workspace: workspace.as_os_str(),
            schema: schema.as_os_str(),
        },
    );
    let mut full: Vec<String> = vec![exe.to_string_lossy().into_owned()];
    full.extend(
        args.iter()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned()),
    );
    let timeout = Duration::from_secs(sel.timeout_seconds());
    let r = crate::process::run_argv(&full, workspace, &[], b"", timeout);
    let attempt = json!({
        "started_at": started,
        "exit_code": r.exit_code,
        "timed_out": r.timed_out,
        "duration_ms": r.duration.as_millis() as u64,
    });
    let mut rec = base_record(sel, Status::Completed, String::new());
    rec.attempts.push(attempt);
    if r.timed_out {
        rec.status = Status::Failed.into();
        rec.reason = format!(
            "timed out after {} s; its process group was killed",
            sel.timeout_seconds()
        );
        return finish(rec, r.stdout_tail, r.stderr_tail, None);
    }
    if let Some(e) = &r.spawn_error {
        rec.status = Status::Failed.into();
        rec.reason = format!("could not start: {e}");
        return finish(rec, r.stdout_tail, r.stderr_tail, None);
    }
    if r.exit_code != Some(0) {
        let tail = r
            .stderr_tail
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_string();
        rec.status = Status::Failed.into();
        rec.reason = format!(
            "{}{}",
            r.describe(),
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            }
        );
        return finish(rec, r.stdout_tail, r.stderr_tail, None);
    }
    let text = r.stdout_tail.clone();
    check_into(rec, &text, holding, r.stdout_tail, r.stderr_tail, finish)
}

/// Runs the reviewers in parallel. When the reporter is live (a terminal; the lines carry no
/// colour) its board shows one line per reviewer with its state and elapsed time; elsewhere it
/// gets one line per event: `spar: <round>: <reviewer>: <event>`.
pub(super) fn run_parallel<'h>(
    selected: &[SelectedReviewer],
    given: &[String],
    workspace: &Path,
    round_name: &str,
    holding: impl Fn(&SelectedReviewer) -> Holding<'h>,
    progress: &mut dyn progress::Reporter,
) -> Vec<ReviewerRun> {
    use std::sync::mpsc;
    enum Msg {
        Event(String),
        Done(String),
    }
    let live = progress.live();
    let (tx, rx) = mpsc::channel::<(usize, Msg)>();
    std::thread::scope(|scope| {
        let handles: Vec<_> = selected
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let tx = tx.clone();
                let h = holding(s);
                let input = given.get(i).map(String::as_str).unwrap_or("");
                scope.spawn(move || {
                    let mut report = |e: &str| {
                        let _ = tx.send((i, Msg::Event(e.to_string())));
                    };
                    let r = run_reviewer(s, workspace, h, input, &mut report);
                    let _ = tx.send((i, Msg::Done(r.record.status.to_string())));
                    r
                })
            })
            .collect();
        drop(tx);
        let names: Vec<&str> = selected.iter().map(|s| s.name()).collect();
        let mut board = progress::Board::new(&names);
        if live {
            progress.board(&board.render());
        }
        loop {
            match rx.recv_timeout(Duration::from_secs(1)) {
                Ok((i, Msg::Event(e))) => {
                    if live {
                        board.event(i, &e);
                    } else {
                        // One line per event, however long the command it names.
                        let line = e.lines().next().unwrap_or("");
                        let mut short: String = line.chars().take(200).collect();
                        if short.len() < e.len() {
                            short.push('…');
                        }
                        progress.line(&format!("spar: {round_name}: {}: {short}", names[i]));
                    }
                }
                Ok((i, Msg::Done(status))) => board.done(i, &status),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if live {
                progress.board(&board.render());
            }
        }
        if live {
            progress.board(&board.render());
        }
        handles
            .into_iter()
            .zip(selected.iter())
            .map(|(h, s)| {
                h.join().unwrap_or_else(|_| ReviewerRun {
                    record: base_record(s, Status::Failed, "the reviewer's runner panicked".into()),
                    stdout: String::new(),
                    stderr: String::new(),
                    result: None,
                })
            })
            .collect()
    })
}

/// Holds a reviewer's result text to G1–G6 and records how it came out.
pub(super) fn check_into(
    mut rec: ReviewerRecord,
    text: &str,
    holding: Holding<'_>,
    stdout: String,
    stderr: String,
    finish: impl FnOnce(ReviewerRecord, String, String, Option<result::ReviewerResult>) -> ReviewerRun,
) -> ReviewerRun {
    let ctx = ResultContext {
        head: holding.head,
        requested_angles: holding.angles,
        round_has_standpoints: holding.round_has_standpoints,
        reviewer_standpoint: holding.standpoint,
    };
    match result::check_result(text, &ctx) {
        Err(invalid) => {
            rec.status = Status::InvalidOutput.into();
            rec.reason = invalid.reason;
            finish(rec, stdout, stderr, None)
        }
        Ok(res) => {
            apply_result(&mut rec, &res);
            finish(rec, stdout, stderr, Some(res))
        }
    }
}

/// Copies a valid result's verdict and angles onto the record (G3: could_not_review is failed).
pub(super) fn apply_result(rec: &mut ReviewerRecord, res: &result::ReviewerResult) {
    rec.verdict = Some(res.verdict.into());
    rec.angles_checked = res
        .angles_checked
        .iter()
        .map(|(a, r)| json!({"angle": a, "result": r}))
        .collect();
    rec.angles_unchecked = res
        .angles_unchecked
        .iter()
        .map(|(a, r)| json!({"angle": a, "reason": r}))
        .collect();
    rec.limits = Some(res.limits.clone());
    rec.standpoint_report = res
        .standpoint_report
        .as_ref()
        .map(|r| json!({"checked": r.checked, "detail": r.detail}));
    if res.could_not_review() {
        rec.status = Status::Failed.into();
        rec.reason = "the reviewer answered could_not_review".into();
    } else {
        rec.status = Status::Completed.into();
        rec.reason = String::new();
    }
}
