//! One round: every input checked before anything starts or is written, the copies and the
//! packet in a workspace, the reviewers run in parallel, their results held to G1–G6, the
//! findings located, linked and classified, and the round recorded in git.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::{Context, Error, Result};
use crate::spar::classify::{self, FindingFacts};
use crate::spar::config::{self, Config, Preset, SelectedReviewer};
use crate::spar::glob::CheckPaths;
use crate::spar::ids::{RoundName, SeriesId};
use crate::spar::location::{Copy, Document, EntryKind, Resolver};
use crate::spar::preset;
use crate::spar::progress;
use crate::spar::record::{self as records, Finding, ReviewerRecord, Round};
use crate::spar::result::{self, ResultContext};
use crate::spar::summary;
use crate::spar::vocab::{Angle, Disposition, LinkKind, Stage, Status, Word};
use crate::spar::{now, sha256_hex};
use crate::store::{self, refs, ObjectId, Store};

mod execute;
mod findings;
mod input;
mod packet;
mod record;
mod secrets;

use self::execute::*;
pub use self::findings::*;
pub use self::input::*;
use self::packet::*;
pub use self::record::*;

/// What `git spar run` was asked.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    pub base: String,
    pub head: Option<String>,
    /// `--stage`, read by [`Stage::from_option`]; `code` when not given.
    pub stage: Option<Stage>,
    /// `--series`; the current branch's series when not given.
    pub series: Option<SeriesId>,
    pub reviewers: Option<String>,
    pub models: Vec<String>,
    pub efforts: Vec<String>,
    pub criteria: Option<PathBuf>,
    pub rules: Vec<PathBuf>,
    pub subject: Option<PathBuf>,
    pub check_paths: Vec<String>,
    pub dry_run: bool,
    pub out: Option<PathBuf>,
    /// The user's decisions, paired and checked by [`pair_decisions`] (G35).
    pub decisions: Vec<Decision>,
    /// The standpoints, read by [`parse_standpoint`]; their names are checked by [`run`].
    pub standpoints: Vec<Standpoint>,
}

/// What a run did.
pub struct RunOutcome {
    pub round: Round,
    pub findings: Vec<Finding>,
    pub workspace: PathBuf,
    pub kept_workspace: bool,
    pub commit: Option<ObjectId>,
}

