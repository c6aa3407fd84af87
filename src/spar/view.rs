//! A recorded round as the outward formats read it (SARIF, the HTML report, markdown): its
//! `round.json`, its findings and the triage in force for each (the newest `ledger.jsonl` line
//! per finding). Read-only; the gate stays the only judge of what blocks.

use std::collections::BTreeMap;

use serde_json::Value;

pub use super::ids::parse_target;
use super::ids::{RoundName, SeriesId};
use super::record::{self, Finding, Round};
pub use super::series::Decision;
use crate::error::{Error, Result};
use crate::store::Store;

/// One round with its findings and their triage.
#[derive(Debug, Clone)]
pub struct RoundView {
    pub round: Round,
    pub findings: Vec<Finding>,
    /// The ledger line in force per finding id (the newest), as recorded.
    pub triage: BTreeMap<String, Value>,
}

impl RoundView {
    /// The disposition in force for a finding (`fixed`, `rejected`, …), if any.
    pub fn disposition(&self, finding: &str) -> Option<&str> {
        self.triage
            .get(finding)
            .and_then(|v| v.get("disposition"))
            .and_then(Value::as_str)
    }

    /// `<series>:<round>`.
    pub fn target(&self) -> String {
        format!("{}:{}", self.round.series, self.round.round)
    }
}

/// Reads one recorded round (refused when it or its findings cannot be read).
pub fn load(store: &Store, series: &SeriesId, round: &RoundName) -> Result<RoundView> {
    let r = record::load_round(store, series, round)?;
    let findings = record::load_findings(store, series, round)?;
    let mut triage = BTreeMap::new();
    if let Some(bytes) = record::round_file(store, series, round, "ledger.jsonl")? {
        for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let v: Value = serde_json::from_slice(line).map_err(|e| {
                Error::refused(format!(
                    "{series}: round {round}: ledger.jsonl line {} cannot be read: {e}",
                    i + 1
                ))
            })?;
            if let Some(id) = v.get("finding").and_then(Value::as_str) {
                triage.insert(id.to_string(), v);
            }
        }
    }
    Ok(RoundView {
        round: r,
        findings,
        triage,
    })
}

/// Reads every round given, in order.
pub fn load_targets(store: &Store, targets: &[(SeriesId, RoundName)]) -> Result<Vec<RoundView>> {
    targets.iter().map(|(s, r)| load(store, s, r)).collect()
}

/// What `git spar show --json` prints (and the MCP `spar_show` tool): one round's record,
/// findings and triage in force, or `spar-series/v1` holding several.
pub fn show_json(
    store: &Store,
    series_name: &SeriesId,
    shown: &[RoundName],
) -> Result<serde_json::Value> {
    let mut v = Vec::new();
    let (_, decisions) = decisions(store, series_name)?;
    for r in shown {
        let round = record::load_round(store, series_name, r)?;
        let findings = record::load_findings(store, series_name, r)?;
        let triage = super::series::triage_in_force(store, series_name, r)?;
        let made: Vec<&Decision> = decisions.iter().filter(|d| *r == d.round).collect();
        v.push(serde_json::json!({"round": round, "findings": findings, "triage": triage, "decisions": made}));
    }
    Ok(if v.len() == 1 {
        v.remove(0)
    } else {
        serde_json::json!({"schema": "spar-series/v1", "series": series_name, "rounds": v})
    })
}

/// The decisions only a person can make in a series, each with who made it under the policy
/// in force (HEAD's, tightened by git configuration), and whether one is in force.
pub fn decisions(store: &Store, series: &SeriesId) -> Result<(bool, Vec<Decision>)> {
    let policy = crate::policy::Policy::load(store, crate::policy::Source::Clone)?;
    let made = super::series::decisions(store, series, policy.as_ref())?;
    Ok((policy.is_some(), made))
}

/// One decision as a line of text: `waiver of claude: alice@example.com (person)`.
pub fn decision_line(d: &Decision) -> String {
    let what = if d.kind == "waiver" {
        format!("waiver of {}", d.subject)
    } else {
        format!("{} {}", d.subject, d.kind)
    };
    let old = if d.in_force { "" } else { " (replaced)" };
    let counts = if d.counts { "" } else { ", does not count" };
    format!("{what}{old}: {}{counts}", d.made_by)
}

/// What `show` names: `<series>:<round>`, a whole `<series>`, or (none given) the current
/// branch's series. Refused when the series has no rounds. The series and the rounds to show.
pub fn show_target(store: &Store, target: Option<&str>) -> Result<(SeriesId, Vec<RoundName>)> {
    let (series, round) = match target {
        Some(t) => match t.split_once(':') {
            Some((s, r)) => (SeriesId::new(s)?, Some(RoundName::named(r))),
            None => (SeriesId::new(t)?, None),
        },
        None => (super::round::default_series(store)?, None),
    };
    let names = record::round_names(store, &series)?;
    if names.is_empty() {
        return Err(Error::refused(format!("series {series} has no rounds"))
            .hint("run one with `git spar run --base <rev>`"));
    }
    let shown = match round {
        Some(r) => vec![r],
        None => names,
    };
    Ok((series, shown))
}
