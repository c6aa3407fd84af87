//! The `codex` preset: `codex exec --json` with the round's schema file as `--output-schema`, a
//! read-only sandbox, and the reviewer's input on stdin (`-`). The result is the final agent
//! message. Items other than messages, reasoning and commands (and Codex's non-fatal `error`
//! items) are tool violations. A write the sandbox blocked shows in no `--json` event, only in
//! the session log Codex keeps under `CODEX_HOME` (named by the `thread_id` of
//! `thread.started`); that log is read too, and it names the model (G12).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{str_at, Launch, LaunchContext, Outcome, StreamParser};

/// The item kinds a codex reviewer may produce.
pub const ALLOWED_ITEMS: &[&str] = &[
    "agent_message",
    "assistant_message",
    "reasoning",
    "command_execution",
    "error",
];

/// The session-log function calls that are commands.
const COMMAND_CALLS: &[&str] = &[
    "exec_command",
    "shell",
    "shell_command",
    "local_shell",
    "write_stdin",
];

pub fn launch(ctx: &LaunchContext<'_>) -> Launch {
    let mut argv = vec![
        ctx.exe.to_string_lossy().into_owned(),
        "exec".into(),
        "--json".into(),
        "--output-schema".into(),
        ctx.workspace
            .join("schema.json")
            .to_string_lossy()
            .into_owned(),
        "--sandbox".into(),
        "read-only".into(),
        "--skip-git-repo-check".into(),
    ];
    if let Some(m) = ctx.model {
        argv.extend(["-m".into(), m.to_string()]);
    }
    if let Some(e) = ctx.effort {
        argv.extend(["-c".into(), format!("model_reasoning_effort=\"{e}\"")]);
    }
    argv.push("-".into());
    Launch {
        argv,
        env: Vec::new(),
        stdin: ctx.input.as_bytes().to_vec(),
    }
}

/// The user's `CODEX_HOME` (it holds their login and the session logs).
pub fn codex_home() -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")))
}

#[derive(Debug)]
pub struct Parser {
    out: Outcome,
    home: Option<PathBuf>,
    thread_id: Option<String>,
    last_message: Option<String>,
}

impl Parser {
    pub fn new(home: Option<PathBuf>) -> Parser {
        Parser {
            out: Outcome::default(),
            home,
            thread_id: None,
            last_message: None,
        }
    }

    fn item(&mut self, item: &Value, completed: bool) -> Option<String> {
        let kind = str_at(item, "type").or_else(|| str_at(item, "item_type"))?;
        if !ALLOWED_ITEMS.contains(&kind) {
            self.out.violate(format!(
                "produced a {kind} item (a codex reviewer may only send messages, reasoning and commands)"
            ));
            return Some(format!("{kind} item"));
        }
        match kind {
            "agent_message" | "assistant_message" if completed => {
                self.last_message = str_at(item, "text").map(str::to_string);
                Some("message".into())
            }
            "command_execution" if !completed => Some(format!(
                "command {}",
                str_at(item, "command").unwrap_or("?")
            )),
            _ => None,
        }
    }

    /// Reads the session log of the thread: its model, and what the sandbox blocked.
    fn session_log(&mut self) {
        let (Some(home), Some(thread)) = (&self.home, &self.thread_id) else {
            return;
        };
        let Some(file) = find_session_log(&home.join("sessions"), thread) else {
            return;
        };
        let Ok(text) = std::fs::read_to_string(&file) else {
            return;
        };
        let mut commands: HashMap<String, String> = HashMap::new();
        let mut model = None;
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let payload = &v["payload"];
            match str_at(&v, "type") {
                Some("turn_context") => {
                    if let Some(m) = str_at(payload, "model") {
                        model = Some(m.to_string());
                    }
                }
                Some("response_item") => match str_at(payload, "type") {
                    Some("custom_tool_call") => {
                        let name = str_at(payload, "name").unwrap_or("?");
                        self.out.violate(format!(
                            "called the tool {name} (a codex reviewer may only run commands)"
                        ));
                    }
                    Some("function_call") => {
                        let name = str_at(payload, "name").unwrap_or("?");
                        let args: Value = str_at(payload, "arguments")
                            .and_then(|a| serde_json::from_str(a).ok())
                            .unwrap_or(Value::Null);
                        if !COMMAND_CALLS.contains(&name) {
                            self.out.violate(format!(
                                "called the tool {name} (a codex reviewer may only run commands)"
                            ));
                        }
                        let cmd = str_at(&args, "cmd")
                            .or_else(|| str_at(&args, "command"))
                            .unwrap_or("")
                            .to_string();
                        if str_at(&args, "sandbox_permissions") == Some("require_escalated") {
                            self.out.violate(format!(
                                "asked to run a command outside the sandbox: {cmd}"
                            ));
                        }
                        if let Some(id) = str_at(payload, "call_id") {
                            commands.insert(id.to_string(), cmd);
                        }
                    }
                    Some("function_call_output") | Some("custom_tool_call_output") => {
                        let output = match &payload["output"] {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        if output.contains("Read-only file system")
                            || output.contains("writing is blocked by read-only sandbox")
                        {
                            let cmd = str_at(payload, "call_id")
                                .and_then(|id| commands.get(id))
                                .cloned()
                                .unwrap_or_default();
                            self.out.violate(format!(
                                "tried to write; the read-only sandbox blocked it: {cmd}"
                            ));
                        }
                    }
                    _ => {}
                },
                _ => {}
            }
        }
        if let Some(m) = model {
            self.out.observe(&m);
        }
    }
}

