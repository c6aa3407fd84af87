//! The bridge: each committed transition is sent to every notifier, after the commit and never
//! instead of it. A notifier that fails or hangs is logged and skipped; it never blocks or
//! changes the pipeline.
//!
//! Deliveries run beside the pipeline ([`Bridge`]): one worker per notifier sends its events
//! in order, so a transition never waits for a notifier, and the run waits at most
//! [`GRACE`] at its end for deliveries still in flight, then leaves them (logged, never fatal).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

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
    /// The review round the reviewer is on (the first review is round 1).
    pub review_round: u32,
    pub attempts: u32,
    /// The seed's message for this transition.
    pub message: String,
    /// Whether the seed's table mentions the user for it (escalated, done).
    pub mention: bool,
    pub commit: String,
}

/// How long the end of a run waits for deliveries still in flight.
pub const GRACE: Duration = Duration::from_secs(3);

/// Sends one event to one notifier; the line to log when it failed.
fn send_one(i: usize, n: &NotifyConfig, event: &Event, cancel: &AtomicBool) -> Option<String> {
    let result = match n.kind {
        NotifyKind::Command => send_command(n, event, cancel),
        NotifyKind::Webhook => send_webhook(n, event),
    };
    result.err().map(|e| {
        let kind = match n.kind {
            NotifyKind::Command => "command",
            NotifyKind::Webhook => "webhook",
        };
        format!("notifier {i} ({kind}) failed and was skipped: {e}")
    })
}

/// The notifiers of one run, delivering beside it.
pub struct Bridge {
    senders: Vec<mpsc::Sender<Event>>,
    failures: Arc<Mutex<Vec<String>>>,
    /// Deliveries queued or in flight.
    pending: Arc<AtomicUsize>,
    /// Set when the run has ended and stopped waiting: queued deliveries are dropped.
    abandon: Arc<AtomicBool>,
}

impl Bridge {
    /// One worker thread per notifier.
    pub fn start(notifiers: &[NotifyConfig]) -> Bridge {
        let failures = Arc::new(Mutex::new(Vec::new()));
        let pending = Arc::new(AtomicUsize::new(0));
        let abandon = Arc::new(AtomicBool::new(false));
        let mut senders = Vec::new();
        for (i, n) in notifiers.iter().enumerate() {
            let (tx, rx) = mpsc::channel::<Event>();
            let n = n.clone();
            let (fails, pending, abandon) = (failures.clone(), pending.clone(), abandon.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("notifier-{i}"))
                .spawn(move || {
                    for ev in rx {
                        if !abandon.load(Ordering::SeqCst) {
                            if let Some(line) = send_one(i, &n, &ev, &abandon) {
                                if let Ok(mut f) = fails.lock() {
                                    f.push(line);
                                }
                            }
                        }
                        pending.fetch_sub(1, Ordering::SeqCst);
                    }
                });
            match spawned {
                Ok(_) => senders.push(tx),
                Err(e) => {
                    if let Ok(mut f) = failures.lock() {
                        f.push(format!(
                            "notifier {i} cannot start a thread and is skipped: {e}"
                        ));
                    }
                }
            }
        }
        Bridge {
            senders,
            failures,
            pending,
            abandon,
        }
    }

    /// Queues `event` for every notifier; returns at once.
    pub fn send(&self, event: &Event) {
        for tx in &self.senders {
            self.pending.fetch_add(1, Ordering::SeqCst);
            if tx.send(event.clone()).is_err() {
                self.pending.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// The failures logged since the last call.
    pub fn take_failures(&self) -> Vec<String> {
        self.failures
            .lock()
            .map(|mut f| std::mem::take(&mut *f))
            .unwrap_or_default()
    }

    /// Ends the run's deliveries: waits at most `grace` for those in flight, then leaves
    /// them. Returns the lines to log (failures, and what was left undelivered).
    pub fn finish(self, grace: Duration) -> Vec<String> {
        let Bridge {
            senders,
            failures,
            pending,
            abandon,
        } = self;
        drop(senders);
        let deadline = Instant::now() + grace;
        while pending.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let left = pending.load(Ordering::SeqCst);
        abandon.store(true, Ordering::SeqCst);
        // A command delivery in flight sees the flag within a few milliseconds and kills its
        // process group; give it that long so no notifier outlives the run.
        let settle = Instant::now() + Duration::from_millis(300);
        while pending.load(Ordering::SeqCst) > 0 && Instant::now() < settle {
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut lines = failures
            .lock()
            .map(|mut f| std::mem::take(&mut *f))
            .unwrap_or_default();
        if left > 0 {
            lines.push(format!(
                "{left} notification{} still in flight after {} s {} left undelivered; the pipeline's record is complete (`git rails pipeline status`)",
                if left == 1 { "" } else { "s" },
                grace.as_secs(),
                if left == 1 { "was" } else { "were" }
            ));
        }
        lines
    }
}

fn content(n: &NotifyConfig, event: &Event) -> String {
    match (&n.mention, event.mention) {
        (Some(m), true) => format!("{m} {}", event.message),
        _ => event.message.clone(),
    }
}

fn send_command(n: &NotifyConfig, event: &Event, cancel: &AtomicBool) -> Result<(), String> {
    let argv = n.command.clone().unwrap_or_default();
    let program = argv.first().cloned().ok_or("no command")?;
    let body = serde_json::to_vec(event).map_err(|e| e.to_string())?;
    let message = content(n, event);
    let timeout = Duration::from_secs(n.timeout_seconds.max(1));
    let r = crate::process::run_argv_cancellable(
        &argv,
        std::path::Path::new("."),
        &[("RAILS_NOTIFY_MESSAGE", message.as_str())],
        &body,
        timeout,
        cancel,
    );
    if let Some(e) = r.spawn_error {
        return Err(format!("cannot start {e}"));
    }
    if r.timed_out && cancel.load(Ordering::SeqCst) {
        return Err(format!(
            "{program} was still running when the run ended and was stopped"
        ));
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
