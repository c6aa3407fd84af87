//! `.rails/config.toml`: the actors' commands and timeouts, the retry policy, the notifiers.
//! Read from the work tree; strict (an unknown key is refused with its line).
//!
//! A cloned repository chooses nothing that runs on this machine: the commands the project's
//! file names (actors, command notifiers, webhook targets) are used only after `git rails
//! trust` recorded that file's exact sha256 for this clone (a changed file needs trusting
//! again, as `direnv allow` does). The user's own file (`$XDG_CONFIG_HOME/rails/config.toml`,
//! else `~/.config/rails/config.toml`) needs no trust; its actors win over the project's.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::handoff::Actor;
use crate::error::{Error, Result};

pub const CONFIG_PATH: &str = ".rails/config.toml";

/// The seed's spawn line.
pub fn default_command() -> Vec<String> {
    [
        "openclaw",
        "spawn",
        "--role",
        "{role}",
        "--contract",
        "{contract}",
        "--workdir",
        "{workdir}",
        "--output",
        "structured-json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn default_timeout() -> u64 {
    1800
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ActorConfig {
    #[serde(default = "default_command")]
    pub command: Vec<String>,
    #[serde(default = "default_timeout")]
    pub timeout_seconds: u64,
}

impl Default for ActorConfig {
    fn default() -> Self {
        ActorConfig {
            command: default_command(),
            timeout_seconds: default_timeout(),
        }
    }
}

fn three() -> u32 {
    3
}
fn two() -> u64 {
    2
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RetryConfig {
    #[serde(default = "three")]
    pub max_attempts: u32,
    #[serde(default = "three")]
    pub max_review_rounds: u32,
    #[serde(default = "two")]
    pub backoff_seconds: u64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            max_attempts: 3,
            max_review_rounds: 3,
            backoff_seconds: 2,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifyKind {
    Command,
    Webhook,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum WebhookFormat {
    /// `{"content": "…"}`, as Discord's webhooks take it.
    #[default]
    Discord,
    /// The event itself.
    Json,
}

fn notify_timeout() -> u64 {
    10
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NotifyConfig {
    #[serde(rename = "type")]
    pub kind: NotifyKind,
    #[serde(default)]
    pub command: Option<Vec<String>>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub format: WebhookFormat,
    /// Put in front of the messages that mention the user (e.g. `<@123456>` on Discord).
    #[serde(default)]
    pub mention: Option<String>,
    #[serde(default = "notify_timeout")]
    pub timeout_seconds: u64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineConfig {
    #[serde(default)]
    pub actors: BTreeMap<Actor, ActorConfig>,
    #[serde(default)]
    pub retry: RetryConfig,
    #[serde(default)]
    pub notify: Vec<NotifyConfig>,
}

/// One file as written (which tables it has), before files are combined.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    actors: BTreeMap<Actor, ActorConfig>,
    #[serde(default)]
    retry: Option<RetryConfig>,
    #[serde(default)]
    notify: Vec<NotifyConfig>,
}

impl ConfigFile {
    /// What in this file would run something: `actors.<name>`, `notify[<i>]`.
    fn commands(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .actors
            .keys()
            .map(|a| format!("actors.{}", a.as_str()))
            .collect();
        out.extend((0..self.notify.len()).map(|i| format!("notify[{i}]")));
        out
    }
}

impl PipelineConfig {
    pub fn actor(&self, a: Actor) -> ActorConfig {
        self.actors.get(&a).cloned().unwrap_or_default()
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The user's own configuration file: `$XDG_CONFIG_HOME/rails/config.toml`, else
/// `~/.config/rails/config.toml`.
pub fn user_config_path() -> Option<std::path::PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(x) => std::path::PathBuf::from(x),
        None => std::path::PathBuf::from(std::env::var_os("HOME")?).join(".config"),
    };
    Some(base.join("rails").join("config.toml"))
}

/// The sha256 (hex) of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(bytes))
}

/// Where this clone keeps the sha256s of the project files it trusts (one per line).
fn trust_file(store: &crate::store::Store) -> std::path::PathBuf {
    store.common_dir().join("rails").join("trusted-config")
}

/// Whether `sha` is trusted in this clone.
pub fn is_trusted(store: &crate::store::Store, sha: &str) -> bool {
    std::fs::read_to_string(trust_file(store))
        .map(|t| t.lines().any(|l| l.trim() == sha))
        .unwrap_or(false)
}

/// What `git rails trust` recorded.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Trusted {
    pub schema: &'static str,
    pub path: String,
    pub sha256: String,
    /// What in the file runs something (actors.<name>, notify[<i>]) and the command or URL.
    pub runs: Vec<(String, String)>,
    pub already: bool,
}

/// `git rails trust`: records the exact sha256 of the project's `.rails/config.toml` for this
/// clone, after checking the file is in form (a file that would be refused is not trusted).
pub fn trust(store: &crate::store::Store, root: &Path) -> Result<Trusted> {
    let path = root.join(CONFIG_PATH);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::refused(format!(
                "{CONFIG_PATH} does not exist; there is nothing to trust"
            )))
        }
        Err(e) => {
            return Err(Error::refused(format!(
                "{CONFIG_PATH}: cannot read it: {e}"
            )))
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let file = parse_file(CONFIG_PATH, &text)?;
    let mut cfg = PipelineConfig::default();
    combine(&mut cfg, file.clone());
    check(CONFIG_PATH, &cfg)?;
    let sha = sha256_hex(&bytes);
    let mut runs = Vec::new();
    for (a, c) in &file.actors {
        runs.push((format!("actors.{}", a.as_str()), c.command.join(" ")));
    }
    for (i, n) in file.notify.iter().enumerate() {
        let what = match n.kind {
            NotifyKind::Command => n.command.clone().unwrap_or_default().join(" "),
            NotifyKind::Webhook => format!("POST {}", n.url.clone().unwrap_or_default()),
        };
        runs.push((format!("notify[{i}]"), what));
    }
    let already = is_trusted(store, &sha);
    if !already {
        let tf = trust_file(store);
        let mut text = std::fs::read_to_string(&tf).unwrap_or_default();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&sha);
        text.push('\n');
        if let Some(dir) = tf.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::internal(format!("creating {}: {e}", dir.display())))?;
        }
        crate::store::atomic_write(&tf, text.as_bytes())?;
    }
    Ok(Trusted {
        schema: "rails-trust/v1",
        path: CONFIG_PATH.into(),
        sha256: sha,
        runs,
        already,
    })
}

