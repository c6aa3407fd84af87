//! A rails sprint as an HTML page, and the rails gate as markdown.
//!
//! Records are read as plain JSON from the evidence tree (`cycles/<criterion>/<n>/…`), so a
//! field added to a record later shows up without this page changing.

use std::fmt::Write as _;

use serde_json::Value;

use super::{html, md, page};
use crate::error::Result;
use crate::evidence::gate::Report;
use crate::store::{ObjectId, Store};

/// One record file of a cycle with its captured output.
#[derive(Debug, Clone)]
pub struct Step {
    /// `red`, `green`, `surface`, `recheck-1`, `cleanup-2`, `reopen`, …
    pub name: String,
    pub record: Value,
    /// The captured stdout and stderr tails (`<name>.log`), when the step ran the check.
    pub log: Option<String>,
    /// A RED's difference from its base commit (None: not a RED, or not computable here).
    pub from_base: Option<Vec<String>>,
}

/// One cycle of a criterion.
#[derive(Debug, Clone)]
pub struct Cycle {
    pub number: u32,
    pub steps: Vec<Step>,
}

/// What the rails page shows: the gate's report and every cycle of every criterion.
pub struct SprintView {
    pub report: Report,
    pub cycles: Vec<(String, Vec<Cycle>)>,
}

/// The longest log tail a page shows per step, in characters (the newest part is kept).
const LOG_CHARS: usize = 4000;

fn step_order(name: &str) -> (u32, u32) {
    let (base, n) = match name.rsplit_once('-') {
        Some((b, n)) if n.chars().all(|c| c.is_ascii_digit()) => (b, n.parse().unwrap_or(0)),
        _ => (name, 0),
    };
    let rank = match base {
        "red" => 0,
        "green" => 1,
        "surface" => 2,
        "recheck" => 3,
        "cleanup" => 4,
        "reopen" => 5,
        _ => 6,
    };
    (rank, n)
}

/// Reads every cycle of the sprint's criteria from the tip of its evidence chain.
pub fn load(store: &Store, report: Report, tip: Option<ObjectId>) -> Result<SprintView> {
    let mut cycles = Vec::new();
    for c in &report.criteria {
        let mut list = Vec::new();
        if let Some(tip) = tip {
            let dir = format!("cycles/{}", c.id);
            let mut numbers: Vec<u32> = store
                .list_dir(tip, &dir)?
                .iter()
                .filter_map(|n| n.parse().ok())
                .collect();
            numbers.sort();
            for n in numbers {
                let cdir = format!("{dir}/{n}");
                let mut names: Vec<String> = store
                    .list_dir(tip, &cdir)?
                    .into_iter()
                    .filter_map(|f| f.strip_suffix(".json").map(str::to_string))
                    .collect();
                names.sort_by_key(|n| step_order(n));
                let mut steps = Vec::new();
                for name in names {
                    let record = store
                        .read_file(tip, &format!("{cdir}/{name}.json"))?
                        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                        .unwrap_or(Value::Null);
                    let log = store
                        .read_file(tip, &format!("{cdir}/{name}.log"))?
                        .map(|b| String::from_utf8_lossy(&b).into_owned());
                    let from_base = if name == "red" {
                        match serde_json::from_value::<crate::evidence::Record>(record.clone()) {
                            Ok(r) => crate::evidence::base::difference(store, &r)?,
                            Err(_) => None,
                        }
                    } else {
                        None
                    };
                    steps.push(Step {
                        name,
                        record,
                        log,
                        from_base,
                    });
                }
                list.push(Cycle { number: n, steps });
            }
        }
        cycles.push((c.id.clone(), list));
    }
    Ok(SprintView { report, cycles })
}

fn tail(text: &str) -> String {
    let n = text.chars().count();
    if n <= LOG_CHARS {
        return text.to_string();
    }
    let skip = n - LOG_CHARS;
    format!("…{}", text.chars().skip(skip).collect::<String>())
}

fn field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

