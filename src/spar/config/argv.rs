//! Running a reviewer (G21, G14): its argv's placeholders and its executable. The lookup
//! itself is the crate's one rule ([`crate::process::find_on_path`]); this file gives its
//! outcomes the statuses and messages G14 asks for.

use super::*;
use crate::process::Lookup;

/// The values of a `command` reviewer's placeholders.
#[derive(Debug, Clone, Copy)]
pub struct Placeholders<'a> {
    /// `{prompt}`: the reviewer's input file.
    pub prompt: &'a OsStr,
    /// `{workspace}`: the round's workspace folder.
    pub workspace: &'a OsStr,
    /// `{schema}`: the result schema file.
    pub schema: &'a OsStr,
}

/// Replaces `{prompt}`, `{workspace}` and `{schema}` anywhere inside each argument, in one pass
/// (a replacement is never searched again); any other `{…}` stays as it is (G21).
pub fn substitute_argv(argv: &[String], values: &Placeholders<'_>) -> Vec<OsString> {
    argv.iter().map(|a| substitute(a, values)).collect()
}

pub(super) fn substitute(arg: &str, values: &Placeholders<'_>) -> OsString {
    crate::process::substitute_placeholders(
        arg,
        &[
            ("prompt", values.prompt),
            ("workspace", values.workspace),
            ("schema", values.schema),
        ],
    )
}

/// Finds a reviewer's executable (G14). A value containing `/` is that path: missing →
/// `unavailable`; not a regular file or not executable → `failed`. A bare name is looked up in
/// the absolute directories of `path_env` (empty and relative entries are skipped, so nothing
/// runs from the current directory); no executable regular file → `unavailable`, even when
/// non-executable files of that name exist.
pub fn find_executable(
    value: &str,
    path_env: Option<&OsStr>,
) -> std::result::Result<PathBuf, (Status, String)> {
    if value.contains('/') {
        let path = PathBuf::from(value);
        return match fs::metadata(&path) {
            Ok(meta) if !meta.is_file() => Err((
                Status::Failed,
                format!(
                    "executable {} is not a regular file but {}",
                    quote(value),
                    describe_file_type(&meta.file_type())
                ),
            )),
            Ok(_) if !crate::process::is_executable(&path) => Err((
                Status::Failed,
                format!("executable {} is not executable", quote(value)),
            )),
            Ok(_) => Ok(path),
            Err(e)
                if e.kind() == io::ErrorKind::NotFound
                    || matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) =>
            {
                Err((
                    Status::Unavailable,
                    format!("executable {} does not exist", quote(value)),
                ))
            }
            Err(e) => Err((
                Status::Failed,
                format!("executable {} cannot be examined: {e}", quote(value)),
            )),
        };
    }
    match crate::process::find_on_path(value, path_env) {
        Lookup::Found(path) => Ok(path),
        lookup => {
            let detail = match lookup {
                Lookup::NotExecutable(p) => format!(" ({} is not executable)", p.display()),
                _ => String::new(),
            };
            Err((
                Status::Unavailable,
                format!("{} was not found on PATH{detail}", quote(value)),
            ))
        }
    }
}