/// The session log `rollout-…-<thread>.jsonl` somewhere below `dir`.
fn find_session_log(dir: &Path, thread: &str) -> Option<PathBuf> {
    let suffix = format!("{thread}.jsonl");
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    if name.starts_with("rollout-") && name.ends_with(&suffix) {
                        return Some(p);
                    }
                }
                _ => {}
            }
        }
    }
    None
}

impl StreamParser for Parser {
    fn line(&mut self, line: &str) -> Option<String> {
        let v: Value = serde_json::from_str(line.trim()).ok()?;
        match str_at(&v, "type")? {
            "thread.started" => {
                self.thread_id = str_at(&v, "thread_id").map(str::to_string);
                Some("started".into())
            }
            "item.started" => self.item(&v["item"], false),
            "item.updated" => {
                // Checked like any item, but not logged again.
                self.item(&v["item"], false);
                None
            }
            "item.completed" => self.item(&v["item"], true),
            "error" => {
                let m = str_at(&v, "message").unwrap_or("error");
                // `Reconnecting... N/5 (<error>)` announces a retry (Codex 0.171.0 retries even
                // a 401 five times); the error that ends the turn follows on its own, and the
                // refusal's reason is that one.
                if !m.starts_with("Reconnecting...") {
                    self.out.errors.push(m.to_string());
                }
                Some(format!("error: {m}"))
            }
            "turn.failed" => {
                self.out.failed = true;
                let m = str_at(&v["error"], "message").unwrap_or("turn failed");
                self.out.errors.push(m.to_string());
                Some("turn failed".into())
            }
            "turn.completed" => Some("turn completed".into()),
            _ => None,
        }
    }

    fn finish(mut self: Box<Self>) -> Outcome {
        self.session_log();
        if !self.out.failed {
            self.out.result = self.last_message.take();
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_message_is_the_result_and_other_items_are_violations() {
        let mut p = Box::new(Parser::new(None));
        p.line(r#"{"type":"thread.started","thread_id":"t1"}"#);
        p.line(r#"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-x` not found."}}"#);
        p.line(r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","status":"completed"}}"#);
        p.line(r#"{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"{\"a\":1}"}}"#);
        let o = p.finish();
        assert_eq!(o.result.as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(o.violation, None);
        let mut p = Box::new(Parser::new(None));
        p.line(r#"{"type":"item.completed","item":{"id":"item_1","type":"file_change","changes":[],"status":"completed"}}"#);
        assert!(p.finish().violation.unwrap().contains("file_change"));
    }

    #[test]
    fn reconnect_notices_are_not_the_error() {
        let mut p = Box::new(Parser::new(None));
        p.line(r#"{"type":"error","message":"Reconnecting... 1/5 (unexpected status 401 Unauthorized: x)"}"#);
        p.line(r#"{"type":"error","message":"unexpected status 401 Unauthorized: y"}"#);
        p.line(
            r#"{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: y"}}"#,
        );
        let o = p.finish();
        assert!(o.failed);
        assert!(
            o.errors.iter().all(|e| e.ends_with(": y")),
            "{:?}",
            o.errors
        );
    }

    #[test]
    fn the_session_log_shows_blocked_writes_and_the_model() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("sessions/2026/11/30");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("rollout-2026-11-30T11-24-49-t9.jsonl"),
            concat!(
                r#"{"type":"turn_context","payload":{"model":"gpt-x","effort":"high"}}"#, "\n",
                r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\": \"touch pwned.txt\"}","call_id":"c1"}}"#, "\n",
                r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"touch: cannot touch 'pwned.txt': Read-only file system\n"}}"#, "\n",
            ),
        )
        .unwrap();
        let mut p = Box::new(Parser::new(Some(home.path().to_path_buf())));
        p.line(r#"{"type":"thread.started","thread_id":"t9"}"#);
        let o = p.finish();
        assert_eq!(o.observed_model.as_deref(), Some("gpt-x"));
        assert!(o.violation.unwrap().contains("touch pwned.txt"));
    }
}
