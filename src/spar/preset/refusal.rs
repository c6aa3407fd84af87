//! G13 and the seed's §5: the refusal phrases spar recognizes in a reviewer's stderr and error
//! output, matched without regard to case (and with a typographic apostrophe read as `'`).
//! Nothing else is a refusal.

use std::sync::OnceLock;

use regex::Regex;

use crate::spar::vocab::string_enum;

string_enum!(
    /// What kind of refusal a text holds; the name is the one recorded in an attempt.
    RefusalKind, "refusal", {
        /// Usage or request limits: the reviewer is unavailable; a fallback model is tried once.
        Quota = "quota",
        /// Authentication: the reviewer is unavailable; no fallback.
        Auth = "authentication",
    }
);

impl RefusalKind {
    /// The reason's prefix (§5).
    pub fn label(self) -> &'static str {
        match self {
            RefusalKind::Quota => "quota or rate limit",
            RefusalKind::Auth => "authentication",
        }
    }
}

/// A refusal found in a reviewer's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub kind: RefusalKind,
    /// The line that holds the phrase, trimmed and shortened.
    pub message: String,
    /// The reset time the text names, if any (`resets in 3h`, `try again at 12:32 PM`).
    pub resets: Option<String>,
}

impl Refusal {
    /// `quota or rate limit: <message>` / `authentication: <message>`.
    pub fn reason(&self) -> String {
        format!("{}: {}", self.kind.label(), self.message)
    }
}

const QUOTA: &[&str] = &[
    "resource_exhausted",
    "429 too many requests",
    "too many requests",
    "rate limit",
    "rate_limit",
    "rate-limit",
    "ratelimit",
    "quota reached",
    "quota exceeded",
    "quota exhausted",
    "insufficient_quota",
    "hit your limit",
    "hit your usage limit",
    "usage limit reached",
];

const AUTH: &[&str] = &[
    "unauthenticated",
    "401 unauthorized",
    "not logged in",
    "authentication required",
    "authentication failed",
    "login again",
    "log in again",
    "sign in again",
    "codex login",
    "agy login",
    "claude login",
    "run /login",
    "oauth token expired",
    "oauth token has expired",
    "invalid api key",
    "incorrect api key",
];

fn status_re(code: &str) -> Regex {
    // `code` or `status`, up to four symbols, then the number (not part of a longer number).
    Regex::new(&format!(
        r"(?:code|status)[^a-z0-9]{{0,4}}{code}(?:[^0-9]|$)"
    ))
    .expect("a fixed pattern")
}

fn quota_status() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| status_re("429"))
}

fn auth_status() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| status_re("401"))
}

fn resets_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?:\bresets?(?:\s+(?:in|at))?|\btry again (?:in|at))\s+(\S*[0-9]\S*)")
            .expect("a fixed pattern")
    })
}

/// The same text lowercased, with `’` read as `'`. Lowercasing ASCII keeps byte offsets.
fn normalize(text: &str) -> String {
    text.replace('\u{2019}', "'").to_ascii_lowercase()
}

/// Where in `lower` the first phrase of `kind` is, if any.
fn find(lower: &str, kind: RefusalKind) -> Option<usize> {
    let (phrases, status) = match kind {
        RefusalKind::Quota => (QUOTA, quota_status()),
        RefusalKind::Auth => (AUTH, auth_status()),
    };
    let by_phrase = phrases.iter().filter_map(|p| lower.find(p)).min();
    let by_status = status.find(lower).map(|m| m.start());
    match (by_phrase, by_status) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The refusal `text` holds, if any. An authentication phrase wins over a quota phrase: a
/// login problem is not solved by another model.
pub fn find_refusal(text: &str) -> Option<Refusal> {
    let normalized = text.replace('\u{2019}', "'");
    let lower = normalize(text);
    let (kind, at) = match (
        find(&lower, RefusalKind::Auth),
        find(&lower, RefusalKind::Quota),
    ) {
        (Some(a), _) => (RefusalKind::Auth, a),
        (None, Some(q)) => (RefusalKind::Quota, q),
        (None, None) => return None,
    };
    let line_start = normalized[..at].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line_end = normalized[at..]
        .find('\n')
        .map(|i| at + i)
        .unwrap_or(normalized.len());
    let mut message = normalized[line_start..line_end].trim().to_string();
    if message.chars().count() > 300 {
        message = message.chars().take(300).collect::<String>() + "…";
    }
    Some(Refusal {
        kind,
        message,
        resets: find_resets(&normalized),
    })
}

/// The reset phrase of §5: `reset`/`resets` (optionally followed by `in`/`at`), `try again in`,
/// `try again at`; then, after whitespace, from a word holding a digit up to a full stop or
/// the end of the line.
pub fn find_resets(text: &str) -> Option<String> {
    let lower = normalize(text);
    let m = resets_re().captures(&lower)?;
    let start = m.get(1)?.start();
    let rest = &text[start..];
    let line = rest.split('\n').next().unwrap_or(rest);
    // A full stop ends it unless a digit follows (44.09s, 3.5 hours).
    let mut end = line.len();
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'.' && !bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            end = i;
            break;
        }
    }
    let found = line[..end].trim();
    (!found.is_empty()).then(|| found.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Option<RefusalKind> {
        find_refusal(text).map(|r| r.kind)
    }

    #[test]
    fn quota_phrases() {
        for t in [
            "You\u{2019}ve hit your usage limit. Upgrade to Pro",
            "Quota exceeded. Check your plan and billing details.",
            "exceeded retry limit, last status: 429 Too Many Requests",
            "API Error: Request rejected (429) · This request would exceed your account's rate limit.",
            "{\"code\": 429}",
            "status=429",
            "RESOURCE_EXHAUSTED",
            "Claude AI usage limit reached|1762952400",
        ] {
            assert_eq!(kind(t), Some(RefusalKind::Quota), "{t}");
        }
    }

    #[test]
    fn auth_phrases() {
        for t in [
            "Invalid API key · Fix external API key",
            "unexpected status 401 Unauthorized: Incorrect API key provided",
            "Not logged in · Please run /login",
            "OAuth token has expired.",
            "please sign in again",
        ] {
            assert_eq!(kind(t), Some(RefusalKind::Auth), "{t}");
        }
    }

    #[test]
    fn other_messages_are_not_refusals() {
        for t in [
            "stream disconnected before completion",
            "status 4290",
            "code 1429",
            "Selected model is at capacity.",
            "",
        ] {
            assert_eq!(kind(t), None, "{t}");
        }
    }

    #[test]
    fn more_than_four_symbols_between_status_and_code_is_not_one() {
        assert_eq!(kind("status: \"429"), Some(RefusalKind::Quota));
        assert_eq!(kind("status :::: 429"), None);
    }

    #[test]
    fn resets() {
        assert_eq!(
            find_resets("or try again at 12:32 PM.").as_deref(),
            Some("12:32 PM")
        );
        assert_eq!(
            find_resets("You've hit your limit · resets 12pm (America/Chicago)").as_deref(),
            Some("12pm (America/Chicago)")
        );
        assert_eq!(
            find_resets("Please retry. Your limit will reset at 5pm (Europe/Warsaw).").as_deref(),
            Some("5pm (Europe/Warsaw)")
        );
        assert_eq!(
            find_resets("Try again in 44.5s. Later"),
            Some("44.5s".into())
        );
        assert_eq!(find_resets("try again later."), None);
        assert_eq!(find_resets("resets soon"), None);
    }
}
