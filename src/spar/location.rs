//! Where a finding points (seed row G7), what it links to (G8, G9), and the one grammar both
//! use (seed §3, "위치·연결 문법").
//!
//! ```text
//! reference = the text with surrounding whitespace trimmed
//!           = prefix? path (":" line (dash line)?)? (end rest)?
//! prefix    = G7: "head/" | "base/" | "./"     G8: "head/" | "./"   (the leading one, once)
//! line      = one or more ASCII digits
//! dash      = "-" | "–"
//! end       = whitespace | "," | ";"            (only after a line)
//! rest      = any text
//! ```
//!
//! The path of a reference with lines runs up to the first `:line` or `:line-line` that is
//! followed by an end or by the end of the text, so a path may hold spaces and a second location
//! in the rest does not change it. Without such a place the reference has no lines: the whole
//! reference is the path if it names a target, else its first word. Only then are line values
//! looked at; how the path is read never depends on them.
//!
//! Everything here is a pure function of a small index of the copies and the round documents:
//! no git access, so `spar run` and `spar record` (and the tests) share one implementation.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::Bound;
use std::str::FromStr;

use super::classify::ParseValueError;
use super::glob::CheckPaths;

/// What a tree entry of a copy is (from its git mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// Mode 100644.
    Blob,
    /// Mode 100755.
    Executable,
    /// Mode 120000: a file of the copy (a location target) but never a contract target.
    Symlink,
    /// Mode 160000 (gitlink): not part of a copy at all (§3), kept only to say why a link to it
    /// is unconfirmed.
    Submodule,
}

impl EntryKind {
    /// The name used in fixtures and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Blob => "blob",
            EntryKind::Executable => "executable",
            EntryKind::Symlink => "symlink",
            EntryKind::Submodule => "submodule",
        }
    }

    /// A regular file (100644 or 100755): the only head entries a contract link may name.
    pub fn is_regular_file(self) -> bool {
        matches!(self, EntryKind::Blob | EntryKind::Executable)
    }

    /// Part of the copy: blobs, executables and symlinks, not submodules.
    fn in_copy(self) -> bool {
        self != EntryKind::Submodule
    }
}

impl FromStr for EntryKind {
    type Err = ParseValueError;

    /// Accepts the names (`blob`, `executable`, `symlink`, `submodule`) and the git modes.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "blob" | "100644" => Ok(EntryKind::Blob),
            "executable" | "100755" => Ok(EntryKind::Executable),
            "symlink" | "120000" => Ok(EntryKind::Symlink),
            "submodule" | "160000" => Ok(EntryKind::Submodule),
            _ => Err(ParseValueError::new(
                "entry kind",
                s,
                &["blob", "executable", "symlink", "submodule"],
            )),
        }
    }
}

/// The files of one commit's tree (a "copy", 사본): its blob entries and, implied by them, the
/// folders above them. Submodules are recorded but are not part of the copy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Copy {
    entries: BTreeMap<String, EntryKind>,
}

impl Copy {
    /// An empty copy.
    pub fn new() -> Copy {
        Copy::default()
    }

    /// Records one tree entry by its repository path (`/`-separated, as git lists it).
    pub fn insert(&mut self, path: impl Into<String>, kind: EntryKind) {
        self.entries.insert(path.into(), kind);
    }

    /// The entry at exactly this path, submodules included.
    pub fn entry(&self, path: &str) -> Option<EntryKind> {
        self.entries.get(path).copied()
    }

    /// Whether the path is a folder of the copy: one with at least one file entry (blob,
    /// executable or symlink, not a submodule) below it. The empty path (the top level) is always
    /// a folder.
    pub fn is_folder(&self, path: &str) -> bool {
        if path.is_empty() {
            return true;
        }
        let below = format!("{path}/");
        self.entries
            .range::<str, _>((Bound::Included(below.as_str()), Bound::Unbounded))
            .take_while(|(p, _)| p.starts_with(&below))
            .any(|(_, kind)| kind.in_copy())
    }

    /// Whether the path is a file (blob, executable, symlink) or a folder of the copy: what a
    /// location may name. The empty path answers false: only a prefix alone (`head/`) names the
    /// top level, which the resolver decides.
    pub fn has_file_or_folder(&self, path: &str) -> bool {
        self.entry(path).is_some_and(EntryKind::in_copy)
            || (!path.is_empty() && self.is_folder(path))
    }

