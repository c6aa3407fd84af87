//! `git rails agent setup|remove claude|codex` and `git rails agent hook pre-tool-use`: the
//! arguments and the text; what is written is decided in [`crate::agent`].

use std::io::Read;

use clap::{Args, Subcommand, ValueEnum};
use serde_json::Value;

use crate::agent::{self, guard, Agent, FileAction, Plan, Scope, UserDirs};
use crate::error::{Error, Outcome, Result};
use crate::store::Store;

#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Write what the agent needs to use rails into its configuration files
    ///
    /// claude: the MCP server "rails" (`git rails mcp`) in .mcp.json; in .claude/settings.json
    /// the Stop hook (`git rails hook agent-stop`: the agent cannot end its turn while the
    /// sprint is unproven) and a PreToolUse hook on Bash (`git rails agent hook pre-tool-use`);
    /// the permission mcp__rails in .claude/settings.local.json (Claude Code ignores it in the
    /// shared file). codex: [mcp_servers.rails] in
    /// .codex/config.toml, its tools allowed without a prompt. Merged into what is there: no
    /// other key or comment changes; a file that does not parse is refused with nothing
    /// written; run twice, the second run changes nothing.
    Setup(SetupArgs),
    /// Take away exactly what setup adds (an entry the user changed is left alone)
    Remove(SetupArgs),
    /// What the hooks setup writes run (the agent passes its event on stdin)
    #[command(subcommand)]
    Hook(AgentHookCommand),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AgentName {
    /// Claude Code
    Claude,
    /// Codex CLI
    Codex,
}

#[derive(Debug, Args)]
pub struct SetupArgs {
    /// The agent: claude or codex
    #[arg(value_enum)]
    pub agent: AgentName,
    /// Show the change as a diff and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// The user's files instead of the repository's: claude ~/.claude.json and
    /// ~/.claude/settings.json (or $CLAUDE_CONFIG_DIR/.claude.json and settings.json), codex
    /// $CODEX_HOME/config.toml (or ~/.codex/config.toml)
    #[arg(long)]
    pub user: bool,
    /// Print the plan as a rails-agent/v1 JSON document
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum AgentHookCommand {
    /// Claude Code PreToolUse hook on Bash: exit 2 (the reason on stderr, which Claude Code
    /// gives the model) for a command that skips the rails hooks (--no-verify, RAILS_SKIP=1,
    /// core.hooksPath) or writes records by hand (update-ref or notes on refs/rails/…,
    /// refs/spar/…); a push or `gh pr create` runs the gate first, as `git rails hook
    /// agent-stop` does; anything else exits 0
    PreToolUse,
}

pub fn run(c: AgentCommand) -> Result<Outcome> {
    match c {
        AgentCommand::Setup(a) => plan_and_apply(a, true),
        AgentCommand::Remove(a) => plan_and_apply(a, false),
        AgentCommand::Hook(AgentHookCommand::PreToolUse) => pre_tool_use(),
    }
}

fn plan_and_apply(a: SetupArgs, setup: bool) -> Result<Outcome> {
    let which = match a.agent {
        AgentName::Claude => Agent::Claude,
        AgentName::Codex => Agent::Codex,
    };
    let scope = if a.user {
        Scope::User(UserDirs::from_env()?)
    } else {
        let store = Store::discover().map_err(|e| {
            e.hint("run it inside the repository, or use --user for your own files")
        })?;
        Scope::Project(store.workdir()?.to_path_buf())
    };
    let plan = if setup {
        agent::setup(which, &scope)?
    } else {
        agent::remove(which, &scope)?
    };
    if !a.dry_run {
        plan.apply()?;
    }
    if a.json {
        let mut doc = serde_json::to_value(&plan)
            .map_err(|e| Error::internal(format!("rendering JSON: {e}")))?;
        doc["dryRun"] = Value::Bool(a.dry_run);
        doc["changed"] = Value::Bool(plan.changes() && !a.dry_run);
        if a.dry_run {
            doc["diff"] = Value::String(plan.diff());
        }
        super::print_json(&doc)?;
        return Ok(Outcome::Ok);
    }
    render(&plan, a.dry_run, &scope);
    Ok(Outcome::Ok)
}

fn render(plan: &Plan, dry_run: bool, scope: &Scope) {
    let name = plan.agent.name();
    let here = match scope {
        Scope::Project(_) => "for this repository",
        Scope::User(_) => "for your user",
    };
    if !plan.changes() {
        if plan.action == "setup" {
            outln!("{name} is already set up {here}; nothing changed");
        } else {
            outln!("nothing rails added is in {name}'s files {here}; nothing changed");
        }
    } else if dry_run {
        out!("{}", plan.diff());
        outln!("dry run: nothing was written");
    } else {
        outln!(
            "{} {name} {here}:",
            if plan.action == "setup" {
                "set up"
            } else {
                "removed rails from"
            }
        );
        for f in plan
            .files
            .iter()
            .filter(|f| f.action != FileAction::Unchanged)
        {
            let verb = match f.action {
                FileAction::Create => " (created)",
                FileAction::Delete => " (deleted)",
                _ => "",
            };
            outln!("  {}{verb}:", f.path);
            for e in &f.edits {
                outln!("    {e}");
            }
        }
    }
    for n in &plan.notes {
        outln!("note: {n}");
    }
}

/// The PreToolUse hook: the event on stdin; exit 2 with the reason on stderr to block.
fn pre_tool_use() -> Result<Outcome> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| Error::refused(format!("pre-tool-use: reading stdin: {e}")))?;
    let event: Value = serde_json::from_str(&text).map_err(|e| {
        Error::refused(format!(
            "pre-tool-use: stdin is not a hook event (JSON): {e}"
        ))
    })?;
    // Every call the hook sees holds the session where it works (its sprints grow), so a
    // branch switched to in the session's first turn does not escape its Stop.
    crate::hooks::run::agent_hold(&text);
    // Edit and Write (and their kin) touch files by path: the rails state and the agent
    // session store are written only by the tools.
    let tool = event["tool_name"].as_str().unwrap_or_default();
    if tool != "Bash" {
        for key in ["file_path", "notebook_path", "path"] {
            if let Some(path) = event["tool_input"][key].as_str() {
                if let Some(reason) = guard::edit_refused(path) {
                    eprintln!("git-rails: blocked: {tool} {path}: {reason}");
                    return Ok(Outcome::Blocked);
                }
            }
        }
        return Ok(Outcome::Ok);
    }
    let Some(command) = event["tool_input"]["command"].as_str() else {
        return Ok(Outcome::Ok);
    };
    match guard::classify(command) {
        guard::Verdict::Allow => Ok(Outcome::Ok),
        guard::Verdict::Block(reason) => {
            eprintln!("git-rails: blocked: {reason}");
            Ok(Outcome::Blocked)
        }
        guard::Verdict::Publish(what) => {
            // The session is judged where it is held, whatever folder the event names.
            let result = crate::hooks::run::agent_stop(&text);
            if result.code == 2 {
                eprintln!(
                    "git-rails: blocked: {what} publishes the work, and the gate does not pass yet"
                );
            }
            for l in &result.lines {
                eprintln!("{l}");
            }
            Ok(match result.code {
                0 => Outcome::Ok,
                2 => Outcome::Blocked,
                c => Outcome::Code(c),
            })
        }
    }
}
