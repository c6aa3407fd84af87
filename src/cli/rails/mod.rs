//! `git rails`: the command line.
//!
//! This file holds the clap definitions (one enum of commands and their arguments), the hot
//! parser for `gate` and `hook`, and the dispatch; each command is in a file of its own
//! (`contract`, `evidence`, `gate`, `hooks`, `pipeline`, `sync`, `trust`), which turns the
//! arguments into calls of the domain modules and their results into text.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use serde_json::json;

use crate::contract::{generate, junit, schema, validate};
use crate::error::{Context, Error, Outcome, Result};
use crate::evidence::Transition;
use crate::store::{self, Store};

mod contract;
mod evidence;
mod gate;
mod hooks;
mod pipeline;
mod sync;
#[cfg(test)]
mod tests;
mod trust;

use self::contract::*;
use self::evidence::*;
use self::gate::*;
use self::hooks::*;
use self::pipeline::*;
use self::sync::*;
use self::trust::*;
pub use sync::cmd_sync;

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
    fn options(&self) -> crate::hooks::Options {
        crate::hooks::Options {
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
    ///
    /// Pushes of record refs (refs/rails/*, refs/spar/*, refs/notes/*) are never gated, but
    /// they leave only as a guarded server would take them: an evidence chain that does not
    /// replay, or a spar series whose history replaces a completed reviewer's result or whose
    /// gate facts its records do not back, is refused naming the commit.
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
    /// Read the signing policy (.rails/policy.toml) from this commit: in CI, the pull
    /// request's base, which the change under review cannot edit (default: HEAD)
    #[arg(long, value_name = "REV")]
    pub policy_from: Option<String>,
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
    /// Sign the version's commit as `git commit -S` signs one (also when commit.gpgSign is
    /// true): a signing policy counts a sprint only when an allowed planner signed it
    #[arg(long)]
    pub sign: bool,
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
        // Served by `rails-spar-extras` (crate::extras says why), with the same arguments.
        RailsCommand::Mcp(_) => {
            match crate::extras::exec_mcp(std::env::args_os().skip(1).collect())? {}
        }
    }
}

/// An exit code chosen by a hook.
fn exit_with(code: u8) -> Outcome {
    match code {
        0 => Outcome::Ok,
        2 => Outcome::Blocked,
        c => Outcome::Code(c),
    }
}
