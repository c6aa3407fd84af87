//! JUnit XML for CI systems that show test reports: one test case per prerequisite, runtime
//! command, check and non-goal. A blocking result that did not pass is a `<failure>`; a
//! non-blocking one is `<skipped>` with the warning, so it shows without failing the build.

use super::checks::Status;
use super::validate::Report;

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 forbids most control characters, even escaped.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Renders the report as a JUnit `<testsuites>` document.
pub fn render(r: &Report) -> String {
    let failures = r.failed.len();
    let skipped = r.warnings.len();
    let suite = format!("rails {} {}", r.sprint, r.version);
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.push_str(&format!(
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{failures}\" time=\"{:.3}\">\n",
        escape(&suite),
        r.results.len(),
        r.duration_ms as f64 / 1000.0
    ));
    s.push_str(&format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" timestamp=\"{}\" time=\"{:.3}\">\n",
        escape(&suite),
        r.results.len(),
        escape(&r.started_at),
        r.duration_ms as f64 / 1000.0
    ));
    s.push_str(&format!(
        "    <properties><property name=\"verdict\" value=\"{}\"/></properties>\n",
        r.verdict.as_str()
    ));
    for e in &r.results {
        s.push_str(&format!(
            "    <testcase classname=\"{}.{}\" name=\"{}\" time=\"{:.3}\"",
            escape(&r.sprint),
            e.phase.label(),
            escape(&e.id),
            e.duration_ms as f64 / 1000.0
        ));
        if e.status == Status::Pass {
            s.push_str("/>\n");
            continue;
        }
        s.push_str(">\n");
        let tag = if e.blocking { "failure" } else { "skipped" };
        let prefix = if e.blocking { "" } else { "non-blocking: " };
        s.push_str(&format!(
            "      <{tag} message=\"{}\" type=\"{}\">{}</{tag}>\n",
            escape(&format!("{prefix}{}", e.summary)),
            escape(&e.kind),
            escape(&e.description)
        ));
        s.push_str("    </testcase>\n");
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}
