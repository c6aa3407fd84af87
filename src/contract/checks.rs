//! Running DoD checks, environment prerequisites and runtime commands against real things.
//!
//! Every check runs the thing it is about: a command is run, a URL is requested, a database is
//! queried, a port is connected to. Paths are relative to the repository's top level (`root`).
//! Nothing here panics on user input: whatever goes wrong becomes a [`Status::Fail`] (the
//! criterion does not hold) or a [`Status::Error`] (the check could not be carried out).

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

/// The result of running one check.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub status: Status,
    /// One line for people: what was seen (`exit 0 in 0.2s`, `status 503`, `3 unticked items`).
    pub summary: String,
    /// What was recorded, per the kind's "evidence recorded" column of the spec.
    pub evidence: Value,
    pub duration_ms: u64,
}

impl Outcome {
    fn new(status: Status, summary: impl Into<String>, evidence: Value) -> Self {
        Outcome {
            status,
            summary: summary.into(),
            evidence,
            duration_ms: 0,
        }
    }

    fn pass(summary: impl Into<String>, evidence: Value) -> Self {
        Outcome::new(Status::Pass, summary, evidence)
    }

    fn fail(summary: impl Into<String>, evidence: Value) -> Self {
        Outcome::new(Status::Fail, summary, evidence)
    }

