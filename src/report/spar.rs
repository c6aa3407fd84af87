//! spar rounds as an HTML page and the spar gate as markdown.

use std::fmt::Write as _;

use serde_json::Value;

use super::{html, md, page};
use crate::spar::view::RoundView;

/// What the gate decided over the rounds shown.
pub struct GateView<'a> {
    pub passed: bool,
    pub reasons: &'a [String],
    pub document: &'a Value,
}

fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

fn verdict(passed: bool) -> &'static str {
    if passed {
        "passed"
    } else {
        "blocked"
    }
}

/// The triage shown for a finding: its disposition in force, `auto-deferred`, `open` (a
/// blocking class without one) or `none needed`.
fn triage_text(v: &RoundView, f: &crate::spar::record::Finding) -> String {
    match v.disposition(&f.id) {
        Some(d) => d.to_string(),
        None if f.auto_deferred => "auto-deferred".to_string(),
        None if matches!(f.class.as_str(), "defect" | "requirement-question") => "open".to_string(),
        None => "none needed".to_string(),
    }
}

fn lines(f: &crate::spar::record::Finding) -> String {
    match f.lines {
        Some((a, b)) if a == b => format!(":{a}"),
        Some((a, b)) => format!(":{a}-{b}"),
        None => String::new(),
    }
}

/// The HTML report of `rounds` with the gate's verdict over them.
pub fn html_report(rounds: &[RoundView], gate: &GateView<'_>) -> String {
    let targets: Vec<String> = rounds.iter().map(RoundView::target).collect();
    let mut b = String::new();
    let _ = writeln!(b, "<h1>spar report: {}</h1>", html(&targets.join(", ")));
    let v = verdict(gate.passed);
    let _ = writeln!(
        b,
        "<section id=\"gate\"><h2>Gate</h2><p id=\"verdict\" class=\"verdict {v}\" data-verdict=\"{v}\">gate {v}</p>"
    );
    if gate.reasons.is_empty() {
        let _ = writeln!(b, "<p>Every blocking finding is triaged; every required reviewer completed or was waived.</p>");
    } else {
        let _ = writeln!(b, "<ul id=\"reasons\">");
        for r in gate.reasons {
            let _ = writeln!(b, "<li class=\"reason\">{}</li>", html(r));
        }
        let _ = writeln!(b, "</ul>");
    }
    let _ = writeln!(
        b,
        "<p>Open blocking findings: <span id=\"open-findings\">{}</span>; auto-deferred: {}</p></section>",
        gate.document["open_findings"].as_u64().unwrap_or(0),
        gate.document["auto_deferred"].as_u64().unwrap_or(0)
    );
    decisions_section(&mut b, gate.document);
    for v in rounds {
        round_section(&mut b, v);
    }
    let _ = writeln!(
        b,
        "<footer><p>Written by git spar {} from the records in refs/spar/series/.</p></footer>",
        env!("CARGO_PKG_VERSION")
    );
    page(&format!("spar report: {}", targets.join(", ")), &b)
}

/// Who made each decision only a person can make (waivers, acceptances), as the gate read
/// them: everyone sees who, or that nobody signed.
fn decisions_section(b: &mut String, document: &Value) {
    let Some(made) = document["decisions"].as_array().filter(|d| !d.is_empty()) else {
        return;
    };
    let _ = writeln!(
        b,
        "<section id=\"decisions\"><h2>Decisions only a person can make</h2>"
    );
    if let Some(n) = document["notice"].as_str() {
        let _ = writeln!(b, "<p class=\"notice\">{}</p>", html(n));
    }
    let _ = writeln!(b, "<table class=\"decisions\"><thead><tr><th>Round</th><th>Decision</th><th>Made by</th><th>Counts</th></tr></thead><tbody>");
    for d in made {
        let s = |k: &str| d[k].as_str().unwrap_or("").to_string();
        let what = if s("kind") == "waiver" {
            format!("waiver of {}", s("subject"))
        } else {
            format!("{} {}", s("subject"), s("kind"))
        };
        let counts = if d["counts"].as_bool().unwrap_or(false) {
            "yes"
        } else {
            "no"
        };
        let _ = writeln!(
            b,
            "<tr class=\"decision\" data-counts=\"{counts}\"><td>{}</td><td>{}</td><td class=\"made-by\">{}</td><td>{counts}</td></tr>",
            html(&format!("{}:{}", s("series"), s("round"))),
            html(&what),
            html(&s("made_by"))
        );
    }
    let _ = writeln!(b, "</tbody></table></section>");
}

