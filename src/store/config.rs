//! Configuration: values as git resolves them (every scope, then `git -c` from
//! `GIT_CONFIG_PARAMETERS`, which gix does not read for an already open repository), the scope
//! that sets a key, and writing the repository's own configuration.

use gix::bstr::ByteSlice;

use super::*;
use crate::error::Result;

impl Store {
    /// A configuration value as git reads it (all scopes), including `git -c key=value`
    /// given to the git command that runs a hook (`GIT_CONFIG_PARAMETERS`, which gix does not
    /// read).
    pub fn config_string(&self, key: &str) -> Option<String> {
        if let Some(v) = std::env::var("GIT_CONFIG_PARAMETERS")
            .ok()
            .and_then(|p| command_line_config(&p, key))
        {
            return Some(v);
        }
        self.repo
            .config_snapshot()
            .string(key)
            .map(|v| v.to_str_lossy().into_owned())
    }

    /// Whether a boolean key is set true (`true`, `yes`, `on`, `1`), as git reads booleans.
    pub fn config_flag(&self, key: &str) -> bool {
        self.config_string(key).is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "true" | "yes" | "on" | "1"
            )
        })
    }

    /// Every value of a multi-valued configuration key (all scopes, then `git -c`).
    pub fn config_strings(&self, key: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .repo
            .config_snapshot()
            .strings(key)
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.to_str_lossy().into_owned())
            .collect();
        if let Some(v) = std::env::var("GIT_CONFIG_PARAMETERS")
            .ok()
            .and_then(|p| command_line_config(&p, key))
        {
            out.push(v);
        }
        out
    }

    /// Whether any key of section `name` (e.g. `trailer`) is set: in any scope, through
    /// `GIT_CONFIG_COUNT` (gix reads it), or by `git -c` (`GIT_CONFIG_PARAMETERS`, which gix
    /// does not read for an open repository).
    pub fn config_section_set(&self, name: &str) -> bool {
        let dash_c = format!("'{}.", name.to_ascii_lowercase());
        if std::env::var("GIT_CONFIG_PARAMETERS")
            .is_ok_and(|p| p.to_ascii_lowercase().contains(&dash_c))
        {
            return true;
        }
        self.repo
            .config_snapshot()
            .plumbing()
            .sections_by_name(name)
            .is_some_and(|mut sections| sections.next().is_some())
    }

    /// Which configuration file sets `key` last, as git reports it: `local`, `global`,
    /// `system`, `worktree` or `command` (None when it is not set).
    pub fn config_scope(&self, key: &str) -> Option<String> {
        let out = self.git(&["config", "--show-scope", "--get", key]).ok()?;
        out.split('\t').next().map(|s| s.trim().to_string())
    }

    /// Sets a value in the repository's own configuration (`.git/config`).
    pub fn set_config(&self, key: &str, value: &str) -> Result<()> {
        self.git(&["config", "--local", key, value]).map(|_| ())
    }
}

/// The last value of `key` in git's `GIT_CONFIG_PARAMETERS` (`'a.b'='v' 'c.d=w'`): section and
/// key names compare without case, the subsection with case.
fn command_line_config(params: &str, key: &str) -> Option<String> {
    // Split into shell-single-quoted words; `'\''` is an escaped quote.
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut in_quote = false;
    let mut chars = params.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => in_quote = !in_quote,
            '\\' if !in_quote => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            ' ' if !in_quote => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    let norm = |k: &str| -> String {
        match (k.find('.'), k.rfind('.')) {
            (Some(a), Some(b)) if a != b => format!(
                "{}.{}.{}",
                k[..a].to_ascii_lowercase(),
                &k[a + 1..b],
                k[b + 1..].to_ascii_lowercase()
            ),
            _ => k.to_ascii_lowercase(),
        }
    };
    let want = norm(key);
    words
        .iter()
        .filter_map(|w| w.split_once('='))
        .filter(|(k, _)| norm(k) == want)
        .map(|(_, v)| v.to_string())
        .next_back()
}

#[cfg(test)]
mod tests {
    use super::command_line_config;

    #[test]
    fn git_dash_c_parameters() {
        let p = "'rails.requireSprint'='true' 'branch.Main.railsSprint'='S-1' 'core.x=y'";
        assert_eq!(
            command_line_config(p, "rails.requiresprint").as_deref(),
            Some("true")
        );
        assert_eq!(
            command_line_config(p, "branch.Main.railsSprint").as_deref(),
            Some("S-1")
        );
        assert_eq!(command_line_config(p, "branch.main.railsSprint"), None);
        assert_eq!(command_line_config(p, "core.x").as_deref(), Some("y"));
        assert_eq!(
            command_line_config("'a.b'='it'\\''s'", "a.b").as_deref(),
            Some("it's")
        );
        assert_eq!(
            command_line_config("'a.b'='1' 'a.b'='2'", "a.b").as_deref(),
            Some("2")
        );
    }
}
