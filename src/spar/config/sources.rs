//! Where the configuration comes from (G16): the five user sources in order and what a path
//! turns out to be. A missing file, a broken link or a link loop passes to the next source;
//! anything else that is not a regular file is a configuration error at line 1.

use super::*;

/// What a path turned out to be.
pub(super) enum Probe {
    /// Missing, a broken symbolic link or a symbolic-link loop: the next source (G16).
    Absent(String),
    /// A regular file (after following symbolic links).
    File,
}

/// Looks at `path` the way G16 says: absent, a regular file, or (`Err`) a problem that is a
/// configuration error.
pub(super) fn probe(path: &Path) -> std::result::Result<Probe, String> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(Probe::File),
        Ok(meta) => Err(format!(
            "is not a regular file but {}",
            describe_file_type(&meta.file_type())
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let reason = if fs::symlink_metadata(path).is_ok() {
                "broken symbolic link"
            } else {
                "does not exist"
            };
            Ok(Probe::Absent(reason.to_owned()))
        }
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            Ok(Probe::Absent("symbolic link loop".to_owned()))
        }
        Err(e) => Err(format!("cannot be examined: {e}")),
    }
}

pub(super) fn describe_file_type(t: &fs::FileType) -> &'static str {
    if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "a special file"
    }
}

/// Finds the user source that decides: the first that exists (G16, G18).
pub(super) fn find_user_source(
    env: &Env,
    skipped: &mut Vec<Skipped>,
) -> Result<Option<(Source, PathBuf)>> {
    let xdg = env.xdg_config_home.as_ref().map(PathBuf::from);
    let home = env.home.as_ref().map(PathBuf::from);
    let candidates: [(Source, std::result::Result<PathBuf, &str>); 5] = [
        (
            Source::SparConfig,
            env.spar_config
                .as_ref()
                .map(PathBuf::from)
                .ok_or("SPAR_CONFIG is unset or empty"),
        ),
        (
            Source::XdgToml,
            under(&xdg, "XDG_CONFIG_HOME", "jaekit/spar.toml"),
        ),
        (
            Source::HomeToml,
            under(&home, "HOME", ".config/jaekit/spar.toml"),
        ),
        (
            Source::CleanReviewXdg,
            under(&xdg, "XDG_CONFIG_HOME", "clean-review/config.json"),
        ),
        (
            Source::CleanReviewHome,
            under(&home, "HOME", ".config/clean-review/config.json"),
        ),
    ];
    for (source, path) in candidates {
        let path = match path {
            Ok(p) => p,
            Err(reason) => {
                skipped.push(Skipped {
                    source,
                    path: None,
                    reason: reason.to_owned(),
                });
                continue;
            }
        };
        match probe(&path) {
            Ok(Probe::File) => return Ok(Some((source, path))),
            Ok(Probe::Absent(reason)) => skipped.push(Skipped {
                source,
                path: Some(path),
                reason,
            }),
            Err(problem) => return Err(file_error(&path, FileKind::User, &problem)),
        }
    }
    Ok(None)
}

/// `dir/rest`, or why there is no such path: the variable is unset, or (for
/// `XDG_CONFIG_HOME`, whose specification says to ignore such a value) not absolute.
pub(super) fn under<'a>(
    dir: &Option<PathBuf>,
    var: &'a str,
    rest: &str,
) -> std::result::Result<PathBuf, &'a str> {
    match dir {
        None if var == "HOME" => Err("HOME is unset or empty"),
        None => Err("XDG_CONFIG_HOME is unset or empty"),
        Some(d) if var == "XDG_CONFIG_HOME" && d.is_relative() => {
            Err("XDG_CONFIG_HOME is not an absolute path")
        }
        Some(d) => Ok(d.join(rest)),
    }
}

/// Reads a configuration file that [`probe`] found; a failing read is a configuration error.
pub(super) fn read_config_file(path: &Path, kind: FileKind) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| file_error(path, kind, &format!("cannot be read: {e}")))
}

/// Which file a [`Doc`] is: decides the keys it takes and the hint of its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileKind {
    User,
    Project,
}

impl FileKind {
    pub(super) fn hint(self) -> &'static str {
        match self {
            FileKind::User => {
                "fix your spar user file (or point SPAR_CONFIG at another); `git spar config` shows what is applied"
            }
            FileKind::Project => {
                "fix .jaekit/spar.toml in the work tree; it takes check_paths, rules, angles and [caps]"
            }
        }
    }
}

/// A configuration error about a whole file (line 1).
pub(super) fn file_error(path: &Path, kind: FileKind, problem: &str) -> Error {
    Error::refused(format!("{}:1: {problem}", path.display())).hint(kind.hint())
}
