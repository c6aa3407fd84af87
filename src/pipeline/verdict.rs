//! What a valid hand-off message of the right actor moves the pipeline to, or why it cannot
//! (a failed attempt): the state machine's table, one arm per actor and verdict.
//!
//! Kept apart from the run loop so the table reads as one piece; it checks what a verdict
//! claims (a contract frozen, a gate passing) but spawns nothing.

use std::path::Path;

use super::config::PipelineConfig;
use super::handoff::{self, HandoffMessage};
use super::state::{PState, State};
use crate::contract;
use crate::contract::SprintId;
use crate::store::Store;

/// The transition a valid message of the right actor asks for, or why it cannot be taken
/// (a failed attempt).
pub(super) fn transition_for(
    store: &Store,
    root: &Path,
    sprint: &SprintId,
    state: &mut State,
    m: &HandoffMessage,
    cfg: &PipelineConfig,
) -> std::result::Result<(PState, Option<String>), String> {
    use handoff::{DeployVerdict, ImplVerdict, PlanVerdict, ReviewVerdict};
    match m {
        HandoffMessage::Harang {
            verdict: PlanVerdict::Abort,
            abort_reason,
            ..
        } => Ok((
            PState::Aborted,
            Some(
                abort_reason
                    .clone()
                    .unwrap_or_else(|| "harang aborted".into()),
            ),
        )),
        HandoffMessage::Harang {
            verdict: PlanVerdict::PlanReady,
            payload,
            ..
        } => {
            let Some(p) = payload else {
                return Err("PLAN_READY without payload.contractId".into());
            };
            let versions = contract::versions(store, sprint).map_err(|e| e.message)?;
            if versions.iter().any(|f| f.contract.id == p.contract_id) {
                Ok((PState::Implementing, None))
            } else {
                Err(format!(
                    "PLAN_READY names contract {:?}, which is not a frozen contract of {sprint} (freeze it with `git rails contract freeze {sprint}`)",
                    p.contract_id
                ))
            }
        }
        HandoffMessage::Narang {
            verdict: ImplVerdict::Error,
            error_reason,
            ..
        } => Err(format!(
            "narang reported ERROR: {}",
            error_reason.clone().unwrap_or_default()
        )),
        HandoffMessage::Narang {
            verdict: ImplVerdict::ImplDone,
            ..
        } => {
            let frozen = contract::require_newest(store, sprint).map_err(|e| e.message)?;
            if frozen.contract.approval_gates.implementation {
                let target = contract::validate::Target {
                    sprint,
                    version: frozen.version.clone(),
                    contract: &frozen.contract,
                    contract_commit: Some(frozen.commit),
                    base: frozen.base,
                };
                let report = contract::validate::run(
                    store,
                    &target,
                    &mut |_: &contract::validate::Entry| {},
                )
                .map_err(|e| e.message)?;
                if report.verdict != contract::validate::Verdict::Pass {
                    let _ = root;
                    return Err(format!(
                        "IMPL_DONE, but `git rails contract validate {sprint}` says {} (failed: {}); the turn goes back to narang",
                        report.verdict.as_str(),
                        report.failed.join(", ")
                    ));
                }
            }
            Ok((PState::Reviewing, None))
        }
        HandoffMessage::Darang {
            verdict: ReviewVerdict::Approve,
            ..
        } => {
            let frozen = contract::require_newest(store, sprint).map_err(|e| e.message)?;
            if frozen.contract.approval_gates.deploy {
                Ok((PState::Deploying, None))
            } else {
                Ok((
                    PState::Done,
                    Some("approved; approvalGates.deploy is false".into()),
                ))
            }
        }
        HandoffMessage::Darang {
            verdict: ReviewVerdict::RequestChanges,
            payload,
            ..
        } => {
            state.review_round += 1;
            let rounds = state.review_round - state.review_round_base;
            if rounds > cfg.retry.max_review_rounds {
                Ok((
                    PState::Escalated,
                    Some(format!(
                        "{rounds} REQUEST_CHANGES rounds, more than retry.maxReviewRounds ({})",
                        cfg.retry.max_review_rounds
                    )),
                ))
            } else {
                Ok((
                    PState::Implementing,
                    Some(format!(
                        "review round {}: {} issue(s)",
                        state.review_round,
                        payload.issues.len()
                    )),
                ))
            }
        }
        HandoffMessage::Darang {
            verdict: ReviewVerdict::Abort,
            ..
        } => Ok((PState::Aborted, Some("darang aborted".into()))),
        HandoffMessage::Erang {
            verdict: DeployVerdict::DeployDone,
            ..
        } => Ok((PState::Done, None)),
        HandoffMessage::Erang {
            verdict: DeployVerdict::DeployFailed,
            ..
        } => Err("erang reported DEPLOY_FAILED".into()),
    }
}
