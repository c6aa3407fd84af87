//! Running a shell command as a check, a runtime command or an actor: `sh -c` in its own
//! process group, with a timeout that kills the whole group (no grandchild outlives it), and
//! the last bytes of stdout and stderr kept; and the crate's one rule for finding what to run
//! ([`is_executable`], [`find_on_path`]).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How much of each stream is kept (the tail).
pub const TAIL_BYTES: usize = 64 * 1024;

/// What running a command showed.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The exit code, when the shell exited (not killed).
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// True when the timeout ran out and the process group was killed.
    pub timed_out: bool,
    pub duration: Duration,
    pub stdout_tail: String,
    pub stderr_tail: String,
    /// Set when the command could not be started at all.
    pub spawn_error: Option<String>,
    /// How many secret values were replaced in the kept output ([`run_shell`] only: its
    /// output is written into records; see `crate::redact`).
    pub redacted: usize,
}

impl RunResult {
    /// A one-line account: `exit 0`, `killed by signal 9`, `timed out after 2.0s`.
    pub fn describe(&self) -> String {
        if let Some(e) = &self.spawn_error {
            return format!("could not start: {e}");
        }
        if self.timed_out {
            return format!(
                "timed out after {:.1}s (process group killed)",
                self.duration.as_secs_f64()
            );
        }
        match (self.exit_code, self.signal) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("killed by signal {s}"),
            _ => "ended without a status".to_string(),
        }
    }
}

/// Runs `sh -c command` in `cwd` with the process environment plus `env`, stdin closed. Its
/// output is redacted as it is read (a check's output goes into records): the secret-named
/// values of the environment and of `env`, and the known token formats (`crate::redact`).
pub fn run_shell(
    command: &str,
    cwd: &Path,
    env: &BTreeMap<String, String>,
    timeout: Duration,
) -> RunResult {
    let start = Instant::now();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return not_started(start, format!("sh -c in {}: {e}", cwd.display())),
    };
    let pgid = child.id() as i32;
    let (tx, rx) = mpsc::channel::<Kept>();
    let redactor = crate::redact::Redactor::from_env()
        .with_pairs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    if let Some(out) = child.stdout.take() {
        spawn_reader(
            out,
            1,
            TAIL_BYTES,
            tx.clone(),
            None,
            Some(redactor.stream()),
        );
    }
    if let Some(err) = child.stderr.take() {
        spawn_reader(
            err,
            2,
            TAIL_BYTES,
            tx.clone(),
            None,
            Some(redactor.stream()),
        );
    }
    drop(tx);
    // No grandchild outlives its command: whatever is left in the group goes too (`finish`),
    // which also closes the pipes the readers wait on.
    finish(child, pgid, start, timeout, rx, None, None)
}

/// Runs `argv` (no shell) in `cwd` in its own process group, writing `stdin` to it, with a
/// timeout that kills the group. Keeps up to 8 MiB of stdout (an actor's whole answer).
pub fn run_argv(
    argv: &[String],
    cwd: &Path,
    env: &[(&str, &str)],
    stdin: &[u8],
    timeout: Duration,
) -> RunResult {
    run_argv_with(argv, cwd, env, stdin, timeout, None, None)
}

/// [`run_argv`] that also ends (kills the group, reported as timed out) as soon as `cancel`
/// is set: a notifier delivery the run stopped waiting for leaves no process behind.
pub fn run_argv_cancellable(
    argv: &[String],
    cwd: &Path,
    env: &[(&str, &str)],
    stdin: &[u8],
    timeout: Duration,
    cancel: &std::sync::atomic::AtomicBool,
) -> RunResult {
    run_argv_with(argv, cwd, env, stdin, timeout, None, Some(cancel))
}

/// [`run_argv`] that also hands each line of stdout to `on_line` as it arrives (a reviewer's
/// event stream), on the calling thread.
pub fn run_argv_streaming(
    argv: &[String],
    cwd: &Path,
    env: &[(&str, &str)],
    stdin: &[u8],
    timeout: Duration,
    on_line: &mut dyn FnMut(&str),
) -> RunResult {
    run_argv_with(argv, cwd, env, stdin, timeout, Some(on_line), None)
}

fn run_argv_with(
    argv: &[String],
    cwd: &Path,
    env: &[(&str, &str)],
    stdin: &[u8],
    timeout: Duration,
    on_line: Option<&mut dyn FnMut(&str)>,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> RunResult {
    let start = Instant::now();
    let Some((program, args)) = argv.split_first() else {
        return not_started(start, "empty command".into());
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return not_started(start, format!("{program}: {e}")),
    };
    let pgid = child.id() as i32;
    if let Some(mut input) = child.stdin.take() {
        let bytes = stdin.to_vec();
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = input.write_all(&bytes);
        });
    }
    let (tx, rx) = mpsc::channel::<Kept>();
    let (line_tx, line_rx) = mpsc::channel::<String>();
    let lines = on_line.map(|f| (line_rx, f));
    if let Some(out) = child.stdout.take() {
        let line_tx = lines.as_ref().map(|_| line_tx);
        spawn_reader(out, 1, 8 * 1024 * 1024, tx.clone(), line_tx, None);
    }
    if let Some(err) = child.stderr.take() {
        spawn_reader(err, 2, TAIL_BYTES, tx.clone(), None, None);
    }
    drop(tx);
    finish(child, pgid, start, timeout, rx, lines, cancel)
}

