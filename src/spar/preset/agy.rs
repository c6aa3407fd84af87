//! The `agy` preset: the Antigravity CLI in print mode, given the command guidance, the
//! instructions and the packet with `-p` (a large packet goes to `PACKET.md` in the workspace
//! and `-p` says where it is), `stream-json` events, and the round's schema. Tools other than
//! `read_file` and the shell are tool violations, and every shell line is checked against G11.

use serde_json::Value;

use super::shell;
use super::{str_at, Launch, LaunchContext, Outcome, StreamParser};

/// A `-p` text longer than this puts the packet in `PACKET.md` (one argument may hold at most
/// 128 KiB on Linux).
pub const LARGE_PROMPT: usize = 100 * 1024;

/// The file a large packet is written to, in the workspace.
pub const PACKET_FILE: &str = "PACKET.md";

/// The tool that reads a file.
pub const READ_TOOL: &str = "read_file";

/// The names the shell tool goes by.
pub const SHELL_TOOLS: &[&str] = &[
    "run_command",
    "run_shell_command",
    "shell",
    "bash",
    "execute_command",
];

/// What an agy reviewer is told about the tools before the instructions.
pub fn guidance() -> String {
    format!(
        "# Tools for this review\n\nUse only `read_file` and the shell. A shell line may only run these read-only programs: {}, and `sed -n` with a script that only prints; joined only by `|`, `&&`, `||` and `;`. `2>/dev/null` and `2>&1` are fine; no other redirection, no `$`, no backquotes, no braces outside quotes, no paths outside {}. Any other tool or line ends your review as a tool violation.\n\n",
        shell::READ_ONLY_PROGRAMS.join(", "),
        shell::PROGRAM_DIRS.join(", ")
    )
}

/// The `-p` text for `input` (the packet, then the reviewer's own instruction if any), and the
/// contents of `PACKET.md` when the packet is too large for one argument.
pub fn prompt(packet: &str, input: &str) -> (String, Option<String>) {
    let full = format!("{}{input}", guidance());
    if full.len() <= LARGE_PROMPT {
        return (full, None);
    }
    let own = input.strip_prefix(packet).unwrap_or("");
    let text = format!(
        "{}The review packet is in `{PACKET_FILE}` in your working directory: read it first with read_file, all of it, and follow its instructions.\n{own}",
        guidance()
    );
    (text, Some(packet.to_string()))
}

pub fn launch(ctx: &LaunchContext<'_>) -> Launch {
    let mut argv = vec![
        ctx.exe.to_string_lossy().into_owned(),
        "-p".into(),
        ctx.input.to_string(),
        "--output-format".into(),
        "stream-json".into(),
        "--json-schema".into(),
        ctx.workspace
            .join("schema.json")
            .to_string_lossy()
            .into_owned(),
    ];
    if let Some(m) = ctx.model {
        argv.extend(["--model".into(), m.to_string()]);
    }
    Launch {
        argv,
        env: Vec::new(),
        stdin: Vec::new(),
    }
}

#[derive(Debug, Default)]
pub struct Parser {
    out: Outcome,
}

impl Parser {
    /// One tool call: its name and its arguments.
    fn tool(&mut self, name: &str, args: &Value) -> String {
        if name == READ_TOOL {
            return format!("tool {name}");
        }
        if SHELL_TOOLS.contains(&name) {
            let line = ["command", "CommandLine", "commandLine", "cmd"]
                .iter()
                .find_map(|k| str_at(args, k))
                .unwrap_or("");
            if let Err(first) = shell::check_line(line) {
                self.out.violate(format!(
                    "ran the shell line {line:?}; first problem: {first}"
                ));
            }
            return format!("shell {line}");
        }
        self.out.violate(format!(
            "used the tool {name} (an agy reviewer may use only read_file and the shell)"
        ));
        format!("tool {name}")
    }
}