    /// Whether the path is a regular file (mode 100644 or 100755).
    pub fn is_regular_file(&self, path: &str) -> bool {
        self.entry(path).is_some_and(EntryKind::is_regular_file)
    }
}

impl<S: Into<String>> FromIterator<(S, EntryKind)> for Copy {
    fn from_iter<I: IntoIterator<Item = (S, EntryKind)>>(iter: I) -> Copy {
        let mut copy = Copy::new();
        for (path, kind) in iter {
            copy.insert(path, kind);
        }
        copy
    }
}

/// Line count as G8 defines it: the number of newlines, plus one when the last line does not end
/// with a newline (so an empty file has 0 lines).
pub fn count_lines(contents: &[u8]) -> u64 {
    let newlines = contents.iter().filter(|&&b| b == b'\n').count() as u64;
    match contents.last() {
        Some(&last) if last != b'\n' => newlines + 1,
        _ => newlines,
    }
}

/// A round document (G26: `--criteria`, `--rules`, `--subject`, and the project's rules of G23).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    name: String,
    abs_path: String,
    in_repo: bool,
    lines: u64,
}

impl Document {
    /// A document at its real absolute path; `repo_path` is its repository-relative path when it
    /// is inside the repository. Its name (G26) is that path, else its file name.
    pub fn new(abs_path: impl Into<String>, repo_path: Option<&str>, contents: &[u8]) -> Document {
        let abs_path = abs_path.into();
        let (name, in_repo) = match repo_path {
            Some(path) => (path.to_string(), true),
            None => (file_name(&abs_path).to_string(), false),
        };
        Document {
            name,
            abs_path,
            in_repo,
            lines: count_lines(contents),
        }
    }

    /// A document known by its recorded facts (a round re-read from git for `spar record`).
    pub fn recorded(abs_path: impl Into<String>, repo_path: Option<&str>, lines: u64) -> Document {
        let mut d = Document::new(abs_path, repo_path, b"");
        d.lines = lines;
        d
    }

    /// The G26 name: repository-relative path inside the repository, file name outside.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The real absolute path.
    pub fn abs_path(&self) -> &str {
        &self.abs_path
    }

    /// The file name of the name (what `round.json` records as `file_name`).
    pub fn file_name(&self) -> &str {
        file_name(&self.name)
    }

    /// Whether the document is inside the repository (only then can it be in the check paths).
    pub fn in_repo(&self) -> bool {
        self.in_repo
    }

    /// Its line count (see [`count_lines`]).
    pub fn lines(&self) -> u64 {
        self.lines
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Which copy or document a location was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    HeadCopy,
    BaseCopy,
    RoundDocument,
}

/// A finding's location as G7 reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The target's repository path (a round document's G26 name); empty for the repository top
    /// level and for an unreadable location.
    pub path: String,
    /// Whether `path` matches a check path; never for the top level, an outside document or an
    /// unreadable location.
    pub in_check_paths: bool,
    /// `Some(reason)` when the location is out of the grammar or names no target (G7, §4).
    pub unreadable: Option<String>,
    /// The line range as given (a single line `n` is `(n, n)`); recorded only, never compared
    /// with the file.
    pub lines: Option<(u64, u64)>,
    /// Where the target was found.
    pub target: Option<Target>,
}

impl Location {
    fn unreadable(reason: String) -> Location {
        Location {
            path: String::new(),
            in_check_paths: false,
            unreadable: Some(reason),
            lines: None,
            target: None,
        }
    }

    /// Whether the location could not be read (`location_unreadable`).
    pub fn is_unreadable(&self) -> bool {
        self.unreadable.is_some()
    }
}

/// `link_kind` of a finding (the "review round §3" values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkKind {
    Rule,
    Contract,
    Criterion,
    None,
}

impl LinkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::Rule => "rule",
            LinkKind::Contract => "contract",
            LinkKind::Criterion => "criterion",
            LinkKind::None => "none",
        }
    }
}