/// A stream's lines on their way to a caller's callback.
type Lines<'a> = (mpsc::Receiver<String>, &'a mut dyn FnMut(&str));

/// Hands over the lines that arrived, waiting up to `wait` for the first one.
fn deliver(lines: &mut Option<Lines<'_>>, wait: Duration) {
    let Some((rx, on_line)) = lines else {
        std::thread::sleep(wait);
        return;
    };
    if let Ok(l) = rx.recv_timeout(wait) {
        on_line(l.trim_end_matches(['\n', '\r']));
    }
    while let Ok(l) = rx.try_recv() {
        on_line(l.trim_end_matches(['\n', '\r']));
    }
}

fn finish(
    mut child: std::process::Child,
    pgid: i32,
    start: Instant,
    timeout: Duration,
    rx: mpsc::Receiver<Kept>,
    mut lines: Option<Lines<'_>>,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> RunResult {
    let deadline = start + timeout;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        let cancelled = cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::SeqCst));
        if Instant::now() >= deadline || cancelled {
            timed_out = true;
            kill_group(pgid);
            break child.wait().ok();
        }
        deliver(&mut lines, Duration::from_millis(5));
    };
    let duration = start.elapsed();
    kill_group(pgid);
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let mut redacted = 0;
    let wait_until = Instant::now() + Duration::from_secs(2);
    for _ in 0..2 {
        let left = wait_until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((1, bytes, n)) => (stdout, redacted) = (bytes, redacted + n),
            Ok((_, bytes, n)) => (stderr, redacted) = (bytes, redacted + n),
            Err(_) => break,
        }
    }
    // Lines that arrived after the exit (the readers have ended, or been given up on).
    deliver(&mut lines, Duration::ZERO);
    RunResult {
        exit_code: if timed_out {
            None
        } else {
            status.and_then(|s| s.code())
        },
        signal: status.and_then(|s| s.signal()),
        timed_out,
        duration,
        stdout_tail: String::from_utf8_lossy(&stdout).into_owned(),
        stderr_tail: String::from_utf8_lossy(&stderr).into_owned(),
        spawn_error: None,
        redacted,
    }
}

/// Replaces each `{name}` of `values` anywhere inside `arg`, in one pass: a substituted value is
/// never searched again (a work dir named `x{sprint}` stays as it is), and any other `{…}` is
/// left alone. Shared by the pipeline's actors and spar's command reviewers.
pub fn substitute_placeholders(arg: &str, values: &[(&str, &OsStr)]) -> OsString {
    let mut out = OsString::new();
    let mut rest = arg;
    while let Some(i) = rest.find('{') {
        out.push(&rest[..i]);
        let tail = &rest[i + 1..];
        let hit = values.iter().find_map(|(name, v)| {
            tail.strip_prefix(name)
                .and_then(|after| after.strip_prefix('}'))
                .map(|after| (after, v))
        });
        match hit {
            Some((after, v)) => {
                out.push(v);
                rest = after;
            }
            None => {
                out.push("{");
                rest = tail;
            }
        }
    }
    out.push(rest);
    out
}

/// The result of a command that could not be started.
fn not_started(start: Instant, why: String) -> RunResult {
    RunResult {
        exit_code: None,
        signal: None,
        timed_out: false,
        duration: start.elapsed(),
        stdout_tail: String::new(),
        stderr_tail: String::new(),
        spawn_error: Some(why),
        redacted: 0,
    }
}

/// Sends SIGKILL to the process group `pgid`; a group that is already gone is fine.
pub fn kill_group(pgid: i32) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals the process group; no memory is touched.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// What a reader kept of its stream: which stream (1 stdout, 2 stderr), its last bytes, and
/// how many secrets its redactor replaced.
type Kept = (u8, Vec<u8>, usize);

/// Reads a stream to its end on a thread, keeping its last `keep` bytes; with `lines`, also
/// sends each line (a last one without a newline at the end) as it arrives; with `redact`,
/// what is kept is redacted before it is kept (the tail is cut from redacted bytes, so a cut
/// never leaves half a secret).
fn spawn_reader<R: Read + Send + 'static>(
    mut r: R,
    which: u8,
    keep: usize,
    tx: mpsc::Sender<Kept>,
    lines: Option<mpsc::Sender<String>>,
    mut redact: Option<crate::redact::Stream>,
) {
    std::thread::spawn(move || {
        let mut kept: Vec<u8> = Vec::new();
        let mut partial: Vec<u8> = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    match &mut redact {
                        Some(s) => kept.extend(s.push(&buf[..n])),
                        None => kept.extend_from_slice(&buf[..n]),
                    }
                    if kept.len() > 2 * keep {
                        let cut = kept.len() - keep;
                        kept.drain(..cut);
                    }
                    if let Some(lines) = &lines {
                        partial.extend_from_slice(&buf[..n]);
                        while let Some(i) = partial.iter().position(|&b| b == b'\n') {
                            let line: Vec<u8> = partial.drain(..=i).collect();
                            let _ = lines.send(String::from_utf8_lossy(&line).into_owned());
                        }
                    }
                }
            }
        }
        if let (Some(lines), false) = (&lines, partial.is_empty()) {
            let _ = lines.send(String::from_utf8_lossy(&partial).into_owned());
        }
        let mut redacted = 0;
        if let Some(s) = redact {
            let (rest, n) = s.finish();
            kept.extend(rest);
            redacted = n;
        }
        if kept.len() > keep {
            let cut = kept.len() - keep;
            kept.drain(..cut);
        }
        let _ = tx.send((which, kept, redacted));
    });
}