    fn error(summary: impl Into<String>, evidence: Value) -> Self {
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

/// Runs one DoD check, reading what `reads` gives from there.
pub fn run_check_reading(spec: &CheckSpec, root: &Path, reads: Reads<'_>) -> Outcome {
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

/// Runs one environment prerequisite.
pub fn run_prerequisite(spec: &PrereqSpec, root: &Path) -> Outcome {
    timed(|| match spec {
        PrereqSpec::CommandExists(s) => command_exists(s, root),
        PrereqSpec::PortOpen(s) => tcp_listening(s),
        PrereqSpec::EnvVar(s) => env_var(s),
        PrereqSpec::FileExists(s) => path_exists(&s.path, root),
        PrereqSpec::HttpReachable(s) => http_reachable(s),
    })
}

/// Runs one `runtimeValidation` command: `sh -c` in `root` (or its `cwd`), like
/// `command_success`.
pub fn run_runtime_command(cmd: &RuntimeCommand, root: &Path) -> Outcome {
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

/// Runs `f` and records how long it took.
fn timed(f: impl FnOnce() -> Outcome) -> Outcome {
    let start = Instant::now();
    let mut outcome = f();
    outcome.duration_ms = millis(start.elapsed());
    outcome
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

// ---------------------------------------------------------------------------------------------
// file_exists

fn file_exists(spec: &FileExistsSpec, root: &Path) -> Outcome {
    let full = root.join(&spec.path);
    let path = spec.path.as_str();
    let meta = match fs::metadata(&full) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Outcome::fail(
                format!("{path:?} is missing"),
                json!({"path": path, "type": null, "size": null}),
            )
        }
        Err(e) => {
            return Outcome::error(
                format!("cannot read {path:?}: {e}"),
                json!({"path": path, "type": null, "size": null}),
            )
        }
    };
    let found = if meta.is_dir() {
        "dir"
    } else if meta.is_file() {
        "file"
    } else {
        "other"
    };
    let evidence = json!({"path": path, "type": found, "size": meta.len()});
    let wanted = spec.file_type.map(|t| match t {
        FileType::File => "file",
        FileType::Dir => "dir",
    });
    match wanted {
        Some(want) if want != found => {
            Outcome::fail(format!("{path:?} is a {found}, not a {want}"), evidence)
        }
        _ if found == "dir" => Outcome::pass(format!("{path:?} is a directory"), evidence),
        _ => Outcome::pass(
            format!(
                "{path:?} exists ({})",
                plural(meta.len() as usize, "byte", "bytes")
            ),
            evidence,
        ),
    }
}

/// The `file_exists` prerequisite: the path exists, whatever its type.
fn path_exists(path: &str, root: &Path) -> Outcome {
    file_exists(
        &FileExistsSpec {
            path: path.to_string(),
            file_type: None,
        },
        root,
    )
}

// ---------------------------------------------------------------------------------------------
// command_success and runtime commands

fn command_success(spec: &CommandSpec, root: &Path) -> Outcome {
    run_command(
        &spec.command,
        spec.cwd.as_deref(),
        spec.env.as_ref(),
        spec.timeout_ms.unwrap_or(DEFAULT_COMMAND_TIMEOUT_MS),
        spec.expect_exit_code.unwrap_or(0),
        root,
    )
}

fn run_command(
    command: &str,
    cwd: Option<&str>,
    env: Option<&BTreeMap<String, String>>,
    timeout_ms: u64,
    expect: i32,
    root: &Path,
) -> Outcome {
    let dir = cwd.map_or_else(|| root.to_path_buf(), |c| root.join(c));
    let empty = BTreeMap::new();
    let run = process::run_shell(
        command,
        &dir,
        env.unwrap_or(&empty),
        Duration::from_millis(timeout_ms),
    );
    let evidence = json!({
        "exitCode": run.exit_code,
        "signal": run.signal,
        "timedOut": run.timed_out,
        "durationMs": millis(run.duration),
        "expectExitCode": expect,
        "stdoutTail": run.stdout_tail,
        "stderrTail": run.stderr_tail,
    });
    let took = seconds(run.duration);
    if let Some(e) = &run.spawn_error {
        return Outcome::error(format!("could not start the command: {e}"), evidence);
    }
    if run.timed_out {
        return Outcome::fail(
            format!("timed out after {took} (limit {timeout_ms}ms); process group killed"),
            evidence,
        );
    }
    match run.exit_code {
        Some(code) if code == expect => Outcome::pass(format!("exit {code} in {took}"), evidence),
        Some(code @ (126 | 127)) => {
            let why = if code == 127 {
                "command not found"
            } else {
                "command not executable"
            };
            Outcome::error(
                format!("exit {code} ({why}) in {took}{}", last_line_hint(&run)),
                evidence,
            )
        }
        Some(code) => Outcome::fail(
            format!(
                "exit {code} in {took}, expected {expect}{}",
                last_line_hint(&run)
            ),
            evidence,
        ),
        None => Outcome::fail(
            format!("{} after {took}, expected exit {expect}", run.describe()),
            evidence,
        ),
    }
}

/// `: <last line of stderr>` (or of stdout when stderr is empty), to say why in one line.
fn last_line_hint(run: &RunResult) -> String {
    [&run.stderr_tail, &run.stdout_tail]
        .into_iter()
        .find_map(|s| s.lines().rev().map(str::trim).find(|l| !l.is_empty()))
        .map_or_else(String::new, |l| format!(": {}", clip(l, 160)))
}

// ---------------------------------------------------------------------------------------------
// regex_in_file

/// Reads a file under `root`: `Err(Fail)` when it is missing, `Err(Error)` when it cannot be
/// read.
fn read_file(path: &str, root: &Path, evidence: &Value) -> Result<Vec<u8>, Box<Outcome>> {
    fs::read(root.join(path)).map_err(|e| {
        Box::new(if e.kind() == io::ErrorKind::NotFound {
            Outcome::fail(format!("{path:?} is missing"), evidence.clone())
        } else {
            Outcome::error(format!("cannot read {path:?}: {e}"), evidence.clone())
        })
    })
}

fn regex_in_file(spec: &RegexSpec, root: &Path) -> Outcome {
    let path = spec.path.as_str();
    let negate = spec.negate.unwrap_or(false);
    let no_match = json!({"path": path, "matched": false, "line": null, "text": null});
    let re = match RegexBuilder::new(&spec.pattern).multi_line(true).build() {
        Ok(re) => re,
        Err(e) => return Outcome::error(format!("invalid regex: {e}"), no_match),
    };
    let bytes = match read_file(path, root, &no_match) {
        Ok(b) => b,
        Err(o) => return *o,
    };
    let text = String::from_utf8_lossy(&bytes);
    let Some(m) = re.find(&text) else {
        return Outcome::pass_if(
            negate,
            format!("/{}/ does not match in {path:?}", spec.pattern),
            no_match,
        );
    };
    let line_no = text[..m.start()].matches('\n').count() + 1;
    let line_start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let line = clip(
        text[line_start..line_end].trim_end_matches('\r'),
        QUOTE_CHARS,
    );
    let evidence = json!({"path": path, "matched": true, "line": line_no, "text": line});
    if negate {
        Outcome::fail(
            format!(
                "/{}/ matches {path:?} line {line_no}: {}",
                spec.pattern,
                clip(line.trim(), 120)
            ),
            evidence,
        )
    } else {
        Outcome::pass(format!("matches {path}:{line_no}"), evidence)
    }
}

// ---------------------------------------------------------------------------------------------
// http_status and http_reachable

/// What one HTTP request came to.
enum HttpAttempt {
    Status(u16),
    /// Nothing answered (refused, timed out, host not found, broken response): worth a retry.
    Unreachable(String),
    /// The request cannot be made at all (bad URL or method): no retry helps.
    Unusable(String),
}

fn http_agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        // The status of the URL itself, not of wherever it redirects to.
        .max_redirects(0)
        .timeout_global(Some(timeout))
        .build()
        .new_agent()
}

/// An https URL cannot be requested: this binary has no TLS.
fn tls_refusal(url: &str) -> Option<String> {
    url.get(..8)
        .filter(|s| s.eq_ignore_ascii_case("https://"))
        .map(|_| {
            format!("{url} is https, and TLS is not built into this binary; use an http:// URL")
        })
}

fn http_once(agent: &ureq::Agent, method: &str, url: &str) -> HttpAttempt {
    let method = match ureq::http::Method::from_bytes(method.as_bytes()) {
        Ok(m) => m,
        Err(e) => return HttpAttempt::Unusable(format!("invalid method {method:?}: {e}")),
    };
    let request = match ureq::http::Request::builder()
        .method(method)
        .uri(url)
        .body(())
    {
        Ok(r) => r,
        Err(e) => return HttpAttempt::Unusable(format!("invalid URL {url:?}: {e}")),
    };
    match agent.run(request) {
        Ok(response) => HttpAttempt::Status(response.status().as_u16()),
        Err(e @ (ureq::Error::BadUri(_) | ureq::Error::Http(_) | ureq::Error::TlsRequired)) => {
            HttpAttempt::Unusable(format!("cannot request {url}: {e}"))
        }
        Err(ureq::Error::StatusCode(code)) => HttpAttempt::Status(code),
        Err(e) => HttpAttempt::Unreachable(e.to_string()),
    }
}

fn http_status(spec: &HttpSpec) -> Outcome {
    let url = spec.url.as_str();
    let method = spec.method.as_deref().unwrap_or("GET");
    let expect = spec.expect_status.unwrap_or(200);
    let timeout = Duration::from_millis(spec.timeout_ms.unwrap_or(DEFAULT_HTTP_TIMEOUT_MS));
    let retry_for = Duration::from_millis(spec.retry_for_ms.unwrap_or(0));
    let start = Instant::now();
    let evidence = |status: Option<u16>, attempts: u32| {
        json!({
            "url": url,
            "method": method,
            "expectStatus": expect,
            "status": status,
            "durationMs": millis(start.elapsed()),
            "attempts": attempts,
        })
    };
    if let Some(why) = tls_refusal(url) {
        return Outcome::error(why, evidence(None, 0));
    }
    let agent = http_agent(timeout);
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let attempt = http_once(&agent, method, url);
        match &attempt {
            HttpAttempt::Status(status) if *status == expect => {
                return Outcome::pass(
                    format!(
                        "{method} {url}: status {status} in {}{}",
                        seconds(start.elapsed()),
                        attempts_note(attempts)
                    ),
                    evidence(Some(*status), attempts),
                );
            }
            HttpAttempt::Unusable(why) => {
                return Outcome::error(why.clone(), evidence(None, attempts))
            }
            HttpAttempt::Status(_) | HttpAttempt::Unreachable(_) => {}
        }
        let left = retry_for.saturating_sub(start.elapsed());
        if left.is_zero() {
            let after = plural(attempts as usize, "attempt", "attempts");
            return match attempt {
                HttpAttempt::Status(status) => Outcome::fail(
                    format!("{method} {url}: expected status {expect}, got {status} after {after}"),
                    evidence(Some(status), attempts),
                ),
                HttpAttempt::Unreachable(why) | HttpAttempt::Unusable(why) => Outcome::fail(
                    format!("{method} {url}: no response after {after}: {why}"),
                    evidence(None, attempts),
                ),
            };
        }
        std::thread::sleep(left.min(HTTP_RETRY_PAUSE));
    }
}

fn attempts_note(attempts: u32) -> String {
    if attempts > 1 {
        format!(" ({attempts} attempts)")
    } else {
        String::new()
    }
}

fn http_reachable(spec: &HttpReachableSpec) -> Outcome {
    let url = spec.url.as_str();
    let start = Instant::now();
    let evidence = |status: Option<u16>| json!({"url": url, "status": status, "durationMs": millis(start.elapsed())});
    if let Some(why) = tls_refusal(url) {
        return Outcome::error(why, evidence(None));
    }
    let timeout = Duration::from_millis(spec.timeout_ms.unwrap_or(DEFAULT_REACHABLE_TIMEOUT_MS));
    match http_once(&http_agent(timeout), "GET", url) {
        HttpAttempt::Status(status) => Outcome::pass(
            format!(
                "{url} answered with status {status} in {}",
                seconds(start.elapsed())
            ),
            evidence(Some(status)),
        ),
        HttpAttempt::Unreachable(why) => {
            Outcome::fail(format!("{url} did not answer: {why}"), evidence(None))
        }
        HttpAttempt::Unusable(why) => Outcome::error(why, evidence(None)),
    }
}

// ---------------------------------------------------------------------------------------------
// db_query

fn db_query(spec: &DbQuerySpec, root: &Path) -> Outcome {
    let no_value = json!({"value": null});
    match spec.driver {
        DbDriver::Postgres => match &spec.url {
            None => Outcome::error("a postgres db_query needs a url", no_value),
            Some(url) => postgres_query(spec, url),
        },
        DbDriver::Sqlite => match &spec.path {
            None => Outcome::error("a sqlite db_query needs a path", no_value),
            Some(path) => sqlite_query(spec, path, root),
        },
    }
}

/// The first column of the first row, as read.
#[derive(Debug, Clone, PartialEq)]
enum DbValue {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
}

impl DbValue {
    fn from_ref(v: ValueRef<'_>) -> Self {
        match v {
            ValueRef::Null => DbValue::Null,
            ValueRef::Integer(i) => DbValue::Integer(i),
            ValueRef::Real(f) => DbValue::Real(f),
            ValueRef::Text(t) | ValueRef::Blob(t) => {
                DbValue::Text(String::from_utf8_lossy(t).into_owned())
            }
        }
    }

