//! One round: every input checked before anything starts or is written, the copies and the
//! packet in a workspace, the reviewers run in parallel, their results held to G1–G6, the
//! findings located, linked and classified, and the round recorded in git.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::classify::{self, FindingFacts};
use super::config::{self, Angle, Config, Preset, SelectedReviewer, Status};
use super::glob::CheckPaths;
use super::location::{Copy, Document, EntryKind, LinkKind, Resolver};
use super::preset;
use super::progress;
use super::record::{self, Finding, ReviewerRecord, Round};
use super::result::{self, ResultContext};
use super::summary;
use crate::error::{Context, Error, Result};
use crate::store::{self, refs, ObjectId, Store};

/// What `git spar run` was asked.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    pub base: String,
    pub head: Option<String>,
    pub stage: Option<String>,
    pub series: Option<String>,
    pub reviewers: Option<String>,
    pub models: Vec<String>,
    pub efforts: Vec<String>,
    pub criteria: Option<PathBuf>,
    pub rules: Vec<PathBuf>,
    pub subject: Option<PathBuf>,
    pub check_paths: Vec<String>,
    pub dry_run: bool,
    pub out: Option<PathBuf>,
    /// The user's decisions, paired and checked by [`pair_decisions`] (G35).
    pub decisions: Vec<Decision>,
    /// The standpoints, read by [`parse_standpoint`]; their names are checked by [`run`].
    pub standpoints: Vec<Standpoint>,
}

/// A decision the user made and the user's words for it (G35), both kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub decision: String,
    pub quote: String,
}

/// A standpoint for one reviewer ("관점 인자"): a risk it attacks while checking every angle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standpoint {
    pub reviewer: String,
    pub text: String,
}

/// Which of the two decision options a command-line value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionPart {
    /// `--decision`
    Decision,
    /// `--decision-quote`
    Quote,
}

impl DecisionPart {
    fn option(self) -> &'static str {
        match self {
            DecisionPart::Decision => "--decision",
            DecisionPart::Quote => "--decision-quote",
        }
    }
}

/// One `--decision` or `--decision-quote` as given; `None` is the option at the very end of
/// the command line without a value.
pub type DecisionArg = (DecisionPart, Option<OsString>);

/// A decision value: valid UTF-8 and not empty after trimming, kept as given (G35).
fn decision_text(part: DecisionPart, n: usize, value: Option<&OsStr>) -> Result<String> {
    let option = part.option();
    let Some(value) = value else {
        return Err(Error::refused(format!(
            "decision {n}: {option} at the end of the command line has no value"
        ))
        .hint(format!("give the text right after {option}")));
    };
    let Some(text) = value.to_str() else {
        return Err(Error::refused(format!(
            "decision {n}: {option} {} is not valid UTF-8",
            config::quote_bytes(value.as_bytes())
        )));
    };
    if text.trim().is_empty() {
        return Err(Error::refused(format!(
            "decision {n}: {option} {} is empty",
            config::quote(text)
        )));
    }
    Ok(text.to_string())
}

/// Pairs `--decision` and `--decision-quote` values given in command-line order (G35): each
/// decision is followed by exactly one quote before the next decision. Anything else is
/// refused, naming the decision's number and the option.
pub fn pair_decisions(args: &[DecisionArg]) -> Result<Vec<Decision>> {
    let pairing = "each --decision needs exactly one --decision-quote (the user's words) after it, before the next --decision";
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for (part, value) in args {
        match part {
            DecisionPart::Decision => {
                if pending.is_some() {
                    return Err(Error::refused(format!(
                        "decision {}: --decision has no --decision-quote before the next --decision",
                        out.len() + 1
                    ))
                    .hint(pairing));
                }
                pending = Some(decision_text(*part, out.len() + 1, value.as_deref())?);
            }
            DecisionPart::Quote => {
                let n = out.len() + 1;
                let Some(decision) = pending.take() else {
                    return Err(Error::refused(if out.is_empty() {
                        format!("decision {n}: --decision-quote comes before any --decision")
                    } else {
                        format!(
                            "decision {}: --decision-quote without a --decision (decision {} already has its quote)",
                            n,
                            n - 1
                        )
                    })
                    .hint(pairing));
                };
                let quote = decision_text(*part, n, value.as_deref())?;
                out.push(Decision { decision, quote });
            }
        }
    }
    if pending.is_some() {
        return Err(Error::refused(format!(
            "decision {}: --decision has no --decision-quote",
            out.len() + 1
        ))
        .hint(pairing));
    }
    Ok(out)
}

/// Reads one `--standpoint NAME=TEXT`: the first `=` splits. No `=` or an empty name is a
/// usage error; a name or text that is not valid UTF-8, or a text empty after trimming, is
/// refused. Whether the name is one of the run's reviewers is checked by [`run`].
pub fn parse_standpoint(raw: &OsStr) -> Result<Standpoint> {
    let bytes = raw.as_bytes();
    let shown = config::quote_bytes(bytes);
    let Some(eq) = bytes.iter().position(|&b| b == b'=') else {
        return Err(
            Error::usage(format!("--standpoint {shown}: expected NAME=TEXT"))
                .hint("name a reviewer of this run, then `=`, then the risk it should attack"),
        );
    };
    let (name, text) = (&bytes[..eq], &bytes[eq + 1..]);
    if name.is_empty() {
        return Err(Error::usage(format!(
            "--standpoint {shown}: the reviewer name before `=` is empty"
        )));
    }
    let Ok(name) = std::str::from_utf8(name) else {
        return Err(Error::refused(format!(
            "--standpoint {shown}: the reviewer name is not valid UTF-8"
        )));
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return Err(Error::refused(format!(
            "--standpoint {shown}: the text for {} is not valid UTF-8",
            config::quote(name)
        )));
    };
    if text.trim().is_empty() {
        return Err(Error::refused(format!(
            "--standpoint {shown}: the text for {} is empty",
            config::quote(name)
        )));
    }
    Ok(Standpoint {
        reviewer: name.to_string(),
        text: text.to_string(),
    })
}

