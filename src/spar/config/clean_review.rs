//! clean-review's `config.json` (G18), read only when no TOML user file exists.
//!
//! serde_json gives no positions, so a small scanner ([`JsonScan`]) finds the line of the
//! `reviewers` key and of each of its items: errors name `<file>:<line>` as they do for TOML.

use super::*;

/// Reads the clean-review file: a JSON object whose optional `reviewers` is an array of strings.
pub(super) fn parse_clean_review(
    path: &Path,
    bytes: &[u8],
    timeout: &Sourced<u64>,
) -> Result<Sourced<Vec<Reviewer>>> {
    let err = |line: usize, message: String| {
        Error::refused(format!("{}:{line}: {message}", path.display())).hint(
            "fix the clean-review config.json, or write a spar user file (~/.config/jaekit/spar.toml), which takes precedence",
        )
    };
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| err(e.line().max(1), format!("JSON: {e}")))?;
    let Value::Object(object) = &value else {
        return Err(err(
            1,
            format!("the file must be a JSON object, not {}", json_type(&value)),
        ));
    };
    let Some(list) = object.get("reviewers") else {
        return Ok(default_list(timeout));
    };
    let lines = locate_reviewers(bytes);
    let key_line = lines.as_ref().map_or(1, |l| l.key);
    let item_line = |i: usize| {
        lines
            .as_ref()
            .and_then(|l| l.items.get(i).copied())
            .unwrap_or(key_line)
    };
    let Value::Array(items) = list else {
        return Err(err(
            key_line,
            format!(
                "reviewers must be an array of strings, not {}",
                json_type(list)
            ),
        ));
    };
    let origin = |line| Origin::File {
        path: path.to_path_buf(),
        line,
    };
    let mut out: Vec<Reviewer> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::String(raw) = item else {
            return Err(err(
                item_line(i),
                format!(
                    "reviewers item {} must be a string, not {}",
                    i + 1,
                    json_type(item)
                ),
            ));
        };
        let name = raw.trim();
        if name.is_empty() {
            continue;
        }
        let preset = Preset::parse(name).filter(|p| !matches!(p, Preset::Command | Preset::Sarif));
        let Some(preset) = preset else {
            return Err(err(
                item_line(i),
                format!(
                    "reviewers item {} {}: clean-review names one of claude, codex, agy, native",
                    i + 1,
                    quote(raw)
                ),
            ));
        };
        if out.iter().any(|r| r.preset.value == preset) {
            return Err(err(
                item_line(i),
                format!("reviewers item {} {}: named twice", i + 1, quote(raw)),
            ));
        }
        out.push(Reviewer::bare(
            preset,
            origin(item_line(i)),
            timeout.clone(),
        ));
    }
    if out.is_empty() {
        out.push(Reviewer::bare(
            Preset::Native,
            origin(key_line),
            timeout.clone(),
        ));
    }
    Ok(Sourced {
        value: out,
        origin: origin(key_line),
    })
}

pub(super) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Lines of the (last) top-level `reviewers` key of a JSON object and of its array's items.
pub(super) struct JsonLines {
    pub(super) key: usize,
    pub(super) items: Vec<usize>,
}

/// Finds [`JsonLines`] in a document serde_json already accepted as an object; `None` if the
/// scan meets something it does not expect.
pub(super) fn locate_reviewers(src: &[u8]) -> Option<JsonLines> {
    let mut s = JsonScan { src, pos: 0 };
    s.ws();
    s.eat(b'{')?;
    let mut found = None;
    loop {
        s.ws();
        if s.peek()? == b'}' {
            return found;
        }
        let key_start = s.pos;
        s.string()?;
        let key: String = serde_json::from_slice(&src[key_start..s.pos]).ok()?;
        s.ws();
        s.eat(b':')?;
        s.ws();
        if key == "reviewers" {
            let mut lines = JsonLines {
                key: line_at(src, key_start),
                items: Vec::new(),
            };
            if s.peek()? == b'[' {
                s.pos += 1;
                loop {
                    s.ws();
                    if s.peek()? == b']' {
                        s.pos += 1;
                        break;
                    }
                    lines.items.push(line_at(src, s.pos));
                    s.value()?;
                    s.ws();
                    if s.peek()? == b',' {
                        s.pos += 1;
                    }
                }
            } else {
                s.value()?;
            }
            found = Some(lines);
        } else {
            s.value()?;
        }
        s.ws();
        if s.peek()? == b',' {
            s.pos += 1;
        }
    }
}

/// A cursor over valid JSON, skipping values without building them.
pub(super) struct JsonScan<'a> {
    pub(super) src: &'a [u8],
    pub(super) pos: usize,
}

impl JsonScan<'_> {
    pub(super) fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    pub(super) fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.pos += 1)
    }

    pub(super) fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    pub(super) fn string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => self.pos += 1,
            }
        }
    }

    pub(super) fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                self.pos += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.pos += 1;
                }
                Some(())
            }
        }
    }
}
