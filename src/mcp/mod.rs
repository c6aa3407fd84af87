//! `git rails mcp`: one stdio MCP server (the official Rust SDK, `rmcp`) for coding agents that
//! call tools rather than shells. Every tool calls the library functions the CLI calls, so the
//! rules, locks and compare-and-swap updates are the same and nothing is written on a refusal.
//! A result carries the CLI's `--json` document as structured content plus a short text; a
//! refusal is a tool error with the CLI's words, its next step named as a tool call
//! ([`calls::rewrite`]). stdout belongs to the protocol: nothing else is printed there.

pub mod calls;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Content, Implementation, ServerCapabilities, ServerInfo};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::contract::{self, validate};
use crate::contract::{frozen_json, list_json, resolve_sprint};
use crate::error::{Error, Result};
use crate::evidence::{self, gate, Transition};
use crate::spar::{round, series};
use crate::store::{self, Store};

/// Serves MCP on stdin/stdout until the client closes stdin. With `repo`, works from that
/// repository instead of the current directory's. Each tool call is logged as one line on
/// stderr (and appended to `log` when given): the tool, its arguments, and how it ended.
pub fn serve(repo: Option<&std::path::Path>, log: Option<&std::path::Path>) -> Result<()> {
    if let Some(l) = log {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(l)
            .map_err(|e| Error::usage(format!("--log {}: {e}", l.display())))?;
        let _ = LOG.set(std::sync::Mutex::new(file));
    }
    if let Some(r) = repo {
        std::env::set_current_dir(r)
            .map_err(|e| Error::usage(format!("--repo {}: {e}", r.display())))?;
    }
    // Fail before the handshake when there is no repository to work from.
    Store::discover()?;
    // The time driver too: rmcp bounds its shutdown with a timeout when stdin closes.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::internal(format!("starting the MCP server: {e}")))?;
    rt.block_on(async {
        let service = Rails
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| Error::internal(format!("MCP handshake: {e}")))?;
        service
            .waiting()
            .await
            .map_err(|e| Error::internal(format!("MCP server: {e}")))?;
        Ok(())
    })
}

