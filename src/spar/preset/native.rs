//! The `native` preset (G15): nothing is run; the host runs a subagent on the reviewer's
//! `prompt.md` and gives spar the subagent's Claude Code transcript (JSONL). spar finds the
//! result in it (the `StructuredOutput` call, else the final answer) and warns about what the
//! host cannot be trusted with: a tool outside `Read`, `Grep`, `Glob`; tools and context the
//! host added; `prompt.md` not read; and reads outside the native workspace. A warning names its
//! kind and the tool only, never a path or content.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::str_at;

/// The tools a native subagent may use.
pub const ALLOWED_TOOLS: &[&str] = &["Read", "Grep", "Glob", "StructuredOutput"];

/// What a transcript said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    /// The result JSON text, when the transcript holds an answer.
    pub result: Option<String>,
    pub observed_model: Option<String>,
    /// The G15 warnings, in the order first seen, each once.
    pub warnings: Vec<String>,
}

impl Transcript {
    fn warn(&mut self, w: String) {
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }
}

/// `path` with `.` and `..` resolved lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Reads a transcript. `Err` is why it cannot be read (a refusal).
pub fn read(text: &str, workspace: &Path, prompt: &Path) -> Result<Transcript, String> {
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) if v.is_object() => entries.push(v),
            _ => return Err(format!("line {} is not a JSON object", i + 1)),
        }
    }
    if entries.is_empty() {
        return Err("it holds no entry".into());
    }
    let roots: Vec<PathBuf> = [workspace.to_path_buf()]
        .into_iter()
        .chain(std::fs::canonicalize(workspace).ok())
        .map(|p| normalize(&p))
        .collect();
    let prompts: Vec<PathBuf> = [prompt.to_path_buf()]
        .into_iter()
        .chain(std::fs::canonicalize(prompt).ok())
        .map(|p| normalize(&p))
        .collect();
    let mut t = Transcript::default();
    let mut read_prompt = false;
    let mut seen_prompt_message = false;
    let mut last_text: Option<String> = None;
    let mut structured: Option<String> = None;
    for e in &entries {
        let kind = str_at(e, "type").unwrap_or("");
        let cwd = str_at(e, "cwd").map(PathBuf::from);
        match kind {
            "user" => {
                let content = &e["message"]["content"];
                let is_tool_result = content.as_array().is_some_and(|blocks| {
                    blocks
                        .iter()
                        .all(|b| str_at(b, "type") == Some("tool_result"))
                });
                if is_tool_result {
                    continue;
                }
                if e["isMeta"].as_bool() == Some(true) || seen_prompt_message {
                    t.warn("the host added context to the subagent (a user message)".into());
                }
                seen_prompt_message = true;
            }
            "attachment" | "system" => {
                t.warn(format!("the host added context to the subagent ({kind})"));
            }
            "assistant" => {
                let msg = &e["message"];
                if let Some(m) = str_at(msg, "model") {
                    if !m.starts_with('<') {
                        t.observed_model = Some(m.to_string());
                    }
                }
                for block in msg["content"].as_array().into_iter().flatten() {
                    match str_at(block, "type") {
                        Some("text") => {
                            if let Some(s) = str_at(block, "text") {
                                if !s.trim().is_empty() {
                                    last_text = Some(s.to_string());
                                }
                            }
                        }
                        Some("tool_use") => {
                            let name = str_at(block, "name").unwrap_or("?");
                            let input = &block["input"];
                            if name == "StructuredOutput" {
                                structured = Some(input.to_string());
                                continue;
                            }
                            if name.starts_with("mcp__") {
                                t.warn(format!("the host added a tool: {name}"));
                                continue;
                            }
                            if !ALLOWED_TOOLS.contains(&name) {
                                t.warn(format!(
                                    "the subagent used a tool outside Read, Grep and Glob: {name}"
                                ));
                                continue;
                            }
                            let key = if name == "Read" { "file_path" } else { "path" };
                            let target = match (str_at(input, key), &cwd) {
                                (Some(p), _) if Path::new(p).is_absolute() => {
                                    Some(normalize(Path::new(p)))
                                }
                                (Some(p), Some(c)) => Some(normalize(&c.join(p))),
                                (None, Some(c)) => Some(normalize(c)),
                                (_, None) => None,
                            };
                            let inside = target
                                .as_ref()
                                .is_some_and(|p| roots.iter().any(|r| p.starts_with(r)));
                            if name == "Read"
                                && target.as_ref().is_some_and(|p| prompts.contains(p))
                            {
                                read_prompt = true;
                            }
                            if !inside {
                                t.warn(format!(
                                    "the subagent read outside the native workspace with {name}"
                                ));
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if !read_prompt {
        t.warn("the subagent did not read prompt.md".into());
    }
    t.result = structured.or_else(|| last_text.map(|s| answer_json(&s)));
    Ok(t)
}

/// The JSON object in a final answer: the text itself, or the inside of a fenced block.
fn answer_json(text: &str) -> String {
    let trimmed = text.trim();
    if trimmed.starts_with('{') {
        return trimmed.to_string();
    }
    if let Some(start) = trimmed.find("```") {
        let after = &trimmed[start + 3..];
        let body = after.split_once('\n').map(|(_, b)| b).unwrap_or(after);
        if let Some(end) = body.find("```") {
            return body[..end].trim().to_string();
        }
    }
    trimmed.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(v: serde_json::Value) -> String {
        v.to_string()
    }

    #[test]
    fn warnings_and_result() {
        let ws = Path::new("/w/ws");
        let prompt = ws.join("host/prompt.md");
        let text = [
            line(serde_json::json!({"type":"user","cwd":"/w/ws","message":{"role":"user","content":"Review."}})),
            line(serde_json::json!({"type":"assistant","cwd":"/w/ws","message":{"model":"claude-x","content":[{"type":"tool_use","name":"Read","input":{"file_path":"host/prompt.md"}}]}})),
            line(serde_json::json!({"type":"assistant","cwd":"/w/ws/head","message":{"model":"claude-x","content":[{"type":"tool_use","name":"Grep","input":{"pattern":"x","path":"../../other"}}]}})),
            line(serde_json::json!({"type":"assistant","message":{"model":"claude-x","content":[{"type":"tool_use","name":"Glob","input":{"pattern":"*"}}]}})),
            line(serde_json::json!({"type":"assistant","cwd":"/w/ws","message":{"model":"claude-x","content":[{"type":"tool_use","name":"Bash","input":{"command":"ls"}}]}})),
            line(serde_json::json!({"type":"attachment","cwd":"/w/ws"})),
            line(serde_json::json!({"type":"assistant","cwd":"/w/ws","message":{"model":"claude-x","content":[{"type":"text","text":"```json\n{\"a\":1}\n```"}]}})),
        ]
        .join("\n");
        let t = read(&text, ws, &prompt).unwrap();
        assert_eq!(t.result.as_deref(), Some("{\"a\":1}"));
        assert_eq!(t.observed_model.as_deref(), Some("claude-x"));
        assert_eq!(
            t.warnings,
            [
                "the subagent read outside the native workspace with Grep",
                "the subagent read outside the native workspace with Glob",
                "the subagent used a tool outside Read, Grep and Glob: Bash",
                "the host added context to the subagent (attachment)",
            ]
        );
    }

    #[test]
    fn unread_prompt_and_unreadable_transcripts() {
        let ws = Path::new("/w/ws");
        let t = read(
            &line(serde_json::json!({"type":"user","cwd":"/w/ws","message":{"content":"x"}})),
            ws,
            &ws.join("p/prompt.md"),
        )
        .unwrap();
        assert_eq!(t.warnings, ["the subagent did not read prompt.md"]);
        assert!(read("not json", ws, ws).is_err());
        assert!(read("", ws, ws).is_err());
    }
}
