//! Unit tests of the configuration, one file per part of the input contract; the scratch
//! folder [`Fx`] and the assertions they share are here.

mod clean_review;
mod executable;
mod project;
mod reviewers;
mod select;
mod show;
mod sources;
mod toml;

use super::*;
use crate::error::Kind;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{symlink, PermissionsExt};
use tempfile::TempDir;

/// A scratch folder with a work tree (`work/`), a home (`home/`) and an XDG config home
/// (`xdg/`).
struct Fx {
    dir: TempDir,
}

impl Fx {
    fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        for d in ["work", "home", "xdg"] {
            fs::create_dir(dir.path().join(d)).unwrap();
        }
        Fx { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    fn work(&self) -> PathBuf {
        self.root().join("work")
    }

    /// Writes `text` at `rel` under the scratch folder, creating folders.
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        self.write_bytes(rel, text.as_bytes())
    }

    fn write_bytes(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let path = self.root().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, bytes).unwrap();
        path
    }

    /// The environment with XDG_CONFIG_HOME and HOME set and SPAR_CONFIG unset.
    fn env(&self) -> Env {
        Env {
            spar_config: None,
            xdg_config_home: Some(self.root().join("xdg").into()),
            home: Some(self.root().join("home").into()),
            work_tree: self.work(),
        }
    }

    /// SPAR_CONFIG pointing at `path`.
    fn env_spar(&self, path: &Path) -> Env {
        Env {
            spar_config: Some(path.into()),
            ..self.env()
        }
    }

    /// A user file with `text` named by SPAR_CONFIG.
    fn user(&self, text: &str) -> (Env, PathBuf) {
        let path = self.write("user.toml", text);
        (self.env_spar(&path), path)
    }

    /// A project file with `text`, and no user file.
    fn project(&self, text: &str) -> (Env, PathBuf) {
        let path = self.write("work/.jaekit/spar.toml", text);
        (self.env(), path)
    }

    /// A clean-review file with `text` under XDG_CONFIG_HOME.
    fn clean_review(&self, text: &str) -> (Env, PathBuf) {
        let path = self.write("xdg/clean-review/config.json", text);
        (self.env(), path)
    }
}

fn load(env: &Env) -> Config {
    match Config::load(env) {
        Ok(cfg) => cfg,
        Err(e) => panic!("expected a configuration, got: {e}"),
    }
}

fn load_err(env: &Env) -> Error {
    match Config::load(env) {
        Ok(cfg) => panic!("expected a configuration error, got {cfg:#?}"),
        Err(e) => e,
    }
}

/// A configuration error: exit 65, `<file>:<line>: ` first, `needle` inside, and a hint.
fn assert_config_error(e: &Error, file: &Path, line: usize, needle: &str) {
    assert_eq!(e.kind, Kind::Refused, "{e}");
    assert_eq!(e.kind.exit_code(), 65);
    let prefix = format!("{}:{line}: ", file.display());
    assert!(
        e.message.starts_with(&prefix),
        "expected {prefix:?} at the start of {:?}",
        e.message
    );
    assert!(
        e.message.contains(needle),
        "expected {needle:?} in {:?}",
        e.message
    );
    assert!(e.hint.is_some(), "no hint: {e}");
}

/// The user file `text` must fail at `line` with `needle`.
fn user_error(text: &str, line: usize, needle: &str) {
    let fx = Fx::new();
    let (env, path) = fx.user(text);
    assert_config_error(&load_err(&env), &path, line, needle);
}

/// The project file `text` must fail at `line` with `needle`.
fn project_error(text: &str, line: usize, needle: &str) {
    let fx = Fx::new();
    let (env, path) = fx.project(text);
    assert_config_error(&load_err(&env), &path, line, needle);
}

fn names(cfg: &Config) -> Vec<&str> {
    cfg.reviewers
        .value
        .iter()
        .map(|r| r.name.value.as_str())
        .collect()
}

fn presets(cfg: &Config) -> Vec<Preset> {
    cfg.reviewers.value.iter().map(|r| r.preset.value).collect()
}

fn file_origin(path: &Path, line: usize) -> Origin {
    Origin::File {
        path: path.to_path_buf(),
        line,
    }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

fn set_mode(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}
