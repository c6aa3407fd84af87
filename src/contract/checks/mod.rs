//! Running DoD checks, environment prerequisites and runtime commands against real things.
//!
//! Every check runs the thing it is about: a command is run, a URL is requested, a database is
//! queried, a port is connected to. Paths are relative to the repository's top level (`root`).
//! Nothing here panics on user input: whatever goes wrong becomes a [`Status::Fail`] (the
//! criterion does not hold) or a [`Status::Error`] (the check could not be carried out).

//!
//! One file a kind of check (`file_exists`, `command`, `regex_in_file`, `http`, `db_query`,
//! `port`, `artifact_schema`, `manual_checklist`, `environment`); this file holds the outcome
//! type, the dispatch from a spec to its kind, and the small helpers the kinds share. A new
//! check kind: its spec in `contract::schema`, a file here, one arm in [`run_check_reading`].

mod artifact_schema;
mod command;
mod db_query;
mod environment;
mod file_exists;
mod http;
mod manual_checklist;
mod port;
mod regex_in_file;
#[cfg(test)]
mod tests;

use artifact_schema::*;
use command::*;
use db_query::*;
use environment::*;
use file_exists::*;
use http::*;
pub use manual_checklist::checklist_item_texts;
use manual_checklist::*;
use port::*;
use regex_in_file::*;

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use regex::{Regex, RegexBuilder};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::schema::{
    ArtifactSchemaSpec, CheckSpec, ChecklistSpec, CommandExistsSpec, CommandSpec, CompareOp,
    DbDriver, DbQuerySpec, EnvVarSpec, FileExistsSpec, FileType, HttpReachableSpec, HttpSpec,
    PortSpec, PrereqSpec, RegexSpec, RuntimeCommand,
};
use crate::process::{self, RunResult};

/// `command_success` timeout when the spec gives none.
pub const DEFAULT_COMMAND_TIMEOUT_MS: u64 = 60_000;
/// `http_status` per-request timeout when the spec gives none.
pub const DEFAULT_HTTP_TIMEOUT_MS: u64 = 10_000;
/// `http_reachable` timeout when the spec gives none.
pub const DEFAULT_REACHABLE_TIMEOUT_MS: u64 = 5_000;
/// Pause between two `http_status` attempts while `retryForMs` lasts.
const HTTP_RETRY_PAUSE: Duration = Duration::from_millis(200);
/// How long one TCP connection attempt may take (`process_listening`, `port_open`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a `db_query` waits for a locked SQLite database.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest line or message quoted in a summary or in evidence.
const QUOTE_CHARS: usize = 500;

/// How one check, prerequisite or runtime command came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The thing checked holds.
    Pass,
    /// The thing checked does not hold: the criterion is failing.
    Fail,
    /// The check could not be carried out (command not found or not executable (126/127),
    /// a spec that cannot be used, a schema file that is not a schema). Not a pass, and not the
    /// criterion failing either.
    Error,
}

/// The result of running one check (read back as JSON from the sibling for `db_query`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    pub status: Status,
    /// One line for people: what was seen (`exit 0 in 0.2s`, `status 503`, `3 unticked items`).
    pub summary: String,
    /// What was recorded, per the kind's "evidence recorded" column of the spec.
    pub evidence: Value,
    pub duration_ms: u64,
    /// How many secret values were replaced in the summary and the evidence (also written
    /// into the evidence as `redacted`, and said at the end of the summary).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub redacted: usize,
    /// Replaced while the command's output was read (`process::run_shell`), not yet said in
    /// the summary.
    #[serde(skip)]
    streamed: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Outcome {
    fn new(status: Status, summary: impl Into<String>, evidence: Value) -> Self {
        Outcome {
            status,
            summary: summary.into(),
            evidence,
            duration_ms: 0,
            redacted: 0,
            streamed: 0,
        }
    }

    fn pass(summary: impl Into<String>, evidence: Value) -> Self {
        Outcome::new(Status::Pass, summary, evidence)
    }

    fn fail(summary: impl Into<String>, evidence: Value) -> Self {
        Outcome::new(Status::Fail, summary, evidence)
    }

    /// The check could not be carried out.
    pub fn error(summary: impl Into<String>, evidence: Value) -> Self {
        Outcome::new(Status::Error, summary, evidence)
    }

    /// Pass when `ok`, else Fail.
    fn pass_if(ok: bool, summary: impl Into<String>, evidence: Value) -> Self {
        let status = if ok { Status::Pass } else { Status::Fail };
        Outcome::new(status, summary, evidence)
    }

    pub fn passed(&self) -> bool {
        self.status == Status::Pass
    }
}

/// What a check reads from its records instead of the work tree (see `contract::pinned`).
/// The default reads everything from the work tree, as a draft's checks do.
#[derive(Debug, Default, Clone, Copy)]
pub struct Reads<'a> {
    /// The files frozen with the contract (schemas and what they `$ref`), by repository path.
    /// Some: an `artifact_schema` validates against these only.
    pub files: Option<&'a BTreeMap<String, Vec<u8>>>,
    /// A `manual_checklist`'s items as frozen (its spec's own `items` come first).
    pub checklist_items: Option<&'a [String]>,
    /// The checklist's text to judge (its committed content) instead of the work tree's.
    pub checklist_text: Option<&'a [u8]>,
}

