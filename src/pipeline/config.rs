//! `.rails/config.toml`: the actors' commands and timeouts, the retry policy, the notifiers.
//! Read from the work tree; strict (an unknown key is refused with its line).

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

impl PipelineConfig {
    pub fn actor(&self, a: Actor) -> ActorConfig {
        self.actors.get(&a).cloned().unwrap_or_default()
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Reads `.rails/config.toml` below `root` (defaults when it is absent).
pub fn load(root: &Path) -> Result<PipelineConfig> {
    let path = root.join(CONFIG_PATH);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(PipelineConfig::default()),
        Err(e) => {
            return Err(Error::refused(format!(
                "{CONFIG_PATH}: cannot read it: {e}"
            )))
        }
    };
    let cfg: PipelineConfig = toml::from_str(&text).map_err(|e| {
        let line = e.span().map(|s| line_of(&text, s.start)).unwrap_or(1);
        Error::refused(format!("{CONFIG_PATH}:{line}: {}", e.message().trim_end()))
            .hint(format!("fix {CONFIG_PATH} and run the command again"))
    })?;
    for (actor, a) in &cfg.actors {
        if a.command.is_empty() || a.command.iter().any(|s| s.is_empty()) {
            return Err(Error::refused(format!(
                "{CONFIG_PATH}: actors.{}.command must be a non-empty list of non-empty strings",
                actor.as_str()
            )));
        }
        if a.timeout_seconds == 0 {
            return Err(Error::refused(format!(
                "{CONFIG_PATH}: actors.{}.timeoutSeconds must be above 0",
                actor.as_str()
            )));
        }
    }
    if cfg.retry.max_attempts == 0 {
        return Err(Error::refused(format!(
            "{CONFIG_PATH}: retry.maxAttempts must be at least 1"
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
                "{CONFIG_PATH}: notify[{i}]: a command notifier needs `command` (a list), a webhook notifier an http(s) `url`"
            )));
        }
    }
    Ok(cfg)
}
