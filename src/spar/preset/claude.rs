//! The `claude` preset: Claude Code in print mode (`-p`) with the reviewer's input on stdin,
//! `stream-json` events (which need `--verbose`), the round's schema as `--json-schema` (the
//! CLI turns it into a `StructuredOutput` tool), and the tool set cut to `Read,Grep,Glob` with
//! `--tools` (`--allowedTools` would leave every other tool declared). The result is the
//! `structured_output` of the final result event; without one, `result` is read as the answer.

use serde_json::Value;

use super::{str_at, Launch, LaunchContext, Outcome, StreamParser};

/// The tools a claude reviewer may use; `StructuredOutput` is how it answers.
pub const ALLOWED_TOOLS: &[&str] = &["Read", "Grep", "Glob", "StructuredOutput"];

/// Claude Code retries 429 and 401 ten times (about three minutes) by itself; two retries keep a
/// short hiccup from failing a review and let a refusal reach spar well inside its timeout.
pub const MAX_RETRIES: &str = "2";

pub fn launch(ctx: &LaunchContext<'_>) -> Launch {
    let mut argv = vec![
        ctx.exe.to_string_lossy().into_owned(),
        "-p".into(),
        "--output-format".into(),
        "stream-json".into(),
        "--verbose".into(),
        "--json-schema".into(),
        ctx.schema.to_string(),
        "--tools".into(),
        "Read,Grep,Glob".into(),
        "--strict-mcp-config".into(),
    ];
    if let Some(m) = ctx.model {
        argv.extend(["--model".into(), m.to_string()]);
    }
    if let Some(e) = ctx.effort {
        argv.extend(["--effort".into(), e.to_string()]);
    }
    let mut env = Vec::new();
    if std::env::var_os("CLAUDE_CODE_MAX_RETRIES").is_none() {
        env.push((
            "CLAUDE_CODE_MAX_RETRIES".to_string(),
            MAX_RETRIES.to_string(),
        ));
    }
    Launch {
        argv,
        env,
        stdin: ctx.input.as_bytes().to_vec(),
    }
}

/// Reads Claude Code's `stream-json` events (and the array `--output-format json` prints under a
/// verbose setting).
#[derive(Debug, Default)]
pub struct Parser {
    out: Outcome,
    init_model: Option<String>,
    served_model: Option<String>,
    usage_model: Option<String>,
    saw_result: bool,
    /// The id of the tool use that is the violation, until the CLI's answer to it is read.
    violating_use: Option<String>,
}

impl Parser {
    fn event(&mut self, v: &Value) -> Option<String> {
        match str_at(v, "type")? {
            "system" => match str_at(v, "subtype") {
                Some("init") => {
                    if let Some(m) = str_at(v, "model") {
                        self.init_model = Some(m.to_string());
                    }
                    Some("started".into())
                }
                Some("api_retry") => Some(format!(
                    "API retry {}/{} ({})",
                    v["attempt"],
                    v["max_retries"],
                    str_at(v, "error").unwrap_or("error")
                )),
                _ => None,
            },
            "assistant" => {
                let msg = &v["message"];
                if let Some(m) = str_at(msg, "model") {
                    if !m.starts_with('<') {
                        self.served_model = Some(m.to_string());
                    }
                }
                let mut events = Vec::new();
                for block in msg["content"].as_array().into_iter().flatten() {
                    match str_at(block, "type") {
                        Some("tool_use") | Some("server_tool_use") => {
                            let name = str_at(block, "name").unwrap_or("?");
                            if !ALLOWED_TOOLS.contains(&name) && self.out.violation.is_none() {
                                self.out.violate(format!(
                                    "used the tool {name} (a claude reviewer may use only Read, Grep and Glob)"
                                ));
                                self.violating_use = str_at(block, "id").map(str::to_string);
                            }
                            events.push(format!("tool {name}"));
                        }
                        Some("text") if v.get("error").is_some() => {
                            if let Some(t) = str_at(block, "text") {
                                self.out.errors.push(t.to_string());
                            }
                        }
                        _ => {}
                    }
                }
                (!events.is_empty()).then(|| events.join(", "))
            }
            "user" => {
                self.answer_to_violation(v);
                None
            }
            "result" => {
                self.saw_result = true;
                if let Some(m) = v["modelUsage"].as_object().and_then(|m| m.keys().next()) {
                    self.usage_model = Some(m.clone());
                }
                let is_error = v["is_error"].as_bool().unwrap_or(false)
                    || str_at(v, "subtype").is_some_and(|s| s != "success");
                if is_error {
                    self.out.failed = true;
                    let mut text = str_at(v, "result").unwrap_or("").to_string();
                    if let Some(s) = v["api_error_status"].as_u64() {
                        text.push_str(&format!(" (status {s})"));
                    }
                    for e in v["errors"].as_array().into_iter().flatten() {
                        if let Some(e) = e.as_str() {
                            text.push('\n');
                            text.push_str(e);
                        }
                    }
                    self.out.errors.push(text);
                    return Some("ended with an error".into());
                }
                match v.get("structured_output") {
                    Some(so) if !so.is_null() => {
                        self.out.result = Some(so.to_string());
                        self.out.invalid = None;
                    }
                    _ => match str_at(v, "result").map(str::trim) {
                        // No StructuredOutput call: the answer in `result` may still be the
                        // object, and is then checked like any result.
                        Some(r) if r.starts_with('{') => {
                            self.out.result = Some(r.to_string());
                        }
                        _ => {
                            self.out.result = None;
                            self.out.invalid = Some(
                                "no structured_output in the final result, and its result is not a JSON object".into(),
                            );
                        }
                    },
                }
                Some("result".into())
            }
            _ => None,
        }
    }
}

