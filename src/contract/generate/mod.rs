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
//!    A `command_success` that runs pytest gets `redExitCodes: [1, 2]` (failed tests, a
//!    collection error) and one that runs `cargo test` `[101]`, so that a runner that could
//!    not run is never a RED; and an item that says the suite stays green (`still`, `stays`,
//!    `keeps`, `existing`, `regression`, `기존`, `여전히`, `유지`, `회귀`) is a regression guard
//!    (`"proof": "guard"`): it passes already, so it is recorded GREEN with no RED.
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
//!
//! The parts: [`scan`] (the document into sections), [`items`] (one list item taken apart),
//! [`map`] (an item to a check, a prerequisite or commands) and [`draft`] (the contract put
//! together and checked). This file holds the entry point and the regexes they share.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::ops::Range;
use std::sync::OnceLock;

use regex::{Captures, Match, Regex};
use serde_json::{json, Value};

use crate::contract::schema::{
    self, Check, CheckKind, CheckProof, Contract, Dod, Gates, NonGoal, PrereqKind, Prerequisite,
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
    stays_green_re,
    r"(?i)\b(?:still|stays?|keeps?|remains?|existing|regressions?|whole suite|entire suite|full suite|no longer break)\b|기존|여전히|유지|회귀"
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

// Markdown links, taken apart by `items::unmark`.
regex!(link_re, r"\[([^\]]*)\]\(([^)\s]*)\)");
regex!(autolink_re, r"<(https?://[^>\s]+)>");

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

/// What [`write_draft`] wrote.
#[derive(Debug)]
pub struct Written {
    /// The draft file.
    pub path: std::path::PathBuf,
    /// The version a freeze of this draft makes, when the sprint is frozen already.
    pub next_version: Option<String>,
    /// The checklist started for the manual checks (repository-relative), when there was none.
    pub checklist: Option<String>,
}

/// Writes `generated` as the sprint's draft, and starts the checklist its manual checks point at
/// when there is none yet. An existing draft is replaced only with `force`, or when it equals the
/// newest frozen version (nothing of it would be lost); otherwise a refusal that says how to go
/// on (`doc` is the sprint document as the user named it).
pub fn write_draft(
    store: &crate::store::Store,
    root: &std::path::Path,
    generated: &Generated,
    force: bool,
    doc: &str,
) -> Result<Written, Error> {
    // A generated draft's id passed the schema's rules; checked again as the type needs.
    let sprint = &crate::contract::SprintId::parse(&generated.contract.sprint_id)?;
    let path = crate::contract::draft_path(root, sprint);
    let frozen = crate::contract::newest(store, sprint)?;
    let mut next_version = None;
    if let Ok(existing) = std::fs::read(&path) {
        let equals_tip = frozen.as_ref().is_some_and(|f| {
            schema::parse(&existing)
                .map(|c| c.to_canonical_json() == f.contract.to_canonical_json())
                .unwrap_or(false)
        });
        if !equals_tip && !force {
            return Err(Error::refused(format!(
                "a draft already exists at {}",
                crate::contract::rel(root, &path)
            ))
            .hint(format!(
                "edit it with `git rails contract edit {sprint}`, or replace it with `git rails contract generate {} --force`",
                doc
            )));
        }
    }
    if let Some(f) = &frozen {
        next_version = Some(crate::contract::next_version(&f.version));
    }
    crate::store::atomic_write_mode(&path, &generated.contract.to_canonical_json(), Some(0o644))?;
    // Manual checks point at the sprint's checklist; start it when there is none yet.
    let mut checklist = None;
    if let Some(md) = generated.checklist_markdown() {
        let cl = root.join(checklist_path(sprint));
        if !cl.exists() {
            crate::store::atomic_write_mode(&cl, md.as_bytes(), Some(0o644))?;
            checklist = Some(crate::contract::rel(root, &cl));
        }
    }
    Ok(Written {
        path,
        next_version,
        checklist,
    })
}

mod draft;
mod items;
mod map;
mod scan;
#[cfg(test)]
mod tests;

use draft::*;
use items::*;
use map::*;
use scan::*;
