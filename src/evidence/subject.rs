//! What a proof is about, and what is not: the tool folders.
//!
//! `.rails/` (contract drafts, checklists), `.jaekit/` (spar's project file) and `.plans/`
//! (plans an agent keeps) belong to the tools, not to the work being proven. A change there
//! never makes a proof stale, never is the change that made a GREEN possible, and may sit
//! uncommitted beside a RED. One list, so staleness, GREEN and RED never disagree about it.

use crate::contract::schema::{Check, CheckKind};
use crate::contract::validate::glob_matcher;
use crate::error::Result;

/// The folders of the tools, each with its trailing `/`.
pub const TOOL_FOLDERS: &[&str] = &[".rails/", ".jaekit/", ".plans/"];

/// Whether `path` (a repository path) is the work's, not a tool folder's.
pub fn subject_path(path: &str) -> bool {
    !TOOL_FOLDERS.iter().any(|f| path.starts_with(f))
}

/// The kinds that read one file of the repository: for them, only a change inside the
/// criterion's declared `scope` can be what made GREEN possible.
fn reads_one_file(kind: CheckKind) -> bool {
    matches!(
        kind,
        CheckKind::RegexInFile | CheckKind::FileExists | CheckKind::ArtifactSchema
    )
}

/// Of the paths that differ between a RED's tree and a GREEN's, those that can have made the
/// GREEN possible: never a tool folder's, and for a kind that reads one file with a declared
/// `scope`, only those inside it.
pub fn counted_changes(check: &Check, changed: &[String]) -> Result<Vec<String>> {
    let scope = match (&check.scope, reads_one_file(check.kind)) {
        (Some(globs), true) => Some(glob_matcher(globs)?),
        _ => None,
    };
    Ok(changed
        .iter()
        .filter(|p| subject_path(p))
        .filter(|p| scope.as_ref().is_none_or(|s| s.is_match(p.as_str())))
        .cloned()
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_folders_are_never_the_subject() {
        for p in [".rails/x.json", ".jaekit/spar.toml", ".plans/plan.md"] {
            assert!(!subject_path(p), "{p}");
        }
        for p in ["src/a.rs", ".railsrc", "x/.rails/y", ".planset"] {
            assert!(subject_path(p), "{p}");
        }
    }
}
