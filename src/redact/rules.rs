//! The token formats the redactor and the push check know: gitleaks' rule set, vendored unchanged
//! in `gitleaks/gitleaks.toml` (MIT, `gitleaks/LICENSE`; the commit it came from is in
//! `gitleaks/SOURCE.md`), read and compiled the first time something is scanned.
//!
//! Why gitleaks' rules and not our own: they are the pattern list secret scanners maintain and
//! reuse (shared/research/agents-attest-2026.md, "Secrets in agent output"), with each format's
//! prefix, length and alphabet, entropy floor and known false positives. Updating is replacing
//! the file.
//!
//! What is taken from a rule, as gitleaks reads it: `regex` (compiled by the `regex` crate,
//! which is RE2's syntax as Go's `regexp` is, with Unicode off so `\w`, `\s`, `\d` and `\b` are
//! ASCII as in Go), `secretGroup` (else the first group that took part, else the whole match:
//! only that part is replaced, so `Authorization: Bearer [redacted:…]` keeps its shape),
//! `entropy` (the secret's Shannon entropy must reach it), `keywords` (a rule runs only on text
//! holding one of them; this is also why only the rules a text could match are ever compiled),
//! and the allowlists' `regexes` (against the secret, the match or the line, as `regexTarget`
//! says) and `stopwords`, the global allowlist's included.
//!
//! What is left out, and counted by a test (`every_vendored_rule_is_counted`) so a new version
//! of the file cannot silently lose rules:
//! - rules with a `path`: they judge a file by its name (a `.p12` file) or only inside files of
//!   some names; what we scan has no file name.
//! - `generic-api-key`: it guesses a secret from a nearby word (`key`, `token`, `auth`, …) and
//!   entropy alone, so it would take hashes, ids and tree ids in our own records for secrets.
//!   The values we know are secrets (named environment variables) are replaced by value.
//! - a rule whose pattern the `regex` crate does not compile (none at the vendored commit).
//! - allowlists bound to paths or commits (`condition = "AND"` with `paths`): no path to test.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use serde::Deserialize;

/// The vendored rule set.
const GITLEAKS_TOML: &str = include_str!("gitleaks/gitleaks.toml");

/// Rules left out on purpose, with the reason (see the module doc).
const LEFT_OUT: &[(&str, &str)] = &[(
    "generic-api-key",
    "guesses from a nearby word and entropy alone: it would take hashes and ids for secrets",
)];

/// Compiled regexes may use this much memory each; gitleaks' longest bounded repetitions
/// (`[\w.-]{0,50}?` before a keyword, `{250,}` tokens) stay far below it.
const REGEX_SIZE_LIMIT: usize = 32 * 1024 * 1024;

#[derive(Deserialize)]
struct RawConfig {
    #[serde(default)]
    allowlist: Option<RawAllow>,
    #[serde(default)]
    rules: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRule {
    id: String,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    secret_group: Option<usize>,
    #[serde(default)]
    allowlists: Vec<RawAllow>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawAllow {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    regex_target: Option<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    commits: Vec<String>,
    #[serde(default)]
    condition: Option<String>,
}

/// What an allowlist regex is matched against.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Secret,
    Match,
    Line,
}

struct Allow {
    target: Target,
    regexes: Vec<Regex>,
    /// Lowercase; a secret holding one is allowed.
    stopwords: Vec<String>,
}

impl Allow {
    fn from_raw(raw: &RawAllow) -> Option<Allow> {
        // Bound to a path or commit with AND: never true for text without either.
        let and = raw
            .condition
            .as_deref()
            .is_some_and(|c| c.eq_ignore_ascii_case("and"));
        if and && (!raw.paths.is_empty() || !raw.commits.is_empty()) {
            return None;
        }
        let target = match raw.regex_target.as_deref() {
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            _ => Target::Secret,
        };
        let regexes = raw.regexes.iter().filter_map(|r| compile(r)).collect();
        Some(Allow {
            target,
            regexes,
            stopwords: raw
                .stopwords
                .iter()
                .map(|s| s.to_ascii_lowercase())
                .collect(),
        })
    }

    fn allows(&self, secret: &[u8], whole: &[u8], line: &[u8]) -> bool {
        let subject = match self.target {
            Target::Secret => secret,
            Target::Match => whole,
            Target::Line => line,
        };
        if self.regexes.iter().any(|r| r.is_match(subject)) {
            return true;
        }
        if self.stopwords.is_empty() {
            return false;
        }
        let lower = secret.to_ascii_lowercase();
        self.stopwords
            .iter()
            .any(|w| contains(&lower, w.as_bytes()))
    }
}

/// One usable rule; its regex is compiled the first time a text holds one of its keywords.
struct Rule {
    id: String,
    pattern: String,
    entropy: Option<f64>,
    secret_group: Option<usize>,
    raw_allow: Vec<RawAllow>,
    allow: OnceLock<Vec<Allow>>,
    compiled: OnceLock<Option<Regex>>,
}

impl Rule {
    fn regex(&self) -> Option<&Regex> {
        self.compiled
            .get_or_init(|| compile(&self.pattern))
            .as_ref()
    }