/// The arguments of a tool call, wherever this CLI version puts them.
fn tool_args(info: &Value) -> &Value {
    for k in ["input", "args", "arguments", "parameters"] {
        if info.get(k).is_some_and(Value::is_object) {
            return &info[k];
        }
    }
    info
}

impl StreamParser for Parser {
    fn line(&mut self, line: &str) -> Option<String> {
        let v: Value = serde_json::from_str(line.trim()).ok()?;
        if let Some(m) = str_at(&v, "model") {
            self.out.observe(m);
        }
        match str_at(&v, "type")? {
            "init" => Some("started".into()),
            "step_update" => {
                let info = v.get("tool_info")?;
                let name = str_at(info, "name").unwrap_or("?").to_string();
                Some(self.tool(&name, tool_args(info)))
            }
            "tool_use" => {
                let name = str_at(&v, "tool_name").unwrap_or("?").to_string();
                let args = v.get("parameters").cloned().unwrap_or(Value::Null);
                Some(self.tool(&name, &args))
            }
            "error" => {
                let m = str_at(&v, "message").unwrap_or("error");
                self.out.errors.push(m.to_string());
                Some(format!("error: {m}"))
            }
            "result" => {
                if let Some(models) = v["stats"]["models"].as_object() {
                    if let Some(m) = models.keys().next() {
                        self.out.observe(m);
                    }
                }
                let status = str_at(&v, "status").unwrap_or("");
                if !status.eq_ignore_ascii_case("success") {
                    self.out.failed = true;
                    let e = &v["error"];
                    let msg = str_at(e, "message")
                        .map(str::to_string)
                        .or_else(|| e.as_str().map(str::to_string))
                        .unwrap_or_else(|| format!("status {status}"));
                    self.out.errors.push(msg);
                    return Some("ended with an error".into());
                }
                match v.get("structured_output") {
                    Some(so) if so.as_object().is_some_and(|o| !o.is_empty()) => {
                        self.out.result = Some(so.to_string());
                    }
                    _ => match str_at(&v, "response") {
                        Some(r) => self.out.result = Some(r.trim().to_string()),
                        None => {
                            self.out.invalid =
                                Some("the final result has no structured_output or response".into())
                        }
                    },
                }
                Some("result".into())
            }
            _ => None,
        }
    }

    fn finish(self: Box<Self>) -> Outcome {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_lines_are_checked() {
        let mut p = Box::<Parser>::default();
        p.line(r#"{"type":"step_update","step_type":"tool_call","tool_info":{"name":"run_command","input":{"command":"ls -la head"}}}"#);
        p.line(r#"{"type":"step_update","step_type":"tool_call","tool_info":{"name":"read_file","input":{"file_path":"head/a"}}}"#);
        p.line(
            r#"{"type":"result","status":"SUCCESS","response":"{}","structured_output":{"a":1}}"#,
        );
        let o = p.finish();
        assert_eq!(o.violation, None);
        assert_eq!(o.result.as_deref(), Some(r#"{"a":1}"#));
        let mut p = Box::<Parser>::default();
        p.line(r#"{"type":"step_update","step_type":"tool_call","tool_info":{"name":"run_command","input":{"command":"ls; touch x"}}}"#);
        let v = p.finish().violation.unwrap();
        assert!(
            v.contains("\"ls; touch x\"") && v.ends_with("first problem: touch"),
            "{v}"
        );
    }

    #[test]
    fn a_large_packet_goes_to_a_file() {
        let packet = "x".repeat(LARGE_PROMPT + 1);
        let input = format!("{packet}\n## Your standpoint\nS\n");
        let (p, file) = prompt(&packet, &input);
        assert_eq!(file.as_deref(), Some(packet.as_str()));
        assert!(p.contains(PACKET_FILE) && p.ends_with("## Your standpoint\nS\n"));
        let (p, file) = prompt("small", "small");
        assert!(file.is_none() && p.ends_with("small"));
    }
}
