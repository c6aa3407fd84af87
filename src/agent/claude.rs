//! Claude Code: the rails MCP server in `.mcp.json` (user scope: `~/.claude.json`, the file
//! `claude mcp add --scope user` writes), and in `.claude/settings.json` (user scope:
//! `~/.claude/settings.json`) the Stop hook that keeps the agent from ending its turn on an
//! unproven sprint and a PreToolUse hook on Bash that stops the cheap ways around the hooks.
//! The permission that lets the rails tools run without a prompt goes where Claude Code honours
//! it: Claude Code 2.1.332 ignores an allow rule for a project's MCP tools in the shared
//! `.claude/settings.json` (observed: "Claude requested permissions to use
//! mcp__rails__evidence, but you haven't granted it yet") and honours it in the personal
//! `.claude/settings.local.json`, so the project's rule is written there; at user scope it is
//! in `~/.claude/settings.json`. `$CLAUDE_CONFIG_DIR`, when set, holds the user files instead,
//! as it does for Claude Code.
//!
//! JSON keeps its key order (serde_json's `preserve_order`), so a merged file differs from the
//! original only where rails adds or removes something (and in indentation, which is rewritten
//! as two spaces when the file changes).

use std::path::PathBuf;

use serde_json::{json, Map, Value};

use super::{change, read, FileAction, Plan, Scope};
use crate::error::{Error, Result};

/// What the Stop hook runs: the gate for the session's sprints (`git rails hook agent-stop`).
/// Claude Code blocks only on exit 2, so any other failure (a missing `git-rails` included)
/// is made 2: the hook fails closed.
pub const STOP_COMMAND: &str = "git rails hook agent-stop || exit 2";
/// What the PreToolUse hook on Bash and the file-editing tools runs (fails closed alike).
pub const PRE_TOOL_COMMAND: &str = "git rails agent hook pre-tool-use || exit 2";
/// The tools the PreToolUse hook is asked about: Bash, and the tools that write a file by path
/// (the guard refuses those that touch the rails state or the agent session store).
pub const PRE_TOOL_MATCHER: &str = "Bash|Edit|Write|MultiEdit|NotebookEdit";
/// The permission rule that allows every tool of the rails server.
pub const ALLOW: &str = "mcp__rails";

/// The server entry setup writes.
pub fn server() -> Value {
    json!({"command": "git", "args": ["rails", "mcp"]})
}

/// An entry runs the rails server when its command and arguments are ours, whatever else the
/// user added to it (`type`, `env`).
fn is_ours(v: &Value) -> bool {
    v["command"] == "git" && v["args"] == json!(["rails", "mcp"])
}

struct Files {
    mcp: PathBuf,
    /// The hooks.
    settings: PathBuf,
    /// The permission (the same file as `settings` at user scope).
    permissions: PathBuf,
}

fn files(scope: &Scope) -> Files {
    match scope {
        Scope::Project(root) => Files {
            mcp: root.join(".mcp.json"),
            settings: root.join(".claude").join("settings.json"),
            permissions: root.join(".claude").join("settings.local.json"),
        },
        Scope::User(u) => {
            let settings = match &u.claude_config_dir {
                Some(dir) => dir.join("settings.json"),
                None => u.home.join(".claude").join("settings.json"),
            };
            Files {
                mcp: match &u.claude_config_dir {
                    Some(dir) => dir.join(".claude.json"),
                    None => u.home.join(".claude.json"),
                },
                permissions: settings.clone(),
                settings,
            }
        }
    }
}