impl fmt::Display for LinkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LinkKind {
    type Err = ParseValueError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "rule" => Ok(LinkKind::Rule),
            "contract" => Ok(LinkKind::Contract),
            "criterion" => Ok(LinkKind::Criterion),
            "none" => Ok(LinkKind::None),
            _ => Err(ParseValueError::new(
                "link_kind",
                s,
                &["rule", "contract", "criterion", "none"],
            )),
        }
    }
}

/// A finding's link after G8/G9. Unconfirmed: `kind` is `none` and `link` empty, and the
/// reviewer's values stay in `claimed_kind` and `claimed_link` (seed §1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkResult {
    pub confirmed: bool,
    /// The reviewer's kind when confirmed, else `none`.
    pub kind: LinkKind,
    /// The reviewer's link, unchanged, when confirmed, else empty.
    pub link: String,
    pub claimed_kind: LinkKind,
    pub claimed_link: String,
    /// What it resolved to: a rule document's name, a head file's path, or the criterion ids.
    pub target: Option<String>,
    /// The line range given, when the link had one and was confirmed.
    pub lines: Option<(u64, u64)>,
    /// Why it is (un)confirmed, in words.
    pub reason: String,
}

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
const LOCATION_PREFIXES: &[&str] = &["head/", "base/", "./"];
/// G8 keeps `base/` as the name of a repository folder.
const LINK_PREFIXES: &[&str] = &["head/", "./"];

/// Takes off the one leading prefix, once: G7 reads `head/base/x` as `base/x` of the head copy.
fn strip_prefix<'a>(path: &'a str, prefixes: &[&'static str]) -> (Option<&'static str>, &'a str) {
    for &prefix in prefixes {
        if let Some(rest) = path.strip_prefix(prefix) {
            return (Some(prefix), rest);
        }
    }
    (None, path)
}

/// The line part of a reference: digits as written, the range end when there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LineSpec<'a> {
    front: &'a str,
    back: Option<&'a str>,
}

/// An `end` of §3: Unicode whitespace, `,` or `;` (or the end of the text).
fn ends_line(rest: &str) -> bool {
    rest.chars()
        .next()
        .is_none_or(|c| c.is_whitespace() || c == ',' || c == ';')
}

fn leading_digits(text: &str) -> &str {
    let n = text.bytes().take_while(u8::is_ascii_digit).count();
    &text[..n]
}

/// Splits a trimmed reference at the first `:line` or `:line-line` followed by an end or the end
/// of the text; `None` when there is no such place (a reference without lines).
fn split_lines(text: &str) -> Option<(&str, LineSpec<'_>)> {
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
fn has_bad_line_end(text: &str) -> bool {
    text.match_indices(':').any(|(colon, _)| {
        let after = &text[colon + 1..];
        let digits = leading_digits(after);
        !digits.is_empty() && !ends_line(&after[digits.len()..])
    })
}

/// The first word: up to the first Unicode whitespace.
fn first_word(text: &str) -> &str {
    text.split(char::is_whitespace).next().unwrap_or(text)
}

/// Reads the line values once the path is decided: 0, a range ending before it starts, or a
/// number too large to hold are out of form (G7 unreadable, G8 unconfirmed).
fn line_range(spec: LineSpec<'_>) -> Result<(u64, u64), String> {
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

/// A document found by name: exactly one, several (ambiguous), or none.
enum DocMatch<'a> {
    One(&'a Document),
    Several(usize),
    None,
}

/// Finds a document the way §3/G8 say: by G26 name or real absolute path, else by file name
/// when exactly one document has that file name. The same document listed twice (e.g. as a rule
/// and as the criteria) counts once.
fn find_document<'a>(documents: &'a [Document], path: &str) -> DocMatch<'a> {
    let pick = |matches: Vec<&'a Document>| {
        let mut distinct: Vec<&'a Document> = Vec::new();
        for doc in matches {
            if !distinct.iter().any(|d| d.abs_path == doc.abs_path) {
                distinct.push(doc);
            }
        }
        match distinct.as_slice() {
            [] => DocMatch::None,
            [one] => DocMatch::One(one),
            several => DocMatch::Several(several.len()),
        }
    };
    if path.is_empty() {
        return DocMatch::None;
    }
    let by_name = pick(
        documents
            .iter()
            .filter(|d| d.name == path || d.abs_path == path)
            .collect(),
    );
    if !matches!(by_name, DocMatch::None) {
        return by_name;
    }
    pick(documents.iter().filter(|d| d.file_name() == path).collect())
}

