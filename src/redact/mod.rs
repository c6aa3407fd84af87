//! Secrets are replaced before anything is written: the one redactor every writer of records,
//! notes, packets, logs and reports passes what it did not take from the commits through.
//!
//! One module, because "what is a secret" must be one answer: a check's log, a spar packet's
//! outside document, a reviewer's finding text and a push's last look all ask it, and two
//! answers would let a value through the gap between them.
//!
//! What it replaces, each as `[redacted:<name or rule>]`:
//! - the value of every environment variable of this process whose name marks it as a secret
//!   ([`is_secret_name`]: `*TOKEN*`, `*SECRET*`, `*KEY*`, `*PASSWORD*`, …) or that a contract's
//!   `env_var` prerequisite names ([`mark_secret_name`]), when the value has at least
//!   [`MIN_VALUE_CHARS`] characters (shorter ones would replace ordinary words);
//! - the token formats of gitleaks' rule set ([`rules`] says which rules and why).
//!
//! What it is given is free text only (output, summaries, notes, finding text, documents from
//! outside the repository), never ids, hashes, paths or field names. Content already committed
//! in the repository under review is not redacted: it is in git already, and reviewers' copies
//! and spar's location resolver must stay exact; a caller that passes such content alongside
//! free text names it with [`Redactor::allowing`], and tokens found there are left alone.
//!
//! Output read in chunks goes through a [`Stream`], which holds back a tail so a secret split
//! across two chunks or two lines is still seen whole. Every replacement is counted; the count
//! (never the value) goes into the record ("2 values redacted").
//!
//! Out of reach, and said so in the README: a secret encoded (base64, URL-escaped, split by the
//! program itself), a format no rule knows, and a value in a variable whose name does not say
//! what it is.

pub mod records;
pub mod rules;
mod stream;

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

pub use stream::Stream;

/// Shorter values of secret-named variables are not replaced: `KEY=abc` would redact every
/// `abc` in a log.
pub const MIN_VALUE_CHARS: usize = 8;

/// Words in an environment variable's name that mark its value as a secret (upper case).
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "KEY",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "PRIVATE",
    "COOKIE",
    "SESSION",
];

/// Whether a variable's name marks its value as a secret.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|w| upper.contains(w))
}

fn marked() -> &'static Mutex<BTreeSet<String>> {
    static MARKED: OnceLock<Mutex<BTreeSet<String>>> = OnceLock::new();
    MARKED.get_or_init(|| Mutex::new(BTreeSet::new()))
}

/// Marks a variable as a secret whatever its name: an `env_var` prerequisite's variable (its
/// value is never recorded, so it must not leak through a check's output either). Marked for
/// the rest of the process; every redactor made after sees it.
pub fn mark_secret_name(name: &str) {
    if let Ok(mut m) = marked().lock() {
        m.insert(name.to_string());
    }
}

/// What redacting one text did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    pub text: String,
    /// How many values were replaced.
    pub count: usize,
}

/// One redactor: the secret values known when it was made, and the committed tokens to leave.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// (name, value), longest value first so a value inside another is never half replaced.
    values: Vec<(String, Vec<u8>)>,
    /// Tokens found in committed content: left as they are.
    allowed: BTreeSet<Vec<u8>>,
}

/// A span to replace and the name it is replaced with.
#[derive(Debug, Clone)]
struct Span {
    start: usize,
    end: usize,
    name: String,
}

impl Redactor {
    /// The values of this process's secret-named (and marked) environment variables.
    pub fn from_env() -> Redactor {
        let marked = marked().lock().map(|m| m.clone()).unwrap_or_default();
        let mut r = Redactor::default();
        for (k, v) in std::env::vars_os() {
            let name = k.to_string_lossy();
            if is_secret_name(&name) || marked.contains(name.as_ref()) {
                r.add_value(&name, v.as_encoded_bytes());
            }
        }
        r.sort();
        r
    }

