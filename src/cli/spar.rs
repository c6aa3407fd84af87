//! `git spar`: the command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use serde_json::json;

use crate::error::{Error, Outcome, Result};
use crate::spar::{config, record, round};
use crate::store::Store;

/// Run several independent code reviewers over a change, refuse out-of-form output, classify
/// findings by fixed rules, and gate the change until each blocking finding is triaged.
///
/// Records live in the repository: `refs/spar/series/<series>` and `refs/notes/spar`
/// (`git notes --ref=spar show <head>`). Exit codes: 0 success, 2 gate blocked, 64 usage
/// error, 65 refused or configuration error (nothing written), 70 internal error.
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
    Run(Box<RunArgs>),
    /// Record a reviewer's result for an existing round (a native reviewer, or a re-run)
    Record(RecordArgs),
    /// Show the effective configuration, where each value came from, and the files read
    Config(ConfigArgs),
    /// Show a series or one of its rounds (default: the current branch's series)
    Show(ShowArgs),
    /// List every series with its rounds
    List(ListArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The base revision (the change is base..head); never read as an option (G27)
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
    /// Print round.json (review-round/v1) on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    pub series: String,
    pub round: String,
    pub reviewer: String,
    /// The reviewer's result (one JSON object, as a run would read it)
    #[arg(long, value_name = "FILE")]
    pub result: PathBuf,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// `<series>` or `<series>:<round>`
    pub target: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[arg(long)]
    pub json: bool,
}

/// The clap definition, for man pages.
pub fn command() -> clap::Command {
    <SparCli as clap::CommandFactory>::command()
}

pub fn main() -> ExitCode {
    let cli = match super::parse::<SparCli>(std::env::args_os()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::report("spar", run(cli))
}

pub fn run(cli: SparCli) -> Result<Outcome> {
    match cli.command {
        SparCommand::Run(a) => cmd_run(*a),
        SparCommand::Record(a) => cmd_record(a),
        SparCommand::Config(a) => cmd_config(a),
        SparCommand::Show(a) => cmd_show(a),
        SparCommand::List(a) => cmd_list(a),
    }
}

fn cmd_run(a: RunArgs) -> Result<Outcome> {
    let store = Store::discover()?;
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
    Ok(Outcome::Ok)
}

fn cmd_record(a: RecordArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let mut progress = |l: &str| eprintln!("{l}");
    let out = round::record_result(
        &store,
        &a.series,
        &a.round,
        &a.reviewer,
        &a.result,
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
    let mut docs = Vec::new();
    for r in &shown {
        let round = record::load_round(&store, &series, r)?;
        let findings = record::load_findings(&store, &series, r)?;
        docs.push((round, findings));
    }
    if a.json {
        let v: Vec<_> = docs
            .iter()
            .map(|(r, f)| json!({"round": r, "findings": f}))
            .collect();
        if v.len() == 1 {
            super::print_json(&v[0])?;
        } else {
            super::print_json(&json!({"schema": "spar-series/v1", "series": series, "rounds": v}))?;
        }
    } else {
        for (r, f) in &docs {
            out!("{}\n", crate::spar::summary::render(r, f));
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
