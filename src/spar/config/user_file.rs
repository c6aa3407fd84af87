//! The user TOML file (G17, G19, G20, G21): the top-level `timeout_seconds` and the
//! `[[reviewers]]` list, each reviewer's keys checked against its preset, and the reviewer
//! names (G20) that a run, a record and a result name a reviewer by.

use super::*;

/// Reads the user TOML file's top level: `timeout_seconds` and `[[reviewers]]`.
pub(super) fn parse_user(
    doc: &Doc,
    fields: Vec<Field>,
) -> Result<(Sourced<u64>, Sourced<Vec<Reviewer>>)> {
    let mut timeout = None;
    let mut reviewers = None;
    for f in fields {
        match f.key.as_str() {
            "timeout_seconds" => timeout = Some(doc.positive(&f, "timeout_seconds")?),
            "reviewers" => reviewers = Some(f),
            other => {
                return Err(doc.error(
                    f.line,
                    format!(
                        "unknown key {}; the user file takes timeout_seconds and [[reviewers]]",
                        quote(other)
                    ),
                ))
            }
        }
    }
    let timeout = timeout.unwrap_or_else(|| Sourced::default_value(DEFAULT_TIMEOUT_SECONDS));
    let Some(list) = reviewers else {
        return Ok((timeout.clone(), default_list(&timeout)));
    };
    let V::Array(entries) = &list.val.v else {
        return Err(doc.error(
            list.line,
            format!(
                "reviewers must be an array of tables ([[reviewers]]), not {}",
                list.val.v.describe()
            ),
        ));
    };
    let list_origin = doc.origin(list.line);
    if entries.is_empty() {
        // An empty list selects one native reviewer, as an empty clean-review list and an empty
        // --reviewers do (G18, G19, G25).
        let native = Reviewer::bare(Preset::Native, list_origin.clone(), timeout.clone());
        return Ok((
            timeout,
            Sourced {
                value: vec![native],
                origin: list_origin,
            },
        ));
    }
    let mut out: Vec<Reviewer> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let reviewer = parse_reviewer(doc, i + 1, entry, &timeout)?;
        let line = match &reviewer.name.origin {
            Origin::File { line, .. } => *line,
            _ => entry.line,
        };
        if let Some(earlier) = out
            .iter()
            .find(|r| r.name.value.eq_ignore_ascii_case(&reviewer.name.value))
        {
            return Err(doc.error(
                line,
                format!(
                    "reviewer name {} repeats {} ({}); names must differ ignoring case",
                    quote(&reviewer.name.value),
                    quote(&earlier.name.value),
                    earlier.name.origin
                ),
            ));
        }
        out.push(reviewer);
    }
    Ok((
        timeout,
        Sourced {
            value: out,
            origin: list_origin,
        },
    ))
}

