//! `summary.md`: the reviewer's view of a round, also added to `refs/notes/spar` on the head.

use std::collections::HashMap;

use super::record::{Finding, Round};
use super::vocab::Disposition;

fn short(id: &str) -> &str {
    &id[..id.len().min(7)]
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The `## Standpoints` section of a round with standpoints: each reviewer's standpoint and
/// report, and the standpoints no completed reviewer covered (waived reviewers included).
fn standpoints(round: &Round) -> String {
    let mut s =
        String::from("\n## Standpoints\n\n| reviewer | standpoint | report |\n|---|---|---|\n");
    for r in &round.reviewers {
        let standpoint = r.standpoint.as_ref().and_then(Option::as_deref);
        let report = r.standpoint_report.as_ref().and_then(|v| {
            let checked = v.get("checked")?.as_bool()?;
            let detail = v.get("detail")?.as_str()?;
            Some(format!(
                "{}: {}",
                if checked { "checked" } else { "not checked" },
                cell(detail)
            ))
        });
        s.push_str(&format!(
            "| {} | {} | {} |\n",
            cell(&r.name),
            standpoint.map_or_else(|| "- (the whole change)".to_string(), cell),
            report.as_deref().unwrap_or("-")
        ));
    }
    // A standpoint for a reviewer this round did not run.
    for v in &round.standpoints {
        let (Some(name), Some(text)) = (
            v.get("reviewer").and_then(|n| n.as_str()),
            v.get("text").and_then(|t| t.as_str()),
        ) else {
            continue;
        };
        if !round.reviewers.iter().any(|r| r.name == name) {
            s.push_str(&format!("| {} | {} | not run |\n", cell(name), cell(text)));
        }
    }
    if round.standpoints_uncovered.is_empty() {
        s.push_str("\nEvery standpoint was covered by a completed reviewer.\n");
    } else {
        s.push_str(&format!(
            "\nStandpoints uncovered (no completed reviewer): {}\n",
            round.standpoints_uncovered.join(", ")
        ));
    }
    s
}

/// Why a finding's class differs from the class its reviewer proposed, in plain words (the
/// classification rules are in docs/spar-input-contract.md and the README); `None` when the
/// reviewer's proposal stood.
pub fn class_note(f: &Finding) -> Option<String> {
    if f.class == f.proposed_class {
        return None;
    }
    let r = f.class_reason.as_str();
    let (unreadable, rest) = match r.strip_prefix("unreadable location (") {
        Some(tail) => match tail.split_once("); ") {
            Some((why, rest)) => (Some(why), rest),
            None => (Some(tail.trim_end_matches(')')), ""),
        },
        None => (None, r),
    };
    let rule = rest.split_once(": ").map_or("", |(n, _)| n);
    let why = match rule {
        "rule 1" => format!(
            "it is in the check paths and its check impact is {}, so a check may pass when it should not",
            f.check_impact
        ),
        "rule 2" => "it is in the check paths and breaks the contract it links to (the link was confirmed)".to_string(),
        "rule 3" => "it is in the check paths and does not make a check pass falsely, so it is hardening, deferred automatically".to_string(),
        "rule 5" => "the change introduced it and it is a regression".to_string(),
        "rule 6" => format!(
            "a defect must link to a rule, contract or criterion that spar can confirm, and {}",
            if f.claimed_link.trim().is_empty() {
                "it gave no link".to_string()
            } else {
                format!("its link {:?} could not be confirmed", f.claimed_link)
            }
        ),
        _ if unreadable.is_some() => rest.to_string(),
        _ => rest.split_once(": ").map_or(rest, |(_, w)| w).to_string(),
    };
    let why = match unreadable {
        Some(u) => format!("its location could not be read ({u}); {why}"),
        None => why,
    };
    Some(format!(
        "proposed {}, classified {}: {why}",
        f.proposed_class, f.class
    ))
}

/// Renders the round as recorded when it ran (no triage yet beyond automatic deferrals).
pub fn render(round: &Round, findings: &[Finding]) -> String {
    render_with_triage(round, findings, &HashMap::new())
}

/// Renders the round with each finding's triage in force (`git spar show`).
pub fn render_with_triage(
    round: &Round,
    findings: &[Finding],
    triage: &HashMap<String, String>,
) -> String {
    let mut s = format!(
        "# spar {} {} ({})\n\nbase {} → head {}{}\n\n",
        round.series,
        round.round,
        round.stage,
        short(&round.base),
        short(&round.head),
        if round.dry_run {
            " · dry run: no reviewer ran"
        } else {
            ""
        }
    );
    s.push_str("## Reviewers\n\n| reviewer | preset | status | verdict | observed model | reason |\n|---|---|---|---|---|---|\n");
    for r in &round.reviewers {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            cell(&r.name),
            r.preset,
            r.status,
            r.verdict.as_ref().map_or("-", |v| v.as_str()),
            r.observed_model.as_deref().unwrap_or("-"),
            cell(&match (r.reason.is_empty(), &r.resets) {
                (true, _) => "-".to_string(),
                (false, Some(at)) => format!("{} (resets {at})", r.reason),
                (false, None) => r.reason.clone(),
            })
        ));
    }
    let mut angles = String::new();
    for r in &round.reviewers {
        let checked: Vec<String> = r
            .angles_checked
            .iter()
            .filter_map(|a| a.get("angle").and_then(|v| v.as_str()).map(str::to_string))
            .collect();
        let unchecked: Vec<String> = r
            .angles_unchecked
            .iter()
            .filter_map(|a| {
                let angle = a.get("angle")?.as_str()?;
                let reason = a.get("reason").and_then(|v| v.as_str()).unwrap_or("");
                Some(format!("{angle} ({})", cell(reason)))
            })
            .collect();
        if !checked.is_empty() || !unchecked.is_empty() {
            angles.push_str(&format!(
                "- {}: checked {}{}\n",
                r.name,
                if checked.is_empty() {
                    "-".to_string()
                } else {
                    checked.join(", ")
                },
                if unchecked.is_empty() {
                    String::new()
                } else {
                    format!("; not checked {}", unchecked.join(", "))
                }
            ));
        }
    }
    if !angles.is_empty() {
        s.push_str("\n## Angles\n\n");
        s.push_str(&angles);
    }
    if round.has_standpoints() {
        s.push_str(&standpoints(round));
    }
    // G15: what a native transcript showed (kinds and tools only); nothing without any.
    if !round.warnings.is_empty() {
        s.push_str("\n## Warnings\n\n");
        for w in &round.warnings {
            s.push_str(&format!("- {}\n", cell(w)));
        }
    }
    s.push_str(&format!("\n## Findings ({})\n\n", findings.len()));
    if findings.is_empty() {
        s.push_str("No findings.\n");
    } else {
        s.push_str("| id | class | location | claim | triage |\n|---|---|---|---|---|\n");
        for f in findings {
            let location = if f.location_unreadable {
                format!("{} (unreadable location)", cell(&f.location))
            } else {
                cell(&f.location)
            };
            let triage = match triage.get(&f.id) {
                Some(t) => t.as_str(),
                None if f.auto_deferred => Disposition::AutoDeferred.as_str(),
                None => "-",
            };
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                f.id,
                f.class,
                location,
                cell(&f.claim),
                cell(triage)
            ));
        }
        let notes: Vec<String> = findings
            .iter()
            .filter_map(|f| class_note(f).map(|n| format!("- {}: {}\n", f.id, cell(&n))))
            .collect();
        if !notes.is_empty() {
            s.push_str("\n## Classes that differ from the proposal\n\n");
            s.push_str(&notes.concat());
        }
    }
    let fixes: Vec<&Finding> = findings
        .iter()
        .filter(|f| !f.smallest_fix.trim().is_empty())
        .collect();
    if !fixes.is_empty() {
        s.push_str("\n## Smallest fixes\n\n");
        for f in fixes {
            s.push_str(&format!("- {}: {}\n", f.id, f.smallest_fix.trim()));
        }
    }
    s
}
