//! `command_success` and `runtimeValidation` commands: `sh -c` in the repository (or the
//! given `cwd`) with a timeout that kills the process group, judged by the exit code.

use super::*;

pub(super) fn command_success(spec: &CommandSpec, root: &Path) -> Outcome {
    run_command(
        &spec.command,
        spec.cwd.as_deref(),
        spec.env.as_ref(),
        spec.timeout_ms.unwrap_or(DEFAULT_COMMAND_TIMEOUT_MS),
        spec.expect_exit_code.unwrap_or(0),
        root,
    )
}

pub(super) fn run_command(
    command: &str,
    cwd: Option<&str>,
    env: Option<&BTreeMap<String, String>>,
    timeout_ms: u64,
    expect: i32,
    root: &Path,
) -> Outcome {
    let dir = cwd.map_or_else(|| root.to_path_buf(), |c| root.join(c));
    let empty = BTreeMap::new();
    let run = process::run_shell(
        command,
        &dir,
        env.unwrap_or(&empty),
        Duration::from_millis(timeout_ms),
    );
    let evidence = json!({
        "exitCode": run.exit_code,
        "signal": run.signal,
        "timedOut": run.timed_out,
        "durationMs": millis(run.duration),
        "expectExitCode": expect,
        "stdoutTail": run.stdout_tail,
        "stderrTail": run.stderr_tail,
    });
    let took = seconds(run.duration);
    let mut outcome = judged(&run, evidence, &took, timeout_ms, expect);
    outcome.streamed = run.redacted;
    outcome
}

/// What the run says about the check.
fn judged(run: &RunResult, evidence: Value, took: &str, timeout_ms: u64, expect: i32) -> Outcome {
    if let Some(e) = &run.spawn_error {
        return Outcome::error(format!("could not start the command: {e}"), evidence);
    }
    if run.timed_out {
        return Outcome::fail(
            format!("timed out after {took} (limit {timeout_ms}ms); process group killed"),
            evidence,
        );
    }
    match run.exit_code {
        Some(code) if code == expect => Outcome::pass(format!("exit {code} in {took}"), evidence),
        Some(code @ (126 | 127)) => {
            let why = if code == 127 {
                "command not found"
            } else {
                "command not executable"
            };
            Outcome::error(
                format!("exit {code} ({why}) in {took}{}", last_line_hint(run)),
                evidence,
            )
        }
        Some(code) => Outcome::fail(
            format!(
                "exit {code} in {took}, expected {expect}{}",
                last_line_hint(run)
            ),
            evidence,
        ),
        None => Outcome::fail(
            format!("{} after {took}, expected exit {expect}", run.describe()),
            evidence,
        ),
    }
}

/// `: <last line of stderr>` (or of stdout when stderr is empty), to say why in one line.
pub(super) fn last_line_hint(run: &RunResult) -> String {
    [&run.stderr_tail, &run.stdout_tail]
        .into_iter()
        .find_map(|s| s.lines().rev().map(str::trim).find(|l| !l.is_empty()))
        .map_or_else(String::new, |l| format!(": {}", clip(l, 160)))
}
