//! The `sarif` preset: any linter that writes SARIF 2.1.0 (ruff, semgrep, ESLint's SARIF
//! formatter, clippy through clippy-sarif) sits beside the AI reviewers.
//!
//! The linter runs with the reviewer's `argv` in the round's workspace (placeholders
//! `{workspace}`, `{prompt}`, `{schema}` and `{sarif}`, a file in the reviewer's folder). Its SARIF
//! — from `{sarif}` when the argv names it, else stdout — is turned into a reviewer result, which
//! is then held to the same checks and classification rules as every reviewer's:
//!
//! - each SARIF result becomes a finding; its rule id is the finding's angle, `"<rule>: <message>"`
//!   its claim; its level (or its rule's default level, else SARIF's default `warning`) gives the
//!   proposed class: `error` → defect, `warning` → hardening, `note`/`none` → note;
//! - its location is the first physical location, `path:start-end`; an absolute `file://` URI
//!   inside the workspace maps back to the workspace path (`head/src/a.py`), any other absolute
//!   URI stays as it is (and so reads as an unreadable location);
//! - a linter has no view on the review angles: every requested angle is listed unchecked, and
//!   links, `introduced_by_change` and `regression` are unknown, so the fixed rules decide (a
//!   proposed defect without a confirmed link is a note, one in the check paths is hardening).
//!
//! A linter exiting non-zero because it found something has completed when it wrote valid
//! SARIF; a non-zero exit without SARIF fails with the exit and its last stderr line.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::spar::config::SelectedReviewer;
use crate::spar::location::Document;
use crate::spar::vocab::{Angle, Status};

/// What running the linter gave.
pub struct SarifRun {
    pub attempts: Vec<Value>,
    /// The reviewer-result text to check, or why the reviewer did not complete.
    pub result: Result<String, (Status, String)>,
    pub stdout: String,
    pub stderr: String,
}

/// What the converted result is held to.
pub struct Target<'a> {
    pub head: &'a str,
    pub angles: &'a [Angle],
    /// The standpoint this reviewer was given, if any (a linter reports it unchecked).
    pub standpoint: Option<&'a str>,
    /// The round's rule documents and their text: a result whose rule id one of them names is
    /// linked to that line.
    pub rules: &'a [(Document, String)],
}

/// The first line of a rule document that names `rule_id` as a word, as a `rule` link
/// (`<document>:<line>`).
pub fn rule_link(rules: &[(Document, String)], rule_id: &str) -> Option<String> {
    if rule_id.is_empty() {
        return None;
    }
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    for (doc, text) in rules {
        for (n, line) in text.lines().enumerate() {
            let found = line.match_indices(rule_id).any(|(i, _)| {
                let before = line[..i].chars().next_back();
                let after = line[i + rule_id.len()..].chars().next();
                !before.is_some_and(word) && !after.is_some_and(word)
            });
            if found {
                return Some(format!("{}:{}", doc.name(), n + 1));
            }
        }
    }
    None
}

/// The name of the SARIF file `{sarif}` stands for, in the reviewer's folder.
pub const SARIF_FILE: &str = "output.sarif";

/// Runs the linter and converts its SARIF.
pub fn run(sel: &SelectedReviewer, workspace: &Path, target: &Target<'_>) -> SarifRun {
    let started = jiff::Timestamp::now().to_string();
    let argv = sel
        .reviewer
        .argv
        .as_ref()
        .map(|a| a.value.clone())
        .unwrap_or_default();
    let fail = |status, why: String| SarifRun {
        attempts: Vec::new(),
        result: Err((status, why)),
        stdout: String::new(),
        stderr: String::new(),
    };
    let Some(program) = argv.first() else {
        return fail(Status::Failed, "sarif reviewer without argv".into());
    };
    let exe =
        match crate::spar::config::find_executable(program, std::env::var_os("PATH").as_deref()) {
            Ok(p) if p.is_relative() => std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p),
            Ok(p) => p,
            Err((status, why)) => return fail(status, why),
        };
    let folder = workspace.join(sel.name());
    let sarif_path = folder.join(SARIF_FILE);
    let prompt = folder.join("input.md");
    let schema = workspace.join("schema.json");
    let names_file = argv.iter().any(|a| a.contains("{sarif}"));
    let mut full = vec![exe.to_string_lossy().into_owned()];
    for a in argv.iter().skip(1) {
        let s = crate::process::substitute_placeholders(
            a,
            &[
                ("prompt", prompt.as_os_str()),
                ("workspace", workspace.as_os_str()),
                ("schema", schema.as_os_str()),
                ("sarif", sarif_path.as_os_str()),
            ],
        );
        full.push(s.to_string_lossy().into_owned());
    }
    let _ = std::fs::create_dir_all(&folder);
    let timeout = Duration::from_secs(sel.timeout_seconds());
    let r = crate::process::run_argv(&full, workspace, &[], b"", timeout);
    let attempts = vec![json!({
        "started_at": started,
        "exit_code": r.exit_code,
        "timed_out": r.timed_out,
        "duration_ms": r.duration.as_millis() as u64,
    })];
    let done = |result| SarifRun {
        attempts: attempts.clone(),
        result,
        stdout: r.stdout_tail.clone(),
        stderr: r.stderr_tail.clone(),
    };
    if r.timed_out {
        return done(Err((
            Status::Failed,
            format!(
                "timed out after {} s; its process group was killed",
                sel.timeout_seconds()
            ),
        )));
    }
    if let Some(e) = &r.spawn_error {
        return done(Err((Status::Failed, format!("could not start: {e}"))));
    }
    let text = if names_file {
        match std::fs::read_to_string(&sarif_path) {
            Ok(t) => t,
            Err(e) => {
                return done(Err((
                    Status::Failed,
                    format!(
                        "{}; it wrote no SARIF to {{sarif}} ({}: {e})",
                        r.describe(),
                        sarif_path.display()
                    ),
                )))
            }
        }
    } else {
        r.stdout_tail.clone()
    };
    let sarif = match serde_json::from_str::<Value>(&text) {
        Ok(v) => v,
        Err(e) if r.exit_code != Some(0) => {
            let tail = r
                .stderr_tail
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
            return done(Err((
                Status::Failed,
                format!(
                    "{} without SARIF ({e}){}",
                    r.describe(),
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!(": {tail}")
                    }
                ),
            )));
        }
        Err(e) => {
            return done(Err((
                Status::InvalidOutput,
                format!("the output is not SARIF: {e}"),
            )))
        }
    };
    match to_result(&sarif, workspace, target) {
        Ok(v) => done(Ok(v.to_string())),
        Err(why) => done(Err((Status::InvalidOutput, why))),
    }
}