/// A confirmed link: what it resolved to, its lines, and the reason in words.
struct Confirmed {
    target: String,
    lines: Option<(u64, u64)>,
    reason: String,
}

/// What a rule/contract link names.
enum LinkTarget<'a> {
    Document(&'a Document),
    HeadFile(&'a str),
}

/// Everything a finding's location and link are resolved against: the two copies, the round
/// documents, the criteria ids and the check paths.
#[derive(Debug, Clone, Default)]
pub struct Resolver {
    head: Copy,
    base: Copy,
    check_paths: CheckPaths,
    rule_documents: Vec<Document>,
    /// Every round document (rules, criteria, subject): the documents a location may name.
    documents: Vec<Document>,
    criteria_ids: Option<BTreeSet<String>>,
}

impl Resolver {
    /// A resolver over the head and base copies, with no round documents yet.
    pub fn new(head: Copy, base: Copy, check_paths: CheckPaths) -> Resolver {
        Resolver {
            head,
            base,
            check_paths,
            ..Resolver::default()
        }
    }

    /// Adds a rule document (project `rules` or `--rules`): a link target (G8) and a round
    /// document (G7).
    pub fn with_rule_document(mut self, document: Document) -> Resolver {
        self.documents.push(document.clone());
        self.rule_documents.push(document);
        self
    }

    /// Adds another round document (`--subject`): a location target only.
    pub fn with_document(mut self, document: Document) -> Resolver {
        self.documents.push(document);
        self
    }

    /// Adds the criteria document (`--criteria`) with its text: a round document, and its ids
    /// (G9) are what criterion links are checked against. Without it no criterion link is
    /// confirmed.
    pub fn with_criteria(mut self, document: Document, contents: &str) -> Resolver {
        self.documents.push(document);
        self.criteria_ids
            .get_or_insert_with(BTreeSet::new)
            .extend(criterion_ids(contents));
        self
    }

    /// The criteria document's ids (`round.json` `links.criteria_ids`), if there is one.
    pub fn criteria_ids(&self) -> Option<&BTreeSet<String>> {
        self.criteria_ids.as_ref()
    }

    /// The rule documents (`round.json` `links.rules[]`: names, file_name, lines).
    pub fn rule_documents(&self) -> &[Document] {
        &self.rule_documents
    }

    /// The check paths the locations are matched against.
    pub fn check_paths(&self) -> &CheckPaths {
        &self.check_paths
    }

    /// Reads a finding's `location` (G7).
    pub fn resolve_location(&self, location: &str) -> Location {
        let text = location.trim();
        if text.is_empty() {
            return Location::unreadable("the location is empty".to_string());
        }
        if let Some((path_text, spec)) = split_lines(text) {
            let Some(found) = self.location_target(path_text) else {
                return Location::unreadable(format!(
                    "{path_text:?} before the line number is not a file or folder of the copies \
                     or a round document"
                ));
            };
            return match line_range(spec) {
                Ok(lines) => Location {
                    lines: Some(lines),
                    ..found
                },
                Err(reason) => Location::unreadable(reason),
            };
        }
        if let Some(found) = self.location_target(text) {
            return found;
        }
        let word = first_word(text);
        if word != text {
            if let Some(found) = self.location_target(word) {
                return found;
            }
        }
        Location::unreadable(no_target_reason(
            text,
            word,
            "a file or folder of the copies or a round document",
        ))
    }

    /// The target of a location path (prefix included), in the order of §3.
    fn location_target(&self, path_text: &str) -> Option<Location> {
        let (prefix, rest) = strip_prefix(path_text, LOCATION_PREFIXES);
        match prefix {
            Some("base/") => self.copy_target(&self.base, rest, true, Target::BaseCopy),
            Some(_) => self
                .copy_target(&self.head, rest, true, Target::HeadCopy)
                .or_else(|| self.document_target(rest)),
            None => self
                .copy_target(&self.head, rest, false, Target::HeadCopy)
                .or_else(|| self.copy_target(&self.base, rest, false, Target::BaseCopy))
                .or_else(|| self.document_target(rest)),
        }
    }

    /// A file or folder of a copy. Only a prefix alone (`head/`) names the top level; a folder
    /// may carry one trailing `/`; a file may not (`t.py/` is no file).
    fn copy_target(
        &self,
        copy: &Copy,
        path: &str,
        prefixed: bool,
        target: Target,
    ) -> Option<Location> {
        let found = if path.is_empty() {
            prefixed.then_some("")
        } else if let Some(folder) = path.strip_suffix('/') {
            (!folder.is_empty() && copy.is_folder(folder)).then_some(folder)
        } else {
            copy.has_file_or_folder(path).then_some(path)
        }?;
        Some(Location {
            path: found.to_string(),
            in_check_paths: self.check_paths.matches(found),
            unreadable: None,
            lines: None,
            target: Some(target),
        })
    }

    fn document_target(&self, path: &str) -> Option<Location> {
        match find_document(&self.documents, path) {
            DocMatch::One(doc) => Some(Location {
                path: doc.name.clone(),
                in_check_paths: doc.in_repo && self.check_paths.matches(&doc.name),
                unreadable: None,
                lines: None,
                target: Some(Target::RoundDocument),
            }),
            DocMatch::Several(_) | DocMatch::None => None,
        }
    }

    /// Confirms a finding's link (G8 for rule and contract, G9 for criterion). `head_file_lines`
    /// gives the line count of a head file, asked only when a contract link names a head file
    /// with lines (so the caller reads just that blob); `None` means it could not be read.
    pub fn resolve_link(
        &self,
        kind: LinkKind,
        link: &str,
        head_file_lines: &mut dyn FnMut(&str) -> Option<u64>,
    ) -> LinkResult {
        let outcome = match kind {
            LinkKind::None => Err("link_kind is none".to_string()),
            LinkKind::Criterion => self.confirm_criterion(link),
            LinkKind::Rule | LinkKind::Contract => {
                self.confirm_document_link(kind, link, head_file_lines)
            }
        };
        match outcome {
            Ok(Confirmed {
                target,
                lines,
                reason,
            }) => LinkResult {
                confirmed: true,
                kind,
                link: link.to_string(),
                claimed_kind: kind,
                claimed_link: link.to_string(),
                target: Some(target),
                lines,
                reason,
            },
            Err(reason) => LinkResult {
                confirmed: false,
                kind: LinkKind::None,
                link: String::new(),
                claimed_kind: kind,
                claimed_link: link.to_string(),
                target: None,
                lines: None,
                reason,
            },
        }
    }

    fn confirm_criterion(&self, link: &str) -> Result<Confirmed, String> {
        let Some(known) = &self.criteria_ids else {
            return Err("no criteria document was given (--criteria)".to_string());
        };
        let ids = criterion_ids(link);
        if ids.is_empty() {
            return Err("the link has no criterion id (AC-<digits>)".to_string());
        }
        let missing: Vec<&str> = ids
            .iter()
            .filter(|id| !known.contains(*id))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "not in the criteria document: {}",
                missing.join(", ")
            ));
        }
        let joined = ids.join(",");
        Ok(Confirmed {
            reason: format!("the criteria document has {joined}"),
            target: joined,
            lines: None,
        })
    }

    fn confirm_document_link(
        &self,
        kind: LinkKind,
        link: &str,
        head_file_lines: &mut dyn FnMut(&str) -> Option<u64>,
    ) -> Result<Confirmed, String> {
        let text = link.trim();
        if text.is_empty() {
            return Err("the link is empty".to_string());
        }
        let (target, spec) = if let Some((path_text, spec)) = split_lines(text) {
            let target = self
                .link_target(kind, path_text)
                .map_err(|reason| format!("{path_text:?} before the line number: {reason}"))?;
            (target, Some(spec))
        } else {
            match self.link_target(kind, text) {
                Ok(target) => (target, None),
                Err(whole_reason) => {
                    let word = first_word(text);
                    if word == text {
                        return Err(with_grammar_hint(format!("{text:?}: {whole_reason}"), text));
                    }
                    let target = self.link_target(kind, word).map_err(|reason| {
                        with_grammar_hint(
                            format!("{text:?} is no target and neither is its first word {word:?}: {reason}"),
                            word,
                        )
                    })?;
                    (target, None)
                }
            }
        };
        let (name, what) = match &target {
            LinkTarget::Document(doc) => (doc.name.clone(), "rule document"),
            LinkTarget::HeadFile(path) => (path.to_string(), "head file"),
        };
        let Some(spec) = spec else {
            return Ok(Confirmed {
                reason: format!("{what} {name}"),
                target: name,
                lines: None,
            });
        };
        let (front, back) = line_range(spec)?;
        let count = match &target {
            LinkTarget::Document(doc) => doc.lines,
            LinkTarget::HeadFile(path) => head_file_lines(path)
                .ok_or_else(|| format!("the head file {path} could not be read"))?,
        };
        if back > count {
            return Err(format!(
                "line {back} is past the end of the {what} {name} ({count} lines)"
            ));
        }
        Ok(Confirmed {
            reason: format!("{what} {name}, lines {front}-{back} of {count}"),
            target: name,
            lines: Some((front, back)),
        })
    }

    /// The target of a rule/contract link path: rule documents first, then (contract only) a
    /// regular file of the head commit.
    fn link_target<'a>(
        &'a self,
        kind: LinkKind,
        path_text: &'a str,
    ) -> Result<LinkTarget<'a>, String> {
        let (_, path) = strip_prefix(path_text, LINK_PREFIXES);
        let overlap = match find_document(&self.rule_documents, path) {
            DocMatch::One(doc) => return Ok(LinkTarget::Document(doc)),
            DocMatch::Several(n) => Some(n),
            DocMatch::None => None,
        };
        let no_rule = match overlap {
            Some(n) => format!("{n} rule documents are named {path:?}"),
            None => format!("no rule document is named {path:?}"),
        };
        if kind == LinkKind::Rule {
            return Err(no_rule);
        }
        match self.head.entry(path) {
            Some(entry) if entry.is_regular_file() => Ok(LinkTarget::HeadFile(path)),
            Some(entry) => Err(format!(
                "{no_rule}, and {path:?} is a {} in the head commit, not a regular file",
                entry.as_str()
            )),
            None if self.head.is_folder(path) => Err(format!(
                "{no_rule}, and {path:?} is a folder in the head commit"
            )),
            None if self.base.has_file_or_folder(path) => Err(format!(
                "{no_rule}, and {path:?} is only in the base commit"
            )),
            None => Err(format!(
                "{no_rule} and the head commit has no file {path:?}"
            )),
        }
    }
}

