//! `git spar`: independent code reviewers over `base..head`. The commands arrive with the spar
//! issues; this is the entry point they hang from.

use std::process::ExitCode;

use clap::Parser;

/// Run several independent code reviewers over a change, refuse out-of-form output, classify
/// findings by fixed rules, and gate the change until each blocking finding is triaged.
///
/// Records live in the repository: `refs/spar/series/<series>` and `refs/notes/spar`.
#[derive(Debug, Parser)]
#[command(
    name = "git-spar",
    bin_name = "git spar",
    version,
    arg_required_else_help = true
)]
pub struct SparCli {}

/// The clap definition, for man pages.
pub fn command() -> clap::Command {
    <SparCli as clap::CommandFactory>::command()
}

pub fn main() -> ExitCode {
    match super::parse::<SparCli>(std::env::args_os()) {
        Ok(_) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}
