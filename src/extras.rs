//! `rails-spar-extras`: the sibling executable that holds what the hooks never run.
//!
//! The hooks start `git-rails` on every commit and push, and issue 21 holds each binary to
//! 10 MB. The MCP server (rmcp, a tokio runtime, schemars) and the `db_query` drivers (the
//! bundled SQLite, the postgres client and its tokio) are most of what kept `git-rails` above
//! that, and none of them is on the hook path. They stay in every install, but in a second
//! executable that `cargo install` puts beside `git-rails`; `git-rails` reaches them through
//! the two calls here, and the linker leaves their code out of `git-rails` because nothing
//! `git-rails` runs calls it in-process:
//!
//! - `git rails mcp …` becomes `rails-spar-extras mcp …` ([`exec_mcp`]): the process is
//!   replaced (Unix `exec`), so stdin/stdout stay the client's and the exit code is the
//!   server's;
//! - a `db_query` check is run by `rails-spar-extras db-query <root>` with the spec as JSON on
//!   its stdin (not in argv, where a postgres URL's password would show in `ps`), which prints
//!   the check's outcome as JSON ([`run_db_query`]).
//!
//! The sibling is looked for only in the folder of the running executable (canonicalized):
//! never on PATH and never where a repository's configuration points, because a cloned
//! repository must not decide what runs on the machine.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Error, Result};

/// The sibling's file name. Not `git-…`: git lists every `git-<name>` on PATH as a subcommand,
/// so `git rai<TAB>` would offer `rails-extras` beside `rails` (tests/cli/first_hour.rs).
pub const NAME: &str = "rails-spar-extras";

/// Where the sibling is: beside the running executable, whatever PATH or the repository says.
/// A missing sibling is an internal error (a broken install) naming the path and the reinstall.
pub fn path() -> Result<PathBuf> {
    let exe = std::env::current_exe()
        .and_then(|e| e.canonicalize())
        .map_err(|e| Error::internal(format!("cannot find the running executable: {e}")))?;
    let dir = exe.parent().unwrap_or(Path::new("/"));
    let sibling = dir.join(format!("{NAME}{}", std::env::consts::EXE_SUFFIX));
    if sibling.is_file() {
        Ok(sibling)
    } else {
        Err(missing(&sibling))
    }
}

fn missing(sibling: &Path) -> Error {
    Error::internal(format!(
        "{} is missing: the MCP server and the db_query check run in it, installed beside git-rails",
        sibling.display()
    ))
    .hint(
        "reinstall both: `cargo install --locked --path <checkout>` or `sh scripts/install.sh` in a checkout of rails-spar",
    )
}

/// Replaces this process by `rails-spar-extras <args>` (stdio inherited, so its exit code is
/// the command's). Returns only when it could not be started.
pub fn exec_mcp(args: Vec<std::ffi::OsString>) -> Result<std::convert::Infallible> {
    let sibling = path()?;
    let mut cmd = Command::new(&sibling);
    cmd.args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = cmd.exec();
        Err(Error::internal(format!(
            "cannot start {}: {e}",
            sibling.display()
        )))
    }
    #[cfg(not(unix))]
    {
        let status = cmd
            .status()
            .map_err(|e| Error::internal(format!("cannot start {}: {e}", sibling.display())))?;
        std::process::exit(status.code().unwrap_or(70))
    }
}

/// Runs a `db_query` check in the sibling: `spec_json` is the check's spec, `root` the
/// repository's top level its `path` is relative to. Gives the sibling's stdout (one JSON
/// document, the outcome) or a message saying why there is none.
pub fn run_db_query(spec_json: &[u8], root: &Path) -> std::result::Result<Vec<u8>, String> {
    let sibling = path().map_err(|e| match e.hint {
        Some(h) => format!("{} ({h})", e.message),
        None => e.message,
    })?;
    let mut child = Command::new(&sibling)
        .arg("db-query")
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", sibling.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A sibling that ends early is reported by its status below.
        let _ = stdin.write_all(spec_json);
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("waiting for {}: {e}", sibling.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "{} db-query ended with {}: {}",
            sibling.display(),
            out.status,
            err.trim()
        ));
    }
    Ok(out.stdout)
}
