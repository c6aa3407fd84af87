//! Drafting a contract from a sprint document (Markdown, Korean or English headings).
//!
//! [`generate`] reads the sections the spec names, by heading (any level, case-insensitive,
//! spaces, `-` and `_` ignored; the heading may say more, like `Done criteria (DoD)`):
//!
//! | section | headings | becomes |
//! |---|---|---|
//! | done criteria | `완료 기준`, `Done criteria`, `Definition of Done`, `Acceptance criteria` | `dod.checks` |
//! | verification commands | `검증 커맨드`, `Verification commands` | `runtimeValidation.commands` |
//! | prerequisites | `환경 전제`, `Prerequisites` | `environmentPrerequisites` |
//! | non-goals | `비목표`, `Non-goals`, `Out of scope` | `nonGoals` (plain strings) |
//!
//! A section runs until the next heading of the same or a higher level; its sub-headings belong
//! to it unless they name a section themselves. The title (the first `# ` heading) is a
//! section only when it names no `SPRINT-NNN`. Every list item (`-`, `*`, `+`, `1.`, `1)`,
//! with or without a `[ ]` box, nested or not; lines right below it continue it) is one entry;
//! code blocks and HTML comments are not read as items, and other text is skipped.
//!
//! Done criteria are mapped by these heuristics, in this order; the first that applies wins
//! ("prose" is the item without its code spans, URLs and `/regex/`):
//!
//! 1. `http_status`: an `http(s)://` URL in the prose (or a code span that is only a URL, or
//!    a `curl`/`wget` code span holding one) and a status in the prose (`200`, `→ 404`,
//!    `200 응답`, or `OK` for 200); `method` when the prose names one (`GET`, `POST`, …) or
//!    the curl command has `-X METHOD`.
//! 2. `regex_in_file`: the first code span is one token (a path) and a `/pattern/flags`
//!    follows it (bare or in backticks); `negate` when the prose says so (`not`, `no`,
//!    `without`, `n't`, `없`, `않`, `미포함`, …). Flags `imsxU` become `(?…)`.
//! 3. `file_exists`: the first code span is one token and the prose says it exists (`exists`,
//!    `present`, `created`, `in place`, `존재`, `있`, `생성`; not `수 있다`, "can") without a
//!    negation; `type: dir` when the path ends in `/` or the prose says directory/folder/
//!    디렉터리/폴더.
//! 4. `process_listening`: `port N`, `포트 N`, `N번 포트`, `listening on N`.
//! 5. `command_success`: the first code span that is not a URL or a regex, when it has more
//!    than one word or the prose says it runs (`passes`, `succeeds`, `exits`, `works`,
//!    `통과`, `성공`, `실행`, `동작`, `정상`); `exits N` / `종료 코드 N` sets a non-zero
//!    `expectExitCode`. An item that says the command fails (`fails`, `must fail`, `실패해야`)
//!    without an exit code is not mapped.
//! 6. otherwise `manual_checklist` `{"path": ".rails/checklists/<sprint>.md", "items": [text]}`,
//!    reported in [`Generated::manual_items`].
//!
//! Prerequisites, in this order: `env_var` (`$NAME`, `${NAME}`, or `env`/`env var`/
//! `environment variable`/`환경 변수` with an upper-case NAME; a `/regex/` becomes `pattern`),
//! `http_reachable` (a URL), `port_open` (as 4 above), `file_exists` (one-token code span with
//! an existence or file word, and no command word), `command_exists` (the first code span's
//! first word). An item none of these fit is left out, with a warning: a prerequisite cannot
//! be manual.
//!
//! Verification commands: each item's first code span (items without one are left out, with a
//! warning), and each non-empty, non-comment line of a shell code block (` ```sh `, ` ```bash `,
//! or no language; `$ ` prompts dropped, `\` continuations joined). `timeout 180s` /
//! `타임아웃 3분` in an item sets `timeoutMs`, `exits N` sets `expectExitCode`.
//!
//! The draft is checked with [`Contract::problems`]: a check the schema refuses (a command
//! that cannot fail, a regex that matches the empty string or does not compile) becomes a
//! manual check with a warning, so what is returned always parses.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::ops::Range;
use std::sync::OnceLock;

use regex::{Captures, Match, Regex};
use serde_json::{json, Value};

use crate::contract::schema::{
    self, Check, CheckKind, Contract, Dod, Gates, NonGoal, PrereqKind, Prerequisite,
    ReviewerProfile, RuntimeCommand, RuntimeValidation, SchemaVersion, SprintType,
};
use crate::error::Error;

/// `timeoutMs` of a runtime command when its item names none.
pub const RUNTIME_TIMEOUT_MS: u64 = 60_000;
/// Longest check id or runtime command name made from an item's text.
const MAX_SLUG: usize = 40;

/// A drafted contract, and what its author should look at before freezing it.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    pub contract: Contract,
    /// Every done criterion that could only become a `manual_checklist` check, in check order.
    pub manual_items: Vec<ManualItem>,
    /// Everything else worth a look: items left out, code blocks ignored, guesses made.
    pub warnings: Vec<String>,
}

/// A done criterion that became a `manual_checklist` check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManualItem {
    /// The heading of the section the item is in, as written (`Done criteria (DoD)`).
    pub section: String,
    /// The item's text, which is also its line in the checklist file.
    pub text: String,
    pub check_id: String,
}

/// Where the manual checks of `sprint` look for their ticked boxes.
pub fn checklist_path(sprint: &str) -> String {
    format!(".rails/checklists/{sprint}.md")
}

impl Generated {
    /// The checklist file the manual checks point at ([`checklist_path`]), one unticked box
    /// per manual item in the form `manual_checklist` reads; `None` when there is none.
    pub fn checklist_markdown(&self) -> Option<String> {
        if self.manual_items.is_empty() {
            return None;
        }
        let mut out = format!(
            "# {} — manual checks\n\nTick a box (`- [x]`) once the item has been checked by hand.\n\n",
            self.contract.sprint_id
        );
        for item in &self.manual_items {
            let _ = writeln!(out, "- [ ] {}", item.text);
        }
        Some(out)
    }
}

/// Drafts the contract of the sprint document `doc`.
///
/// The sprint id is `sprint` when given, else the first `SPRINT-NNN` of the title (the first
/// `# ` heading), else of the whole document. Refused (exit 65) when there is no sprint id,
/// when it is not a valid one, and when the document has no done-criteria section or the
/// section has no list items.
pub fn generate(doc: &str, sprint: Option<&str>, now: jiff::Timestamp) -> Result<Generated, Error> {
    let scanned = scan(doc);
    let mut warnings = Vec::new();
    let sprint_id = sprint_id(&scanned, doc, sprint, &mut warnings)?;
    let sprint_type = sprint_type(&scanned.prose_lines, &mut warnings);

    let done: Vec<&Section> = scanned
        .sections
        .iter()
        .filter(|s| s.kind == SectionKind::Done)
        .collect();
    if done.is_empty() {
        return Err(Error::refused(format!(
            "the sprint document has no done-criteria section, so the contract would have no checks; \
             looked for a heading {}",
            DONE_HEADINGS
        ))
        .hint(DONE_HINT));
    }

    let mut drafted = Drafted::default();
    let checklist = checklist_path(&sprint_id);
    for section in &scanned.sections {
        match section.kind {
            SectionKind::Done => drafted.done(section, &checklist, &mut warnings),
            SectionKind::Verify => drafted.verify(section, &mut warnings),
            SectionKind::Prereq => drafted.prerequisites(section, &mut warnings),
            SectionKind::NonGoals => drafted.non_goals(section, &mut warnings),
        }
    }
    if drafted.checks.is_empty() {
        let headings: Vec<String> = done.iter().map(|s| format!("{:?}", s.heading)).collect();
        return Err(Error::refused(format!(
            "the done-criteria section {} has no list items; a contract needs at least one check",
            headings.join(", ")
        ))
        .hint(DONE_HINT));
    }

    // Whole seconds, like the seed's example (`2026-04-10T12:00:00Z`).
    let created_at = jiff::Timestamp::from_second(now.as_second()).unwrap_or(now);
    let mut contract = Contract {
        version: SchemaVersion::V1,
        id: ulid::Ulid::new().to_string(),
        sprint_id,
        created_at: created_at.to_string(),
        sprint_type,
        dod: Dod {
            checks: drafted.checks,
        },
        environment_prerequisites: drafted.prerequisites,
        non_goals: drafted.non_goals,
        runtime_validation: RuntimeValidation {
            commands: drafted.commands,
        },
        risk_flags: Vec::new(),
        reviewer_profile: ReviewerProfile::Static,
        approval_gates: Gates::default(),
        check_paths: None,
    };
    let mut manual_items = drafted.manual;
    settle(
        &mut contract,
        &drafted.check_sections,
        &checklist,
        &mut manual_items,
        &mut warnings,
    )?;
    Ok(Generated {
        contract,
        manual_items,
        warnings,
    })
}

