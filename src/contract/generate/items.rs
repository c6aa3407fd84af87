//! One list item taken apart: its code spans, URLs and `/regex/` literals, the prose around
//! them, and the words the mapping looks for (exists, a port, an exit code); names (slugs) for
//! checks.

use super::*;

#[derive(Debug, Clone)]
pub(super) struct Span {
    pub(super) range: Range<usize>,
    pub(super) code: String,
}

/// Inline code spans: a run of n backticks up to the next run of exactly n.
pub(super) fn code_spans(s: &str) -> Vec<Span> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'`' {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i] == b'`' {
            i += 1;
        }
        let n = i - start;
        let mut j = i;
        while j < b.len() {
            if b[j] != b'`' {
                j += 1;
                continue;
            }
            let run = j;
            while j < b.len() && b[j] == b'`' {
                j += 1;
            }
            if j - run == n {
                out.push(Span {
                    range: start..j,
                    code: s[i..run].trim().to_string(),
                });
                i = j;
                break;
            }
        }
    }
    out
}

/// `s` with the byte ranges replaced by as many spaces (offsets stay valid).
pub(super) fn blank(s: &str, ranges: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        if ranges.iter().any(|r| r.contains(&i)) {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    out
}

/// URLs in `text`, without trailing sentence punctuation.
pub(super) fn urls(text: &str) -> Vec<(Range<usize>, String)> {
    let Some(re) = url_re() else {
        return Vec::new();
    };
    re.find_iter(text)
        .map(|m| {
            let url = m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?']);
            (m.start()..m.start() + url.len(), url.to_string())
        })
        .collect()
}

pub(super) fn is_url(code: &str) -> bool {
    urls(code)
        .first()
        .is_some_and(|(r, _)| r.start == 0 && r.end == code.len())
}

pub(super) fn is_regex_literal(code: &str) -> bool {
    regex_literal(code, 0).is_some_and(|l| l.range.start == 0 && l.range.end == code.len())
}

pub(super) fn one_token(code: &str) -> bool {
    !code.is_empty() && !code.contains(char::is_whitespace)
}

/// A `/pattern/flags` literal.
#[derive(Debug, Clone)]
pub(super) struct Literal {
    pub(super) range: Range<usize>,
    pub(super) pattern: String,
}

/// The first `/pattern/flags` in `text` at or after byte `from`. It starts at a `/` that does
/// not continue a word or path, ends at the next unescaped `/` outside a `[class]`, and its
/// flags (`imsxU`; `g`, `u` ignored) end the word. `\/` becomes `/`.
pub(super) fn regex_literal(text: &str, from: usize) -> Option<Literal> {
    let mut prev = text.get(..from).and_then(|t| t.chars().next_back());
    for (i, c) in text.get(from..)?.char_indices() {
        let i = i + from;
        let starts = c == '/'
            && prev.is_none_or(|p| {
                !(p.is_alphanumeric() || matches!(p, '/' | '.' | '_' | '-' | '\\' | ':' | '~'))
            });
        prev = Some(c);
        if starts {
            if let Some(lit) = literal_at(text, i) {
                return Some(lit);
            }
        }
    }
    None
}

pub(super) fn literal_at(text: &str, start: usize) -> Option<Literal> {
    let body = text.get(start + 1..)?;
    let mut escaped = false;
    let mut class = false;
    let mut close = None;
    for (j, c) in body.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '[' => class = true,
            ']' => class = false,
            '/' if !class => {
                close = Some(j);
                break;
            }
            _ => {}
        }
    }
    let close = close?;
    let inner = body.get(..close)?;
    if inner.trim().is_empty() {
        return None;
    }
    let after = body.get(close + 1..)?;
    let flags: String = after
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    if !flags.chars().all(|f| "gimsuxU".contains(f)) {
        return None;
    }
    let end = start + 1 + close + 1 + flags.len();
    let mut pattern = inner.replace("\\/", "/");
    let inline: String = ['i', 'm', 's', 'x', 'U']
        .into_iter()
        .filter(|f| flags.contains(*f))
        .collect();
    if !inline.is_empty() {
        pattern = format!("(?{inline}){pattern}");
    }
    Some(Literal {
        range: start..end,
        pattern,
    })
}

/// A list item taken apart.
pub(super) struct Parts {
    pub(super) spans: Vec<Span>,
    /// The item with its code spans blanked.
    pub(super) text: String,
}

impl Parts {
    pub(super) fn new(raw: &str) -> Self {
        let spans = code_spans(raw);
        let ranges: Vec<Range<usize>> = spans.iter().map(|s| s.range.clone()).collect();
        Parts {
            text: blank(raw, &ranges),
            spans,
        }
    }

