//! Spar's configuration: where it comes from (G16), the user file and its reviewers (G17–G21),
//! the clean-review file (G18), the project file (G22–G24), the run-time selection of reviewers,
//! models and efforts (G25), and finding a reviewer's executable (G14).
//!
//! Every input out of form ends in the result its seed row names and is never read as another
//! value:
//!
//! - a **configuration error** is [`Error::refused`] (exit 65) whose message starts with
//!   `<file>:<line>: ` — the line of the offending key (for arrays: the key's line, naming the
//!   item); problems with a whole file (a folder, a FIFO, a failing `stat`, unreadable bytes)
//!   name line 1; problems of `--reviewers` start with `--reviewers: ` since no file is involved;
//! - a **refusal** is [`Error::refused`] (exit 65) without a file position;
//! - a **usage error** is [`Error::usage`] (exit 64).
//!
//! Sources, in order (G16): `SPAR_CONFIG`, `$XDG_CONFIG_HOME/jaekit/spar.toml`,
//! `~/.config/jaekit/spar.toml`, then the clean-review `config.json` (`$XDG_CONFIG_HOME` first,
//! then `~/.config`), used only when no TOML user file exists (G18). The first user source that
//! exists decides the reviewers and the top-level timeout; the project file `.jaekit/spar.toml` is
//! read from the work tree and decides check paths, rules, angles and caps. Nothing here reads
//! the process environment except [`Env::from_process`].
//!
//! Defaults when nothing says otherwise: reviewers `claude`, `codex`
//! ([`DEFAULT_REVIEWERS`]); timeout [`DEFAULT_TIMEOUT_SECONDS`] (900 s); caps plan 2,
//! plan_delta 2, code 3 (the spec's example values); all five angles; no check paths; no rules.
//!
//! One concept a file: [`sources`] (G16), [`toml_spans`] (the TOML reader with lines),
//! [`user_file`] (G17–G21), [`clean_review`] (G18), [`project_file`] (G22–G24), [`select`]
//! (G25), [`argv`] (placeholders and the executable, G14, G21), [`quote`] (Go's `%q`) and
//! [`show`] (`git spar config`). This file holds the types they share and [`Config::load`],
//! which puts them together.

mod argv;
mod clean_review;
mod project_file;
mod quote;
mod select;
mod show;
mod sources;
#[cfg(test)]
mod tests;
mod toml_spans;
mod user_file;

pub use argv::{find_executable, substitute_argv, Placeholders};
use clean_review::parse_clean_review;
use project_file::{parse_project, validate_glob};
pub use quote::{quote, quote_bytes};
pub use select::{select, select_os, SelectedReviewer};
use sources::describe_file_type;
use sources::{file_error, find_user_source, probe, read_config_file, FileKind, Probe};
use toml_spans::Doc;
use toml_spans::{line_at, Field, Val, V};
pub use user_file::check_name;
use user_file::{parse_user, value_problem};

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::spar::sha256_hex;
use crate::spar::vocab::string_enum;
pub use crate::spar::vocab::{Angle, Status};

/// The `schema` of [`Config::effective_json`].
pub const SCHEMA: &str = "spar-config/v1";
/// The timeout of a reviewer when neither its entry nor its file's top level gives one (G19).
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 900;
/// Rounds of the `plan` stage a series may count when the project file sets no cap (G22).
pub const DEFAULT_CAP_PLAN: u64 = 2;
/// Rounds of the `plan-delta` stage a series may count when the project file sets no cap (G22).
pub const DEFAULT_CAP_PLAN_DELTA: u64 = 2;
/// Rounds of the `code` stage a series may count when the project file sets no cap (G22).
pub const DEFAULT_CAP_CODE: u64 = 3;
/// The project file, relative to the work tree (G16).
pub const PROJECT_FILE: &str = ".jaekit/spar.toml";
/// The reviewers when no source names any.
pub const DEFAULT_REVIEWERS: [Preset; 2] = [Preset::Claude, Preset::Codex];

/// Names spar writes in a round folder; no reviewer may be called like one of them, or like one of
/// them with `.tmp` appended, ignoring case (G20).
const RESERVED_NAMES: [&str; 8] = [
    "round.json",
    "packet.md",
    "schema.json",
    "findings.json",
    "ledger.jsonl",
    "summary.md",
    "waivers.jsonl",
    "workspace",
];

