//! `regex_in_file`: a pattern that must (or must not) match a file's text; the evidence
//! quotes the matching line.

use super::*;

/// Reads a file under `root`: `Err(Fail)` when it is missing, `Err(Error)` when it cannot be
/// read.
pub(super) fn read_file(
    path: &str,
    root: &Path,
    evidence: &Value,
) -> Result<Vec<u8>, Box<Outcome>> {
    fs::read(root.join(path)).map_err(|e| {
        Box::new(if e.kind() == io::ErrorKind::NotFound {
            Outcome::fail(format!("{path:?} is missing"), evidence.clone())
        } else {
            Outcome::error(format!("cannot read {path:?}: {e}"), evidence.clone())
        })
    })
}

pub(super) fn regex_in_file(spec: &RegexSpec, root: &Path) -> Outcome {
    let path = spec.path.as_str();
    let negate = spec.negate.unwrap_or(false);
    let no_match = json!({"path": path, "matched": false, "line": null, "text": null});
    let re = match RegexBuilder::new(&spec.pattern).multi_line(true).build() {
        Ok(re) => re,
        Err(e) => return Outcome::error(format!("invalid regex: {e}"), no_match),
    };
    let bytes = match read_file(path, root, &no_match) {
        Ok(b) => b,
        Err(o) => return *o,
    };
    let text = String::from_utf8_lossy(&bytes);
    let Some(m) = re.find(&text) else {
        return Outcome::pass_if(
            negate,
            format!("/{}/ does not match in {path:?}", spec.pattern),
            no_match,
        );
    };
    let line_no = text[..m.start()].matches('\n').count() + 1;
    let line_start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let line = clip(
        text[line_start..line_end].trim_end_matches('\r'),
        QUOTE_CHARS,
    );
    let evidence = json!({"path": path, "matched": true, "line": line_no, "text": line});
    if negate {
        Outcome::fail(
            format!(
                "/{}/ matches {path:?} line {line_no}: {}",
                spec.pattern,
                clip(line.trim(), 120)
            ),
            evidence,
        )
    } else {
        Outcome::pass(format!("matches {path}:{line_no}"), evidence)
    }
}
