//! The command lines of both tools: argument parsing, dispatch, and rendering. The only code
//! that prints.

#![allow(clippy::print_stdout, clippy::print_stderr)]

/// `println!` that ends the process quietly when stdout is a closed pipe (`… | head`).
macro_rules! outln {
    () => { $crate::cli::write_out(format_args!("\n")) };
    ($($t:tt)*) => { $crate::cli::write_out(format_args!("{}\n", format_args!($($t)*))) };
}

/// `print!` with the same care.
macro_rules! out {
    ($($t:tt)*) => { $crate::cli::write_out(format_args!($($t)*)) };
}

pub mod agent;
pub mod complete;
pub mod extras;
pub mod man;
pub mod rails;
pub mod spar;
pub mod start;

use std::io::Write;
use std::process::ExitCode;

use crate::error::{Error, Outcome};

/// Parses with clap, mapping clap's own usage errors to 64 (help and version exit 0).
pub fn parse<T: clap::Parser>(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Result<T, ExitCode> {
    match T::try_parse_from(args) {
        Ok(v) => Ok(v),
        Err(e) => {
            let code = match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                // `git rails` with nothing after it prints help, but it is still a usage error.
                _ => 64,
            };
            let _ = e.print();
            Err(ExitCode::from(code))
        }
    }
}

/// Prints an error as `<prog>: message` (and `hint: …`) on stderr and gives its exit code.
pub fn report(prog: &str, result: Result<Outcome, Error>) -> ExitCode {
    match result {
        Ok(o) => ExitCode::from(o.exit_code()),
        Err(e) => {
            let mut err = std::io::stderr().lock();
            let mut lines = e.message.lines();
            let _ = writeln!(err, "{prog}: {}", lines.next().unwrap_or(""));
            for l in lines {
                let _ = writeln!(err, "{l}");
            }
            if let Some(h) = &e.hint {
                let _ = writeln!(err, "hint: {h}");
            }
            ExitCode::from(e.kind.exit_code())
        }
    }
}

/// Writes to stdout; a reader that went away (a closed pipe) ends the process with 0, as
/// other command-line tools do, instead of a panic.
pub fn write_out(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|_| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}

/// Prints a JSON document on stdout.
pub fn print_json(v: &impl serde::Serialize) -> Result<(), Error> {
    let s = serde_json::to_string_pretty(v)
        .map_err(|e| Error::internal(format!("rendering JSON: {e}")))?;
    outln!("{s}");
    Ok(())
}

/// A subcommand's long help, for the tests that hold a hot parser's help equal to the full
/// command's.
#[cfg(test)]
pub(crate) fn help_of(mut cmd: clap::Command, path: &[&str]) -> String {
    cmd.build();
    let mut c = &mut cmd;
    for name in path {
        c = c.find_subcommand_mut(name).unwrap();
    }
    c.render_long_help().to_string()
}
