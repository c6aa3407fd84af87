//! `rails-spar-extras`: the command line of the sibling executable (`crate::extras` says why it
//! exists). Not meant to be run by hand; `git-rails` starts it two ways:
//!
//! - `rails-spar-extras mcp [--repo PATH] [--log FILE]`: the arguments of `git rails mcp`,
//!   parsed by the same definitions, so help and usage errors read the same;
//! - `rails-spar-extras db-query <root>`: a `db_query` spec as JSON on stdin; prints the
//!   check's outcome as one JSON document on stdout.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use super::rails::{RailsCli, RailsCommand};
use crate::contract::checks;
use crate::contract::schema::DbQuerySpec;
use crate::error::{Error, Outcome, Result};

pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let prog = "git-rails";
    match args.get(1).and_then(|a| a.to_str()) {
        Some("db-query") => super::report(prog, db_query(&args[2..])),
        Some("mcp") => {
            let mut parsed = vec![OsString::from("git-rails")];
            parsed.extend(args.into_iter().skip(1));
            let cli: RailsCli = match super::parse(parsed) {
                Ok(c) => c,
                Err(code) => return code,
            };
            super::report(prog, mcp(cli.command))
        }
        _ => super::report(
            prog,
            Err(Error::usage(format!(
                "{} runs `git rails mcp` and the db_query check for git-rails; it is not run by hand",
                crate::extras::NAME
            ))
            .hint("git rails mcp --help")),
        ),
    }
}

fn mcp(command: RailsCommand) -> Result<Outcome> {
    match command {
        RailsCommand::Mcp(a) => {
            crate::mcp::serve(a.repo.as_deref(), a.log.as_deref())?;
            Ok(Outcome::Ok)
        }
        _ => Err(Error::usage(format!(
            "{} serves only `git rails mcp`",
            crate::extras::NAME
        ))
        .hint("git rails --help")),
    }
}

fn db_query(args: &[OsString]) -> Result<Outcome> {
    let [root] = args else {
        return Err(Error::usage(
            "db-query takes one argument, the repository's top level",
        ));
    };
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| Error::internal(format!("reading the db_query spec: {e}")))?;
    let spec: DbQuerySpec = serde_json::from_slice(&input)
        .map_err(|e| Error::usage(format!("the db_query spec on stdin: {e}")))?;
    let outcome = checks::run_db_query_here(&spec, Path::new(root));
    let json = serde_json::to_string(&outcome)
        .map_err(|e| Error::internal(format!("rendering the outcome: {e}")))?;
    outln!("{json}");
    Ok(Outcome::Ok)
}