fn parse_file(label: &str, text: &str) -> Result<ConfigFile> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
        Error::refused(format!("{label}:{line}: {}", e.message().trim_end()))
            .hint(format!("fix {label} and run the command again"))
    })
}

/// Lays `file` over `cfg`: its actors replace those of the same name, its notifiers are
/// added, its retry table (when it has one) replaces the retry policy.
fn combine(cfg: &mut PipelineConfig, file: ConfigFile) {
    cfg.actors.extend(file.actors);
    cfg.notify.extend(file.notify);
    if let Some(r) = file.retry {
        cfg.retry = r;
    }
}

/// One configuration file's text read on its own (no trust, no user file): what the fuzz
/// targets and `load_for` share.
pub fn parse(label: &str, text: &str) -> Result<PipelineConfig> {
    let mut cfg = PipelineConfig::default();
    combine(&mut cfg, parse_file(label, text)?);
    Ok(cfg)
}

/// The pipeline's configuration for this clone: the project's `.rails/config.toml` (its
/// commands only when trusted), then the user's own file over it. A project file naming
/// commands that this clone has not trusted is refused (65) with the command to run.
pub fn load_for(store: &crate::store::Store, root: &Path) -> Result<PipelineConfig> {
    let mut cfg = PipelineConfig::default();
    let path = root.join(CONFIG_PATH);
    match std::fs::read(&path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let file = parse_file(CONFIG_PATH, &text)?;
            let commands = file.commands();
            if !commands.is_empty() && !is_trusted(store, &sha256_hex(&bytes)) {
                return Err(Error::refused(format!(
                    "{CONFIG_PATH} names commands to run on this machine ({}), and this clone has not trusted this version of it",
                    commands.join(", ")
                ))
                .hint(format!(
                    "read {CONFIG_PATH}, then run `git rails trust` (or put your own actors in {})",
                    user_config_path()
                        .map(|p| p.display().to_string())
                        .unwrap_or_else(|| "~/.config/rails/config.toml".into())
                )));
            }
            combine(&mut cfg, file);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(Error::refused(format!(
                "{CONFIG_PATH}: cannot read it: {e}"
            )))
        }
    }
    if let Some(user) = user_config_path() {
        match std::fs::read_to_string(&user) {
            Ok(text) => {
                let label = user.display().to_string();
                let file = parse_file(&label, &text)?;
                combine(&mut cfg, file);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::refused(format!(
                    "{}: cannot read it: {e}",
                    user.display()
                )))
            }
        }
    }
    check("the pipeline configuration", &cfg)?;
    Ok(cfg)
}

/// The rules serde cannot see.
fn check(label: &str, cfg: &PipelineConfig) -> Result<()> {
    for (actor, a) in &cfg.actors {
        if a.command.is_empty() || a.command.iter().any(|s| s.is_empty()) {
            return Err(Error::refused(format!(
                "{label}: actors.{}.command must be a non-empty list of non-empty strings",
                actor.as_str()
            )));
        }
        if a.timeout_seconds == 0 {
            return Err(Error::refused(format!(
                "{label}: actors.{}.timeoutSeconds must be above 0",
                actor.as_str()
            )));
        }
    }
    if cfg.retry.max_attempts == 0 {
        return Err(Error::refused(format!(
            "{label}: retry.maxAttempts must be at least 1"
        )));
    }
    for (i, n) in cfg.notify.iter().enumerate() {
        let ok = match n.kind {
            NotifyKind::Command => {
                n.command.as_ref().is_some_and(|c| !c.is_empty()) && n.url.is_none()
            }
            NotifyKind::Webhook => {
                n.url
                    .as_ref()
                    .is_some_and(|u| u.starts_with("http://") || u.starts_with("https://"))
                    && n.command.is_none()
            }
        };
        if !ok {
            return Err(Error::refused(format!(
                "{label}: notify[{i}]: a command notifier needs `command` (a list), a webhook notifier an http(s) `url`"
            )));
        }
    }
    Ok(())
}