/// The proposed class of a SARIF level.
pub fn class_of_level(level: &str) -> &'static str {
    match level {
        "error" => "defect",
        "warning" => "hardening",
        _ => "note",
    }
}

/// A SARIF artifact URI as a location path: a `file://` URI inside `workspace` becomes the
/// path under it; a relative reference is percent-decoded; anything else stays as given.
pub fn location_path(uri: &str, workspace: &Path) -> String {
    if let Some(rest) = uri.strip_prefix("file://") {
        // file:///abs/path or file://localhost/abs/path
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        let decoded = percent_decode(rest);
        let ws = workspace.to_string_lossy();
        let ws = ws.trim_end_matches('/');
        // The workspace may be reached through a symbolic link (/tmp on macOS).
        let canonical = std::fs::canonicalize(workspace)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| ws.to_string());
        for base in [ws, canonical.trim_end_matches('/')] {
            if let Some(inner) = decoded.strip_prefix(base).and_then(|r| r.strip_prefix('/')) {
                return inner.to_string();
            }
        }
        return uri.to_string();
    }
    if uri.contains("://") {
        return uri.to_string();
    }
    percent_decode(uri)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = (b[i] == b'%' && i + 2 < b.len())
            .then(|| std::str::from_utf8(&b[i + 1..i + 3]).ok())
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(v) => {
                out.push(v);
                i += 3;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn text_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Converts a SARIF log into a reviewer result (the form `check_result` reads). `Err` says why
/// the log is not SARIF 2.1.0 as this preset reads it.
pub fn to_result(sarif: &Value, workspace: &Path, target: &Target<'_>) -> Result<Value, String> {
    if text_at(sarif, "version") != Some("2.1.0") {
        return Err(format!(
            "the SARIF log's version is {}, not \"2.1.0\"",
            sarif
                .get("version")
                .map(Value::to_string)
                .unwrap_or_else(|| "missing".into())
        ));
    }
    let Some(runs) = sarif.get("runs").and_then(Value::as_array) else {
        return Err("the SARIF log has no runs array".into());
    };
    let mut findings = Vec::new();
    let mut tools = Vec::new();
    let mut blocking = false;
    for (ri, run) in runs.iter().enumerate() {
        let driver = &run["tool"]["driver"];
        let Some(tool) = text_at(driver, "name") else {
            return Err(format!("runs[{ri}].tool.driver.name is missing"));
        };
        let version = text_at(driver, "version")
            .or_else(|| text_at(driver, "semanticVersion"))
            .unwrap_or("");
        tools.push(if version.is_empty() {
            tool.to_string()
        } else {
            format!("{tool} {version}")
        });
        let rules = driver["rules"].as_array().cloned().unwrap_or_default();
        let results = match run.get("results") {
            None | Some(Value::Null) => continue,
            Some(Value::Array(a)) => a,
            Some(_) => return Err(format!("runs[{ri}].results is not an array")),
        };
        for (i, res) in results.iter().enumerate() {
            let rule = res
                .get("ruleIndex")
                .and_then(Value::as_u64)
                .and_then(|n| rules.get(n as usize))
                .or_else(|| {
                    let id = text_at(res, "ruleId")?;
                    rules.iter().find(|r| text_at(r, "id") == Some(id))
                });
            let rule_id = text_at(res, "ruleId")
                .or_else(|| rule.and_then(|r| text_at(r, "id")))
                .unwrap_or("lint");
            let level = text_at(res, "level")
                .or_else(|| rule.and_then(|r| text_at(&r["defaultConfiguration"], "level")))
                .unwrap_or("warning");
            let message = text_at(&res["message"], "text")
                .or_else(|| {
                    let id = text_at(&res["message"], "id")?;
                    rule.and_then(|r| text_at(&r["messageStrings"][id], "text"))
                })
                .or_else(|| rule.and_then(|r| text_at(&r["shortDescription"], "text")))
                .ok_or_else(|| format!("runs[{ri}].results[{i}].message has no text"))?;
            let physical = &res["locations"][0]["physicalLocation"];
            let location = match text_at(&physical["artifactLocation"], "uri") {
                None => String::new(),
                Some(uri) => {
                    let path = location_path(uri, workspace);
                    let region = &physical["region"];
                    match region.get("startLine").and_then(Value::as_u64) {
                        Some(start) => {
                            let end = region
                                .get("endLine")
                                .and_then(Value::as_u64)
                                .unwrap_or(start)
                                .max(start);
                            if end == start {
                                format!("{path}:{start}")
                            } else {
                                format!("{path}:{start}-{end}")
                            }
                        }
                        None => path,
                    }
                }
            };
            let class = class_of_level(level);
            blocking |= class == "defect";
            let claim = format!("{rule_id}: {message}");
            let link = rule_link(target.rules, rule_id);
            let mut f = json!({
                "id": format!("{tool}-{}", findings.len() + 1),
                "proposed_class": class,
                "angle": rule_id,
                "location": if location.is_empty() { "(no location in the SARIF result)".to_string() } else { location.clone() },
                "claim": claim,
                "failure_scenario": format!("{tool} reports {rule_id} (level {level}){}", if location.is_empty() { String::new() } else { format!(" at {location}") }),
                "evidence": format!("SARIF result {i} of run {ri} from {tool}"),
                "link_kind": if link.is_some() { "rule" } else { "none" },
                "link": link.clone().unwrap_or_default(),
                "introduced_by_change": "unknown",
                "regression": "unknown",
                "check_impact": "none",
                "confidence": "high",
            });
            if let Some(fix) = res["fixes"][0]["description"]["text"].as_str() {
                f["smallest_fix"] = json!(fix);
            }
            findings.push(f);
        }
    }
    let tools = if tools.is_empty() {
        "the linter".to_string()
    } else {
        tools.join(", ")
    };
    let mut out = json!({
        "reviewed_head": target.head,
        "verdict": if blocking { "blocking_findings" } else { "no_blocking_findings" },
        "angles_checked": [],
        "angles_unchecked": target.angles.iter().map(|a| json!({
            "angle": a.as_str(),
            "reason": format!("{tools} checks its own rules, not the review angles"),
        })).collect::<Vec<_>>(),
        "findings": findings,
        "limits": format!("SARIF from {tools}: {} result(s); a linter checks its rules only", findings.len()),
    });
    if target.standpoint.is_some() {
        out["standpoint_report"] = json!({
            "checked": false,
            "detail": format!("{tools} does not take a standpoint; it checks its own rules"),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_inside_the_workspace_map_to_workspace_paths() {
        let ws = Path::new("/nonexistent/ws");
        assert_eq!(
            location_path("file:///nonexistent/ws/head/src/a%20b.py", ws),
            "head/src/a b.py"
        );
        assert_eq!(
            location_path("file:///elsewhere/a.py", ws),
            "file:///elsewhere/a.py"
        );
        assert_eq!(location_path("src/a.py", ws), "src/a.py");
        // A sibling folder that only starts with the workspace's name is outside it.
        assert_eq!(
            location_path("file:///nonexistent/ws2/a.py", ws),
            "file:///nonexistent/ws2/a.py"
        );
    }

    #[test]
    fn a_rule_document_naming_the_rule_id_is_the_link() {
        let doc = Document::new("/p/lint.md", None, b"x\n- F841 blocks\n- E1\n");
        let rules = vec![(doc, "x\n- F841 blocks\n- E1\n".to_string())];
        assert_eq!(rule_link(&rules, "F841").as_deref(), Some("lint.md:2"));
        // A word that only contains the id is not the id.
        assert_eq!(rule_link(&rules, "F84"), None);
        assert_eq!(rule_link(&rules, "E1").as_deref(), Some("lint.md:3"));
        assert_eq!(rule_link(&rules, ""), None);
    }

    #[test]
    fn levels_propose_classes() {
        assert_eq!(class_of_level("error"), "defect");
        assert_eq!(class_of_level("warning"), "hardening");
        assert_eq!(class_of_level("note"), "note");
        assert_eq!(class_of_level("none"), "note");
    }

    #[test]
    fn a_log_of_another_version_is_refused() {
        let t = Target {
            head: "0123456789abcdef",
            angles: &[],
            standpoint: None,
            rules: &[],
        };
        let e = to_result(
            &json!({"version": "2.0.0", "runs": []}),
            Path::new("/w"),
            &t,
        );
        assert!(e.unwrap_err().contains("2.0.0"));
    }
}