/// Runs a round. Every input is checked before any reviewer starts or anything is written.
pub fn run(
    store: &Store,
    req: &RunRequest,
    progress: &mut dyn progress::Reporter,
) -> Result<RunOutcome> {
    let root = store.workdir()?.to_path_buf();
    // What the person passes in is free text: its secrets are replaced before anything is
    // written or given to a reviewer (`secrets`).
    let outside = crate::redact::Redactor::from_env();
    let mut redacted = 0;
    let mut clean_req = req.clone();
    for d in &mut clean_req.decisions {
        redacted += outside.in_place(&mut d.decision) + outside.in_place(&mut d.quote);
    }
    for sp in &mut clean_req.standpoints {
        redacted += outside.in_place(&mut sp.text);
    }
    let req = &clean_req;
    // Inputs first (G14–G27), in the order a person reads the command line.
    let stage = req.stage.unwrap_or(Stage::Code);
    let series = match &req.series {
        Some(s) => s.clone(),
        None => default_series(store)?,
    };
    let mut cfg = Config::load(&config::Env::from_process(root.clone()))?;
    cfg.add_check_paths(&req.check_paths)?;
    let selected = config::select(&cfg, req.reviewers.as_deref(), &req.models, &req.efforts)?;
    check_standpoints(&req.standpoints, &cfg, &selected)?;
    let with_standpoints = !req.standpoints.is_empty();
    let base = store
        .resolve_commit(&req.base)
        .map_err(|e| e.context("--base"))?;
    let head_rev = req.head.clone().unwrap_or_else(|| "HEAD".into());
    let head = store
        .resolve_commit(&head_rev)
        .map_err(|e| e.context("--head"))?;
    // Documents of the repository come from the head commit's tree; one from outside it only
    // because it is named here, on the command line, and redacted (`read_document`).
    let docs = DocumentSource {
        store,
        head,
        root: &root,
        redactor: &outside,
    };
    let criteria = match &req.criteria {
        Some(p) => Some(docs.read(p, "--criteria", true, &mut redacted)?),
        None => None,
    };
    let subject = match &req.subject {
        Some(p) => Some(docs.read(p, "--subject", true, &mut redacted)?),
        None => None,
    };
    let mut rules: Vec<(Document, String)> = Vec::new();
    for r in &cfg.rules {
        let d = docs.read(&root.join(&r.value.name), "rules", false, &mut redacted)?;
        rules.push((d.doc, d.contents));
    }
    for p in &req.rules {
        let d = docs.read(p, "--rules", true, &mut redacted)?;
        rules.push((d.doc, d.contents));
    }
    let out_dir = match &req.out {
        Some(o) => Some(check_out_dir(o)?),
        None => None,
    };
    let check_paths = CheckPaths::new(cfg.check_paths.iter().map(|c| c.value.clone()))
        .map_err(|e| Error::refused(e.to_string()))?;
    let angles: Vec<Angle> = cfg.angles.value.clone();

    // The series lock: from here to the record (G33).
    let _lock = records::lock_series(store, &series, &mut |l| progress.line(l))?;
    let names = records::round_names(store, &series)?;
    // Caps (spec "Waive, extend, caps"): decided under the lock, before anything is written.
    crate::spar::series::check_cap(
        store,
        &cfg,
        &series,
        &names,
        &crate::spar::series::RunProbe {
            stage,
            base,
            head,
            dry_run: req.dry_run,
            reviewers: selected.iter().map(|s| s.name()).collect(),
            config_digest: cfg.digest(),
        },
    )?;
    let n = names
        .iter()
        .filter(|r| RoundName::stage_of(r) == Some(stage.as_str()))
        .count()
        + 1;
    let round_name = RoundName::numbered(stage, n);

    let workspace = match &out_dir {
        Some(d) => d.clone(),
        None => workspace_of(store, &series, &round_name),
    };
    if workspace.exists() {
        make_writable_and_remove(&workspace).ctx(format!("clearing {}", workspace.display()))?;
    }
    std::fs::create_dir_all(&workspace).ctx(format!("creating {}", workspace.display()))?;
    store.extract_tree(head, &workspace.join("head"))?;
    store.extract_tree(base, &workspace.join("base"))?;

    let schema = result::schema_json(&angles, with_standpoints);
    let schema_bytes = records::pretty(&schema);
    let packet = render_packet(
        store,
        &PacketInput {
            series: &series,
            stage: stage.as_str(),
            base,
            head,
            angles: &angles,
            check_paths: &cfg
                .check_paths
                .iter()
                .map(|c| c.value.clone())
                .collect::<Vec<_>>(),
            rules: &rules,
            criteria: criteria.as_ref().map(|c| (&c.doc, c.contents.as_str())),
            subject: subject.as_ref().map(|c| (&c.doc, c.contents.as_str())),
            decisions: &req.decisions,
            standpoints: &req.standpoints,
        },
    )?;
    let packet_sha = sha256_hex(packet.as_bytes());
    store::atomic_write(&workspace.join("packet.md"), packet.as_bytes())?;
    store::atomic_write(&workspace.join("schema.json"), &schema_bytes)?;
    // Each reviewer's input: recorded as `<reviewer>/input.md` in rounds with standpoints.
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    // What each reviewer is given, in the order of `selected`.
    let mut given: Vec<String> = Vec::new();
    for sel in &selected {
        let dir = workspace.join(sel.name());
        std::fs::create_dir_all(&dir).ctx(format!("creating {}", dir.display()))?;
        let file = if sel.preset() == Preset::Native {
            "prompt.md"
        } else {
            "input.md"
        };
        let mut input = reviewer_input(&packet, sel.name(), &req.standpoints);
        if sel.preset() == Preset::Agy {
            // agy is given the command guidance and the instructions with -p; a large packet
            // goes to PACKET.md and -p says where it is.
            let (text, packet_file) = preset::agy::prompt(&packet, &input);
            if let Some(p) = packet_file {
                store::atomic_write(&workspace.join(preset::agy::PACKET_FILE), p.as_bytes())?;
            }
            input = text;
        }
        store::atomic_write(&dir.join(file), input.as_bytes())?;
        if with_standpoints {
            inputs.push((
                format!("{}/input.md", sel.name()),
                input.clone().into_bytes(),
            ));
        }
        given.push(input);
    }

    let started_at = now();
    let head_hex = head.to_string();
    let runs: Vec<ReviewerRun> = if req.dry_run {
        selected
            .iter()
            .map(|s| ReviewerRun {
                record: base_record(s, Status::Pending, "dry run: not started".into()),
                stdout: String::new(),
                stderr: String::new(),
                result: None,
            })
            .collect()
    } else {
        for s in &selected {
            progress.line(&format!(
                "spar: {round_name}: {} ({}) started",
                s.name(),
                s.preset().as_str()
            ));
        }
        let results = run_parallel(
            &selected,
            &given,
            &workspace,
            &round_name,
            |s| Holding {
                head: &head_hex,
                angles: &angles,
                round_has_standpoints: with_standpoints,
                standpoint: standpoint_of(&req.standpoints, s.name()),
                rules: &rules,
            },
            progress,
        );
        for r in &results {
            progress.line(&format!(
                "spar: {round_name}: {} {}{}",
                r.record.name,
                r.record.status,
                if r.record.reason.is_empty() {
                    String::new()
                } else {
                    format!(": {}", r.record.reason)
                }
            ));
        }
        results
    };

    let ctx = RoundContext::build(
        store,
        base,
        head,
        check_paths,
        &rules,
        criteria
            .as_ref()
            .map(|c| (c.doc.clone(), c.contents.clone()))
            .as_ref(),
        subject.as_ref().map(|s| &s.doc),
    )?;
    let mut findings = Vec::new();
    for r in &runs {
        if let (Some(res), true) = (
            &r.result,
            r.record.status == Status::Completed || r.record.status == Status::Failed,
        ) {
            findings.extend(ctx.findings(store, &r.record.name, res));
        }
    }
    // Located and classified on the reviewers' exact words; redacted before anything is written.
    let words = secrets::redactor(store, base, head);
    redacted += secrets::findings(&words, &mut findings);
    let criteria_ids: Vec<String> = ctx
        .resolver
        .criteria_ids()
        .map(|s| s.iter().cloned().collect())
        .unwrap_or_default();
    let mut round = Round {
        schema: records::ROUND_SCHEMA.into(),
        series: series.to_string(),
        round: round_name.to_string(),
        stage: stage.into(),
        base: base.to_string(),
        head: head.to_string(),
        packet_sha256: packet_sha,
        config: json!({
            "digest": cfg.digest(),
            "files": cfg.files.iter().map(|f| json!({"path": f.path.display().to_string(), "sha256": f.sha256})).collect::<Vec<_>>(),
            "check_paths": cfg.check_paths.iter().map(|c| c.value.clone()).collect::<Vec<_>>(),
            "angles": angles.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
        }),
        reviewers: runs.iter().map(|r| r.record.clone()).collect(),
        decisions: req
            .decisions
            .iter()
            .map(|d| json!({"decision": d.decision, "quote": d.quote}))
            .collect(),
        standpoints: req
            .standpoints
            .iter()
            .map(|s| json!({"reviewer": s.reviewer, "text": s.text}))
            .collect(),
        standpoints_uncovered: Vec::new(),
        links: json!({
            "rules": rules.iter().map(|(d, _)| doc_facts(d)).collect::<Vec<_>>(),
            "criteria_ids": criteria_ids,
            "criteria": criteria.as_ref().map(|c| doc_facts(&c.doc)),
            "subject": subject.as_ref().map(|c| doc_facts(&c.doc)),
        }),
        documents: json!({
            "criteria": criteria.as_ref().map(|c| c.doc.name().to_string()),
            "criteria_digest": criteria.as_ref().map(|c| sha256_hex(c.contents.as_bytes())),
            "subject": subject.as_ref().map(|c| c.doc.name().to_string()),
        }),
        started_at,
        finished_at: Some(now()),
        dry_run: req.dry_run,
        warnings: Vec::new(),
    };
    let mut extra = vec![
        ("packet.md".to_string(), packet.clone().into_bytes()),
        ("schema.json".to_string(), schema_bytes.clone()),
    ];
    extra.extend(inputs);
    for r in &runs {
        if !r.stdout.is_empty() {
            extra.push((
                format!("{}/output.txt", r.record.name),
                r.stdout.clone().into_bytes(),
            ));
        }
        if !r.stderr.is_empty() {
            extra.push((
                format!("{}/stderr.txt", r.record.name),
                r.stderr.clone().into_bytes(),
            ));
        }
    }
    redacted += secrets::transcripts(&words, &mut extra);
    redacted += secrets::reasons(&words, &mut round);
    secrets::count(&mut round, redacted);
    let (commit, keep) = write_ending(
        store,
        &mut round,
        Ending {
            series: &series,
            round_name: &round_name,
            findings: &findings,
            ledger: records::jsonl(&ledger_lines(&findings)),
            extra,
            // Exported as files too when --out was given.
            export: out_dir.is_some(),
            subject: format!(
                "spar {series} {round_name}: {}",
                if req.dry_run { "dry run" } else { "run" }
            ),
            trailers: vec![
                ("Spar-Stage", stage.to_string()),
                ("Spar-Head", head.to_string()),
            ],
            written: "round",
            note_on: (!req.dry_run).then_some(head),
            workspace: &workspace,
            keep: out_dir.is_some(),
            dry_run: req.dry_run,
        },
    )?;
    Ok(RunOutcome {
        round,
        findings,
        workspace,
        kept_workspace: keep,
        commit: Some(commit),
    })
}

