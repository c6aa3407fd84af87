//! What the location rules read: an index of a copy's entries (from git modes) and the round's
//! documents with their line counts.

use super::*;

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
    pub(super) fn in_copy(self) -> bool {
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
    pub(super) entries: BTreeMap<String, EntryKind>,
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
    pub(super) name: String,
    pub(super) abs_path: String,
    pub(super) in_repo: bool,
    pub(super) lines: u64,
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

pub(super) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A document found by name: exactly one, several (ambiguous), or none.
pub(super) enum DocMatch<'a> {
    One(&'a Document),
    Several(usize),
    None,
}

/// Finds a document the way §3/G8 say: by G26 name or real absolute path, else by file name
/// when exactly one document has that file name. The same document listed twice (e.g. as a rule
/// and as the criteria) counts once.
pub(super) fn find_document<'a>(documents: &'a [Document], path: &str) -> DocMatch<'a> {
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
