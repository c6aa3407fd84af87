//! Every path a contract names stays inside the repository: relative to its top, no `..`, no
//! absolute path, nothing under `.git/`, and no symbolic link on the way that leaves it.
//!
//! Apart because two moments ask the same question: freezing refuses such a path with the
//! reason ([`super::schema`]'s problems), and every run of a frozen version asks again
//! ([`super::checks`]), because a version can be written with plain git and a tracked symbolic
//! link can change after the freeze. Without it a cloned repository's contract could read
//! `~/.netrc` or `.git/config` (a remote URL's token) into a note that `sync` pushes.

use std::path::{Component, Path};

use super::schema::{CheckSpec, RuntimeCommand};

/// Why `path` (as written in the contract) may not be used, judged from its text alone.
pub fn lexical_problem(path: &str) -> Option<String> {
    if path.trim().is_empty() {
        return Some("is empty".to_string());
    }
    if path.starts_with('/') || path.starts_with('\\') || path.starts_with('~') {
        return Some(format!(
            "{path:?} is not relative to the repository's top: a contract reads only files of the repository"
        ));
    }
    for part in path.split(['/', '\\']) {
        if part == ".." {
            return Some(format!(
                "{path:?} goes up with `..`: a contract reads only files of the repository"
            ));
        }
        if part.eq_ignore_ascii_case(".git") {
            return Some(format!(
                "{path:?} is inside `.git/`: git's own files (its configuration holds remote URLs and their tokens) are never read by a check"
            ));
        }
    }
    None
}

/// Why `path` may not be used in the repository at `root`: [`lexical_problem`], or a symbolic
/// link on the way (the path itself included) that points outside the repository or into
/// `.git/`. A path that does not exist (yet) is fine: the check says it is missing.
pub fn problem(root: &Path, path: &str) -> Option<String> {
    if let Some(p) = lexical_problem(path) {
        return Some(p);
    }
    let top = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut at = root.to_path_buf();
    for c in Path::new(path).components() {
        let Component::Normal(part) = c else { continue };
        at.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            return None;
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        let escapes = match std::fs::canonicalize(&at) {
            Ok(real) => !real.starts_with(&top) || real.starts_with(top.join(".git")),
            // A link to nothing (yet), or one that loops: where it points is judged from its
            // text, resolved next to the link.
            Err(_) => std::fs::read_link(&at).map_or(true, |t| {
                let Some(parent) = at.parent() else {
                    return true;
                };
                let mut to = parent.to_path_buf();
                for c in t.components() {
                    match c {
                        Component::Normal(p) => to.push(p),
                        Component::ParentDir => {
                            to.pop();
                        }
                        Component::CurDir => {}
                        Component::RootDir | Component::Prefix(_) => return true,
                    }
                }
                !to.starts_with(root) || to.starts_with(root.join(".git"))
            }),
        };
        if escapes {
            let shown = at.strip_prefix(root).unwrap_or(&at).display().to_string();
            return Some(format!(
                "{path:?} goes through the symbolic link {shown}, which leads outside the repository: a contract reads only files of the repository"
            ));
        }
    }
    None
}

/// The paths a check's spec names: (the spec's field, the path).
pub fn spec_paths(spec: &CheckSpec) -> Vec<(&'static str, &str)> {
    match spec {
        CheckSpec::FileExists(s) => vec![("path", s.path.as_str())],
        CheckSpec::CommandSuccess(s) => s.cwd.iter().map(|c| ("cwd", c.as_str())).collect(),
        CheckSpec::RegexInFile(s) => vec![("path", s.path.as_str())],
        CheckSpec::DbQuery(s) => s.path.iter().map(|p| ("path", p.as_str())).collect(),
        CheckSpec::ArtifactSchema(s) => {
            vec![("path", s.path.as_str()), ("schema", s.schema.as_str())]
        }
        CheckSpec::ManualChecklist(s) => vec![("path", s.path.as_str())],
        CheckSpec::HttpStatus(_) | CheckSpec::ProcessListening(_) => Vec::new(),
    }
}

/// The first path of `spec` that may not be used in `root`, as "<field> <why>".
pub fn spec_problem(spec: &CheckSpec, root: &Path) -> Option<String> {
    spec_paths(spec)
        .into_iter()
        .find_map(|(field, p)| problem(root, p).map(|why| format!("{field} {why}")))
}

/// A runtime command's `cwd`, judged the same way.
pub fn runtime_problem(cmd: &RuntimeCommand, root: &Path) -> Option<String> {
    cmd.cwd
        .as_deref()
        .and_then(|c| problem(root, c))
        .map(|why| format!("cwd {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_inside_pass() {
        for p in [
            "README.md",
            "docs/a.md",
            "./x",
            "a/.gitignore",
            ".github/x.yml",
        ] {
            assert_eq!(lexical_problem(p), None, "{p}");
        }
    }

    #[test]
    fn absolute_up_and_git_paths_are_refused() {
        for p in [
            "/etc/passwd",
            "../x",
            "a/../../x",
            "~/.netrc",
            ".git/config",
            "a/.git/HEAD",
            "",
        ] {
            assert!(lexical_problem(p).is_some(), "{p}");
        }
    }

    #[test]
    fn a_symlink_leaving_the_repository_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("in")).unwrap();
        std::fs::write(dir.path().join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("netrc")).unwrap();
        std::os::unix::fs::symlink("../secret", root.join("up")).unwrap();
        std::os::unix::fs::symlink(".git/config", root.join("cfg")).unwrap();
        std::os::unix::fs::symlink("in", root.join("inside")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("outdir")).unwrap();
        for p in ["netrc", "up", "cfg", "outdir/secret"] {
            assert!(problem(&root, p).is_some(), "{p}");
        }
        for p in ["inside", "inside/x", "missing/x", "in"] {
            assert_eq!(problem(&root, p), None, "{p}");
        }
    }
}
