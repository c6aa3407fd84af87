//! Results where people look: one self-contained HTML file (no network, no script) for spar
//! rounds and for a rails sprint, and markdown of both gates for a pull-request comment.
//!
//! Everything shown comes from the records; reviewer text and check output are hostile, so every
//! value goes through [`html`] or [`md`] before it reaches the page. The pages carry no
//! `<script>`, no external resource and a Content-Security-Policy that forbids both, so even a
//! missed escape could not run anything.
//!
//! - [`spar`]: rounds, reviewers, findings with their triage, and the gate's verdict.
//! - [`rails`]: criteria, each cycle's RED → GREEN → SURFACE timeline with output tails,
//!   receipts, and the gate's verdict.

pub mod rails;
pub mod spar;

/// Text escaped for HTML element content and quoted attribute values.
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab and newline are not valid in HTML text.
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Text as one markdown table cell or list item: on one line, every character that markdown or
/// HTML could read as syntax inside a line escaped with a backslash (so a claim cannot open a
/// tag, an entity, a link, code, a table column, an emphasis or a strike-through). A cell never
/// starts a line, so `#`, `-` and `+` need nothing.
pub fn md(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(one_line.len());
    for c in one_line.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The page around `body`: inline style only, and a policy that allows nothing external.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"{GENERATOR}\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        html(title)
    )
}

/// Marks a page as one of these reports: an existing `--html` file is replaced only when it
/// carries it.
pub const GENERATOR: &str = "rails-spar report";

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem;color:#1b1f24;background:#fff;line-height:1.4}\
h1{font-size:1.6rem}h2{font-size:1.3rem;margin-top:2rem;border-bottom:1px solid #d0d7de}h3{font-size:1.1rem}\
table{border-collapse:collapse;margin:.5rem 0 1rem;width:100%}th,td{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left;vertical-align:top}\
th{background:#f6f8fa}pre{background:#f6f8fa;padding:.5rem;overflow-x:auto;white-space:pre-wrap;max-height:24rem}\
.verdict{font-size:1.4rem;font-weight:700;padding:.6rem 1rem;border-radius:6px;display:inline-block}\
.passed,.done{background:#dafbe1;color:#116329}.blocked,.not-done{background:#ffebe9;color:#a40e26}\
.class-defect,.class-requirement-question{color:#a40e26;font-weight:600}.class-hardening{color:#9a6700}.class-note{color:#57606a}\
.timeline{list-style:none;padding:0;display:flex;gap:1rem;flex-wrap:wrap}.timeline>li{border:1px solid #d0d7de;border-radius:6px;padding:.5rem;min-width:16rem;flex:1;position:relative}\
.timeline>li+li::before{content:'\\2192';position:absolute;left:-.85rem;top:.4rem;color:#57606a}\
.step-red{border-top:4px solid #cf222e!important}.step-green{border-top:4px solid #1a7f37!important}.step-surface{border-top:4px solid #0969da!important}.missing{color:#57606a;font-style:italic}";

/// Refuses an `--html` file that cannot be a report: a folder, a path inside a folder that does
/// not exist, or an existing file that is not an earlier report (a tracked README is never
/// overwritten by a typo). Nothing is written then.
pub fn check_out_file(path: &std::path::Path) -> crate::error::Result<()> {
    use crate::error::Error;
    if path.as_os_str().is_empty() {
        return Err(Error::usage("--html needs a file name"));
    }
    if path.is_dir() {
        return Err(
            Error::refused(format!("--html {}: is a folder", path.display()))
                .hint("name a file, e.g. --html report.html"),
        );
    }
    if let Ok(m) = std::fs::symlink_metadata(path) {
        let earlier = m.is_file()
            && std::fs::read(path).is_ok_and(|b| {
                let text = String::from_utf8_lossy(&b[..b.len().min(2048)]).into_owned();
                text.contains(&format!(
                    "<meta name=\"generator\" content=\"{GENERATOR}\">"
                ))
            });
        if !earlier {
            return Err(Error::refused(format!(
                "--html {}: exists and is not a report written before",
                path.display()
            ))
            .hint("name a new file, or remove this one first"));
        }
    }
    if let Some(parent) = path.parent() {
        if !parent.as_os_str().is_empty() && !parent.is_dir() {
            return Err(Error::refused(format!(
                "--html {}: the folder {} does not exist",
                path.display(),
                parent.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escapes_markup_quotes_and_control_characters() {
        assert_eq!(
            html("<script>a&b</script> \"x\" 'y'"),
            "&lt;script&gt;a&amp;b&lt;/script&gt; &quot;x&quot; &#39;y&#39;"
        );
        assert_eq!(html("a\u{0}b\nc"), "a\u{FFFD}b\nc");
    }

    #[test]
    fn markdown_cells_stay_one_cell_of_plain_text() {
        assert_eq!(md("a | b\nc"), "a \\| b c");
        assert_eq!(
            md("<b>[x](y)</b> `z` *w* &amp;"),
            "\\<b\\>\\[x\\](y)\\</b\\> \\`z\\` \\*w\\* \\&amp;"
        );
        assert_eq!(md("F401: `os` unused - ok."), "F401: \\`os\\` unused - ok.");
    }

    #[test]
    fn pages_carry_no_script_and_allow_nothing_external() {
        let p = page("<t>", "<p>x</p>");
        assert!(p.contains("<title>&lt;t&gt;</title>"));
        assert!(p.contains("default-src 'none'"));
        assert!(!p.contains("<script"));
    }
}