    fn to_json(&self) -> Value {
        match self {
            DbValue::Null => Value::Null,
            DbValue::Integer(i) => json!(i),
            DbValue::Real(f) => json!(f),
            DbValue::Text(t) => json!(t),
        }
    }
}

/// A number as read from a column or a spec value: integers stay exact.
#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i64),
    Real(f64),
}

impl Num {
    fn parse(s: &str) -> Option<Num> {
        let s = s.trim();
        if let Ok(i) = s.parse::<i64>() {
            return Some(Num::Int(i));
        }
        s.parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(Num::Real)
    }

    fn from_json(v: &Value) -> Option<Num> {
        match v {
            Value::Number(n) => n
                .as_i64()
                .map(Num::Int)
                .or_else(|| n.as_f64().map(Num::Real)),
            Value::String(s) => Num::parse(s),
            _ => None,
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Real(f) => f,
        }
    }

    fn compare(self, other: Num) -> Option<Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }
}

fn op_holds(op: CompareOp, ord: Ordering) -> bool {
    match op {
        CompareOp::Eq => ord == Ordering::Equal,
        CompareOp::Ne => ord != Ordering::Equal,
        CompareOp::Gt => ord == Ordering::Greater,
        CompareOp::Ge => ord != Ordering::Less,
        CompareOp::Lt => ord == Ordering::Less,
        CompareOp::Le => ord != Ordering::Greater,
    }
}