pub(super) fn plan(scope: &Scope, setup: bool, plan: &mut Plan) -> Result<()> {
    let f = files(scope);
    // Both files are read and parsed before anything is decided, so a malformed one stops
    // the whole command with nothing written.
    let mcp_before = read(&f.mcp)?;
    let settings_before = read(&f.settings)?;
    let mut mcp = parse(&f.mcp, mcp_before.as_deref())?;
    let mut settings = parse(&f.settings, settings_before.as_deref())?;
    let split = f.permissions != f.settings;
    let (perms_before, mut perms) = if split {
        let before = read(&f.permissions)?;
        let doc = parse(&f.permissions, before.as_deref())?;
        (before, doc)
    } else {
        (None, Map::new())
    };

    let mcp_edits = edit_servers(&mut mcp, setup, &f.mcp, plan)?;
    let mut settings_edits = edit_hooks(&mut settings, setup, &f.settings)?;
    let perms_edits = if split {
        edit_permission(&mut perms, setup, &f.permissions)?
    } else {
        settings_edits.extend(edit_permission(&mut settings, setup, &f.settings)?);
        Vec::new()
    };

    let mut files = vec![
        (f.mcp, mcp_before, mcp, mcp_edits),
        (f.settings, settings_before, settings, settings_edits),
    ];
    if split {
        files.push((f.permissions, perms_before, perms, perms_edits));
    }
    for (path, before, doc, edits) in files {
        let after = if edits.is_empty() {
            before.clone()
        } else if !setup && doc.is_empty() {
            None
        } else {
            Some(render(&doc)?)
        };
        plan.files.push(change(scope, path, before, after, edits));
    }
    if setup && plan.changes() {
        if let Scope::Project(_) = scope {
            plan.notes.push(
                "Claude Code asks each person once to approve a project's .mcp.json server: \
                 answer its prompt when `claude` starts here (`claude mcp list` shows \
                 \"rails\" pending until then); `claude -p` uses it without asking"
                    .to_string(),
            );
            plan.notes.push(
                "the permission for the rails tools is in .claude/settings.local.json, your own \
                 file (Claude Code ignores it in the shared settings.json); keep it out of commits"
                    .to_string(),
            );
        }
    }
    if plan
        .files
        .iter()
        .any(|c| c.action == FileAction::Delete && !setup)
    {
        plan.notes
            .push("a file left empty by remove is deleted".to_string());
    }
    Ok(())
}

fn parse(path: &std::path::Path, text: Option<&str>) -> Result<Map<String, Value>> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Map::new());
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(Error::refused(format!(
            "{} is not a JSON object; nothing was written",
            path.display()
        ))
        .hint("fix or move the file, then run the command again")),
        Err(e) => Err(Error::refused(format!(
            "{} is not valid JSON ({e}); nothing was written",
            path.display()
        ))
        .hint("fix or move the file, then run the command again")),
    }
}

fn render(doc: &Map<String, Value>) -> Result<String> {
    let mut s = serde_json::to_string_pretty(doc)
        .map_err(|e| Error::internal(format!("rendering JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}

/// `key` of `doc` as an object, made when absent; anything else is refused.
fn object<'a>(
    doc: &'a mut Map<String, Value>,
    key: &str,
    path: &std::path::Path,
) -> Result<&'a mut Map<String, Value>> {
    doc.entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| {
            Error::refused(format!(
                "{}: \"{key}\" is not an object; nothing was written",
                path.display()
            ))
            .hint("fix the file, then run the command again")
        })
}

fn array<'a>(
    doc: &'a mut Map<String, Value>,
    key: &str,
    path: &std::path::Path,
    what: &str,
) -> Result<&'a mut Vec<Value>> {
    doc.entry(key.to_string())
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| {
            Error::refused(format!(
                "{}: {what} is not an array; nothing was written",
                path.display()
            ))
            .hint("fix the file, then run the command again")
        })
}

fn edit_servers(
    doc: &mut Map<String, Value>,
    setup: bool,
    path: &std::path::Path,
    plan: &mut Plan,
) -> Result<Vec<String>> {
    let mut edits = Vec::new();
    if setup {
        let servers = object(doc, "mcpServers", path)?;
        match servers.get("rails") {
            None => {
                servers.insert("rails".into(), server());
                edits.push("add the MCP server \"rails\" (git rails mcp)".to_string());
            }
            Some(v) if is_ours(v) => {}
            Some(v) => {
                return Err(Error::refused(format!(
                    "{} already has an MCP server named \"rails\" that runs something else \
                     ({v}); nothing was written",
                    path.display()
                ))
                .hint(
                    "rename or remove that entry, then run `git rails agent setup claude` again",
                ))
            }
        }
        return Ok(edits);
    }
    let Some(servers) = doc.get_mut("mcpServers").and_then(Value::as_object_mut) else {
        return Ok(edits);
    };
    match servers.get("rails") {
        Some(v) if is_ours(v) => {
            let extra: Vec<&str> = v
                .as_object()
                .map(|o| {
                    o.keys()
                        .map(String::as_str)
                        .filter(|k| !matches!(*k, "command" | "args"))
                        .collect()
                })
                .unwrap_or_default();
            edits.push(if extra.is_empty() {
                "remove the MCP server \"rails\"".to_string()
            } else {
                format!(
                    "remove the MCP server \"rails\" (with the keys added to it: {})",
                    extra.join(", ")
                )
            });
            servers.remove("rails");
            if servers.is_empty() {
                doc.remove("mcpServers");
            }
        }
        Some(_) => plan.notes.push(format!(
            "left alone: the MCP server \"rails\" in {} runs something else than `git rails mcp`",
            path.display()
        )),
        None => {}
    }
    Ok(edits)
}

