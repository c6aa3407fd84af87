//! The seed's `HandoffMessage`: a discriminated union on `actor`, parsed strictly.
//!
//! An actor's stdout must be exactly one JSON object of this shape: an unknown key, a wrong
//! type, a verdict outside the actor's set, or trailing text is a parse error (an ERROR event),
//! never a transition.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The four actors, by the seed's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Actor {
    /// The planner.
    Harang,
    /// The implementer.
    Narang,
    /// The reviewer / QA.
    Darang,
    /// The deployer.
    Erang,
}

impl Actor {
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Harang => "harang",
            Actor::Narang => "narang",
            Actor::Darang => "darang",
            Actor::Erang => "erang",
        }
    }
    pub fn all() -> [Actor; 4] {
        [Actor::Harang, Actor::Narang, Actor::Darang, Actor::Erang]
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlanPayload {
    pub plan_dir: String,
    pub sprint_id: String,
    pub contract_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImplPayload {
    pub branch: String,
    pub commits: Vec<String>,
    pub workdir: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub self_test_report: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecklistResult {
    pub id: String,
    pub passed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Blocker,
    Major,
    Minor,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewIssue {
    pub id: String,
    pub severity: Severity,
    pub location: String,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReviewPayload {
    pub checklist_results: Vec<ChecklistResult>,
    pub issues: Vec<ReviewIssue>,
    pub artifact_path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeployPayload {
    pub deploy_artifact_path: String,
    pub project_type: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub verification_results: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PlanVerdict {
    PlanReady,
    Abort,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ImplVerdict {
    ImplDone,
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReviewVerdict {
    Approve,
    RequestChanges,
    Abort,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DeployVerdict {
    DeployDone,
    DeployFailed,
}

/// One actor's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "actor", rename_all = "lowercase", deny_unknown_fields)]
pub enum HandoffMessage {
    Harang {
        verdict: PlanVerdict,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        payload: Option<PlanPayload>,
        #[serde(
            default,
            rename = "abortReason",
            skip_serializing_if = "Option::is_none"
        )]
        abort_reason: Option<String>,
    },
    Narang {
        verdict: ImplVerdict,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        payload: Option<ImplPayload>,
        #[serde(
            default,
            rename = "errorReason",
            skip_serializing_if = "Option::is_none"
        )]
        error_reason: Option<String>,
    },
    Darang {
        verdict: ReviewVerdict,
        payload: ReviewPayload,
    },
    Erang {
        verdict: DeployVerdict,
        payload: DeployPayload,
    },
}

impl HandoffMessage {
    pub fn actor(&self) -> Actor {
        match self {
            HandoffMessage::Harang { .. } => Actor::Harang,
            HandoffMessage::Narang { .. } => Actor::Narang,
            HandoffMessage::Darang { .. } => Actor::Darang,
            HandoffMessage::Erang { .. } => Actor::Erang,
        }
    }

    /// The verdict as the seed spells it.
    pub fn verdict(&self) -> String {
        let v = match self {
            HandoffMessage::Harang { verdict, .. } => serde_json::to_value(verdict),
            HandoffMessage::Narang { verdict, .. } => serde_json::to_value(verdict),
            HandoffMessage::Darang { verdict, .. } => serde_json::to_value(verdict),
            HandoffMessage::Erang { verdict, .. } => serde_json::to_value(verdict),
        };
        v.ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }
}

/// Parses an actor's stdout: exactly one JSON object of the union, nothing else.
pub fn parse(stdout: &str) -> Result<HandoffMessage, String> {
    let trimmed = stdout.trim();
    if trimmed.is_empty() {
        return Err("the actor printed nothing; a HandoffMessage JSON object was expected".into());
    }
    let value: Value = serde_json::from_str(trimmed)
        .map_err(|e| format!("stdout is not exactly one JSON object: {e}"))?;
    if !value.is_object() {
        return Err("stdout is JSON but not an object".into());
    }
    serde_path_to_error::deserialize(&value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." || path.is_empty() {
            format!("not a HandoffMessage: {}", e.inner())
        } else {
            format!("not a HandoffMessage: {path}: {}", e.inner())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_actor() {
        let m = parse(r#"{"actor":"harang","verdict":"PLAN_READY","payload":{"planDir":"p","sprintId":"S","contractId":"X"}}"#).unwrap();
        assert_eq!(m.actor(), Actor::Harang);
        assert_eq!(m.verdict(), "PLAN_READY");
        let m = parse(r#"{"actor":"narang","verdict":"ERROR","errorReason":"boom"}"#).unwrap();
        assert_eq!(m.verdict(), "ERROR");
        let m = parse(r#"{"actor":"darang","verdict":"REQUEST_CHANGES","payload":{"checklistResults":[{"id":"a","passed":false}],"issues":[{"id":"i1","severity":"major","location":"src/a.rs:3","summary":"s"}],"artifactPath":"qa.md"}}"#).unwrap();
        assert_eq!(m.actor(), Actor::Darang);
        let m = parse(r#"{"actor":"erang","verdict":"DEPLOY_DONE","payload":{"deployArtifactPath":"d","projectType":"web","verificationResults":{"ok":true}}}"#).unwrap();
        assert_eq!(m.verdict(), "DEPLOY_DONE");
    }

    #[test]
    fn refuses_out_of_form() {
        for bad in [
            "",
            "not json",
            "[1]",
            r#"{"actor":"harang","verdict":"PLAN_READY"} trailing"#,
            r#"{"actor":"harang","verdict":"APPROVE"}"#,
            r#"{"actor":"harang","verdict":"PLAN_READY","extra":1}"#,
            r#"{"actor":"sam","verdict":"PLAN_READY"}"#,
            r#"{"verdict":"PLAN_READY"}"#,
            r#"{"actor":"darang","verdict":"APPROVE"}"#,
            r#"{"actor":"darang","verdict":"APPROVE","payload":{"checklistResults":[],"issues":[{"id":"i","severity":"huge","location":"l","summary":"s"}],"artifactPath":"a"}}"#,
            r#"{"actor":"narang","verdict":"IMPL_DONE","payload":{"branch":"b","commits":"abc","workdir":"w"}}"#,
        ] {
            assert!(parse(bad).is_err(), "accepted {bad:?}");
        }
    }
}