/// Keys of the user file that a project file may not contain at any depth (G17), besides every
/// key starting with `allowed_`.
const USER_KEYS: [&str; 10] = [
    "reviewers",
    "preset",
    "argv",
    "binary",
    "model",
    "fallback_model",
    "effort",
    "allowed_models",
    "allowed_efforts",
    "timeout_seconds",
];

/// The keys a `[[reviewers]]` entry takes (G20, G21, G19).
const REVIEWER_KEYS: [&str; 10] = [
    "name",
    "preset",
    "argv",
    "binary",
    "model",
    "fallback_model",
    "effort",
    "allowed_models",
    "allowed_efforts",
    "timeout_seconds",
];

string_enum!(
    /// How a reviewer is run (G21).
    Preset, "preset", {
        /// Claude Code CLI.
        Claude = "claude",
        /// Codex CLI.
        Codex = "codex",
        /// Antigravity CLI.
        Agy = "agy",
        /// Nothing is run: the host records the result.
        Native = "native",
        /// A user-configured argv.
        Command = "command",
        /// A user-configured argv of a linter that writes SARIF (on stdout or to `{sarif}`).
        Sarif = "sarif",
    }
);

impl Preset {
    /// Whether `binary`, `model`, `fallback_model`, `allowed_models` and `--model` apply.
    pub fn takes_model(self) -> bool {
        matches!(self, Preset::Claude | Preset::Codex | Preset::Agy)
    }

    /// Whether `effort`, `allowed_efforts` and `--effort` apply (agy has no effort).
    pub fn takes_effort(self) -> bool {
        matches!(self, Preset::Claude | Preset::Codex)
    }
}

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Nothing set it.
    Default,
    /// A configuration file, at a 1-based line.
    File {
        /// The file as it was opened.
        path: PathBuf,
        /// The line of the key (or array element) that set it.
        line: usize,
    },
    /// A command-line option of this run (`--model`, `--effort`, `--check-path`, `--reviewers`).
    Flag(&'static str),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::Flag(flag) => f.write_str(flag),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced<T> {
    /// The applied value.
    pub value: T,
    /// Its origin.
    pub origin: Origin,
}

impl<T> Sourced<T> {
    /// A value nothing set.
    pub fn default_value(value: T) -> Self {
        Sourced {
            value,
            origin: Origin::Default,
        }
    }
}

/// One of the configuration sources of G16.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The file `SPAR_CONFIG` names.
    SparConfig,
    /// `$XDG_CONFIG_HOME/jaekit/spar.toml`.
    XdgToml,
    /// `~/.config/jaekit/spar.toml`.
    HomeToml,
    /// `$XDG_CONFIG_HOME/clean-review/config.json`.
    CleanReviewXdg,
    /// `~/.config/clean-review/config.json`.
    CleanReviewHome,
    /// `.jaekit/spar.toml` in the work tree.
    Project,
}

impl Source {
    /// How the source is named in `git spar config`.
    pub fn label(self) -> &'static str {
        match self {
            Source::SparConfig => "SPAR_CONFIG",
            Source::XdgToml => "$XDG_CONFIG_HOME/jaekit/spar.toml",
            Source::HomeToml => "~/.config/jaekit/spar.toml",
            Source::CleanReviewXdg => "$XDG_CONFIG_HOME/clean-review/config.json",
            Source::CleanReviewHome => "~/.config/clean-review/config.json",
            Source::Project => PROJECT_FILE,
        }
    }

    fn is_clean_review(self) -> bool {
        matches!(self, Source::CleanReviewXdg | Source::CleanReviewHome)
    }
}

/// A user source that was looked at and found absent (G16 `source.skipped`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Which source.
    pub source: Source,
    /// The path looked at, if the source has one (an unset variable has none).
    pub path: Option<PathBuf>,
    /// Why it was passed over.
    pub reason: String,
}

/// A configuration file that was read (G16 `config.files`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    /// Which source.
    pub source: Source,
    /// The path as opened.
    pub path: PathBuf,
    /// sha256 of the bytes read, lowercase hex.
    pub sha256: String,
}