/// Reads one `[[reviewers]]` entry (G20, G21, G19); `n` is its 1-based position.
pub(super) fn parse_reviewer(
    doc: &Doc,
    n: usize,
    entry: &Val,
    top: &Sourced<u64>,
) -> Result<Reviewer> {
    let V::Table(fields) = &entry.v else {
        return Err(doc.error(
            entry.line,
            format!(
                "reviewers entry {n} must be a table, not {}",
                entry.v.describe()
            ),
        ));
    };
    let Some(preset_field) = fields.iter().find(|f| f.key == "preset") else {
        return Err(doc.error(
            entry.line,
            format!(
                "reviewers entry {n} has no preset; set preset to one of {}",
                preset_names()
            ),
        ));
    };
    let preset_name = doc.string(preset_field, "preset")?;
    let Some(preset) = Preset::parse(&preset_name) else {
        return Err(doc.error(
            preset_field.line,
            format!(
                "unknown preset {}; use one of {}",
                quote(&preset_name),
                preset_names()
            ),
        ));
    };
    let mut r = Reviewer::bare(preset, doc.origin(preset_field.line), top.clone());
    r.name.origin = Origin::Default;
    for f in fields {
        let key = f.key.as_str();
        let applies = match key {
            "argv" => matches!(preset, Preset::Command | Preset::Sarif),
            "binary" | "model" | "fallback_model" | "allowed_models" => preset.takes_model(),
            "effort" | "allowed_efforts" => preset.takes_effort(),
            _ => true,
        };
        if !REVIEWER_KEYS.contains(&key) {
            return Err(doc.error(
                f.line,
                format!(
                    "unknown key {} in reviewers entry {n}; an entry takes {}",
                    quote(key),
                    REVIEWER_KEYS.join(", ")
                ),
            ));
        }
        if !applies {
            return Err(doc.error(
                f.line,
                format!("{key} does not apply to preset {}", quote(preset.as_str())),
            ));
        }
        match key {
            "preset" => {}
            "name" => {
                let name = doc.string(f, "name")?;
                if let Err(why) = check_name(&name) {
                    return Err(doc.error(f.line, format!("name {}: {why}", quote(&name))));
                }
                r.name = doc.at(f.line, name);
            }
            "timeout_seconds" => r.timeout_seconds = doc.positive(f, "timeout_seconds")?,
            "argv" => {
                let argv =
                    doc.strings(f, "argv", |s| s.is_empty().then(|| "is empty".to_owned()))?;
                if argv.is_empty() {
                    return Err(doc.error(f.line, "argv must not be empty"));
                }
                r.argv = Some(doc.at(f.line, argv));
            }
            "binary" => r.binary = Some(doc.at(f.line, doc.string(f, key)?)),
            "model" => {
                let model = doc.string(f, key)?;
                if model.is_empty() {
                    return Err(doc.error(
                        f.line,
                        "model must not be empty; leave the key out to use the CLI's default",
                    ));
                }
                r.model = Some(doc.at(f.line, model));
            }
            "fallback_model" => r.fallback_model = Some(doc.at(f.line, doc.string(f, key)?)),
            "effort" => r.effort = Some(doc.at(f.line, doc.string(f, key)?)),
            "allowed_models" | "allowed_efforts" => {
                let list =
                    doc.strings(f, key, |s| value_problem(s.as_bytes()).map(str::to_owned))?;
                if list.is_empty() {
                    return Err(doc.error(f.line, format!("{key} must not be empty")));
                }
                if key == "allowed_models" {
                    r.allowed_models = Some(doc.at(f.line, list));
                } else {
                    r.allowed_efforts = Some(doc.at(f.line, list));
                }
            }
            _ => {}
        }
    }
    if matches!(preset, Preset::Command | Preset::Sarif) && r.argv.is_none() {
        return Err(doc.error(
            preset_field.line,
            format!("reviewers entry {n}: preset \"{preset}\" needs argv"),
        ));
    }
    for (value, list, what) in [
        (&r.model, &r.allowed_models, "model"),
        (&r.effort, &r.allowed_efforts, "effort"),
    ] {
        if let (Some(value), Some(list)) = (value, list) {
            let line = match &list.origin {
                Origin::File { line, .. } => *line,
                _ => entry.line,
            };
            return Err(doc.error(
                line,
                format!(
                    "allowed_{what}s cannot be combined with {what} ({}) in one entry: a fixed {what} leaves nothing for --{what} to pick",
                    value.origin
                ),
            ));
        }
    }
    Ok(r)
}

pub(super) fn preset_names() -> String {
    Preset::ALL.map(Preset::as_str).join(", ")
}

/// Checks a reviewer name against G20: the syntax and the reserved names. Duplicates are checked
/// where the list is known.
pub fn check_name(name: &str) -> std::result::Result<(), String> {
    let bytes = name.as_bytes();
    let syntax_ok = matches!(bytes.first(), Some(b) if b.is_ascii_alphanumeric())
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if !syntax_ok {
        return Err(
            "a reviewer name is 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit"
                .to_owned(),
        );
    }
    let lower = name.to_ascii_lowercase();
    let base = lower.strip_suffix(".tmp").unwrap_or(&lower);
    if RESERVED_NAMES.contains(&base) {
        return Err(format!(
            "the name is reserved for spar's own files in a round folder ({})",
            RESERVED_NAMES.join(", ")
        ));
    }
    Ok(())
}

/// What is wrong with a `--model` / `--effort` value or an `allowed_*` item (G25), if anything.
pub(super) fn value_problem(value: &[u8]) -> Option<&'static str> {
    let Ok(text) = std::str::from_utf8(value) else {
        return Some("is not valid UTF-8");
    };
    if text.is_empty() {
        Some("is empty")
    } else if text.starts_with('-') {
        Some("starts with -")
    } else if text.chars().any(char::is_whitespace) {
        Some("contains whitespace")
    } else if text.chars().any(char::is_control) {
        Some("contains a control character")
    } else {
        None
    }
}