    /// The first code span that is neither a URL nor a regex: the path or command.
    pub(super) fn first_code(&self) -> Option<&Span> {
        self.spans
            .iter()
            .find(|s| !s.code.is_empty() && !is_url(&s.code) && !is_regex_literal(&s.code))
    }

    /// A URL in the prose, else a code span that is only a URL.
    pub(super) fn url(&self) -> Option<String> {
        urls(&self.text)
            .into_iter()
            .next()
            .map(|(_, u)| u)
            .or_else(|| {
                self.spans
                    .iter()
                    .find(|s| is_url(&s.code))
                    .map(|s| s.code.clone())
            })
    }

    /// The prose: code spans, URLs and the `skip` range blanked.
    pub(super) fn prose(&self, skip: Option<&Range<usize>>) -> String {
        let mut ranges: Vec<Range<usize>> = urls(&self.text).into_iter().map(|(r, _)| r).collect();
        ranges.extend(skip.cloned());
        blank(&self.text, &ranges)
    }

    /// A `/regex/` after byte `from`: a code span that is one, else one in the prose.
    pub(super) fn regex_after(&self, from: usize) -> Option<Literal> {
        self.spans
            .iter()
            .filter(|s| s.range.start >= from)
            .find_map(|s| {
                regex_literal(&s.code, 0)
                    .filter(|l| l.range.start == 0 && l.range.end == s.code.len())
                    .map(|l| Literal {
                        range: s.range.clone(),
                        pattern: l.pattern,
                    })
            })
            .or_else(|| regex_literal(&self.text, from))
    }
}

/// The item as a sentence: code spans without backticks, links as `text (url)`, no `**`/`~~`,
/// whitespace collapsed.
pub(super) fn clean(raw: &str) -> String {
    let mut out = String::new();
    let mut pos = 0;
    for s in code_spans(raw) {
        out.push_str(&unmark(&raw[pos..s.range.start]));
        out.push_str(&s.code);
        pos = s.range.end;
    }
    out.push_str(&unmark(&raw[pos..]));
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(super) fn unmark(s: &str) -> String {
    let mut s = s.replace("**", "").replace("~~", "");
    if let Some(re) = link_re() {
        s = re
            .replace_all(&s, |c: &Captures| {
                let text = c.get(1).map_or("", |m| m.as_str()).trim();
                let url = c.get(2).map_or("", |m| m.as_str());
                if text.is_empty() || text == url {
                    url.to_string()
                } else if url.is_empty() {
                    text.to_string()
                } else {
                    format!("{text} ({url})")
                }
            })
            .into_owned();
    }
    if let Some(re) = autolink_re() {
        s = re.replace_all(&s, "$1").into_owned();
    }
    s
}

/// Lower-case ASCII letters and digits joined by `-`, at most [`MAX_SLUG`] bytes; `None`
/// when the text has no ASCII letter (Korean-only text).
pub(super) fn slug(text: &str) -> Option<String> {
    let text = text.replace("https://", " ").replace("http://", " ");
    let mut s = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
    }
    let s = s.trim_end_matches('-');
    if !s.chars().any(|c| c.is_ascii_lowercase()) {
        return None;
    }
    if s.len() <= MAX_SLUG {
        return Some(s.to_string());
    }
    let cut = &s[..MAX_SLUG];
    Some(match cut.rfind('-') {
        Some(i) if i >= MAX_SLUG / 2 => cut[..i].to_string(),
        _ => cut.trim_end_matches('-').to_string(),
    })
}

/// `base`, or `base-2`, `base-3`, … when taken.
pub(super) fn unique(base: String, used: &mut BTreeSet<String>) -> String {
    let mut id = base.clone();
    let mut n = 2;
    while used.contains(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    used.insert(id.clone());
    id
}

/// The prose says the thing exists, and not that it does not (`수 있다` is "can", not "is").
pub(super) fn exists(prose: &str) -> bool {
    is_match(exists_re(), prose)
        && !is_match(negation_re(), prose)
        && !is_match(capability_re(), prose)
}

pub(super) fn find_port(prose: &str) -> Option<u16> {
    let c = captures(port_re(), prose)?;
    first_group(&c)?.parse::<u16>().ok().filter(|p| *p > 0)
}

pub(super) fn exit_code(prose: &str) -> Option<i32> {
    let c = captures(exit_code_re(), prose)?;
    first_group(&c)?.parse().ok()
}
