//! The reference grammar of the module doc: prefixes, the place where the lines start, line
//! ranges, criterion ids, and the words of a reason when nothing is named.

/// The criterion ids of a text (G9): `AC-<digits>` with neither an ASCII letter nor an ASCII
/// digit right before or right after it. Every id is read (`AC-1,AC-2` gives two), in order of
/// first appearance, without repeats. Comparison elsewhere is literal: `AC-01` is not `AC-1`.
pub fn criterion_ids(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut ids: Vec<String> = Vec::new();
    let mut start = 0;
    while let Some(found) = text[start..].find("AC-") {
        let at = start + found;
        start = at + 1;
        if at > 0 && bytes[at - 1].is_ascii_alphanumeric() {
            continue;
        }
        let digits = bytes[at + 3..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = at + 3 + digits;
        if digits == 0 || bytes.get(end).is_some_and(u8::is_ascii_alphanumeric) {
            continue;
        }
        let id = &text[at..end];
        if !ids.iter().any(|seen| seen == id) {
            ids.push(id.to_string());
        }
    }
    ids
}

/// The prefixes of G7 and G8, in the order they are tried (only one can lead a path).
pub(super) const LOCATION_PREFIXES: &[&str] = &["head/", "base/", "./"];

/// G8 keeps `base/` as the name of a repository folder.
pub(super) const LINK_PREFIXES: &[&str] = &["head/", "./"];

/// Takes off the one leading prefix, once: G7 reads `head/base/x` as `base/x` of the head copy.
pub(super) fn strip_prefix<'a>(
    path: &'a str,
    prefixes: &[&'static str],
) -> (Option<&'static str>, &'a str) {
    for &prefix in prefixes {
        if let Some(rest) = path.strip_prefix(prefix) {
            return (Some(prefix), rest);
        }
    }
    (None, path)
}

/// The line part of a reference: digits as written, the range end when there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LineSpec<'a> {
    pub(super) front: &'a str,
    pub(super) back: Option<&'a str>,
}

/// An `end` of §3: Unicode whitespace, `,` or `;` (or the end of the text).
pub(super) fn ends_line(rest: &str) -> bool {
    rest.chars()
        .next()
        .is_none_or(|c| c.is_whitespace() || c == ',' || c == ';')
}

pub(super) fn leading_digits(text: &str) -> &str {
    let n = text.bytes().take_while(u8::is_ascii_digit).count();
    &text[..n]
}

/// Splits a trimmed reference at the first `:line` or `:line-line` followed by an end or the end
/// of the text; `None` when there is no such place (a reference without lines).
pub(super) fn split_lines(text: &str) -> Option<(&str, LineSpec<'_>)> {
    for (colon, _) in text.match_indices(':') {
        let after = &text[colon + 1..];
        let front = leading_digits(after);
        if front.is_empty() {
            continue;
        }
        let rest = &after[front.len()..];
        if ends_line(rest) {
            return Some((&text[..colon], LineSpec { front, back: None }));
        }
        let Some(dash) = rest.chars().next().filter(|&c| c == '-' || c == '–') else {
            continue;
        };
        let after_dash = &rest[dash.len_utf8()..];
        let back = leading_digits(after_dash);
        if !back.is_empty() && ends_line(&after_dash[back.len()..]) {
            return Some((
                &text[..colon],
                LineSpec {
                    front,
                    back: Some(back),
                },
            ));
        }
    }
    None
}

/// Whether a text holds `:<digits>` followed by something that is not an end (such as
/// `t.py:10.`): only used to say "outside the grammar" in a reason.
pub(super) fn has_bad_line_end(text: &str) -> bool {
    text.match_indices(':').any(|(colon, _)| {
        let after = &text[colon + 1..];
        let digits = leading_digits(after);
        !digits.is_empty() && !ends_line(&after[digits.len()..])
    })
}

/// The first word: up to the first Unicode whitespace.
pub(super) fn first_word(text: &str) -> &str {
    text.split(char::is_whitespace).next().unwrap_or(text)
}

/// Reads the line values once the path is decided: 0, a range ending before it starts, or a
/// number too large to hold are out of form (G7 unreadable, G8 unconfirmed).
pub(super) fn line_range(spec: LineSpec<'_>) -> Result<(u64, u64), String> {
    let parse = |digits: &str| {
        digits
            .parse::<u64>()
            .map_err(|_| format!("line number {digits} is too large"))
    };
    let front = parse(spec.front)?;
    let back = match spec.back {
        Some(back) => parse(back)?,
        None => front,
    };
    if front == 0 || back == 0 {
        return Err("line 0 does not exist; lines count from 1".to_string());
    }
    if back < front {
        return Err(format!("the range {front}-{back} ends before it starts"));
    }
    Ok((front, back))
}

pub(super) fn no_target_reason(text: &str, word: &str, what: &str) -> String {
    let reason = if word == text {
        format!("{text:?} is not {what}")
    } else {
        format!("neither {text:?} nor its first word {word:?} is {what}")
    };
    with_grammar_hint(reason, word)
}

/// Adds "outside the grammar" when a line number is followed by something other than an end.
pub(super) fn with_grammar_hint(reason: String, text: &str) -> String {
    if has_bad_line_end(text) {
        format!(
            "{reason}; outside the grammar: a line number may be followed only by whitespace, \
             \",\" or \";\""
        )
    } else {
        reason
    }
}
