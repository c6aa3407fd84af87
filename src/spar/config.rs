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
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

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

/// The status a reviewer ends a round with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// The result was read and checked.
    Completed,
    /// The reviewer ran and failed, or said `could_not_review` (G3), or its executable is
    /// unusable (G14).
    Failed,
    /// The result broke the input contract (G1–G6).
    InvalidOutput,
    /// The reviewer used a tool outside its preset's list (G10, G11).
    ToolViolation,
    /// The reviewer could not be started or was refused (G13, G14).
    Unavailable,
    /// A native reviewer whose result is not recorded yet.
    Pending,
}

impl Status {
    /// The name recorded in `round.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::InvalidOutput => "invalid_output",
            Status::ToolViolation => "tool_violation",
            Status::Unavailable => "unavailable",
            Status::Pending => "pending",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a reviewer is run (G21).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Preset {
    /// Claude Code CLI.
    Claude,
    /// Codex CLI.
    Codex,
    /// Antigravity CLI.
    Agy,
    /// Nothing is run: the host records the result.
    Native,
    /// A user-configured argv.
    Command,
    /// A user-configured argv of a linter that writes SARIF (on stdout or to `{sarif}`).
    Sarif,
}

impl Preset {
    /// Every preset, in the seed's order.
    pub const ALL: [Preset; 6] = [
        Preset::Claude,
        Preset::Codex,
        Preset::Agy,
        Preset::Native,
        Preset::Command,
        Preset::Sarif,
    ];

    /// The preset's name in configuration and records.
    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Claude => "claude",
            Preset::Codex => "codex",
            Preset::Agy => "agy",
            Preset::Native => "native",
            Preset::Command => "command",
            Preset::Sarif => "sarif",
        }
    }

    /// The preset named exactly `name` (names are lowercase; no other spelling is one).
    pub fn parse(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// Whether `binary`, `model`, `fallback_model`, `allowed_models` and `--model` apply.
    pub fn takes_model(self) -> bool {
        matches!(self, Preset::Claude | Preset::Codex | Preset::Agy)
    }

    /// Whether `effort`, `allowed_efforts` and `--effort` apply (agy has no effort).
    pub fn takes_effort(self) -> bool {
        matches!(self, Preset::Claude | Preset::Codex)
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One of the five review angles, in their fixed order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Angle {
    /// Does the change do what it claims.
    Correctness,
    /// Does it break what worked.
    Regression,
    /// Do its checks prove anything.
    Checks,
    /// Does it keep the contract and rules.
    Contract,
    /// Does it open a hole.
    Security,
}

impl Angle {
    /// All five, in the fixed order.
    pub const ALL: [Angle; 5] = [
        Angle::Correctness,
        Angle::Regression,
        Angle::Checks,
        Angle::Contract,
        Angle::Security,
    ];

    /// The angle's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Angle::Correctness => "correctness",
            Angle::Regression => "regression",
            Angle::Checks => "checks",
            Angle::Contract => "contract",
            Angle::Security => "security",
        }
    }

    /// The angle named exactly `name`.
    pub fn parse(name: &str) -> Option<Angle> {
        Angle::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

impl fmt::Display for Angle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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

    /// The effective configuration for `git spar config --json`: every value with where it came
    /// from (`"<file>:<line>"`, `"default"` or the option), the sources, the files read with
    /// their sha256, and the digest of the applied values.
    pub fn effective_json(&self) -> Value {
        let user = match &self.user_source {
            Some((source, path)) => json!({
                "source": source.label(),
                "path": path.display().to_string(),
            }),
            None => Value::Null,
        };
        let skipped: Vec<Value> = self
            .skipped
            .iter()
            .map(|s| {
                json!({
                    "source": s.source.label(),
                    "path": s.path.as_ref().map(|p| p.display().to_string()),
                    "reason": s.reason,
                })
            })
            .collect();
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|f| {
                json!({
                    "source": f.source.label(),
                    "path": f.path.display().to_string(),
                    "sha256": f.sha256,
                })
            })
            .collect();
        json!({
            "schema": SCHEMA,
            "digest": self.digest(),
            "sources": {
                "user": user,
                "project": {
                    "path": self.project_file.display().to_string(),
                    "present": self.project_present,
                },
                "skipped": skipped,
            },
            "files": files,
            "timeout_seconds": sourced_json(&self.timeout_seconds, json!(self.timeout_seconds.value)),
            "reviewers": {
                "from": self.reviewers.origin.to_string(),
                "list": self.reviewers.value.iter().map(Reviewer::effective).collect::<Vec<_>>(),
            },
            "check_paths": self.check_paths.iter()
                .map(|c| sourced_json(c, json!(c.value)))
                .collect::<Vec<_>>(),
            "rules": self.rules.iter()
                .map(|r| json!({
                    "value": r.value.name,
                    "path": r.value.path.display().to_string(),
                    "from": r.origin.to_string(),
                }))
                .collect::<Vec<_>>(),
            "angles": sourced_json(
                &self.angles,
                json!(self.angles.value.iter().map(|a| a.as_str()).collect::<Vec<_>>()),
            ),
            "caps": {
                "plan": sourced_json(&self.caps.plan, json!(self.caps.plan.value)),
                "plan_delta": sourced_json(&self.caps.plan_delta, json!(self.caps.plan_delta.value)),
                "code": sourced_json(&self.caps.code, json!(self.caps.code.value)),
            },
        })
    }

    /// The effective configuration as text for `git spar config`: one value a line with its
    /// origin in parentheses.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let mut line = |s: String| {
            out.push_str(&s);
            out.push('\n');
        };
        line(format!("config digest: {}", self.digest()));
        match &self.user_source {
            Some((source, path)) => line(format!(
                "user file: {} ({})",
                path.display(),
                source.label()
            )),
            None => line("user file: none (defaults)".to_owned()),
        }
        for s in &self.skipped {
            let path = s
                .path
                .as_ref()
                .map(|p| format!(" {}", p.display()))
                .unwrap_or_default();
            line(format!(
                "  skipped {}{path}: {}",
                s.source.label(),
                s.reason
            ));
        }
        line(format!(
            "project file: {} ({})",
            self.project_file.display(),
            if self.project_present {
                "read"
            } else {
                "absent, defaults"
            }
        ));
        for f in &self.files {
            line(format!("read {} sha256 {}", f.path.display(), f.sha256));
        }
        line(format!(
            "timeout_seconds = {} ({})",
            self.timeout_seconds.value, self.timeout_seconds.origin
        ));
        line(format!("reviewers ({}):", self.reviewers.origin));
        for r in &self.reviewers.value {
            line(format!("  {} ({})", r.name.value, r.name.origin));
            line(format!(
                "    preset = {} ({})",
                r.preset.value, r.preset.origin
            ));
            line(format!(
                "    timeout_seconds = {} ({})",
                r.timeout_seconds.value, r.timeout_seconds.origin
            ));
            for (key, origin, value) in r.optional_fields() {
                line(format!("    {key} = {value} ({origin})"));
            }
        }
        if self.check_paths.is_empty() {
            line("check_paths: none (default)".to_owned());
        } else {
            line("check_paths:".to_owned());
            for c in &self.check_paths {
                line(format!("  {} ({})", c.value, c.origin));
            }
        }
        if self.rules.is_empty() {
            line("rules: none (default)".to_owned());
        } else {
            line("rules:".to_owned());
            for r in &self.rules {
                line(format!("  {} ({})", r.value.name, r.origin));
            }
        }
        let angles: Vec<&str> = self.angles.value.iter().map(|a| a.as_str()).collect();
        line(format!(
            "angles = {} ({})",
            angles.join(", "),
            self.angles.origin
        ));
        for (key, cap) in [
            ("plan", &self.caps.plan),
            ("plan_delta", &self.caps.plan_delta),
            ("code", &self.caps.code),
        ] {
            line(format!("caps.{key} = {} ({})", cap.value, cap.origin));
        }
        out
    }
}

fn sourced_json<T>(s: &Sourced<T>, value: Value) -> Value {
    json!({ "value": value, "from": s.origin.to_string() })
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

fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

// ---------------------------------------------------------------------------------------------
// Sources (G16)

/// What a path turned out to be.
enum Probe {
    /// Missing, a broken symbolic link or a symbolic-link loop: the next source (G16).
    Absent(String),
    /// A regular file (after following symbolic links).
    File,
}

/// Looks at `path` the way G16 says: absent, a regular file, or (`Err`) a problem that is a
/// configuration error.
fn probe(path: &Path) -> std::result::Result<Probe, String> {
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

fn describe_file_type(t: &fs::FileType) -> &'static str {
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
fn find_user_source(env: &Env, skipped: &mut Vec<Skipped>) -> Result<Option<(Source, PathBuf)>> {
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
fn under<'a>(
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
fn read_config_file(path: &Path, kind: FileKind) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| file_error(path, kind, &format!("cannot be read: {e}")))
}

/// Which file a [`Doc`] is: decides the keys it takes and the hint of its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileKind {
    User,
    Project,
}

impl FileKind {
    fn hint(self) -> &'static str {
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
fn file_error(path: &Path, kind: FileKind, problem: &str) -> Error {
    Error::refused(format!("{}:1: {problem}", path.display())).hint(kind.hint())
}

// ---------------------------------------------------------------------------------------------
// TOML with spans (G17)

// `toml::Spanned` is recognized by its deserializer through these names (serde_spanned 0.6 and
// 1.x use the same ones). Asking for them directly lets one visitor take a spanned value and an
// unspanned one (a date-time's marker key, a table `toml` gives no span), which `toml::Spanned`
// itself cannot. The tests check that spans arrive.
const SPANNED_NAME: &str = "$__serde_spanned_private_Spanned";
const SPANNED_START: &str = "$__serde_spanned_private_start";
const SPANNED_END: &str = "$__serde_spanned_private_end";
const SPANNED_VALUE: &str = "$__serde_spanned_private_value";
const SPANNED_FIELDS: &[&str] = &[SPANNED_START, SPANNED_END, SPANNED_VALUE];
/// The single key of the map `toml` presents a date-time as.
const DATETIME_FIELD: &str = "$__toml_private_datetime";

/// A TOML value as parsed, with the byte span `toml` reported for it.
#[derive(Debug)]
struct Node {
    span: Option<Range<usize>>,
    kind: NodeKind,
}

#[derive(Debug)]
enum NodeKind {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Datetime(String),
    Array(Vec<Node>),
    Table(Vec<(Key, Node)>),
}

/// A table key with its byte span.
#[derive(Debug)]
struct Key {
    name: String,
    span: Option<Range<usize>>,
}

/// The document root.
struct Root(Node);

impl<'de> serde::Deserialize<'de> for Root {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor { spanned: false }).map(Root)
    }
}

/// Deserializes a value asking for its span.
struct SpannedSeed;

impl<'de> DeserializeSeed<'de> for SpannedSeed {
    type Value = Node;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Node, D::Error> {
        d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, NodeVisitor { spanned: true })
    }
}

/// Deserializes the value inside a span wrapper.
struct PlainSeed;

impl<'de> DeserializeSeed<'de> for PlainSeed {
    type Value = Node;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor { spanned: false })
    }
}

/// Builds a [`Node`]; with `spanned`, a map whose first key is the span marker is the span
/// wrapper around the value.
struct NodeVisitor {
    spanned: bool,
}

