//! What happens to a series after its rounds are run: triage of findings (`ledger.jsonl`),
//! waivers of reviewers that did not complete (`waivers.jsonl`), cap extensions
//! (`extensions.jsonl` at the root of the series tree), the cap check of `git spar run`, the cap
//! report, and the gate that decides whether the reviewed change may go on.
//!
//! Every write holds the series lock and re-reads the records after taking it (G33), so two
//! writers never lose each other's lines; the gate only reads and never locks, and a record it
//! cannot read is a blocked reason, not an error (G32).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::config::Config;
use super::ids::{parse_target, RoundName, SeriesId};
use super::record::{self, lock_series, Finding, Round};
use super::vocab::{CodeCause, Disposition, Stage, Status};
use super::{now, sha256_hex};
use crate::error::{Context, Error, Result};
use crate::store::{self, ObjectId, Store};

mod caps;
mod decisions;
mod gate;
mod gate_view;
mod triage;
mod waive;

pub use self::caps::*;
pub use self::decisions::*;
pub use self::gate::*;
use self::gate_view::*;
pub use self::triage::*;
pub use self::waive::*;

/// A text option as the seed reads it (G30, G31): trimmed, and empty means not given. Being
/// free text a person passes in (triage's `--evidence`, `--to`, `--user-quote`, …, waive's
/// quote, extend's reason), it is redacted (`crate::redact`) before any ledger records it.
fn text(opt: &Option<String>) -> Option<String> {
    opt.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| crate::redact::Redactor::from_env().text(s).text)
}

/// Whether a person's decision is written signed: asked for (`--sign`), or git signs every
/// commit here (`commit.gpgSign`).
fn signs(store: &Store, asked: bool) -> bool {
    asked || store.config_flag("commit.gpgSign")
}

/// Parses JSON lines into objects; `what` names the file in the error.
fn parse_jsonl(bytes: &[u8], what: &str) -> std::result::Result<Vec<Value>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("{what} is not UTF-8: {e}"))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| format!("{what} line {}: not JSON: {e}", i + 1))?;
        if !v.is_object() {
            return Err(format!("{what} line {}: not a JSON object", i + 1));
        }
        out.push(v);
    }
    Ok(out)
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

// ---------------------------------------------------------------------------------------------
// The ledger

// ---------------------------------------------------------------------------------------------
// Triage

fn moved(series: &SeriesId) -> Error {
    Error::internal(format!(
        "{} moved while holding the series lock",
        record::series_ref(series)
    ))
}

// ---------------------------------------------------------------------------------------------
// Waive

// ---------------------------------------------------------------------------------------------
// Extensions and caps

// ---------------------------------------------------------------------------------------------
// Gate

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(stage: &str, by: &str, cause: Option<&str>, reason: Option<&str>) -> ExtendRequest {
        ExtendRequest {
            series: SeriesId::new("s").unwrap(),
            stage: stage.into(),
            by: by.into(),
            cause: cause.map(str::to_string),
            reason: reason.map(str::to_string),
        }
    }

    fn kind(r: Result<Extension>) -> Option<u8> {
        r.err().map(|e| e.kind.exit_code())
    }

    #[test]
    fn g31_extension_forms() {
        // Usage errors: stage, --by, cause for code, cause/reason for plan stages.
        assert_eq!(
            kind(check_extension(&ext("Code", "1", Some("churn"), None))),
            Some(64)
        );
        for by in ["0", "-1", "+1", "1.0", "", "x", " 1"] {
            assert_eq!(
                kind(check_extension(&ext("code", by, Some("churn"), None))),
                Some(64),
                "{by}"
            );
        }
        assert_eq!(
            kind(check_extension(&ext("code", "1", None, None))),
            Some(64)
        );
        assert_eq!(
            kind(check_extension(&ext("code", "1", Some("Churn"), None))),
            Some(64)
        );
        assert_eq!(
            kind(check_extension(&ext("plan", "1", Some("churn"), None))),
            Some(64)
        );
        assert_eq!(
            kind(check_extension(&ext("plan-delta", "1", None, Some("why")))),
            Some(64)
        );
        // Refusals: a needed reason missing (blank counts as missing).
        assert_eq!(
            kind(check_extension(&ext("code", "2", Some("churn"), None))),
            Some(65)
        );
        assert_eq!(
            kind(check_extension(&ext(
                "code",
                "1",
                Some("other"),
                Some("  ")
            ))),
            Some(65)
        );
        // Accepted.
        let e = check_extension(&ext("code", "2", Some("recurring"), Some(" flaky "))).unwrap();
        assert_eq!(
            (e.by, e.cause.as_deref(), e.reason.as_deref()),
            (2, Some("recurring"), Some("flaky"))
        );
        let e = check_extension(&ext("plan", "3", None, Some(" "))).unwrap();
        assert_eq!((e.by, e.cause, e.reason), (3, None, None));
    }

    #[test]
    fn text_options_are_trimmed() {
        assert_eq!(text(&Some("  a b ".into())), Some("a b".into()));
        assert_eq!(text(&Some(" \t ".into())), None);
        assert_eq!(text(&None), None);
    }
}