/// The standpoint given to `reviewer`, if any.
pub(super) fn standpoint_of<'a>(standpoints: &'a [Standpoint], reviewer: &str) -> Option<&'a str> {
    standpoints
        .iter()
        .find(|s| s.reviewer == reviewer)
        .map(|s| s.text.as_str())
}

/// The standpoints recorded in a round (`[{reviewer, text}]`).
pub(super) fn recorded_standpoints(round: &Round) -> Vec<Standpoint> {
    round
        .standpoints
        .iter()
        .filter_map(|v| {
            Some(Standpoint {
                reviewer: v.get("reviewer")?.as_str()?.to_string(),
                text: v.get("text")?.as_str()?.to_string(),
            })
        })
        .collect()
}

/// Brings the standpoint fields of a round in line with its standpoints ("관점 보고와 기록"):
/// in a round with standpoints every reviewer has `standpoint` and `standpoint_report` (text and
/// report, or null) and `standpoints_uncovered` lists the reviewers of standpoints that no
/// completed reviewer covered; in a round without, none of these is written.
pub(super) fn settle_standpoints(round: &mut Round) {
    let standpoints = recorded_standpoints(round);
    if standpoints.is_empty() {
        for r in &mut round.reviewers {
            r.standpoint = None;
            r.standpoint_report = None;
        }
        round.standpoints_uncovered = Vec::new();
        return;
    }
    for r in &mut round.reviewers {
        r.standpoint = Some(standpoint_of(&standpoints, &r.name).map(str::to_string));
        if r.standpoint_report.is_none() {
            r.standpoint_report = Some(Value::Null);
        }
    }
    round.standpoints_uncovered = standpoints
        .iter()
        .filter(|s| {
            !round
                .reviewers
                .iter()
                .any(|r| r.name == s.reviewer && r.status == Status::Completed)
        })
        .map(|s| s.reviewer.clone())
        .collect();
}

