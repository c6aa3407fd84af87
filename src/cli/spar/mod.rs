//! `git spar`: the command line.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use serde_json::json;

use crate::error::{Error, Outcome, Result};
use crate::spar::ids::{RoundName, SeriesId};
use crate::spar::vocab::Stage;
use crate::spar::{self, round, sarif, series, view};
use crate::store::Store;

mod cap_report;
mod config;
mod extend;
mod gate;
mod list;
mod record;
mod report;
mod run;
mod show;
mod triage;
mod waive;

use self::cap_report::*;
use self::config::*;
use self::extend::*;
use self::gate::*;
use self::list::*;
use self::record::*;
use self::report::*;
use self::run::*;
use self::show::*;
use self::triage::*;
use self::waive::*;

/// Run several independent code reviewers over a change, refuse out-of-form output, classify
/// findings by fixed rules, and gate the change until each blocking finding is triaged.
///
/// Records live in the repository: `refs/spar/series/<series>` and `refs/notes/spar`
/// (`git notes --ref=spar show <head>`). Exit codes: 0 success, 2 gate blocked, 4 a run in which
/// no reviewer could run (recorded, not counted), 64 usage error, 65 refused or configuration
/// error (nothing written), 70 internal error.
#[derive(Debug, Parser)]
#[command(
    name = "git-spar",
    bin_name = "git spar",
    version,
    arg_required_else_help = true
)]
pub struct SparCli {
    #[command(subcommand)]
    pub command: SparCommand,
}

#[derive(Debug, Subcommand)]
pub enum SparCommand {
    /// Run a review round over base..head with the selected reviewers
    ///
    /// Exit 0 when the round is recorded; 4 when no reviewer could run (each is unavailable:
    /// not installed, not logged in, refused for quota), with the configuration that makes
    /// one run; such a round is recorded but never counted against the stage's cap.
    Run(Box<RunArgs>),
    /// Record a reviewer's result for an existing round (a native reviewer, or a re-run)
    Record(RecordArgs),
    /// Show the effective configuration, where each value came from, and the files read
    Config(ConfigArgs),
    /// Show a series or one of its rounds (default: the current branch's series)
    Show(ShowArgs),
    /// List every series with its rounds
    List(ListArgs),
    /// Record what was decided about a finding (appends to the round's ledger.jsonl)
    Triage(TriageArgs),
    /// Waive a required reviewer of a round that did not complete, with the user's words
    Waive(WaiveArgs),
    /// Raise a stage's cap for a series (appends to the series' extensions.jsonl)
    Extend(ExtendArgs),
    /// Show, per stage, the cap, its extensions, the rounds counted and what is left
    CapReport(CapReportArgs),
    /// Decide whether the reviewed change may go on: passed (0) or blocked (2) with every reason
    Gate(GateArgs),
    /// Write rounds, reviewers, findings with their triage and the gate's verdict as one
    /// self-contained HTML file (no network, no script)
    Report(ReportArgs),
    /// Share records with a remote (the same as `git rails sync`): fetch into
    /// refs/rails-sync/<remote>/, merge (series unite rounds and JSONL lines; a round name two
    /// clones took is kept twice, the later renamed and reported), push with a lease; exit 0
    /// when the merge settled everything, 1 only when a person must decide (a diverged frozen
    /// contract)
    Sync(super::rails::SyncArgs),
    /// Print a shell completion script (bash, zsh or fish); `scripts/install.sh` installs them
    Completions(super::rails::CompletionsArgs),
    /// Answer one completion request: the candidates for the last word, one per line
    #[command(name = "__complete", hide = true)]
    Complete(super::rails::CompleteArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The base revision (the change is base..head); a value starting with - is a revision, never an option
    #[arg(long, value_name = "REV", allow_hyphen_values = true)]
    pub base: String,
    /// The head revision (default: HEAD)
    #[arg(long, value_name = "REV", allow_hyphen_values = true)]
    pub head: Option<String>,
    /// What is reviewed: plan, plan-delta or code (default: code)
    #[arg(long, value_name = "STAGE")]
    pub stage: Option<String>,
    /// The series (default: the current branch, `/` replaced by `-`)
    #[arg(long, value_name = "NAME")]
    pub series: Option<String>,
    /// Comma-separated reviewer names (default: the configured list)
    #[arg(long, value_name = "NAMES")]
    pub reviewers: Option<String>,
    /// The model of one reviewer, NAME=MODEL
    #[arg(long = "model", value_name = "NAME=MODEL")]
    pub models: Vec<String>,
    /// The effort of one reviewer, NAME=EFFORT
    #[arg(long = "effort", value_name = "NAME=EFFORT")]
    pub efforts: Vec<String>,
    /// The criteria document (AC-<n> ids that criterion links may name)
    #[arg(long, value_name = "FILE")]
    pub criteria: Option<PathBuf>,
    /// A rule document for this round (repeatable)
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<PathBuf>,
    /// The document under review (a plan)
    #[arg(long, value_name = "FILE")]
    pub subject: Option<PathBuf>,
    /// An extra check-path glob for this round (repeatable)
    #[arg(long = "check-path", value_name = "GLOB")]
    pub check_paths: Vec<String>,
    /// Prepare and record the round without running any reviewer (not counted)
    #[arg(long)]
    pub dry_run: bool,
    /// Keep the round's workspace in DIR (a folder that does not exist yet)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A decision the user made, kept verbatim; follow each with one --decision-quote
    #[arg(
        long = "decision",
        value_name = "TEXT",
        allow_hyphen_values = true,
        num_args = 0..=1,
        default_missing_value = NO_VALUE,
        value_parser = clap::value_parser!(OsString),
    )]
    pub decisions: Vec<OsString>,
    /// The user's words for the --decision before it, kept verbatim
    #[arg(
        long = "decision-quote",
        value_name = "TEXT",
        allow_hyphen_values = true,
        num_args = 0..=1,
        default_missing_value = NO_VALUE,
        value_parser = clap::value_parser!(OsString),
    )]
    pub decision_quotes: Vec<OsString>,
    /// A risk for one reviewer to attack while checking every angle, NAME=TEXT (repeatable)
    #[arg(
        long = "standpoint",
        value_name = "NAME=TEXT",
        allow_hyphen_values = true,
        value_parser = clap::value_parser!(OsString),
    )]
    pub standpoints: Vec<OsString>,
    /// Print round.json (review-round/v1) on stdout
    #[arg(long)]
    pub json: bool,
    /// --decision and --decision-quote in command-line order (filled from the parse, G35).
    #[arg(skip)]
    pub decision_order: Vec<round::DecisionArg>,
}

