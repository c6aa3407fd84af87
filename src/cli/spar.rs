//! `git spar`: the command line.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use serde_json::json;

use crate::error::{Error, Outcome, Result};
use crate::spar::{config, record, round, sarif, series, view};
use crate::store::Store;

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

fn cmd_run(a: RunArgs) -> Result<Outcome> {
    // G35 and the standpoint forms come before the repository is even opened.
    let decisions = round::pair_decisions(&a.decision_order)?;
    let standpoints = a
        .standpoints
        .iter()
        .map(|s| round::parse_standpoint(s))
        .collect::<Result<Vec<_>>>()?;
    let store = Store::discover()?;
    let base_arg = a.base.clone();
    let req = round::RunRequest {
        base: a.base,
        head: a.head,
        stage: a.stage,
        series: a.series,
        reviewers: a.reviewers,
        models: a.models,
        efforts: a.efforts,
        criteria: a.criteria,
        rules: a.rules,
        subject: a.subject,
        check_paths: a.check_paths,
        dry_run: a.dry_run,
        out: a.out,
        decisions,
        standpoints,
    };
    let mut progress = |l: &str| eprintln!("{l}");
    let out = round::run(&store, &req, &mut progress)?;
    let r = &out.round;
    if a.json {
        super::print_json(r)?;
    } else {
        outln!(
            "spar: {} {} recorded ({} reviewer{}, {} finding{}){}",
            r.series,
            r.round,
            r.reviewers.len(),
            if r.reviewers.len() == 1 { "" } else { "s" },
            out.findings.len(),
            if out.findings.len() == 1 { "" } else { "s" },
            if r.dry_run {
                " — dry run, no reviewer ran"
            } else {
                ""
            }
        );
        for rev in &r.reviewers {
            outln!(
                "  {:<16} {:<15} {}",
                rev.name,
                rev.status,
                if rev.reason.is_empty() {
                    rev.verdict.clone().unwrap_or_default()
                } else {
                    rev.reason.clone()
                }
            );
        }
        for f in &out.findings {
            outln!("  {:<12} {:<22} {}  {}", f.id, f.class, f.location, f.claim);
            if let Some(why) = crate::spar::summary::class_note(f) {
                outln!("  {:<12} {why}", "");
            }
        }
        if out.kept_workspace {
            outln!("workspace kept at {}", out.workspace.display());
        }
        if !r.dry_run {
            outln!(
                "read it with `git notes --ref=spar show {}` or `git spar show {}:{}`",
                &r.head[..7],
                r.series,
                r.round
            );
        }
    }
    if r.no_reviewer_could_run() {
        eprint!("{}", no_reviewer_help(r, &base_arg));
        return Ok(Outcome::NoReviewer);
    }
    Ok(Outcome::Ok)
}

/// What `git spar run` says when no reviewer could run: why each could not, and the exact
/// configuration that makes one run.
fn no_reviewer_help(r: &crate::spar::record::Round, base: &str) -> String {
    let env = config::Env::from_vars(|k| std::env::var_os(k), PathBuf::new());
    let file = match (&env.spar_config, &env.xdg_config_home, &env.home) {
        (Some(p), _, _) => PathBuf::from(p),
        (None, Some(x), _) => PathBuf::from(x).join("jaekit/spar.toml"),
        (None, None, Some(h)) => PathBuf::from(h).join(".config/jaekit/spar.toml"),
        (None, None, None) => PathBuf::from("~/.config/jaekit/spar.toml"),
    };
    let mut s = format!(
        "spar: no reviewer could run, so nothing was reviewed; {} {} is recorded but not counted against the {} cap (exit 4)\n",
        r.series, r.round, r.stage
    );
    for rev in &r.reviewers {
        s.push_str(&format!("spar:   {}: {}\n", rev.name, rev.reason));
    }
    s.push_str(&format!(
        "hint: to review with a command of your own, add this to {}:\n\n\
         [[reviewers]]\n\
         name = \"local\"\n\
         preset = \"command\"\n\
         # {{prompt}} is the path of the reviewer's instructions and the change; the command\n\
         # prints one result object (the JSON Schema at {{schema}}) on stdout\n\
         argv = [\"./review.sh\", \"{{prompt}}\", \"{{workspace}}\", \"{{schema}}\"]\n\n\
         then run `git spar run --base {base} --reviewers local`.\n\
         hint: or install Claude Code and log in (run `claude`, then /login), or Codex (`codex login`),\n\
         and run `git spar run --base {base}` again.\n",
        file.display()
    ));
    s
}