/// The environment configuration is read from, passed explicitly so nothing else reads the
/// process environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Env {
    /// `SPAR_CONFIG`; `None` when unset or empty.
    pub spar_config: Option<OsString>,
    /// `XDG_CONFIG_HOME`; `None` when unset or empty.
    pub xdg_config_home: Option<OsString>,
    /// `HOME`; `None` when unset or empty.
    pub home: Option<OsString>,
    /// The work tree whose `.jaekit/spar.toml` is the project file and which rules must stay in.
    pub work_tree: PathBuf,
}

impl Env {
    /// The environment from variables looked up with `var`; an empty variable is absent (G16).
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>, work_tree: PathBuf) -> Self {
        let get = |name: &str| var(name).filter(|v| !v.is_empty());
        Env {
            spar_config: get("SPAR_CONFIG"),
            xdg_config_home: get("XDG_CONFIG_HOME"),
            home: get("HOME"),
            work_tree,
        }
    }

    /// The environment of this process.
    pub fn from_process(work_tree: PathBuf) -> Self {
        Env::from_vars(|name| std::env::var_os(name), work_tree)
    }
}

/// One configured reviewer (G20, G21, G19).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reviewer {
    /// Its name; defaults to the preset's name.
    pub name: Sourced<String>,
    /// How it runs.
    pub preset: Sourced<Preset>,
    /// `command` only: the argv template, never empty, no empty argument.
    pub argv: Option<Sourced<Vec<String>>>,
    /// claude/codex/agy: the executable; empty means "find the preset's name".
    pub binary: Option<Sourced<String>>,
    /// claude/codex/agy: the model, never empty.
    pub model: Option<Sourced<String>>,
    /// claude/codex/agy: the model to retry with after a quota refusal; empty means off.
    pub fallback_model: Option<Sourced<String>>,
    /// claude/codex: the effort; empty means off (not passed to the CLI).
    pub effort: Option<Sourced<String>>,
    /// claude/codex/agy: the values `--model` may pick.
    pub allowed_models: Option<Sourced<Vec<String>>>,
    /// claude/codex: the values `--effort` may pick.
    pub allowed_efforts: Option<Sourced<Vec<String>>>,
    /// The reviewer's own value, else its file's top level, else the default.
    pub timeout_seconds: Sourced<u64>,
}

impl Reviewer {
    /// A reviewer that is just a preset, named after it, with `timeout` (G19).
    fn bare(preset: Preset, preset_origin: Origin, timeout: Sourced<u64>) -> Self {
        Reviewer {
            name: Sourced {
                value: preset.as_str().to_owned(),
                origin: preset_origin.clone(),
            },
            preset: Sourced {
                value: preset,
                origin: preset_origin,
            },
            argv: None,
            binary: None,
            model: None,
            fallback_model: None,
            effort: None,
            allowed_models: None,
            allowed_efforts: None,
            timeout_seconds: timeout,
        }
    }

    /// What [`find_executable`] looks for: a non-empty `binary`, else the preset's name; for
    /// `command` the template's `argv[0]`; `None` for `native`, which runs nothing (G14).
    pub fn executable(&self) -> Option<&str> {
        match self.preset.value {
            Preset::Native => None,
            Preset::Command | Preset::Sarif => self
                .argv
                .as_ref()
                .and_then(|a| a.value.first())
                .map(String::as_str),
            preset => Some(
                self.binary
                    .as_ref()
                    .map(|b| b.value.as_str())
                    .filter(|b| !b.is_empty())
                    .unwrap_or(preset.as_str()),
            ),
        }
    }

    /// The fallback model, unless unset or turned off with an empty string.
    pub fn fallback_model(&self) -> Option<&str> {
        non_empty(self.fallback_model.as_ref())
    }

    /// The configured effort, unless unset or turned off with an empty string.
    pub fn effort(&self) -> Option<&str> {
        non_empty(self.effort.as_ref())
    }