/// How the value read compares with the expected one: numerically when the column is a number
/// (and the expected value is a number or a string that reads as one), or when the column is
/// text that reads as a number and the expected value is a number; as strings otherwise.
/// `None` for NULL, which compares with nothing.
fn compare_db_value(got: &DbValue, want: &Value) -> Option<Ordering> {
    let want_text = match want {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let numeric = |n: Num| match Num::from_json(want) {
        Some(w) => n.compare(w),
        None => Some(got.to_json().to_string().cmp(&want_text)),
    };
    match got {
        DbValue::Null => None,
        DbValue::Integer(i) => numeric(Num::Int(*i)),
        DbValue::Real(f) => numeric(Num::Real(*f)),
        DbValue::Text(t) => match (want, Num::parse(t)) {
            (Value::Number(_), Some(n)) => Num::from_json(want).and_then(|w| n.compare(w)),
            _ => Some(t.as_str().cmp(want_text.as_str())),
        },
    }
}

fn sqlite_query(spec: &DbQuerySpec, path: &str, root: &Path) -> Outcome {
    let no_value = json!({"value": null});
    let full = root.join(path);
    if !full.exists() {
        return Outcome::fail(format!("database {path:?} is missing"), no_value);
    }
    let read = || -> rusqlite::Result<Option<DbValue>> {
        let conn = Connection::open_with_flags(
            &full,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(SQLITE_BUSY_TIMEOUT)?;
        let mut stmt = conn.prepare(&spec.query)?;
        if stmt.column_count() == 0 {
            return Ok(None);
        }
        let mut rows = stmt.query([])?;
        match rows.next()? {
            Some(row) => Ok(Some(DbValue::from_ref(row.get_ref(0)?))),
            None => Ok(None),
        }
    };
    let got = match read() {
        Ok(Some(v)) => v,
        Ok(None) => return Outcome::fail(format!("the query returned no row ({path})"), no_value),
        Err(e) => {
            return Outcome::fail(
                format!("query failed on {path:?}: {}", clip(&e.to_string(), 200)),
                no_value,
            )
        }
    };
    judge(spec, &got)
}

/// Compares the value read with the spec's expectation.
fn judge(spec: &DbQuerySpec, got: &DbValue) -> Outcome {
    let op = spec.expect.op;
    let want = &spec.expect.value;
    let evidence = json!({"value": got.to_json()});
    let shown = clip(&got.to_json().to_string(), 120);
    let wanted = format!("{} {}", op.as_str(), clip(&want.to_string(), 120));
    match compare_db_value(got, want) {
        None => Outcome::fail(
            format!("the query returned NULL, expected {wanted}"),
            evidence,
        ),
        Some(ord) if op_holds(op, ord) => Outcome::pass(format!("{shown} {wanted}"), evidence),
        Some(_) => Outcome::fail(format!("got {shown}, expected {wanted}"), evidence),
    }
}

/// The url without its password, for messages.
fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// Runs the query on PostgreSQL in a read-only session; values are read as text (the simple
/// query protocol), so a number compares numerically with a number in the spec.
fn postgres_query(spec: &DbQuerySpec, url: &str) -> Outcome {
    let no_value = json!({"value": null});
    let shown = redact_url(url);
    let mut config: postgres::Config = match url.parse() {
        Ok(c) => c,
        Err(e) => return Outcome::error(format!("cannot use the url {shown}: {e}"), no_value),
    };
    config.connect_timeout(Duration::from_secs(10));
    let mut client = match config.connect(postgres::NoTls) {
        Ok(c) => c,
        Err(e) => {
            return Outcome::fail(
                format!("cannot connect to {shown}: {}", clip(&e.to_string(), 200)),
                no_value,
            )
        }
    };
    if let Err(e) = client.batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY") {
        return Outcome::error(format!("cannot make the session read-only: {e}"), no_value);
    }
    let messages = match client.simple_query(&spec.query) {
        Ok(m) => m,
        Err(e) => {
            let detail = e
                .as_db_error()
                .map(|d| d.message().to_string())
                .unwrap_or_else(|| e.to_string());
            return Outcome::fail(
                format!("query failed on {shown}: {}", clip(&detail, 200)),
                no_value,
            );
        }
    };
    let first = messages.iter().find_map(|m| match m {
        postgres::SimpleQueryMessage::Row(row) => Some(row.get(0).map(str::to_string)),
        _ => None,
    });
    match first {
        None => Outcome::fail(format!("the query returned no row ({shown})"), no_value),
        Some(None) => judge(spec, &DbValue::Null),
        Some(Some(text)) => judge(spec, &DbValue::Text(text)),
    }
}

// ---------------------------------------------------------------------------------------------
// process_listening and port_open

fn tcp_listening(spec: &PortSpec) -> Outcome {
    let host = spec.host.as_deref().unwrap_or("localhost");
    let port = spec.port;
    let no_address = json!({"host": host, "port": port, "address": null});
    let addrs: Vec<SocketAddr> = match (host, port).to_socket_addrs() {
        Ok(a) => a.collect(),
        Err(e) => return Outcome::fail(format!("cannot resolve {host:?}: {e}"), no_address),
    };
    if addrs.is_empty() {
        return Outcome::fail(format!("{host:?} resolves to no address"), no_address);
    }
    let mut refusals = Vec::new();
    for addr in &addrs {
        match TcpStream::connect_timeout(addr, CONNECT_TIMEOUT) {
            Ok(_) => {
                return Outcome::pass(
                    format!("{addr} accepts connections"),
                    json!({"host": host, "port": port, "address": addr.to_string()}),
                )
            }
            Err(e) => refusals.push(format!("{addr}: {e}")),
        }
    }
    Outcome::fail(
        format!("nothing listens on {host}:{port} ({})", refusals.join("; ")),
        no_address,
    )
}

// ---------------------------------------------------------------------------------------------
// artifact_schema

/// `file://` URI of an absolute path, percent-encoding what a URI path cannot hold.
fn file_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Resolves the `$ref`s of a frozen schema among the frozen files only: nothing is read from
/// the work tree or the network.
struct FrozenRetriever {
    files: BTreeMap<String, Vec<u8>>,
}

/// The base URI of a frozen file: `file:///<repository path>`.
fn frozen_uri(rel: &str) -> String {
    file_uri(&Path::new("/").join(rel))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl jsonschema::Retrieve for FrozenRetriever {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> std::result::Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let path = percent_decode(uri.path().as_str());
        let rel = path.trim_start_matches('/');
        match self.files.get(rel) {
            Some(bytes) => Ok(serde_json::from_slice(bytes)?),
            None => Err(format!("{rel} was not frozen with the contract").into()),
        }
    }
}

fn artifact_schema(
    spec: &ArtifactSchemaSpec,
    root: &Path,
    frozen: Option<&BTreeMap<String, Vec<u8>>>,
) -> Outcome {
    let no_errors = json!({"errors": []});
    let schema_path = root.join(&spec.schema);
    let read = match frozen {
        // The schema as frozen: the work tree's copy is not read at all.
        Some(files) => match super::pinned::normalize(&spec.schema).and_then(|p| files.get(&p)) {
            Some(bytes) => Ok(bytes.clone()),
            None => {
                return Outcome::error(
                    format!("schema {:?} was not frozen with the contract", spec.schema),
                    no_errors,
                )
            }
        },
        None => fs::read(&schema_path),
    };
    let schema: Value = match read {
        Ok(bytes) => match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => {
                return Outcome::error(
                    format!("schema {:?} is not JSON: {e}", spec.schema),
                    no_errors,
                )
            }
        },
        Err(e) => {
            return Outcome::error(
                format!("cannot read schema {:?}: {e}", spec.schema),
                no_errors,
            )
        }
    };
    let artifact: Value = match read_file(&spec.path, root, &no_errors) {
        Ok(bytes) => match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => return Outcome::fail(format!("{:?} is not JSON: {e}", spec.path), no_errors),
        },
        Err(o) => return *o,
    };
    // Relative `$ref`s resolve next to the schema file (file references only, never the network).
    let absolute = if schema_path.is_absolute() {
        schema_path
    } else {
        std::env::current_dir()
            .map(|d| d.join(&schema_path))
            .unwrap_or(schema_path)
    };
    let options = jsonschema::options().with_draft(jsonschema::Draft::Draft202012);
    let options = match frozen {
        Some(files) => options
            .with_base_uri(frozen_uri(
                &super::pinned::normalize(&spec.schema).unwrap_or_default(),
            ))
            .with_retriever(FrozenRetriever {
                files: files.clone(),
            }),
        None => options.with_base_uri(file_uri(&absolute)),
    };
    let validator = match options.build(&schema) {
        Ok(v) => v,
        Err(e) => {
            return Outcome::error(
                format!(
                    "schema {:?} is not a valid JSON Schema (draft 2020-12): {}",
                    spec.schema,
                    clip(&e.to_string(), 200)
                ),
                no_errors,
            )
        }
    };
    let errors: Vec<(String, String)> = validator
        .iter_errors(&artifact)
        .map(|e| {
            (
                e.instance_path().to_string(),
                clip(&e.to_string(), QUOTE_CHARS),
            )
        })
        .collect();
    let evidence = json!({
        "errors": errors
            .iter()
            .map(|(at, message)| json!({"instancePath": at, "message": message}))
            .collect::<Vec<_>>()
    });
    match errors.first() {
        None => Outcome::pass(
            format!("{:?} validates against {:?}", spec.path, spec.schema),
            evidence,
        ),
        Some((at, message)) => {
            let at = if at.is_empty() { "(root)" } else { at.as_str() };
            Outcome::fail(
                format!(
                    "{:?}: {}; first at {at}: {}",
                    spec.path,
                    plural(errors.len(), "validation error", "validation errors"),
                    clip(message, 160)
                ),
                evidence,
            )
        }
    }
}

// ---------------------------------------------------------------------------------------------
// manual_checklist

/// One `- [ ] text` line of a Markdown checklist.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ChecklistItem {
    text: String,
    ticked: bool,
    line: usize,
}

fn checkbox_regex() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\[([ xX])\](?:\s+(.*))?$").ok())
        .as_ref()
}

/// Every checkbox item in `markdown`, outside fenced code blocks.
fn checklist_items(markdown: &str) -> Vec<ChecklistItem> {
    let Some(re) = checkbox_regex() else {
        return Vec::new();
    };
    let mut fence: Option<&str> = None;
    let mut items = Vec::new();
    for (i, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => {
                fence = Some(m);
                continue;
            }
            (Some(open), Some(m)) if open == m => {
                fence = None;
                continue;
            }
            (Some(_), _) => continue,
            (None, None) => {}
        }
        if let Some(c) = re.captures(line) {
            items.push(ChecklistItem {
                text: c.get(2).map_or("", |m| m.as_str()).trim().to_string(),
                ticked: c.get(1).is_some_and(|m| m.as_str() != " "),
                line: i + 1,
            });
        }
    }
    items
}

/// The texts of a Markdown checklist's items, in order (what `freeze` captures).
pub fn checklist_item_texts(markdown: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in checklist_items(markdown) {
        if !out.contains(&i.text) {
            out.push(i.text);
        }
    }
    out
}