fn cmd_record(a: RecordArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let mut progress = |l: &str| eprintln!("{l}");
    let out = round::record_result(
        &store,
        &a.series,
        &a.round,
        &a.reviewer,
        &match (a.result, a.transcript) {
            (Some(f), _) => round::RecordInput::Result(f),
            (None, Some(f)) => round::RecordInput::Transcript(f),
            (None, None) => {
                return Err(crate::error::Error::usage(
                    "give --result F or --transcript F",
                ))
            }
        },
        &mut progress,
    )?;
    if a.json {
        super::print_json(&json!({"reviewer": out.reviewer, "findings": out.findings}))?;
    } else {
        outln!(
            "spar: {} {} {}: {}{} ({} finding{})",
            a.series,
            a.round,
            a.reviewer,
            out.reviewer.status,
            if out.reviewer.reason.is_empty() {
                String::new()
            } else {
                format!(": {}", out.reviewer.reason)
            },
            out.findings.len(),
            if out.findings.len() == 1 { "" } else { "s" }
        );
    }
    Ok(Outcome::Ok)
}

fn cmd_config(a: ConfigArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let root = store.workdir()?.to_path_buf();
    let cfg = config::Config::load(&config::Env::from_process(root))?;
    if a.json {
        super::print_json(&cfg.effective_json())?;
    } else {
        out!("{}", cfg.render_text());
    }
    Ok(Outcome::Ok)
}

fn cmd_show(a: ShowArgs) -> Result<Outcome> {
    let format = output_format(a.format.as_deref(), a.json, &["text", "json", "sarif"])?;
    let store = Store::discover()?;
    let (series, round_name) = match &a.target {
        Some(t) => match t.split_once(':') {
            Some((s, r)) => (s.to_string(), Some(r.to_string())),
            None => (t.clone(), None),
        },
        None => (round::default_series(&store)?, None),
    };
    round::check_series(&series)?;
    let names = record::round_names(&store, &series)?;
    if names.is_empty() {
        return Err(Error::refused(format!("series {series} has no rounds"))
            .hint("run one with `git spar run --base <rev>`"));
    }
    let shown: Vec<String> = match round_name {
        Some(r) => vec![r],
        None => names.clone(),
    };
    if format == "sarif" {
        let mut views = Vec::new();
        for r in &shown {
            views.push(view::load(&store, &series, r)?);
        }
        super::print_json(&sarif::log(&views, None))?;
        return Ok(Outcome::Ok);
    }
    if format == "json" {
        super::print_json(&crate::spar::view::show_json(&store, &series, &shown)?)?;
        return Ok(Outcome::Ok);
    }
    let mut docs = Vec::new();
    for r in &shown {
        let round = record::load_round(&store, &series, r)?;
        let findings = record::load_findings(&store, &series, r)?;
        let triage = series::triage_in_force(&store, &series, r)?;
        docs.push((round, findings, triage));
    }
    {
        for (r, f, t) in &docs {
            out!("{}\n", crate::spar::summary::render_with_triage(r, f, t));
        }
    }
    Ok(Outcome::Ok)
}

fn cmd_list(a: ListArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let series = store.refs_under(crate::store::refs::SPAR_SERIES)?;
    let mut rows = Vec::new();
    for (name, _) in series {
        rows.push((name.clone(), record::round_names(&store, &name)?));
    }
    if a.json {
        super::print_json(&json!({
            "schema": "spar-list/v1",
            "series": rows.iter().map(|(s, r)| json!({"series": s, "rounds": r})).collect::<Vec<_>>(),
        }))?;
    } else if rows.is_empty() {
        eprintln!("spar: no series yet; run a round with `git spar run --base <rev>`");
    } else {
        for (s, r) in rows {
            outln!("{s:<24} {}", r.join(" "));
        }
    }
    Ok(Outcome::Ok)
}

fn cmd_triage(a: TriageArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let req = series::TriageRequest {
        series: a.series,
        round: a.round,
        finding: a.finding,
        disposition: a.disposition,
        of: a.of,
        evidence: a.evidence,
        to: a.to,
        user_quote: a.user_quote,
        failed_before: a.failed_before,
        passed_after: a.passed_after,
        commit: a.commit,
    };
    let mut progress = |l: &str| eprintln!("{l}");
    let entry = series::triage(&store, &req, &mut progress)?;
    if a.json {
        super::print_json(&entry)?;
    } else {
        outln!(
            "spar: {} {} {}: {}",
            req.series,
            req.round,
            req.finding,
            req.disposition
        );
    }
    Ok(Outcome::Ok)
}

fn cmd_waive(a: WaiveArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let mut progress = |l: &str| eprintln!("{l}");
    let entry = series::waive(
        &store,
        &a.series,
        &a.round,
        &a.reviewer,
        &a.user_quote,
        &mut progress,
    )?;
    if a.json {
        super::print_json(&entry)?;
    } else {
        outln!("spar: {} {} {}: waived", a.series, a.round, a.reviewer);
    }
    Ok(Outcome::Ok)
}