/// The server; it holds nothing, each call opens the repository afresh (as each CLI run does).
#[derive(Clone)]
pub struct Rails;

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct ContractsArgs {
    /// The sprint to show; without it, every sprint's newest frozen contract is listed
    pub sprint: Option<String>,
    /// With sprint: the contract version to show (default: the newest)
    pub version: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct ValidateArgs {
    /// The sprint whose frozen contract is validated
    pub sprint: String,
    /// The contract version (default: the newest)
    pub version: Option<String>,
    /// Validate the working draft instead of a frozen version
    #[serde(default)]
    pub draft: bool,
    /// Do not add the report to refs/notes/rails on HEAD
    #[serde(default)]
    pub no_note: bool,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Red,
    Green,
    Surface,
    Cleanup,
    Reopen,
    Recheck,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct EvidenceArgs {
    /// red (run the check, record only a failure), green (record only a pass, after red),
    /// surface (where a person sees it), cleanup (teardown receipt), reopen (archive the
    /// cycle), recheck (re-bind a surfaced criterion to the current tree)
    pub kind: Kind,
    /// The criterion: a check id of the newest frozen contract (the status tool lists them)
    pub criterion: String,
    /// The sprint (default: the one bound to the branch)
    pub sprint: Option<String>,
    /// What this record says (required for reopen; surface and cleanup need note or path)
    pub note: Option<String>,
    /// Where the result can be seen or the receipt is kept
    pub path: Option<String>,
    /// green only: what changed outside the tree when GREEN is on RED's tree
    pub because: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct SprintArgs {
    /// The sprint (default: the one bound to the branch)
    pub sprint: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct GateArgs {
    /// The sprint (default: the one bound to the branch)
    pub sprint: Option<String>,
    /// Judge staleness on this commit's tree (default: HEAD)
    pub commit: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct VerifyArgs {
    /// The sprint (default: the one bound to the branch)
    pub sprint: Option<String>,
    /// The commit judged (default: HEAD)
    pub commit: Option<String>,
    /// Run each proven check again in a clean temporary checkout
    #[serde(default)]
    pub rerun: bool,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct SparShowArgs {
    /// `<series>` or `<series>:<round>` (default: the branch's series)
    pub target: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct SparRecordArgs {
    /// The series
    pub series: String,
    /// The round, e.g. code-1
    pub round: String,
    /// The reviewer's name in that round
    pub reviewer: String,
    /// A file in the repository holding the reviewer's result (one JSON object)
    pub result: Option<String>,
    /// A native subagent's Claude Code transcript (JSONL) in the repository
    pub transcript: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct SparTriageArgs {
    pub series: String,
    pub round: String,
    /// The finding's id exactly as in the round's findings.json (`<reviewer>-F<n>`)
    pub finding: String,
    /// fixed, duplicate, rejected, deferred, answered or accepted
    pub disposition: String,
    /// duplicate: the finding it repeats
    pub of: Option<String>,
    /// rejected: why the finding is wrong
    pub evidence: Option<String>,
    /// deferred: where it is tracked
    pub to: Option<String>,
    /// fixed: what failed before the fix
    pub failed_before: Option<String>,
    /// fixed: what passes after it
    pub passed_after: Option<String>,
    /// fixed: the commit of the fix
    pub commit: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct SparGateArgs {
    /// The rounds to gate, `<series>:<round>`, every recorded round of the series included
    pub rounds: Vec<String>,
    /// The commit the change must still be at (the newest round's head)
    pub expect_head: Option<String>,
}

type Reply = std::result::Result<CallToolResult, ErrorData>;

/// A result: the document as structured content, and a short text for the model.
fn done(text: String, doc: Value) -> Reply {
    let mut r = CallToolResult::structured(doc);
    r.content = vec![Content::text(text)];
    Ok(r)
}

/// A refusal or failure as a tool error: the CLI's message and hint, next steps as tool calls.
fn refused(e: Error) -> Reply {
    let mut text = e.message.clone();
    if let Some(h) = &e.hint {
        text.push_str("\nhint: ");
        text.push_str(h);
    }
    Ok(CallToolResult::error(vec![Content::text(calls::rewrite(
        &text,
    ))]))
}

fn reply(r: Result<(String, Value)>) -> Reply {
    match r {
        Ok((t, v)) => done(t, v),
        Err(e) => refused(e),
    }
}

/// The file `--log` names, when it does.
static LOG: std::sync::OnceLock<std::sync::Mutex<std::fs::File>> = std::sync::OnceLock::new();

/// Runs one tool and logs the call: `git-rails mcp: evidence {"kind":"red",…} -> ok: RED …`
/// (or `-> refused: …`), the first line of the text the model gets. stderr is not part of the
/// protocol; clients keep it in their MCP logs.
fn logged<A: Serialize>(tool: &str, a: A, run: impl FnOnce(A) -> Result<(String, Value)>) -> Reply {
    let args = serde_json::to_string(&a).unwrap_or_default();
    let r = reply(run(a));
    if let Ok(res) = &r {
        let first = res
            .content
            .first()
            .and_then(|c| c.as_text())
            .and_then(|t| t.text.lines().next())
            .unwrap_or("")
            .to_string();
        let how = if res.is_error == Some(true) {
            "refused"
        } else {
            "ok"
        };
        let line = format!("git-rails mcp: {tool} {args} -> {how}: {first}\n");
        use std::io::Write;
        let _ = std::io::stderr().write_all(line.as_bytes());
        if let Some(f) = LOG.get() {
            let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
            let _ = f.write_all(line.as_bytes());
        }
    }
    r
}

fn to_value(v: &impl serde::Serialize) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::internal(format!("rendering JSON: {e}")))
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// A file named by a tool argument, which must be inside the repository's work tree.
fn inside(store: &Store, p: &str) -> Result<std::path::PathBuf> {
    let root = store.workdir()?;
    let path = root.join(p);
    let real = path
        .canonicalize()
        .map_err(|e| Error::refused(format!("{p}: {e}")))?;
    let root = root
        .canonicalize()
        .map_err(|e| Error::internal(format!("{}: {e}", root.display())))?;
    if !real.starts_with(&root) {
        return Err(Error::refused(format!(
            "{p} is outside the repository; the server reads only files inside it"
        )));
    }
    Ok(real)
}

fn missing_text(report: &gate::Report) -> String {
    let mut t = String::new();
    for m in &report.missing {
        t.push_str(&format!(
            "\n- {} {}: {}",
            m.criterion,
            m.reason,
            calls::rewrite(&m.command)
        ));
    }
    t
}

fn contracts(a: ContractsArgs) -> Result<(String, Value)> {
    let store = Store::discover()?;
    match a.sprint {
        None => {
            let all = contract::list(&store)?;
            let names: Vec<_> = all
                .iter()
                .map(|f| format!("{} {}", f.sprint, f.version))
                .collect();
            Ok((
                format!(
                    "{} frozen contract{}: {}",
                    all.len(),
                    if all.len() == 1 { "" } else { "s" },
                    names.join(", ")
                ),
                list_json(&all),
            ))
        }
        Some(s) => {
            let s = contract::SprintId::parse(&s)?;
            let f = contract::find(&store, &s, a.version.as_deref())?;
            let ids: Vec<_> = f
                .contract
                .dod
                .checks
                .iter()
                .map(|c| c.id.as_str())
                .collect();
            Ok((
                format!(
                    "contract {} {} frozen at {}; criteria: {}",
                    f.sprint,
                    f.version,
                    short(&f.commit.to_string()),
                    ids.join(", ")
                ),
                frozen_json(&f),
            ))
        }
    }
}

fn validate_tool(a: ValidateArgs) -> Result<(String, Value)> {
    let store = Store::discover()?;
    let sprint = contract::SprintId::parse(&a.sprint)?;
    let chosen = validate::Chosen::of(&store, &sprint, a.version.as_deref(), a.draft)?;
    let target = chosen.target(&sprint);
    let report = validate::run(&store, &target, &mut |_| {})?;
    if let (false, Some(head)) = (a.no_note, store.head_commit()?) {
        store.note_append(
            store::refs::NOTES_RAILS,
            head,
            &validate::note_text(&report),
        )?;
    }
    Ok((validate::verdict_line(&report), to_value(&report)?))
}

fn evidence_tool(a: EvidenceArgs) -> Result<(String, Value)> {
    let store = Store::discover()?;
    let sprint = resolve_sprint(&store, a.sprint)?;
    let t = match a.kind {
        Kind::Red => Transition::Red,
        Kind::Green => Transition::Green,
        Kind::Surface => Transition::Surface,
        Kind::Cleanup => Transition::Cleanup,
        Kind::Reopen => Transition::Reopen,
        Kind::Recheck => Transition::Recheck,
    };
    let note = a.note.as_deref().filter(|n| !n.trim().is_empty());
    let path = a.path.as_deref().filter(|p| !p.trim().is_empty());
    let because = evidence::checked_because(t, a.because.as_deref(), "because")?;
    let rec = evidence::transition(
        &store,
        &evidence::Request {
            sprint: &sprint,
            criterion: &a.criterion,
            transition: t,
            note,
            path,
            because,
        },
    )?;
    let what = rec
        .record
        .summary
        .as_deref()
        .map(|s| format!(": {s}"))
        .unwrap_or_default();
    let text = format!(
        "{} {sprint} {} recorded (evidence {}){what}; {} is now {}",
        t.as_str().to_uppercase(),
        a.criterion,
        short(&rec.commit),
        a.criterion,
        rec.status.as_str()
    );
    Ok((text, to_value(&rec)?))
}

fn status_tool(a: SprintArgs) -> Result<(String, Value)> {
    let store = Store::discover()?;
    let sprint = resolve_sprint(&store, a.sprint)?;
    let report = gate::evaluate(&store, &sprint, gate::Judged::commit(store.head_commit()?))?;
    let text = format!(
        "{}{}",
        gate::render_status(&report).trim_end(),
        missing_text(&report)
    );
    Ok((calls::rewrite(&text), to_value(&report)?))
}

fn gate_tool(a: GateArgs) -> Result<(String, Value)> {
    let could_not = "the verification gate could not run; completion remains blocked";
    let store = Store::discover().map_err(|e| e.context(could_not))?;
    let sprint = resolve_sprint(&store, a.sprint).map_err(|e| e.context(could_not))?;
    let commit = match &a.commit {
        Some(rev) => store
            .resolve_commit(rev)
            .map_err(|e| e.context(could_not))?,
        None => store.head_commit()?.ok_or_else(|| {
            Error::refused(format!("{could_not}: there is no commit to judge yet"))
                .hint("commit the work (`git add` and `git commit`), then call gate again")
        })?,
    };
    let report = gate::evaluate(&store, &sprint, gate::Judged::Commit(commit))
        .map_err(|e| e.context(could_not))?;
    let text = if report.done {
        format!(
            "gate passed: {} {} is done at {}",
            report.sprint,
            report.version,
            short(&commit.to_string())
        )
    } else {
        format!(
            "gate blocked: {} {} is not done at {}{}",
            report.sprint,
            report.version,
            short(&commit.to_string()),
            missing_text(&report)
        )
    };
    Ok((text, to_value(&report)?))
}

fn verify_tool(a: VerifyArgs) -> Result<(String, Value)> {
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
    let text = calls::rewrite(evidence::verify::render(&report).trim_end());
    Ok((text, to_value(&report)?))
}

fn spar_show(a: SparShowArgs) -> Result<(String, Value)> {
    let store = Store::discover()?;
    let (series_name, shown) = crate::spar::view::show_target(&store, a.target.as_deref())?;
    let doc = crate::spar::view::show_json(&store, &series_name, &shown)?;
    Ok((
        format!("series {series_name}: round {}", shown.join(", ")),
        doc,
    ))
}

fn spar_record(a: SparRecordArgs) -> Result<(String, Value)> {
    let store = Store::discover()?;
    let input = match (&a.result, &a.transcript) {
        (Some(f), None) => round::RecordInput::Result(inside(&store, f)?),
        (None, Some(f)) => round::RecordInput::Transcript(inside(&store, f)?),
        _ => return Err(Error::usage("give exactly one of result or transcript")),
    };
    let out = round::record_result(
        &store,
        &crate::spar::ids::SeriesId::new(&a.series)?,
        &crate::spar::ids::RoundName::named(&a.round),
        &a.reviewer,
        &input,
        &mut |_| {},
    )?;
    let text = format!(
        "{} {} {}: {} ({} findings)",
        a.series,
        a.round,
        a.reviewer,
        out.reviewer.status,
        out.findings.len()
    );
    Ok((
        text,
        json!({"reviewer": out.reviewer, "findings": out.findings}),
    ))
}

fn spar_triage(a: SparTriageArgs) -> Result<(String, Value)> {
    let store = Store::discover()?;
    // A disposition resting on the user's word is a decision only a person makes: an agent
    // that could file it here would put words in the user's mouth.
    let personal = crate::spar::vocab::Disposition::parse(&a.disposition)
        .is_some_and(crate::spar::vocab::Disposition::rests_on_users_word);
    if personal {
        return Err(Error::refused(format!(
            "{} rests on the user's word: only a person decides it, and this server does not record it",
            a.disposition
        ))
        .hint(format!(
            "ask the person to run, in their own terminal: git spar triage {} {} {} {} --user-quote \"<their words>\" --sign",
            a.series, a.round, a.finding, a.disposition
        )));
    }
    let req = series::TriageRequest {
        series: crate::spar::ids::SeriesId::new(&a.series)?,
        round: crate::spar::ids::RoundName::named(&a.round),
        finding: a.finding,
        disposition: a.disposition,
        of: a.of,
        evidence: a.evidence,
        to: a.to,
        user_quote: None,
        failed_before: a.failed_before,
        passed_after: a.passed_after,
        commit: a.commit,
        sign: false,
    };
    let entry = series::triage(&store, &req, &mut |_| {})?;
    Ok((
        format!(
            "{} {} {}: {}",
            req.series, req.round, req.finding, req.disposition
        ),
        entry,
    ))
}

fn spar_gate(a: SparGateArgs) -> Result<(String, Value)> {
    let store = Store::discover()?;
    let out = series::gate(
        &store,
        &series::GateRequest {
            rounds: series::gate_targets(&a.rounds)?,
            expect_head: a.expect_head,
            out: None,
            policy_from: None,
        },
    )?;
    let mut text = format!(
        "spar gate: {}",
        if out.passed { "passed" } else { "blocked" }
    );
    for r in &out.reasons {
        text.push('\n');
        text.push_str(r);
    }
    Ok((calls::rewrite(&text), out.document_json()))
}

#[tool_router]
impl Rails {
    #[tool(
        description = "List the frozen sprint contracts, or show one sprint's contract (its criteria) with sprint. The document of `git rails contract list --json` / `contract show --json`."
    )]
    async fn contracts(&self, Parameters(a): Parameters<ContractsArgs>) -> Reply {
        logged("contracts", a, contracts)
    }

    #[tool(
        description = "Validate a sprint's frozen contract (or its draft): run its checks and report PASS, FAIL or ABORT_PRECHECK. The rails validation report."
    )]
    async fn validate(&self, Parameters(a): Parameters<ValidateArgs>) -> Reply {
        logged("validate", a, validate_tool)
    }

    #[tool(
        description = "Record failing-first evidence for a criterion: red (the check must fail), green (it must pass, after red), surface, cleanup, reopen, recheck. Refused out of order, naming the next call; nothing is written on a refusal."
    )]
    async fn evidence(&self, Parameters(a): Parameters<EvidenceArgs>) -> Reply {
        logged("evidence", a, evidence_tool)
    }

    #[tool(
        description = "Every criterion of the sprint, its state and the next step (the rails-status/v1 document)."
    )]
    async fn status(&self, Parameters(a): Parameters<SprintArgs>) -> Reply {
        logged("status", a, status_tool)
    }

    #[tool(
        description = "Is the sprint done at the commit? passed, or blocked with each missing step as a tool call (the rails-status/v1 document)."
    )]
    async fn gate(&self, Parameters(a): Parameters<GateArgs>) -> Reply {
        logged("gate", a, gate_tool)
    }

    #[tool(
        description = "Replay the evidence from the objects alone and tell every criterion; with rerun, run each proven check again in a clean checkout (the rails-verify/v1 document)."
    )]
    async fn verify(&self, Parameters(a): Parameters<VerifyArgs>) -> Reply {
        logged("verify", a, verify_tool)
    }

    #[tool(description = "Show a spar series or one round: the round, its findings and triage.")]
    async fn spar_show(&self, Parameters(a): Parameters<SparShowArgs>) -> Reply {
        logged("spar_show", a, spar_show)
    }

    #[tool(
        description = "Record a native reviewer's result (or its Claude Code transcript) into a spar round."
    )]
    async fn spar_record(&self, Parameters(a): Parameters<SparRecordArgs>) -> Reply {
        logged("spar_record", a, spar_record)
    }

    #[tool(
        description = "Triage one finding of a spar round: fixed, duplicate or rejected. Accepted, deferred and answered rest on the user's word: only a person records them, signed, in their own terminal (`git spar triage … --user-quote … --sign`); waivers too (`git spar waive`)."
    )]
    async fn spar_triage(&self, Parameters(a): Parameters<SparTriageArgs>) -> Reply {
        logged("spar_triage", a, spar_triage)
    }

    #[tool(
        description = "The spar review gate over rounds (`<series>:<round>`): passed or blocked, with reasons (the review-gate/v1 document)."
    )]
    async fn spar_gate(&self, Parameters(a): Parameters<SparGateArgs>) -> Reply {
        logged("spar_gate", a, spar_gate)
    }
}

#[tool_handler]
impl ServerHandler for Rails {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rails", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Failing-first evidence for the sprint bound to this branch: call status to see \
                 the criteria, evidence with kind red before implementing, green after, then \
                 surface and cleanup; gate tells whether the sprint is done.",
            )
    }
}