const DONE_HEADINGS: &str =
    "`완료 기준`, `Done criteria`, `Definition of Done` or `Acceptance criteria`";
const DONE_HINT: &str =
    "add a `## Done criteria` (or `## 완료 기준`) section with one list item per criterion, \
     e.g. \"- `cargo test` passes\" or \"- `src/main.rs` exists\"";

// ---------------------------------------------------------------------------------------------
// Regexes: compiled once; a pattern that did not compile would match nothing (the tests compile
// every one of them).

macro_rules! regex {
    ($name:ident, $pattern:expr) => {
        fn $name() -> Option<&'static Regex> {
            static RE: OnceLock<Option<Regex>> = OnceLock::new();
            RE.get_or_init(|| Regex::new($pattern).ok()).as_ref()
        }
    };
}

regex!(sprint_re, r"SPRINT-\d+");
regex!(heading_re, r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$");
regex!(closing_hashes_re, r"(?:^|[ \t]+)#+$");
regex!(list_item_re, r"^\s*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$");
regex!(checkbox_re, r"^\[[ xX]\][ \t]*");
regex!(
    type_re,
    r"(?i)^\s*(?:[-*+]\s+)?(?:\*\*|__)?(?:sprint\s+)?(?:type|유형|타입)(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?\s*`?([A-Za-z]+)"
);
regex!(url_re, r"https?://[A-Za-z0-9\-._~:/?#@!$&*+,;=%]+");
regex!(status_re, r"(?:^|[^\d])([1-5]\d\d)(?:$|[^\dA-Za-z])");
regex!(ok_re, r"\bOK\b");
regex!(method_re, r"\b(GET|HEAD|POST|PUT|DELETE|PATCH|OPTIONS)\b");
regex!(curl_method_re, r"(?:-X|--request)\s*([A-Za-z]+)");
regex!(
    port_re,
    r"(?i)(?:\bport|포트)\s*(?:번호\s*)?[:#]?\s*(\d{1,5})(?:\D|$)|\blisten(?:s|ing)?\s+on\s+(?:port\s+)?:?(\d{1,5})(?:\D|$)|(\d{1,5})\s*번?\s*포트"
);
regex!(
    exit_code_re,
    r"(?i)\bexit(?:s|ed)?(?:\s+with)?(?:\s+(?:code|status))?\s*[:=]?\s*(\d{1,3})(?:\D|$)|종료\s*코드\s*[:=]?\s*(\d{1,3})(?:\D|$)"
);
regex!(
    success_re,
    r"(?i)\b(?:pass(?:es|ed)?|succeed(?:s|ed)?|success(?:fully)?|green|runs?|works?|exits?)\b|통과|성공|실행|동작|정상"
);
regex!(
    failure_re,
    r"(?i)\b(?:fails|must fail|should fail|is refused|errors out)\b|실패\s*(?:해야|한다|함)"
);
regex!(
    exists_re,
    r"(?i)\b(?:exists?|present|created|in place)\b|존재|있|생성"
);
regex!(capability_re, r"수\s*있");
regex!(
    file_word_re,
    r"(?i)\b(?:file|directory|folder|dir)\b|파일|디렉터리|디렉토리|폴더"
);
regex!(
    dir_word_re,
    r"(?i)\b(?:directory|folder|dir)\b|디렉터리|디렉토리|폴더"
);
regex!(
    command_word_re,
    r"(?i)\b(?:command|binary|executable|installed|cli|tool)\b|커맨드|명령|설치"
);
regex!(
    negation_re,
    r"(?i)\b(?:not|no|never|no longer|absent|removed|deleted|without|lacks?)\b|n['’]t\b|않|없|미포함|불포함|삭제|제거"
);
regex!(
    env_word_re,
    r"(?i)\benv\b(?:\s*var(?:iable)?s?)?|\benvironment\s+var(?:iable)?s?\b|\benvvar\b|환경\s*변수"
);
regex!(dollar_var_re, r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?");
regex!(
    caps_name_re,
    r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[A-Z][A-Z0-9]+\b"
);
regex!(env_name_re, r"^[A-Z_][A-Z0-9_]*$");
regex!(program_re, r"^[A-Za-z0-9_.+/-]+$");
regex!(
    timeout_re,
    r"(?i)(?:\btimeout|타임아웃)\s*[:=]?\s*(\d{1,7})\s*(ms|밀리초|seconds?|secs?|s|minutes?|mins?|m|초|분)(?:[^A-Za-z]|$)"
);

fn is_match(re: Option<&Regex>, text: &str) -> bool {
    re.is_some_and(|r| r.is_match(text))
}

fn captures<'t>(re: Option<&Regex>, text: &'t str) -> Option<Captures<'t>> {
    re.and_then(|r| r.captures(text))
}

fn find<'t>(re: Option<&Regex>, text: &'t str) -> Option<Match<'t>> {
    re.and_then(|r| r.find(text))
}

/// The first capture group that took part in the match.
fn first_group<'t>(c: &Captures<'t>) -> Option<&'t str> {
    c.iter().skip(1).flatten().next().map(|m| m.as_str())
}

// ---------------------------------------------------------------------------------------------
// Scanning the document into sections

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SectionKind {
    Done,
    Verify,
    Prereq,
    NonGoals,
}

const SECTION_KEYS: &[(SectionKind, &[&str])] = &[
    (
        SectionKind::Done,
        &[
            "완료 기준",
            "done criteria",
            "definition of done",
            "acceptance criteria",
        ],
    ),
    (
        SectionKind::Verify,
        &["검증 커맨드", "verification commands"],
    ),
    (SectionKind::Prereq, &["환경 전제", "prerequisites"]),
    (
        SectionKind::NonGoals,
        &["비목표", "non-goals", "out of scope"],
    ),
];

/// Lower case without whitespace, `-` and `_`: `Non-Goals` and `non goals` look the same.
fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace() && *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The section a heading names: the key phrase found earliest in it wins.
fn classify(heading: &str) -> Option<SectionKind> {
    let h = squash(heading);
    let mut best: Option<(usize, SectionKind)> = None;
    for (kind, keys) in SECTION_KEYS {
        for key in *keys {
            if let Some(pos) = h.find(&squash(key)) {
                if best.is_none_or(|(p, _)| pos < p) {
                    best = Some((pos, *kind));
                }
            }
        }
    }
    best.map(|(_, k)| k)
}

#[derive(Debug)]
enum Block {
    /// A list item's text, without its marker and box.
    Item(String),
    /// A fenced code block: its language (lower case) and lines.
    Fence { info: String, lines: Vec<String> },
}

#[derive(Debug)]
struct Section {
    kind: SectionKind,
    heading: String,
    blocks: Vec<Block>,
}

#[derive(Debug, Default)]
struct Scanned {
    /// The first `# ` heading.
    title: Option<String>,
    sections: Vec<Section>,
    /// The lines outside code blocks.
    prose_lines: Vec<String>,
}

struct OpenFence {
    marker: char,
    len: usize,
    info: String,
    lines: Vec<String>,
}