/// What clap stores for `--decision` or `--decision-quote` at the very end of the command line
/// without a value: a NUL, which no real argument can hold. It is refused (65), not a usage
/// error, so the message can name the decision (G35).
const NO_VALUE: &str = "\0";

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The series (`git spar list` shows them; by default a branch's name)
    pub series: String,
    /// The round, e.g. code-1 (`git spar show <series>` lists them)
    pub round: String,
    /// The reviewer's name in that round
    pub reviewer: String,
    /// The reviewer's result (one JSON object, as a run would read it)
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "transcript",
        conflicts_with = "transcript"
    )]
    pub result: Option<PathBuf>,
    /// A native subagent's Claude Code transcript (JSONL): its result is recorded, with
    /// warnings about its tools, added context, reads outside the workspace and an unread
    /// prompt.md
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
    /// Print the result as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Print the result as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// `<series>` or `<series>:<round>`
    pub target: Option<String>,
    /// Print the result as JSON (the same as `--format json`)
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// text (default), json, or sarif (one SARIF 2.1.0 log: a run per reviewer, a result per
    /// finding)
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The rounds to report, `<series>:<round>`; the verdict is the gate's over them
    #[arg(required = true, value_name = "SERIES:ROUND")]
    pub rounds: Vec<String>,
    /// The HTML file to write (replaced when it exists)
    #[arg(long, value_name = "FILE", required = true)]
    pub html: PathBuf,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print the result as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TriageArgs {
    /// The series (`git spar list` shows them; by default a branch's name)
    pub series: String,
    /// The round, e.g. code-1 (`git spar show <series>` lists them)
    pub round: String,
    /// The finding's id exactly as in the round's findings.json (`<reviewer>-F<n>`)
    #[arg(allow_hyphen_values = true)]
    pub finding: String,
    /// fixed, duplicate, rejected, deferred, answered or accepted
    pub disposition: String,
    /// duplicate: the finding it repeats (an id of the same round, or `<round>:<id>`)
    #[arg(long, value_name = "FINDING", allow_hyphen_values = true)]
    pub of: Option<String>,
    /// rejected: why the finding is wrong
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub evidence: Option<String>,
    /// deferred: where it is tracked
    #[arg(long, value_name = "WHERE", allow_hyphen_values = true)]
    pub to: Option<String>,
    /// deferred, answered, accepted: the user's words
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub user_quote: Option<String>,
    /// fixed: what failed before the fix
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub failed_before: Option<String>,
    /// fixed: what passes after it
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub passed_after: Option<String>,
    /// fixed: the commit of the fix (a value starting with - is a revision, never an option)
    #[arg(long, value_name = "REV", allow_hyphen_values = true)]
    pub commit: Option<String>,
    /// Sign the record commit as `git commit -S` does (also when commit.gpgSign is true): under
    /// a signing policy an accepted, deferred or answered finding counts only when a person
    /// signed it
    #[arg(long)]
    pub sign: bool,
    /// Print the result as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WaiveArgs {
    /// The series (`git spar list` shows them; by default a branch's name)
    pub series: String,
    /// The round, e.g. code-1 (`git spar show <series>` lists them)
    pub round: String,
    /// The reviewer's name in that round
    pub reviewer: String,
    /// The user's words agreeing to go on without this reviewer
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub user_quote: Option<String>,
    /// Sign the record commit as `git commit -S` does (also when commit.gpgSign is true): under
    /// a signing policy only a waiver a person signed counts
    #[arg(long)]
    pub sign: bool,
    /// Print the result as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExtendArgs {
    /// The series (`git spar list` shows them; by default a branch's name)
    pub series: String,
    /// plan, plan-delta or code
    #[arg(long, value_name = "STAGE", allow_hyphen_values = true)]
    pub stage: String,
    /// How many rounds to add (an integer of 1 or more)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub by: String,
    /// code only: churn, recurring, unrelated, hardening or other
    #[arg(long, value_name = "CAUSE", allow_hyphen_values = true)]
    pub cause: Option<String>,
    /// code only: why; needed with --by 2 or more, or --cause other
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub reason: Option<String>,
    /// Print the result as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CapReportArgs {
    /// The series (`git spar list` shows them; by default a branch's name)
    pub series: String,
    /// md (default) or json
    #[arg(long, value_name = "FORMAT", default_value = "md")]
    pub format: String,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// The rounds to gate, `<series>:<round>`, every recorded round of the series included
    #[arg(required = true, value_name = "SERIES:ROUND")]
    pub rounds: Vec<String>,
    /// The commit the change must still be at (the newest round's head); never read as an option
    #[arg(long, value_name = "REV", allow_hyphen_values = true)]
    pub expect_head: Option<String>,
    /// Write the gate record (review-gate/v1) to FILE
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Read the signing policy from REV's .rails/policy.toml (CI: the pull request's base)
    /// instead of HEAD's; git configuration still only tightens it
    #[arg(long, value_name = "REV")]
    pub policy_from: Option<String>,
    /// Print the gate record on stdout
    /// Print the result as JSON (the same as `--format json`)
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// text (default), json (the gate record), sarif (the rounds as one SARIF 2.1.0 log, for
    /// code scanning) or markdown (for a pull-request comment); the exit code is the gate's
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
}

