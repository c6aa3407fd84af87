//! `db_query`: one value from SQLite (read-only, opened by path) or PostgreSQL (plain TCP),
//! compared with what the criterion expects; a URL's password never reaches the evidence.
//!
//! `git-rails` does not link the drivers: [`db_query`] hands the spec to the sibling
//! executable (`crate::extras`), which runs [`db_query_here`] and prints the outcome as JSON.
//! The timeouts (SQLite's busy wait, PostgreSQL's connect timeout) are the sibling's, as they
//! were in-process.

use super::*;

/// Runs the query in `rails-spar-extras` and reads back its outcome.
pub(super) fn db_query(spec: &DbQuerySpec, root: &Path) -> Outcome {
    let no_value = json!({"value": null});
    let spec_json = match serde_json::to_vec(spec) {
        Ok(j) => j,
        Err(e) => return Outcome::error(format!("cannot pass the spec on: {e}"), no_value),
    };
    match crate::extras::run_db_query(&spec_json, root) {
        Err(why) => Outcome::error(clip(&why, QUOTE_CHARS), no_value),
        Ok(out) => match serde_json::from_slice::<Outcome>(&out) {
            Ok(o) => o,
            Err(e) => Outcome::error(
                format!("{} printed no outcome: {e}", crate::extras::NAME),
                no_value,
            ),
        },
    }
}

/// Runs the query in this process (the sibling's side of [`db_query`]).
pub(super) fn db_query_here(spec: &DbQuerySpec, root: &Path) -> Outcome {
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
pub(super) enum DbValue {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
}

impl DbValue {
    pub(super) fn from_ref(v: ValueRef<'_>) -> Self {
        match v {
            ValueRef::Null => DbValue::Null,
            ValueRef::Integer(i) => DbValue::Integer(i),
            ValueRef::Real(f) => DbValue::Real(f),
            ValueRef::Text(t) | ValueRef::Blob(t) => {
                DbValue::Text(String::from_utf8_lossy(t).into_owned())
            }
        }
    }

    pub(super) fn to_json(&self) -> Value {
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
pub(super) enum Num {
    Int(i64),
    Real(f64),
}

impl Num {
    pub(super) fn parse(s: &str) -> Option<Num> {
        let s = s.trim();
        if let Ok(i) = s.parse::<i64>() {
            return Some(Num::Int(i));
        }
        s.parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(Num::Real)
    }

    pub(super) fn from_json(v: &Value) -> Option<Num> {
        match v {
            Value::Number(n) => n
                .as_i64()
                .map(Num::Int)
                .or_else(|| n.as_f64().map(Num::Real)),
            Value::String(s) => Num::parse(s),
            _ => None,
        }
    }

    pub(super) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Real(f) => f,
        }
    }

    pub(super) fn compare(self, other: Num) -> Option<Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }
}

pub(super) fn op_holds(op: CompareOp, ord: Ordering) -> bool {
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
pub(super) fn compare_db_value(got: &DbValue, want: &Value) -> Option<Ordering> {
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

pub(super) fn sqlite_query(spec: &DbQuerySpec, path: &str, root: &Path) -> Outcome {
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
pub(super) fn judge(spec: &DbQuerySpec, got: &DbValue) -> Outcome {
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
pub(super) fn redact_url(url: &str) -> String {
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
pub(super) fn postgres_query(spec: &DbQuerySpec, url: &str) -> Outcome {
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
