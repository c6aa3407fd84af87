//! `git rails agent setup|remove claude|codex`: the few lines a coding agent needs to use rails
//! (its MCP server, and for Claude Code the hooks that read the gate), merged into the agent's
//! own configuration files.
//!
//! Those files belong to the user and to the agent, which rewrites some of them itself, so an
//! edit here changes only what rails owns: every other key, its order (and, in TOML, every
//! comment) is kept; a file that does not parse is refused and nothing is written; a second
//! setup finds everything in place and changes nothing; `remove` takes away exactly what setup
//! adds and leaves anything else — including an entry named like ours that the user changed.
//! A [`Plan`] is computed first (each file's content before and after) and written only when
//! asked, so `--dry-run` shows the same change as a diff.

pub mod claude;
pub mod codex;
mod diff;
pub mod guard;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};

/// The agents rails can set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    Claude,
    Codex,
}

impl Agent {
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex",
        }
    }
    pub fn id(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        }
    }
}

/// Where the configuration goes: the repository's files, or the user's own.
#[derive(Debug, Clone)]
pub enum Scope {
    /// The work tree's root.
    Project(PathBuf),
    /// The user's files, found from these variables.
    User(UserDirs),
}

/// What locates the user's configuration files.
#[derive(Debug, Clone)]
pub struct UserDirs {
    pub home: PathBuf,
    /// `$CLAUDE_CONFIG_DIR`: where Claude Code keeps `.claude.json` and `settings.json`
    /// instead of `~` and `~/.claude`.
    pub claude_config_dir: Option<PathBuf>,
    /// `$CODEX_HOME`: Codex's home instead of `~/.codex`.
    pub codex_home: Option<PathBuf>,
}

impl UserDirs {
    /// From the environment (`HOME`, `CLAUDE_CONFIG_DIR`, `CODEX_HOME`).
    pub fn from_env() -> Result<UserDirs> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let home = var("HOME").ok_or_else(|| {
            Error::usage("--user needs HOME, which is not set").hint("set HOME, or drop --user")
        })?;
        Ok(UserDirs {
            home,
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
        })
    }
}

impl Scope {
    pub fn id(&self) -> &'static str {
        match self {
            Scope::Project(_) => "project",
            Scope::User(_) => "user",
        }
    }
}

/// What happens to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileAction {
    Create,
    Update,
    Delete,
    Unchanged,
}

/// One file of a plan: where, its content before and after, and what changed in words.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// As shown to the user: relative to the work tree for the project's files.
    pub path: String,
    pub action: FileAction,
    /// Each change in words (`add MCP server "rails"`), empty when unchanged.
    pub edits: Vec<String>,
    #[serde(skip)]
    pub full_path: PathBuf,
    #[serde(skip)]
    pub before: Option<String>,
    /// `None`: the file is deleted (or stays absent).
    #[serde(skip)]
    pub after: Option<String>,
}

/// What setup or remove would do.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub schema: &'static str,
    pub agent: Agent,
    pub action: &'static str,
    pub scope: &'static str,
    pub files: Vec<FileChange>,
    /// What the user should know: what was left alone and why, a step the agent needs.
    pub notes: Vec<String>,
}

impl Plan {
    fn new(agent: Agent, action: &'static str, scope: &Scope) -> Plan {
        Plan {
            schema: "rails-agent/v1",
            agent,
            action,
            scope: scope.id(),
            files: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Whether any file changes.
    pub fn changes(&self) -> bool {
        self.files.iter().any(|f| f.action != FileAction::Unchanged)
    }

    /// The change as a unified diff, one section per changed file.
    pub fn diff(&self) -> String {
        let mut out = String::new();
        for f in self
            .files
            .iter()
            .filter(|f| f.action != FileAction::Unchanged)
        {
            out.push_str(&diff::unified(
                &f.path,
                f.before.as_deref(),
                f.after.as_deref(),
            ));
        }
        out
    }

    /// Writes every changed file (each atomically; missing folders are made).
    pub fn apply(&self) -> Result<()> {
        for f in &self.files {
            match (f.action, &f.after) {
                (FileAction::Unchanged, _) => {}
                (FileAction::Delete, _) | (_, None) => {
                    std::fs::remove_file(&f.full_path).map_err(|e| {
                        Error::internal(format!("removing {}: {e}", f.full_path.display()))
                    })?;
                }
                (_, Some(text)) => {
                    if let Some(dir) = f.full_path.parent() {
                        std::fs::create_dir_all(dir).map_err(|e| {
                            Error::internal(format!("creating {}: {e}", dir.display()))
                        })?;
                    }
                    crate::store::atomic_write(&f.full_path, text.as_bytes())?;
                }
            }
        }
        Ok(())
    }
}

/// What setup adds for `agent` in `scope`.
pub fn setup(agent: Agent, scope: &Scope) -> Result<Plan> {
    let mut plan = Plan::new(agent, "setup", scope);
    match agent {
        Agent::Claude => claude::plan(scope, true, &mut plan)?,
        Agent::Codex => codex::plan(scope, true, &mut plan)?,
    }
    Ok(plan)
}

/// What remove takes away for `agent` in `scope`.
pub fn remove(agent: Agent, scope: &Scope) -> Result<Plan> {
    let mut plan = Plan::new(agent, "remove", scope);
    match agent {
        Agent::Claude => claude::plan(scope, false, &mut plan)?,
        Agent::Codex => codex::plan(scope, false, &mut plan)?,
    }
    Ok(plan)
}

/// A file's path as shown: relative to the work tree when it is inside it.
fn shown(scope: &Scope, p: &Path) -> String {
    match scope {
        Scope::Project(root) => p
            .strip_prefix(root)
            .map(|r| r.display().to_string())
            .unwrap_or_else(|_| p.display().to_string()),
        Scope::User(_) => p.display().to_string(),
    }
}

/// A file's current content (`None` when absent).
fn read(path: &Path) -> Result<Option<String>> {
    match std::fs::read(path) {
        Ok(b) => String::from_utf8(b).map(Some).map_err(|_| {
            Error::refused(format!(
                "{} is not UTF-8 text; nothing was written",
                path.display()
            ))
            .hint("fix or move the file, then run the command again")
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::refused(format!(
            "{} cannot be read: {e}; nothing was written",
            path.display()
        ))),
    }
}

/// The entry of `plan` for a file going from `before` to `after`.
fn change(
    scope: &Scope,
    full_path: PathBuf,
    before: Option<String>,
    after: Option<String>,
    edits: Vec<String>,
) -> FileChange {
    let action = match (&before, &after) {
        (b, a) if b == a => FileAction::Unchanged,
        (None, Some(_)) => FileAction::Create,
        (Some(_), None) => FileAction::Delete,
        _ => FileAction::Update,
    };
    FileChange {
        path: shown(scope, &full_path),
        action,
        edits: if action == FileAction::Unchanged {
            Vec::new()
        } else {
            edits
        },
        full_path,
        before,
        after,
    }
}