/// The clap definition, for man pages.
pub fn command() -> clap::Command {
    <SparCli as clap::CommandFactory>::command()
}

pub fn main() -> ExitCode {
    let cli = match parse(std::env::args_os()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::report("spar", run(cli))
}

/// Parses like [`super::parse`] (clap's usage errors are 64, help and version 0), keeping the
/// order of `--decision` and `--decision-quote`, which the derived struct loses.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> std::result::Result<SparCli, ExitCode> {
    let parsed = SparCli::command()
        .try_get_matches_from(args)
        .and_then(|m| SparCli::from_arg_matches(&m).map(|cli| (cli, m)));
    match parsed {
        Ok((mut cli, matches)) => {
            if let (SparCommand::Run(a), Some(("run", m))) =
                (&mut cli.command, matches.subcommand())
            {
                a.decision_order = decision_order(m);
            }
            Ok(cli)
        }
        Err(e) => {
            let code = match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => 64,
            };
            let _ = e.print();
            Err(ExitCode::from(code))
        }
    }
}

/// `--decision` and `--decision-quote` values of `run` in command-line order; a missing value
/// at the end of the command line is `None`.
fn decision_order(m: &ArgMatches) -> Vec<round::DecisionArg> {
    let mut all: Vec<(usize, round::DecisionArg)> = Vec::new();
    for (id, part) in [
        ("decisions", round::DecisionPart::Decision),
        ("decision_quotes", round::DecisionPart::Quote),
    ] {
        let (Some(values), Some(indices)) = (m.get_many::<OsString>(id), m.indices_of(id)) else {
            continue;
        };
        for (value, index) in values.zip(indices) {
            let value = (value.as_os_str() != NO_VALUE).then(|| value.clone());
            all.push((index, (part, value)));
        }
    }
    all.sort_by_key(|(index, _)| *index);
    all.into_iter().map(|(_, arg)| arg).collect()
}