fn round_section(b: &mut String, v: &RoundView) {
    let r = &v.round;
    let _ = writeln!(
        b,
        "<section class=\"round\" data-round=\"{}\"><h2>Round {}</h2>",
        html(&v.target()),
        html(&v.target())
    );
    let _ = writeln!(
        b,
        "<p>Stage {} · {}..{} · started {}{}</p>",
        html(r.stage.as_str()),
        html(short(&r.base)),
        html(short(&r.head)),
        html(&r.started_at),
        if r.dry_run { " · dry run" } else { "" }
    );
    let _ = writeln!(b, "<h3>Reviewers</h3><table class=\"reviewers\"><thead><tr><th>Reviewer</th><th>Preset</th><th>Status</th><th>Verdict</th><th>Model</th><th>Reason</th></tr></thead><tbody>");
    for rev in &r.reviewers {
        let _ = writeln!(
            b,
            "<tr class=\"reviewer\" data-reviewer=\"{}\"><td>{}</td><td>{}</td><td class=\"status\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            html(&rev.name),
            html(&rev.name),
            html(&rev.preset),
            html(rev.status.as_str()),
            html(rev.verdict.as_ref().map_or("", |v| v.as_str())),
            html(rev.observed_model.as_deref().or(rev.model.as_deref()).unwrap_or("")),
            html(&rev.reason)
        );
    }
    let _ = writeln!(b, "</tbody></table>");
    let _ = writeln!(b, "<h3>Findings ({})</h3>", v.findings.len());
    if v.findings.is_empty() {
        let _ = writeln!(b, "<p class=\"missing\">No findings.</p>");
    } else {
        let _ = writeln!(b, "<table class=\"findings\"><thead><tr><th>Finding</th><th>Class</th><th>Triage</th><th>Angle</th><th>Location</th><th>Claim</th><th>Failure scenario</th><th>Why this class</th></tr></thead><tbody>");
        for f in &v.findings {
            let t = triage_text(v, f);
            let loc = if f.location_unreadable {
                format!("{} (unreadable)", f.location)
            } else {
                format!("{}{}", f.path, lines(f))
            };
            let _ = writeln!(
                b,
                "<tr class=\"finding\" data-id=\"{}\" data-class=\"{}\" data-triage=\"{}\"><td>{}</td><td class=\"class class-{}\">{}</td><td class=\"triage\">{}</td><td>{}</td><td><code>{}</code></td><td class=\"claim\">{}</td><td>{}</td><td>{}</td></tr>",
                html(&f.id),
                html(f.class.as_str()),
                html(&t),
                html(&f.id),
                html(f.class.as_str()),
                html(f.class.as_str()),
                html(&t),
                html(f.angle.as_str()),
                html(&loc),
                html(&f.claim),
                html(&f.failure_scenario),
                html(&f.class_reason)
            );
        }
        let _ = writeln!(b, "</tbody></table>");
    }
    let _ = writeln!(b, "</section>");
}

/// Rows of findings a pull-request comment shows at most; the rest are counted.
const MD_FINDINGS: usize = 100;

/// The gate as markdown for a pull-request comment. `rounds` are the listed rounds that could
/// be read (a round that could not is among the reasons).
pub fn markdown(rounds: &[RoundView], gate: &GateView<'_>) -> String {
    let mut s = String::new();
    let v = verdict(gate.passed);
    let icon = if gate.passed { "✅" } else { "⛔" };
    let _ = writeln!(s, "### {icon} spar gate: **{v}**\n");
    let listed: Vec<String> = gate.document["rounds"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(|t| format!("`{}`", t.replace('`', "'")))
                .collect()
        })
        .unwrap_or_default();
    let _ = write!(s, "Rounds: {}", listed.join(", "));
    if let Some(h) = gate.document["head"].as_str() {
        let _ = write!(s, " · head `{}`", short(h));
    }
    let _ = writeln!(
        s,
        " · open blocking findings: {} · auto-deferred: {}\n",
        gate.document["open_findings"].as_u64().unwrap_or(0),
        gate.document["auto_deferred"].as_u64().unwrap_or(0)
    );
    if !gate.reasons.is_empty() {
        let _ = writeln!(s, "**Why it is blocked**\n");
        for r in gate.reasons {
            let _ = writeln!(s, "- {}", md(r));
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "| Round | Reviewer | Status | Verdict | Findings |\n|---|---|---|---|---|"
    );
    for r in rounds {
        for rev in &r.round.reviewers {
            let n = r.findings.iter().filter(|f| f.reviewer == rev.name).count();
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {n} |",
                md(&r.target()),
                md(&rev.name),
                md(rev.status.as_str()),
                md(rev.verdict.as_ref().map_or("", |v| v.as_str()))
            );
        }
    }
    let total: usize = rounds.iter().map(|r| r.findings.len()).sum();
    if total > 0 {
        let _ = writeln!(
            s,
            "\n| Finding | Class | Triage | Location | Claim |\n|---|---|---|---|---|"
        );
        let mut shown = 0;
        for r in rounds {
            for f in &r.findings {
                if shown == MD_FINDINGS {
                    break;
                }
                shown += 1;
                let loc = if f.location_unreadable {
                    format!("{} (unreadable)", f.location)
                } else {
                    format!("{}{}", f.path, lines(f))
                };
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} |",
                    md(&format!("{}:{}", r.round.round, f.id)),
                    md(f.class.as_str()),
                    md(&triage_text(r, f)),
                    md(&loc),
                    md(&f.claim)
                );
            }
        }
        if total > shown {
            let _ = writeln!(
                s,
                "\n… and {} more finding(s); see `git spar show`.",
                total - shown
            );
        }
    }
    s
}