/// The HTML report of a sprint.
pub fn html_report(v: &SprintView) -> String {
    let r = &v.report;
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<h1>rails report: {} {}</h1>",
        html(&r.sprint),
        html(&r.version)
    );
    let (class, text) = if r.done {
        ("done", "gate passed: done")
    } else {
        ("not-done", "gate blocked: not done")
    };
    let _ = writeln!(
        b,
        "<section id=\"gate\"><h2>Gate</h2><p id=\"verdict\" class=\"verdict {class}\" data-verdict=\"{}\">{text}</p>",
        if r.done { "passed" } else { "blocked" }
    );
    let _ = writeln!(
        b,
        "<p>Sprint type {} · judged at {}</p>",
        html(&r.sprint_type),
        html(r.commit.as_deref().map(short).unwrap_or("(no commit)"))
    );
    if let Some(by) = &r.signed_by {
        let _ = writeln!(
            b,
            "<p id=\"signed-by\">Frozen version {}: {}</p>",
            html(&r.version),
            html(by)
        );
    }
    if !r.not_blocking.is_empty() {
        let _ = writeln!(b, "<ul id=\"not-blocking\">");
        for m in &r.not_blocking {
            let _ = writeln!(
                b,
                "<li class=\"not-blocking-step\">{} (non-blocking) {}: <code>{}</code></li>",
                html(&m.criterion),
                html(&m.reason),
                html(&m.command)
            );
        }
        let _ = writeln!(b, "</ul>");
    }
    if !r.missing.is_empty() {
        let _ = writeln!(b, "<ul id=\"missing\">");
        for m in &r.missing {
            let _ = writeln!(
                b,
                "<li class=\"missing-step\">{} {}: <code>{}</code></li>",
                html(&m.criterion),
                html(&m.reason),
                html(&m.command)
            );
        }
        let _ = writeln!(b, "</ul>");
    }
    let _ = writeln!(b, "</section>");
    let _ = writeln!(b, "<section id=\"criteria\"><h2>Criteria</h2><table class=\"criteria\"><thead><tr><th>Criterion</th><th>Description</th><th>Check</th><th>Status</th><th>Cycle</th><th>Receipts</th><th>Stale</th></tr></thead><tbody>");
    for c in &r.criteria {
        let stale = c.stale.as_ref().map(|s| s.join(", ")).unwrap_or_default();
        let _ = writeln!(
            b,
            "<tr class=\"criterion\" data-id=\"{}\" data-status=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"status\">{}</td><td>{}</td><td class=\"receipts\">{}</td><td>{}</td></tr>",
            html(&c.id),
            c.status.as_str(),
            html(&c.id),
            html(&c.description),
            html(&if c.proof == crate::evidence::Proof::Guard {
                format!("{} (guard)", c.kind)
            } else {
                c.kind.clone()
            }),
            c.status.as_str(),
            c.cycle,
            c.receipts,
            html(&stale)
        );
    }
    let _ = writeln!(b, "</tbody></table></section>");
    for (id, cycles) in &v.cycles {
        let _ = writeln!(
            b,
            "<section class=\"criterion-cycles\" data-id=\"{}\"><h2>{}</h2>",
            html(id),
            html(id)
        );
        if cycles.is_empty() {
            let _ = writeln!(b, "<p class=\"missing\">Nothing recorded yet.</p>");
        }
        for cy in cycles {
            let _ = writeln!(
                b,
                "<h3>Cycle {}</h3><ol class=\"timeline\" data-cycle=\"{}\">",
                cy.number, cy.number
            );
            let has = |n: &str| cy.steps.iter().any(|s| s.name == n);
            for s in &cy.steps {
                step(&mut b, s);
            }
            let guard = r
                .criteria
                .iter()
                .any(|c| &c.id == id && c.proof == crate::evidence::Proof::Guard);
            let expected: &[&str] = if guard {
                &["green"]
            } else {
                &["red", "green", "surface"]
            };
            for n in expected {
                if !has(n) {
                    let _ = writeln!(b, "<li class=\"step step-{n} missing\" data-step=\"{n}\"><strong>{}</strong>: not recorded</li>", n.to_uppercase());
                }
            }
            let _ = writeln!(b, "</ol>");
        }
        let _ = writeln!(b, "</section>");
    }
    let _ = writeln!(
        b,
        "<footer><p>Written by git rails {} from the records in refs/rails/.</p></footer>",
        env!("CARGO_PKG_VERSION")
    );
    page(&format!("rails report: {} {}", r.sprint, r.version), &b)
}