/// Runs one DoD check, reading everything from the work tree.
pub fn run_check(spec: &CheckSpec, root: &Path) -> Outcome {
    run_check_reading(spec, root, Reads::default())
}

/// Runs one DoD check, reading what `reads` gives from there. A path of the spec that leaves
/// the repository is refused here too, not only at freeze (`contract::confine`): a frozen
/// version can be written with plain git, and a tracked symbolic link can change.
pub fn run_check_reading(spec: &CheckSpec, root: &Path, reads: Reads<'_>) -> Outcome {
    if let Some(why) = super::confine::spec_problem(spec, root) {
        return Outcome::error(
            format!("refused: {why}; nothing was read"),
            json!({ "confined": why }),
        );
    }
    timed(|| match spec {
        CheckSpec::FileExists(s) => file_exists(s, root),
        CheckSpec::CommandSuccess(s) => command_success(s, root),
        CheckSpec::RegexInFile(s) => regex_in_file(s, root),
        CheckSpec::HttpStatus(s) => http_status(s),
        CheckSpec::DbQuery(s) => db_query(s, root),
        CheckSpec::ProcessListening(s) => tcp_listening(s),
        CheckSpec::ArtifactSchema(s) => artifact_schema(s, root, reads.files),
        CheckSpec::ManualChecklist(s) => manual_checklist(s, root, reads),
    })
}

/// Runs a `db_query` check in this process, with the drivers linked in: what
/// `rails-spar-extras db-query` calls. Everything else runs it through [`run_check`], which
/// hands it to that executable.
pub fn run_db_query_here(spec: &DbQuerySpec, root: &Path) -> Outcome {
    if let Some(why) = super::confine::spec_problem(&CheckSpec::DbQuery(spec.clone()), root) {
        return Outcome::error(format!("refused: {why}; nothing was read"), json!({}));
    }
    timed(|| db_query_here(spec, root))
}

/// Runs one environment prerequisite.
pub fn run_prerequisite(spec: &PrereqSpec, root: &Path) -> Outcome {
    timed(|| match spec {
        PrereqSpec::CommandExists(s) => command_exists(s, root),
        PrereqSpec::PortOpen(s) => tcp_listening(s),
        PrereqSpec::EnvVar(s) => {
            // Its value is never recorded: nor may a check's output carry it.
            crate::redact::mark_secret_name(&s.name);
            env_var(s)
        }
        PrereqSpec::FileExists(s) => path_exists(&s.path, root),
        PrereqSpec::HttpReachable(s) => http_reachable(s),
    })
}

/// Runs one `runtimeValidation` command: `sh -c` in `root` (or its `cwd`), like
/// `command_success`.
pub fn run_runtime_command(cmd: &RuntimeCommand, root: &Path) -> Outcome {
    if let Some(why) = super::confine::runtime_problem(cmd, root) {
        return Outcome::error(format!("refused: {why}; nothing was run"), json!({}));
    }
    timed(|| {
        run_command(
            &cmd.command,
            cmd.cwd.as_deref(),
            cmd.env.as_ref(),
            cmd.timeout_ms,
            cmd.expect_exit_code,
            root,
        )
    })
}

/// Runs `f`, records how long it took, and redacts what it saw ([`redacted`]).
fn timed(f: impl FnOnce() -> Outcome) -> Outcome {
    let start = Instant::now();
    let mut outcome = redacted(f());
    outcome.duration_ms = millis(start.elapsed());
    outcome
}

/// Keys of a check's evidence that hold no free text (paths, codes, ids): never redacted.
const NOT_FREE_TEXT: &[&str] = &["path", "schema", "cwd", "driver", "confined"];

/// Every outcome passes the redactor before anything writes it (`crate::redact`): the summary
/// and the evidence's free text (output tails, matched lines, response bodies, query results),
/// counted in `redacted` and said in the summary ("2 values redacted"), never the values.
fn redacted(mut o: Outcome) -> Outcome {
    let r = crate::redact::Redactor::from_env();
    let here = o.streamed + r.in_place(&mut o.summary) + r.json(&mut o.evidence, NOT_FREE_TEXT);
    o.streamed = 0;
    o.redacted += here;
    if let Some(said) = crate::redact::counted(here) {
        o.summary = format!("{}; {said}", o.summary);
    }
    if o.redacted > 0 {
        if let Value::Object(m) = &mut o.evidence {
            m.insert("redacted".into(), json!(o.redacted));
        }
    }
    o
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn seconds(d: Duration) -> String {
    format!("{:.2}s", d.as_secs_f64())
}

/// `s` cut to at most `max` characters, with `…` when cut.
fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!("{}…", &s[..at]),
    }
}

/// `"a", "b", "c"` (quoted, at most `max` of them, then `and N more`).
fn quoted_list(items: &[String], max: usize) -> String {
    let mut out = items
        .iter()
        .take(max)
        .map(|i| format!("{:?}", clip(i, 80)))
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > max {
        out.push_str(&format!(" and {} more", items.len() - max));
    }
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