impl Parser {
    /// Adds what Claude Code did with the violating tool use to the violation: a tool outside
    /// `--tools` is not run, and the model gets `<tool_use_error>Error: No such tool available:
    /// …</tool_use_error>` back (Claude Code 2.1.332).
    fn answer_to_violation(&mut self, v: &Value) {
        let Some(id) = self.violating_use.clone() else {
            return;
        };
        for block in v["message"]["content"].as_array().into_iter().flatten() {
            if str_at(block, "type") != Some("tool_result")
                || str_at(block, "tool_use_id") != Some(&id)
            {
                continue;
            }
            let text = match &block["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| str_at(p, "text"))
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => String::new(),
            };
            let text = text
                .trim()
                .trim_start_matches("<tool_use_error>")
                .trim_end_matches("</tool_use_error>")
                .trim();
            let text = text.strip_prefix("Error: ").unwrap_or(text);
            let first = text
                .split(". ")
                .next()
                .unwrap_or(text)
                .trim_end_matches('.');
            let did = if block["is_error"].as_bool() == Some(true) {
                format!("Claude Code did not run it: {first}")
            } else {
                format!("Claude Code ran it: {}", super::last_line(first))
            };
            if let Some(why) = &mut self.out.violation {
                why.push_str("; ");
                why.push_str(&did);
            }
            self.violating_use = None;
        }
    }
}

impl StreamParser for Parser {
    fn line(&mut self, line: &str) -> Option<String> {
        let v: Value = serde_json::from_str(line.trim()).ok()?;
        match &v {
            Value::Array(items) => {
                let mut last = None;
                for item in items {
                    if let Some(e) = self.event(item) {
                        last = Some(e);
                    }
                }
                last
            }
            _ => self.event(&v),
        }
    }

    fn finish(mut self: Box<Self>) -> Outcome {
        if let Some(m) = self
            .served_model
            .clone()
            .or_else(|| self.usage_model.clone())
            // The model init names was asked for; it says nothing about a refused run.
            .or_else(|| self.init_model.clone().filter(|_| !self.out.failed))
        {
            self.out.observe(&m);
        }
        if !self.saw_result && self.out.result.is_none() {
            self.out.invalid = None;
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(lines: &[&str]) -> Outcome {
        let mut p = Box::new(Parser::default());
        for l in lines {
            p.line(l);
        }
        p.finish()
    }

    #[test]
    fn structured_output_is_the_result_and_the_model_is_observed() {
        let o = parse(&[
            r#"{"type":"system","subtype":"init","model":"claude-sonnet-x","tools":["Read"]}"#,
            r#"{"type":"assistant","message":{"model":"claude-sonnet-x-1","content":[{"type":"tool_use","name":"Read","input":{"file_path":"head/a"}}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"{}","structured_output":{"a":1},"modelUsage":{"claude-sonnet-x":{}}}"#,
        ]);
        assert_eq!(o.result.as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(o.observed_model.as_deref(), Some("claude-sonnet-x-1"));
        assert_eq!(o.violation, None);
    }

    #[test]
    fn other_tools_are_violations() {
        let o = parse(&[
            r#"{"type":"assistant","message":{"model":"m","content":[{"type":"tool_use","name":"Write","input":{}}]}}"#,
            r#"{"type":"assistant","message":{"model":"m","content":[{"type":"tool_use","name":"Bash","input":{}}]}}"#,
        ]);
        assert!(o.violation.unwrap().contains("Write"));
    }

    #[test]
    fn what_the_cli_did_with_the_violation_is_part_of_it() {
        let o = parse(&[
            r#"{"type":"assistant","message":{"model":"m","content":[{"type":"tool_use","id":"t1","name":"Write","input":{}}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"<tool_use_error>Error: No such tool available: Write. Write is disabled for this session, in subagents as well as here.</tool_use_error>","is_error":true,"tool_use_id":"t1"}]}}"#,
        ]);
        assert_eq!(
            o.violation.as_deref(),
            Some("used the tool Write (a claude reviewer may use only Read, Grep and Glob); Claude Code did not run it: No such tool available: Write")
        );
    }

    #[test]
    fn the_array_form_and_the_result_fallback() {
        let o = parse(&[
            r#"[{"type":"system","subtype":"init","model":"m0"},{"type":"result","subtype":"success","is_error":false,"result":"{\"x\":2}"}]"#,
        ]);
        assert_eq!(o.result.as_deref(), Some(r#"{"x":2}"#));
        assert_eq!(o.observed_model.as_deref(), Some("m0"));
        let o = parse(&[
            r#"{"type":"result","subtype":"success","is_error":false,"result":"looks fine"}"#,
        ]);
        assert!(o.invalid.unwrap().contains("structured_output"));
    }

    #[test]
    fn errors_are_collected() {
        let o = parse(&[
            r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"Invalid API key · Fix external API key"}]},"error":"authentication_failed"}"#,
            r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"result":"Invalid API key · Fix external API key"}"#,
        ]);
        assert!(o.failed);
        assert_eq!(o.observed_model, None);
        assert!(o.errors.iter().any(|e| e.contains("status 401")));
    }
}