fn no_target_reason(text: &str, word: &str, what: &str) -> String {
    let reason = if word == text {
        format!("{text:?} is not {what}")
    } else {
        format!("neither {text:?} nor its first word {word:?} is {what}")
    };
    with_grammar_hint(reason, word)
}

/// Adds "outside the grammar" when a line number is followed by something other than an end.
fn with_grammar_hint(reason: String, text: &str) -> String {
    if has_bad_line_end(text) {
        format!(
            "{reason}; outside the grammar: a line number may be followed only by whitespace, \
             \",\" or \";\""
        )
    } else {
        reason
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Resolver {
        let head: Copy = [
            ("app/main.go", EntryKind::Blob),
            ("checks/t.py", EntryKind::Blob),
            ("checks/my test.py", EntryKind::Blob),
            ("base/checks/t.py", EntryKind::Blob),
            ("head/x.go", EntryKind::Blob),
            ("AGENTS.md", EntryKind::Blob),
            ("contracts/x.md", EntryKind::Blob),
            ("contracts/link.md", EntryKind::Symlink),
            ("vendor/lib", EntryKind::Submodule),
            ("tools/run.sh", EntryKind::Executable),
            ("a:1/x", EntryKind::Blob),
        ]
        .into_iter()
        .collect();
        let base: Copy = [
            ("old.go", EntryKind::Blob),
            ("checks/t.py", EntryKind::Blob),
        ]
        .into_iter()
        .collect();
        Resolver::new(head, base, CheckPaths::new(["checks/**"]).unwrap())
            .with_rule_document(Document::new("/r/AGENTS.md", Some("AGENTS.md"), b"a\nb\n"))
            .with_document(Document::new(
                "/r/docs/specs/x/PLAN.md",
                Some("docs/specs/x/PLAN.md"),
                b"plan\n",
            ))
            .with_criteria(
                Document::new("/tmp/c/criteria.md", None, b"x"),
                "AC-1 AC-02",
            )
    }

    fn loc(r: &Resolver, text: &str) -> (String, bool, bool, Option<(u64, u64)>) {
        let l = r.resolve_location(text);
        (l.path, l.in_check_paths, l.unreadable.is_some(), l.lines)
    }

    #[test]
    fn split_lines_grammar() {
        fn s(t: &str) -> Option<(&str, &str, Option<&str>)> {
            split_lines(t).map(|(p, l)| (p, l.front, l.back))
        }
        assert_eq!(s("a:10"), Some(("a", "10", None)));
        assert_eq!(s("a:10-20"), Some(("a", "10", Some("20"))));
        assert_eq!(s("a:10–20"), Some(("a", "10", Some("20"))));
        assert_eq!(s("a:10—20"), None, "an em dash is no dash");
        assert_eq!(s("a:10:5"), Some(("a:10", "5", None)));
        assert_eq!(s("a:10."), None);
        assert_eq!(s("a:10-"), None);
        assert_eq!(s("a:10-x, b:3"), Some(("a:10-x, b", "3", None)));
        assert_eq!(s("a b:1;x"), Some(("a b", "1", None)));
        assert_eq!(
            s("a:1\u{3000}x"),
            Some(("a", "1", None)),
            "ideographic space ends"
        );
        assert_eq!(
            s("a:1\u{a0}x"),
            Some(("a", "1", None)),
            "no-break space ends"
        );
        assert_eq!(s("a:١"), None, "line numbers are ASCII digits");
        assert_eq!(s(":3"), Some(("", "3", None)));
    }

    #[test]
    fn prefixes_are_taken_once() {
        assert_eq!(
            strip_prefix("head/base/x", LOCATION_PREFIXES),
            (Some("head/"), "base/x")
        );
        assert_eq!(
            strip_prefix("head/head/x", LOCATION_PREFIXES),
            (Some("head/"), "head/x")
        );
        assert_eq!(
            strip_prefix("./head/x", LOCATION_PREFIXES),
            (Some("./"), "head/x")
        );
        assert_eq!(strip_prefix("base/x", LINK_PREFIXES), (None, "base/x"));
        assert_eq!(
            strip_prefix("heads/x", LOCATION_PREFIXES),
            (None, "heads/x")
        );
    }

    #[test]
    fn locations() {
        let r = fixture();
        assert_eq!(
            loc(&r, "  head/checks/t.py:3  "),
            ("checks/t.py".into(), true, false, Some((3, 3)))
        );
        assert_eq!(
            loc(&r, "checks/t.py"),
            ("checks/t.py".into(), true, false, None)
        );
        assert_eq!(
            loc(&r, "base/checks/t.py:2"),
            ("checks/t.py".into(), true, false, Some((2, 2)))
        );
        assert_eq!(loc(&r, "old.go"), ("old.go".into(), false, false, None));
        assert!(loc(&r, "head/old.go").2, "head/ does not look in base");
        assert!(loc(&r, "base/app/main.go").2, "base/ looks only in base");
        assert_eq!(loc(&r, "head/").0, "");
        assert!(!loc(&r, "head/").2);
        assert!(!loc(&r, "./").2);
        assert!(!loc(&r, "base/").2);
        assert!(loc(&r, "").2);
        assert!(loc(&r, ":3").2, "no prefix and no path");
        assert_eq!(loc(&r, "checks/").0, "checks");
        assert!(loc(&r, "checks/t.py/").2, "a file takes no trailing slash");
        assert!(loc(&r, "vendor/lib").2, "a submodule is not part of a copy");
        assert!(
            loc(&r, "vendor").2,
            "nor is the folder holding only a submodule"
        );
        assert_eq!(
            loc(&r, "contracts/link.md").0,
            "contracts/link.md",
            "symlinks are files"
        );
        assert_eq!(loc(&r, "PLAN.md:1").0, "docs/specs/x/PLAN.md");
        let outside = r.resolve_location("/tmp/c/criteria.md:1");
        assert_eq!(
            (outside.path.as_str(), outside.in_check_paths),
            ("criteria.md", false)
        );
        assert_eq!(loc(&r, "criteria.md").0, "criteria.md");
        // A colon inside a path: `a:1/x` has no line place, so the whole reference is the path.
        assert_eq!(loc(&r, "a:1/x").0, "a:1/x");
        assert_eq!(loc(&r, "a:1/x:2").3, Some((2, 2)));
        assert!(loc(&r, "head/checks/t.py:99999999999999999999").2);
        let dotted = r.resolve_location("head/checks/t.py:10.");
        assert!(dotted.unreadable.unwrap().contains("outside the grammar"));
    }

    #[test]
    fn links() {
        let r = fixture();
        let mut lines = |path: &str| (path == "contracts/x.md").then_some(4);
        let mut link = |kind: LinkKind, text: &str| r.resolve_link(kind, text, &mut lines);
        let ok = link(LinkKind::Rule, "AGENTS.md:2");
        assert!(ok.confirmed);
        assert_eq!((ok.kind, ok.link.as_str()), (LinkKind::Rule, "AGENTS.md:2"));
        let no = link(LinkKind::Rule, "AGENTS.md:3");
        assert!(!no.confirmed);
        assert_eq!((no.kind, no.link.as_str()), (LinkKind::None, ""));
        assert_eq!(
            (no.claimed_kind, no.claimed_link.as_str()),
            (LinkKind::Rule, "AGENTS.md:3")
        );
        assert!(link(LinkKind::Contract, "contracts/x.md:1-4").confirmed);
        assert!(!link(LinkKind::Contract, "contracts/x.md:1-5").confirmed);
        assert!(
            link(LinkKind::Contract, "tools/run.sh").confirmed,
            "100755 is regular"
        );
        assert!(!link(LinkKind::Contract, "contracts/link.md").confirmed);
        assert!(!link(LinkKind::Contract, "vendor/lib").confirmed);
        assert!(!link(LinkKind::Contract, "contracts").confirmed);
        assert!(!link(LinkKind::Contract, "old.go").confirmed);
        assert!(
            !link(LinkKind::Rule, "contracts/x.md").confirmed,
            "rule: rule documents only"
        );
        assert!(
            link(LinkKind::Rule, "/r/AGENTS.md:1").confirmed,
            "real absolute path"
        );
        assert!(link(LinkKind::Criterion, "AC-1").confirmed);
        assert!(link(LinkKind::Criterion, "AC-02 and AC-1").confirmed);
        assert!(
            !link(LinkKind::Criterion, "AC-2").confirmed,
            "AC-02 is not AC-2"
        );
        assert!(!link(LinkKind::Criterion, "AC-1,AC-3").confirmed);
        assert!(!link(LinkKind::Criterion, "criterion one").confirmed);
        assert!(!link(LinkKind::None, "AGENTS.md").confirmed);
        let none = Resolver::default().resolve_link(LinkKind::Criterion, "AC-1", &mut |_| None);
        assert!(!none.confirmed, "without --criteria nothing is confirmed");
    }

    #[test]
    fn criterion_id_boundaries() {
        assert_eq!(criterion_ids("AC-1,AC-2"), ["AC-1", "AC-2"]);
        assert_eq!(
            criterion_ids("(AC-12) AC-12 xAC-3 AC-4b AC-5_ AC- ac-6"),
            ["AC-12", "AC-5"]
        );
        assert_eq!(criterion_ids("éAC-7é AC-01"), ["AC-7", "AC-01"]);
        assert_eq!(criterion_ids("AC-1-2 AAC-9 AC-AC-8"), ["AC-1", "AC-8"]);
        assert!(criterion_ids("").is_empty());
    }

    #[test]
    fn copies_and_lines() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"\n\n"), 2);
        let copy: Copy = [("a/b/c", EntryKind::Blob), ("ab", EntryKind::Blob)]
            .into_iter()
            .collect();
        assert!(copy.is_folder("a") && copy.is_folder("a/b") && !copy.is_folder("a/b/c"));
        assert!(!copy.is_folder("ab") && !copy.has_file_or_folder("a/"));
        assert_eq!("100755".parse::<EntryKind>(), Ok(EntryKind::Executable));
        assert!("tree".parse::<EntryKind>().is_err());
        assert_eq!(Document::new("/x/y/z.md", None, b"").name(), "z.md");
    }
}