fn manual_checklist(spec: &ChecklistSpec, root: &Path, reads: Reads<'_>) -> Outcome {
    let path = spec.path.as_str();
    let empty = json!({"unticked": [], "missing": []});
    let text = match reads.checklist_text {
        Some(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        None => match read_file(path, root, &empty) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(o) => return *o,
        },
    };
    let items = checklist_items(&text);
    let frozen_items = reads.checklist_items.map(|i| i.to_vec());
    let (considered, missing): (Vec<&ChecklistItem>, Vec<String>) =
        match spec.items.as_ref().or(frozen_items.as_ref()) {
            None => (items.iter().collect(), Vec::new()),
            Some(wanted) => {
                let mut considered = Vec::new();
                let mut missing = Vec::new();
                for w in wanted {
                    let w = w.trim();
                    let found: Vec<&ChecklistItem> = items.iter().filter(|i| i.text == w).collect();
                    if found.is_empty() {
                        missing.push(w.to_string());
                    }
                    considered.extend(found);
                }
                (considered, missing)
            }
        };
    let mut unticked: Vec<String> = Vec::new();
    for item in considered.iter().filter(|i| !i.ticked) {
        if !unticked.contains(&item.text) {
            unticked.push(item.text.clone());
        }
    }
    let ticked = considered.iter().filter(|i| i.ticked).count();
    let evidence = json!({
        "unticked": unticked,
        "missing": missing,
        "ticked": ticked,
        "total": considered.len(),
    });
    if considered.is_empty() && missing.is_empty() {
        return Outcome::fail(format!("{path:?} has no checkbox items"), evidence);
    }
    let mut problems = Vec::new();
    if !unticked.is_empty() {
        problems.push(format!(
            "{}: {}",
            plural(unticked.len(), "unticked item", "unticked items"),
            quoted_list(&unticked, 5)
        ));
    }
    if !missing.is_empty() {
        problems.push(format!(
            "{} not in {path:?}: {}",
            plural(missing.len(), "listed item", "listed items"),
            quoted_list(&missing, 5)
        ));
    }
    if problems.is_empty() {
        Outcome::pass(
            format!(
                "{} of {} ticked in {path:?}",
                ticked,
                plural(considered.len(), "item", "items")
            ),
            evidence,
        )
    } else {
        Outcome::fail(problems.join("; "), evidence)
    }
}

// ---------------------------------------------------------------------------------------------
// command_exists and env_var

fn command_exists(spec: &CommandExistsSpec, root: &Path) -> Outcome {
    let command = spec.command.trim();
    if command.is_empty() {
        return Outcome::error("no command named", json!({"path": null}));
    }
    let found: Option<PathBuf> = if command.contains('/') {
        Some(root.join(command)).filter(|p| crate::process::is_executable(p))
    } else {
        crate::process::find_on_path(command, std::env::var_os("PATH").as_deref()).found()
    };
    match found {
        Some(p) => {
            let shown = p.display().to_string();
            Outcome::pass(format!("{command:?} is {shown}"), json!({"path": shown}))
        }
        None if command.contains('/') => Outcome::fail(
            format!("{command:?} is not an executable file"),
            json!({"path": null}),
        ),
        None => Outcome::fail(format!("{command:?} is not on PATH"), json!({"path": null})),
    }
}