fn fence_open(line: &str) -> Option<OpenFence> {
    let t = line.trim_start();
    let marker = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = t.chars().take_while(|c| *c == marker).count();
    if len < 3 {
        return None;
    }
    let info = t[len..].trim();
    if marker == '`' && info.contains('`') {
        return None;
    }
    Some(OpenFence {
        marker,
        len,
        info: info.split_whitespace().next().unwrap_or("").to_lowercase(),
        lines: Vec::new(),
    })
}

fn fence_closes(line: &str, fence: &OpenFence) -> bool {
    let t = line.trim();
    t.chars().count() >= fence.len && t.chars().all(|c| c == fence.marker)
}

fn heading(line: &str) -> Option<(usize, String)> {
    let c = captures(heading_re(), line)?;
    let level = c.get(1)?.as_str().len();
    let text = c.get(2).map_or("", |m| m.as_str());
    let text = match closing_hashes_re() {
        Some(re) => re.replace(text, "").into_owned(),
        None => text.to_string(),
    };
    Some((level, text.trim().to_string()))
}

fn list_item(line: &str) -> Option<String> {
    let c = captures(list_item_re(), line)?;
    let text = c.get(1).map_or("", |m| m.as_str()).trim();
    let text = match find(checkbox_re(), text) {
        Some(m) => &text[m.end()..],
        None => text,
    };
    Some(text.trim().to_string())
}

fn scan(doc: &str) -> Scanned {
    let mut out = Scanned::default();
    // The level of the open section's heading; the open section is the last one.
    let mut open: Option<usize> = None;
    let mut fence: Option<OpenFence> = None;
    let mut item_open = false;
    let mut in_comment = false;
    for line in doc.lines() {
        if let Some(mut f) = fence.take() {
            if fence_closes(line, &f) {
                push_fence(&mut out, open, f);
            } else {
                f.lines.push(line.to_string());
                fence = Some(f);
            }
            continue;
        }
        let line = strip_comments(line, &mut in_comment);
        let line = line.as_str();
        if let Some(f) = fence_open(line) {
            fence = Some(f);
            item_open = false;
            continue;
        }
        out.prose_lines.push(line.to_string());
        if let Some((level, text)) = heading(line) {
            item_open = false;
            // The title names the sprint; it is a section only when it names none.
            let title = level == 1 && out.title.is_none();
            if title {
                out.title = Some(text.clone());
            }
            let kind = if title && is_match(sprint_re(), &text) {
                None
            } else {
                classify(&text)
            };
            match kind {
                Some(kind) => {
                    out.sections.push(Section {
                        kind,
                        heading: text,
                        blocks: Vec::new(),
                    });
                    open = Some(level);
                }
                None => {
                    if open.is_some_and(|l| level <= l) {
                        open = None;
                    }
                }
            }
            continue;
        }
        if line.trim().is_empty() {
            item_open = false;
            continue;
        }
        let Some(section) = open.and(out.sections.last_mut()) else {
            continue;
        };
        if let Some(text) = list_item(line) {
            item_open = text.chars().any(char::is_alphanumeric);
            if item_open {
                section.blocks.push(Block::Item(text));
            }
        } else if item_open {
            if let Some(Block::Item(text)) = section.blocks.last_mut() {
                text.push(' ');
                text.push_str(line.trim());
            }
        }
    }
    // A block left open runs to the end of the document.
    if let Some(f) = fence {
        push_fence(&mut out, open, f);
    }
    out
}

