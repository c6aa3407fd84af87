//! The truth about a hook comes from running it: `hooks status` runs each hook the way git
//! would (`git hook run`, through whatever manager owns it) with `RAILS_HOOK_PROBE` set. Our
//! entry point then writes what it received to that file and exits 0 without judging anything,
//! so the probe sees whether the gate is reached, with which arguments and stdin.
//!
//! Setting the variable by hand skips the checks like `RAILS_SKIP=1` does, and says so on
//! stderr; neither is stronger than `--no-verify`, which git always offers.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Context, Result};
use crate::store::Store;

/// The variable that turns `git rails hook <name>` into a probe answer.
pub const VAR: &str = "RAILS_HOOK_PROBE";

/// The pre-push line the probe feeds: a deletion, which no gate (and no pre-commit stage) acts on.
pub const PRE_PUSH_STDIN: &str = "(delete) 0000000000000000000000000000000000000000 refs/heads/rails-probe 0000000000000000000000000000000000000000\n";

/// The arguments the probe passes to pre-push (remote name and URL).
pub const REMOTE: &str = "rails-probe";

/// What our entry point received while probed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub hook: String,
    pub args: Vec<String>,
    pub stdin: String,
    /// Run by pre-commit's shim as `<hook>.legacy` (it sets `PRE_COMMIT_RUNNING_LEGACY`).
    pub pre_commit_legacy: bool,
    /// A foreign hook our script would chain (`<hook>.local`), which the probe does not run.
    pub chained: Option<String>,
}

/// Called by `git rails hook <name>` before anything else: when probed, records what it got
/// and returns the line to print (the hook then exits 0).
pub fn answer(name: &str, args: &[String], stdin: &[u8]) -> Result<Option<String>> {
    let Some(file) = std::env::var_os(VAR) else {
        return Ok(None);
    };
    let chained = std::env::var_os("RAILS_HOOK_DIR")
        .map(|d| Path::new(&d).join(format!("{name}.local")))
        .filter(|p| p.exists())
        .map(|p| p.display().to_string());
    let a = Answer {
        hook: name.to_string(),
        args: args.to_vec(),
        stdin: String::from_utf8_lossy(stdin).into_owned(),
        pre_commit_legacy: std::env::var_os("PRE_COMMIT_RUNNING_LEGACY").is_some(),
        chained,
    };
    let mut line = serde_json::to_string(&a).ctx("encoding the probe answer")?;
    line.push('\n');
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .ctx(format!(
            "opening the probe file {}",
            Path::new(&file).display()
        ))?;
    f.write_all(line.as_bytes())
        .ctx("writing the probe answer")?;
    Ok(Some(format!(
        "git-rails: {VAR} is set: the {name} gate answered the probe and checked nothing"
    )))
}

/// What running one hook showed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    /// How many times our gate was reached (1 is right; 2 means it is wired twice).
    pub gate_runs: usize,
    /// pre-push only: whether git's stdin lines reached the gate unchanged.
    pub stdin_passed: Option<bool>,
    /// Whether the gate got the hook's arguments unchanged.
    pub args_passed: bool,
    pub pre_commit_legacy: bool,
    pub chained: Option<String>,
    /// The exit code of the whole hook (other tools' hooks included).
    pub exit: i32,
    /// What the hook printed (git sends a hook's stdout to stderr).
    pub output: String,
}

/// Runs `hook` as git would, probed.
pub fn run(store: &Store, hook: &str) -> Result<Probe> {
    let tmp = tempfile::tempdir().ctx("creating a folder for the hook probe")?;
    let answers = tmp.path().join("answers");
    let stdin = tmp.path().join("stdin");
    let msg = tmp.path().join("COMMIT_EDITMSG");
    std::fs::write(&msg, "rails hooks status probe\n").ctx("writing the probe message")?;
    let (input, args): (&str, Vec<String>) = match hook {
        "pre-push" => (PRE_PUSH_STDIN, vec![REMOTE.into(), REMOTE.into()]),
        "commit-msg" => ("", vec![msg.display().to_string()]),
        _ => ("", vec![]),
    };
    std::fs::write(&stdin, input).ctx("writing the probe stdin")?;
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let (exit, output) = store.run_hook(hook, &argv, &stdin, &[(VAR, answers.as_path())])?;
    let got: Vec<Answer> = std::fs::read_to_string(&answers)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|a: &Answer| a.hook == hook)
        .collect();
    let first = got.first();
    Ok(Probe {
        gate_runs: got.len(),
        stdin_passed: (hook == "pre-push").then(|| first.is_some_and(|a| a.stdin == input)),
        // pre-push needs the remote's name; the URL is optional (lefthook does not pass it).
        args_passed: first.is_some_and(|a| {
            if hook == "pre-push" {
                a.args.first() == args.first()
            } else {
                a.args == args
            }
        }),
        pre_commit_legacy: first.is_some_and(|a| a.pre_commit_legacy),
        chained: first.and_then(|a| a.chained.clone()),
        exit,
        output: output
            .lines()
            .filter(|l| !l.contains(VAR))
            .collect::<Vec<_>>()
            .join("\n"),
    })
}
