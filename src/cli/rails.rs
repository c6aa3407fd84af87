//! `git rails`: the command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use serde_json::json;

use crate::contract::{self, generate, junit, schema, validate};
use crate::error::{Context, Error, Outcome, Result};
use crate::evidence::{self, gate, Transition};
use crate::hooks;
use crate::store::{self, Store};

/// Make "done" mean something a machine checked: frozen sprint contracts of executable checks,
/// failing-first evidence, and hooks that refuse unproven work.
///
/// Records live in the repository: `refs/rails/contracts/<sprint>` (frozen versions) and
/// `refs/notes/rails` (validation reports). Exit codes: 0 success/PASS, 1 FAIL, 2 blocked,
/// 3 ABORT_PRECHECK, 64 usage error, 65 refused (nothing written), 70 internal error.
#[derive(Debug, Parser)]
#[command(
    name = "git-rails",
    bin_name = "git rails",
    version,
    arg_required_else_help = true
)]
pub struct RailsCli {
    #[command(subcommand)]
    pub command: RailsCommand,
}

#[derive(Debug, Subcommand)]
pub enum RailsCommand {
    /// Draft, freeze, validate and inspect sprint contracts
    #[command(subcommand)]
    Contract(ContractCommand),
    /// Record failing-first evidence for a criterion: red, green, surface, cleanup, reopen, recheck
    ///
    /// Each criterion is a DoD check of the newest frozen contract. `red` and `green` run the
    /// check and record only an observed failure or pass; `surface` says where a person sees
    /// the result; `cleanup` is a teardown receipt; `reopen` archives a surfaced cycle;
    /// `recheck` re-binds a surfaced criterion to a newer tree.
    #[command(subcommand)]
    Evidence(EvidenceCommand),
    /// Show every criterion, its records, missing receipts and stale criteria
    Status(StatusArgs),
    /// Exit 0 when the sprint is done, 2 when not (with each missing step), other codes when
    /// it could not decide
    Gate(GateArgs),
    /// Write the criteria, each cycle's RED → GREEN → SURFACE timeline with output tails, the
    /// receipts and the gate's verdict as one self-contained HTML file (no network, no script)
    Report(ReportArgs),
    /// Replay the evidence and tell every criterion; with --rerun, run each proven check again
    /// in a clean temporary checkout (what CI runs)
    ///
    /// Without --rerun: the gate's verdict on the commit, from the objects alone (the evidence
    /// chain replayed from its first commit, no local cache), with what each criterion's
    /// records say. With --rerun: each proven check also runs again on the judged commit, and
    /// each RED on the tree its RED recorded, each in a temporary checkout (never the work tree
    /// or the index); a GREEN that does not pass again or a RED that does not fail again is
    /// reported. Runtime checks (http_status, process_listening, db_query) are not run again.
    /// Exit 0 when done, 2 when not, other codes when it could not decide.
    Verify(VerifyArgs),
    /// Run the planner → implementer → reviewer → deployer hand-offs as a persisted state machine
    #[command(subcommand)]
    Pipeline(PipelineCommand),
    /// Install, remove or inspect the pre-push and commit-msg hooks (pre-receive when bare)
    #[command(subcommand)]
    Hooks(HooksCommand),
    /// What the installed hook scripts run (git passes the arguments and stdin)
    #[command(subcommand)]
    Hook(HookCommand),
    /// Share records with a remote: fetch them into refs/rails-sync/<remote>/, merge, push
    ///
    /// Fetches the remote's refs/rails/*, refs/spar/*, refs/notes/rails and refs/notes/spar
    /// without `+` (a fetch never overwrites a local record), merges each into the local one
    /// (evidence and pipeline chains replay the union of transitions; spar series unite rounds
    /// and JSONL lines; notes unite their parts; a frozen contract only fast-forwards), then
    /// pushes with a lease on what was fetched, retrying when the remote moved. What is
    /// compared is what the remote holds now (a record deleted there is pushed back). Exit 0
    /// when the merge settled everything (a renamed round, a union of notes, a transition left
    /// out of the merged order are reported), 1 only when a person must decide (a frozen
    /// contract that diverged), other codes when it could not run.
    Sync(SyncArgs),
    /// Trust this clone's .rails/config.toml: record its exact sha256 so `pipeline run` may
    /// run the actors and notifiers it names
    ///
    /// A cloned repository runs nothing on your machine until you trust it. Read the file
    /// first; this prints every command and URL it names. A changed file needs trusting
    /// again. Actors in your own ~/.config/rails/config.toml (or $XDG_CONFIG_HOME/rails/)
    /// need no trust.
    Trust(TrustArgs),
    /// Find records pointing at commits git will not keep, stale locks, chains diverged from
    /// the remote, and hook scripts missing or not executable; each with its fix (exit 1 when
    /// any is found)
    Doctor(DoctorArgs),
    /// Serve the evidence, gate and spar tools to a coding agent over MCP (stdio)
    ///
    /// One stdio MCP server: contracts, validate, evidence, status, gate, verify, spar_show,
    /// spar_record, spar_triage, spar_waive and spar_gate. Each tool runs what the command of
    /// the same name runs and returns its --json document; a refusal is a tool error naming the
    /// next tool call. Claude Code: `.mcp.json` {"mcpServers": {"rails": {"command": "git",
    /// "args": ["rails", "mcp"]}}}; Codex: `[mcp_servers.rails]` in config.toml.
    Mcp(McpArgs),
    /// Set up (or remove) Claude Code or Codex for rails: the MCP server and hooks in the
    /// agent's configuration files
    #[command(subcommand)]
    Agent(super::agent::AgentCommand),
    /// Print a shell completion script (bash, zsh or fish); `scripts/install.sh` installs them
    Completions(CompletionsArgs),
    /// Answer one completion request: the candidates for the last word, one per line
    #[command(name = "__complete", hide = true)]
    Complete(CompleteArgs),
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Work from this repository instead of the current directory's
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
    /// Also append each tool call's log line (tool, arguments, ok or refused and the first
    /// line of the answer) to this file; the lines always go to stderr
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh or fish
    #[arg(value_name = "SHELL")]
    pub shell: String,
}