fn cmd_extend(a: ExtendArgs) -> Result<Outcome> {
    let req = series::ExtendRequest {
        series: a.series,
        stage: a.stage,
        by: a.by,
        cause: a.cause,
        reason: a.reason,
    };
    // Usage errors and refusals of G31 come before the repository is even opened.
    series::check_extension(&req)?;
    let store = Store::discover()?;
    let mut progress = |l: &str| eprintln!("{l}");
    let ext = series::extend(&store, &req, &mut progress)?;
    if a.json {
        super::print_json(&ext)?;
    } else {
        outln!(
            "spar: {} {} cap extended by {}",
            req.series,
            ext.stage,
            ext.by
        );
    }
    Ok(Outcome::Ok)
}

fn cmd_cap_report(a: CapReportArgs) -> Result<Outcome> {
    if a.format != "md" && a.format != "json" {
        return Err(Error::usage(format!(
            "--format {:?} is not md or json",
            a.format
        )));
    }
    round::check_series(&a.series)?;
    let store = Store::discover()?;
    if record::series_tip(&store, &a.series)?.is_none() {
        return Err(
            Error::refused(format!("series {} does not exist", a.series))
                .hint("see `git spar list`"),
        );
    }
    let root = store.workdir()?.to_path_buf();
    let cfg = config::Config::load(&config::Env::from_process(root))?;
    let caps = series::stage_caps(&store, &cfg, &a.series)?;
    if a.format == "json" {
        super::print_json(&series::caps_json(&a.series, &caps))?;
    } else {
        out!("{}", series::render_caps_md(&a.series, &caps));
    }
    Ok(Outcome::Ok)
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

fn cmd_report(a: ReportArgs) -> Result<Outcome> {
    crate::report::check_out_file(&a.html)?;
    let store = Store::discover()?;
    let out = series::gate(
        &store,
        &series::GateRequest {
            rounds: a.rounds.clone(),
            expect_head: None,
            out: None,
        },
    )?;
    let views = view::load_targets(&store, &a.rounds)?;
    let page = crate::report::spar::html_report(
        &views,
        &crate::report::spar::GateView {
            passed: out.passed,
            reasons: &out.reasons,
            document: &out.document,
        },
    );
    crate::store::atomic_write(&a.html, page.as_bytes())?;
    outln!(
        "spar: wrote {} ({} round{}, gate {})",
        a.html.display(),
        views.len(),
        if views.len() == 1 { "" } else { "s" },
        if out.passed { "passed" } else { "blocked" }
    );
    Ok(Outcome::Ok)
}

fn cmd_gate(a: GateArgs) -> Result<Outcome> {
    let format = output_format(
        a.format.as_deref(),
        a.json,
        &["text", "json", "sarif", "markdown"],
    )?;
    let store = Store::discover()?;
    let out = series::gate(
        &store,
        &series::GateRequest {
            rounds: a.rounds.clone(),
            expect_head: a.expect_head,
            out: a.out,
        },
    )?;
    if format == "sarif" || format == "markdown" {
        // The rounds that can be read; one that cannot is among the gate's reasons.
        let views: Vec<_> = a
            .rounds
            .iter()
            .filter_map(|t| {
                let (s, r) = view::parse_target(t).ok()?;
                view::load(&store, &s, &r).ok()
            })
            .collect();
        if format == "sarif" {
            super::print_json(&sarif::log(&views, Some(&out.document)))?;
        } else {
            out!(
                "{}",
                crate::report::spar::markdown(
                    &views,
                    &crate::report::spar::GateView {
                        passed: out.passed,
                        reasons: &out.reasons,
                        document: &out.document,
                    }
                )
            );
        }
    } else if format == "json" {
        super::print_json(&out.document)?;
    } else {
        // One write: a gate over hundreds of rounds prints a line for each.
        use std::fmt::Write as _;
        let mut text = String::new();
        let verdict = if out.passed { "passed" } else { "blocked" };
        let _ = writeln!(text, "spar gate: {verdict}");
        for r in &out.reasons {
            let _ = writeln!(text, "{r}");
        }
        let deferred = out.document["auto_deferred"].as_u64().unwrap_or(0);
        let _ = writeln!(text, "auto_deferred: {deferred}");
        if let Some(growth) = out.document["growth"].as_array() {
            for g in growth {
                let _ = writeln!(
                    text,
                    "growth {}:{}: {} finding(s), {} in check paths, {} outside",
                    g["series"].as_str().unwrap_or(""),
                    g["round"].as_str().unwrap_or(""),
                    g["findings"],
                    g["in_check_paths"],
                    g["outside_check_paths"]
                );
            }
        }
        out!("{text}");
    }
    Ok(if out.passed {
        Outcome::Ok
    } else {
        Outcome::Blocked
    })
}