/// The copies are read-only; make them writable again so the folder can go.
pub(super) fn make_writable_and_remove(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fn walk(d: &Path) -> std::io::Result<()> {
        for e in std::fs::read_dir(d)? {
            let e = e?;
            let p = e.path();
            let ft = e.file_type()?;
            if ft.is_dir() {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
                walk(&p)?;
            }
        }
        Ok(())
    }
    walk(dir)?;
    std::fs::remove_dir_all(dir)
}

/// How a write of a round ends, for a run and for a recorded result alike.
pub(super) struct Ending<'a> {
    /// Where the round is written (as asked, whatever its `round.json` says).
    pub(super) series: &'a SeriesId,
    pub(super) round_name: &'a RoundName,
    /// The round's findings, all of them (`findings.json`).
    pub(super) findings: &'a [Finding],
    /// The whole `ledger.jsonl`.
    pub(super) ledger: Vec<u8>,
    /// Files beside `round.json`, `findings.json`, `ledger.jsonl` and `summary.md`.
    pub(super) extra: Vec<(String, Vec<u8>)>,
    /// Whether every file is written into the workspace too (`run --out`).
    pub(super) export: bool,
    pub(super) subject: String,
    pub(super) trailers: Vec<(&'static str, String)>,
    /// What was written, for the message when the series moved meanwhile.
    pub(super) written: &'static str,
    /// The commit whose `refs/notes/spar` note gets the summary, if any.
    pub(super) note_on: Option<ObjectId>,
    pub(super) workspace: &'a Path,
    /// Whether the workspace is kept whatever the reviewers' state (`run --out`).
    pub(super) keep: bool,
    /// A dry run's pending reviewers never run, so they keep no workspace.
    pub(super) dry_run: bool,
}