/// Never records the value: it may be a secret.
fn env_var(spec: &EnvVarSpec) -> Outcome {
    let name = spec.name.as_str();
    let evidence =
        |set: bool, matches: Option<bool>| json!({"name": name, "set": set, "matches": matches});
    let Some(value) = std::env::var_os(name) else {
        return Outcome::fail(format!("${name} is not set"), evidence(false, None));
    };
    let value = value.to_string_lossy();
    match &spec.pattern {
        None if value.is_empty() => {
            Outcome::fail(format!("${name} is set but empty"), evidence(true, None))
        }
        None => Outcome::pass(format!("${name} is set"), evidence(true, None)),
        Some(pattern) => match Regex::new(pattern) {
            Err(e) => Outcome::error(
                format!("invalid regex for ${name}: {e}"),
                evidence(true, None),
            ),
            Ok(re) => {
                let ok = re.is_match(&value);
                let summary = if ok {
                    format!("${name} is set and matches /{pattern}/")
                } else {
                    format!("${name} is set but does not match /{pattern}/")
                };
                Outcome::pass_if(ok, summary, evidence(true, Some(ok)))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::schema::{Expect, PathSpec};
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::os::unix::fs::PermissionsExt;
    use std::thread;

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(p, text).unwrap();
    }

    fn check(spec: Value, kind: &str, root: &Path) -> Outcome {
        let kind: crate::contract::schema::CheckKind = serde_json::from_value(json!(kind)).unwrap();
        let spec = CheckSpec::parse(kind, &spec, "spec").unwrap();
        run_check(&spec, root)
    }

    fn prereq(spec: Value, kind: &str, root: &Path) -> Outcome {
        let kind: crate::contract::schema::PrereqKind =
            serde_json::from_value(json!(kind)).unwrap();
        let spec = PrereqSpec::parse(kind, &spec, "spec").unwrap();
        run_prerequisite(&spec, root)
    }

    /// A port nothing listens on: bound, then let go.
    fn closed_port() -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    }

    /// Answers every request on `listener` with `status`, forever (the thread ends with the
    /// test process).
    fn serve(listener: TcpListener, status: u16) {
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                    if line == "\r\n" || line == "\n" {
                        break;
                    }
                    line.clear();
                }
                let body = format!("status {status}\n");
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} Whatever\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
    }

    /// An HTTP server on 127.0.0.1 answering `status`; its base URL.
    fn server(status: u16) -> String {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        serve(l, status);
        url
    }

    // file_exists

    #[test]
    fn file_exists_pass_and_fail() {
        let d = tmp();
        write(d.path(), "src/main.rs", "fn main() {}\n");
        let o = check(json!({"path": "src/main.rs"}), "file_exists", d.path());
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.evidence["type"], "file");
        assert_eq!(o.evidence["size"], 13);

        let o = check(
            json!({"path": "src", "type": "dir"}),
            "file_exists",
            d.path(),
        );
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.evidence["type"], "dir");

        let o = check(
            json!({"path": "src", "type": "file"}),
            "file_exists",
            d.path(),
        );
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert!(o.summary.contains("is a dir, not a file"), "{}", o.summary);

        let o = check(json!({"path": "src/lib.rs"}), "file_exists", d.path());
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.summary, r#""src/lib.rs" is missing"#);
    }

    // command_success

    #[test]
    fn command_success_pass_and_fail() {
        let d = tmp();
        let o = check(
            json!({"command": "echo hello; echo oops >&2"}),
            "command_success",
            d.path(),
        );
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert!(o.summary.starts_with("exit 0 in "), "{}", o.summary);
        assert_eq!(o.evidence["exitCode"], 0);
        assert_eq!(o.evidence["stdoutTail"], "hello\n");
        assert_eq!(o.evidence["stderrTail"], "oops\n");
        assert_eq!(o.evidence["timedOut"], false);

        let o = check(
            json!({"command": "echo 'tests failed' >&2; exit 3"}),
            "command_success",
            d.path(),
        );
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert!(o.summary.starts_with("exit 3 in "), "{}", o.summary);
        assert!(
            o.summary.ends_with("expected 0: tests failed"),
            "{}",
            o.summary
        );

        let o = check(
            json!({"command": "exit 3", "expectExitCode": 3}),
            "command_success",
            d.path(),
        );
        assert_eq!(o.status, Status::Pass, "{o:?}");
    }

    #[test]
    fn command_success_cwd_and_env() {
        let d = tmp();
        write(d.path(), "sub/marker", "");
        let o = check(
            json!({"command": "test -f marker && test \"$GREETING\" = hi", "cwd": "sub", "env": {"GREETING": "hi"}}),
            "command_success",
            d.path(),
        );
        assert_eq!(o.status, Status::Pass, "{o:?}");

        let o = check(
            json!({"command": "exit 1", "cwd": "no-such-dir"}),
            "command_success",
            d.path(),
        );
        assert_eq!(o.status, Status::Error, "{o:?}");
    }

    #[test]
    fn command_not_found_is_an_error() {
        let d = tmp();
        let o = check(
            json!({"command": "definitely-not-a-command-4711"}),
            "command_success",
            d.path(),
        );
        assert_eq!(o.status, Status::Error, "{o:?}");
        assert_eq!(o.evidence["exitCode"], 127);
        assert!(o.summary.contains("command not found"), "{}", o.summary);

        let o = check(
            json!({"command": "definitely-not-a-command-4711", "expectExitCode": 127}),
            "command_success",
            d.path(),
        );
        assert_eq!(o.status, Status::Pass, "{o:?}");
    }

    /// True when `pid` is gone (or a zombie waiting to be reaped: it no longer runs).
    fn process_gone(pid: i32) -> bool {
        // SAFETY: signal 0 only checks that the process exists.
        let r = unsafe { libc::kill(pid, 0) };
        if r != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
            return true;
        }
        fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .map(|(_, rest)| rest.trim_start().starts_with('Z'))
            })
            .unwrap_or(false)
    }

    #[test]
    fn command_timeout_kills_grandchildren() {
        let d = tmp();
        let o = check(
            json!({"command": "sleep 30 & echo $! > pidfile; wait", "timeoutMs": 300}),
            "command_success",
            d.path(),
        );
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(o.evidence["timedOut"], true);
        assert!(o.summary.starts_with("timed out after"), "{}", o.summary);
        assert!(o.duration_ms < 5_000, "{o:?}");
        let pid: i32 = fs::read_to_string(d.path().join("pidfile"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(3);
        while !process_gone(pid) {
            assert!(
                Instant::now() < deadline,
                "grandchild {pid} outlived the timeout"
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn runtime_command_uses_its_fields() {
        let d = tmp();
        let cmd: RuntimeCommand = serde_json::from_value(json!({
            "name": "smoke", "command": "echo \"$X\"; exit 2", "env": {"X": "y"}, "expectExitCode": 2
        }))
        .unwrap();
        let o = run_runtime_command(&cmd, d.path());
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.evidence["stdoutTail"], "y\n");

        let cmd: RuntimeCommand =
            serde_json::from_value(json!({"name": "smoke", "command": "exit 2"})).unwrap();
        let o = run_runtime_command(&cmd, d.path());
        assert_eq!(o.status, Status::Fail, "{o:?}");
    }

    // regex_in_file

    #[test]
    fn regex_in_file_pass_fail_negate() {
        let d = tmp();
        write(
            d.path(),
            "src/lib.rs",
            "// header\npub fn login() {}\nfn other() {}\n",
        );
        let o = check(
            json!({"path": "src/lib.rs", "pattern": "^pub fn login"}),
            "regex_in_file",
            d.path(),
        );
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.evidence["line"], 2);
        assert_eq!(o.evidence["text"], "pub fn login() {}");

        let o = check(
            json!({"path": "src/lib.rs", "pattern": "^fn logout"}),
            "regex_in_file",
            d.path(),
        );
        assert_eq!(o.status, Status::Fail, "{o:?}");

        let o = check(
            json!({"path": "src/lib.rs", "pattern": "todo!\\(", "negate": true}),
            "regex_in_file",
            d.path(),
        );
        assert_eq!(o.status, Status::Pass, "{o:?}");

        let o = check(
            json!({"path": "src/lib.rs", "pattern": "fn other", "negate": true}),
            "regex_in_file",
            d.path(),
        );
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(o.evidence["line"], 3);
    }

    #[test]
    fn regex_in_file_missing_file_and_bad_regex() {
        let d = tmp();
        for negate in [false, true] {
            let o = check(
                json!({"path": "nope.txt", "pattern": "x", "negate": negate}),
                "regex_in_file",
                d.path(),
            );
            assert_eq!(o.status, Status::Fail, "{o:?}");
            assert_eq!(o.summary, r#""nope.txt" is missing"#);
        }
        write(d.path(), "a.txt", "x");
        let spec = CheckSpec::RegexInFile(RegexSpec {
            path: "a.txt".into(),
            pattern: "(unclosed".into(),
            negate: None,
        });
        let o = run_check(&spec, d.path());
        assert_eq!(o.status, Status::Error, "{o:?}");
    }

    // http_status

    #[test]
    fn http_status_pass_and_fail() {
        let ok = server(200);
        let o = check(
            json!({"url": format!("{ok}/health")}),
            "http_status",
            Path::new("."),
        );
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.evidence["status"], 200);
        assert_eq!(o.evidence["attempts"], 1);

        let down = server(503);
        let o = check(
            json!({"url": format!("{down}/health"), "retryForMs": 500}),
            "http_status",
            Path::new("."),
        );
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(o.evidence["status"], 503);
        let attempts = o.evidence["attempts"].as_u64().unwrap();
        assert!(attempts >= 2, "{o:?}");
        assert!(
            o.summary.contains(&format!(
                "expected status 200, got 503 after {attempts} attempts"
            )),
            "{}",
            o.summary
        );

        let o = check(
            json!({"url": format!("{down}/health"), "expectStatus": 503, "method": "POST"}),
            "http_status",
            Path::new("."),
        );
        assert_eq!(o.status, Status::Pass, "{o:?}");
    }

    #[test]
    fn http_status_retries_until_the_server_comes_up() {
        let port = closed_port();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(700));
            serve(TcpListener::bind(("127.0.0.1", port)).unwrap(), 200);
        });
        let o = check(
            json!({"url": format!("http://127.0.0.1:{port}/"), "retryForMs": 10000}),
            "http_status",
            Path::new("."),
        );
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert!(o.evidence["attempts"].as_u64().unwrap() >= 2, "{o:?}");
        assert!(o.duration_ms >= 600, "{o:?}");
    }

    #[test]
    fn http_status_refused_and_https() {
        let port = closed_port();
        let o = check(
            json!({"url": format!("http://127.0.0.1:{port}/"), "retryForMs": 300}),
            "http_status",
            Path::new("."),
        );
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert!(o.summary.contains("no response after"), "{}", o.summary);
        assert!(o.evidence["status"].is_null());

        let o = check(
            json!({"url": "https://127.0.0.1:1/"}),
            "http_status",
            Path::new("."),
        );
        assert_eq!(o.status, Status::Error, "{o:?}");
        assert!(o.summary.contains("TLS is not built in"), "{}", o.summary);
    }

    // db_query

    fn sqlite_db(root: &Path) {
        let conn = Connection::open(root.join("app.db")).unwrap();
        conn.execute_batch(
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, score REAL);
             INSERT INTO users (name, score) VALUES ('ada', 1.5), ('bob', 2.5), ('cy', 10);",
        )
        .unwrap();
    }

    fn db(root: &Path, query: &str, op: &str, value: Value) -> Outcome {
        check(
            json!({"driver": "sqlite", "path": "app.db", "query": query,
                   "expect": {"op": op, "value": value}}),
            "db_query",
            root,
        )
    }

    #[test]
    fn db_query_pass_and_fail() {
        let d = tmp();
        sqlite_db(d.path());
        let count = "SELECT COUNT(*) FROM users";
        let o = db(d.path(), count, "==", json!(3));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.evidence["value"], 3);
        assert_eq!(db(d.path(), count, ">=", json!(4)).status, Status::Fail);
        assert_eq!(db(d.path(), count, "<", json!("10")).status, Status::Pass);
        assert_eq!(db(d.path(), count, "!=", json!(2.5)).status, Status::Pass);
        let sum = "SELECT SUM(score) FROM users";
        assert_eq!(db(d.path(), sum, "==", json!(14)).status, Status::Pass);
        assert_eq!(db(d.path(), sum, ">", json!(14.5)).status, Status::Fail);
        let name = "SELECT name FROM users ORDER BY id LIMIT 1";
        assert_eq!(db(d.path(), name, "==", json!("ada")).status, Status::Pass);
        let o = db(d.path(), name, "==", json!("bob"));
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(o.summary, r#"got "ada", expected == "bob""#);
    }

    #[test]
    fn db_query_failing_first_states() {
        let d = tmp();
        // Missing file: not created by the check.
        let o = db(d.path(), "SELECT 1", "==", json!(1));
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert!(!d.path().join("app.db").exists());

        sqlite_db(d.path());
        let o = db(d.path(), "SELECT COUNT(*) FROM orders", "==", json!(0));
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert!(o.summary.contains("no such table: orders"), "{}", o.summary);

        let o = db(
            d.path(),
            "SELECT id FROM users WHERE name = 'zed'",
            "==",
            json!(1),
        );
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert!(o.summary.contains("no row"), "{}", o.summary);

        let o = db(d.path(), "SELECT NULL", "!=", json!(1));
        assert_eq!(o.status, Status::Fail, "{o:?}");

        // Read-only: a write is refused, and the table is unchanged.
        let o = db(d.path(), "DELETE FROM users RETURNING id", ">", json!(0));
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(
            db(d.path(), "SELECT COUNT(*) FROM users", "==", json!(3)).status,
            Status::Pass
        );
    }

    #[test]
    fn db_query_postgres_unreachable_is_a_failure() {
        let port = std::net::TcpListener::bind(("127.0.0.1", 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let spec = CheckSpec::DbQuery(DbQuerySpec {
            driver: DbDriver::Postgres,
            path: None,
            url: Some(format!("postgres://app:s3cret@127.0.0.1:{port}/x")),
            query: "SELECT 1".into(),
            expect: Expect {
                op: CompareOp::Eq,
                value: json!(1),
            },
        });
        let o = run_check(&spec, Path::new("."));
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert!(
            o.summary
                .contains("cannot connect to postgres://app:***@127.0.0.1"),
            "{o:?}"
        );
        assert!(!o.summary.contains("s3cret"));
    }

    // process_listening and port_open

    #[test]
    fn process_listening_pass_and_fail() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let o = check(
            json!({"port": port, "host": "127.0.0.1"}),
            "process_listening",
            Path::new("."),
        );
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.evidence["address"], format!("127.0.0.1:{port}"));

        // Default host: localhost, every address it resolves to is tried.
        let o = check(json!({"port": port}), "process_listening", Path::new("."));
        assert_eq!(o.status, Status::Pass, "{o:?}");

        let o = prereq(json!({"port": port}), "port_open", Path::new("."));
        assert_eq!(o.status, Status::Pass, "{o:?}");

        drop(l);
        let o = check(
            json!({"port": port, "host": "127.0.0.1"}),
            "process_listening",
            Path::new("."),
        );
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert!(o.summary.starts_with("nothing listens on"), "{}", o.summary);
        let o = prereq(json!({"port": closed_port()}), "port_open", Path::new("."));
        assert_eq!(o.status, Status::Fail, "{o:?}");
    }

    // artifact_schema

    const SCHEMA: &str = r#"{
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["name", "tags"],
        "properties": {
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "meta": {"$ref": "meta.schema.json"}
        },
        "$defs": {"unused": {"prefixItems": [{"type": "integer"}]}}
    }"#;

    #[test]
    fn artifact_schema_pass_and_fail() {
        let d = tmp();
        write(d.path(), "schemas/out.schema.json", SCHEMA);
        write(
            d.path(),
            "schemas/meta.schema.json",
            r#"{"type": "object", "required": ["v"]}"#,
        );
        write(
            d.path(),
            "out/good.json",
            r#"{"name": "x", "tags": ["a"], "meta": {"v": 1}}"#,
        );
        write(
            d.path(),
            "out/bad.json",
            r#"{"name": 5, "tags": ["a", 7], "meta": {}}"#,
        );
        let spec = |path: &str| json!({"path": path, "schema": "schemas/out.schema.json"});

        let o = check(spec("out/good.json"), "artifact_schema", d.path());
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.evidence["errors"], json!([]));

        let o = check(spec("out/bad.json"), "artifact_schema", d.path());
        assert_eq!(o.status, Status::Fail, "{o:?}");
        let errors = o.evidence["errors"].as_array().unwrap();
        let mut at: Vec<&str> = errors
            .iter()
            .map(|e| e["instancePath"].as_str().unwrap())
            .collect();
        at.sort_unstable();
        assert_eq!(at, ["/meta", "/name", "/tags/1"], "{errors:?}");
        assert!(o.summary.contains("3 validation errors"), "{}", o.summary);

        write(d.path(), "out/broken.json", "{not json");
        let o = check(spec("out/broken.json"), "artifact_schema", d.path());
        assert_eq!(o.status, Status::Fail, "{o:?}");
        let o = check(spec("out/absent.json"), "artifact_schema", d.path());
        assert_eq!(o.status, Status::Fail, "{o:?}");
    }

    #[test]
    fn artifact_schema_bad_schema_is_an_error() {
        let d = tmp();
        write(d.path(), "a.json", "{}");
        write(d.path(), "bad.schema.json", r#"{"type": "no-such-type"}"#);
        write(d.path(), "notjson.schema.json", "{");
        for schema in [
            "bad.schema.json",
            "notjson.schema.json",
            "absent.schema.json",
        ] {
            let o = check(
                json!({"path": "a.json", "schema": schema}),
                "artifact_schema",
                d.path(),
            );
            assert_eq!(o.status, Status::Error, "{schema}: {o:?}");
        }
    }

    // manual_checklist

    const CHECKLIST: &str = "# Review\n\
        - [x] UI reviewed\n\
        * [X] Copy approved\n\
        \x20\x201. [ ] Accessibility pass\n\
        - [ ] Docs updated\n\
        ```\n\
        - [ ] inside a fence, not an item\n\
        ```\n\
        - not a checkbox\n";

    #[test]
    fn manual_checklist_all_items() {
        let d = tmp();
        write(d.path(), "review.md", CHECKLIST);
        let o = check(json!({"path": "review.md"}), "manual_checklist", d.path());
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(
            o.evidence["unticked"],
            json!(["Accessibility pass", "Docs updated"])
        );
        assert_eq!(
            o.summary,
            r#"2 unticked items: "Accessibility pass", "Docs updated""#
        );

        write(d.path(), "done.md", "- [x] a\n- [X] b\n");
        let o = check(json!({"path": "done.md"}), "manual_checklist", d.path());
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.summary, r#"2 of 2 items ticked in "done.md""#);

        write(d.path(), "empty.md", "# nothing to tick\n");
        let o = check(json!({"path": "empty.md"}), "manual_checklist", d.path());
        assert_eq!(o.status, Status::Fail, "{o:?}");

        let o = check(json!({"path": "absent.md"}), "manual_checklist", d.path());
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(o.summary, r#""absent.md" is missing"#);
    }

    #[test]
    fn manual_checklist_listed_items() {
        let d = tmp();
        write(d.path(), "review.md", CHECKLIST);
        let o = check(
            json!({"path": "review.md", "items": ["UI reviewed", " Copy approved "]}),
            "manual_checklist",
            d.path(),
        );
        assert_eq!(o.status, Status::Pass, "{o:?}");

        let o = check(
            json!({"path": "review.md", "items": ["UI reviewed", "Docs updated", "Load test"]}),
            "manual_checklist",
            d.path(),
        );
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(o.evidence["unticked"], json!(["Docs updated"]));
        assert_eq!(o.evidence["missing"], json!(["Load test"]));
        assert!(
            o.summary
                .contains(r#"1 listed item not in "review.md": "Load test""#),
            "{}",
            o.summary
        );
    }

    // prerequisites

    #[test]
    fn command_exists_pass_and_fail() {
        let d = tmp();
        let o = prereq(json!({"command": "sh"}), "command_exists", d.path());
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert!(o.evidence["path"].as_str().unwrap().ends_with("/sh"));

        let o = prereq(
            json!({"command": "no-such-tool-4711"}),
            "command_exists",
            d.path(),
        );
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(o.summary, r#""no-such-tool-4711" is not on PATH"#);

        write(d.path(), "bin/tool", "#!/bin/sh\n");
        let o = prereq(json!({"command": "./bin/tool"}), "command_exists", d.path());
        assert_eq!(o.status, Status::Fail, "not executable yet: {o:?}");
        fs::set_permissions(d.path().join("bin/tool"), fs::Permissions::from_mode(0o755)).unwrap();
        let o = prereq(json!({"command": "./bin/tool"}), "command_exists", d.path());
        assert_eq!(o.status, Status::Pass, "{o:?}");
    }

    #[test]
    fn env_var_never_shows_the_value() {
        // Names unique to this test: the environment is shared by every test thread.
        std::env::set_var("RAILS_CHECKS_TEST_SECRET", "s3cr3t-value");
        std::env::set_var("RAILS_CHECKS_TEST_EMPTY", "");
        let root = Path::new(".");
        let o = prereq(json!({"name": "RAILS_CHECKS_TEST_SECRET"}), "env_var", root);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        let o2 = prereq(
            json!({"name": "RAILS_CHECKS_TEST_SECRET", "pattern": "^s[0-9]cr"}),
            "env_var",
            root,
        );
        assert_eq!(o2.status, Status::Pass, "{o2:?}");
        let o3 = prereq(
            json!({"name": "RAILS_CHECKS_TEST_SECRET", "pattern": "^sk_live_"}),
            "env_var",
            root,
        );
        assert_eq!(o3.status, Status::Fail, "{o3:?}");
        for o in [&o, &o2, &o3] {
            assert!(!o.summary.contains("s3cr3t"), "{}", o.summary);
            assert!(!o.evidence.to_string().contains("s3cr3t"), "{}", o.evidence);
        }
        let o = prereq(json!({"name": "RAILS_CHECKS_TEST_UNSET"}), "env_var", root);
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(o.summary, "$RAILS_CHECKS_TEST_UNSET is not set");
        let o = prereq(json!({"name": "RAILS_CHECKS_TEST_EMPTY"}), "env_var", root);
        assert_eq!(o.status, Status::Fail, "{o:?}");
    }

    #[test]
    fn file_exists_prerequisite() {
        let d = tmp();
        write(d.path(), ".env.example", "X=1\n");
        let spec = |p: &str| PrereqSpec::FileExists(PathSpec { path: p.into() });
        assert_eq!(
            run_prerequisite(&spec(".env.example"), d.path()).status,
            Status::Pass
        );
        assert_eq!(
            run_prerequisite(&spec(".env"), d.path()).status,
            Status::Fail
        );
    }

    #[test]
    fn http_reachable_any_status_counts() {
        let url = server(503);
        let o = prereq(json!({"url": url}), "http_reachable", Path::new("."));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.evidence["status"], 503);

        let port = closed_port();
        let o = prereq(
            json!({"url": format!("http://127.0.0.1:{port}/"), "timeoutMs": 1000}),
            "http_reachable",
            Path::new("."),
        );
        assert_eq!(o.status, Status::Fail, "{o:?}");
    }

    #[test]
    fn db_value_comparisons() {
        use std::cmp::Ordering::*;
        let cmp = compare_db_value;
        assert_eq!(cmp(&DbValue::Integer(10), &json!("9")), Some(Greater));
        assert_eq!(cmp(&DbValue::Text("10".into()), &json!("9")), Some(Less));
        assert_eq!(cmp(&DbValue::Text("10".into()), &json!(9)), Some(Greater));
        assert_eq!(cmp(&DbValue::Real(2.0), &json!(2)), Some(Equal));
        assert_eq!(
            cmp(&DbValue::Integer(i64::MAX), &json!(i64::MAX - 1)),
            Some(Greater)
        );
        assert_eq!(cmp(&DbValue::Null, &json!(0)), None);
    }
}
