//! Codex: `[mcp_servers.rails]` in `.codex/config.toml` (user scope: `$CODEX_HOME/config.toml`,
//! else `~/.codex/config.toml`), with `default_tools_approval_mode = "approve"` so the rails
//! tools run without a prompt (`codex exec` otherwise fails every call: "MCP tool call requires
//! approval, but approval policy is never").
//!
//! The file is edited with `toml_edit`, which keeps every comment, blank line and key order of
//! what is there: the table rails adds is the only difference.

use std::path::PathBuf;

use toml_edit::{value, Array, DocumentMut, Item, Table};

use super::{change, read, Plan, Scope};
use crate::error::{Error, Result};

/// The comment above the table setup adds.
const COMMENT: &str =
    "# The rails MCP server (`git rails agent setup codex`; `git rails agent remove codex` removes it)\n";

fn file(scope: &Scope) -> PathBuf {
    match scope {
        Scope::Project(root) => root.join(".codex").join("config.toml"),
        Scope::User(u) => u
            .codex_home
            .clone()
            .unwrap_or_else(|| u.home.join(".codex"))
            .join("config.toml"),
    }
}

fn is_ours(t: &dyn toml_edit::TableLike) -> bool {
    let args: Option<Vec<&str>> = t
        .get("args")
        .and_then(Item::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect());
    t.get("command").and_then(Item::as_str) == Some("git")
        && args.as_deref() == Some(&["rails", "mcp"][..])
}

pub(super) fn plan(scope: &Scope, setup: bool, plan: &mut Plan) -> Result<()> {
    let path = file(scope);
    let before = read(&path)?;
    let mut doc: DocumentMut =
        before
            .as_deref()
            .unwrap_or("")
            .parse()
            .map_err(|e: toml_edit::TomlError| {
                Error::refused(format!(
                    "{} is not valid TOML ({}); nothing was written",
                    path.display(),
                    e.to_string().trim_end()
                ))
                .hint("fix or move the file, then run the command again")
            })?;
    let not_table = || {
        Error::refused(format!(
            "{}: mcp_servers is not a table; nothing was written",
            path.display()
        ))
        .hint("fix the file, then run the command again")
    };
    let mut edits = Vec::new();
    if setup {
        if doc.get("mcp_servers").is_none() {
            let mut t = Table::new();
            t.set_implicit(true);
            doc.insert("mcp_servers", Item::Table(t));
        }
        let servers = doc
            .get_mut("mcp_servers")
            .and_then(Item::as_table_like_mut)
            .ok_or_else(not_table)?;
        match servers.get_mut("rails") {
            None => {
                let mut t = Table::new();
                t.insert("command", value("git"));
                t.insert("args", value(Array::from_iter(["rails", "mcp"])));
                t.insert("default_tools_approval_mode", value("approve"));
                t.decor_mut().set_prefix(format!("\n{COMMENT}"));
                servers.insert("rails", Item::Table(t));
                edits.push("add the MCP server \"rails\" (git rails mcp)".to_string());
                edits.push("let its tools run without a prompt".to_string());
            }
            Some(item) => {
                let Some(t) = item.as_table_like_mut() else {
                    return Err(refuse_other(&path));
                };
                if !is_ours(t) {
                    return Err(refuse_other(&path));
                }
                if t.get("default_tools_approval_mode").is_none() {
                    t.insert("default_tools_approval_mode", value("approve"));
                    edits.push("let the rails tools run without a prompt".to_string());
                }
            }
        }
        if let (Scope::Project(root), false) = (scope, edits.is_empty()) {
            plan.notes.push(format!(
                "Codex reads .codex/config.toml only in a trusted project: answer its trust \
                 prompt when `codex` starts here, or add [projects.\"{}\"] with trust_level = \
                 \"trusted\" to ~/.codex/config.toml",
                root.display()
            ));
        }
    } else if let Some(servers) = doc.get_mut("mcp_servers").and_then(Item::as_table_like_mut) {
        let ours = servers.get("rails").and_then(Item::as_table_like).map(|t| {
            let extra: Vec<String> = t
                .iter()
                .map(|(k, _)| k.to_string())
                .filter(|k| {
                    !matches!(
                        k.as_str(),
                        "command" | "args" | "default_tools_approval_mode"
                    )
                })
                .collect();
            (is_ours(t), extra)
        });
        match ours {
            Some((true, extra)) => {
                servers.remove("rails");
                edits.push(if extra.is_empty() {
                    "remove the MCP server \"rails\"".to_string()
                } else {
                    format!(
                        "remove the MCP server \"rails\" (with the keys added to it: {})",
                        extra.join(", ")
                    )
                });
                let empty_implicit = doc
                    .get("mcp_servers")
                    .and_then(Item::as_table)
                    .is_some_and(|t| t.is_empty() && t.is_implicit());
                if empty_implicit {
                    doc.remove("mcp_servers");
                }
            }
            Some((false, _)) => plan.notes.push(format!(
                "left alone: the MCP server \"rails\" in {} runs something else than `git rails mcp`",
                path.display()
            )),
            None if servers.get("rails").is_some() => plan.notes.push(format!(
                "left alone: mcp_servers.rails in {} is not a table",
                path.display()
            )),
            None => {}
        }
    }
    let after = if edits.is_empty() {
        before.clone()
    } else {
        let text = doc.to_string();
        if !setup && text.trim().is_empty() {
            plan.notes
                .push("a file left empty by remove is deleted".to_string());
            None
        } else {
            Some(text.trim_start_matches('\n').to_string())
        }
    };
    plan.files.push(change(scope, path, before, after, edits));
    Ok(())
}

fn refuse_other(path: &std::path::Path) -> Error {
    Error::refused(format!(
        "{} already has an MCP server named \"rails\" that does not run `git rails mcp`; \
         nothing was written",
        path.display()
    ))
    .hint("rename or remove [mcp_servers.rails], then run `git rails agent setup codex` again")
}