/// Settles the standpoints, writes the round's files as one commit on the series, appends the
/// summary to the head's note, and removes the workspace unless it is kept: by `keep`, or for a
/// reviewer still pending outside a dry run. Returns the commit and whether the workspace was
/// kept.
pub(super) fn write_ending(
    store: &Store,
    round: &mut Round,
    e: Ending<'_>,
) -> Result<(ObjectId, bool)> {
    settle_standpoints(round);
    let (series, round_name) = (e.series, e.round_name);
    let summary_md = summary::render(round, e.findings);
    let mut files = vec![
        ("round.json".to_string(), records::pretty(round)),
        ("findings.json".to_string(), records::pretty(&e.findings)),
        ("ledger.jsonl".to_string(), e.ledger),
        ("summary.md".to_string(), summary_md.clone().into_bytes()),
    ];
    files.extend(e.extra);
    if e.export {
        for (name, bytes) in &files {
            store::atomic_write(&e.workspace.join(name), bytes)?;
        }
    }
    let tip = records::series_tip(store, series)?;
    let commit = records::write_round(
        store,
        series,
        round_name,
        tip,
        files,
        &e.subject,
        &e.trailers,
    )?
    .ok_or_else(|| {
        Error::internal(format!(
            "{} moved while the {} was written",
            records::series_ref(series),
            e.written
        ))
    })?;
    if let Some(head) = e.note_on {
        store.note_append(refs::NOTES_SPAR, head, &summary_md)?;
    }
    let pending = round.reviewers.iter().any(|r| r.status == Status::Pending);
    let keep = e.keep || (pending && !e.dry_run);
    if !keep && e.workspace.exists() {
        let _ = make_writable_and_remove(e.workspace);
    }
    Ok((commit, keep))
}

/// Where a round's workspace is when `run --out` did not name one.
pub(super) fn workspace_of(store: &Store, series: &str, round: &str) -> PathBuf {
    store
        .common_dir()
        .join("spar/workspaces")
        .join(series)
        .join(round)
}