/// Checks the standpoints against this run's reviewers ("관점 인자"): each names a configured
/// reviewer or one `--reviewers` selected (exactly, case-sensitive), at most once.
fn check_standpoints(
    standpoints: &[Standpoint],
    cfg: &Config,
    selected: &[SelectedReviewer],
) -> Result<()> {
    let mut known: Vec<&str> = cfg
        .reviewers
        .value
        .iter()
        .map(|r| r.name.value.as_str())
        .collect();
    for s in selected {
        if !known.contains(&s.name()) {
            known.push(s.name());
        }
    }
    for (i, sp) in standpoints.iter().enumerate() {
        if !known.contains(&sp.reviewer.as_str()) {
            return Err(Error::refused(format!(
                "--standpoint {}: {} is not a reviewer of this run (its reviewers: {})",
                config::quote(&format!("{}={}", sp.reviewer, sp.text)),
                config::quote(&sp.reviewer),
                known.join(", ")
            )));
        }
        if standpoints[..i].iter().any(|o| o.reviewer == sp.reviewer) {
            return Err(Error::refused(format!(
                "--standpoint {}: {} already has a standpoint; give each reviewer at most one",
                config::quote(&format!("{}={}", sp.reviewer, sp.text)),
                config::quote(&sp.reviewer)
            )));
        }
    }
    Ok(())
}

/// What one reviewer is given: the packet, and in a round with standpoints its own instruction
/// ("관점 전달"). Without standpoints it is the packet, byte for byte.
fn reviewer_input(packet: &str, name: &str, standpoints: &[Standpoint]) -> String {
    if standpoints.is_empty() {
        return packet.to_string();
    }
    let mut s = packet.to_string();
    match standpoints.iter().find(|sp| sp.reviewer == name) {
        Some(sp) => {
            s.push_str(&format!(
                "\n## Your standpoint\n\nYou are the reviewer {name}. Your standpoint for this round is the risk below. Check every angle while attacking that risk, and report on it in `standpoint_report`: `checked` true and what you checked, or `checked` false and why you could not.\n\n"
            ));
            s.push_str(&fenced(&sp.text));
        }
        None => s.push_str(&format!(
            "\n## Your standpoint\n\nYou are the reviewer {name}. You have no standpoint in this round: review the whole change, every angle. Send `standpoint_report` as null.\n"
        )),
    }
    s
}

pub const STAGES: [&str; 3] = ["plan", "plan-delta", "code"];

/// A document given on the command line (G26).
struct ArgDocument {
    doc: Document,
    contents: String,
}

