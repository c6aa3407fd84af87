//! The `command_exists` and `env_var` prerequisites. `command_exists` uses the crate's one
//! executable rule (`crate::process::find_on_path`); `env_var` never records the value, which
//! may be a secret.

use super::*;

pub(super) fn command_exists(spec: &CommandExistsSpec, root: &Path) -> Outcome {
    let command = spec.command.trim();
    if command.is_empty() {
        return Outcome::error("no command named", json!({"path": null}));
    }
    let found: Option<PathBuf> = if command.contains('/') {
        Some(root.join(command)).filter(|p| crate::process::is_executable(p))
    } else {
        crate::process::find_on_path(command, std::env::var_os("PATH").as_deref()).found()
    };
    match found {
        Some(p) => {
            let shown = p.display().to_string();
            Outcome::pass(format!("{command:?} is {shown}"), json!({"path": shown}))
        }
        None if command.contains('/') => Outcome::fail(
            format!("{command:?} is not an executable file"),
            json!({"path": null}),
        ),
        None => Outcome::fail(format!("{command:?} is not on PATH"), json!({"path": null})),
    }
}

/// Never records the value: it may be a secret.
pub(super) fn env_var(spec: &EnvVarSpec) -> Outcome {
    let name = spec.name.as_str();
    let evidence =
        |set: bool, matches: Option<bool>| json!({"name": name, "set": set, "matches": matches});
    let Some(value) = std::env::var_os(name) else {
        return Outcome::fail(format!("${name} is not set"), evidence(false, None));
    };
    let value = value.to_string_lossy();
    match &spec.pattern {
        None if value.is_empty() => {
            Outcome::fail(format!("${name} is set but empty"), evidence(true, None))
        }
        None => Outcome::pass(format!("${name} is set"), evidence(true, None)),
        Some(pattern) => match Regex::new(pattern) {
            Err(e) => Outcome::error(
                format!("invalid regex for ${name}: {e}"),
                evidence(true, None),
            ),
            Ok(re) => {
                let ok = re.is_match(&value);
                let summary = if ok {
                    format!("${name} is set and matches /{pattern}/")
                } else {
                    format!("${name} is set but does not match /{pattern}/")
                };
                Outcome::pass_if(ok, summary, evidence(true, Some(ok)))
            }
        },
    }
}