/// Whether this process may execute `path`: a regular file (after following symbolic links)
/// that the effective user and group may execute, as `execve` decides (and git for a hook, and
/// Go's `exec.LookPath`). A mode test (`& 0o111`) would say yes to a file only its owner may run.
pub fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file()) && may_execute(path)
}

/// The access check of [`is_executable`], without the regular-file test.
fn may_execute(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call.
    unsafe {
        libc::faccessat(
            libc::AT_FDCWD,
            c_path.as_ptr(),
            libc::X_OK,
            libc::AT_EACCESS,
        ) == 0
    }
}

/// What looking a bare name up on `PATH` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The first executable regular file of that name.
    Found(PathBuf),
    /// No executable one; this is the first regular file of that name (it may not be run).
    NotExecutable(PathBuf),
    /// No regular file of that name in any searched directory.
    Missing,
}

impl Lookup {
    /// The executable found, if any.
    pub fn found(self) -> Option<PathBuf> {
        match self {
            Lookup::Found(p) => Some(p),
            _ => None,
        }
    }
}

/// Looks a bare `name` up in the directories of `path_var` (a `PATH` value), in order. Empty
/// and relative entries are skipped, so nothing is found in (and later run from) whatever the
/// current directory happens to be. An empty name finds nothing.
pub fn find_on_path(name: &str, path_var: Option<&OsStr>) -> Lookup {
    let mut not_executable = None;
    if name.is_empty() {
        return Lookup::Missing;
    }
    for dir in path_var.map(std::env::split_paths).into_iter().flatten() {
        if dir.is_relative() {
            continue;
        }
        let candidate = dir.join(name);
        if std::fs::metadata(&candidate).is_ok_and(|m| m.is_file()) {
            if may_execute(&candidate) {
                return Lookup::Found(candidate);
            }
            not_executable.get_or_insert(candidate);
        }
    }
    not_executable.map_or(Lookup::Missing, Lookup::NotExecutable)
}

#[cfg(test)]
mod tests {
    use super::{find_on_path, is_executable, substitute_placeholders, Lookup};
    use std::ffi::OsStr;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn one_executable_rule_for_the_whole_crate() {
        let d = tempfile::tempdir().unwrap();
        let (plain, exec, folder) = (d.path().join("a"), d.path().join("b"), d.path().join("c"));
        for (dir, mode) in [(&plain, 0o644), (&exec, 0o755)] {
            std::fs::create_dir(dir).unwrap();
            let tool = dir.join("tool");
            std::fs::write(&tool, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        std::fs::create_dir_all(folder.join("tool")).unwrap();
        assert!(is_executable(&exec.join("tool")));
        assert!(!is_executable(&plain.join("tool")));
        assert!(
            !is_executable(&folder.join("tool")),
            "a folder is not a program"
        );
        let path = std::env::join_paths([&folder, &plain, &exec]).unwrap();
        assert_eq!(
            find_on_path("tool", Some(&path)),
            Lookup::Found(exec.join("tool"))
        );
        let path = std::env::join_paths([&folder, &plain]).unwrap();
        assert_eq!(
            find_on_path("tool", Some(&path)),
            Lookup::NotExecutable(plain.join("tool"))
        );
        // Empty and relative entries are never searched, whatever the current directory is.
        let rel = std::ffi::OsString::from(format!(":.:b:{}", d.path().join("none").display()));
        assert_eq!(find_on_path("tool", Some(&rel)), Lookup::Missing);
        assert_eq!(find_on_path("", Some(&path)), Lookup::Missing);
        assert_eq!(find_on_path("tool", None), Lookup::Missing);
    }

    #[test]
    fn placeholders_are_replaced_once() {
        let v = [
            ("sprint", OsStr::new("S-1")),
            ("workdir", OsStr::new("/w/{sprint}")),
        ];
        assert_eq!(
            substitute_placeholders("{workdir}:{sprint}", &v),
            "/w/{sprint}:S-1"
        );
        assert_eq!(
            substitute_placeholders("{other} {sprint", &v),
            "{other} {sprint"
        );
        assert_eq!(substitute_placeholders("x{{sprint}}", &v), "x{S-1}");
    }
}