fn read_document(root: &Path, path: &Path, what: &str) -> Result<ArgDocument> {
    let bytes = std::fs::read(path).map_err(|e| {
        Error::refused(format!("{what} {}: cannot be read: {e}", path.display()))
            .hint("name a readable file")
    })?;
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let root_abs = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let repo_path = abs
        .strip_prefix(&root_abs)
        .ok()
        .map(|p| p.to_string_lossy().into_owned());
    let doc = Document::new(
        abs.to_string_lossy().into_owned(),
        repo_path.as_deref(),
        &bytes,
    );
    Ok(ArgDocument {
        doc,
        contents: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

/// The default series: the current branch, `/` replaced by `-`.
pub fn default_series(store: &Store) -> Result<String> {
    match store.current_branch()? {
        Some(b) => Ok(b.replace('/', "-")),
        None => Err(
            Error::usage("HEAD is detached, so no branch names the series")
                .hint("name it with --series <name>"),
        ),
    }
}

/// A series name must be one ref component.
pub fn check_series(series: &str) -> Result<()> {
    if series.len() > 100 {
        return Err(Error::usage(format!(
            "series {series:?} is too long: at most 100 characters"
        )));
    }
    match crate::contract::schema::id_rule_broken(series) {
        None => Ok(()),
        Some(rule) => Err(Error::usage(format!(
            "series {series:?} is not valid: {rule}"
        ))),
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(bytes);
    format!("{:x}", h.finalize())
}

/// The copy of a commit as the location rules see it.
fn copy_of(store: &Store, commit: ObjectId) -> Result<Copy> {
    let mut copy = Copy::new();
    for (path, mode) in store.tree_entries(commit)? {
        let kind = match mode.as_str() {
            "100755" => EntryKind::Executable,
            "120000" => EntryKind::Symlink,
            "160000" => EntryKind::Submodule,
            _ => EntryKind::Blob,
        };
        copy.insert(path, kind);
    }
    Ok(copy)
}

/// G28 for `run --out`: a folder that does not exist yet, and, inside any git repository,
/// ignored by every repository around it with no tracked file below it.
fn check_out_dir(out: &Path) -> Result<PathBuf> {
    if out.exists() || out.symlink_metadata().is_ok() {
        return Err(Error::refused(format!(
            "--out {}: the folder must not exist yet",
            out.display()
        )));
    }
    let abs = if out.is_absolute() {
        out.to_path_buf()
    } else {
        std::env::current_dir()
            .ctx("reading the current directory")?
            .join(out)
    };
    let mut dir = abs.parent().map(Path::to_path_buf);
    while let Some(d) = dir {
        if d.join(".git").exists() {
            let rel = abs.strip_prefix(&d).unwrap_or(&abs);
            // The folder does not exist yet: ask about it as a folder, so `out/` patterns match.
            let mut as_dir = rel.as_os_str().to_owned();
            as_dir.push("/");
            let status = std::process::Command::new("git")
                .args(["check-ignore", "-q", "--"])
                .arg(&as_dir)
                .current_dir(&d)
                .status()
                .ctx("running git check-ignore")?;
            match status.code() {
                Some(0) => {}
                Some(1) => {
                    return Err(Error::refused(format!(
                        "--out {}: it is inside the git repository {} and not ignored there",
                        out.display(),
                        d.display()
                    ))
                    .hint("choose a folder outside the repository, or one its .gitignore ignores"))
                }
                _ => {
                    return Err(Error::refused(format!(
                        "--out {}: git cannot tell whether {} ignores it",
                        out.display(),
                        d.display()
                    )))
                }
            }
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    Ok(abs)
}

/// How one reviewer of the round came out.
struct ReviewerRun {
    record: ReviewerRecord,
    stdout: String,
    stderr: String,
    result: Option<result::ReviewerResult>,
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

fn base_record(sel: &SelectedReviewer, status: Status, reason: String) -> ReviewerRecord {
    ReviewerRecord {
        name: sel.name().to_string(),
        preset: sel.preset().as_str().to_string(),
        status: status.as_str().to_string(),
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
struct Holding<'a> {
    head: &'a str,
    angles: &'a [Angle],
    /// Whether the round has standpoints (the schema allows `standpoint_report`).
    round_has_standpoints: bool,
    /// This reviewer's standpoint, if it was given one (`standpoint_report` is then required).
    standpoint: Option<&'a str>,
    /// The round's rule documents with their text (a `sarif` reviewer links to them).
    rules: &'a [(Document, String)],
}

/// Runs one reviewer: a `command` reviewer's argv, or a claude, codex or agy CLI
/// ([`preset::run_cli`]); a native reviewer is recorded pending with its `prompt.md`. `input` is
/// what the reviewer is given (for agy the `-p` text); `report` gets one text per event.
fn run_reviewer(
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
                    rec.status = status.as_str().into();
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
                rec.status = status.as_str().into();
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
        rec.status = Status::Failed.as_str().into();
        rec.reason = format!(
            "timed out after {} s; its process group was killed",
            sel.timeout_seconds()
        );
        return finish(rec, r.stdout_tail, r.stderr_tail, None);
    }
    if let Some(e) = &r.spawn_error {
        rec.status = Status::Failed.as_str().into();
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
        rec.status = Status::Failed.as_str().into();
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

/// Runs the reviewers in parallel. On a terminal (`stderr`, and `NO_COLOR`-free or not, the
/// lines carry no colour) one line per reviewer shows its state and elapsed time; elsewhere
/// `progress` gets one line per event: `spar: <round>: <reviewer>: <event>`.
fn run_parallel<'h>(
    selected: &[SelectedReviewer],
    given: &[String],
    workspace: &Path,
    round_name: &str,
    holding: impl Fn(&SelectedReviewer) -> Holding<'h>,
    progress: &mut dyn FnMut(&str),
) -> Vec<ReviewerRun> {
    use std::io::IsTerminal;
    use std::sync::mpsc;
    enum Msg {
        Event(String),
        Done(String),
    }
    let live = std::io::stderr().is_terminal();
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
                    let _ = tx.send((i, Msg::Done(r.record.status.clone())));
                    r
                })
            })
            .collect();
        drop(tx);
        let names: Vec<&str> = selected.iter().map(|s| s.name()).collect();
        let mut board = progress::Board::new(&names);
        if live {
            board.draw();
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
                        progress(&format!("spar: {round_name}: {}: {short}", names[i]));
                    }
                }
                Ok((i, Msg::Done(status))) => board.done(i, &status),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if live {
                board.draw();
            }
        }
        if live {
            board.draw();
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
fn check_into(
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
            rec.status = Status::InvalidOutput.as_str().into();
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
fn apply_result(rec: &mut ReviewerRecord, res: &result::ReviewerResult) {
    rec.verdict = Some(res.verdict.as_str().to_string());
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
        rec.status = Status::Failed.as_str().into();
        rec.reason = "the reviewer answered could_not_review".into();
    } else {
        rec.status = Status::Completed.as_str().into();
        rec.reason = String::new();
    }
}

/// Everything the classification needs about the round.
pub struct RoundContext {
    resolver: Resolver,
    head: ObjectId,
}

impl RoundContext {
    fn build(
        store: &Store,
        base: ObjectId,
        head: ObjectId,
        check_paths: CheckPaths,
        rules: &[(Document, String)],
        criteria: Option<&(Document, String)>,
        subject: Option<&Document>,
    ) -> Result<RoundContext> {
        let mut resolver = Resolver::new(copy_of(store, head)?, copy_of(store, base)?, check_paths);
        for (doc, _) in rules {
            resolver = resolver.with_rule_document(doc.clone());
        }
        if let Some((doc, text)) = criteria {
            resolver = resolver.with_criteria(doc.clone(), text);
        }
        if let Some(doc) = subject {
            resolver = resolver.with_document(doc.clone());
        }
        Ok(RoundContext { resolver, head })
    }

    /// Classifies a reviewer's findings, numbering them `<reviewer>-F<n>`.
    fn findings(
        &self,
        store: &Store,
        reviewer: &str,
        res: &result::ReviewerResult,
    ) -> Vec<Finding> {
        let mut out = Vec::new();
        for (i, f) in res.findings.iter().enumerate() {
            let loc = self.resolver.resolve_location(&f.location);
            let kind: LinkKind = f.link_kind;
            let head = self.head;
            let mut lines = |path: &str| -> Option<u64> {
                store
                    .read_file(head, path)
                    .ok()
                    .flatten()
                    .map(|b| super::location::count_lines(&b))
            };
            let link = self.resolver.resolve_link(kind, &f.link, &mut lines);
            let facts = FindingFacts::new(
                f.proposed_class,
                f.check_impact,
                f.introduced_by_change,
                f.regression,
            )
            .location(&loc)
            .link(&link);
            let c = classify::classify(&facts);
            out.push(Finding {
                id: format!("{reviewer}-F{}", i + 1),
                reviewer: reviewer.to_string(),
                reviewer_id: f.id.clone(),
                proposed_class: f.proposed_class.as_str().to_string(),
                angle: f.angle.clone(),
                location: f.location.clone(),
                path: loc.path.clone(),
                lines: loc.lines,
                in_check_paths: loc.in_check_paths,
                location_unreadable: loc.is_unreadable(),
                claim: f.claim.clone(),
                failure_scenario: f.failure_scenario.clone(),
                evidence: f.evidence.clone(),
                link_kind: if link.confirmed {
                    link.kind.as_str().to_string()
                } else {
                    "none".into()
                },
                link: if link.confirmed {
                    link.link.clone()
                } else {
                    String::new()
                },
                claimed_link_kind: link.claimed_kind.as_str().to_string(),
                claimed_link: link.claimed_link.clone(),
                introduced_by_change: f.introduced_by_change.as_str().to_string(),
                regression: f.regression.as_str().to_string(),
                check_impact: f.check_impact.as_str().to_string(),
                confidence: f.confidence.as_str().to_string(),
                smallest_fix: f.smallest_fix.clone().unwrap_or_default(),
                class: c.class.as_str().to_string(),
                class_reason: c.class_reason.clone(),
                auto_deferred: c.auto_deferred,
            });
        }
        out
    }
}

/// What `round.json` keeps of a document (G8: names, file_name, lines), enough to resolve
/// links and locations again when a result is recorded later.
fn doc_facts(d: &Document) -> Value {
    json!({
        "names": [d.name(), d.abs_path()],
        "file_name": d.file_name(),
        "lines": d.lines(),
        "in_repo": d.in_repo(),
    })
}

fn doc_from_facts(v: &Value) -> Option<Document> {
    let names = v.get("names")?.as_array()?;
    let name = names.first()?.as_str()?;
    let abs = names.get(1).and_then(Value::as_str).unwrap_or(name);
    let in_repo = v.get("in_repo").and_then(Value::as_bool).unwrap_or(true);
    let lines = v.get("lines").and_then(Value::as_u64).unwrap_or(0);
    Some(Document::recorded(abs, in_repo.then_some(name), lines))
}

/// The `auto_deferred` ledger lines of a round's findings.
fn ledger_lines(findings: &[Finding]) -> Vec<Value> {
    findings
        .iter()
        .filter(|f| f.auto_deferred)
        .map(|f| {
            json!({
                "finding": f.id,
                "disposition": "auto_deferred",
                "reason": f.class_reason,
                "at": now(),
            })
        })
        .collect()
}

/// What a run did.
pub struct RunOutcome {
    pub round: Round,
    pub findings: Vec<Finding>,
    pub workspace: PathBuf,
    pub kept_workspace: bool,
    pub commit: Option<ObjectId>,
}

/// Runs a round. Every input is checked before any reviewer starts or anything is written.
pub fn run(store: &Store, req: &RunRequest, progress: &mut dyn FnMut(&str)) -> Result<RunOutcome> {
    let root = store.workdir()?.to_path_buf();
    // Inputs first (G14–G27), in the order a person reads the command line.
    let stage = req.stage.clone().unwrap_or_else(|| "code".into());
    if !STAGES.contains(&stage.as_str()) {
        return Err(Error::usage(format!(
            "--stage {stage:?} is not one of plan, plan-delta, code"
        )));
    }
    let series = match &req.series {
        Some(s) => s.clone(),
        None => default_series(store)?,
    };
    check_series(&series)?;
    let mut cfg = Config::load(&config::Env::from_process(root.clone()))?;
    cfg.add_check_paths(&req.check_paths)?;
    let selected = config::select(&cfg, req.reviewers.as_deref(), &req.models, &req.efforts)?;
    check_standpoints(&req.standpoints, &cfg, &selected)?;
    let with_standpoints = !req.standpoints.is_empty();
    let base = store
        .resolve_commit(&req.base)
        .map_err(|e| e.context("--base"))?;
    let head_rev = req.head.clone().unwrap_or_else(|| "HEAD".into());
    let head = store
        .resolve_commit(&head_rev)
        .map_err(|e| e.context("--head"))?;
    let criteria = match &req.criteria {
        Some(p) => Some(read_document(&root, p, "--criteria")?),
        None => None,
    };
    let subject = match &req.subject {
        Some(p) => Some(read_document(&root, p, "--subject")?),
        None => None,
    };
    let mut rules: Vec<(Document, String)> = Vec::new();
    for r in &cfg.rules {
        let d = read_document(&root, &r.value.path, "rules")?;
        rules.push((d.doc, d.contents));
    }
    for p in &req.rules {
        let d = read_document(&root, p, "--rules")?;
        rules.push((d.doc, d.contents));
    }
    let out_dir = match &req.out {
        Some(o) => Some(check_out_dir(o)?),
        None => None,
    };
    let check_paths = CheckPaths::new(cfg.check_paths.iter().map(|c| c.value.clone()))
        .map_err(|e| Error::refused(e.to_string()))?;
    let angles: Vec<Angle> = cfg.angles.value.clone();

    // The series lock: from here to the record (G33).
    let _lock = store::lock(
        store.common_dir(),
        &format!("spar/locks/{series}.lock"),
        || {
            progress(&format!(
                "spar: waiting for another write of {series} to finish"
            ))
        },
    )?;
    let names = record::round_names(store, &series)?;
    // Caps (spec "Waive, extend, caps"): decided under the lock, before anything is written.
    super::series::check_cap(
        store,
        &cfg,
        &series,
        &super::series::RunProbe {
            stage: &stage,
            base,
            head,
            dry_run: req.dry_run,
            reviewers: selected.iter().map(|s| s.name()).collect(),
            config_digest: cfg.digest(),
        },
    )?;
    let n = names
        .iter()
        .filter(|r| r.rsplit_once('-').map(|(s, _)| s) == Some(stage.as_str()))
        .count()
        + 1;
    let round_name = format!("{stage}-{n}");

    let workspace = match &out_dir {
        Some(d) => d.clone(),
        None => store
            .common_dir()
            .join("spar/workspaces")
            .join(&series)
            .join(&round_name),
    };
    if workspace.exists() {
        make_writable_and_remove(&workspace).ctx(format!("clearing {}", workspace.display()))?;
    }
    std::fs::create_dir_all(&workspace).ctx(format!("creating {}", workspace.display()))?;
    store.extract_tree(head, &workspace.join("head"))?;
    store.extract_tree(base, &workspace.join("base"))?;

    let schema = result::schema_json(&angles, with_standpoints);
    let schema_bytes = record::pretty(&schema);
    let packet = render_packet(
        store,
        &PacketInput {
            series: &series,
            stage: &stage,
            base,
            head,
            angles: &angles,
            check_paths: &cfg
                .check_paths
                .iter()
                .map(|c| c.value.clone())
                .collect::<Vec<_>>(),
            rules: &rules,
            criteria: criteria.as_ref().map(|c| (&c.doc, c.contents.as_str())),
            subject: subject.as_ref().map(|c| (&c.doc, c.contents.as_str())),
            decisions: &req.decisions,
            standpoints: &req.standpoints,
        },
    )?;
    let packet_sha = sha256_hex(packet.as_bytes());
    store::atomic_write(&workspace.join("packet.md"), packet.as_bytes())?;
    store::atomic_write(&workspace.join("schema.json"), &schema_bytes)?;
    // Each reviewer's input: recorded as `<reviewer>/input.md` in rounds with standpoints.
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    // What each reviewer is given, in the order of `selected`.
    let mut given: Vec<String> = Vec::new();
    for sel in &selected {
        let dir = workspace.join(sel.name());
        std::fs::create_dir_all(&dir).ctx(format!("creating {}", dir.display()))?;
        let file = if sel.preset() == Preset::Native {
            "prompt.md"
        } else {
            "input.md"
        };
        let mut input = reviewer_input(&packet, sel.name(), &req.standpoints);
        if sel.preset() == Preset::Agy {
            // agy is given the command guidance and the instructions with -p; a large packet
            // goes to PACKET.md and -p says where it is.
            let (text, packet_file) = preset::agy::prompt(&packet, &input);
            if let Some(p) = packet_file {
                store::atomic_write(&workspace.join(preset::agy::PACKET_FILE), p.as_bytes())?;
            }
            input = text;
        }
        store::atomic_write(&dir.join(file), input.as_bytes())?;
        if with_standpoints {
            inputs.push((
                format!("{}/input.md", sel.name()),
                input.clone().into_bytes(),
            ));
        }
        given.push(input);
    }

    let started_at = now();
    let head_hex = head.to_string();
    let runs: Vec<ReviewerRun> = if req.dry_run {
        selected
            .iter()
            .map(|s| ReviewerRun {
                record: base_record(s, Status::Pending, "dry run: not started".into()),
                stdout: String::new(),
                stderr: String::new(),
                result: None,
            })
            .collect()
    } else {
        for s in &selected {
            progress(&format!(
                "spar: {round_name}: {} ({}) started",
                s.name(),
                s.preset().as_str()
            ));
        }
        let results = run_parallel(
            &selected,
            &given,
            &workspace,
            &round_name,
            |s| Holding {
                head: &head_hex,
                angles: &angles,
                round_has_standpoints: with_standpoints,
                standpoint: standpoint_of(&req.standpoints, s.name()),
                rules: &rules,
            },
            progress,
        );
        for r in &results {
            progress(&format!(
                "spar: {round_name}: {} {}{}",
                r.record.name,
                r.record.status,
                if r.record.reason.is_empty() {
                    String::new()
                } else {
                    format!(": {}", r.record.reason)
                }
            ));
        }
        results
    };

    let ctx = RoundContext::build(
        store,
        base,
        head,
        check_paths,
        &rules,
        criteria
            .as_ref()
            .map(|c| (c.doc.clone(), c.contents.clone()))
            .as_ref(),
        subject.as_ref().map(|s| &s.doc),
    )?;
    let mut findings = Vec::new();
    for r in &runs {
        if let (Some(res), true) = (
            &r.result,
            r.record.status == Status::Completed.as_str()
                || r.record.status == Status::Failed.as_str(),
        ) {
            findings.extend(ctx.findings(store, &r.record.name, res));
        }
    }
    let criteria_ids: Vec<String> = ctx
        .resolver
        .criteria_ids()
        .map(|s| s.iter().cloned().collect())
        .unwrap_or_default();
    let mut round = Round {
        schema: record::ROUND_SCHEMA.into(),
        series: series.clone(),
        round: round_name.clone(),
        stage: stage.clone(),
        base: base.to_string(),
        head: head.to_string(),
        packet_sha256: packet_sha,
        config: json!({
            "digest": cfg.digest(),
            "files": cfg.files.iter().map(|f| json!({"path": f.path.display().to_string(), "sha256": f.sha256})).collect::<Vec<_>>(),
            "check_paths": cfg.check_paths.iter().map(|c| c.value.clone()).collect::<Vec<_>>(),
            "angles": angles.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
        }),
        reviewers: runs.iter().map(|r| r.record.clone()).collect(),
        decisions: req
            .decisions
            .iter()
            .map(|d| json!({"decision": d.decision, "quote": d.quote}))
            .collect(),
        standpoints: req
            .standpoints
            .iter()
            .map(|s| json!({"reviewer": s.reviewer, "text": s.text}))
            .collect(),
        standpoints_uncovered: Vec::new(),
        links: json!({
            "rules": rules.iter().map(|(d, _)| doc_facts(d)).collect::<Vec<_>>(),
            "criteria_ids": criteria_ids,
            "criteria": criteria.as_ref().map(|c| doc_facts(&c.doc)),
            "subject": subject.as_ref().map(|c| doc_facts(&c.doc)),
        }),
        documents: json!({
            "criteria": criteria.as_ref().map(|c| c.doc.name().to_string()),
            "criteria_digest": criteria.as_ref().map(|c| sha256_hex(c.contents.as_bytes())),
            "subject": subject.as_ref().map(|c| c.doc.name().to_string()),
        }),
        started_at,
        finished_at: Some(now()),
        dry_run: req.dry_run,
        warnings: Vec::new(),
    };
    settle_standpoints(&mut round);
    let summary_md = summary::render(&round, &findings);
    let mut files = vec![
        ("round.json".to_string(), record::pretty(&round)),
        ("packet.md".to_string(), packet.clone().into_bytes()),
        ("schema.json".to_string(), schema_bytes.clone()),
        ("findings.json".to_string(), record::pretty(&findings)),
        (
            "ledger.jsonl".to_string(),
            record::jsonl(&ledger_lines(&findings)),
        ),
        ("summary.md".to_string(), summary_md.clone().into_bytes()),
    ];
    files.extend(inputs);
    for r in &runs {
        if !r.stdout.is_empty() {
            files.push((
                format!("{}/output.txt", r.record.name),
                r.stdout.clone().into_bytes(),
            ));
        }
        if !r.stderr.is_empty() {
            files.push((
                format!("{}/stderr.txt", r.record.name),
                r.stderr.clone().into_bytes(),
            ));
        }
    }
    // Exported as files too when --out was given.
    if out_dir.is_some() {
        for (name, bytes) in &files {
            store::atomic_write(&workspace.join(name), bytes)?;
        }
    }
    let tip = record::series_tip(store, &series)?;
    let commit = record::write_round(
        store,
        &series,
        &round_name,
        tip,
        files,
        &format!(
            "spar {series} {round_name}: {}",
            if req.dry_run { "dry run" } else { "run" }
        ),
        &[
            ("Spar-Stage", stage.clone()),
            ("Spar-Head", head.to_string()),
        ],
    )?
    .ok_or_else(|| {
        Error::internal(format!(
            "{} moved while the round was written",
            record::series_ref(&series)
        ))
    })?;
    if !req.dry_run {
        store.note_append(refs::NOTES_SPAR, head, &summary_md)?;
    }
    let pending = round
        .reviewers
        .iter()
        .any(|r| r.status == Status::Pending.as_str());
    let keep = out_dir.is_some() || (pending && !req.dry_run);
    if !keep {
        let _ = make_writable_and_remove(&workspace);
    }
    Ok(RunOutcome {
        round,
        findings,
        workspace,
        kept_workspace: keep,
        commit: Some(commit),
    })
}

/// The standpoint given to `reviewer`, if any.
fn standpoint_of<'a>(standpoints: &'a [Standpoint], reviewer: &str) -> Option<&'a str> {
    standpoints
        .iter()
        .find(|s| s.reviewer == reviewer)
        .map(|s| s.text.as_str())
}

/// The standpoints recorded in a round (`[{reviewer, text}]`).
fn recorded_standpoints(round: &Round) -> Vec<Standpoint> {
    round
        .standpoints
        .iter()
        .filter_map(|v| {
            Some(Standpoint {
                reviewer: v.get("reviewer")?.as_str()?.to_string(),
                text: v.get("text")?.as_str()?.to_string(),
            })
        })
        .collect()
}

/// Brings the standpoint fields of a round in line with its standpoints ("관점 보고와 기록"):
/// in a round with standpoints every reviewer has `standpoint` and `standpoint_report` (text and
/// report, or null) and `standpoints_uncovered` lists the reviewers of standpoints that no
/// completed reviewer covered; in a round without, none of these is written.
fn settle_standpoints(round: &mut Round) {
    let standpoints = recorded_standpoints(round);
    if standpoints.is_empty() {
        for r in &mut round.reviewers {
            r.standpoint = None;
            r.standpoint_report = None;
        }
        round.standpoints_uncovered = Vec::new();
        return;
    }
    for r in &mut round.reviewers {
        r.standpoint = Some(standpoint_of(&standpoints, &r.name).map(str::to_string));
        if r.standpoint_report.is_none() {
            r.standpoint_report = Some(Value::Null);
        }
    }
    round.standpoints_uncovered = standpoints
        .iter()
        .filter(|s| {
            !round
                .reviewers
                .iter()
                .any(|r| r.name == s.reviewer && r.status == Status::Completed.as_str())
        })
        .map(|s| s.reviewer.clone())
        .collect();
}

/// The copies are read-only; make them writable again so the folder can go.
fn make_writable_and_remove(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fn walk(d: &Path) -> std::io::Result<()> {
        for e in std::fs::read_dir(d)? {
            let e = e?;
            let p = e.path();
            let ft = e.file_type()?;
            if ft.is_dir() {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
                walk(&p)?;
            }
        }
        Ok(())
    }
    walk(dir)?;
    std::fs::remove_dir_all(dir)
}

/// What the packet is made of. The round's name is not part of it, so a re-run of the same
/// inputs has the same `packet_sha256`.
struct PacketInput<'a> {
    series: &'a str,
    stage: &'a str,
    base: ObjectId,
    head: ObjectId,
    angles: &'a [Angle],
    check_paths: &'a [String],
    rules: &'a [(Document, String)],
    criteria: Option<(&'a Document, &'a str)>,
    subject: Option<(&'a Document, &'a str)>,
    /// The user's decisions (G35); no section without any.
    decisions: &'a [Decision],
    /// The round's standpoints; no section without any.
    standpoints: &'a [Standpoint],
}

fn fenced(text: &str) -> String {
    let mut fence = "```".to_string();
    while text.contains(&fence) {
        fence.push('`');
    }
    format!(
        "{fence}\n{}{}{fence}\n",
        text,
        if text.ends_with('\n') { "" } else { "\n" }
    )
}

/// `packet.md`: what every reviewer gets.
fn render_packet(store: &Store, p: &PacketInput<'_>) -> Result<String> {
    let range = format!("{}..{}", p.base, p.head);
    let stat = store.git(&["diff", "--no-color", "--no-ext-diff", "--stat", &range])?;
    let diff = store.git(&["diff", "--no-color", "--no-ext-diff", &range])?;
    let mut s = format!(
        "# Review packet: {} ({})\n\n- base: {}\n- head: {}\n\nYou review the change from base to head. The copies are read-only: `base/` and `head/` in your workspace. Read them, and nothing outside the workspace.\n\n",
        p.series, p.stage, p.base, p.head
    );
    s.push_str("## How to report\n\nAnswer with exactly one JSON object that validates against `schema.json`: `reviewed_head` (the head id above, at least 7 characters), `verdict` (no_blocking_findings, blocking_findings or could_not_review), `angles_checked` [{angle, result}], `angles_unchecked` [{angle, reason}] (every angle below in one of the two), `findings`, `limits`.\n\nA finding's `location` is `path`, `path:line` or `path:line-line` with the path as in the copies (`head/`, `base/` or `./` in front is fine; no prefix means head, then base); anything after the line must be separated by a space, a comma or a semicolon. A location that names nothing in the copies is an unreadable location. A `rule` link names a rule document below (`name:line` or `name:line-line`), a `contract` link a rule document or a file of the head commit, a `criterion` link the `AC-<n>` ids of the criteria document; a link that cannot be confirmed counts as no link.\n\n");
    s.push_str("## Angles to check\n\n");
    for a in p.angles {
        s.push_str(&format!("- {}\n", a.as_str()));
    }
    s.push_str("\n## Check paths\n\n");
    if p.check_paths.is_empty() {
        s.push_str("None configured.\n");
    } else {
        s.push_str("Findings in these paths are about the checks themselves:\n\n");
        for c in p.check_paths {
            s.push_str(&format!("- `{c}`\n"));
        }
    }
    if !p.rules.is_empty() {
        s.push_str("\n## Rule documents\n");
        for (d, text) in p.rules {
            s.push_str(&format!("\n### {}\n\n", d.name()));
            s.push_str(&fenced(text));
        }
    }
    if let Some((d, text)) = p.criteria {
        s.push_str(&format!("\n## Criteria: {}\n\n", d.name()));
        s.push_str(&fenced(text));
    }
    if let Some((d, text)) = p.subject {
        s.push_str(&format!("\n## Subject: {}\n\n", d.name()));
        s.push_str(&fenced(text));
    }
    if !p.decisions.is_empty() {
        s.push_str("\n## Decisions the user made\n\nThe user decided these, in their own words. Do not ask for them to be decided again.\n");
        for (i, d) in p.decisions.iter().enumerate() {
            s.push_str(&format!("\n### Decision {}\n\n", i + 1));
            s.push_str(&fenced(&d.decision));
            s.push_str("\nThe user's words:\n\n");
            s.push_str(&fenced(&d.quote));
        }
    }
    if !p.standpoints.is_empty() {
        s.push_str("\n## Standpoints for this round\n\nEach reviewer below attacks its risk while checking every angle; a reviewer without one reviews the whole change.\n");
        for sp in p.standpoints {
            s.push_str(&format!("\n### {}\n\n", sp.reviewer));
            s.push_str(&fenced(&sp.text));
        }
    }
    s.push_str("\n## The change\n\n");
    s.push_str(&fenced(&stat));
    s.push('\n');
    s.push_str(&fenced(&diff));
    Ok(s)
}

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
fn read_bounded(file: &Path, option: &str, limit: u64) -> Result<String> {
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
    series: &str,
    round_name: &str,
    reviewer: &str,
    input: &RecordInput,
    progress: &mut dyn FnMut(&str),
) -> Result<RecordOutcome> {
    check_series(series)?;
    let (option, file) = match input {
        RecordInput::Result(f) => ("--result", f),
        RecordInput::Transcript(f) => ("--transcript", f),
    };
    let limit = match input {
        RecordInput::Result(_) => RESULT_LIMIT,
        RecordInput::Transcript(_) => TRANSCRIPT_LIMIT,
    };
    let raw = read_bounded(file, option, limit)?;
    let _lock = store::lock(
        store.common_dir(),
        &format!("spar/locks/{series}.lock"),
        || {
            progress(&format!(
                "spar: waiting for another write of {series} to finish"
            ))
        },
    )?;
    // Re-read under the lock (G33).
    let mut round = record::load_round(store, series, round_name)?;
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
    if current.status == Status::Completed.as_str() {
        let found = record::load_findings(store, series, round_name)?
            .iter()
            .filter(|f| f.reviewer == reviewer)
            .count();
        return Err(Error::refused(format!(
            "{series}: round {round_name}: {} already completed (verdict {}, {found} finding{}); a completed result is never replaced",
            config::quote(reviewer),
            current.verdict.as_deref().unwrap_or("none"),
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
    let check_paths: Vec<String> = round.config["check_paths"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
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
        let ws = store
            .common_dir()
            .join("spar/workspaces")
            .join(series)
            .join(round_name);
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
            rec.status = Status::InvalidOutput.as_str().into();
            rec.reason = "the transcript holds no StructuredOutput call and no final answer".into();
        }
        Err(invalid) => {
            rec.status = Status::InvalidOutput.as_str().into();
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
                    let ids: Vec<String> = round.links["criteria_ids"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|v| v.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
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
    // The reviewer's warnings are those of its newest record.
    let prefix = format!("{reviewer}: ");
    round.warnings.retain(|w| !w.starts_with(&prefix));
    round.warnings.extend(warnings);
    settle_standpoints(&mut round);
    let rec = round.reviewers[idx].clone();
    let mut findings: Vec<Finding> = record::load_findings(store, series, round_name)?
        .into_iter()
        .filter(|f| f.reviewer != reviewer)
        .collect();
    findings.extend(new_findings.iter().cloned());
    let mut ledger =
        record::round_file(store, series, round_name, "ledger.jsonl")?.unwrap_or_default();
    ledger.extend(record::jsonl(&ledger_lines(&new_findings)));
    let summary_md = summary::render(&round, &findings);
    let files = vec![
        ("round.json".to_string(), record::pretty(&round)),
        ("findings.json".to_string(), record::pretty(&findings)),
        ("ledger.jsonl".to_string(), ledger),
        ("summary.md".to_string(), summary_md.clone().into_bytes()),
        (format!("{reviewer}/output.txt"), raw.into_bytes()),
    ];
    let tip = record::series_tip(store, series)?;
    record::write_round(
        store,
        series,
        round_name,
        tip,
        files,
        &format!("spar {series} {round_name}: record {reviewer}"),
        &[("Spar-Reviewer", reviewer.to_string())],
    )?
    .ok_or_else(|| {
        Error::internal(format!(
            "{} moved while the result was written",
            record::series_ref(series)
        ))
    })?;
    store.note_append(refs::NOTES_SPAR, head, &summary_md)?;
    // The workspace was kept for the pending reviewers; once none is, it goes.
    if !round
        .reviewers
        .iter()
        .any(|r| r.status == Status::Pending.as_str())
    {
        let ws = store
            .common_dir()
            .join("spar/workspaces")
            .join(series)
            .join(round_name);
        if ws.exists() {
            let _ = make_writable_and_remove(&ws);
        }
    }
    Ok(RecordOutcome {
        round,
        reviewer: rec,
        findings: new_findings,
    })
}