fn step(b: &mut String, s: &Step) {
    let rec = &s.record;
    let kind = s.name.split('-').next().unwrap_or(&s.name);
    let label = if kind == "cleanup" {
        format!("receipt {}", s.name)
    } else {
        s.name.to_uppercase()
    };
    let _ = writeln!(
        b,
        "<li class=\"step step-{}\" data-step=\"{}\"><strong>{}</strong>",
        html(kind),
        html(&s.name),
        html(&label)
    );
    let _ = write!(b, "<div>at {}", html(field(rec, "at")));
    if let Some(st) = rec.get("checkStatus").and_then(Value::as_str) {
        let _ = write!(
            b,
            " · check <span class=\"check-status\">{}</span>",
            html(st)
        );
    }
    if let Some(code) = rec.get("exitCode").and_then(Value::as_i64) {
        let _ = write!(b, " · exit {code}");
    }
    if let Some(t) = rec.get("tree").and_then(Value::as_str) {
        let _ = write!(b, " · tree {}", html(short(t)));
    }
    let _ = writeln!(b, "</div>");
    if s.name == "red" {
        // What CI re-runs is the base commit plus the frozen test files: show what else the
        // recorded tree held, so a reviewer sees it.
        match (rec.get("base").and_then(Value::as_str), &s.from_base) {
            (None, _) => {
                let _ = writeln!(b, "<div class=\"base\">no base commit: recorded before a RED named one, so it cannot be re-run from reviewable content</div>");
            }
            (Some(base), Some(paths)) => {
                let _ = writeln!(
                    b,
                    "<div class=\"base\">base {} · differs from it in: {}</div>",
                    html(short(base)),
                    if paths.is_empty() {
                        "nothing".to_string()
                    } else {
                        html(&paths.join(", "))
                    }
                );
            }
            (Some(base), None) => {
                let _ = writeln!(
                    b,
                    "<div class=\"base\">base {} (not in this clone)</div>",
                    html(short(base))
                );
            }
        }
    }
    for key in ["summary", "note", "path"] {
        let t = field(rec, key);
        if !t.is_empty() {
            let _ = writeln!(b, "<div class=\"{key}\">{key}: {}</div>", html(t));
        }
    }
    if let Some(log) = &s.log {
        if !log.is_empty() {
            let _ = writeln!(b, "<pre class=\"output\">{}</pre>", html(&tail(log)));
        }
    }
    let _ = writeln!(b, "</li>");
}

/// The rails gate as markdown for a pull-request comment.
pub fn markdown(r: &Report) -> String {
    let mut s = String::new();
    let (icon, v) = if r.done {
        ("✅", "passed")
    } else {
        ("⛔", "blocked")
    };
    let _ = writeln!(
        s,
        "### {icon} rails gate: **{v}** — {} {}\n",
        md(&r.sprint),
        md(&r.version)
    );
    if let Some(c) = &r.commit {
        let _ = writeln!(
            s,
            "Judged at `{}` · {} criteria\n",
            short(c),
            r.criteria.len()
        );
    }
    let _ = writeln!(
        s,
        "| Criterion | Status | Check | Receipts | Description |\n|---|---|---|---|---|"
    );
    for c in &r.criteria {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            md(&c.id),
            c.status.as_str(),
            md(&c.kind),
            c.receipts,
            md(&c.description)
        );
    }
    if !r.missing.is_empty() {
        let _ = writeln!(s, "\n**Missing steps**\n");
        for m in &r.missing {
            let _ = writeln!(
                s,
                "- {} {}: `{}`",
                md(&m.criterion),
                md(&m.reason),
                m.command.replace('`', "'")
            );
        }
    }
    s
}