    /// The applied values of this reviewer, without origins (the digest's input).
    fn applied(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), json!(self.name.value));
        m.insert("preset".into(), json!(self.preset.value.as_str()));
        m.insert("timeout_seconds".into(), json!(self.timeout_seconds.value));
        for (key, value) in self.optional_values() {
            m.insert(key.into(), value);
        }
        Value::Object(m)
    }

    /// Every value with where it came from.
    fn effective(&self) -> Value {
        let mut m = Map::new();
        m.insert(
            "name".into(),
            sourced_json(&self.name, json!(self.name.value)),
        );
        m.insert(
            "preset".into(),
            sourced_json(&self.preset, json!(self.preset.value.as_str())),
        );
        m.insert(
            "timeout_seconds".into(),
            sourced_json(&self.timeout_seconds, json!(self.timeout_seconds.value)),
        );
        for (key, origin, value) in self.optional_fields() {
            m.insert(
                key.into(),
                json!({ "value": value, "from": origin.to_string() }),
            );
        }
        Value::Object(m)
    }

    fn optional_values(&self) -> Vec<(&'static str, Value)> {
        self.optional_fields()
            .into_iter()
            .map(|(k, _, v)| (k, v))
            .collect()
    }

    fn optional_fields(&self) -> Vec<(&'static str, &Origin, Value)> {
        let mut out = Vec::new();
        let strings = [
            ("binary", &self.binary),
            ("model", &self.model),
            ("fallback_model", &self.fallback_model),
            ("effort", &self.effort),
        ];
        if let Some(a) = &self.argv {
            out.push(("argv", &a.origin, json!(a.value)));
        }
        for (key, field) in strings {
            if let Some(s) = field {
                out.push((key, &s.origin, json!(s.value)));
            }
        }
        for (key, field) in [
            ("allowed_models", &self.allowed_models),
            ("allowed_efforts", &self.allowed_efforts),
        ] {
            if let Some(list) = field {
                out.push((key, &list.origin, json!(list.value)));
            }
        }
        out
    }
}

fn non_empty(s: Option<&Sourced<String>>) -> Option<&str> {
    s.map(|s| s.value.as_str()).filter(|s| !s.is_empty())
}

/// A rule document of the project file (G23).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleDoc {
    /// Its name: the repository-relative path as written, with `.` segments, repeated slashes
    /// and `..` resolved lexically.
    pub name: String,
    /// The file it resolves to (symbolic links followed), inside the work tree.
    pub path: PathBuf,
}

/// How many counted rounds each stage may have in a series (G22).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caps {
    /// `plan`.
    pub plan: Sourced<u64>,
    /// `plan-delta` (`plan_delta` in the file).
    pub plan_delta: Sourced<u64>,
    /// `code`.
    pub code: Sourced<u64>,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            plan: Sourced::default_value(DEFAULT_CAP_PLAN),
            plan_delta: Sourced::default_value(DEFAULT_CAP_PLAN_DELTA),
            code: Sourced::default_value(DEFAULT_CAP_CODE),
        }
    }
}

/// The applied configuration of one run, with where each value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The user source that decided the reviewers and the top-level timeout, if any.
    pub user_source: Option<(Source, PathBuf)>,
    /// The deciding file's top-level timeout, else the default (G19): the timeout of every
    /// reviewer without its own, including presets picked by `--reviewers`.
    pub timeout_seconds: Sourced<u64>,
    /// The configured reviewers, in order; the origin is where the list came from.
    pub reviewers: Sourced<Vec<Reviewer>>,
    /// Check-path globs (G24): the project file's, then `--check-path`'s.
    pub check_paths: Vec<Sourced<String>>,
    /// Rule documents for every round (G23).
    pub rules: Vec<Sourced<RuleDoc>>,
    /// The requested angles, in the fixed order (G22).
    pub angles: Sourced<Vec<Angle>>,
    /// Rounds per stage (G22).
    pub caps: Caps,
    /// The project file's path (whether or not it exists).
    pub project_file: PathBuf,
    /// Whether the project file exists.
    pub project_present: bool,
    /// User sources passed over.
    pub skipped: Vec<Skipped>,
    /// The files read, with their sha256.
    pub files: Vec<FileRead>,
}

