//! What counts as a RED: the check failing, not its runner failing to run.
//!
//! A `command_success` fails on any exit but the one it expects, and most of those are not the
//! criterion failing: 127 is a command not found, 126 one that cannot run, 128+n (or a signal)
//! a process killed, and pytest's 4 and 5 a usage error and nothing collected. A RED on one of
//! those proves nothing about the work, and a re-run that ends so says nothing about the proof.
//! A check may say which failures count (`redExitCodes`, or `redOutputPattern`, which must
//! appear in its output); without that, the exits above are refused. pytest's 2 (a collection
//! error, such as importing a function not written yet) is a genuine RED.

use serde_json::Value;

use crate::contract::checks::{Outcome, Status};
use crate::contract::schema::{CheckSpec, CommandSpec};

/// Why a failing outcome is not a RED.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRed {
    /// The runner could not run the check (a missing command, a signal, pytest's 4 or 5).
    Runner(String),
    /// It failed, but not in a way the check counts (`redExitCodes`, `redOutputPattern`).
    Uncounted(String),
}

impl NotRed {
    pub fn reason(&self) -> &str {
        match self {
            NotRed::Runner(s) | NotRed::Uncounted(s) => s,
        }
    }
}

/// Whether `command` runs pytest (`pytest`, `py.test`, `python -m pytest`).
fn runs_pytest(command: &str) -> bool {
    command
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
        .any(|w| {
            let name = w.rsplit('/').next().unwrap_or(w);
            matches!(name, "pytest" | "py.test")
        })
}

/// Why the failing outcome `o` of a check with `spec` is not a RED; None when it is one (or
/// when it did not fail: the caller judges passes).
pub fn not_red(spec: &CheckSpec, o: &Outcome) -> Option<NotRed> {
    if o.status != Status::Fail {
        return None;
    }
    let CheckSpec::CommandSuccess(c) = spec else {
        return None;
    };
    command_not_red(c, o)
}

fn command_not_red(c: &CommandSpec, o: &Outcome) -> Option<NotRed> {
    let code = o.evidence.get("exitCode").and_then(Value::as_i64);
    let signal = o.evidence.get("signal").and_then(Value::as_i64);
    let timed_out = o.evidence.get("timedOut").and_then(Value::as_bool) == Some(true);
    if let (None, Some(s)) = (code, signal) {
        if !timed_out {
            return Some(NotRed::Runner(format!(
                "it was killed by signal {s}, which is not the check failing"
            )));
        }
    }
    match code {
        Some(126) => {
            return Some(NotRed::Runner(
                "exit 126: the command could not be executed".into(),
            ))
        }
        Some(127) => return Some(NotRed::Runner("exit 127: a command was not found".into())),
        Some(n) if n > 128 && n < 256 => {
            return Some(NotRed::Runner(format!(
                "exit {n}: a process was killed by signal {}, which is not the check failing",
                n - 128
            )))
        }
        _ => {}
    }
    if let Some(codes) = &c.red_exit_codes {
        return match code {
            Some(n) if codes.iter().any(|x| i64::from(*x) == n) => pattern_missing(c, o),
            Some(n) => Some(NotRed::Uncounted(format!(
                "exit {n} is not one of the failures its redExitCodes count ({})",
                codes
                    .iter()
                    .map(i32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            None => Some(NotRed::Uncounted(
                "it ended without an exit code, and its redExitCodes count only exit codes".into(),
            )),
        };
    }
    if runs_pytest(&c.command) {
        match code {
            Some(4) => {
                return Some(NotRed::Runner(
                    "pytest's exit 4 is a usage error (such as a file or directory not found), not a test failing".into(),
                ))
            }
            Some(5) => {
                return Some(NotRed::Runner(
                    "pytest's exit 5 means no tests were collected, so no test failed".into(),
                ))
            }
            _ => {}
        }
    }
    pattern_missing(c, o)
}

fn pattern_missing(c: &CommandSpec, o: &Outcome) -> Option<NotRed> {
    let p = c.red_output_pattern.as_deref()?;
    let Ok(re) = regex::Regex::new(p) else {
        return Some(NotRed::Uncounted(format!(
            "its redOutputPattern {p:?} is not a valid pattern"
        )));
    };
    let out = ["stdoutTail", "stderrTail"]
        .iter()
        .filter_map(|k| o.evidence.get(*k).and_then(Value::as_str))
        .any(|t| re.is_match(t));
    (!out).then(|| {
        NotRed::Uncounted(format!(
            "its output does not show {p:?} (redOutputPattern), so this is not the failure it counts"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(command: &str, extra: Value) -> CheckSpec {
        let mut v = json!({ "command": command });
        if let (Value::Object(m), Value::Object(e)) = (&mut v, extra) {
            m.extend(e);
        }
        CheckSpec::CommandSuccess(serde_json::from_value(v).unwrap())
    }

    fn failed(code: Option<i64>, signal: Option<i64>, out: &str) -> Outcome {
        let mut o = Outcome::error(
            String::new(),
            json!({"exitCode": code, "signal": signal, "timedOut": false,
                "stdoutTail": out, "stderrTail": ""}),
        );
        o.status = Status::Fail;
        o
    }

    #[test]
    fn runner_exits_are_refused_and_test_failures_count() {
        let s = spec("sh test.sh", json!({}));
        assert_eq!(not_red(&s, &failed(Some(1), None, "")), None);
        for code in [126, 127, 137, 143] {
            assert!(matches!(
                not_red(&s, &failed(Some(code), None, "")),
                Some(NotRed::Runner(_))
            ));
        }
        assert!(matches!(
            not_red(&s, &failed(None, Some(9), "")),
            Some(NotRed::Runner(_))
        ));
    }

    #[test]
    fn pytest_usage_and_empty_collection_are_refused_but_a_collection_error_counts() {
        for cmd in [
            "pytest -q tests/test_a.py",
            "python -m pytest",
            "cd x && .venv/bin/pytest",
        ] {
            let s = spec(cmd, json!({}));
            assert!(
                matches!(
                    not_red(&s, &failed(Some(4), None, "")),
                    Some(NotRed::Runner(_))
                ),
                "{cmd}"
            );
            assert!(
                matches!(
                    not_red(&s, &failed(Some(5), None, "")),
                    Some(NotRed::Runner(_))
                ),
                "{cmd}"
            );
            assert_eq!(not_red(&s, &failed(Some(2), None, "")), None, "{cmd}");
            assert_eq!(not_red(&s, &failed(Some(1), None, "")), None, "{cmd}");
        }
        // Not pytest: 4 and 5 are that command's own failures.
        let s = spec("sh pytest-like.sh", json!({}));
        assert_eq!(not_red(&s, &failed(Some(5), None, "")), None);
    }

    #[test]
    fn red_exit_codes_and_the_output_pattern_say_which_failures_count() {
        let s = spec("make check", json!({"redExitCodes": [1]}));
        assert_eq!(not_red(&s, &failed(Some(1), None, "")), None);
        assert!(matches!(
            not_red(&s, &failed(Some(2), None, "")),
            Some(NotRed::Uncounted(_))
        ));
        let s = spec("make check", json!({"redOutputPattern": "AssertionError"}));
        assert_eq!(
            not_red(&s, &failed(Some(2), None, "E AssertionError: 1 != 2")),
            None
        );
        assert!(matches!(
            not_red(&s, &failed(Some(2), None, "no such target")),
            Some(NotRed::Uncounted(_))
        ));
    }
}