/// `line` without HTML comments; `in_comment` carries an unclosed `<!--` to the next lines.
fn strip_comments(line: &str, in_comment: &mut bool) -> String {
    let mut out = String::new();
    let mut rest = line;
    loop {
        if *in_comment {
            match rest.find("-->") {
                Some(i) => {
                    *in_comment = false;
                    rest = &rest[i + 3..];
                }
                None => return out,
            }
        }
        match rest.find("<!--") {
            Some(i) => {
                out.push_str(&rest[..i]);
                *in_comment = true;
                rest = &rest[i + 4..];
            }
            None => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

fn push_fence(out: &mut Scanned, open: Option<usize>, f: OpenFence) {
    if let Some(section) = open.and(out.sections.last_mut()) {
        section.blocks.push(Block::Fence {
            info: f.info,
            lines: f.lines,
        });
    }
}

fn sprint_id(
    scanned: &Scanned,
    doc: &str,
    given: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<String, Error> {
    let in_title = scanned
        .title
        .as_deref()
        .and_then(|t| find(sprint_re(), t))
        .map(|m| m.as_str().to_string());
    let id = match given {
        Some(id) => {
            let id = id.trim().to_string();
            if let Some(t) = in_title.filter(|t| *t != id) {
                warnings.push(format!(
                    "the sprint id is {id} (from --sprint), but the document's title names {t}"
                ));
            }
            id
        }
        None => match in_title {
            Some(id) => id,
            None => match find(sprint_re(), doc) {
                Some(m) => {
                    let id = m.as_str().to_string();
                    warnings.push(format!(
                        "the document's title names no sprint; took {id}, the first sprint id in its text"
                    ));
                    id
                }
                None => {
                    return Err(Error::refused(
                        "no sprint id: neither the document's title (its first `# ` heading) nor its text names a SPRINT-NNN",
                    )
                    .hint("name the sprint with --sprint, e.g. `git rails contract generate <sprint-doc.md> --sprint SPRINT-001`"))
                }
            },
        },
    };
    schema::check_sprint_id(&id)
        .map_err(|e| Error::refused(e).hint("pass a sprint id like SPRINT-001 with --sprint"))?;
    Ok(id)
}

/// `Type: feature` / `유형: bugfix` anywhere outside code blocks; `feature` when none.
fn sprint_type(lines: &[String], warnings: &mut Vec<String>) -> SprintType {
    let Some(word) = lines
        .iter()
        .find_map(|l| captures(type_re(), l).and_then(|c| c.get(1)))
        .map(|m| m.as_str().to_lowercase())
    else {
        return SprintType::Feature;
    };
    match serde_json::from_value::<SprintType>(Value::String(word.clone())) {
        Ok(t) => t,
        Err(_) => {
            warnings.push(format!(
                "the sprint type {word:?} is not one of scaffold, feature, refactor, bugfix, migration, infra; used feature"
            ));
            SprintType::Feature
        }
    }
}

// ---------------------------------------------------------------------------------------------
// One list item: its code spans, URLs and regex, and the prose around them

#[derive(Debug, Clone)]
struct Span {
    range: Range<usize>,
    code: String,
}

/// Inline code spans: a run of n backticks up to the next run of exactly n.
fn code_spans(s: &str) -> Vec<Span> {
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
fn blank(s: &str, ranges: &[Range<usize>]) -> String {
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
fn urls(text: &str) -> Vec<(Range<usize>, String)> {
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

fn is_url(code: &str) -> bool {
    urls(code)
        .first()
        .is_some_and(|(r, _)| r.start == 0 && r.end == code.len())
}

fn is_regex_literal(code: &str) -> bool {
    regex_literal(code, 0).is_some_and(|l| l.range.start == 0 && l.range.end == code.len())
}

fn one_token(code: &str) -> bool {
    !code.is_empty() && !code.contains(char::is_whitespace)
}

/// A `/pattern/flags` literal.
#[derive(Debug, Clone)]
struct Literal {
    range: Range<usize>,
    pattern: String,
}

/// The first `/pattern/flags` in `text` at or after byte `from`. It starts at a `/` that does
/// not continue a word or path, ends at the next unescaped `/` outside a `[class]`, and its
/// flags (`imsxU`; `g`, `u` ignored) end the word. `\/` becomes `/`.
fn regex_literal(text: &str, from: usize) -> Option<Literal> {
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

fn literal_at(text: &str, start: usize) -> Option<Literal> {
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
struct Parts {
    spans: Vec<Span>,
    /// The item with its code spans blanked.
    text: String,
}

impl Parts {
    fn new(raw: &str) -> Self {
        let spans = code_spans(raw);
        let ranges: Vec<Range<usize>> = spans.iter().map(|s| s.range.clone()).collect();
        Parts {
            text: blank(raw, &ranges),
            spans,
        }
    }

    /// The first code span that is neither a URL nor a regex: the path or command.
    fn first_code(&self) -> Option<&Span> {
        self.spans
            .iter()
            .find(|s| !s.code.is_empty() && !is_url(&s.code) && !is_regex_literal(&s.code))
    }

    /// A URL in the prose, else a code span that is only a URL.
    fn url(&self) -> Option<String> {
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
    fn prose(&self, skip: Option<&Range<usize>>) -> String {
        let mut ranges: Vec<Range<usize>> = urls(&self.text).into_iter().map(|(r, _)| r).collect();
        ranges.extend(skip.cloned());
        blank(&self.text, &ranges)
    }

    /// A `/regex/` after byte `from`: a code span that is one, else one in the prose.
    fn regex_after(&self, from: usize) -> Option<Literal> {
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
fn clean(raw: &str) -> String {
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

regex!(link_re, r"\[([^\]]*)\]\(([^)\s]*)\)");
regex!(autolink_re, r"<(https?://[^>\s]+)>");

fn unmark(s: &str) -> String {
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
fn slug(text: &str) -> Option<String> {
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
fn unique(base: String, used: &mut BTreeSet<String>) -> String {
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
fn exists(prose: &str) -> bool {
    is_match(exists_re(), prose)
        && !is_match(negation_re(), prose)
        && !is_match(capability_re(), prose)
}

fn find_port(prose: &str) -> Option<u16> {
    let c = captures(port_re(), prose)?;
    first_group(&c)?.parse::<u16>().ok().filter(|p| *p > 0)
}

fn exit_code(prose: &str) -> Option<i32> {
    let c = captures(exit_code_re(), prose)?;
    first_group(&c)?.parse().ok()
}

// ---------------------------------------------------------------------------------------------
// Done criteria

/// The check kind and spec of a done criterion, or `None` for a manual one.
fn map_done(raw: &str) -> Option<(CheckKind, Value)> {
    let p = Parts::new(raw);
    let prose = p.prose(None);
    if let Some(spec) = http_check(&p, &prose) {
        return Some((CheckKind::HttpStatus, spec));
    }
    let first = p.first_code();
    if let Some(path) = first.filter(|s| one_token(&s.code)) {
        if let Some(lit) = p.regex_after(path.range.end) {
            let mut spec = json!({"path": path.code, "pattern": lit.pattern});
            if is_match(negation_re(), &p.prose(Some(&lit.range))) {
                spec["negate"] = json!(true);
            }
            return Some((CheckKind::RegexInFile, spec));
        }
        if exists(&prose) {
            let dir = path.code.ends_with('/') || is_match(dir_word_re(), &prose);
            let trimmed = path.code.trim_end_matches('/');
            let mut spec =
                json!({"path": if trimmed.is_empty() { path.code.as_str() } else { trimmed }});
            if dir {
                spec["type"] = json!("dir");
            }
            return Some((CheckKind::FileExists, spec));
        }
    }
    if let Some(port) = find_port(&prose) {
        return Some((CheckKind::ProcessListening, json!({"port": port})));
    }
    let command = first?;
    let code = exit_code(&prose);
    if is_match(failure_re(), &prose) && code.is_none_or(|c| c == 0) {
        return None;
    }
    if !one_token(&command.code) || is_match(success_re(), &prose) || code.is_some() {
        let mut spec = json!({"command": command.code});
        if let Some(c) = code.filter(|c| *c != 0) {
            spec["expectExitCode"] = json!(c);
        }
        return Some((CheckKind::CommandSuccess, spec));
    }
    None
}

/// `http_status` when the item has a URL and a status.
fn http_check(p: &Parts, prose: &str) -> Option<Value> {
    let mut method = captures(method_re(), prose)
        .and_then(|c| c.get(1))
        .map(|m| m.as_str().to_string());
    let url = match p.url() {
        Some(u) => u,
        None => {
            // `curl -s -X POST http://…` → 405
            let client = p.spans.iter().find(|s| {
                matches!(
                    s.code.split_whitespace().next(),
                    Some("curl" | "wget" | "http" | "https" | "xh")
                ) && !urls(&s.code).is_empty()
            })?;
            if method.is_none() {
                method = captures(curl_method_re(), &client.code)
                    .and_then(|c| c.get(1))
                    .map(|m| m.as_str().to_uppercase())
                    .filter(|m| is_match(method_re(), m));
            }
            urls(&client.code).into_iter().next()?.1
        }
    };
    let status = captures(status_re(), prose)
        .and_then(|c| c.get(1))
        .and_then(|m| m.as_str().parse::<u16>().ok())
        .or_else(|| {
            p.spans
                .iter()
                .find_map(|s| captures(status_re(), &s.code).filter(|_| s.code.len() == 3))
                .and_then(|c| c.get(1))
                .and_then(|m| m.as_str().parse::<u16>().ok())
        })
        .or_else(|| is_match(ok_re(), prose).then_some(200))?;
    let mut spec = json!({"url": url});
    if let Some(m) = method {
        spec["method"] = json!(m);
    }
    spec["expectStatus"] = json!(status);
    Some(spec)
}

// ---------------------------------------------------------------------------------------------
// Prerequisites

struct MappedPrereq {
    name: String,
    kind: PrereqKind,
    spec: Value,
    /// What the author should know about the guess.
    note: Option<String>,
}

fn prereq(name: impl Into<String>, kind: PrereqKind, spec: Value) -> Option<MappedPrereq> {
    Some(MappedPrereq {
        name: name.into(),
        kind,
        spec,
        note: None,
    })
}

fn map_prerequisite(raw: &str) -> Option<MappedPrereq> {
    let p = Parts::new(raw);
    let prose = p.prose(None);

    // env_var: `$NAME`, or "env var NAME" / "환경 변수 NAME"
    let env_name = captures(dollar_var_re(), raw)
        .and_then(|c| c.get(1))
        .map(|m| m.as_str().to_string())
        .or_else(|| {
            if !is_match(env_word_re(), &prose) {
                return None;
            }
            p.spans
                .iter()
                .find(|s| is_match(env_name_re(), &s.code))
                .map(|s| s.code.clone())
                .or_else(|| {
                    caps_name_re().and_then(|re| {
                        re.find_iter(&prose)
                            .map(|m| m.as_str())
                            .find(|w| !matches!(*w, "ENV" | "VAR"))
                            .map(str::to_string)
                    })
                })
        });
    if let Some(name) = env_name {
        let mut spec = json!({"name": name});
        if let Some(lit) = p.regex_after(0) {
            spec["pattern"] = json!(lit.pattern);
        }
        return prereq(name, PrereqKind::EnvVar, spec);
    }

    if let Some(url) = p.url() {
        let host = url
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or(&url)
            .to_string();
        return prereq(host, PrereqKind::HttpReachable, json!({"url": url}));
    }

    if let Some(port) = find_port(&prose) {
        return prereq(
            format!("port-{port}"),
            PrereqKind::PortOpen,
            json!({"port": port}),
        );
    }

    let first = p.first_code()?;
    if one_token(&first.code)
        && (exists(&prose) || is_match(file_word_re(), &prose))
        && !is_match(command_word_re(), &prose)
        && !is_match(negation_re(), &prose)
    {
        return prereq(
            first.code.clone(),
            PrereqKind::FileExists,
            json!({"path": first.code}),
        );
    }

    let program = first.code.split_whitespace().next()?;
    if !is_match(program_re(), program) {
        return None;
    }
    let mut mapped = prereq(
        program,
        PrereqKind::CommandExists,
        json!({"command": program}),
    )?;
    if !one_token(&first.code) {
        mapped.note = Some(format!(
            "only checks that `{program}` exists, not `{}`",
            first.code
        ));
    }
    Some(mapped)
}

// ---------------------------------------------------------------------------------------------
// Verification commands

fn timeout_ms(prose: &str) -> Option<u64> {
    let c = captures(timeout_re(), prose)?;
    let n: u64 = c.get(1)?.as_str().parse().ok()?;
    let unit = c.get(2)?.as_str().to_lowercase();
    let factor = match unit.as_str() {
        "ms" | "밀리초" => 1,
        "m" | "min" | "mins" | "minute" | "minutes" | "분" => 60_000,
        _ => 1_000,
    };
    n.checked_mul(factor).filter(|ms| *ms > 0)
}

const SHELL_FENCES: &[&str] = &[
    "",
    "sh",
    "bash",
    "shell",
    "zsh",
    "console",
    "terminal",
    "shell-session",
    "shellsession",
];

/// The commands of a shell code block: one a line, `\` continuations joined, `$ ` prompts
/// and `#` comments dropped.
fn fence_commands(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in lines {
        let mut t = line.trim();
        if pending.is_empty() {
            t = t.strip_prefix("$ ").unwrap_or(t).trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
        }
        match t.strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head.trim_end());
                pending.push(' ');
            }
            None => {
                pending.push_str(t);
                out.push(std::mem::take(&mut pending).trim().to_string());
            }
        }
    }
    let rest = pending.trim();
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Putting the contract together

#[derive(Default)]
struct Drafted {
    checks: Vec<Check>,
    /// The heading of the section each check came from.
    check_sections: Vec<String>,
    check_ids: BTreeSet<String>,
    manual: Vec<ManualItem>,
    commands: Vec<RuntimeCommand>,
    command_names: BTreeSet<String>,
    prerequisites: Vec<Prerequisite>,
    prereq_names: BTreeSet<String>,
    non_goals: Vec<NonGoal>,
}

fn ignored_fence(section: &Section, warnings: &mut Vec<String>) {
    warnings.push(format!(
        "{:?}: a code block was left out; only list items are read in this section",
        section.heading
    ));
}

impl Drafted {
    fn done(&mut self, section: &Section, checklist: &str, warnings: &mut Vec<String>) {
        for block in &section.blocks {
            let raw = match block {
                Block::Item(raw) => raw,
                Block::Fence { .. } => {
                    ignored_fence(section, warnings);
                    continue;
                }
            };
            let description = clean(raw);
            let base = slug(&description).unwrap_or_else(|| format!("c{}", self.checks.len() + 1));
            let id = unique(base, &mut self.check_ids);
            let (kind, spec) = match map_done(raw) {
                Some(mapped) => mapped,
                None => {
                    self.manual.push(ManualItem {
                        section: section.heading.clone(),
                        text: description.clone(),
                        check_id: id.clone(),
                    });
                    manual_spec(checklist, &description)
                }
            };
            self.checks.push(Check {
                id,
                description,
                kind,
                spec,
                blocking: true,
                scope: None,
            });
            self.check_sections.push(section.heading.clone());
        }
    }

    fn verify(&mut self, section: &Section, warnings: &mut Vec<String>) {
        for block in &section.blocks {
            match block {
                Block::Item(raw) => {
                    let p = Parts::new(raw);
                    let Some(code) = p.first_code() else {
                        warnings.push(format!(
                            "{:?}: {:?} has no `command` in backticks; it was left out",
                            section.heading,
                            clean(raw)
                        ));
                        continue;
                    };
                    let prose = p.prose(None);
                    let command = code.code.clone();
                    self.command(command, timeout_ms(&prose), exit_code(&prose).unwrap_or(0));
                }
                Block::Fence { info, lines } => {
                    if !SHELL_FENCES.contains(&info.as_str()) {
                        warnings.push(format!(
                            "{:?}: a `{info}` code block was left out; only shell blocks hold commands",
                            section.heading
                        ));
                        continue;
                    }
                    for command in fence_commands(lines) {
                        self.command(command, None, 0);
                    }
                }
            }
        }
    }

    fn command(&mut self, command: String, timeout: Option<u64>, expect: i32) {
        let base = slug(&command).unwrap_or_else(|| format!("command-{}", self.commands.len() + 1));
        let name = unique(base, &mut self.command_names);
        self.commands.push(RuntimeCommand {
            name,
            command,
            cwd: None,
            env: None,
            timeout_ms: timeout.unwrap_or(RUNTIME_TIMEOUT_MS),
            expect_exit_code: expect,
        });
    }

    fn prerequisites(&mut self, section: &Section, warnings: &mut Vec<String>) {
        for block in &section.blocks {
            let raw = match block {
                Block::Item(raw) => raw,
                Block::Fence { .. } => {
                    ignored_fence(section, warnings);
                    continue;
                }
            };
            let reason = clean(raw);
            let Some(mapped) = map_prerequisite(raw) else {
                warnings.push(format!(
                    "{:?}: {reason:?} is not a command, port, environment variable, file or URL \
                     that can be checked, and a prerequisite cannot be manual; it was left out",
                    section.heading
                ));
                continue;
            };
            if let Some(note) = mapped.note {
                warnings.push(format!("{:?}: {reason:?} {note}", section.heading));
            }
            let name = unique(mapped.name, &mut self.prereq_names);
            self.prerequisites.push(Prerequisite {
                name,
                check: mapped.kind,
                spec: mapped.spec,
                reason,
            });
        }
    }

    fn non_goals(&mut self, section: &Section, warnings: &mut Vec<String>) {
        for block in &section.blocks {
            match block {
                Block::Item(raw) => {
                    let text = clean(raw);
                    if !text.is_empty() {
                        self.non_goals.push(NonGoal::Text(text));
                    }
                }
                Block::Fence { .. } => ignored_fence(section, warnings),
            }
        }
    }
}

fn manual_spec(checklist: &str, text: &str) -> (CheckKind, Value) {
    (
        CheckKind::ManualChecklist,
        json!({"path": checklist, "items": [text]}),
    )
}

/// `n` when `path` starts with `prefix` + `n]`.
fn index_at(path: &str, prefix: &str) -> Option<usize> {
    path.strip_prefix(prefix)?.split(']').next()?.parse().ok()
}

/// Makes the draft pass the schema: a check it refuses becomes manual, a prerequisite or
/// runtime command it refuses is left out, each with a warning.
fn settle(
    contract: &mut Contract,
    check_sections: &[String],
    checklist: &str,
    manual: &mut Vec<ManualItem>,
    warnings: &mut Vec<String>,
) -> Result<(), Error> {
    for _ in 0..3 {
        let problems = contract.problems();
        if problems.is_empty() {
            break;
        }
        let mut drop_prereqs = BTreeSet::new();
        let mut drop_commands = BTreeSet::new();
        for p in &problems {
            if let Some(i) = index_at(&p.path, "dod.checks[") {
                let Some(check) = contract.dod.checks.get_mut(i) else {
                    continue;
                };
                if check.kind == CheckKind::ManualChecklist {
                    continue;
                }
                warnings.push(format!(
                    "{:?} became a manual check: as a {} check it would be refused ({p})",
                    check.description,
                    check.kind.as_str()
                ));
                (check.kind, check.spec) = manual_spec(checklist, &check.description);
                manual.push(ManualItem {
                    section: check_sections.get(i).cloned().unwrap_or_default(),
                    text: check.description.clone(),
                    check_id: check.id.clone(),
                });
            } else if let Some(i) = index_at(&p.path, "environmentPrerequisites[") {
                if drop_prereqs.insert(i) {
                    warnings.push(format!("a prerequisite was left out: {p}"));
                }
            } else if let Some(i) = index_at(&p.path, "runtimeValidation.commands[") {
                if drop_commands.insert(i) {
                    warnings.push(format!("a runtime command was left out: {p}"));
                }
            }
        }
        for i in drop_prereqs.into_iter().rev() {
            if i < contract.environment_prerequisites.len() {
                contract.environment_prerequisites.remove(i);
            }
        }
        for i in drop_commands.into_iter().rev() {
            if i < contract.runtime_validation.commands.len() {
                contract.runtime_validation.commands.remove(i);
            }
        }
    }
    let problems = contract.problems();
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(Error::internal(format!(
            "the drafted contract does not pass the schema: {}",
            list.join("; ")
        )));
    }
    let order: Vec<&str> = contract.dod.checks.iter().map(|c| c.id.as_str()).collect();
    manual.sort_by_key(|m| order.iter().position(|id| *id == m.check_id));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const EN: &str = include_str!("../../tests/data/sprint-en.md");
    const KO: &str = include_str!("../../tests/data/sprint-ko.md");

    fn now() -> jiff::Timestamp {
        "2026-04-10T12:00:00.123456Z".parse().unwrap()
    }

    fn gen(doc: &str) -> Generated {
        match generate(doc, None, now()) {
            Ok(g) => g,
            Err(e) => panic!("generate failed: {e}"),
        }
    }

    /// (id, kind, spec) of every check.
    fn checks(g: &Generated) -> Vec<(String, &'static str, Value)> {
        g.contract
            .dod
            .checks
            .iter()
            .map(|c| (c.id.clone(), c.kind.as_str(), c.spec.clone()))
            .collect()
    }

    fn row(id: &str, kind: &'static str, spec: Value) -> (String, &'static str, Value) {
        (id.to_string(), kind, spec)
    }

    fn parses(g: &Generated) {
        if let Err(p) = schema::parse(&g.contract.to_canonical_json()) {
            panic!("generated contract refused: {p:?}");
        }
    }

    fn refusal(doc: &str, sprint: Option<&str>) -> Error {
        match generate(doc, sprint, now()) {
            Ok(g) => panic!("expected a refusal, got {:?}", g.contract),
            Err(e) => {
                assert_eq!(e.kind, crate::error::Kind::Refused, "{e}");
                e
            }
        }
    }

    #[test]
    fn every_regex_compiles() {
        let all = [
            sprint_re(),
            heading_re(),
            closing_hashes_re(),
            list_item_re(),
            checkbox_re(),
            type_re(),
            url_re(),
            status_re(),
            ok_re(),
            method_re(),
            curl_method_re(),
            port_re(),
            exit_code_re(),
            success_re(),
            failure_re(),
            exists_re(),
            capability_re(),
            file_word_re(),
            dir_word_re(),
            command_word_re(),
            negation_re(),
            env_word_re(),
            dollar_var_re(),
            caps_name_re(),
            env_name_re(),
            program_re(),
            timeout_re(),
            link_re(),
            autolink_re(),
        ];
        for (i, re) in all.iter().enumerate() {
            assert!(re.is_some(), "regex #{i} does not compile");
        }
    }

    #[test]
    fn english_document() {
        let g = gen(EN);
        parses(&g);
        let c = &g.contract;
        assert_eq!(c.sprint_id, "SPRINT-007");
        assert_eq!(c.sprint_type, SprintType::Feature);
        assert_eq!(c.version, SchemaVersion::V1);
        assert!(ulid::Ulid::from_string(&c.id).is_ok());
        assert_eq!(c.created_at, "2026-04-10T12:00:00Z");
        assert_eq!(c.reviewer_profile, ReviewerProfile::Static);
        assert_eq!(c.approval_gates, Gates::default());
        assert!(c.risk_flags.is_empty());
        let list = ".rails/checklists/SPRINT-007.md";
        assert_eq!(
            checks(&g),
            vec![
                row(
                    "cargo-test-workspace-passes",
                    "command_success",
                    json!({"command": "cargo test --workspace"})
                ),
                row(
                    "src-routes-health-rs-exists",
                    "file_exists",
                    json!({"path": "src/routes/health.rs"})
                ),
                row(
                    "src-routes-mod-rs-contains-pub-mod",
                    "regex_in_file",
                    json!({"path": "src/routes/mod.rs", "pattern": "pub mod health;"})
                ),
                row(
                    "src-main-rs-does-not-contain-println",
                    "regex_in_file",
                    json!({"path": "src/main.rs", "pattern": "println!", "negate": true})
                ),
                row(
                    "get-localhost-3000-health-returns-200",
                    "http_status",
                    json!({"url": "http://localhost:3000/health", "method": "GET", "expectStatus": 200})
                ),
                row(
                    "curl-s-x-post-localhost-3000-health-405",
                    "http_status",
                    json!({"url": "http://localhost:3000/health", "method": "POST", "expectStatus": 405})
                ),
                row(
                    "the-server-listens-on-port-3000",
                    "process_listening",
                    json!({"port": 3000})
                ),
                row(
                    "scripts-smoke-sh-exits-0",
                    "command_success",
                    json!({"command": "./scripts/smoke.sh"})
                ),
                row(
                    "cargo-run-check-config-tests-bad-toml",
                    "command_success",
                    json!({"command": "cargo run -- --check-config tests/bad.toml", "expectExitCode": 2})
                ),
                row(
                    "the-ui-feels-snappy",
                    "manual_checklist",
                    json!({"path": list, "items": ["The UI feels snappy"]})
                ),
                row(
                    "docs-health-md-is-present",
                    "file_exists",
                    json!({"path": "docs/health.md"})
                ),
                row(
                    "docs-api-directory-exists",
                    "file_exists",
                    json!({"path": "docs/api", "type": "dir"})
                ),
                row(
                    "readme-md-mentions-the-endpoint",
                    "manual_checklist",
                    json!({"path": list, "items": ["README.md mentions the endpoint"]})
                ),
            ]
        );
        let first = &c.dod.checks[0];
        assert_eq!(first.description, "cargo test --workspace passes");
        assert!(first.blocking);
        assert_eq!(
            c.dod.checks[2].description,
            "src/routes/mod.rs contains /pub mod health;/"
        );
        assert_eq!(
            g.manual_items,
            vec![
                ManualItem {
                    section: "Done criteria (DoD)".into(),
                    text: "The UI feels snappy".into(),
                    check_id: "the-ui-feels-snappy".into(),
                },
                ManualItem {
                    section: "Done criteria (DoD)".into(),
                    text: "README.md mentions the endpoint".into(),
                    check_id: "readme-md-mentions-the-endpoint".into(),
                },
            ]
        );

        let commands: Vec<(&str, &str, u64, i32)> = c
            .runtime_validation
            .commands
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    r.command.as_str(),
                    r.timeout_ms,
                    r.expect_exit_code,
                )
            })
            .collect();
        assert_eq!(
            commands,
            vec![
                ("cargo-build-release", "cargo build --release", 180_000, 0),
                ("cargo-test-workspace", "cargo test --workspace", 60_000, 0),
                (
                    "scripts-start-sh-detach-port-3000",
                    "./scripts/start.sh --detach --port 3000",
                    60_000,
                    0
                ),
                (
                    "curl-fss-localhost-3000-health",
                    "curl -fsS http://localhost:3000/health",
                    60_000,
                    0
                ),
            ]
        );

        let prereqs: Vec<(&str, &str, Value, &str)> = c
            .environment_prerequisites
            .iter()
            .map(|p| {
                (
                    p.name.as_str(),
                    p.check.as_str(),
                    p.spec.clone(),
                    p.reason.as_str(),
                )
            })
            .collect();
        assert_eq!(
            prereqs,
            vec![
                (
                    "cargo",
                    "command_exists",
                    json!({"command": "cargo"}),
                    "cargo command (Rust 1.89 or newer)"
                ),
                (
                    "docker",
                    "command_exists",
                    json!({"command": "docker"}),
                    "docker installed"
                ),
                (
                    "port-5432",
                    "port_open",
                    json!({"port": 5432}),
                    "Port 5432 open (PostgreSQL for the integration tests)"
                ),
                (
                    "DATABASE_URL",
                    "env_var",
                    json!({"name": "DATABASE_URL"}),
                    "$DATABASE_URL points at the test database"
                ),
                (
                    "RUST_LOG",
                    "env_var",
                    json!({"name": "RUST_LOG", "pattern": "^(info|debug)$"}),
                    "RUST_LOG env var matches /^(info|debug)$/"
                ),
                (
                    "config/local.toml",
                    "file_exists",
                    json!({"path": "config/local.toml"}),
                    "config/local.toml exists"
                ),
                (
                    "crates.example.com",
                    "http_reachable",
                    json!({"url": "https://crates.example.com"}),
                    "https://crates.example.com reachable (crate mirror)"
                ),
            ]
        );
        assert_eq!(
            c.non_goals,
            vec![
                NonGoal::Text("Authentication on the health endpoint".into()),
                NonGoal::Text("Metrics export (Prometheus, OpenTelemetry)".into()),
            ]
        );
        assert_eq!(g.warnings.len(), 1, "{:?}", g.warnings);
        assert!(g.warnings[0].contains("A fast laptop"), "{:?}", g.warnings);
    }

    #[test]
    fn korean_document() {
        let g = gen(KO);
        parses(&g);
        let c = &g.contract;
        assert_eq!(c.sprint_id, "SPRINT-008");
        assert_eq!(c.sprint_type, SprintType::Feature);
        let list = ".rails/checklists/SPRINT-008.md";
        assert_eq!(
            checks(&g),
            vec![
                row(
                    "pnpm-tsc-noemit",
                    "command_success",
                    json!({"command": "pnpm tsc --noEmit"})
                ),
                row(
                    "src-app-settings-page-tsx",
                    "file_exists",
                    json!({"path": "src/app/settings/page.tsx"})
                ),
                row(
                    "tsconfig-json-strict-s-s-true",
                    "regex_in_file",
                    json!({"path": "tsconfig.json", "pattern": "\"strict\"\\s*:\\s*true"})
                ),
                row(
                    "src-app-settings-page-tsx-console-log",
                    "regex_in_file",
                    json!({"path": "src/app/settings/page.tsx", "pattern": "console\\.log", "negate": true})
                ),
                row(
                    "localhost-3000-api-health-200",
                    "http_status",
                    json!({"url": "http://localhost:3000/api/health", "expectStatus": 200})
                ),
                row(
                    "post-localhost-3000-api-settings-201",
                    "http_status",
                    json!({"url": "http://localhost:3000/api/settings", "method": "POST", "expectStatus": 201})
                ),
                row("c7", "process_listening", json!({"port": 3000})),
                row(
                    "pnpm-vitest-run",
                    "command_success",
                    json!({"command": "pnpm vitest run"})
                ),
                row(
                    "scripts-seed-sh-0",
                    "command_success",
                    json!({"command": "scripts/seed.sh"})
                ),
                row(
                    "public-icons",
                    "file_exists",
                    json!({"path": "public/icons", "type": "dir"})
                ),
                row(
                    "qa",
                    "manual_checklist",
                    json!({"path": list, "items": ["다랑이 QA 체크리스트 확인"]})
                ),
                row(
                    "c12",
                    "manual_checklist",
                    json!({"path": list, "items": ["다크 모드에서 글자가 잘 보인다"]})
                ),
            ]
        );
        assert_eq!(c.dod.checks[0].description, "pnpm tsc --noEmit 통과");
        assert_eq!(
            c.dod.checks[2].description,
            "tsconfig.json 에 /\"strict\"\\s*:\\s*true/ 포함"
        );
        let manual: Vec<(&str, &str, &str)> = g
            .manual_items
            .iter()
            .map(|m| (m.section.as_str(), m.text.as_str(), m.check_id.as_str()))
            .collect();
        assert_eq!(
            manual,
            vec![
                ("완료 기준", "다랑이 QA 체크리스트 확인", "qa"),
                ("완료 기준", "다크 모드에서 글자가 잘 보인다", "c12"),
            ]
        );

        let commands: Vec<(&str, &str, u64)> = c
            .runtime_validation
            .commands
            .iter()
            .map(|r| (r.name.as_str(), r.command.as_str(), r.timeout_ms))
            .collect();
        assert_eq!(
            commands,
            vec![
                (
                    "pnpm-install-frozen-lockfile",
                    "pnpm install --frozen-lockfile",
                    180_000
                ),
                ("pnpm-build", "pnpm build", 60_000),
                ("pnpm-lint", "pnpm lint", 60_000),
            ]
        );

        let prereqs: Vec<(&str, &str, Value)> = c
            .environment_prerequisites
            .iter()
            .map(|p| (p.name.as_str(), p.check.as_str(), p.spec.clone()))
            .collect();
        assert_eq!(
            prereqs,
            vec![
                ("node", "command_exists", json!({"command": "node"})),
                ("pnpm", "command_exists", json!({"command": "pnpm"})),
                ("port-5432", "port_open", json!({"port": 5432})),
                ("DATABASE_URL", "env_var", json!({"name": "DATABASE_URL"})),
                (
                    "SESSION_SECRET",
                    "env_var",
                    json!({"name": "SESSION_SECRET"})
                ),
                (".env.local", "file_exists", json!({"path": ".env.local"})),
                (
                    "localhost:8080",
                    "http_reachable",
                    json!({"url": "http://localhost:8080"})
                ),
            ]
        );
        assert_eq!(
            c.environment_prerequisites[0].reason,
            "node 커맨드 (Node 22 필수)"
        );
        assert_eq!(
            c.non_goals,
            vec![
                NonGoal::Text("XState 머신 실제 구현".into()),
                NonGoal::Text("디스코드 연동".into()),
            ]
        );
        assert_eq!(g.warnings.len(), 1, "{:?}", g.warnings);
        assert!(g.warnings[0].contains("빠른 인터넷"), "{:?}", g.warnings);
        let md = g.checklist_markdown().unwrap();
        assert!(md.contains("- [ ] 다랑이 QA 체크리스트 확인\n"), "{md}");
        assert!(
            md.contains("- [ ] 다크 모드에서 글자가 잘 보인다\n"),
            "{md}"
        );
    }

    #[test]
    fn no_sprint_id_is_refused() {
        let e = refusal(
            "# Health endpoint\n\n## Done criteria\n\n- `cargo test` passes\n",
            None,
        );
        assert!(e.message.contains("SPRINT-NNN"), "{e}");
        assert!(e.hint.unwrap_or_default().contains("--sprint"));
    }

    #[test]
    fn sprint_option_wins_and_is_checked() {
        let doc = "# SPRINT-001: x\n\n## Done criteria\n\n- `cargo test` passes\n";
        let g = match generate(doc, Some("SPRINT-042"), now()) {
            Ok(g) => g,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(g.contract.sprint_id, "SPRINT-042");
        assert!(g.warnings[0].contains("SPRINT-001"), "{:?}", g.warnings);
        refusal(doc, Some("bad id/with slash"));
    }

    #[test]
    fn sprint_id_from_the_text_when_the_title_has_none() {
        let g = gen(
            "# Health\n\nTracked as SPRINT-012.\n\n## Done criteria\n\n- `make check` passes\n",
        );
        assert_eq!(g.contract.sprint_id, "SPRINT-012");
        assert_eq!(g.warnings.len(), 1);
    }

    #[test]
    fn no_done_section_is_refused() {
        let e = refusal(
            "# SPRINT-001: x\n\n## Verification commands\n\n- `cargo test`\n",
            None,
        );
        assert!(e.message.contains("Done criteria"), "{e}");
        assert!(e.message.contains("완료 기준"), "{e}");
        assert!(e.message.contains("Acceptance criteria"), "{e}");
    }

    #[test]
    fn empty_done_section_is_refused() {
        let e = refusal(
            "# SPRINT-001: x\n\n## 완료 기준\n\nTBD\n\n## Notes\n\n- `cargo test` passes\n",
            None,
        );
        assert!(e.message.contains("no list items"), "{e}");
    }

    #[test]
    fn heading_variants_and_section_ends() {
        let doc = "# SPRINT-003\n\n\
                   ### ACCEPTANCE CRITERIA (DoD) ###\n\
                   1. `cargo test` passes\n\
                   2) `make lint` succeeds\n\
                   * [x] `README.md` exists\n\
                   + the release notes are\n  written by hand\n\
                   ## Out of scope\n\
                   - Windows support\n\
                   ## Definition of done, continued\n\
                   - `a.txt` exists\n\
                   ## Notes\n\
                   - `b.txt` exists\n";
        let g = gen(doc);
        let ids: Vec<&str> = g
            .contract
            .dod
            .checks
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        assert_eq!(
            ids,
            vec![
                "cargo-test-passes",
                "make-lint-succeeds",
                "readme-md-exists",
                "the-release-notes-are-written-by-hand",
                "a-txt-exists"
            ]
        );
        assert_eq!(
            g.manual_items[0].text,
            "the release notes are written by hand"
        );
        assert_eq!(
            g.contract.non_goals,
            vec![NonGoal::Text("Windows support".into())]
        );
    }

    #[test]
    fn title_and_comments_are_not_sections() {
        let doc = "# SPRINT-004: Prerequisites cleanup\n\n## Context\n\n- `make` installed\n\n\
                   ## Done criteria\n\n- `make check` passes <!-- was: make test -->\n\
                   <!--\n- `old.txt` exists\n-->\n- `new.txt` exists\n";
        let g = gen(doc);
        assert!(g.contract.environment_prerequisites.is_empty());
        let ids: Vec<&str> = g
            .contract
            .dod
            .checks
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        assert_eq!(ids, vec!["make-check-passes", "new-txt-exists"]);
    }

    #[test]
    fn duplicate_items_get_unique_ids() {
        let g = gen("# SPRINT-001\n## Done criteria\n- `cargo test` passes\n- `cargo test` passes\n- `cargo test` passes\n");
        let ids: Vec<&str> = g
            .contract
            .dod
            .checks
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        assert_eq!(
            ids,
            vec![
                "cargo-test-passes",
                "cargo-test-passes-2",
                "cargo-test-passes-3"
            ]
        );
        parses(&g);
    }

    #[test]
    fn checks_that_cannot_fail_become_manual() {
        let g = gen("# SPRINT-001\n## Done criteria\n- `true` passes\n- `a.txt` contains /x*/\n- `b.txt` contains /(/\n- `cargo test` passes\n");
        parses(&g);
        let kinds: Vec<&str> = g
            .contract
            .dod
            .checks
            .iter()
            .map(|c| c.kind.as_str())
            .collect();
        assert_eq!(
            kinds,
            vec![
                "manual_checklist",
                "manual_checklist",
                "manual_checklist",
                "command_success"
            ]
        );
        let texts: Vec<&str> = g.manual_items.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(
            texts,
            vec!["true passes", "a.txt contains /x*/", "b.txt contains /(/"]
        );
        assert_eq!(g.warnings.len(), 3, "{:?}", g.warnings);
        assert!(g.warnings[0].contains("cannot fail"), "{:?}", g.warnings);
    }

    #[test]
    fn item_heuristics() {
        let cases: &[(&str, Option<(CheckKind, Value)>)] = &[
            (
                "`README.md`, `/## Getting Started/`",
                Some((
                    CheckKind::RegexInFile,
                    json!({"path": "README.md", "pattern": "## Getting Started"}),
                )),
            ),
            (
                "`src/lib.rs` matches /^use std/m",
                Some((
                    CheckKind::RegexInFile,
                    json!({"path": "src/lib.rs", "pattern": "(?m)^use std"}),
                )),
            ),
            (
                "`web/.env` contains /https?:\\/\\/api/",
                Some((
                    CheckKind::RegexInFile,
                    json!({"path": "web/.env", "pattern": "https?://api"}),
                )),
            ),
            (
                "`https://example.com/status` returns OK",
                Some((
                    CheckKind::HttpStatus,
                    json!({"url": "https://example.com/status", "expectStatus": 200}),
                )),
            ),
            (
                "[health](http://localhost:8080/health) answers 204",
                Some((
                    CheckKind::HttpStatus,
                    json!({"url": "http://localhost:8080/health", "expectStatus": 204}),
                )),
            ),
            ("`debug.log` does not exist", None),
            ("`git rails freeze` fails on a dirty draft", None),
            (
                "`git rails freeze` exits 65 on a dirty draft",
                Some((
                    CheckKind::CommandSuccess,
                    json!({"command": "git rails freeze", "expectExitCode": 65}),
                )),
            ),
            ("`README.md` updated", None),
            ("http://localhost:3000 loads quickly", None),
            (
                "3000번 포트가 열려 있다",
                Some((CheckKind::ProcessListening, json!({"port": 3000}))),
            ),
            (
                "`pnpm dev` listens on :5173",
                Some((CheckKind::ProcessListening, json!({"port": 5173}))),
            ),
            (
                "`dist/` 디렉터리 생성",
                Some((
                    CheckKind::FileExists,
                    json!({"path": "dist", "type": "dir"}),
                )),
            ),
            ("`docs/` 에서 확인할 수 있다", None),
            (
                "`dist/` 디렉터리가 있다",
                Some((
                    CheckKind::FileExists,
                    json!({"path": "dist", "type": "dir"}),
                )),
            ),
            (
                "`cargo build` output contains /warning/",
                Some((CheckKind::CommandSuccess, json!({"command": "cargo build"}))),
            ),
        ];
        for (item, want) in cases {
            assert_eq!(&map_done(item), want, "{item}");
        }
    }

    #[test]
    fn prerequisite_heuristics() {
        type Want = Option<(&'static str, PrereqKind, Value)>;
        let cases: &[(&str, Want)] = &[
            (
                "`${HOME}` set",
                Some(("HOME", PrereqKind::EnvVar, json!({"name": "HOME"}))),
            ),
            (
                "env `API_TOKEN`",
                Some((
                    "API_TOKEN",
                    PrereqKind::EnvVar,
                    json!({"name": "API_TOKEN"}),
                )),
            ),
            (
                "`docker compose` v2",
                Some((
                    "docker",
                    PrereqKind::CommandExists,
                    json!({"command": "docker"}),
                )),
            ),
            (
                "`.env` file",
                Some((".env", PrereqKind::FileExists, json!({"path": ".env"}))),
            ),
            (
                "Redis on port 6379",
                Some(("port-6379", PrereqKind::PortOpen, json!({"port": 6379}))),
            ),
            ("Node 22", None),
        ];
        for (item, want) in cases {
            let got = map_prerequisite(item).map(|m| (m.name, m.kind, m.spec));
            let want = want
                .as_ref()
                .map(|(n, k, s)| (n.to_string(), *k, s.clone()));
            assert_eq!(got, want, "{item}");
        }
        assert!(map_prerequisite("`docker compose` v2")
            .and_then(|m| m.note)
            .is_some());
    }

    #[test]
    fn verification_blocks() {
        let doc = "# SPRINT-001\n## Done criteria\n- `cargo test` passes\n\
                   ## Verification commands\n\
                   - Run the linter\n\
                   - `./smoke.sh` exits 3 (timeout 2 min)\n\
                   ```json\n{\"a\": 1}\n```\n\
                   ```\n$ make \\\n    all\n# comment\n\nmake all\n```\n";
        let g = gen(doc);
        let commands: Vec<(&str, &str, u64, i32)> = g
            .contract
            .runtime_validation
            .commands
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    r.command.as_str(),
                    r.timeout_ms,
                    r.expect_exit_code,
                )
            })
            .collect();
        assert_eq!(
            commands,
            vec![
                ("smoke-sh", "./smoke.sh", 120_000, 3),
                ("make-all", "make all", 60_000, 0),
                ("make-all-2", "make all", 60_000, 0),
            ]
        );
        assert_eq!(g.warnings.len(), 2, "{:?}", g.warnings);
        parses(&g);
    }

    #[test]
    fn sprint_type_line() {
        let base = "# SPRINT-001\n## Done criteria\n- `cargo test` passes\n";
        assert_eq!(
            gen(&format!("**Type:** bugfix\n{base}"))
                .contract
                .sprint_type,
            SprintType::Bugfix
        );
        let g = gen(&format!("- 유형: `infra`\n{base}"));
        assert_eq!(g.contract.sprint_type, SprintType::Infra);
        let g = gen(&format!("Type: epic\n{base}"));
        assert_eq!(g.contract.sprint_type, SprintType::Feature);
        assert!(g.warnings[0].contains("epic"));
    }

    #[test]
    fn slugs() {
        assert_eq!(
            slug("`pnpm tsc --noEmit` 통과").as_deref(),
            Some("pnpm-tsc-noemit")
        );
        assert_eq!(slug("포트 3000 리스닝"), None);
        assert_eq!(slug("다크 모드"), None);
        let long =
            slug("a very long criterion that keeps going well past the forty character limit")
                .unwrap_or_default();
        assert!(long.len() <= MAX_SLUG, "{long}");
        assert_eq!(long, "a-very-long-criterion-that-keeps-going");
    }
}
