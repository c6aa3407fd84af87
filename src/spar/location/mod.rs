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
use std::ops::Bound;
use std::str::FromStr;

use super::glob::CheckPaths;
pub use super::vocab::LinkKind;
use super::vocab::ParseValueError;

mod copies;
mod grammar;

pub use self::copies::*;
pub use self::grammar::*;

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