pub fn run(cli: SparCli) -> Result<Outcome> {
    match cli.command {
        SparCommand::Run(a) => cmd_run(*a),
        SparCommand::Record(a) => cmd_record(a),
        SparCommand::Config(a) => cmd_config(a),
        SparCommand::Show(a) => cmd_show(a),
        SparCommand::List(a) => cmd_list(a),
        SparCommand::Triage(a) => cmd_triage(a),
        SparCommand::Waive(a) => cmd_waive(a),
        SparCommand::Extend(a) => cmd_extend(a),
        SparCommand::CapReport(a) => cmd_cap_report(a),
        SparCommand::Gate(a) => cmd_gate(a),
        SparCommand::Report(a) => cmd_report(a),
        SparCommand::Sync(a) => super::rails::cmd_sync(a, "spar"),
        SparCommand::Completions(a) => {
            super::complete::print_script(command(), "spar", &a.shell)?;
            Ok(Outcome::Ok)
        }
        SparCommand::Complete(a) => {
            for c in super::complete::candidates(command(), &a.words, &super::complete::repo_names)
            {
                outln!("{c}");
            }
            Ok(Outcome::Ok)
        }
    }
}

/// Progress on stderr: lines as they come, and on a terminal the reviewers' board redrawn in
/// place.
struct StderrReporter {
    live: bool,
    /// How many board lines are on the screen, to move up over them.
    drawn: usize,
}

impl StderrReporter {
    fn new() -> StderrReporter {
        use std::io::IsTerminal;
        StderrReporter {
            live: std::io::stderr().is_terminal(),
            drawn: 0,
        }
    }
}

impl spar::progress::Reporter for StderrReporter {
    fn line(&mut self, text: &str) {
        eprintln!("{text}");
    }

    fn live(&self) -> bool {
        self.live
    }

    fn board(&mut self, lines: &[String]) {
        use std::io::Write;
        let mut s = String::new();
        if self.drawn > 0 {
            s.push_str(&format!("\x1b[{}A", self.drawn));
        }
        for l in lines {
            s.push_str("\x1b[2K");
            s.push_str(l);
            s.push('\n');
        }
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(s.as_bytes());
        let _ = err.flush();
        self.drawn = lines.len();
    }
}

/// The output format asked with `--format` (or `--json`), one of `allowed`.
fn output_format(format: Option<&str>, json: bool, allowed: &[&str]) -> Result<String> {
    let f = format.unwrap_or(if json { "json" } else { "text" });
    if !allowed.contains(&f) {
        return Err(Error::usage(format!(
            "--format {f:?} is not one of {}",
            allowed.join(", ")
        )));
    }
    Ok(f.to_string())
}
