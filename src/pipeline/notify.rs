//! The bridge: each committed transition is sent to every notifier, after the commit and never
//! instead of it. A notifier that fails or hangs is logged and skipped; it never blocks or
//! changes the pipeline.

use std::time::Duration;

use serde::Serialize;

use super::config::{NotifyConfig, NotifyKind, WebhookFormat};

/// What a notifier is told.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub schema: &'static str,
    pub sprint: String,
    pub seq: u64,
    pub event: String,
    pub from: String,
    pub to: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub review_round: u32,
    pub attempts: u32,
    /// The seed's message for this transition.
    pub message: String,
    /// Whether the seed's table mentions the user for it (escalated, done).
    pub mention: bool,
    pub commit: String,
}

/// Sends `event` to every notifier; returns one line per notifier that failed.
pub fn send_all(notifiers: &[NotifyConfig], event: &Event) -> Vec<String> {
    let mut failures = Vec::new();
    for (i, n) in notifiers.iter().enumerate() {
        let result = match n.kind {
            NotifyKind::Command => send_command(n, event),
            NotifyKind::Webhook => send_webhook(n, event),
        };
        if let Err(e) = result {
            let kind = match n.kind {
                NotifyKind::Command => "command",
                NotifyKind::Webhook => "webhook",
            };
            failures.push(format!("notifier {i} ({kind}) failed and was skipped: {e}"));
        }
    }
    failures
}

fn content(n: &NotifyConfig, event: &Event) -> String {
    match (&n.mention, event.mention) {
        (Some(m), true) => format!("{m} {}", event.message),
        _ => event.message.clone(),
    }
}

fn send_command(n: &NotifyConfig, event: &Event) -> Result<(), String> {
    let argv = n.command.clone().unwrap_or_default();
    let program = argv.first().cloned().ok_or("no command")?;
    let body = serde_json::to_vec(event).map_err(|e| e.to_string())?;
    let message = content(n, event);
    let timeout = Duration::from_secs(n.timeout_seconds.max(1));
    let r = crate::process::run_argv(
        &argv,
        std::path::Path::new("."),
        &[("RAILS_NOTIFY_MESSAGE", message.as_str())],
        &body,
        timeout,
    );
    if let Some(e) = r.spawn_error {
        return Err(format!("cannot start {e}"));
    }
    if r.timed_out {
        return Err(format!(
            "{program} did not finish within {} s and was killed",
            n.timeout_seconds
        ));
    }
    match r.exit_code {
        Some(0) => Ok(()),
        _ => Err(format!("{program} ended with {}", r.describe())),
    }
}

fn send_webhook(n: &NotifyConfig, event: &Event) -> Result<(), String> {
    let url = n.url.as_deref().unwrap_or_default();
    let body = match n.format {
        WebhookFormat::Discord => serde_json::json!({ "content": content(n, event) }),
        WebhookFormat::Json => serde_json::to_value(event).map_err(|e| e.to_string())?,
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(n.timeout_seconds.max(1))))
        .http_status_as_error(false)
        .build()
        .into();
    let bytes = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
    let resp = agent
        .post(url)
        .header("Content-Type", "application/json")
        .send(&bytes[..])
        .map_err(|e| format!("POST {url}: {e}"))?;
    let status = resp.status().as_u16();
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(format!("POST {url} answered {status}"))
    }
}
