//! Running the CLI presets (`claude`, `codex`, `agy`): what each is given, how its event
//! stream is read, and what every attempt shares — finding the executable (G14), the version
//! check inside the timeout (G19), the refusal phrases (G13, §5) with one retry on the fallback
//! model after a quota refusal, the tool watch (G10, G11) and the observed model (G12).
//!
//! - [`claude`], [`codex`], [`agy`]: the command line and the stream parser of each CLI.
//! - [`native`]: a Claude Code transcript recorded for a native reviewer (G15).
//! - [`shell`]: the G11 shell-line check.
//! - [`refusal`]: the §5 phrases.
//! - [`sarif`]: a linter that writes SARIF, as a reviewer.

pub mod agy;
pub mod claude;
pub mod codex;
pub mod native;
pub mod refusal;
pub mod sarif;
pub mod shell;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::now;

use super::config::{Preset, SelectedReviewer};
use super::vocab::Status;

/// The version check never takes longer than this (G19), and always fits the attempt's timeout.
pub const VERSION_CHECK_LIMIT: Duration = Duration::from_secs(30);

/// What one CLI is started with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The executable first.
    pub argv: Vec<String>,
    /// Added to the inherited environment.
    pub env: Vec<(String, String)>,
    pub stdin: Vec<u8>,
}

/// What a preset needs to build its command line.
pub struct LaunchContext<'a> {
    pub exe: &'a Path,
    pub workspace: &'a Path,
    /// The reviewer's input (the packet, plus its standpoint instruction in a round with
    /// standpoints).
    pub input: &'a str,
    /// The round's `schema.json`, compact.
    pub schema: &'a str,
    pub model: Option<&'a str>,
    pub effort: Option<&'a str>,
}

/// What one attempt's output said, read by the preset's parser.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// The result JSON text, when the stream carried one.
    pub result: Option<String>,
    /// Why the stream's final answer is out of form (→ `invalid_output`).
    pub invalid: Option<String>,
    /// The model the output named (G12).
    pub observed_model: Option<String>,
    /// The first tool use outside the preset's list (G10, G11).
    pub violation: Option<String>,
    /// Error messages in the output, searched for refusal phrases (§5).
    pub errors: Vec<String>,
    /// The stream said the run failed (an error result, a failed turn).
    pub failed: bool,
}

impl Outcome {
    /// Keeps the first violation.
    pub fn violate(&mut self, why: String) {
        if self.violation.is_none() {
            self.violation = Some(why);
        }
    }

    /// Keeps a model name the output named, unless it is a placeholder.
    pub fn observe(&mut self, model: &str) {
        let m = model.trim();
        if !m.is_empty() && !m.starts_with('<') {
            self.observed_model = Some(m.to_string());
        }
    }
}

/// A preset's reader of its CLI's stdout, one line at a time.
pub trait StreamParser {
    /// Reads one line; returns a short description of the event for the progress log.
    fn line(&mut self, line: &str) -> Option<String>;
    /// What the whole stream said (and, for codex, the session log it names).
    fn finish(self: Box<Self>) -> Outcome;
}

fn parser(preset: Preset) -> Box<dyn StreamParser> {
    match preset {
        Preset::Claude => Box::new(claude::Parser::default()),
        Preset::Codex => Box::new(codex::Parser::new(codex::codex_home())),
        _ => Box::<agy::Parser>::default(),
    }
}

/// The command line of `preset` (claude, codex or agy).
pub fn launch(preset: Preset, ctx: &LaunchContext<'_>) -> Launch {
    match preset {
        Preset::Claude => claude::launch(ctx),
        Preset::Codex => codex::launch(ctx),
        _ => agy::launch(ctx),
    }
}

/// How a CLI reviewer came out, before its result is checked (G1–G6).
#[derive(Debug, Clone, Default)]
pub struct CliReview {
    /// `None` while the result still has to be checked.
    pub status: Option<Status>,
    pub reason: String,
    pub attempts: Vec<Value>,
    pub observed_model: Option<String>,
    pub resets: Option<String>,
    pub result: Option<String>,
    /// The stdout and stderr of the last attempt.
    pub stdout: String,
    pub stderr: String,
}