    /// Adds the secret-named variables among `pairs` (a command's own `env` of its spec).
    pub fn with_pairs<'a>(mut self, pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let marked = marked().lock().map(|m| m.clone()).unwrap_or_default();
        for (k, v) in pairs {
            if is_secret_name(k) || marked.contains(k) {
                self.add_value(k, v.as_bytes());
            }
        }
        self.sort();
        self
    }

    /// Leaves alone every token the rules find in `committed` (content already in the
    /// repository under review: a reviewer quoting it must be quoted exactly).
    pub fn allowing(mut self, committed: &[u8]) -> Self {
        for h in rules::find(committed) {
            self.allowed.insert(committed[h.start..h.end].to_vec());
        }
        self
    }

    fn add_value(&mut self, name: &str, value: &[u8]) {
        let trimmed = value.trim_ascii();
        if String::from_utf8_lossy(trimmed).chars().count() >= MIN_VALUE_CHARS
            && !self.values.iter().any(|(_, v)| v == trimmed)
        {
            self.values.push((name.to_string(), trimmed.to_vec()));
        }
    }

    fn sort(&mut self) {
        self.values.sort_by_key(|v| std::cmp::Reverse(v.1.len()));
    }

    /// The spans to replace in `text`, sorted and not overlapping.
    fn spans(&self, text: &[u8]) -> Vec<Span> {
        let mut all: Vec<Span> = Vec::new();
        for (name, value) in &self.values {
            let mut from = 0;
            while let Some(i) = find(&text[from..], value) {
                let start = from + i;
                all.push(Span {
                    start,
                    end: start + value.len(),
                    name: name.clone(),
                });
                from = start + value.len();
            }
        }
        for h in rules::find(text) {
            if self.allowed.contains(&text[h.start..h.end]) {
                continue;
            }
            all.push(Span {
                start: h.start,
                end: h.end,
                name: h.rule.to_string(),
            });
        }
        // Earliest first, the longest of those starting together; later overlapping ones merge
        // into the first (the whole union is replaced, under the first one's name).
        all.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
        let mut out: Vec<Span> = Vec::new();
        for s in all {
            match out.last_mut() {
                Some(last) if s.start < last.end => last.end = last.end.max(s.end),
                _ => out.push(s),
            }
        }
        out
    }

    /// `text` with every secret replaced, and how many were.
    pub fn bytes(&self, text: &[u8]) -> (Vec<u8>, usize) {
        let spans = self.spans(text);
        (replace(text, &spans, text.len()).0, spans.len())
    }

    /// `text` with every secret replaced, and how many were.
    pub fn text(&self, text: &str) -> Redacted {
        let mut spans = self.spans(text.as_bytes());
        // A rule without Unicode may end inside a character: widen to whole characters.
        for s in &mut spans {
            while s.start > 0 && !text.is_char_boundary(s.start) {
                s.start -= 1;
            }
            while s.end < text.len() && !text.is_char_boundary(s.end) {
                s.end += 1;
            }
        }
        let (bytes, _) = replace(text.as_bytes(), &spans, text.len());
        Redacted {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            count: spans.len(),
        }
    }

    /// Redacts `s` in place; returns how many values were replaced.
    pub fn in_place(&self, s: &mut String) -> usize {
        let r = self.text(s);
        if r.count > 0 {
            *s = r.text;
        }
        r.count
    }

    /// Redacts the string values of a JSON document in place, except those under a key in
    /// `keep` (ids, hashes, paths: never free text); keys themselves are never changed.
    pub fn json(&self, v: &mut Value, keep: &[&str]) -> usize {
        match v {
            Value::String(s) => self.in_place(s),
            Value::Array(a) => a.iter_mut().map(|x| self.json(x, keep)).sum(),
            Value::Object(m) => m
                .iter_mut()
                .filter(|(k, _)| !keep.contains(&k.as_str()))
                .map(|(_, x)| self.json(x, keep))
                .sum(),
            _ => 0,
        }
    }

    /// A stream redactor for output read in chunks.
    pub fn stream(&self) -> Stream {
        Stream::new(self.clone())
    }
}

/// `text[..upto]` with `spans` (sorted, not overlapping) that end by `upto` replaced; the
/// bytes and how many spans were replaced.
fn replace(text: &[u8], spans: &[Span], upto: usize) -> (Vec<u8>, usize) {
    let mut out = Vec::with_capacity(upto);
    let mut at = 0;
    let mut n = 0;
    for s in spans.iter().filter(|s| s.end <= upto) {
        out.extend_from_slice(&text[at..s.start]);
        out.extend_from_slice(format!("[redacted:{}]", s.name).as_bytes());
        at = s.end;
        n += 1;
    }
    out.extend_from_slice(&text[at..upto]);
    (out, n)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// "2 values redacted", or None for none.
pub fn counted(n: usize) -> Option<String> {
    match n {
        0 => None,
        1 => Some("1 value redacted".to_string()),
        n => Some(format!("{n} values redacted")),
    }
}

#[cfg(test)]
mod tests;