impl NodeVisitor {
    fn node(kind: NodeKind) -> Node {
        Node { span: None, kind }
    }
}

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a TOML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<Node, E> {
        Ok(Self::node(NodeKind::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Node, E> {
        Ok(Self::node(NodeKind::Int(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Node, E> {
        i64::try_from(v)
            .map(|v| Self::node(NodeKind::Int(v)))
            .map_err(|_| E::custom("integer out of range"))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Node, E> {
        Ok(Self::node(NodeKind::Float(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Node, E> {
        Ok(Self::node(NodeKind::Str(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<Node, E> {
        Ok(Self::node(NodeKind::Str(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(SpannedSeed)? {
            items.push(item);
        }
        Ok(Self::node(NodeKind::Array(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Node, A::Error> {
        let Some(first) = map.next_key_seed(KeySeed)? else {
            return Ok(Self::node(NodeKind::Table(Vec::new())));
        };
        if first.span.is_none() && first.name == DATETIME_FIELD {
            let text: String = map.next_value()?;
            return Ok(Self::node(NodeKind::Datetime(text)));
        }
        if self.spanned && first.span.is_none() && first.name == SPANNED_START {
            let start: usize = map.next_value()?;
            let mut end = start;
            let mut value = None;
            while let Some(key) = map.next_key::<String>()? {
                match key.as_str() {
                    SPANNED_END => end = map.next_value()?,
                    SPANNED_VALUE => value = Some(map.next_value_seed(PlainSeed)?),
                    other => {
                        return Err(de::Error::custom(format!("unexpected span field {other}")))
                    }
                }
            }
            let mut node = value.ok_or_else(|| de::Error::custom("span without a value"))?;
            node.span = Some(start..end);
            return Ok(node);
        }
        let mut entries = vec![(first, map.next_value_seed(SpannedSeed)?)];
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value = map.next_value_seed(SpannedSeed)?;
            entries.push((key, value));
        }
        Ok(Self::node(NodeKind::Table(entries)))
    }
}

/// Deserializes a table key asking for its span.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Key, D::Error> {
        d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Key, E> {
        Ok(Key {
            name: v.to_owned(),
            span: None,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Key, A::Error> {
        let (mut start, mut end, mut name) = (None, None, None);
        while let Some(field) = map.next_key::<String>()? {
            match field.as_str() {
                SPANNED_START => start = Some(map.next_value::<usize>()?),
                SPANNED_END => end = Some(map.next_value::<usize>()?),
                SPANNED_VALUE => name = Some(map.next_value::<String>()?),
                other => return Err(de::Error::custom(format!("unexpected key field {other}"))),
            }
        }
        let name = name.ok_or_else(|| de::Error::custom("key without a name"))?;
        let span = start.zip(end).map(|(s, e)| s..e);
        Ok(Key { name, span })
    }
}

/// A TOML value with the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq)]
struct Val {
    line: usize,
    v: V,
}

#[derive(Debug, Clone, PartialEq)]
enum V {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Datetime(String),
    Array(Vec<Val>),
    Table(Vec<Field>),
}

/// A table entry with the 1-based line of its key.
#[derive(Debug, Clone, PartialEq)]
struct Field {
    key: String,
    line: usize,
    val: Val,
}

impl V {
    /// The value's type and text, for messages.
    fn describe(&self) -> String {
        match self {
            V::Str(s) => format!("the string {}", quote(s)),
            V::Int(i) => format!("the integer {i}"),
            V::Float(f) => format!("the float {f}"),
            V::Bool(b) => format!("the boolean {b}"),
            V::Datetime(d) => format!("the date-time {d}"),
            V::Array(_) => "an array".to_owned(),
            V::Table(_) => "a table".to_owned(),
        }
    }
}

/// One configuration file being read: its path, text and kind, for `<file>:<line>` errors.
struct Doc<'a> {
    path: &'a Path,
    src: &'a str,
    kind: FileKind,
}

impl<'a> Doc<'a> {
    /// The file as UTF-8 text; other bytes are a configuration error at their line.
    fn new(path: &'a Path, bytes: &'a [u8], kind: FileKind) -> Result<Self> {
        match std::str::from_utf8(bytes) {
            Ok(src) => Ok(Doc { path, src, kind }),
            Err(e) => {
                let line = line_at(bytes, e.valid_up_to());
                Err(
                    Error::refused(format!("{}:{line}: not valid UTF-8", path.display()))
                        .hint(kind.hint()),
                )
            }
        }
    }

    /// A configuration error at `line`.
    fn error(&self, line: usize, message: impl fmt::Display) -> Error {
        Error::refused(format!("{}:{line}: {message}", self.path.display())).hint(self.kind.hint())
    }

    fn origin(&self, line: usize) -> Origin {
        Origin::File {
            path: self.path.to_path_buf(),
            line,
        }
    }

    /// `value`, set at `line` of this file.
    fn at<T>(&self, line: usize, value: T) -> Sourced<T> {
        Sourced {
            value,
            origin: self.origin(line),
        }
    }

    fn line(&self, span: &Option<Range<usize>>) -> Option<usize> {
        span.as_ref().map(|s| line_at(self.src.as_bytes(), s.start))
    }

    /// Parses the document (TOML 1.0.0) into its top-level entries; a syntax error is a
    /// configuration error at its line (G17).
    fn parse(&self) -> Result<Vec<Field>> {
        let root: Root = toml::from_str(self.src).map_err(|e| {
            let line = self.line(&e.span()).unwrap_or(1);
            self.error(line, format!("TOML: {}", e.message().trim_end()))
        })?;
        match self.annotate(root.0, 1).v {
            V::Table(fields) => Ok(fields),
            other => Err(self.error(
                1,
                format!("the document is {}, not a table", other.describe()),
            )),
        }
    }

    /// Turns spans into lines; a value without a span takes `fallback` (its parent's line).
    fn annotate(&self, node: Node, fallback: usize) -> Val {
        let line = self.line(&node.span).unwrap_or(fallback);
        let v = match node.kind {
            NodeKind::Str(s) => V::Str(s),
            NodeKind::Int(i) => V::Int(i),
            NodeKind::Float(f) => V::Float(f),
            NodeKind::Bool(b) => V::Bool(b),
            NodeKind::Datetime(d) => V::Datetime(d),
            NodeKind::Array(items) => V::Array(
                items
                    .into_iter()
                    .map(|item| self.annotate(item, line))
                    .collect(),
            ),
            NodeKind::Table(entries) => V::Table(
                entries
                    .into_iter()
                    .map(|(key, value)| {
                        let val = self.annotate(value, line);
                        Field {
                            line: self.line(&key.span).unwrap_or(val.line),
                            key: key.name,
                            val,
                        }
                    })
                    .collect(),
            ),
        };
        Val { line, v }
    }

    /// `f`'s value as a string.
    fn string(&self, f: &Field, what: &str) -> Result<String> {
        match &f.val.v {
            V::Str(s) => Ok(s.clone()),
            other => Err(self.error(
                f.line,
                format!("{what} must be a string, not {}", other.describe()),
            )),
        }
    }

    /// `f`'s value as a positive integer (G19).
    fn positive(&self, f: &Field, what: &str) -> Result<Sourced<u64>> {
        match &f.val.v {
            V::Int(i) if *i > 0 => Ok(Sourced {
                value: i.unsigned_abs(),
                origin: self.origin(f.line),
            }),
            other => Err(self.error(
                f.line,
                format!(
                    "{what} must be a positive integer (seconds), not {}",
                    other.describe()
                ),
            )),
        }
    }

    /// `f`'s value as an array of strings; `item_problem` names what is wrong with an item.
    fn strings(
        &self,
        f: &Field,
        what: &str,
        item_problem: impl Fn(&str) -> Option<String>,
    ) -> Result<Vec<String>> {
        let V::Array(items) = &f.val.v else {
            return Err(self.error(
                f.line,
                format!(
                    "{what} must be an array of strings, not {}",
                    f.val.v.describe()
                ),
            ));
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match &item.v {
                V::Str(s) => {
                    if let Some(problem) = item_problem(s) {
                        return Err(self.error(
                            f.line,
                            format!("{what} item {} {}: {problem}", i + 1, quote(s)),
                        ));
                    }
                    out.push(s.clone());
                }
                other => {
                    return Err(self.error(
                        f.line,
                        format!(
                            "{what} item {} must be a string, not {}",
                            i + 1,
                            other.describe()
                        ),
                    ))
                }
            }
        }
        Ok(out)
    }
}

/// The 1-based line of byte `offset` in `src`.
fn line_at(src: &[u8], offset: usize) -> usize {
    let end = offset.min(src.len());
    src[..end].iter().filter(|&&b| b == b'\n').count() + 1
}

// ---------------------------------------------------------------------------------------------
// User file (G17, G19, G20, G21)

/// Reads the user TOML file's top level: `timeout_seconds` and `[[reviewers]]`.
fn parse_user(doc: &Doc, fields: Vec<Field>) -> Result<(Sourced<u64>, Sourced<Vec<Reviewer>>)> {
    let mut timeout = None;
    let mut reviewers = None;
    for f in fields {
        match f.key.as_str() {
            "timeout_seconds" => timeout = Some(doc.positive(&f, "timeout_seconds")?),
            "reviewers" => reviewers = Some(f),
            other => {
                return Err(doc.error(
                    f.line,
                    format!(
                        "unknown key {}; the user file takes timeout_seconds and [[reviewers]]",
                        quote(other)
                    ),
                ))
            }
        }
    }
    let timeout = timeout.unwrap_or_else(|| Sourced::default_value(DEFAULT_TIMEOUT_SECONDS));
    let Some(list) = reviewers else {
        return Ok((timeout.clone(), default_list(&timeout)));
    };
    let V::Array(entries) = &list.val.v else {
        return Err(doc.error(
            list.line,
            format!(
                "reviewers must be an array of tables ([[reviewers]]), not {}",
                list.val.v.describe()
            ),
        ));
    };
    let list_origin = doc.origin(list.line);
    if entries.is_empty() {
        // An empty list selects one native reviewer, as an empty clean-review list and an empty
        // --reviewers do (G18, G19, G25).
        let native = Reviewer::bare(Preset::Native, list_origin.clone(), timeout.clone());
        return Ok((
            timeout,
            Sourced {
                value: vec![native],
                origin: list_origin,
            },
        ));
    }
    let mut out: Vec<Reviewer> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let reviewer = parse_reviewer(doc, i + 1, entry, &timeout)?;
        let line = match &reviewer.name.origin {
            Origin::File { line, .. } => *line,
            _ => entry.line,
        };
        if let Some(earlier) = out
            .iter()
            .find(|r| r.name.value.eq_ignore_ascii_case(&reviewer.name.value))
        {
            return Err(doc.error(
                line,
                format!(
                    "reviewer name {} repeats {} ({}); names must differ ignoring case",
                    quote(&reviewer.name.value),
                    quote(&earlier.name.value),
                    earlier.name.origin
                ),
            ));
        }
        out.push(reviewer);
    }
    Ok((
        timeout,
        Sourced {
            value: out,
            origin: list_origin,
        },
    ))
}

/// Reads one `[[reviewers]]` entry (G20, G21, G19); `n` is its 1-based position.
fn parse_reviewer(doc: &Doc, n: usize, entry: &Val, top: &Sourced<u64>) -> Result<Reviewer> {
    let V::Table(fields) = &entry.v else {
        return Err(doc.error(
            entry.line,
            format!(
                "reviewers entry {n} must be a table, not {}",
                entry.v.describe()
            ),
        ));
    };
    let Some(preset_field) = fields.iter().find(|f| f.key == "preset") else {
        return Err(doc.error(
            entry.line,
            format!(
                "reviewers entry {n} has no preset; set preset to one of {}",
                preset_names()
            ),
        ));
    };
    let preset_name = doc.string(preset_field, "preset")?;
    let Some(preset) = Preset::parse(&preset_name) else {
        return Err(doc.error(
            preset_field.line,
            format!(
                "unknown preset {}; use one of {}",
                quote(&preset_name),
                preset_names()
            ),
        ));
    };
    let mut r = Reviewer::bare(preset, doc.origin(preset_field.line), top.clone());
    r.name.origin = Origin::Default;
    for f in fields {
        let key = f.key.as_str();
        let applies = match key {
            "argv" => matches!(preset, Preset::Command | Preset::Sarif),
            "binary" | "model" | "fallback_model" | "allowed_models" => preset.takes_model(),
            "effort" | "allowed_efforts" => preset.takes_effort(),
            _ => true,
        };
        if !REVIEWER_KEYS.contains(&key) {
            return Err(doc.error(
                f.line,
                format!(
                    "unknown key {} in reviewers entry {n}; an entry takes {}",
                    quote(key),
                    REVIEWER_KEYS.join(", ")
                ),
            ));
        }
        if !applies {
            return Err(doc.error(
                f.line,
                format!("{key} does not apply to preset {}", quote(preset.as_str())),
            ));
        }
        match key {
            "preset" => {}
            "name" => {
                let name = doc.string(f, "name")?;
                if let Err(why) = check_name(&name) {
                    return Err(doc.error(f.line, format!("name {}: {why}", quote(&name))));
                }
                r.name = doc.at(f.line, name);
            }
            "timeout_seconds" => r.timeout_seconds = doc.positive(f, "timeout_seconds")?,
            "argv" => {
                let argv =
                    doc.strings(f, "argv", |s| s.is_empty().then(|| "is empty".to_owned()))?;
                if argv.is_empty() {
                    return Err(doc.error(f.line, "argv must not be empty"));
                }
                r.argv = Some(doc.at(f.line, argv));
            }
            "binary" => r.binary = Some(doc.at(f.line, doc.string(f, key)?)),
            "model" => {
                let model = doc.string(f, key)?;
                if model.is_empty() {
                    return Err(doc.error(
                        f.line,
                        "model must not be empty; leave the key out to use the CLI's default",
                    ));
                }
                r.model = Some(doc.at(f.line, model));
            }
            "fallback_model" => r.fallback_model = Some(doc.at(f.line, doc.string(f, key)?)),
            "effort" => r.effort = Some(doc.at(f.line, doc.string(f, key)?)),
            "allowed_models" | "allowed_efforts" => {
                let list =
                    doc.strings(f, key, |s| value_problem(s.as_bytes()).map(str::to_owned))?;
                if list.is_empty() {
                    return Err(doc.error(f.line, format!("{key} must not be empty")));
                }
                if key == "allowed_models" {
                    r.allowed_models = Some(doc.at(f.line, list));
                } else {
                    r.allowed_efforts = Some(doc.at(f.line, list));
                }
            }
            _ => {}
        }
    }
    if matches!(preset, Preset::Command | Preset::Sarif) && r.argv.is_none() {
        return Err(doc.error(
            preset_field.line,
            format!("reviewers entry {n}: preset \"{preset}\" needs argv"),
        ));
    }
    for (value, list, what) in [
        (&r.model, &r.allowed_models, "model"),
        (&r.effort, &r.allowed_efforts, "effort"),
    ] {
        if let (Some(value), Some(list)) = (value, list) {
            let line = match &list.origin {
                Origin::File { line, .. } => *line,
                _ => entry.line,
            };
            return Err(doc.error(
                line,
                format!(
                    "allowed_{what}s cannot be combined with {what} ({}) in one entry: a fixed {what} leaves nothing for --{what} to pick",
                    value.origin
                ),
            ));
        }
    }
    Ok(r)
}

fn preset_names() -> String {
    Preset::ALL.map(Preset::as_str).join(", ")
}

/// Checks a reviewer name against G20: the syntax and the reserved names. Duplicates are checked
/// where the list is known.
pub fn check_name(name: &str) -> std::result::Result<(), String> {
    let bytes = name.as_bytes();
    let syntax_ok = matches!(bytes.first(), Some(b) if b.is_ascii_alphanumeric())
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if !syntax_ok {
        return Err(
            "a reviewer name is 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit"
                .to_owned(),
        );
    }
    let lower = name.to_ascii_lowercase();
    let base = lower.strip_suffix(".tmp").unwrap_or(&lower);
    if RESERVED_NAMES.contains(&base) {
        return Err(format!(
            "the name is reserved for spar's own files in a round folder ({})",
            RESERVED_NAMES.join(", ")
        ));
    }
    Ok(())
}

/// What is wrong with a `--model` / `--effort` value or an `allowed_*` item (G25), if anything.
fn value_problem(value: &[u8]) -> Option<&'static str> {
    let Ok(text) = std::str::from_utf8(value) else {
        return Some("is not valid UTF-8");
    };
    if text.is_empty() {
        Some("is empty")
    } else if text.starts_with('-') {
        Some("starts with -")
    } else if text.chars().any(char::is_whitespace) {
        Some("contains whitespace")
    } else if text.chars().any(char::is_control) {
        Some("contains a control character")
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------------
// clean-review config.json (G18)

/// Reads the clean-review file: a JSON object whose optional `reviewers` is an array of strings.
fn parse_clean_review(
    path: &Path,
    bytes: &[u8],
    timeout: &Sourced<u64>,
) -> Result<Sourced<Vec<Reviewer>>> {
    let err = |line: usize, message: String| {
        Error::refused(format!("{}:{line}: {message}", path.display())).hint(
            "fix the clean-review config.json, or write a spar user file (~/.config/jaekit/spar.toml), which takes precedence",
        )
    };
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| err(e.line().max(1), format!("JSON: {e}")))?;
    let Value::Object(object) = &value else {
        return Err(err(
            1,
            format!("the file must be a JSON object, not {}", json_type(&value)),
        ));
    };
    let Some(list) = object.get("reviewers") else {
        return Ok(default_list(timeout));
    };
    let lines = locate_reviewers(bytes);
    let key_line = lines.as_ref().map_or(1, |l| l.key);
    let item_line = |i: usize| {
        lines
            .as_ref()
            .and_then(|l| l.items.get(i).copied())
            .unwrap_or(key_line)
    };
    let Value::Array(items) = list else {
        return Err(err(
            key_line,
            format!(
                "reviewers must be an array of strings, not {}",
                json_type(list)
            ),
        ));
    };
    let origin = |line| Origin::File {
        path: path.to_path_buf(),
        line,
    };
    let mut out: Vec<Reviewer> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::String(raw) = item else {
            return Err(err(
                item_line(i),
                format!(
                    "reviewers item {} must be a string, not {}",
                    i + 1,
                    json_type(item)
                ),
            ));
        };
        let name = raw.trim();
        if name.is_empty() {
            continue;
        }
        let preset = Preset::parse(name).filter(|p| !matches!(p, Preset::Command | Preset::Sarif));
        let Some(preset) = preset else {
            return Err(err(
                item_line(i),
                format!(
                    "reviewers item {} {}: clean-review names one of claude, codex, agy, native",
                    i + 1,
                    quote(raw)
                ),
            ));
        };
        if out.iter().any(|r| r.preset.value == preset) {
            return Err(err(
                item_line(i),
                format!("reviewers item {} {}: named twice", i + 1, quote(raw)),
            ));
        }
        out.push(Reviewer::bare(
            preset,
            origin(item_line(i)),
            timeout.clone(),
        ));
    }
    if out.is_empty() {
        out.push(Reviewer::bare(
            Preset::Native,
            origin(key_line),
            timeout.clone(),
        ));
    }
    Ok(Sourced {
        value: out,
        origin: origin(key_line),
    })
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Lines of the (last) top-level `reviewers` key of a JSON object and of its array's items.
struct JsonLines {
    key: usize,
    items: Vec<usize>,
}

/// Finds [`JsonLines`] in a document serde_json already accepted as an object; `None` if the
/// scan meets something it does not expect.
fn locate_reviewers(src: &[u8]) -> Option<JsonLines> {
    let mut s = JsonScan { src, pos: 0 };
    s.ws();
    s.eat(b'{')?;
    let mut found = None;
    loop {
        s.ws();
        if s.peek()? == b'}' {
            return found;
        }
        let key_start = s.pos;
        s.string()?;
        let key: String = serde_json::from_slice(&src[key_start..s.pos]).ok()?;
        s.ws();
        s.eat(b':')?;
        s.ws();
        if key == "reviewers" {
            let mut lines = JsonLines {
                key: line_at(src, key_start),
                items: Vec::new(),
            };
            if s.peek()? == b'[' {
                s.pos += 1;
                loop {
                    s.ws();
                    if s.peek()? == b']' {
                        s.pos += 1;
                        break;
                    }
                    lines.items.push(line_at(src, s.pos));
                    s.value()?;
                    s.ws();
                    if s.peek()? == b',' {
                        s.pos += 1;
                    }
                }
            } else {
                s.value()?;
            }
            found = Some(lines);
        } else {
            s.value()?;
        }
        s.ws();
        if s.peek()? == b',' {
            s.pos += 1;
        }
    }
}

/// A cursor over valid JSON, skipping values without building them.
struct JsonScan<'a> {
    src: &'a [u8],
    pos: usize,
}

impl JsonScan<'_> {
    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.pos += 1)
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => self.pos += 1,
            }
        }
    }

    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                self.pos += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.pos += 1;
                }
                Some(())
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Project file (G17, G22, G23, G24)

/// Reads the project file into `cfg`: first any user key at any depth (G17), then
/// `check_paths`, `rules`, `angles` and `[caps]`.
fn parse_project(doc: &Doc, fields: Vec<Field>, work_tree: &Path, cfg: &mut Config) -> Result<()> {
    if let Some((line, path)) = find_user_key(&fields, "") {
        return Err(doc.error(
            line,
            format!(
                "{path} is a user setting and may not appear in the project file: a cloned repository must never choose what runs on your machine"
            ),
        ));
    }
    for f in &fields {
        match f.key.as_str() {
            "check_paths" => {
                let globs = doc.strings(f, "check_paths", |g| validate_glob(g).err())?;
                cfg.check_paths = globs
                    .into_iter()
                    .map(|value| Sourced {
                        value,
                        origin: doc.origin(f.line),
                    })
                    .collect();
            }
            "rules" => {
                let items = doc.strings(f, "rules", |_| None)?;
                let mut rules = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let rule = resolve_rule(work_tree, item).map_err(|why| {
                        doc.error(
                            f.line,
                            format!("rules item {} {}: {why}", i + 1, quote(item)),
                        )
                    })?;
                    rules.push(Sourced {
                        value: rule,
                        origin: doc.origin(f.line),
                    });
                }
                cfg.rules = rules;
            }
            "angles" => {
                let names = doc.strings(f, "angles", |a| {
                    Angle::parse(a).is_none().then(|| {
                        format!(
                            "unknown angle; use {}",
                            Angle::ALL.map(Angle::as_str).join(", ")
                        )
                    })
                })?;
                let mut angles: Vec<Angle> = Vec::with_capacity(names.len());
                for name in &names {
                    let angle = Angle::parse(name).ok_or_else(|| {
                        doc.error(f.line, format!("unknown angle {}", quote(name)))
                    })?;
                    if angles.contains(&angle) {
                        return Err(
                            doc.error(f.line, format!("angles names {} twice", quote(name)))
                        );
                    }
                    angles.push(angle);
                }
                if angles.is_empty() {
                    return Err(doc.error(
                        f.line,
                        "angles must name at least one angle; leave the key out for all five",
                    ));
                }
                angles.sort();
                cfg.angles = Sourced {
                    value: angles,
                    origin: doc.origin(f.line),
                };
            }
            "caps" => parse_caps(doc, f, &mut cfg.caps)?,
            other => {
                return Err(doc.error(
                    f.line,
                    format!(
                    "unknown key {}; the project file takes check_paths, rules, angles and [caps]",
                    quote(other)
                ),
                ))
            }
        }
    }
    Ok(())
}

/// The first user key at any depth (G17), with its line and dotted path.
fn find_user_key(fields: &[Field], prefix: &str) -> Option<(usize, String)> {
    for f in fields {
        let path = if prefix.is_empty() {
            f.key.clone()
        } else {
            format!("{prefix}.{}", f.key)
        };
        if USER_KEYS.contains(&f.key.as_str()) || f.key.starts_with("allowed_") {
            return Some((f.line, path));
        }
        if let Some(found) = find_user_key_in(&f.val, &path) {
            return Some(found);
        }
    }
    None
}

fn find_user_key_in(val: &Val, path: &str) -> Option<(usize, String)> {
    match &val.v {
        V::Table(fields) => find_user_key(fields, path),
        V::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| find_user_key_in(item, &format!("{path}[{i}]"))),
        _ => None,
    }
}

/// Reads `[caps]` (G22): `plan`, `plan_delta`, `code`, integers ≥ 0.
fn parse_caps(doc: &Doc, f: &Field, caps: &mut Caps) -> Result<()> {
    let V::Table(fields) = &f.val.v else {
        return Err(doc.error(
            f.line,
            format!("caps must be a table, not {}", f.val.v.describe()),
        ));
    };
    for cap in fields {
        let slot = match cap.key.as_str() {
            "plan" => &mut caps.plan,
            "plan_delta" => &mut caps.plan_delta,
            "code" => &mut caps.code,
            other => {
                return Err(doc.error(
                    cap.line,
                    format!(
                        "unknown key {} in [caps]; caps takes plan, plan_delta and code",
                        quote(other)
                    ),
                ))
            }
        };
        match &cap.val.v {
            V::Int(n) if *n >= 0 => {
                *slot = Sourced {
                    value: n.unsigned_abs(),
                    origin: doc.origin(cap.line),
                }
            }
            other => {
                return Err(doc.error(
                    cap.line,
                    format!(
                        "caps.{} must be an integer of 0 or more, not {}",
                        cap.key,
                        other.describe()
                    ),
                ))
            }
        }
    }
    Ok(())
}

/// Resolves a `rules` item (G23): a relative path inside the work tree, symbolic links resolving
/// inside it, naming a readable regular file.
fn resolve_rule(work_tree: &Path, item: &str) -> std::result::Result<RuleDoc, String> {
    if item.is_empty() {
        return Err("is empty".to_owned());
    }
    if item.starts_with('/') {
        return Err("is an absolute path; give a path relative to the repository".to_owned());
    }
    let mut parts: Vec<&str> = Vec::new();
    for segment in item.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err("leaves the repository through ..".to_owned());
                }
            }
            s => parts.push(s),
        }
    }
    let root = fs::canonicalize(work_tree).map_err(|e| {
        format!(
            "the work tree {} cannot be resolved: {e}",
            work_tree.display()
        )
    })?;
    let joined = work_tree.join(item);
    let resolved = match fs::canonicalize(&joined) {
        Ok(p) => p,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(if fs::symlink_metadata(&joined).is_ok() {
                "is a broken symbolic link".to_owned()
            } else {
                "does not exist".to_owned()
            })
        }
        Err(e) => return Err(format!("cannot be resolved: {e}")),
    };
    if !resolved.starts_with(&root) {
        return Err(format!(
            "leads outside the repository (to {}) through a symbolic link",
            resolved.display()
        ));
    }
    let meta = fs::metadata(&resolved).map_err(|e| format!("cannot be examined: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "is not a regular file but {}",
            describe_file_type(&meta.file_type())
        ));
    }
    let mut probe = [0u8; 1];
    fs::File::open(&resolved)
        .and_then(|mut f| f.read(&mut probe))
        .map_err(|e| format!("cannot be read: {e}"))?;
    Ok(RuleDoc {
        name: parts.join("/"),
        path: resolved,
    })
}

/// Validates a check-path glob (G24) with the matcher's own rules ([`crate::spar::glob`]): not
/// empty, relative, no `..` segment, every segment a valid Go `path.Match` pattern or `**`.
fn validate_glob(glob: &str) -> std::result::Result<(), String> {
    crate::spar::glob::validate(glob)
}

// ---------------------------------------------------------------------------------------------
// Selection (G25)

/// A reviewer of one run: its configuration (or a bare preset), and the model and effort this
/// run gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectedReviewer {
    /// The configured entry, or the preset `--reviewers` picked by name.
    pub reviewer: Reviewer,
    /// Whether it comes from the configured list (not a bare preset picked by `--reviewers`).
    pub configured: bool,
    /// The configured `model`, or `--model`'s value; `None` lets the CLI choose.
    pub model: Option<Sourced<String>>,
    /// The configured non-empty `effort`, or `--effort`'s value; `None` passes no effort.
    pub effort: Option<Sourced<String>>,
}

impl SelectedReviewer {
    /// The reviewer's name.
    pub fn name(&self) -> &str {
        &self.reviewer.name.value
    }

    /// The reviewer's preset.
    pub fn preset(&self) -> Preset {
        self.reviewer.preset.value
    }

    /// The timeout of each attempt (G19).
    pub fn timeout_seconds(&self) -> u64 {
        self.reviewer.timeout_seconds.value
    }

    /// The model to retry with after a quota refusal (G13), if on.
    pub fn fallback_model(&self) -> Option<&str> {
        self.reviewer.fallback_model()
    }

    /// What [`find_executable`] looks for; `None` for native.
    pub fn executable(&self) -> Option<&str> {
        self.reviewer.executable()
    }
}

/// Selects this run's reviewers from `--reviewers` (or the configured list) and applies
/// `--model NAME=VALUE` / `--effort NAME=VALUE` (G25, G20, G19).
pub fn select(
    cfg: &Config,
    reviewers: Option<&str>,
    models: &[String],
    efforts: &[String],
) -> Result<Vec<SelectedReviewer>> {
    let models: Vec<OsString> = models.iter().map(OsString::from).collect();
    let efforts: Vec<OsString> = efforts.iter().map(OsString::from).collect();
    select_os(cfg, reviewers.map(OsStr::new), &models, &efforts)
}

/// [`select`] for arguments that may not be valid UTF-8 (a value that is not is refused; a name
/// that is not matches no reviewer).
pub fn select_os(
    cfg: &Config,
    reviewers: Option<&OsStr>,
    models: &[OsString],
    efforts: &[OsString],
) -> Result<Vec<SelectedReviewer>> {
    let model_args = models
        .iter()
        .map(|a| split_assignment("--model", a.as_bytes()))
        .collect::<Result<Vec<_>>>()?;
    let effort_args = efforts
        .iter()
        .map(|a| split_assignment("--effort", a.as_bytes()))
        .collect::<Result<Vec<_>>>()?;

    let mut run = match reviewers {
        None => cfg
            .reviewers
            .value
            .iter()
            .map(|r| SelectedReviewer {
                reviewer: r.clone(),
                configured: true,
                model: None,
                effort: None,
            })
            .collect(),
        Some(list) => pick_reviewers(cfg, list.as_bytes())?,
    };
    for s in &mut run {
        s.model = s.reviewer.model.clone();
        s.effort = s.reviewer.effort.clone().filter(|e| !e.value.is_empty());
    }

    let mut given: HashSet<(usize, &'static str)> = HashSet::new();
    for (flag, args) in [("--model", &model_args), ("--effort", &effort_args)] {
        for (name, value) in args {
            let index = apply_assignment(&mut run, flag, name, value, &given)?;
            given.insert((index, flag));
        }
    }
    Ok(run)
}

/// Splits `NAME=VALUE` at the first `=`; no `=` or an empty name is a usage error.
fn split_assignment<'a>(flag: &str, arg: &'a [u8]) -> Result<(&'a [u8], &'a [u8])> {
    let Some(eq) = arg.iter().position(|&b| b == b'=') else {
        return Err(Error::usage(format!(
            "{flag} takes NAME=VALUE, got {}",
            quote_bytes(arg)
        )));
    };
    let (name, value) = (&arg[..eq], &arg[eq + 1..]);
    if name.is_empty() {
        return Err(Error::usage(format!(
            "{flag} takes NAME=VALUE with a reviewer name before =, got {}",
            quote_bytes(arg)
        )));
    }
    Ok((name, value))
}

/// Applies one `--model`/`--effort` to the run; returns the index of the reviewer it applies to.
fn apply_assignment(
    run: &mut [SelectedReviewer],
    flag: &'static str,
    name: &[u8],
    value: &[u8],
    given: &HashSet<(usize, &'static str)>,
) -> Result<usize> {
    let refuse = |why: String| {
        Error::refused(format!(
            "{flag} for reviewer {} with value {}: {why}",
            quote_bytes(name),
            quote_bytes(value)
        ))
        .hint("`git spar config` lists the reviewers, their presets and allowed values")
    };
    let Some(index) = run.iter().position(|s| s.name().as_bytes() == name) else {
        let names: Vec<&str> = run.iter().map(SelectedReviewer::name).collect();
        return Err(refuse(format!(
            "no reviewer of this run has that name (this run: {})",
            names.join(", ")
        )));
    };
    let s = &mut run[index];
    let is_model = flag == "--model";
    let preset = s.preset();
    let (takes, written, allowed) = if is_model {
        (
            preset.takes_model(),
            &s.reviewer.model,
            &s.reviewer.allowed_models,
        )
    } else {
        (
            preset.takes_effort(),
            &s.reviewer.effort,
            &s.reviewer.allowed_efforts,
        )
    };
    let key = if is_model { "model" } else { "effort" };
    if !takes {
        return Err(refuse(format!(
            "preset {} takes no {key}",
            quote(preset.as_str())
        )));
    }
    if let Some(w) = written {
        return Err(refuse(format!(
            "the user file sets {key} for this reviewer ({}); change it there",
            w.origin
        )));
    }
    if given.contains(&(index, flag)) {
        return Err(refuse(format!("{flag} is given twice for this reviewer")));
    }
    if let Some(problem) = value_problem(value) {
        return Err(refuse(format!("the value {problem}")));
    }
    let text = String::from_utf8_lossy(value).into_owned();
    if let Some(list) = allowed {
        if !list.value.contains(&text) {
            return Err(refuse(format!(
                "not in allowed_{key}s ({}): {}",
                list.origin,
                list.value
                    .iter()
                    .map(|v| quote(v))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let chosen = Some(Sourced {
        value: text,
        origin: Origin::Flag(flag),
    });
    if is_model {
        s.model = chosen;
    } else {
        s.effort = chosen;
    }
    Ok(index)
}

/// Reads `--reviewers` (G25, G20): names split at `,`, trimmed, empty ones skipped, all empty →
/// one native; each a configured name or else a preset other than command.
fn pick_reviewers(cfg: &Config, list: &[u8]) -> Result<Vec<SelectedReviewer>> {
    let err = |message: String| {
        Error::refused(format!("--reviewers: {message}"))
            .hint("`git spar config` lists the configured reviewers; presets are claude, codex, agy, native")
    };
    let mut out: Vec<SelectedReviewer> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for raw in list.split(|&b| b == b',') {
        let Ok(text) = std::str::from_utf8(raw) else {
            return Err(err(format!(
                "{}: a reviewer name is 1 to 64 of A-Z a-z 0-9 . _ -",
                quote_bytes(raw)
            )));
        };
        let name = text.trim();
        if !name.is_empty() {
            names.push(name.to_owned());
        }
    }
    if names.is_empty() {
        names.push(Preset::Native.as_str().to_owned());
    }
    for name in names {
        check_name(&name).map_err(|why| err(format!("{}: {why}", quote(&name))))?;
        if let Some(earlier) = out.iter().find(|s| s.name().eq_ignore_ascii_case(&name)) {
            return Err(err(format!(
                "{} repeats {}; names must differ ignoring case",
                quote(&name),
                quote(earlier.name())
            )));
        }
        let selected = if let Some(r) = cfg.reviewer(&name) {
            SelectedReviewer {
                reviewer: r.clone(),
                configured: true,
                model: None,
                effort: None,
            }
        } else {
            match Preset::parse(&name).filter(|p| !matches!(p, Preset::Command | Preset::Sarif)) {
                Some(preset) => SelectedReviewer {
                    reviewer: Reviewer::bare(
                        preset,
                        Origin::Flag("--reviewers"),
                        cfg.timeout_seconds.clone(),
                    ),
                    configured: false,
                    model: None,
                    effort: None,
                },
                None => {
                    return Err(err(format!(
                        "{} is neither a configured reviewer nor a preset",
                        quote(&name)
                    )))
                }
            }
        };
        out.push(selected);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Running: argv and executables (G21, G14)

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

fn substitute(arg: &str, values: &Placeholders<'_>) -> OsString {
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
            Ok(_) if !is_executable(&path) => Err((
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
    let mut not_executable = None;
    if !value.is_empty() {
        for dir in path_env.map(std::env::split_paths).into_iter().flatten() {
            if dir.is_relative() {
                continue;
            }
            let candidate = dir.join(value);
            if fs::metadata(&candidate).is_ok_and(|m| m.is_file()) {
                if is_executable(&candidate) {
                    return Ok(candidate);
                }
                not_executable.get_or_insert(candidate);
            }
        }
    }
    let detail = not_executable
        .map(|p| format!(" ({} is not executable)", p.display()))
        .unwrap_or_default();
    Err((
        Status::Unavailable,
        format!("{} was not found on PATH{detail}", quote(value)),
    ))
}

/// Whether this process may execute `path` (effective ids, as `exec.LookPath` asks).
fn is_executable(path: &Path) -> bool {
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call.
    unsafe {
        libc::faccessat(
            libc::AT_FDCWD,
            c_path.as_ptr(),
            libc::X_OK,
            libc::AT_EACCESS,
        ) == 0
    }
}

// ---------------------------------------------------------------------------------------------
// %q

/// `s` quoted like Go's `%q` (`strconv.Quote`).
pub fn quote(s: &str) -> String {
    quote_bytes(s.as_bytes())
}

/// `bytes` quoted like Go's `%q`: printable characters as they are, `\a \b \f \n \r \t \v \\ \"`,
/// other control and non-printable characters as `\xHH`, `\uHHHH` or `\UHHHHHHHH`, and each byte
/// that is not valid UTF-8 as `\xHH`. Printable follows Go's `unicode.IsPrint` for controls,
/// spaces other than U+0020, format and private-use characters; unassigned code points (which Go
/// also escapes) are not recognized and stay as they are.
pub fn quote_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                push_escaped(&mut out, text);
                break;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                push_escaped(&mut out, &String::from_utf8_lossy(valid));
                let bad = e.error_len().unwrap_or(after.len());
                for b in &after[..bad] {
                    out.push_str(&format!("\\x{b:02x}"));
                }
                rest = &after[bad..];
            }
        }
    }
    out.push('"');
    out
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
}

/// Go's `unicode.IsPrint`, except that unassigned code points count as printable.
fn is_go_printable(c: char) -> bool {
    let u = c as u32;
    let format_or_private = matches!(u,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF
        | 0xFFF9..=0xFFFB | 0xFFFE..=0xFFFF | 0x110BD | 0x110CD | 0x13430..=0x1343F
        | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F
        | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF);
    !(c.is_control() || (c.is_whitespace() && c != ' ') || format_or_private)
}

#[cfg(test)]
mod tests {
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

    // ---- G14: finding the executable -------------------------------------------------------

    #[test]
    fn g14_path_that_does_not_exist_is_unavailable() {
        let fx = Fx::new();
        let missing = fx.root().join("nope/claude");
        let (status, why) = find_executable(missing.to_str().unwrap(), None).unwrap_err();
        assert_eq!(status, Status::Unavailable);
        assert!(why.contains("does not exist"), "{why}");
        let broken = fx.root().join("broken");
        symlink(fx.root().join("gone"), &broken).unwrap();
        let (status, _) = find_executable(broken.to_str().unwrap(), None).unwrap_err();
        assert_eq!(status, Status::Unavailable);
    }

    #[test]
    fn g14_path_that_is_not_a_regular_file_is_failed() {
        let fx = Fx::new();
        let (status, why) = find_executable(fx.work().to_str().unwrap(), None).unwrap_err();
        assert_eq!(status, Status::Failed);
        assert!(why.contains("not a regular file"), "{why}");
        let fifo = fx.root().join("fifo");
        mkfifo(&fifo);
        let (status, _) = find_executable(fifo.to_str().unwrap(), None).unwrap_err();
        assert_eq!(status, Status::Failed);
    }

    #[test]
    fn g14_path_without_execute_permission_is_failed() {
        let fx = Fx::new();
        let file = fx.write("bin/tool", "#!/bin/sh\n");
        set_mode(&file, 0o644);
        let (status, why) = find_executable(file.to_str().unwrap(), None).unwrap_err();
        assert_eq!(status, Status::Failed);
        assert!(why.contains("not executable"), "{why}");
    }

    #[test]
    fn g14_path_to_an_executable_is_used_as_is() {
        let fx = Fx::new();
        let file = fx.write("bin/tool", "#!/bin/sh\n");
        set_mode(&file, 0o755);
        assert_eq!(find_executable(file.to_str().unwrap(), None), Ok(file));
    }

    #[test]
    fn g14_bare_name_finds_the_first_executable_on_path() {
        let fx = Fx::new();
        let plain = fx.write("a/claude", "");
        set_mode(&plain, 0o644);
        fs::create_dir_all(fx.root().join("b/claude")).unwrap();
        let exe = fx.write("c/claude", "");
        set_mode(&exe, 0o755);
        let later = fx.write("d/claude", "");
        set_mode(&later, 0o755);
        let path = std::env::join_paths(["a", "b", "c", "d"].map(|d| fx.root().join(d))).unwrap();
        assert_eq!(find_executable("claude", Some(&path)), Ok(exe));
    }

    #[test]
    fn g14_bare_name_with_only_non_executable_files_is_unavailable() {
        let fx = Fx::new();
        let plain = fx.write("a/codex", "");
        set_mode(&plain, 0o644);
        let path = fx.root().join("a").into_os_string();
        let (status, why) = find_executable("codex", Some(&path)).unwrap_err();
        assert_eq!(status, Status::Unavailable);
        assert!(why.contains("not executable"), "{why}");
    }

    #[test]
    fn g14_bare_name_not_on_path_is_unavailable() {
        let fx = Fx::new();
        let path = fx.root().join("a").into_os_string();
        assert_eq!(
            find_executable("agy", Some(&path)).unwrap_err().0,
            Status::Unavailable
        );
        assert_eq!(
            find_executable("agy", None).unwrap_err().0,
            Status::Unavailable
        );
        assert_eq!(
            find_executable("", Some(&path)).unwrap_err().0,
            Status::Unavailable
        );
    }

    #[test]
    fn g14_relative_path_entries_are_not_searched() {
        let fx = Fx::new();
        let exe = fx.write("rel/tool", "");
        set_mode(&exe, 0o755);
        // "rel" and "" are relative: they would depend on the current directory.
        let path = OsString::from("rel::");
        assert_eq!(
            find_executable("tool", Some(&path)).unwrap_err().0,
            Status::Unavailable
        );
    }

    #[test]
    fn g14_what_each_preset_looks_for() {
        let fx = Fx::new();
        let (env, _) = fx.user(
            r#"
[[reviewers]]
preset = "claude"
binary = ""
[[reviewers]]
preset = "codex"
binary = "/opt/codex"
[[reviewers]]
preset = "agy"
[[reviewers]]
preset = "native"
[[reviewers]]
preset = "command"
argv = ["./tools/review", "{prompt}"]
"#,
        );
        let cfg = load(&env);
        let exes: Vec<Option<&str>> = cfg
            .reviewers
            .value
            .iter()
            .map(Reviewer::executable)
            .collect();
        assert_eq!(
            exes,
            [
                Some("claude"),
                Some("/opt/codex"),
                Some("agy"),
                None,
                Some("./tools/review")
            ]
        );
    }

    // ---- G16: sources --------------------------------------------------------------------

    #[test]
    fn g16_sources_in_order_first_existing_wins() {
        let fx = Fx::new();
        let spar = fx.write("spar.toml", "[[reviewers]]\npreset = \"agy\"\n");
        let xdg = fx.write(
            "xdg/jaekit/spar.toml",
            "[[reviewers]]\npreset = \"native\"\n",
        );
        let home = fx.write(
            "home/.config/jaekit/spar.toml",
            "[[reviewers]]\npreset = \"codex\"\n",
        );
        let cr_xdg = fx.write(
            "xdg/clean-review/config.json",
            r#"{"reviewers": ["claude"]}"#,
        );
        let cr_home = fx.write(
            "home/.config/clean-review/config.json",
            r#"{"reviewers": ["agy", "native"]}"#,
        );
        let env = fx.env_spar(&spar);

        let cfg = load(&env);
        assert_eq!(cfg.user_source, Some((Source::SparConfig, spar.clone())));
        assert_eq!(presets(&cfg), [Preset::Agy]);
        assert!(cfg.skipped.is_empty());

        fs::remove_file(&spar).unwrap();
        let cfg = load(&env);
        assert_eq!(cfg.user_source, Some((Source::XdgToml, xdg.clone())));
        assert_eq!(presets(&cfg), [Preset::Native]);
        assert_eq!(cfg.skipped.len(), 1);
        assert_eq!(cfg.skipped[0].source, Source::SparConfig);
        assert_eq!(cfg.skipped[0].path.as_deref(), Some(spar.as_path()));
        assert_eq!(cfg.skipped[0].reason, "does not exist");

        fs::remove_file(&xdg).unwrap();
        let cfg = load(&env);
        assert_eq!(cfg.user_source, Some((Source::HomeToml, home.clone())));
        assert_eq!(presets(&cfg), [Preset::Codex]);

        fs::remove_file(&home).unwrap();
        let cfg = load(&env);
        assert_eq!(
            cfg.user_source,
            Some((Source::CleanReviewXdg, cr_xdg.clone()))
        );
        assert_eq!(presets(&cfg), [Preset::Claude]);

        fs::remove_file(&cr_xdg).unwrap();
        let cfg = load(&env);
        assert_eq!(
            cfg.user_source,
            Some((Source::CleanReviewHome, cr_home.clone()))
        );
        assert_eq!(presets(&cfg), [Preset::Agy, Preset::Native]);
        let skipped: Vec<Source> = cfg.skipped.iter().map(|s| s.source).collect();
        assert_eq!(
            skipped,
            [
                Source::SparConfig,
                Source::XdgToml,
                Source::HomeToml,
                Source::CleanReviewXdg
            ]
        );

        fs::remove_file(&cr_home).unwrap();
        let cfg = load(&env);
        assert_eq!(cfg.user_source, None);
        assert_eq!(names(&cfg), ["claude", "codex"]);
        assert_eq!(cfg.skipped.len(), 5);
        assert!(cfg.files.is_empty());
    }

    #[test]
    fn g16_empty_environment_variables_are_absent() {
        let fx = Fx::new();
        let home = fx.root().join("home");
        let env = Env::from_vars(
            |name| match name {
                "SPAR_CONFIG" | "XDG_CONFIG_HOME" => Some(OsString::new()),
                "HOME" => Some(home.clone().into()),
                _ => None,
            },
            fx.work(),
        );
        assert_eq!(env.spar_config, None);
        assert_eq!(env.xdg_config_home, None);
        assert_eq!(env.home, Some(home.clone().into()));
        let cfg = load(&env);
        let reasons: Vec<&str> = cfg.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert_eq!(reasons[0], "SPAR_CONFIG is unset or empty");
        assert_eq!(reasons[1], "XDG_CONFIG_HOME is unset or empty");
        assert_eq!(
            cfg.skipped[2].path,
            Some(home.join(".config/jaekit/spar.toml"))
        );

        let env = Env::from_vars(|_| Some(OsString::new()), fx.work());
        let cfg = load(&env);
        assert_eq!(cfg.skipped.len(), 5);
        assert!(cfg.skipped.iter().all(|s| s.path.is_none()));
    }

    #[test]
    fn g16_relative_xdg_config_home_is_skipped() {
        let fx = Fx::new();
        let env = Env {
            xdg_config_home: Some("relative/xdg".into()),
            ..fx.env()
        };
        let cfg = load(&env);
        assert_eq!(
            cfg.skipped[1].reason,
            "XDG_CONFIG_HOME is not an absolute path"
        );
        assert_eq!(cfg.skipped[1].path, None);
    }

    #[test]
    fn g16_broken_symlink_and_symlink_loop_are_absent() {
        let fx = Fx::new();
        let broken = fx.root().join("broken.toml");
        symlink(fx.root().join("missing.toml"), &broken).unwrap();
        let cfg = load(&fx.env_spar(&broken));
        assert_eq!(cfg.skipped[0].reason, "broken symbolic link");
        assert_eq!(cfg.user_source, None);

        let a = fx.root().join("loop-a");
        let b = fx.root().join("loop-b");
        symlink(&b, &a).unwrap();
        symlink(&a, &b).unwrap();
        let cfg = load(&fx.env_spar(&a));
        assert_eq!(cfg.skipped[0].reason, "symbolic link loop");

        // A loop at the XDG path passes on to the next source too.
        fs::create_dir_all(fx.root().join("xdg/jaekit")).unwrap();
        symlink(&a, fx.root().join("xdg/jaekit/spar.toml")).unwrap();
        let home = fx.write(
            "home/.config/jaekit/spar.toml",
            "[[reviewers]]\npreset = \"agy\"\n",
        );
        let cfg = load(&fx.env());
        assert_eq!(cfg.user_source, Some((Source::HomeToml, home)));
    }

    #[test]
    fn g16_symlink_to_a_regular_file_is_followed() {
        let fx = Fx::new();
        let target = fx.write("real.toml", "[[reviewers]]\npreset = \"agy\"\n");
        let link = fx.root().join("link.toml");
        symlink(&target, &link).unwrap();
        let cfg = load(&fx.env_spar(&link));
        assert_eq!(presets(&cfg), [Preset::Agy]);
        assert_eq!(cfg.files[0].path, link);
    }

    #[test]
    fn g16_existing_user_path_that_is_not_a_regular_file_is_an_error() {
        let fx = Fx::new();
        let folder = fx.root().join("folder.toml");
        fs::create_dir(&folder).unwrap();
        assert_config_error(&load_err(&fx.env_spar(&folder)), &folder, 1, "a folder");

        let fifo = fx.root().join("fifo.toml");
        mkfifo(&fifo);
        assert_config_error(&load_err(&fx.env_spar(&fifo)), &fifo, 1, "a FIFO");

        // A symlink to a folder is the folder.
        let link = fx.root().join("link.toml");
        symlink(&folder, &link).unwrap();
        assert_config_error(&load_err(&fx.env_spar(&link)), &link, 1, "a folder");

        // At the XDG path, after a missing SPAR_CONFIG, too.
        fs::create_dir_all(fx.root().join("xdg/jaekit/spar.toml")).unwrap();
        let e = load_err(&fx.env_spar(&fx.root().join("missing.toml")));
        assert_config_error(&e, &fx.root().join("xdg/jaekit/spar.toml"), 1, "a folder");

        // A clean-review folder as well.
        let fx = Fx::new();
        let cr = fx.root().join("home/.config/clean-review/config.json");
        fs::create_dir_all(&cr).unwrap();
        assert_config_error(&load_err(&fx.env()), &cr, 1, "a folder");
    }

    #[test]
    fn g16_stat_failing_for_another_reason_is_an_error() {
        let fx = Fx::new();
        let file = fx.write("file", "x");
        // ENOTDIR: a path through a regular file.
        let through = file.join("spar.toml");
        assert_config_error(
            &load_err(&fx.env_spar(&through)),
            &through,
            1,
            "cannot be examined",
        );
        // ENAMETOOLONG.
        let long = fx.root().join("x".repeat(300));
        assert_config_error(
            &load_err(&fx.env_spar(&long)),
            &long,
            1,
            "cannot be examined",
        );
    }

    #[test]
    fn g16_later_sources_are_not_examined_once_one_exists() {
        let fx = Fx::new();
        fs::create_dir_all(fx.root().join("home/.config/jaekit/spar.toml")).unwrap();
        let (env, path) = fx.user("");
        let cfg = load(&env);
        assert_eq!(cfg.user_source, Some((Source::SparConfig, path)));
    }

    #[test]
    fn g16_project_file_missing_or_broken_link_gives_defaults() {
        let fx = Fx::new();
        let cfg = load(&fx.env());
        assert!(!cfg.project_present);
        assert_eq!(cfg.project_file, fx.work().join(".jaekit/spar.toml"));
        assert_eq!(cfg.angles.value, Angle::ALL);
        assert_eq!(cfg.caps, Caps::default());
        assert!(cfg.check_paths.is_empty() && cfg.rules.is_empty());
        // The project file is not a user source: nothing about it in `skipped`.
        assert!(cfg.skipped.iter().all(|s| s.source != Source::Project));

        fs::create_dir_all(fx.work().join(".jaekit")).unwrap();
        symlink(fx.root().join("gone"), fx.work().join(".jaekit/spar.toml")).unwrap();
        assert!(!load(&fx.env()).project_present);
    }

    #[test]
    fn g16_project_file_that_is_not_a_regular_file_is_an_error() {
        let fx = Fx::new();
        let path = fx.work().join(".jaekit/spar.toml");
        fs::create_dir_all(&path).unwrap();
        assert_config_error(&load_err(&fx.env()), &path, 1, "a folder");

        let fx = Fx::new();
        let path = fx.work().join(".jaekit/spar.toml");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        mkfifo(&path);
        assert_config_error(&load_err(&fx.env()), &path, 1, "a FIFO");

        let fx = Fx::new();
        fx.write("work/.jaekit", "a file where the folder should be");
        let path = fx.work().join(".jaekit/spar.toml");
        assert_config_error(&load_err(&fx.env()), &path, 1, "cannot be examined");
    }

    #[test]
    fn g16_files_read_are_recorded_with_their_sha256() {
        let fx = Fx::new();
        let user_text = "timeout_seconds = 60\n";
        let project_text = "angles = [\"checks\"]\n";
        let (env, user) = fx.user(user_text);
        let project = fx.write("work/.jaekit/spar.toml", project_text);
        let cfg = load(&env);
        assert!(cfg.project_present);
        assert_eq!(
            cfg.files,
            [
                FileRead {
                    source: Source::SparConfig,
                    path: user,
                    sha256: sha256_hex(user_text.as_bytes()),
                },
                FileRead {
                    source: Source::Project,
                    path: project,
                    sha256: sha256_hex(project_text.as_bytes()),
                },
            ]
        );
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn g16_project_file_is_read_from_the_work_tree() {
        let fx = Fx::new();
        fx.write("work/.jaekit/spar.toml", "angles = [\"security\"]\n");
        let cfg = load(&fx.env());
        assert_eq!(cfg.angles.value, [Angle::Security]);
        let other = Env {
            work_tree: fx.root().join("home"),
            ..fx.env()
        };
        assert_eq!(load(&other).angles.value, Angle::ALL);
    }

    #[test]
    fn g16_digest_looks_only_at_applied_values() {
        let fx = Fx::new();
        let a = fx.write(
            "a.toml",
            "# one file\ntimeout_seconds = 60\n[[reviewers]]\npreset = \"claude\"\n",
        );
        let b = fx.write(
            "elsewhere/b.toml",
            "\n\ntimeout_seconds = 60\n[[reviewers]]\nname = \"claude\" # the same name, written out\npreset = 'claude'\ntimeout_seconds = 60\n",
        );
        let c = fx.write(
            "c.toml",
            "timeout_seconds = 61\n[[reviewers]]\npreset = \"claude\"\n",
        );
        let da = load(&fx.env_spar(&a));
        let db = load(&fx.env_spar(&b));
        let dc = load(&fx.env_spar(&c));
        assert_ne!(da.files, db.files);
        assert_eq!(da.digest(), db.digest());
        assert_ne!(da.digest(), dc.digest());
        assert_eq!(da.digest().len(), 64);

        // The project file counts through its values too.
        fx.write("work/.jaekit/spar.toml", "[caps]\ncode = 4\n");
        assert_ne!(load(&fx.env_spar(&a)).digest(), da.digest());
    }

    // ---- G17: TOML syntax and keys ----------------------------------------------------------

    #[test]
    fn g17_syntax_errors_name_their_line() {
        user_error("timeout_seconds = 5\n\n[[reviewers]\n", 3, "TOML");
        user_error("timeout_seconds = 5\ntimeout_seconds = 6\n", 2, "TOML");
        project_error("angles = [\"checks\"\n", 2, "TOML");
        project_error("# c\n\ncheck_paths = [\"a\"]\nrules = \n", 4, "TOML");
    }

    #[test]
    fn g17_bytes_that_are_not_utf8_are_an_error() {
        let fx = Fx::new();
        let path = fx.write_bytes("user.toml", b"# ok\n# \xff\n");
        assert_config_error(&load_err(&fx.env_spar(&path)), &path, 2, "UTF-8");
    }

    #[test]
    fn g17_unknown_keys_are_errors() {
        user_error("timeout = 5\n", 1, "unknown key \"timeout\"");
        user_error("check_paths = []\n", 1, "unknown key \"check_paths\"");
        user_error(
            "[[reviewers]]\npreset = \"claude\"\nmodle = \"x\"\n",
            3,
            "unknown key \"modle\"",
        );
        user_error(
            "[[reviewers]]\npreset = \"claude\"\nallowed_binaries = [\"x\"]\n",
            3,
            "unknown key \"allowed_binaries\"",
        );
        project_error("\nangle = [\"checks\"]\n", 2, "unknown key \"angle\"");
        project_error(
            "[caps]\nplan = 1\nreview = 2\n",
            3,
            "unknown key \"review\"",
        );
    }

    #[test]
    fn g17_user_keys_in_the_project_file_are_errors_at_any_depth() {
        for key in USER_KEYS {
            project_error(
                &format!("angles = [\"checks\"]\n{key} = 1\n"),
                2,
                "must never choose what runs on your machine",
            );
        }
        project_error(
            "[[reviewers]]\npreset = \"command\"\n",
            1,
            "reviewers is a user setting",
        );
        project_error("[caps]\ncode = 1\nmodel = \"x\"\n", 3, "caps.model");
        project_error("[a.b]\nc.argv = [\"sh\"]\n", 2, "a.b.c.argv");
        project_error(
            "check_paths = [\n  { binary = \"x\" },\n]\n",
            2,
            "check_paths[0].binary",
        );
        project_error("x = [[{ allowed_whatever = 1 }]]\n", 1, "allowed_whatever");
        project_error("\n\"timeout_seconds\" = 5\n", 2, "timeout_seconds");
        project_error("[caps]\nallowed_models = []\n", 2, "caps.allowed_models");
    }

    #[test]
    fn g17_full_toml_1_0_is_accepted() {
        let fx = Fx::new();
        let (env, _) = fx.user(
            "# comment\n'timeout_seconds' = 1_200\nreviewers = [\n  { preset = 'claude', model = '''opus''' },\n  { preset = \"codex\", allowed_efforts = [\"low\", \"high\",] },\n]\n",
        );
        let cfg = load(&env);
        assert_eq!(cfg.timeout_seconds.value, 1200);
        assert_eq!(names(&cfg), ["claude", "codex"]);
        assert_eq!(cfg.reviewers.value[0].model.as_ref().unwrap().value, "opus");

        let (env, _) = fx.project("caps.code = 5\ncaps.plan = 0x1\n");
        let cfg = load(&env);
        assert_eq!((cfg.caps.code.value, cfg.caps.plan.value), (5, 1));
    }

    #[test]
    fn g17_values_of_the_wrong_type_are_errors() {
        user_error("timeout_seconds = 1979-05-27T07:32:00Z\n", 1, "date-time");
        user_error("reviewers = \"claude\"\n", 1, "array of tables");
        user_error("reviewers = [\"claude\"]\n", 1, "must be a table");
        user_error(
            "[[reviewers]]\npreset = \"claude\"\nbinary = 1\n",
            3,
            "binary must be a string",
        );
        user_error(
            "[[reviewers]]\npreset = \"claude\"\nname = true\n",
            3,
            "name must be a string",
        );
        project_error("angles = \"checks\"\n", 1, "array of strings");
        project_error("caps = 3\n", 1, "caps must be a table");
        project_error("check_paths = \"checks/**\"\n", 1, "array of strings");
        project_error(
            "rules = [\n\"AGENTS.md\", 2]\n",
            1,
            "rules item 2 must be a string",
        );
    }

    // ---- G18: clean-review config.json --------------------------------------------------------

    #[test]
    fn g18_not_an_object_is_an_error() {
        for text in ["null", "[]", "\"claude\"", "1", "true"] {
            let fx = Fx::new();
            let (env, path) = fx.clean_review(text);
            assert_config_error(&load_err(&env), &path, 1, "must be a JSON object");
        }
        let fx = Fx::new();
        let (env, path) = fx.clean_review("{\n  \"reviewers\": [\n");
        assert_config_error(&load_err(&env), &path, 3, "JSON");
        let (env, path) = fx.clean_review("");
        assert_config_error(&load_err(&env), &path, 1, "JSON");
    }

    #[test]
    fn g18_without_reviewers_the_default_list() {
        let fx = Fx::new();
        let (env, path) = fx.clean_review("{\"model\": \"x\", \"other\": [1, {\"a\": null}]}");
        let cfg = load(&env);
        assert_eq!(cfg.user_source, Some((Source::CleanReviewXdg, path)));
        assert_eq!(names(&cfg), ["claude", "codex"]);
        assert_eq!(cfg.reviewers.origin, Origin::Default);
        assert_eq!(cfg.timeout_seconds.value, DEFAULT_TIMEOUT_SECONDS);
    }

    #[test]
    fn g18_reviewers_must_be_an_array() {
        for (text, line) in [
            ("{\n\"reviewers\": null}", 2),
            ("{\"a\": 1,\n\n  \"reviewers\": \"claude\"}", 3),
            ("{\"reviewers\": {\"claude\": true}}", 1),
        ] {
            let fx = Fx::new();
            let (env, path) = fx.clean_review(text);
            assert_config_error(&load_err(&env), &path, line, "must be an array of strings");
        }
    }

    #[test]
    fn g18_items_must_be_strings() {
        let fx = Fx::new();
        let (env, path) =
            fx.clean_review("{\"reviewers\": [\n  \"claude\",\n  {\"x\": \"[\"},\n  null\n]}");
        assert_config_error(
            &load_err(&env),
            &path,
            3,
            "item 2 must be a string, not an object",
        );
        let (env, path) = fx.clean_review("{\"reviewers\": [\"claude\", null]}");
        assert_config_error(&load_err(&env), &path, 1, "not null");
    }

    #[test]
    fn g18_names_are_trimmed_and_empty_ones_skipped() {
        let fx = Fx::new();
        let (env, path) = fx.clean_review(
            "{\"reviewers\": [\n \" claude \",\n \"\",\n \"\\t\",\n \"agy\\n\",\n \"native\"\n]}",
        );
        let cfg = load(&env);
        assert_eq!(names(&cfg), ["claude", "agy", "native"]);
        assert_eq!(cfg.reviewers.value[1].preset.origin, file_origin(&path, 5));
        assert_eq!(cfg.reviewers.value[2].preset.origin, file_origin(&path, 6));
        assert_eq!(cfg.reviewers.origin, file_origin(&path, 1));
    }

    #[test]
    fn g18_unknown_and_repeated_names_are_errors() {
        for (text, needle) in [
            ("{\"reviewers\": [\"command\"]}", "\"command\""),
            ("{\"reviewers\": [\"Claude\"]}", "\"Claude\""),
            ("{\"reviewers\": [\"gpt\"]}", "\"gpt\""),
            ("{\"reviewers\": [\"codex\", \" codex\"]}", "named twice"),
        ] {
            let fx = Fx::new();
            let (env, path) = fx.clean_review(text);
            assert_config_error(&load_err(&env), &path, 1, needle);
        }
    }

    #[test]
    fn g18_all_empty_gives_one_native() {
        for text in ["{\"reviewers\": []}", "{\"reviewers\": [\"\", \"  \"]}"] {
            let fx = Fx::new();
            let (env, _) = fx.clean_review(text);
            let cfg = load(&env);
            assert_eq!(names(&cfg), ["native"]);
            assert_eq!(presets(&cfg), [Preset::Native]);
        }
    }

    #[test]
    fn g18_used_only_when_no_toml_user_file_exists() {
        let fx = Fx::new();
        fx.clean_review("this is not JSON");
        let toml = fx.write(
            "home/.config/jaekit/spar.toml",
            "[[reviewers]]\npreset = \"agy\"\n",
        );
        let cfg = load(&fx.env());
        assert_eq!(cfg.user_source, Some((Source::HomeToml, toml)));
        assert_eq!(cfg.files.len(), 1);
    }

    #[test]
    fn g18_last_duplicate_key_is_the_one_read() {
        let fx = Fx::new();
        let (env, path) = fx.clean_review("{\"reviewers\": [\"claude\"],\n \"reviewers\": [\n 5]}");
        assert_config_error(&load_err(&env), &path, 3, "item 1 must be a string");
    }

    // ---- G19: timeouts ---------------------------------------------------------------------

    #[test]
    fn g19_default_is_900_seconds() {
        let fx = Fx::new();
        let cfg = load(&fx.env());
        assert_eq!(cfg.timeout_seconds, Sourced::default_value(900));
        assert!(cfg
            .reviewers
            .value
            .iter()
            .all(|r| r.timeout_seconds == Sourced::default_value(900)));
    }

    #[test]
    fn g19_top_level_applies_to_the_default_list() {
        let fx = Fx::new();
        let (env, path) = fx.user("\ntimeout_seconds = 120\n");
        let cfg = load(&env);
        assert_eq!(names(&cfg), ["claude", "codex"]);
        for r in &cfg.reviewers.value {
            assert_eq!(r.timeout_seconds.value, 120);
            assert_eq!(r.timeout_seconds.origin, file_origin(&path, 2));
        }
    }

    #[test]
    fn g19_reviewer_value_overrides_the_top_level() {
        let fx = Fx::new();
        let (env, path) = fx.user(
            "timeout_seconds = 120\n[[reviewers]]\npreset = \"claude\"\ntimeout_seconds = 30\n[[reviewers]]\npreset = \"codex\"\n",
        );
        let cfg = load(&env);
        let t: Vec<u64> = cfg
            .reviewers
            .value
            .iter()
            .map(|r| r.timeout_seconds.value)
            .collect();
        assert_eq!(t, [30, 120]);
        assert_eq!(
            cfg.reviewers.value[0].timeout_seconds.origin,
            file_origin(&path, 4)
        );
        // A preset picked by --reviewers takes the file's top-level value.
        let run = select(&cfg, Some("claude,agy"), &[], &[]).unwrap();
        assert_eq!(run[1].timeout_seconds(), 120);
        assert_eq!(run[0].timeout_seconds(), 30);
    }

    #[test]
    fn g19_empty_reviewers_list_gives_native_with_the_top_level() {
        let fx = Fx::new();
        let (env, _) = fx.user("timeout_seconds = 45\nreviewers = []\n");
        let cfg = load(&env);
        assert_eq!(presets(&cfg), [Preset::Native]);
        assert_eq!(cfg.reviewers.value[0].timeout_seconds.value, 45);
        // --reviewers "" gives native with it too.
        let (env, _) = fx.user("timeout_seconds = 46\n");
        let run = select(&load(&env), Some(""), &[], &[]).unwrap();
        assert_eq!(run[0].timeout_seconds(), 46);
    }

    #[test]
    fn g19_zero_negative_and_non_integers_are_errors() {
        for value in ["0", "-5", "1.5", "\"900\"", "true", "inf", "[1]"] {
            user_error(
                &format!("\ntimeout_seconds = {value}\n"),
                2,
                "timeout_seconds must be a positive integer",
            );
            user_error(
                &format!("[[reviewers]]\npreset = \"claude\"\n\ntimeout_seconds = {value}\n"),
                4,
                "timeout_seconds must be a positive integer",
            );
        }
    }

    // ---- G20: reviewer names -----------------------------------------------------------------

    #[test]
    fn g20_name_syntax() {
        let max = format!("a{}", "b".repeat(63));
        for ok in ["a", "9", "A.b_c-d", "claude-2", max.as_str(), "x.."] {
            assert_eq!(check_name(ok), Ok(()), "{ok}");
        }
        let long = format!("a{}", "b".repeat(64));
        for bad in [
            "",
            ".a",
            "-a",
            "_a",
            "a b",
            "é",
            "a/b",
            "a\n",
            "a,b",
            long.as_str(),
            " a",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        user_error(
            "[[reviewers]]\npreset = \"claude\"\nname = \"-x\"\n",
            3,
            "name \"-x\"",
        );
        user_error(
            &format!("[[reviewers]]\nname = \"{long}\"\npreset = \"claude\"\n"),
            2,
            "1 to 64",
        );
    }

    #[test]
    fn g20_name_defaults_to_the_preset() {
        let fx = Fx::new();
        let (env, path) = fx.user(
            "[[reviewers]]\npreset = \"agy\"\n[[reviewers]]\nname = \"lint\"\npreset = \"command\"\nargv = [\"x\"]\n",
        );
        let cfg = load(&env);
        assert_eq!(names(&cfg), ["agy", "lint"]);
        assert_eq!(cfg.reviewers.value[0].name.origin, Origin::Default);
        assert_eq!(cfg.reviewers.value[1].name.origin, file_origin(&path, 4));
    }

    #[test]
    fn g20_names_must_differ_ignoring_case() {
        user_error(
            "[[reviewers]]\npreset = \"claude\"\n[[reviewers]]\nname = \"Claude\"\npreset = \"codex\"\n",
            4,
            "repeats \"claude\"",
        );
        user_error(
            "[[reviewers]]\npreset = \"codex\"\n[[reviewers]]\npreset = \"codex\"\n",
            3,
            "repeats \"codex\"",
        );
        user_error(
            "[[reviewers]]\nname = \"a\"\npreset = \"claude\"\n[[reviewers]]\npreset = \"codex\"\nname = \"A\"\n",
            6,
            "names must differ ignoring case",
        );
    }

    #[test]
    fn g20_reserved_names_are_errors() {
        for reserved in RESERVED_NAMES {
            for name in [
                reserved.to_owned(),
                format!("{reserved}.tmp"),
                reserved.to_ascii_uppercase(),
                format!("{}.TMP", reserved.to_ascii_uppercase()),
            ] {
                assert!(check_name(&name).is_err(), "{name}");
                user_error(
                    &format!("[[reviewers]]\npreset = \"claude\"\nname = \"{name}\"\n"),
                    3,
                    "reserved",
                );
            }
        }
        assert_eq!(check_name("workspace2"), Ok(()));
        assert_eq!(check_name("summary.md.tmp.x"), Ok(()));
    }

    // ---- G21: presets and their keys -----------------------------------------------------------

    #[test]
    fn g21_preset_is_required_and_one_of_five() {
        user_error("[[reviewers]]\nname = \"a\"\n", 1, "has no preset");
        user_error("x = 1\n", 1, "unknown key");
        user_error(
            "[[reviewers]]\n\npreset = \"Claude\"\n",
            3,
            "unknown preset \"Claude\"",
        );
        user_error("[[reviewers]]\npreset = \"gpt\"\n", 2, "unknown preset");
        user_error("[[reviewers]]\npreset = 1\n", 2, "preset must be a string");
        user_error("[[reviewers]]\npreset = \"\"\n", 2, "unknown preset");
    }

    #[test]
    fn g21_keys_of_other_presets_are_errors() {
        let cases = [
            ("claude", "argv = [\"x\"]", "argv"),
            ("native", "argv = [\"x\"]", "argv"),
            ("native", "binary = \"x\"", "binary"),
            ("command", "binary = \"x\"", "binary"),
            ("native", "model = \"x\"", "model"),
            ("command", "fallback_model = \"x\"", "fallback_model"),
            ("agy", "effort = \"high\"", "effort"),
            ("native", "effort = \"high\"", "effort"),
            ("native", "allowed_models = [\"x\"]", "allowed_models"),
            ("command", "allowed_models = [\"x\"]", "allowed_models"),
            ("agy", "allowed_efforts = [\"x\"]", "allowed_efforts"),
        ];
        for (preset, line, key) in cases {
            let argv = if preset == "command" {
                "argv = [\"x\"]\n"
            } else {
                ""
            };
            user_error(
                &format!("[[reviewers]]\npreset = \"{preset}\"\n{argv}{line}\n"),
                if argv.is_empty() { 3 } else { 4 },
                &format!("{key} does not apply to preset \"{preset}\""),
            );
        }
    }

    #[test]
    fn g21_argv_rules() {
        user_error(
            "[[reviewers]]\nname = \"lint\"\npreset = \"command\"\n",
            3,
            "needs argv",
        );
        user_error(
            "[[reviewers]]\npreset = \"command\"\nargv = []\n",
            3,
            "argv must not be empty",
        );
        user_error(
            "[[reviewers]]\npreset = \"command\"\nargv = [\"x\", \"\"]\n",
            3,
            "argv item 2 \"\": is empty",
        );
        user_error(
            "[[reviewers]]\npreset = \"command\"\nargv = [\"x\", 1]\n",
            3,
            "must be a string",
        );
        user_error(
            "[[reviewers]]\npreset = \"command\"\nargv = \"x\"\n",
            3,
            "array of strings",
        );
    }

    #[test]
    fn g21_empty_values() {
        user_error(
            "[[reviewers]]\npreset = \"codex\"\nmodel = \"\"\n",
            3,
            "model must not be empty",
        );
        let fx = Fx::new();
        let (env, _) = fx.user(
            "[[reviewers]]\npreset = \"claude\"\nbinary = \"\"\nfallback_model = \"\"\neffort = \"\"\n",
        );
        let cfg = load(&env);
        let r = &cfg.reviewers.value[0];
        assert_eq!(r.executable(), Some("claude"));
        assert_eq!(r.fallback_model(), None);
        assert_eq!(r.effort(), None);
        let run = select(&cfg, None, &[], &[]).unwrap();
        assert_eq!(run[0].effort, None);
        assert_eq!(run[0].fallback_model(), None);
    }

    #[test]
    fn g21_values_are_kept() {
        let fx = Fx::new();
        let (env, path) = fx.user(
            "[[reviewers]]\npreset = \"codex\"\nbinary = \"/usr/local/bin/codex\"\nmodel = \"gpt-5\"\nfallback_model = \"gpt-5-mini\"\neffort = \"high\"\n[[reviewers]]\npreset = \"agy\"\nallowed_models = [\"a\", \"B.2\"]\n",
        );
        let cfg = load(&env);
        let r = &cfg.reviewers.value[0];
        assert_eq!(r.executable(), Some("/usr/local/bin/codex"));
        assert_eq!(r.fallback_model(), Some("gpt-5-mini"));
        assert_eq!(r.effort(), Some("high"));
        assert_eq!(r.model.as_ref().unwrap().origin, file_origin(&path, 4));
        let run = select(&cfg, None, &[], &[]).unwrap();
        assert_eq!(run[0].model.as_ref().unwrap().value, "gpt-5");
        assert_eq!(run[0].effort.as_ref().unwrap().value, "high");
        assert_eq!(
            cfg.reviewers.value[1]
                .allowed_models
                .as_ref()
                .unwrap()
                .value,
            ["a", "B.2"]
        );
    }

    #[test]
    fn g21_allowed_lists() {
        for (preset, key) in [
            ("claude", "allowed_models"),
            ("agy", "allowed_models"),
            ("codex", "allowed_efforts"),
        ] {
            let head = format!("[[reviewers]]\npreset = \"{preset}\"\n");
            user_error(&format!("{head}{key} = []\n"), 3, "must not be empty");
            user_error(&format!("{head}{key} = [1]\n"), 3, "must be a string");
            user_error(&format!("{head}{key} = \"x\"\n"), 3, "array of strings");
            for (bad, why) in [
                ("a b", "whitespace"),
                ("-x", "starts with -"),
                ("", "is empty"),
                ("a\\u0007", "control"),
                ("a\\u00a0", "whitespace"),
            ] {
                user_error(&format!("{head}{key} = [\"ok\", \"{bad}\"]\n"), 3, why);
            }
        }
    }

    #[test]
    fn g21_fixed_value_and_allowed_list_together_are_errors() {
        user_error(
            "[[reviewers]]\npreset = \"claude\"\nmodel = \"opus\"\nallowed_models = [\"opus\"]\n",
            4,
            "allowed_models cannot be combined with model",
        );
        user_error(
            "[[reviewers]]\npreset = \"codex\"\nallowed_efforts = [\"low\"]\neffort = \"low\"\n",
            3,
            "allowed_efforts cannot be combined with effort",
        );
        // An empty effort is written too.
        user_error(
            "[[reviewers]]\npreset = \"codex\"\neffort = \"\"\nallowed_efforts = [\"low\"]\n",
            4,
            "cannot be combined",
        );
    }

    #[test]
    fn g21_argv_substitution() {
        let values = Placeholders {
            prompt: OsStr::new("/w/lint/input.md"),
            workspace: OsStr::new("/w/{schema}"),
            schema: OsStr::new("/w/schema.json"),
        };
        let argv: Vec<String> = [
            "./tools/review",
            "--prompt={prompt}",
            "{workspace}",
            "{schema}{schema}",
            "{other} {prompt",
            "{{prompt}}",
            "{}",
        ]
        .map(String::from)
        .to_vec();
        let out = substitute_argv(&argv, &values);
        let expected = [
            "./tools/review",
            "--prompt=/w/lint/input.md",
            "/w/{schema}",
            "/w/schema.json/w/schema.json",
            "{other} {prompt",
            "{/w/lint/input.md}",
            "{}",
        ];
        assert_eq!(out, expected.map(OsString::from));
    }

    // ---- G22: caps and angles ---------------------------------------------------------------

    #[test]
    fn g22_caps() {
        let fx = Fx::new();
        let (env, path) = fx.project("[caps]\nplan = 0\ncode = 7\n");
        let cfg = load(&env);
        assert_eq!(
            cfg.caps.plan,
            Sourced {
                value: 0,
                origin: file_origin(&path, 2)
            }
        );
        assert_eq!(
            cfg.caps.plan_delta,
            Sourced::default_value(DEFAULT_CAP_PLAN_DELTA)
        );
        assert_eq!(cfg.caps.code.value, 7);
        project_error(
            "[caps]\nplan = -1\n",
            2,
            "caps.plan must be an integer of 0 or more",
        );
        project_error("[caps]\n\nplan_delta = 1.0\n", 3, "caps.plan_delta");
        project_error("[caps]\ncode = \"3\"\n", 2, "caps.code");
        project_error("[caps]\ncode = 3\nstage = 1\n", 3, "unknown key \"stage\"");
    }

    #[test]
    fn g22_angles() {
        let fx = Fx::new();
        let (env, path) = fx.project("angles = [\"security\", \"correctness\", \"checks\"]\n");
        let cfg = load(&env);
        assert_eq!(
            cfg.angles,
            Sourced {
                value: vec![Angle::Correctness, Angle::Checks, Angle::Security],
                origin: file_origin(&path, 1)
            }
        );
        project_error("angles = []\n", 1, "at least one angle");
        project_error(
            "\nangles = [\"checks\", \"style\"]\n",
            2,
            "item 2 \"style\": unknown angle",
        );
        project_error("angles = [\"Checks\"]\n", 1, "unknown angle");
        project_error("angles = [\"checks\", \"checks\"]\n", 1, "twice");
        project_error("angles = [1]\n", 1, "must be a string");
    }

    // ---- G23: rules --------------------------------------------------------------------------

    #[test]
    fn g23_rules_inside_the_repository() {
        let fx = Fx::new();
        fx.write("work/AGENTS.md", "rules\n");
        fx.write("work/docs/rules.md", "more\n");
        symlink("../AGENTS.md", fx.work().join("docs/link.md")).unwrap();
        let (env, path) = fx.project(
            "rules = [\n  \"AGENTS.md\",\n  \"./docs//rules.md\",\n  \"docs/../AGENTS.md\",\n  \"docs/link.md\",\n]\n",
        );
        let cfg = load(&env);
        let names: Vec<&str> = cfg.rules.iter().map(|r| r.value.name.as_str()).collect();
        assert_eq!(
            names,
            ["AGENTS.md", "docs/rules.md", "AGENTS.md", "docs/link.md"]
        );
        let agents = fs::canonicalize(fx.work().join("AGENTS.md")).unwrap();
        assert_eq!(cfg.rules[3].value.path, agents);
        assert_eq!(cfg.rules[0].origin, file_origin(&path, 1));
    }

    #[test]
    fn g23_rules_out_of_form() {
        let fx = Fx::new();
        fx.write("work/AGENTS.md", "rules\n");
        fx.write("outside.md", "x\n");
        fs::create_dir_all(fx.work().join("docs")).unwrap();
        symlink(fx.root().join("outside.md"), fx.work().join("out.md")).unwrap();
        symlink(fx.work().join("gone.md"), fx.work().join("broken.md")).unwrap();
        let abs = fx.work().join("AGENTS.md");
        let cases = [
            ("", "is empty"),
            (abs.to_str().unwrap(), "absolute"),
            ("../outside.md", "leaves the repository"),
            ("docs/../../outside.md", "leaves the repository"),
            ("out.md", "outside the repository"),
            ("missing.md", "does not exist"),
            ("broken.md", "broken symbolic link"),
            ("docs", "a folder"),
            (".", "a folder"),
        ];
        for (item, why) in cases {
            let path = fx.write(
                "work/.jaekit/spar.toml",
                &format!("angles = [\"checks\"]\nrules = [\"AGENTS.md\", \"{item}\"]\n"),
            );
            let e = load_err(&fx.env());
            assert_config_error(&e, &path, 2, &format!("rules item 2 {}", quote(item)));
            assert!(e.message.contains(why), "{item}: {}", e.message);
        }
    }

    #[test]
    fn g23_unreadable_rule_file() {
        let fx = Fx::new();
        let file = fx.write("work/secret.md", "x\n");
        set_mode(&file, 0o000);
        // Tests usually run as root, who reads the file anyway: then there is nothing to check.
        if fs::read(&file).is_ok() {
            return;
        }
        let (env, path) = fx.project("rules = [\"secret.md\"]\n");
        assert_config_error(&load_err(&env), &path, 1, "cannot be read");
    }

    #[test]
    fn g23_rule_that_is_a_fifo_is_an_error() {
        let fx = Fx::new();
        mkfifo(&fx.work().join("pipe.md"));
        let (env, path) = fx.project("rules = [\"pipe.md\"]\n");
        assert_config_error(&load_err(&env), &path, 1, "a FIFO");
    }

    // ---- G24: check paths --------------------------------------------------------------------

    #[test]
    fn g24_check_paths_accepted() {
        let fx = Fx::new();
        let (env, path) = fx.project(
            "check_paths = [\"checks/**\", \"tests/\", \"**\", \"a/[abc]/*.py\", \"x\\\\*y\", \"[^a-c]?\", \"a/**b/c\", \"[\\\\]]\"]\n",
        );
        let cfg = load(&env);
        let globs: Vec<&str> = cfg.check_paths.iter().map(|c| c.value.as_str()).collect();
        assert_eq!(
            globs,
            [
                "checks/**",
                "tests/",
                "**",
                "a/[abc]/*.py",
                "x\\*y",
                "[^a-c]?",
                "a/**b/c",
                "[\\]]"
            ]
        );
        assert_eq!(cfg.check_paths[0].origin, file_origin(&path, 1));
    }

    #[test]
    fn g24_check_paths_out_of_form() {
        for (glob, why) in [
            ("", "is empty"),
            ("/checks/**", "absolute"),
            ("/", "absolute"),
            ("..", "leaves the repository"),
            ("checks/../x", "leaves the repository"),
            ("a/[bc", "not a valid pattern"),
            ("a/b\\\\", "ends with an unescaped"),
            ("[]", "not a valid pattern"),
            ("[a-]", "not a valid pattern"),
            ("[-a]", "not a valid pattern"),
            ("[^]", "not a valid pattern"),
            ("[\\\\", "not a valid pattern"),
        ] {
            project_error(
                &format!("angles = [\"checks\"]\ncheck_paths = [\"ok/**\", \"{glob}\"]\n"),
                2,
                why,
            );
        }
    }

    #[test]
    fn g24_check_path_option_is_refused_or_added() {
        let fx = Fx::new();
        fx.project("check_paths = [\"checks/**\"]\n");
        let mut cfg = load(&fx.env());
        let before = cfg.digest();
        for bad in ["", "/abs", "a/../b", "a/[b", "a\\"] {
            let e = cfg.add_check_paths(&[bad.to_owned()]).unwrap_err();
            assert_eq!(e.kind, Kind::Refused, "{bad}");
            assert!(e.message.starts_with("--check-path "), "{}", e.message);
            assert!(e.message.contains(&quote(bad)), "{}", e.message);
        }
        assert_eq!(cfg.digest(), before);
        cfg.add_check_paths(&["tests/**".to_owned()]).unwrap();
        assert_eq!(cfg.check_paths.len(), 2);
        assert_eq!(cfg.check_paths[1].origin, Origin::Flag("--check-path"));
        assert_ne!(cfg.digest(), before);
        assert_eq!(
            cfg.applied_values()["check_paths"],
            json!(["checks/**", "tests/**"])
        );
    }

    // ---- G25: --reviewers, --model, --effort --------------------------------------------------

    fn cfg_with(user: &str) -> Config {
        let fx = Fx::new();
        let (env, _) = fx.user(user);
        load(&env)
    }

    fn run_names(run: &[SelectedReviewer]) -> Vec<&str> {
        run.iter().map(SelectedReviewer::name).collect()
    }

    const USER: &str = r#"
timeout_seconds = 300

[[reviewers]]
name = "opus"
preset = "claude"
allowed_models = ["opus", "sonnet"]
allowed_efforts = ["high", "max"]

[[reviewers]]
preset = "codex"
model = "gpt-5"

[[reviewers]]
name = "lint"
preset = "command"
argv = ["lint", "{prompt}"]

[[reviewers]]
name = "gem"
preset = "agy"
"#;

    fn user_cfg() -> Config {
        cfg_with(USER)
    }

    #[test]
    fn g25_reviewers_default_to_the_configured_list() {
        let cfg = user_cfg();
        let run = select(&cfg, None, &[], &[]).unwrap();
        assert_eq!(run_names(&run), ["opus", "codex", "lint", "gem"]);
        assert!(run.iter().all(|s| s.configured));
    }

    #[test]
    fn g25_reviewers_list_is_split_trimmed_and_empty_items_skipped() {
        let cfg = user_cfg();
        let run = select(&cfg, Some(" gem , ,codex,,"), &[], &[]).unwrap();
        assert_eq!(run_names(&run), ["gem", "codex"]);
        for empty in ["", ",", " , ", ",,,"] {
            let run = select(&cfg, Some(empty), &[], &[]).unwrap();
            assert_eq!(run_names(&run), ["native"], "{empty:?}");
            assert_eq!(run[0].preset(), Preset::Native);
            assert_eq!(run[0].timeout_seconds(), 300);
        }
    }

    #[test]
    fn g25_configured_name_first_then_preset() {
        let cfg =
            cfg_with("[[reviewers]]\nname = \"claude\"\npreset = \"command\"\nargv = [\"x\"]\n");
        let run = select(&cfg, Some("claude,codex,agy,native"), &[], &[]).unwrap();
        assert_eq!(run[0].preset(), Preset::Command);
        assert!(run[0].configured);
        assert_eq!(
            run[1..]
                .iter()
                .map(SelectedReviewer::preset)
                .collect::<Vec<_>>(),
            [Preset::Codex, Preset::Agy, Preset::Native]
        );
        assert!(!run[1].configured);
        assert_eq!(run[1].reviewer.preset.origin, Origin::Flag("--reviewers"));
    }

    fn reviewers_error(cfg: &Config, list: &str, needle: &str) {
        let e = select(cfg, Some(list), &[], &[]).unwrap_err();
        assert_eq!(e.kind, Kind::Refused, "{list}: {e}");
        assert!(e.message.starts_with("--reviewers: "), "{}", e.message);
        assert!(e.message.contains(needle), "{list}: {}", e.message);
        assert!(e.hint.is_some());
    }

    #[test]
    fn g25_reviewers_out_of_form_are_configuration_errors() {
        let cfg = user_cfg();
        reviewers_error(
            &cfg,
            "command",
            "neither a configured reviewer nor a preset",
        );
        reviewers_error(&cfg, "gpt", "neither a configured reviewer nor a preset");
        reviewers_error(&cfg, "Opus", "neither");
        reviewers_error(&cfg, "CLAUDE", "neither");
        reviewers_error(&cfg, "a b", "1 to 64");
        reviewers_error(&cfg, "-x", "1 to 64");
        reviewers_error(&cfg, "opus,codex,OPUS", "\"OPUS\" repeats \"opus\"");
        reviewers_error(&cfg, "codex, codex", "repeats");
        reviewers_error(&cfg, "summary.md", "reserved");
        reviewers_error(&cfg, "Workspace.TMP", "reserved");
        let e = select_os(&cfg, Some(OsStr::from_bytes(b"opus,\xffx")), &[], &[]).unwrap_err();
        assert_eq!(e.kind, Kind::Refused);
        assert!(e.message.contains("\"\\xffx\""), "{}", e.message);
    }

    fn models(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn g25_model_and_effort_are_applied_unchanged() {
        let cfg = user_cfg();
        let run = select(
            &cfg,
            Some("opus,agy,claude"),
            &models(&["opus=sonnet", "agy=gemini-3=pro", "claude=x.y/z"]),
            &models(&["opus=max", "claude=high"]),
        )
        .unwrap();
        assert_eq!(run[0].model.as_ref().unwrap().value, "sonnet");
        assert_eq!(
            run[0].model.as_ref().unwrap().origin,
            Origin::Flag("--model")
        );
        assert_eq!(run[0].effort.as_ref().unwrap().value, "max");
        assert_eq!(run[1].model.as_ref().unwrap().value, "gemini-3=pro");
        assert_eq!(run[2].model.as_ref().unwrap().value, "x.y/z");
        assert_eq!(run[2].effort.as_ref().unwrap().value, "high");
        // The codex entry keeps its configured model.
        let run = select(&cfg, None, &[], &[]).unwrap();
        assert_eq!(run[1].model.as_ref().unwrap().value, "gpt-5");
        assert_eq!(run[0].model, None);
    }

    #[test]
    fn g25_missing_equals_or_name_is_a_usage_error() {
        let cfg = user_cfg();
        for (m, e) in [
            (vec!["opus"], vec![]),
            (vec!["=sonnet"], vec![]),
            (vec![], vec!["high"]),
            (vec![], vec!["=high"]),
            (vec![""], vec![]),
        ] {
            let err = select(&cfg, Some("no such"), &models(&m), &models(&e)).unwrap_err();
            assert_eq!(err.kind, Kind::Usage, "{m:?} {e:?}: {err}");
            assert_eq!(err.kind.exit_code(), 64);
        }
    }

    fn refusal(cfg: &Config, list: Option<&str>, m: &[&str], e: &[&str], needle: &str) {
        let err = select(cfg, list, &models(m), &models(e)).unwrap_err();
        assert_eq!(err.kind, Kind::Refused, "{m:?} {e:?}: {err}");
        assert!(
            !err.message.contains(": 1:"),
            "a refusal names no file: {}",
            err.message
        );
        assert!(err.message.contains(needle), "{m:?} {e:?}: {}", err.message);
    }

    #[test]
    fn g25_refusals() {
        let cfg = user_cfg();
        // A key the user file sets.
        refusal(&cfg, None, &["codex=o3"], &[], "the user file sets model");
        // A preset without that key.
        refusal(
            &cfg,
            None,
            &["lint=x"],
            &[],
            "preset \"command\" takes no model",
        );
        refusal(
            &cfg,
            Some("native"),
            &["native=x"],
            &[],
            "preset \"native\" takes no model",
        );
        refusal(
            &cfg,
            None,
            &[],
            &["gem=high"],
            "preset \"agy\" takes no effort",
        );
        // A name not in this run (configured but not selected; case differs; unknown).
        refusal(
            &cfg,
            Some("codex"),
            &["opus=sonnet"],
            &[],
            "no reviewer of this run",
        );
        refusal(&cfg, None, &["Opus=sonnet"], &[], "no reviewer of this run");
        refusal(&cfg, None, &["nobody=x"], &[], "\"nobody\"");
        // The same key twice for one reviewer.
        refusal(
            &cfg,
            None,
            &["opus=opus", "opus=sonnet"],
            &[],
            "given twice",
        );
        refusal(&cfg, None, &[], &["opus=high", "opus=high"], "given twice");
        // Outside the allowed list (exact, case included).
        refusal(&cfg, None, &["opus=Opus"], &[], "not in allowed_models");
        refusal(&cfg, None, &[], &["opus=low"], "not in allowed_efforts");
        // Values out of form, shown with %q.
        for (value, shown, why) in [
            ("", "\"\"", "is empty"),
            ("-x", "\"-x\"", "starts with -"),
            ("a b", "\"a b\"", "whitespace"),
            ("a\tb", "\"a\\tb\"", "whitespace"),
            ("a\u{1b}b", "\"a\\x1bb\"", "control"),
            ("a\u{a0}b", "\"a\\u00a0b\"", "whitespace"),
        ] {
            let m = format!("claude={value}");
            refusal(&cfg, Some("claude"), &[m.as_str()], &[], why);
            refusal(
                &cfg,
                Some("claude"),
                &[m.as_str()],
                &[],
                &format!("reviewer \"claude\" with value {shown}"),
            );
        }
    }

    #[test]
    fn g25_written_empty_effort_still_refuses_effort() {
        let cfg = cfg_with("[[reviewers]]\npreset = \"claude\"\neffort = \"\"\n");
        refusal(
            &cfg,
            None,
            &[],
            &["claude=high"],
            "the user file sets effort",
        );
    }

    #[test]
    fn g25_value_that_is_not_utf8_is_refused() {
        let cfg = user_cfg();
        let m = [OsString::from_vec(b"opus=\xffx".to_vec())];
        let err = select_os(&cfg, None, &m, &[]).unwrap_err();
        assert_eq!(err.kind, Kind::Refused);
        assert!(err.message.contains("\"\\xffx\""), "{}", err.message);
        assert!(err.message.contains("not valid UTF-8"), "{}", err.message);
        // A name that is not UTF-8 matches no reviewer.
        let m = [OsString::from_vec(b"\xff=x".to_vec())];
        let err = select_os(&cfg, None, &m, &[]).unwrap_err();
        assert_eq!(err.kind, Kind::Refused);
        assert!(err.message.contains("\"\\xff\""), "{}", err.message);
    }

    // ---- Effective configuration ---------------------------------------------------------------

    #[test]
    fn effective_json_shows_values_origins_sources_and_digest() {
        let fx = Fx::new();
        let (env, user) =
            fx.user("timeout_seconds = 60\n[[reviewers]]\npreset = \"claude\"\nmodel = \"opus\"\n");
        fx.write("work/AGENTS.md", "x\n");
        let project = fx.write(
            "work/.jaekit/spar.toml",
            "rules = [\"AGENTS.md\"]\n[caps]\ncode = 5\n",
        );
        let cfg = load(&env);
        let j = cfg.effective_json();
        assert_eq!(j["schema"], "spar-config/v1");
        assert_eq!(j["digest"], json!(cfg.digest()));
        assert_eq!(j["sources"]["user"]["source"], "SPAR_CONFIG");
        assert_eq!(j["sources"]["project"]["present"], true);
        assert_eq!(j["files"][1]["path"], json!(project.display().to_string()));
        assert_eq!(j["timeout_seconds"]["value"], 60);
        assert_eq!(
            j["timeout_seconds"]["from"],
            json!(format!("{}:1", user.display()))
        );
        let r = &j["reviewers"]["list"][0];
        assert_eq!(r["name"], json!({"value": "claude", "from": "default"}));
        assert_eq!(r["model"]["from"], json!(format!("{}:4", user.display())));
        assert_eq!(r["timeout_seconds"]["value"], 60);
        assert_eq!(j["caps"]["code"]["value"], 5);
        assert_eq!(j["caps"]["plan"], json!({"value": 2, "from": "default"}));
        assert_eq!(j["rules"][0]["value"], "AGENTS.md");
        assert_eq!(j["angles"]["from"], "default");

        // The digest is the sha256 of the applied values alone.
        assert_eq!(
            cfg.digest(),
            sha256_hex(cfg.applied_values().to_string().as_bytes())
        );
        let applied = cfg.applied_values().to_string();
        assert!(!applied.contains(&fx.root().display().to_string()));

        let text = cfg.render_text();
        assert!(text.contains("timeout_seconds = 60 ("), "{text}");
        assert!(text.contains("caps.plan = 2 (default)"), "{text}");
        assert!(text.contains(&cfg.digest()), "{text}");
        assert!(text.contains("model = \"opus\""), "{text}");
    }

    #[test]
    fn effective_json_lists_skipped_sources() {
        let fx = Fx::new();
        let cfg = load(&fx.env());
        let j = cfg.effective_json();
        assert_eq!(j["sources"]["user"], Value::Null);
        assert_eq!(j["sources"]["skipped"].as_array().unwrap().len(), 5);
        assert_eq!(j["sources"]["skipped"][0]["path"], Value::Null);
        assert_eq!(j["sources"]["skipped"][1]["reason"], "does not exist");
        assert_eq!(j["reviewers"]["from"], "default");
        assert!(cfg.render_text().contains("user file: none (defaults)"));
    }

    // ---- %q ------------------------------------------------------------------------------------

    #[test]
    fn quote_is_like_go() {
        assert_eq!(quote("codex"), "\"codex\"");
        assert_eq!(quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(
            quote("\u{7}\u{8}\u{c}\n\r\t\u{b}"),
            "\"\\a\\b\\f\\n\\r\\t\\v\""
        );
        assert_eq!(quote("\u{0}\u{1b}\u{7f}"), "\"\\x00\\x1b\\x7f\"");
        assert_eq!(
            quote("\u{85}\u{a0}\u{200b}\u{feff}"),
            "\"\\u0085\\u00a0\\u200b\\ufeff\""
        );
        assert_eq!(quote("\u{e0001}"), "\"\\U000e0001\"");
        assert_eq!(quote("한글 é 🎉 a b"), "\"한글 é 🎉 a b\"");
        assert_eq!(quote_bytes(b"a\xffb\xe2\x82"), "\"a\\xffb\\xe2\\x82\"");
    }
}