    fn allowlists(&self) -> &[Allow] {
        self.allow
            .get_or_init(|| self.raw_allow.iter().filter_map(Allow::from_raw).collect())
    }
}

/// The rule set: the usable rules, one keyword set to pick which of them a text needs, the
/// global allowlist, and what was left out.
struct RuleSet {
    rules: Vec<Rule>,
    /// Every keyword, as one set; `owners[i]` are the rules keyword `i` belongs to.
    keywords: Option<RegexSet>,
    owners: Vec<Vec<usize>>,
    /// Rules without keywords run on every text.
    always: Vec<usize>,
    global: Option<Allow>,
    left_out: Vec<(String, String)>,
}

fn compile(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .ok()
}

fn rule_set() -> &'static RuleSet {
    static SET: OnceLock<RuleSet> = OnceLock::new();
    SET.get_or_init(load)
}

fn load() -> RuleSet {
    let raw: RawConfig = match toml::from_str(GITLEAKS_TOML) {
        Ok(c) => c,
        // The file is part of the program and a unit test parses it; unreachable in a build
        // that passed its tests, and then nothing is matched rather than anything panicking.
        Err(e) => {
            return RuleSet {
                rules: Vec::new(),
                keywords: None,
                owners: Vec::new(),
                always: Vec::new(),
                global: None,
                left_out: vec![("*".into(), format!("the vendored file does not parse: {e}"))],
            }
        }
    };
    let mut rules = Vec::new();
    let mut left_out = Vec::new();
    let mut keyword_list: Vec<String> = Vec::new();
    let mut owners: Vec<Vec<usize>> = Vec::new();
    let mut always = Vec::new();
    for r in raw.rules {
        if let Some((_, why)) = LEFT_OUT.iter().find(|(id, _)| *id == r.id) {
            left_out.push((r.id, (*why).to_string()));
            continue;
        }
        if r.path.is_some() {
            left_out.push((r.id, "judges a file by its name".to_string()));
            continue;
        }
        let Some(pattern) = r.regex else {
            left_out.push((r.id, "has no regex".to_string()));
            continue;
        };
        let index = rules.len();
        let mut kws: BTreeSet<String> = BTreeSet::new();
        for k in &r.keywords {
            kws.insert(k.to_ascii_lowercase());
        }
        if kws.is_empty() {
            always.push(index);
        }
        for k in kws {
            match keyword_list.iter().position(|x| *x == k) {
                Some(i) => owners[i].push(index),
                None => {
                    keyword_list.push(k);
                    owners.push(vec![index]);
                }
            }
        }
        rules.push(Rule {
            id: r.id,
            pattern,
            entropy: r.entropy,
            secret_group: r.secret_group,
            raw_allow: r.allowlists,
            allow: OnceLock::new(),
            compiled: OnceLock::new(),
        });
    }
    let keywords = RegexSetBuilder::new(keyword_list.iter().map(|k| regex::escape(k)))
        .case_insensitive(true)
        .unicode(false)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .ok();
    RuleSet {
        rules,
        keywords,
        owners,
        always,
        global: raw.allowlist.as_ref().and_then(Allow::from_raw),
        left_out,
    }
}

/// A token one rule found: the bytes `start..end` of the text are the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub rule: &'static str,
    pub start: usize,
    pub end: usize,
}

/// Every token the rules find in `text`, in no particular order; overlapping hits of two rules
/// are both returned.
pub fn find(text: &[u8]) -> Vec<Hit> {
    let set = rule_set();
    let mut wanted: BTreeSet<usize> = set.always.iter().copied().collect();
    if let Some(k) = &set.keywords {
        for i in k.matches(text).iter() {
            wanted.extend(set.owners[i].iter().copied());
        }
    }
    let mut hits = Vec::new();
    for i in wanted {
        let rule = &set.rules[i];
        let Some(re) = rule.regex() else { continue };
        for caps in re.captures_iter(text) {
            let Some(whole) = caps.get(0) else { continue };
            let secret = match rule.secret_group {
                Some(g) => caps.get(g),
                None => (1..caps.len())
                    .filter_map(|g| caps.get(g))
                    .find(|m| !m.is_empty())
                    .or(Some(whole)),
            };
            let Some(secret) = secret.filter(|m| !m.is_empty()) else {
                continue;
            };
            let bytes = secret.as_bytes();
            if rule.entropy.is_some_and(|floor| entropy(bytes) < floor) {
                continue;
            }
            let line = line_around(text, secret.start(), secret.end());
            let allowed = rule
                .allowlists()
                .iter()
                .chain(set.global.iter())
                .any(|a| a.allows(bytes, whole.as_bytes(), line));
            if allowed {
                continue;
            }
            hits.push(Hit {
                rule: rule.id.as_str(),
                start: secret.start(),
                end: secret.end(),
            });
        }
    }
    hits
}

fn line_around(text: &[u8], start: usize, end: usize) -> &[u8] {
    let from = text[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let to = text[end..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |i| end + i);
    &text[from..to]
}

/// Shannon entropy in bits per byte, as gitleaks computes it.
fn entropy(bytes: &[u8]) -> f64 {
    if bytes.is_empty() {
        return 0.0;
    }
    let mut counts = [0usize; 256];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let n = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// How the vendored file was taken: rules usable, rules whose regex does not compile, and the
/// rules left out with the reason. Compiles every rule (tests and `doctor` only).
pub fn inventory() -> (Vec<&'static str>, Vec<&'static str>, Vec<(String, String)>) {
    let set = rule_set();
    let mut ok = Vec::new();
    let mut broken = Vec::new();
    for r in &set.rules {
        if r.regex().is_some() {
            ok.push(r.id.as_str());
        } else {
            broken.push(r.id.as_str());
        }
    }
    (ok, broken, set.left_out.clone())
}