impl Config {
    /// Reads every source of `env` and validates it (G16–G24). Any problem is a configuration
    /// error (exit 65, `<file>:<line>: …`).
    pub fn load(env: &Env) -> Result<Config> {
        let mut skipped = Vec::new();
        let mut files = Vec::new();
        let user_source = find_user_source(env, &mut skipped)?;
        let (timeout_seconds, reviewers) = match &user_source {
            None => {
                let timeout = Sourced::default_value(DEFAULT_TIMEOUT_SECONDS);
                let list = default_list(&timeout);
                (timeout, list)
            }
            Some((source, path)) => {
                let bytes = read_config_file(path, FileKind::User)?;
                files.push(FileRead {
                    source: *source,
                    path: path.clone(),
                    sha256: sha256_hex(&bytes),
                });
                if source.is_clean_review() {
                    let timeout = Sourced::default_value(DEFAULT_TIMEOUT_SECONDS);
                    let list = parse_clean_review(path, &bytes, &timeout)?;
                    (timeout, list)
                } else {
                    let doc = Doc::new(path, &bytes, FileKind::User)?;
                    let fields = doc.parse()?;
                    parse_user(&doc, fields)?
                }
            }
        };

        let project_file = env.work_tree.join(PROJECT_FILE);
        let mut cfg = Config {
            user_source,
            timeout_seconds,
            reviewers,
            check_paths: Vec::new(),
            rules: Vec::new(),
            angles: Sourced::default_value(Angle::ALL.to_vec()),
            caps: Caps::default(),
            project_file: project_file.clone(),
            project_present: false,
            skipped,
            files,
        };
        match probe(&project_file) {
            Ok(Probe::Absent(_)) => {}
            Ok(Probe::File) => {
                let bytes = read_config_file(&project_file, FileKind::Project)?;
                cfg.files.push(FileRead {
                    source: Source::Project,
                    path: project_file.clone(),
                    sha256: sha256_hex(&bytes),
                });
                let doc = Doc::new(&project_file, &bytes, FileKind::Project)?;
                let fields = doc.parse()?;
                parse_project(&doc, fields, &env.work_tree, &mut cfg)?;
                cfg.project_present = true;
            }
            Err(problem) => return Err(file_error(&project_file, FileKind::Project, &problem)),
        }
        Ok(cfg)
    }

    /// The configured reviewer named exactly `name`.
    pub fn reviewer(&self, name: &str) -> Option<&Reviewer> {
        self.reviewers.value.iter().find(|r| r.name.value == name)
    }

    /// Adds `--check-path` globs to this run's check paths (G24); a glob out of form is a
    /// refusal. They count in [`Config::digest`].
    pub fn add_check_paths(&mut self, extra: &[String]) -> Result<()> {
        for glob in extra {
            if let Err(why) = validate_glob(glob) {
                return Err(
                    Error::refused(format!("--check-path {}: {why}", quote(glob)))
                        .hint("give a repository-relative glob such as `checks/**`"),
                );
            }
        }
        self.check_paths.extend(extra.iter().map(|g| Sourced {
            value: g.clone(),
            origin: Origin::Flag("--check-path"),
        }));
        Ok(())
    }

    /// The applied values only, without origins, paths of sources or file digests: what
    /// [`Config::digest`] hashes (G16).
    pub fn applied_values(&self) -> Value {
        json!({
            "timeout_seconds": self.timeout_seconds.value,
            "reviewers": self.reviewers.value.iter().map(Reviewer::applied).collect::<Vec<_>>(),
            "check_paths": self.check_paths.iter().map(|c| &c.value).collect::<Vec<_>>(),
            "rules": self.rules.iter().map(|r| &r.value.name).collect::<Vec<_>>(),
            "angles": self.angles.value.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
            "caps": {
                "plan": self.caps.plan.value,
                "plan_delta": self.caps.plan_delta.value,
                "code": self.caps.code.value,
            },
        })
    }

    /// sha256 (lowercase hex) of the compact JSON of [`Config::applied_values`].
    pub fn digest(&self) -> String {
        sha256_hex(self.applied_values().to_string().as_bytes())
    }
}

/// The default reviewer list, each with `timeout` (G19).
fn default_list(timeout: &Sourced<u64>) -> Sourced<Vec<Reviewer>> {
    Sourced::default_value(
        DEFAULT_REVIEWERS
            .into_iter()
            .map(|p| Reviewer::bare(p, Origin::Default, timeout.clone()))
            .collect(),
    )
}

fn sourced_json<T>(s: &Sourced<T>, value: Value) -> Value {
    json!({ "value": value, "from": s.origin.to_string() })
}