/// The hooks setup adds: (event, matcher, command, what it is for).
const HOOKS: [(&str, Option<&str>, &str, &str); 3] = [
    (
        "SessionStart",
        None,
        STOP_COMMAND,
        "the SessionStart hook (holds the session to this repository and its sprints)",
    ),
    (
        "Stop",
        None,
        STOP_COMMAND,
        "the Stop hook (the gate, before the agent ends its turn)",
    ),
    (
        "PreToolUse",
        Some(PRE_TOOL_MATCHER),
        PRE_TOOL_COMMAND,
        "the PreToolUse hook on Bash (no --no-verify, no hand-written records, the gate \
         before a push)",
    ),
];

fn has_command(group: &Value, command: &str) -> bool {
    group["hooks"]
        .as_array()
        .is_some_and(|hs| hs.iter().any(|h| h["command"] == command))
}

fn edit_hooks(
    doc: &mut Map<String, Value>,
    setup: bool,
    path: &std::path::Path,
) -> Result<Vec<String>> {
    let mut edits = Vec::new();
    if setup {
        let hooks = object(doc, "hooks", path)?;
        for (event, matcher, command, what) in HOOKS {
            let groups = array(hooks, event, path, &format!("hooks.{event}"))?;
            if !groups.iter().any(|g| has_command(g, command)) {
                let mut group = Map::new();
                if let Some(m) = matcher {
                    group.insert("matcher".into(), json!(m));
                }
                group.insert(
                    "hooks".into(),
                    json!([{"type": "command", "command": command}]),
                );
                groups.push(Value::Object(group));
                edits.push(format!("add {what}: {command}"));
            }
        }
        return Ok(edits);
    }
    if let Some(hooks) = doc.get_mut("hooks").and_then(Value::as_object_mut) {
        for (event, _, command, what) in HOOKS {
            let Some(groups) = hooks.get_mut(event).and_then(Value::as_array_mut) else {
                continue;
            };
            let mut removed = false;
            groups.retain_mut(|g| {
                let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) else {
                    return true;
                };
                let before = hs.len();
                hs.retain(|h| h["command"] != command);
                if hs.len() == before {
                    return true;
                }
                removed = true;
                !hs.is_empty()
            });
            if removed {
                edits.push(format!("remove {what}"));
            }
            if groups.is_empty() {
                hooks.remove(event);
            }
        }
        if hooks.is_empty() {
            doc.remove("hooks");
        }
    }
    Ok(edits)
}

fn edit_permission(
    doc: &mut Map<String, Value>,
    setup: bool,
    path: &std::path::Path,
) -> Result<Vec<String>> {
    let mut edits = Vec::new();
    if setup {
        let perms = object(doc, "permissions", path)?;
        let allow = array(perms, "allow", path, "permissions.allow")?;
        if !allow.iter().any(|a| a == ALLOW) {
            allow.push(json!(ALLOW));
            edits.push(format!("allow the rails tools without a prompt ({ALLOW})"));
        }
        return Ok(edits);
    }
    if let Some(perms) = doc.get_mut("permissions").and_then(Value::as_object_mut) {
        if let Some(allow) = perms.get_mut("allow").and_then(Value::as_array_mut) {
            let before = allow.len();
            allow.retain(|a| a != ALLOW);
            if allow.len() != before {
                edits.push(format!("remove the permission {ALLOW}"));
            }
            if allow.is_empty() {
                perms.remove("allow");
            }
        }
        if perms.is_empty() {
            doc.remove("permissions");
        }
    }
    Ok(edits)
}