/// The last non-empty line of `text`.
fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// Runs a claude, codex or agy reviewer: up to two attempts (the second only on the fallback
/// model after a quota refusal), each with the version check and the run inside one timeout.
/// `report` gets one short text per event.
pub fn run_cli(
    sel: &SelectedReviewer,
    exe: &Path,
    workspace: &Path,
    input: &str,
    schema: &str,
    report: &mut dyn FnMut(&str),
) -> CliReview {
    let preset = sel.preset();
    let timeout = Duration::from_secs(sel.timeout_seconds());
    let mut out = CliReview::default();
    let mut model = sel.model.as_ref().map(|m| m.value.clone());
    let effort = sel.effort.as_ref().map(|e| e.value.clone());
    for n in 1..=2 {
        let started = Instant::now();
        let mut attempt = Map::new();
        attempt.insert("started_at".into(), json!(now()));
        if let Some(m) = &model {
            attempt.insert("model".into(), json!(m));
        }
        report(&format!(
            "attempt {n}{}",
            model
                .as_deref()
                .map(|m| format!(" (model {m})"))
                .unwrap_or_default()
        ));
        // G19: the version check is part of the attempt, at most 30 s.
        let version_limit = timeout.min(VERSION_CHECK_LIMIT);
        let v = crate::process::run_argv(
            &[exe.to_string_lossy().into_owned(), "--version".into()],
            workspace,
            &[],
            b"",
            version_limit,
        );
        let version = last_line(&v.stdout_tail).to_string();
        if !version.is_empty() {
            attempt.insert("version".into(), json!(version));
        }
        let finish = |attempt: &mut Map<String, Value>, exit: Option<i32>, timed_out: bool| {
            attempt.insert("exit_code".into(), json!(exit));
            attempt.insert("timed_out".into(), json!(timed_out));
            attempt.insert(
                "duration_ms".into(),
                json!(started.elapsed().as_millis() as u64),
            );
        };
        if v.timed_out || v.spawn_error.is_some() || v.exit_code != Some(0) {
            finish(&mut attempt, None, v.timed_out);
            out.status = Some(Status::Failed);
            out.reason = if v.timed_out && version_limit < timeout {
                format!(
                    "the version check `{} --version` took longer than {} s",
                    exe.display(),
                    VERSION_CHECK_LIMIT.as_secs()
                )
            } else if v.timed_out {
                format!(
                    "timed out after {} s in the version check `{} --version`; its process group was killed",
                    sel.timeout_seconds(),
                    exe.display()
                )
            } else {
                let tail = last_line(&v.stderr_tail);
                format!(
                    "the version check `{} --version` failed: {}{}",
                    exe.display(),
                    v.describe(),
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!(": {tail}")
                    }
                )
            };
            attempt.insert("reason".into(), json!(out.reason));
            out.attempts.push(Value::Object(attempt));
            out.stdout = v.stdout_tail;
            out.stderr = v.stderr_tail;
            return out;
        }
        report(&format!("version {version}"));
        let ctx = LaunchContext {
            exe,
            workspace,
            input,
            schema,
            model: model.as_deref(),
            effort: effort.as_deref(),
        };
        let l = launch(preset, &ctx);
        let env: Vec<(&str, &str)> = l
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let left = timeout.saturating_sub(started.elapsed());
        let mut p = parser(preset);
        let r = crate::process::run_argv_streaming(
            &l.argv,
            workspace,
            &env,
            &l.stdin,
            left,
            &mut |line| {
                if let Some(e) = p.line(line) {
                    report(&e);
                }
            },
        );
        let o = p.finish();
        finish(&mut attempt, r.exit_code, r.timed_out);
        if let Some(m) = &o.observed_model {
            attempt.insert("observed_model".into(), json!(m));
            out.observed_model = Some(m.clone());
        }
        out.stdout = r.stdout_tail.clone();
        out.stderr = r.stderr_tail.clone();
        let mut retry = false;
        if r.timed_out {
            out.status = Some(Status::Failed);
            out.reason = format!(
                "timed out after {} s; its process group was killed",
                sel.timeout_seconds()
            );
        } else if let Some(v) = &o.violation {
            out.status = Some(Status::ToolViolation);
            out.reason = v.clone();
        } else if let Some(e) = &r.spawn_error {
            out.status = Some(Status::Failed);
            out.reason = format!("could not start: {e}");
        } else if r.exit_code != Some(0) || o.failed || (o.result.is_none() && o.invalid.is_none())
        {
            let mut text = r.stderr_tail.clone();
            for e in &o.errors {
                text.push('\n');
                text.push_str(e);
            }
            if let Some(f) = refusal::find_refusal(&text) {
                attempt.insert("refusal".into(), json!(f.kind.as_str()));
                if let Some(at) = &f.resets {
                    attempt.insert("resets".into(), json!(at));
                    out.resets = Some(at.clone());
                }
                out.status = Some(Status::Unavailable);
                out.reason = f.reason();
                if f.kind == refusal::RefusalKind::Quota && n == 1 {
                    if let Some(fb) = sel.fallback_model() {
                        if model.as_deref() != Some(fb) {
                            retry = true;
                            model = Some(fb.to_string());
                        }
                    }
                }
            } else {
                out.status = Some(Status::Failed);
                let why = o
                    .errors
                    .last()
                    .map(|e| last_line(e).to_string())
                    .filter(|e| !e.is_empty())
                    .unwrap_or_else(|| last_line(&r.stderr_tail).to_string());
                let what = if r.exit_code == Some(0) && !o.failed {
                    "ended without a result".to_string()
                } else {
                    r.describe()
                };
                out.reason = if why.is_empty() {
                    what
                } else {
                    format!("{what}: {why}")
                };
            }
        } else if let Some(why) = &o.invalid {
            out.status = Some(Status::InvalidOutput);
            out.reason = why.clone();
        } else {
            out.status = None;
            out.reason = String::new();
            out.result = o.result.clone();
        }
        if !out.reason.is_empty() {
            attempt.insert("reason".into(), json!(out.reason));
        }
        out.attempts.push(Value::Object(attempt));
        if !retry {
            break;
        }
        report(&format!(
            "{}; retrying once with the fallback model",
            out.reason
        ));
    }
    out
}

/// Where a reviewer's executable is for a preset that runs one (G14): `Ok` is the file to run.
pub fn executable(sel: &SelectedReviewer) -> Result<PathBuf, (Status, String)> {
    let exe = sel.executable().unwrap_or(sel.preset().as_str());
    match super::config::find_executable(exe, std::env::var_os("PATH").as_deref())? {
        // The reviewer runs in the workspace: a relative path names the file it was checked as.
        p if p.is_relative() => Ok(std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)),
        p => Ok(p),
    }
}

/// A JSON value's string field.
pub(crate) fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}