#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// The words after the command's name, the last one being completed (may be empty)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SyncArgs {
    /// The remote (default: the current branch's remote, else origin)
    pub remote: Option<String>,
    /// Write the remote's fetch and push refspecs so plain `git fetch`/`git push` carry the
    /// records (no `+`); changes nothing when already set
    #[arg(long)]
    pub setup: bool,
    /// Settle a contract conflict: take the remote's versions of SPRINT (the local chain is
    /// kept at refs/rails-sync/kept/…); then freeze the local draft on top with --bump
    #[arg(long, value_name = "SPRINT", conflicts_with = "setup")]
    pub keep_remote: Option<String>,
    /// Print the rails-sync/v1 document
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Print the rails-trust/v1 document
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The remote whose fetched records are compared (default: the branch's, else origin)
    pub remote: Option<String>,
    /// Print the rails-doctor/v1 document
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum PipelineCommand {
    /// Start the sprint's pipeline in planning and run it until done, escalated or aborted
    Run(PipelineArgs),
    /// Continue from the last committed state (after a crash, or an escalation)
    Resume(PipelineArgs),
    /// Show the state, attempts, review round and every committed event
    Status(PipelineStatusArgs),
    /// End the pipeline with a reason
    Abort(PipelineAbortArgs),
}

#[derive(Debug, Args)]
pub struct PipelineArgs {
    /// The sprint (default: the one bound to the branch)
    pub sprint: Option<String>,
}

#[derive(Debug, Args)]
pub struct PipelineStatusArgs {
    /// The sprint (default: the one bound to the branch)
    pub sprint: Option<String>,
    /// Print the rails-pipeline-status/v1 document
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PipelineAbortArgs {
    /// The sprint (default: the one bound to the branch)
    pub sprint: Option<String>,
    /// Why the pipeline ends
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
}

#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Install the gate the way the repository's hook manager expects: a line in
    /// .husky/<hook> (husky), a command in lefthook-local.yml (lefthook), <hook>.legacy beside
    /// pre-commit's shim, else a script in core.hooksPath or .git/hooks (a hook that is not ours
    /// is kept as <hook>.local and runs first)
    ///
    /// Also sets up the default remote (the branch's, else origin) so plain `git push` and
    /// `git fetch` carry the records, as `git rails sync --setup` does; `--no-sync-setup` skips it.
    Install(HooksInstallArgs),
    /// Remove the gate from wherever it is wired and restore every file as it was
    Uninstall(HooksWiringArgs),
    /// Run each hook as git would (through its manager, other tools' hooks included) with a
    /// probe that makes our gate answer, and say whether the gate runs; exit 1 when one does not
    Status(HooksArgs),
}

#[derive(Debug, Args)]
pub struct HooksArgs {
    /// Print the rails-hooks/v1 document as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HooksInstallArgs {
    #[command(flatten)]
    pub wiring: HooksWiringArgs,
    /// Do not add the record refspecs to the default remote's configuration
    #[arg(long)]
    pub no_sync_setup: bool,
}

#[derive(Debug, Args)]
pub struct HooksWiringArgs {
    /// Print the actions as JSON
    #[arg(long)]
    pub json: bool,
    /// Show every change (with the lines added to or removed from files other tools own);
    /// write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// lefthook: put the gate in the shared, tracked lefthook.yml instead of the untracked
    /// lefthook-local.yml
    #[arg(long)]
    pub shared: bool,
    /// Accept a core.hooksPath set in the global or system git configuration, whose hooks
    /// run in every repository of the user
    #[arg(long)]
    pub global: bool,
}

impl HooksWiringArgs {
    fn options(&self) -> hooks::Options {
        hooks::Options {
            dry_run: self.dry_run,
            shared: self.shared,
            global: self.global,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Refuse a push to a protected ref (rails.protect; any branch when unset) unless every
    /// sprint its new commits name passes its gate; with rails.requireSprint, naming none is
    /// refused (reads git's stdin protocol)
    PrePush {
        /// The remote's name
        remote: String,
        /// The remote's URL
        url: Option<String>,
    },
    /// Add the bound sprint's Rails-Sprint: trailer, then check the Rails-Sprint: and
    /// Rails-Done: trailers of the message being committed
    CommitMsg {
        /// The file holding the commit message
        file: PathBuf,
    },
    /// On a shared bare repository: refuse deleting or rewriting records, and (with
    /// rails.receiveGate, rails.protect or rails.requireSprint) judge updates of protected
    /// refs as pre-push does
    PreReceive,
    /// For an agent harness (Claude Code Stop or PreToolUse hook): exit 2 with the gate's
    /// report while the session's sprint is unproven
    ///
    /// Reads the event's session_id, cwd, stop_hook_active and hook_event_name. A session
    /// blocked on a sprint stays on it whatever branch HEAD is on. After rails.agentStopLimit
    /// (default 3) blocked stops in a row with stop_hook_active and nothing moved, the turn is
    /// let end (exit 0) and recorded on refs/rails/agent-stops/<sprint>.
    AgentStop,
}

#[derive(Debug, Subcommand)]
pub enum EvidenceCommand {
    /// Run the check and record it only if it fails (from pending or red)
    Red(EvidenceArgs),
    /// Run the check and record it only if it passes (from red); binds the criterion to the tree
    Green(EvidenceArgs),
    /// Record where a person sees the result (after green; review proofs straight from pending)
    Surface(EvidenceArgs),
    /// Record a teardown receipt: what was started and stopped, or "nothing was started"
    Cleanup(EvidenceArgs),
    /// Archive a surfaced cycle and return the criterion to pending (a note is required)
    Reopen(EvidenceArgs),
    /// Re-run the check of a surfaced criterion and re-bind it to the current tree
    Recheck(EvidenceArgs),
}

#[derive(Debug, Args)]
pub struct EvidenceArgs {
    /// The sprint, then the criterion; with one argument it is the criterion, of the sprint
    /// bound to the branch (`git rails contract bind`)
    #[arg(value_name = "SPRINT")]
    pub first: Option<String>,
    /// The criterion: a check id of the newest frozen contract (`git rails status` lists them)
    #[arg(value_name = "CRITERION")]
    pub second: Option<String>,
    /// What this record says (required for reopen; surface and cleanup need --note or --path)
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// Where the result can be seen or the receipt is kept (a screenshot, a report, a URL)
    #[arg(long, value_name = "PATH")]
    pub path: Option<String>,
    /// green only: accept a GREEN on the same tracked tree as its RED, saying what changed
    /// outside the tree (a service started, a tool installed); shown by status, gate and verify
    #[arg(long, value_name = "TEXT")]
    pub because: Option<String>,
    /// Print what was recorded as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The sprint (default: the one bound to the branch)
    pub sprint: Option<String>,
    /// Print the rails-status/v1 document
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// The sprint (default: the one bound to the branch)
    pub sprint: Option<String>,
    /// Judge staleness on this commit's tree (default: HEAD)
    #[arg(long, value_name = "REV")]
    pub commit: Option<String>,
    /// Print the rails-status/v1 document
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// text (default), json (the rails-status/v1 document) or markdown (for a pull-request
    /// comment); the exit code is the gate's
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The sprint (default: the one bound to the branch)
    pub sprint: Option<String>,
    /// Judge staleness on this commit's tree (default: HEAD)
    #[arg(long, value_name = "REV")]
    pub commit: Option<String>,
    /// The HTML file to write (replaced when it exists)
    #[arg(long, value_name = "FILE", required = true)]
    pub html: std::path::PathBuf,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The sprint (default: the one bound to the branch)
    pub sprint: Option<String>,
    /// The commit judged (default: HEAD)
    #[arg(long, value_name = "REV")]
    pub commit: Option<String>,
    /// Run each proven check again on the commit, and each RED on its recorded tree, in a
    /// clean temporary checkout
    #[arg(long)]
    pub rerun: bool,
    /// Print the rails-verify/v1 document
    #[arg(long)]
    pub json: bool,
    /// Also write a JUnit report (one test case for the chain, one per criterion) to FILE
    #[arg(long, value_name = "FILE")]
    pub junit: Option<std::path::PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ContractCommand {
    /// Draft a contract from a sprint document (Korean or English headings)
    ///
    /// Reads the done criteria, verification commands, prerequisites and non-goals sections and
    /// writes `.rails/contracts/<sprint>.json`. Every item that could only become a manual
    /// check is listed so you can fix it before freezing.
    Generate(GenerateArgs),
    /// Open the draft in $VISUAL or $EDITOR and check it on save
    ///
    /// Refused once the sprint is frozen and the draft equals the frozen tip: start the next
    /// version with `--next`, then freeze it with `git rails contract freeze <sprint> --bump`.
    Edit(EditArgs),
    /// Freeze the draft as v1, or with --bump as the next version (v1.1, v1.2 …)
    ///
    /// Creates `refs/rails/contracts/<sprint>` by compare-and-swap and makes the draft
    /// read-only. A frozen version is never rewritten.
    Freeze(FreezeArgs),
    /// Run prerequisites, runtime commands and DoD checks, in that order
    ///
    /// The first missing prerequisite ends the run (ABORT_PRECHECK, exit 3) before anything
    /// else runs. PASS exits 0, FAIL 1. The report is appended to `refs/notes/rails` on HEAD.
    Validate(ValidateArgs),
    /// Print a frozen version (the newest unless --version)
    Show(ShowArgs),
    /// List every frozen version with its date, base commit and what changed
    History(HistoryArgs),
    /// List every frozen sprint with its newest version and frozen date
    List(ListArgs),
    /// Record the sprint of the current branch (branch.<name>.railsSprint), so commands that
    /// take <sprint> default to it
    ///
    /// While the branch is bound, the commit-msg hook adds a `Rails-Sprint: <sprint>` trailer
    /// to each commit (unless the message has one), so a clone, CI and the server find the
    /// sprint from the pushed commits alone; the binding itself stays in this clone.
    Bind(BindArgs),
}

#[derive(Debug, Args)]
pub struct BindArgs {
    /// The sprint id (SPRINT-001): the commands that take a sprint default to it on this branch
    pub sprint: String,
    /// Do not add the record refspecs to the default remote's configuration
    #[arg(long)]
    pub no_sync_setup: bool,
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The sprint document (Markdown)
    pub doc: PathBuf,
    /// The sprint id (default: the first SPRINT-NNN in the document's title)
    #[arg(long, value_name = "ID")]
    pub sprint: Option<String>,
    /// Replace a draft that has changes of its own
    #[arg(long)]
    pub force: bool,
    /// Print a JSON summary instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct EditArgs {
    /// The sprint id (e.g. SPRINT-001)
    pub sprint: String,
    /// Start the draft of the next version of a frozen sprint
    #[arg(long)]
    pub next: bool,
}

#[derive(Debug, Args)]
pub struct FreezeArgs {
    /// The sprint id (e.g. SPRINT-001)
    pub sprint: String,
    /// Freeze the draft as the next version on top of the frozen tip
    #[arg(long)]
    pub bump: bool,
    /// A blocking criterion of an earlier version that this one removes or makes non-blocking;
    /// each one must be named (repeat the flag), or the freeze is refused
    #[arg(long = "drop", value_name = "ID", requires = "bump")]
    pub drop: Vec<String>,
    /// Why the criterion of the --drop before it is no longer needed (one per --drop, in the
    /// same order, or one for all); status, gate and the version's commit show it
    #[arg(long = "reason", value_name = "TEXT", requires = "drop")]
    pub reason: Vec<String>,
    /// Print the frozen version as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The sprint id (e.g. SPRINT-001)
    pub sprint: String,
    /// Validate this frozen version instead of the newest
    #[arg(long = "version", value_name = "V", conflicts_with = "draft")]
    pub version: Option<String>,
    /// Validate the draft (a try before freezing)
    #[arg(long)]
    pub draft: bool,
    /// Print the rails-validation/v1 document on stdout (progress goes to stderr)
    #[arg(long)]
    pub json: bool,
    /// Also write JUnit XML to FILE
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Do not add the report to refs/notes/rails
    #[arg(long)]
    pub no_note: bool,
    /// Run up to N DoD checks at once (prerequisites and runtime commands stay one at a time;
    /// results still come out in contract order)
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::value_parser!(u16).range(1..=256)
    )]
    pub jobs: u16,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The sprint id (e.g. SPRINT-001)
    pub sprint: String,
    /// The version to show (default: the newest)
    #[arg(long = "version", value_name = "V")]
    pub version: Option<String>,
    /// Print the rails-contract/v1 document
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The sprint id (e.g. SPRINT-001)
    pub sprint: String,
    /// Print the rails-contract-history/v1 document
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print the rails-contract-list/v1 document
    #[arg(long)]
    pub json: bool,
}

/// The clap definition, for man pages.
pub fn command() -> clap::Command {
    <RailsCli as clap::CommandFactory>::command()
}

/// The hot path: `git rails hook …` and `git rails gate` run on every push and commit, and
/// building clap's whole command tree is a sixth of what they cost, so they are parsed by a
/// command that holds only them. The test `hot_commands_parse_and_help_as_the_full_one` holds
/// their help and parsing equal to the full command's.
#[derive(Debug, Parser)]
#[command(name = "git-rails", bin_name = "git rails", version)]
struct HotCli {
    #[command(subcommand)]
    command: HotCommand,
}

#[derive(Debug, Subcommand)]
enum HotCommand {
    /// Exit 0 when the sprint is done, 2 when not (with each missing step), other codes when
    /// it could not decide
    Gate(GateArgs),
    /// What the installed hook scripts run (git passes the arguments and stdin)
    #[command(subcommand)]
    Hook(HookCommand),
}

fn parse_args(args: Vec<std::ffi::OsString>) -> std::result::Result<RailsCli, ExitCode> {
    let hot = matches!(args.get(1).and_then(|a| a.to_str()), Some("gate" | "hook"));
    if hot {
        let cli = super::parse::<HotCli>(args)?;
        return Ok(RailsCli {
            command: match cli.command {
                HotCommand::Gate(a) => RailsCommand::Gate(a),
                HotCommand::Hook(h) => RailsCommand::Hook(h),
            },
        });
    }
    super::parse::<RailsCli>(args)
}

pub fn main() -> ExitCode {
    let cli = match parse_args(std::env::args_os().collect()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::report("git-rails", run(cli))
}

pub fn run(cli: RailsCli) -> Result<Outcome> {
    match cli.command {
        RailsCommand::Contract(c) => match c {
            ContractCommand::Generate(a) => cmd_generate(a),
            ContractCommand::Edit(a) => cmd_edit(a),
            ContractCommand::Freeze(a) => cmd_freeze(a),
            ContractCommand::Validate(a) => cmd_validate(a),
            ContractCommand::Show(a) => cmd_show(a),
            ContractCommand::History(a) => cmd_history(a),
            ContractCommand::List(a) => cmd_list(a),
            ContractCommand::Bind(a) => cmd_bind(a),
        },
        RailsCommand::Evidence(e) => {
            let (t, a) = match e {
                EvidenceCommand::Red(a) => (Transition::Red, a),
                EvidenceCommand::Green(a) => (Transition::Green, a),
                EvidenceCommand::Surface(a) => (Transition::Surface, a),
                EvidenceCommand::Cleanup(a) => (Transition::Cleanup, a),
                EvidenceCommand::Reopen(a) => (Transition::Reopen, a),
                EvidenceCommand::Recheck(a) => (Transition::Recheck, a),
            };
            cmd_evidence(t, a)
        }
        RailsCommand::Status(a) => cmd_status(a),
        RailsCommand::Gate(a) => cmd_gate(a),
        RailsCommand::Report(a) => cmd_report(a),
        RailsCommand::Verify(a) => cmd_verify(a),
        RailsCommand::Pipeline(p) => cmd_pipeline(p),
        RailsCommand::Hooks(h) => cmd_hooks(h),
        RailsCommand::Hook(h) => cmd_hook(h),
        RailsCommand::Sync(a) => cmd_sync(a, "git-rails"),
        RailsCommand::Doctor(a) => cmd_doctor(a),
        RailsCommand::Completions(a) => {
            super::complete::print_script(command(), "rails", &a.shell)?;
            Ok(Outcome::Ok)
        }
        RailsCommand::Complete(a) => {
            for c in super::complete::candidates(command(), &a.words, &super::complete::repo_names)
            {
                outln!("{c}");
            }
            Ok(Outcome::Ok)
        }
        RailsCommand::Trust(a) => cmd_trust(a),
        RailsCommand::Agent(c) => super::agent::run(c),
        RailsCommand::Mcp(a) => {
            crate::mcp::serve(a.repo.as_deref(), a.log.as_deref())?;
            Ok(Outcome::Ok)
        }
    }
}

fn cmd_trust(a: TrustArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let root = store.workdir()?.to_path_buf();
    let t = crate::pipeline::config::trust(&store, &root)?;
    if a.json {
        super::print_json(&t)?;
        return Ok(Outcome::Ok);
    }
    outln!(
        "{} {} (sha256 {}) for this clone",
        if t.already {
            "already trusted:"
        } else {
            "trusted"
        },
        t.path,
        &t.sha256[..12]
    );
    if t.runs.is_empty() {
        outln!("it names no command to run");
    }
    for (what, cmd) in &t.runs {
        outln!("  {what}: {cmd}");
    }
    Ok(Outcome::Ok)
}

fn cmd_pipeline(p: PipelineCommand) -> Result<Outcome> {
    use crate::pipeline::{self, PState};
    let store = Store::discover()?;
    let mut progress = |l: &str| eprintln!("{l}");
    let finished = |s: pipeline::State| -> Outcome {
        match s.state {
            PState::Done => Outcome::Ok,
            _ => Outcome::Fail,
        }
    };
    match p {
        PipelineCommand::Run(a) => {
            let sprint = resolve_sprint(&store, a.sprint)?;
            let s = pipeline::run(&store, &sprint, &mut progress)?;
            outln!("pipeline {sprint}: {}", s.state.as_str());
            Ok(finished(s))
        }
        PipelineCommand::Resume(a) => {
            let sprint = resolve_sprint(&store, a.sprint)?;
            let s = pipeline::resume(&store, &sprint, &mut progress)?;
            outln!("pipeline {sprint}: {}", s.state.as_str());
            Ok(finished(s))
        }
        PipelineCommand::Abort(a) => {
            let sprint = resolve_sprint(&store, a.sprint)?;
            if a.reason.trim().is_empty() {
                return Err(Error::refused("an abort needs a reason").hint(format!(
                    "git rails pipeline abort {sprint} --reason \"<why>\""
                )));
            }
            let s = pipeline::abort(&store, &sprint, a.reason.trim(), &mut progress)?;
            outln!("pipeline {sprint}: {}", s.state.as_str());
            Ok(Outcome::Ok)
        }
        PipelineCommand::Status(a) => {
            let sprint = resolve_sprint(&store, a.sprint)?;
            let Some((state, _)) = pipeline::load(&store, &sprint)? else {
                return Err(Error::refused(format!("no pipeline for {sprint}"))
                    .hint(format!("start one with `git rails pipeline run {sprint}`")));
            };
            let events = pipeline::history(&store, &sprint)?;
            if a.json {
                super::print_json(&pipeline::status_json(&state, &events))?;
            } else {
                let mut buf = Vec::new();
                pipeline::render_status(&state, &events, &mut buf)
                    .map_err(|e| Error::internal(e.to_string()))?;
                out!("{}", String::from_utf8_lossy(&buf));
            }
            Ok(Outcome::Ok)
        }
    }
}

fn cmd_hooks(h: HooksCommand) -> Result<Outcome> {
    let store = Store::discover()?;
    match h {
        HooksCommand::Install(a) => {
            let actions = hooks::install(&store, a.wiring.options())?;
            print_actions(&actions, a.wiring.json)?;
            if !a.wiring.json && hooks::find_on_path("git-rails").is_none() {
                eprintln!("git-rails: warning: git-rails is not on PATH, so the hooks will refuse until it is");
            }
            if !a.no_sync_setup && !a.wiring.dry_run {
                setup_record_sync(&store, !a.wiring.json)?;
            }
        }
        HooksCommand::Uninstall(a) => {
            let actions = hooks::uninstall(&store, a.options())?;
            print_actions(&actions, a.json)?;
        }
        HooksCommand::Status(a) => {
            let st = hooks::status(&store);
            if a.json {
                super::print_json(&st)?;
            } else {
                outln!(
                    "hooks folder: {}{}",
                    st.hooks_dir,
                    match (&st.core_hooks_path, st.core_hooks_path_scope.as_deref()) {
                        (true, Some(s)) => format!(" (core.hooksPath, {s} configuration)"),
                        (true, None) => " (core.hooksPath)".to_string(),
                        _ => String::new(),
                    }
                );
                for h in &st.hooks {
                    let runs = match &h.probe {
                        None => "not probed".to_string(),
                        Some(_) if h.gate_runs => format!("gate runs through {}", h.manager),
                        Some(_) => "gate does NOT run".to_string(),
                    };
                    outln!("{:<12} {}, {runs} ({})", h.hook, h.state, h.path);
                    for o in &h.also_runs {
                        outln!("{:<12} also runs {o}", "");
                    }
                }
                outln!(
                    "git-rails on PATH: {}",
                    st.git_rails
                        .as_deref()
                        .unwrap_or("no (the hooks refuse until it is)")
                );
                for n in &st.notes {
                    outln!("note: {n}");
                }
                for p in &st.problems {
                    outln!("problem: {p}");
                }
            }
            if !st.ok() {
                return Ok(Outcome::Code(1));
            }
        }
    }
    Ok(Outcome::Ok)
}

fn print_actions(actions: &[hooks::Action], json_out: bool) -> Result<()> {
    if json_out {
        return super::print_json(&json!({"schema": "rails-hooks-actions/v1", "actions": actions}));
    }
    for a in actions {
        outln!("{:<12} {} ({})", a.hook, a.did, a.path);
        if let Some(d) = &a.diff {
            for l in d.lines() {
                outln!("    {l}");
            }
        }
    }
    Ok(())
}

fn cmd_hook(h: HookCommand) -> Result<Outcome> {
    use std::io::Read;
    let (name, args): (&str, Vec<String>) = match &h {
        HookCommand::PrePush { remote, url } => (
            "pre-push",
            std::iter::once(remote.clone()).chain(url.clone()).collect(),
        ),
        HookCommand::CommitMsg { file } => ("commit-msg", vec![file.display().to_string()]),
        HookCommand::PreReceive => ("pre-receive", vec![]),
        HookCommand::AgentStop => ("agent-stop", vec![]),
    };
    let mut stdin = Vec::new();
    if name != "commit-msg" {
        std::io::stdin()
            .read_to_end(&mut stdin)
            .map_err(|e| Error::refused(format!("{name}: reading stdin: {e}")))?;
    }
    if let Some(line) = hooks::probe::answer(name, &args, &stdin)? {
        eprintln!("{line}");
        return Ok(Outcome::Ok);
    }
    let mut chained = hooks::run::HookResult::default();
    let hook_dir = std::env::var_os("RAILS_HOOK_DIR").map(PathBuf::from);
    let failed = hooks::run::run_chained(hook_dir.as_deref(), name, &args, &stdin, &mut chained)?;
    for l in &chained.lines {
        eprintln!("{l}");
    }
    if let Some(code) = failed {
        return Ok(exit_with(code));
    }
    if name != "pre-receive" && std::env::var("RAILS_SKIP").is_ok_and(|v| v == "1") {
        eprintln!(
            "git-rails: RAILS_SKIP=1: the rails checks of {name} are skipped for this command"
        );
        return Ok(Outcome::Ok);
    }
    let text = String::from_utf8_lossy(&stdin);
    // An agent's hook event says which directory the session works in.
    let event_dir = match &h {
        HookCommand::AgentStop => hooks::run::event_cwd(&text),
        _ => None,
    };
    if let Some(dir) = &event_dir {
        std::env::set_current_dir(dir).map_err(|e| {
            Error::refused(format!(
                "{name}: the event's cwd {} cannot be entered: {e}",
                dir.display()
            ))
        })?;
    }
    let store = Store::discover().map_err(|e| {
        e.context(format!(
            "{name}: the hook cannot read the repository, so it refuses"
        ))
    })?;
    let result = match h {
        HookCommand::PrePush { remote, .. } => hooks::run::pre_push(&store, &remote, &text)?,
        HookCommand::CommitMsg { file } => hooks::run::commit_msg(&store, &file)?,
        HookCommand::PreReceive => hooks::run::pre_receive(&store, &text)?,
        HookCommand::AgentStop => hooks::run::agent_stop(&store, &text)?,
    };
    for l in &result.lines {
        eprintln!("{l}");
    }
    Ok(exit_with(result.code))
}

/// What `hooks install` and `contract bind` do for the records to travel as the README says:
/// the default remote's refspecs, as `git rails sync --setup` writes them (said on stderr). A
/// bare repository (a server) or a clone with no such remote is left alone, with a line saying so.
fn setup_record_sync(store: &Store, say_no_remote: bool) -> Result<()> {
    if store.workdir().is_err() {
        return Ok(());
    }
    let remote = crate::sync::default_remote(store);
    if store
        .config_string(&format!("remote.{remote}.url"))
        .is_none()
    {
        if say_no_remote {
            eprintln!("git-rails: no remote {remote:?} yet; once there is one, `git rails sync --setup <remote>` makes plain `git push` / `git fetch` carry the records");
        }
        return Ok(());
    }
    let added = crate::sync::setup(store, &remote)?;
    if !added.is_empty() {
        eprintln!("git-rails: set up {remote} so plain `git push` / `git fetch` carry the records (skip with --no-sync-setup):");
        for l in &added {
            eprintln!("git-rails:   {l}");
        }
    }
    Ok(())
}

/// An exit code chosen by a hook.
fn exit_with(code: u8) -> Outcome {
    match code {
        0 => Outcome::Ok,
        2 => Outcome::Blocked,
        c => Outcome::Code(c),
    }
}

/// The sprint given, or the one bound to the current branch.
pub(crate) fn resolve_sprint(store: &Store, given: Option<String>) -> Result<String> {
    if let Some(s) = given {
        contract::check_sprint(&s)?;
        return Ok(s);
    }
    let Some(branch) = store.current_branch()? else {
        return Err(
            Error::usage("no sprint given, and HEAD is detached so no branch names one").hint(
                "name the sprint, or bind one to a branch with `git rails contract bind <sprint>`",
            ),
        );
    };
    match store.config_string(&format!("branch.{branch}.railsSprint")) {
        Some(s) if !s.trim().is_empty() => {
            contract::check_sprint(s.trim())?;
            Ok(s.trim().to_string())
        }
        _ => Err(Error::usage(format!(
            "no sprint given, and branch {branch} has none bound"
        ))
        .hint("name the sprint, or bind one with `git rails contract bind <sprint>`")),
    }
}

fn cmd_bind(a: BindArgs) -> Result<Outcome> {
    contract::check_sprint(&a.sprint)?;
    let store = Store::discover()?;
    let Some(branch) = store.current_branch()? else {
        return Err(
            Error::refused("HEAD is detached; a sprint is bound to a branch")
                .hint("check out the sprint's branch and run `git rails contract bind` there"),
        );
    };
    let frozen = contract::newest(&store, &a.sprint)?;
    store.set_config(&format!("branch.{branch}.railsSprint"), &a.sprint)?;
    outln!(
        "bound {} to branch {branch} (branch.{branch}.railsSprint)",
        a.sprint
    );
    if frozen.is_none() {
        outln!(
            "note: {} has no frozen contract yet; freeze it with `git rails contract freeze {}`",
            a.sprint,
            a.sprint
        );
    }
    if !a.no_sync_setup {
        setup_record_sync(&store, false)?;
    }
    Ok(Outcome::Ok)
}

fn cmd_evidence(t: Transition, a: EvidenceArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let (sprint, criterion) = match (a.first, a.second) {
        (Some(s), Some(c)) => (resolve_sprint(&store, Some(s))?, c),
        (Some(c), None) => (resolve_sprint(&store, None)?, c),
        (None, _) => {
            let verb = t.as_str();
            let hint = match resolve_sprint(&store, None)
                .ok()
                .and_then(|s| contract::newest(&store, &s).ok().flatten())
            {
                Some(f) => format!(
                    "git rails evidence {verb} <criterion>; the criteria of {} are: {}",
                    f.sprint,
                    f.contract
                        .dod
                        .checks
                        .iter()
                        .map(|c| c.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => format!("git rails evidence {verb} <sprint> <criterion>"),
            };
            return Err(
                Error::usage("no criterion given: name the criterion to record").hint(hint),
            );
        }
    };
    let note = a.note.as_deref().filter(|n| !n.trim().is_empty());
    let path = a.path.as_deref().filter(|p| !p.trim().is_empty());
    let because = evidence::checked_because(t, a.because.as_deref(), "--because")?;
    let rec = evidence::transition(
        &store,
        &evidence::Request {
            sprint: &sprint,
            criterion: &criterion,
            transition: t,
            note,
            path,
            because,
        },
    )?;
    if a.json {
        super::print_json(&rec)?;
        return Ok(Outcome::Ok);
    }
    let id = rec.record.id.as_deref().map(short).unwrap_or("");
    let label = t.as_str().to_uppercase();
    let what = rec
        .record
        .summary
        .as_deref()
        .map(|s| format!(": {s}"))
        .unwrap_or_default();
    outln!(
        "{label} {sprint} {criterion} recorded as {id} (evidence {}){what}",
        short(&rec.commit)
    );
    outln!("{criterion} is now {}", rec.status.as_str());
    if t == Transition::Reopen {
        outln!(
            "the cycle is archived; earn RED again: git rails evidence red {sprint} {criterion}"
        );
    }
    Ok(Outcome::Ok)
}

fn cmd_status(a: StatusArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let sprint = resolve_sprint(&store, a.sprint)?;
    let head = store.head_commit()?;
    let report = crate::evidence::kept::evaluate(&store, &sprint, head)?;
    if a.json {
        super::print_json(&report)?;
    } else {
        out!("{}", gate::render_status(&report));
    }
    Ok(Outcome::Ok)
}

fn cmd_report(a: ReportArgs) -> Result<Outcome> {
    crate::report::check_out_file(&a.html)?;
    let store = Store::discover()?;
    let sprint = resolve_sprint(&store, a.sprint)?;
    let commit = match &a.commit {
        Some(rev) => Some(store.resolve_commit(rev)?),
        None => store.head_commit()?,
    };
    let report = gate::evaluate(&store, &sprint, commit)?;
    let (_, tip) = crate::evidence::load(&store, &sprint)?;
    let done = report.done;
    let view = crate::report::rails::load(&store, report, tip)?;
    let page = crate::report::rails::html_report(&view);
    crate::store::atomic_write(&a.html, page.as_bytes())?;
    outln!(
        "git-rails: wrote {} ({} criteria, gate {})",
        a.html.display(),
        view.report.criteria.len(),
        if done { "passed" } else { "blocked" }
    );
    Ok(Outcome::Ok)
}

fn cmd_gate(a: GateArgs) -> Result<Outcome> {
    let format = match a
        .format
        .as_deref()
        .unwrap_or(if a.json { "json" } else { "text" })
    {
        f @ ("text" | "json" | "markdown") => f.to_string(),
        f => {
            return Err(Error::usage(format!(
                "--format {f:?} is not one of text, json, markdown"
            )))
        }
    };
    let could_not = "the verification gate could not run; completion remains blocked";
    let store = Store::discover().map_err(|e| e.context(could_not))?;
    let sprint = resolve_sprint(&store, a.sprint).map_err(|e| e.context(could_not))?;
    let commit = match &a.commit {
        Some(rev) => store
            .resolve_commit(rev)
            .map_err(|e| e.context(could_not))?,
        None => store.head_commit()?.ok_or_else(|| {
            Error::refused(format!("{could_not}: there is no commit to judge yet")).hint(
                "commit the work (`git add` and `git commit`), then run `git rails gate` again",
            )
        })?,
    };
    let report = crate::evidence::kept::evaluate(&store, &sprint, Some(commit))
        .map_err(|e| e.context(could_not))?;
    if format == "markdown" {
        out!("{}", crate::report::rails::markdown(&report));
    } else if format == "json" {
        super::print_json(&report)?;
    } else if report.done {
        outln!(
            "gate passed: {} {} is done at {} ({} criteria surfaced, receipts in, none stale)",
            report.sprint,
            report.version,
            short(&commit.to_string()),
            report.criteria.len()
        );
    } else {
        outln!(
            "gate blocked: {} {} is not done at {} ({} step{} missing)",
            report.sprint,
            report.version,
            short(&commit.to_string()),
            report.missing.len(),
            if report.missing.len() == 1 { "" } else { "s" }
        );
        for m in &report.missing {
            outln!("- {} {}: {}", m.criterion, m.reason, m.command);
        }
    }
    if !a.json {
        for d in &report.dropped {
            outln!("{}", gate::dropped_line(d));
        }
    }
    Ok(if report.done {
        Outcome::Ok
    } else {
        Outcome::Blocked
    })
}

fn cmd_verify(a: VerifyArgs) -> Result<Outcome> {
    let could_not = "verify could not run; completion remains blocked";
    let store = Store::discover().map_err(|e| e.context(could_not))?;
    let sprint = resolve_sprint(&store, a.sprint).map_err(|e| e.context(could_not))?;
    let commit = match &a.commit {
        Some(rev) => store
            .resolve_commit(rev)
            .map_err(|e| e.context(could_not))?,
        None => store.head_commit()?.ok_or_else(|| {
            Error::refused(format!("{could_not}: there is no commit to judge yet"))
        })?,
    };
    let report = evidence::verify::verify(&store, &sprint, commit, a.rerun)
        .map_err(|e| e.context(could_not))?;
    if let Some(path) = &a.junit {
        crate::store::atomic_write(path, evidence::verify::junit(&report).as_bytes())?;
    }
    if a.json {
        super::print_json(&report)?;
    } else {
        out!("{}", evidence::verify::render(&report));
    }
    Ok(if report.done {
        Outcome::Ok
    } else {
        Outcome::Blocked
    })
}

fn cmd_generate(a: GenerateArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let root = store.workdir()?.to_path_buf();
    if let Some(s) = &a.sprint {
        contract::check_sprint(s)?;
    }
    let doc = std::fs::read_to_string(&a.doc).map_err(|e| {
        Error::refused(format!(
            "cannot read the sprint document {}: {e}",
            a.doc.display()
        ))
        .hint("name a Markdown file that exists")
    })?;
    let generated = generate::generate(&doc, a.sprint.as_deref(), jiff::Timestamp::now())?;
    let sprint = generated.contract.sprint_id.clone();
    let path = contract::draft_path(&root, &sprint);
    let frozen = contract::newest(&store, &sprint)?;
    let mut next_version = None;
    if let Ok(existing) = std::fs::read(&path) {
        let equals_tip = frozen.as_ref().is_some_and(|f| {
            schema::parse(&existing)
                .map(|c| c.to_canonical_json() == f.contract.to_canonical_json())
                .unwrap_or(false)
        });
        if !equals_tip && !a.force {
            return Err(Error::refused(format!(
                "a draft already exists at {}",
                contract::rel(&root, &path)
            ))
            .hint(format!(
                "edit it with `git rails contract edit {sprint}`, or replace it with `git rails contract generate {} --force`",
                a.doc.display()
            )));
        }
    }
    if let Some(f) = &frozen {
        next_version = Some(contract::next_version(&f.version));
    }
    store::atomic_write_mode(&path, &generated.contract.to_canonical_json(), Some(0o644))?;
    // Manual checks point at the sprint's checklist; start it when there is none yet.
    let mut checklist = None;
    if let Some(md) = generated.checklist_markdown() {
        let cl = root.join(generate::checklist_path(&sprint));
        if !cl.exists() {
            store::atomic_write_mode(&cl, md.as_bytes(), Some(0o644))?;
            checklist = Some(contract::rel(&root, &cl));
        }
    }
    if a.json {
        super::print_json(&json!({
            "schema": "rails-generate/v1",
            "sprint": sprint,
            "draft": contract::rel(&root, &path),
            "nextVersion": next_version,
            "checks": generated.contract.dod.checks.len(),
            "manualItems": generated.manual_items.iter().map(|m| json!({
                "section": m.section, "text": m.text, "checkId": m.check_id
            })).collect::<Vec<_>>(),
            "warnings": generated.warnings,
            "checklistWritten": checklist,
        }))?;
    } else {
        let c = &generated.contract;
        outln!(
            "wrote {} ({} checks, {} runtime commands, {} prerequisites, {} non-goals)",
            contract::rel(&root, &path),
            c.dod.checks.len(),
            c.runtime_validation.commands.len(),
            c.environment_prerequisites.len(),
            c.non_goals.len()
        );
        if !generated.manual_items.is_empty() {
            outln!(
                "{} item{} could only be mapped to a manual check; make each executable if you can:",
                generated.manual_items.len(),
                if generated.manual_items.len() == 1 { "" } else { "s" }
            );
            for m in &generated.manual_items {
                outln!("  {} [{}]: {}", m.check_id, m.section, m.text);
            }
        }
        if let Some(cl) = &checklist {
            outln!("wrote {cl}: tick its items when a person has checked them");
        }
        for w in &generated.warnings {
            outln!("warning: {w}");
        }
        match next_version {
            Some(v) => outln!(
                "{sprint} is frozen; this is the draft of {v}: review it with `git rails contract edit {sprint} --next`, then `git rails contract freeze {sprint} --bump`"
            ),
            None => outln!(
                "next: review it with `git rails contract edit {sprint}`, then `git rails contract freeze {sprint}`"
            ),
        }
    }
    Ok(Outcome::Ok)
}

fn cmd_edit(a: EditArgs) -> Result<Outcome> {
    contract::check_sprint(&a.sprint)?;
    let store = Store::discover()?;
    let root = store.workdir()?.to_path_buf();
    let sprint = &a.sprint;
    let path = contract::draft_path(&root, sprint);
    let frozen = contract::newest(&store, sprint)?;
    let existing = std::fs::read(&path).ok();
    match (&frozen, &existing) {
        (None, None) => {
            return Err(
                Error::refused(format!("no draft for {sprint}")).hint(format!(
                "draft one with `git rails contract generate <sprint-doc.md> --sprint {sprint}`"
            )),
            )
        }
        (None, Some(_)) if a.next => {
            return Err(Error::refused(format!(
                "{sprint} is not frozen, so there is no next version to start"
            ))
            .hint(format!(
                "edit the draft with `git rails contract edit {sprint}`"
            )))
        }
        (Some(f), _) => {
            let equals_tip = existing.as_ref().is_none_or(|bytes| {
                schema::parse(bytes)
                    .map(|c| c.to_canonical_json() == f.contract.to_canonical_json())
                    .unwrap_or(false)
            });
            if equals_tip && !a.next {
                return Err(Error::refused(format!(
                    "{sprint} is frozen at {}; a frozen version is never edited",
                    f.version
                ))
                .hint(format!(
                    "to change it, edit a new draft with `git rails contract edit {sprint} --next` and freeze it with `git rails contract freeze {sprint} --bump`"
                )));
            }
            if equals_tip {
                // The draft of the next version starts as the frozen tip, writable again.
                store::atomic_write_mode(&path, &f.contract.to_canonical_json(), Some(0o644))?;
            }
        }
        (None, Some(_)) => {}
    }
    ensure_writable(&path)?;
    run_editor(&path)?;
    let (_, c) = contract::load_draft(&root, sprint).map_err(|e| {
        let msg = e.message.clone();
        Error::refused(format!("{msg}\n(the draft was saved as you left it)")).hint(format!(
            "run `git rails contract edit {sprint}` again to fix it"
        ))
    })?;
    let bump = if frozen.is_some() { " --bump" } else { "" };
    outln!(
        "{} is valid ({} checks); freeze it with `git rails contract freeze {sprint}{bump}`",
        contract::rel(&root, &path),
        c.dod.checks.len()
    );
    Ok(Outcome::Ok)
}

fn ensure_writable(path: &std::path::Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ctx(format!("reading {}", path.display()))?;
    if meta.permissions().mode() & 0o200 == 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
            .ctx(format!("making {} writable", path.display()))?;
    }
    Ok(())
}

fn run_editor(path: &std::path::Path) -> Result<()> {
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|s| !s.trim().is_empty())
        })
        .unwrap_or_else(|| "vi".to_string());
    // Like git: the editor value is a shell snippet, the file is its argument.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(&editor)
        .arg(path)
        .status()
        .map_err(|e| Error::refused(format!("cannot start the editor {editor:?}: {e}")))?;
    if !status.success() {
        return Err(Error::refused(format!(
            "the editor {editor:?} exited with {status}; the draft was left as it is"
        ))
        .hint("set $VISUAL or $EDITOR to an editor that works and try again"));
    }
    Ok(())
}

pub(crate) fn frozen_json(f: &contract::Frozen) -> serde_json::Value {
    json!({
        "schema": "rails-contract/v1",
        "sprint": f.sprint,
        "version": f.version,
        "commit": f.commit.to_string(),
        "base": f.base.map(|b| b.to_string()),
        "frozenAt": contract::rfc3339(f.frozen_at),
        "dropped": f.dropped,
        "contract": f.contract,
    })
}

fn cmd_freeze(a: FreezeArgs) -> Result<Outcome> {
    contract::check_sprint(&a.sprint)?;
    let store = Store::discover()?;
    if a.reason.len() != a.drop.len() && a.reason.len() != 1 {
        return Err(Error::usage(format!(
            "{} --drop and {} --reason: give one --reason after each --drop (or one for all)",
            a.drop.len(),
            a.reason.len()
        )));
    }
    let drops: Vec<contract::DropRequest> = a
        .drop
        .iter()
        .enumerate()
        .map(|(i, id)| contract::DropRequest {
            id: id.clone(),
            reason: a
                .reason
                .get(i)
                .or(a.reason.first())
                .cloned()
                .unwrap_or_default(),
        })
        .collect();
    let f = contract::freeze(&store, &a.sprint, a.bump, &drops)?;
    if a.json {
        super::print_json(&frozen_json(&f))?;
    } else {
        outln!(
            "froze {} {} as {} (refs/rails/contracts/{}); the draft is now read-only",
            f.sprint,
            f.version,
            short(&f.commit.to_string()),
            f.sprint
        );
        for d in &f.dropped {
            outln!(
                "dropped in {}: {} ({}) — {}",
                f.version,
                d.id,
                d.change,
                d.reason
            );
        }
        outln!(
            "next: `git rails contract validate {}` runs its checks",
            f.sprint
        );
    }
    Ok(Outcome::Ok)
}

fn short(id: &str) -> &str {
    &id[..id.len().min(7)]
}

fn cmd_validate(a: ValidateArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let chosen = validate::Chosen::of(&store, &a.sprint, a.version.as_deref(), a.draft)?;
    let target = chosen.target(&a.sprint);
    let json_out = a.json;
    let mut progress = |e: &validate::Entry| {
        let line = validate::entry_line(e);
        if json_out {
            eprintln!("{line}");
        } else {
            outln!("{line}");
        }
    };
    let report = validate::run_with_jobs(&store, &target, usize::from(a.jobs), &mut progress)?;
    if let Some(path) = &a.junit {
        store::atomic_write(path, junit::render(&report).as_bytes())?;
    }
    let noted = match (a.no_note, store.head_commit()?) {
        (false, Some(head)) => {
            store.note_append(
                store::refs::NOTES_RAILS,
                head,
                &validate::note_text(&report),
            )?;
            Some(head)
        }
        _ => None,
    };
    if json_out {
        super::print_json(&report)?;
    } else {
        outln!("{}", validate::verdict_line(&report));
        if let Some(head) = noted {
            outln!(
                "report added to refs/notes/rails on {} (git notes --ref=rails show {})",
                short(&head.to_string()),
                short(&head.to_string())
            );
        }
    }
    Ok(match report.verdict {
        validate::Verdict::Pass => Outcome::Ok,
        validate::Verdict::Fail => Outcome::Fail,
        validate::Verdict::AbortPrecheck => Outcome::AbortPrecheck,
    })
}

fn cmd_show(a: ShowArgs) -> Result<Outcome> {
    contract::check_sprint(&a.sprint)?;
    let store = Store::discover()?;
    let f = contract::find(&store, &a.sprint, a.version.as_deref())?;
    if a.json {
        super::print_json(&frozen_json(&f))?;
        return Ok(Outcome::Ok);
    }
    let c = &f.contract;
    outln!(
        "Contract {} {} [{}] frozen {} at {}",
        f.sprint,
        f.version,
        c.sprint_type.as_str(),
        contract::rfc3339(f.frozen_at),
        short(&f.commit.to_string())
    );
    if let Some(b) = f.base {
        outln!("base commit: {b}");
    }
    outln!("id: {}  reviewer profile: {:?}", c.id, c.reviewer_profile);
    outln!("Definition of done ({} checks):", c.dod.checks.len());
    for ch in &c.dod.checks {
        outln!(
            "  - {} [{}{}]: {}",
            ch.id,
            ch.kind.as_str(),
            if ch.blocking { "" } else { ", non-blocking" },
            ch.description
        );
        outln!("      spec: {}", ch.spec);
        if let Some(scope) = &ch.scope {
            outln!("      scope: {}", scope.join(", "));
        }
    }
    if !c.environment_prerequisites.is_empty() {
        outln!("Prerequisites:");
        for p in &c.environment_prerequisites {
            outln!(
                "  - {} [{}] {} ({})",
                p.name,
                p.check.as_str(),
                p.spec,
                p.reason
            );
        }
    }
    if !c.runtime_validation.commands.is_empty() {
        outln!("Runtime commands:");
        for r in &c.runtime_validation.commands {
            outln!(
                "  - {}: {} (timeout {} ms)",
                r.name,
                r.command,
                r.timeout_ms
            );
        }
    }
    if !c.non_goals.is_empty() {
        outln!("Non-goals:");
        for g in &c.non_goals {
            match g {
                schema::NonGoal::Text(t) => outln!("  - {t}"),
                schema::NonGoal::Paths(p) => {
                    outln!(
                        "  - {} (FAIL if the change touches {})",
                        p.text,
                        p.paths.join(", ")
                    )
                }
            }
        }
    }
    let g = &c.approval_gates;
    outln!(
        "Approval gates: impl={} review={} deploy={}",
        g.implementation,
        g.review,
        g.deploy
    );
    Ok(Outcome::Ok)
}

fn cmd_history(a: HistoryArgs) -> Result<Outcome> {
    contract::check_sprint(&a.sprint)?;
    let store = Store::discover()?;
    let all = contract::versions(&store, &a.sprint)?;
    if all.is_empty() {
        return Err(
            Error::refused(format!("{} has no frozen contract", a.sprint)).hint(format!(
                "freeze its draft with `git rails contract freeze {}`",
                a.sprint
            )),
        );
    }
    let mut rows = Vec::new();
    for (i, f) in all.iter().enumerate() {
        let changes = if i == 0 {
            vec!["first version".to_string()]
        } else {
            contract::describe_changes(&all[i - 1].contract, &f.contract)
        };
        rows.push((f, changes));
    }
    if a.json {
        super::print_json(&json!({
            "schema": "rails-contract-history/v1",
            "sprint": a.sprint,
            "versions": rows.iter().map(|(f, ch)| json!({
                "version": f.version,
                "commit": f.commit.to_string(),
                "base": f.base.map(|b| b.to_string()),
                "frozenAt": contract::rfc3339(f.frozen_at),
                "changes": ch,
            })).collect::<Vec<_>>(),
        }))?;
        return Ok(Outcome::Ok);
    }
    for (f, changes) in rows {
        outln!(
            "{:<6} {}  commit {}  base {}",
            f.version,
            contract::rfc3339(f.frozen_at),
            short(&f.commit.to_string()),
            f.base
                .map(|b| short(&b.to_string()).to_string())
                .unwrap_or_else(|| "none".into())
        );
        for c in changes {
            outln!("       {c}");
        }
    }
    Ok(Outcome::Ok)
}

fn cmd_list(a: ListArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let all = contract::list(&store)?;
    if a.json {
        super::print_json(&list_json(&all))?;
        return Ok(Outcome::Ok);
    }
    if all.is_empty() {
        eprintln!(
            "git-rails: no frozen contracts yet; draft one with `git rails contract generate <sprint-doc.md>` and freeze it"
        );
    }
    for f in &all {
        outln!(
            "{:<16} {:<6} {:<9} {} checks  frozen {}",
            f.sprint,
            f.version,
            f.contract.sprint_type.as_str(),
            f.contract.dod.checks.len(),
            contract::rfc3339(f.frozen_at)
        );
    }
    Ok(Outcome::Ok)
}

/// The rails-contract-list/v1 document of `contract list --json` (and the MCP `contracts` tool).
pub(crate) fn list_json(all: &[contract::Frozen]) -> serde_json::Value {
    json!({
        "schema": "rails-contract-list/v1",
        "sprints": all.iter().map(|f| json!({
            "sprint": f.sprint,
            "version": f.version,
            "type": f.contract.sprint_type.as_str(),
            "checks": f.contract.dod.checks.len(),
            "commit": f.commit.to_string(),
            "frozenAt": contract::rfc3339(f.frozen_at),
        })).collect::<Vec<_>>(),
    })
}

/// `git rails sync` and `git spar sync` (one implementation; `prog` prefixes progress lines).
pub fn cmd_sync(a: SyncArgs, prog: &str) -> Result<Outcome> {
    let store = Store::discover()?;
    let remote = a
        .remote
        .clone()
        .unwrap_or_else(|| crate::sync::default_remote(&store));
    if a.setup {
        let added = crate::sync::setup(&store, &remote)?;
        if a.json {
            super::print_json(
                &json!({"schema": "rails-sync-setup/v1", "remote": remote, "added": added}),
            )?;
        } else if added.is_empty() {
            outln!("{remote}: already set up; `git fetch {remote}` stages records under refs/rails-sync/{remote}/ and `git push {remote}` carries them");
        } else {
            for l in &added {
                outln!("added {l}");
            }
            outln!("`git fetch {remote}` now stages records under refs/rails-sync/{remote}/; `git push {remote}` carries them (and still the current branch); merge with `git rails sync {remote}`");
        }
        return Ok(Outcome::Ok);
    }
    if let Some(sprint) = &a.keep_remote {
        let (ours, theirs) = crate::sync::keep_remote(&store, &remote, sprint)?;
        let json_doc = json!({
            "schema": "rails-sync-keep/v1", "sprint": sprint, "remote": remote,
            "kept": theirs.to_string(), "superseded": ours.to_string(),
            "supersededRef": format!("refs/rails-sync/kept/contracts/{sprint}/{ours}"),
            "next": format!("git rails contract freeze {sprint} --bump"),
        });
        if a.json {
            super::print_json(&json_doc)?;
        } else {
            outln!("{sprint}: now at {remote}'s versions ({theirs}); this clone's chain is kept at refs/rails-sync/kept/contracts/{sprint}/{ours}");
            outln!("next: freeze this clone's content on top: git rails contract freeze {sprint} --bump");
        }
        return Ok(Outcome::Ok);
    }
    let mut progress = |line: &str| eprintln!("{prog}: {line}");
    let report = crate::sync::sync(
        &store,
        &crate::sync::Options {
            remote: &remote,
            attempts: 12,
        },
        &mut progress,
    )?;
    if a.json {
        super::print_json(&report)?;
    } else {
        let moved = report
            .refs
            .iter()
            .filter(|r| r.action != "up-to-date" && r.action != "ahead")
            .count();
        outln!(
            "synced with {remote}: {} ref(s) changed here, {} pushed ({} attempt(s))",
            moved,
            report.pushed.len(),
            report.attempts
        );
        for c in &report.conflicts {
            if c.kind == "evidence-chain" {
                eprintln!(
                    "{prog}: {}: not synced, nothing was merged or pushed: {}",
                    c.name, c.settle
                );
                continue;
            }
            eprintln!(
                "{prog}: conflict: {} — this clone and {remote} froze different contents after {}:",
                c.name,
                c.shared_version.as_deref().unwrap_or("nothing shared")
            );
            for v in &c.local {
                eprintln!(
                    "  here:   {} commit {} contract.json {}",
                    v.version, v.commit, v.digest
                );
            }
            for v in &c.remote {
                eprintln!(
                    "  {remote}: {} commit {} contract.json {}",
                    v.version, v.commit, v.digest
                );
            }
            eprintln!("  nothing was merged or deleted. To settle, keep {remote}'s and bump yours on top of it:");
            eprintln!("    {}", c.settle);
        }
        for r in &report.rejected {
            eprintln!(
                "{prog}: {}: transition {} ({}) is illegal in the merged order and was not applied (kept in history): {}",
                r.refname,
                r.transition,
                &r.commit[..12.min(r.commit.len())],
                r.reason
            );
        }
        for r in &report.renamed {
            eprintln!(
                "{prog}: spar series {}: two clones named a round {}; the later one is now {} (both kept)",
                r.series, r.round, r.renamed_to
            );
        }
        for n in &report.notes {
            eprintln!("{prog}: note: {n}");
        }
    }
    Ok(if report.needs_decision() {
        Outcome::Fail
    } else {
        Outcome::Ok
    })
}

fn cmd_doctor(a: DoctorArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let remote = a
        .remote
        .clone()
        .unwrap_or_else(|| crate::sync::default_remote(&store));
    let report = crate::sync::doctor::run(&store, &remote)?;
    if a.json {
        super::print_json(&report)?;
    } else if report.findings.is_empty() {
        outln!("no problems found");
    } else {
        for f in &report.findings {
            outln!("{}: {}", f.kind, f.what);
            outln!("  fix: {}", f.fix);
        }
    }
    Ok(if report.findings.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Fail
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn help_of(mut cmd: clap::Command, path: &[&str]) -> String {
        cmd.build();
        let mut c = &mut cmd;
        for name in path {
            c = c.find_subcommand_mut(name).unwrap();
        }
        c.render_long_help().to_string()
    }

    #[test]
    fn hot_commands_parse_and_help_as_the_full_one() {
        for path in [
            &["gate"][..],
            &["hook"],
            &["hook", "pre-push"],
            &["hook", "commit-msg"],
            &["hook", "pre-receive"],
            &["hook", "agent-stop"],
        ] {
            assert_eq!(
                help_of(HotCli::command(), path),
                help_of(RailsCli::command(), path),
                "help of {path:?}"
            );
        }
        let argv = |a: &[&str]| a.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        for line in [
            &["git-rails", "gate", "S", "--commit", "HEAD~1", "--json"][..],
            &["git-rails", "hook", "pre-push", "origin", "url"],
            &["git-rails", "hook", "commit-msg", "msg.txt"],
            &["git-rails", "hook", "agent-stop"],
        ] {
            let fast = format!("{:?}", parse_args(argv(line)).unwrap());
            let full = format!("{:?}", RailsCli::try_parse_from(argv(line)).unwrap());
            assert_eq!(fast, full, "{line:?}");
        }
        let err = HotCli::try_parse_from(argv(&["git-rails", "gate", "--bogus"])).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
    }
}
