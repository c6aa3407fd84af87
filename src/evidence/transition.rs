//! Carrying out one transition: under the sprint's lock, checks the table, runs the check when
//! the transition needs an observation (with the contract's prerequisites and the files it
//! froze), and appends one commit to the evidence chain by compare-and-swap.
//!
//! Kept apart from the table ([`super::rules`]) because this is the only part that runs
//! anything or writes: replaying a recorded transition never comes here.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::rules::{apply, check_allowed, record_stem, unchanged_green, Request, Transition};
use super::state::{Criterion, CriterionStatus, Proof, Record};
use super::{base, chain, red, subject};
use super::{evidence_ref, q, STATE_FILE, TREES_DIR};
use crate::contract::checks::{self, Status as CheckStatus};
use crate::contract::schema::Check;
use crate::contract::{self, Frozen};
use crate::error::{Error, Result};
use crate::store::{self, ObjectId, Store};

/// What a transition recorded.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Recorded {
    pub sprint: String,
    pub criterion: String,
    pub transition: String,
    pub status: CriterionStatus,
    pub record: Record,
    pub commit: String,
    pub contract_version: String,
}

/// Runs the contract's prerequisites; a missing one means a failure now would not be the
/// criterion failing.
fn prerequisites_hold(frozen: &Frozen, root: &std::path::Path) -> Result<()> {
    for p in &frozen.contract.environment_prerequisites {
        let Ok(spec) = p.typed_spec() else { continue };
        let o = checks::run_prerequisite(&spec, root);
        if o.status != CheckStatus::Pass {
            return Err(Error::refused(format!(
                "prerequisite {} ({}) is missing: {}. A failure now would not be the criterion failing, so nothing was recorded.",
                p.name,
                p.check.as_str(),
                o.summary
            ))
            .hint(format!(
                "provide it ({}) and check with `git rails contract validate {}`",
                p.reason, frozen.sprint
            )));
        }
    }
    Ok(())
}

/// How many untracked paths a record lists by name at most.
const UNTRACKED_LISTED: usize = 200;

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

/// Carries out one transition: checks the table, runs the check when the transition needs an
/// observation, and appends one commit to the evidence chain.
pub fn transition(store: &Store, req: &Request<'_>) -> Result<Recorded> {
    let sprint = req.sprint;
    let id = req.criterion;
    let root = store.workdir()?.to_path_buf();
    if let Some(p) = req.path {
        if let Some(why) = contract::confine::problem(&root, p) {
            return Err(Error::refused(format!(
                "--path {why}; a record names where in the repository a person sees the result"
            ))
            .hint(format!(
                "commit the file (a screenshot, a report) into the repository and give its path from the top, or say where with --note: `git rails evidence {} {sprint} {id} --note \"<where>\"`",
                req.transition.as_str()
            )));
        }
    }
    // What a person passes in is free text: secrets in it are replaced before it is written.
    let redactor = crate::redact::Redactor::from_env();
    let note = req.note.map(|n| redactor.text(n));
    let because = req.because.map(|b| redactor.text(b));
    let _lock = store.lock(&store::LockName::evidence(sprint), || {})?;
    let frozen = contract::require_newest(store, sprint)?;
    let check = frozen.contract.check(id).cloned().ok_or_else(|| {
        let ids: Vec<&str> = frozen
            .contract
            .dod
            .checks
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        Error::refused(format!(
            "{sprint} {} has no criterion {}; its criteria are: {}",
            frozen.version,
            q(id),
            ids.join(", ")
        ))
        .hint(format!("see `git rails status {sprint}`"))
    })?;

    // Re-read under the lock, and retry if another clone's writer moved the ref anyway.
    for _ in 0..20 {
        let derived = chain::derive(store, sprint)?;
        if let Some(p) = &derived.problem {
            return Err(p.refusal(sprint));
        }
        let (mut state, tip) = (derived.state, derived.tip);
        let proof = Proof::of(&check);
        let criterion = state
            .criteria
            .entry(id.to_string())
            .or_insert_with(|| Criterion::new(proof))
            .clone();
        check_allowed(req, &criterion, &check)?;
        let mut c = criterion;
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        let mut record = Record {
            transition: req.transition.as_str().to_string(),
            id: None,
            at: now(),
            head: store.head_commit()?.map(|h| h.to_string()),
            tree: None,
            base: None,
            dirty: None,
            check_status: None,
            summary: None,
            exit_code: None,
            duration_ms: None,
            note: note.as_ref().map(|n| n.text.clone()),
            path: req.path.map(str::to_string),
            contract_version: frozen.version.clone(),
            evidence: Value::Null,
            because: None,
            untracked: Vec::new(),
        };

        let mut captured_log = None;
        let runs_check = matches!(
            req.transition,
            Transition::Red | Transition::Green | Transition::Recheck
        ) || (req.transition == Transition::Surface && c.proof == Proof::Review);
        if runs_check {
            prerequisites_hold(&frozen, &root)?;
            let spec = check
                .typed_spec()
                .map_err(|p| Error::refused(format!("the check's spec is broken: {p}")))?;
            let (tree, dirty) = store.worktree_tree()?;
            let reads = frozen_reads(store, &frozen, &check, &spec, req.transition, tree)?;
            let mut outcome = checks::run_check_reading(&spec, &root, reads.reads());
            if let Some(note) = &reads.uncommitted {
                outcome.summary = format!("{}; {note}", outcome.summary);
            }
            record.tree = Some(tree.to_string());
            record.dirty = Some(dirty);
            record.check_status = Some(outcome.status);
            record.summary = Some(outcome.summary.clone());
            record.exit_code = outcome.evidence.get("exitCode").and_then(Value::as_i64);
            record.duration_ms = Some(outcome.duration_ms);
            let mut ev = outcome.evidence.clone();
            let mut log = String::new();
            if let Value::Object(m) = &mut ev {
                for (key, name) in [("stdoutTail", "stdout"), ("stderrTail", "stderr")] {
                    if let Some(Value::String(t)) = m.remove(key) {
                        if !t.is_empty() {
                            log.push_str(&format!("--- {name} (tail) ---\n{t}"));
                            if !t.ends_with('\n') {
                                log.push('\n');
                            }
                        }
                    }
                }
            }
            record.evidence = ev;
            refuse_outcome(req, &spec, &outcome)?;
            // What a re-run rebuilds the RED from (checked once the failure is known to be one,
            // so that "already passes" is said first); the runtime kinds judge a running
            // service, are never re-run from a tree, and so need no base.
            if req.transition == Transition::Red && super::judges_tree(check.kind) {
                record.base = Some(base::reviewable(store, &frozen, id, tree)?.to_string());
            }
            if req.transition == Transition::Green {
                let hint = format!(
                    "change the tracked files (a new file counts once added: `git add <file>`), then run `git rails evidence green {sprint} {id}` again; if what changed is outside the tree (a service, a tool), say what: `git rails evidence green {sprint} {id} --because \"<what changed>\"`"
                );
                if let Some(e) = unchanged_green(id, &c, &check, &record, req.because.is_some()) {
                    return Err(e.hint(hint));
                }
                if req.because.is_none() {
                    if let Some(e) = uncounted_change(store, id, &c, &check, tree)? {
                        return Err(e.hint(hint));
                    }
                }
                record.because = because.as_ref().map(|b| b.text.clone());
            }
            record.untracked = store.untracked_paths(UNTRACKED_LISTED)?;
            // Written even when empty, so a re-capture never sits beside an older run's log.
            captured_log = Some(log);
        }

        // The record's own file, and its blob id as its short name.
        let stem = record_stem(&c, id, req.transition);
        if let Some(log) = captured_log {
            files.push((format!("{stem}.log"), log.into_bytes()));
        }
        let file = format!("{stem}.json");
        let mut bytes = serde_json::to_vec_pretty(&record)
            .map_err(|e| Error::internal(format!("rendering the record: {e}")))?;
        bytes.push(b'\n');
        let blob = store.blob_id(&bytes)?;
        record.id = Some(blob.to_string());
        files.push((file, bytes));

        apply(&mut c, req.transition, &check, record.clone());
        let status = c.status;
        state.criteria.insert(id.to_string(), c);
        let mut state_bytes = serde_json::to_vec_pretty(&state)
            .map_err(|e| Error::internal(format!("rendering the state: {e}")))?;
        state_bytes.push(b'\n');
        files.push((STATE_FILE.to_string(), state_bytes));

        let subject = format!("evidence {sprint} {} {id}", req.transition.as_str());
        let mut body = record.summary.clone().unwrap_or_default();
        if let Some(n) = &record.note {
            body.push_str(&format!("\n{n}"));
        }
        let msg = store::message(
            &subject,
            &body,
            &[
                ("Rails-Sprint", sprint.to_string()),
                (
                    "Rails-Transition",
                    format!("{} {id}", req.transition.as_str()),
                ),
                ("Rails-Contract-Version", frozen.version.clone()),
                ("Rails-Status", status.as_str().to_string()),
            ],
        );
        // The tree this record observed travels with the evidence ref (`trees/<id>`): another
        // clone, CI or the server judges staleness against it after a fetch, even when it was
        // a work tree that was never committed.
        let observed: Vec<(String, ObjectId)> = record
            .tree
            .as_deref()
            .and_then(|t| ObjectId::from_hex(t.as_bytes()).ok())
            .map(|id| (format!("{TREES_DIR}/{id}"), id))
            .into_iter()
            .collect();
        if let Some(commit) =
            store.append_commit_with_trees(&evidence_ref(sprint), tip, &files, &observed, &msg)?
        {
            return Ok(Recorded {
                sprint: sprint.to_string(),
                criterion: id.to_string(),
                transition: req.transition.as_str().to_string(),
                status,
                record,
                commit: commit.to_string(),
                contract_version: frozen.version.clone(),
            });
        }
    }
    Err(Error::internal(format!(
        "{} kept moving while this transition was written; nothing was recorded, try again",
        evidence_ref(sprint)
    )))
}

/// What a check of the frozen contract reads from its records: the schema files frozen with
/// it, a checklist's frozen items and its committed text.
struct FrozenReads {
    files: Option<BTreeMap<String, Vec<u8>>>,
    items: Option<Vec<String>>,
    committed: Option<Vec<u8>>,
    /// Said with the outcome when the checklist has ticks that are not committed.
    uncommitted: Option<String>,
}

impl FrozenReads {
    fn reads(&self) -> checks::Reads<'_> {
        checks::Reads {
            files: self.files.as_ref(),
            checklist_items: self.items.as_deref(),
            checklist_text: self.committed.as_deref(),
        }
    }
}

fn frozen_reads(
    store: &Store,
    frozen: &Frozen,
    check: &Check,
    spec: &crate::contract::schema::CheckSpec,
    t: Transition,
    tree: ObjectId,
) -> Result<FrozenReads> {
    use crate::contract::pinned;
    let pins = pinned::load(store, frozen.tree)?;
    let (sprint, id) = (frozen.sprint.as_str(), check.id.as_str());
    // A test file of checkPaths that differs from what was frozen: the check would run
    // something else than what the contract froze.
    if matches!(t, Transition::Red | Transition::Green | Transition::Recheck) {
        let changed = pinned::changed_check_paths(store, &frozen.contract, pins.as_ref(), tree)?;
        if pinned::runs_any(check, &changed) {
            return Err(Error::refused(format!(
                "{} differ{} from what {} froze (checkPaths); a check that runs changed test files proves nothing, so nothing was recorded",
                changed.join(", "),
                if changed.len() == 1 { "s" } else { "" },
                frozen.version
            ))
            .hint(format!(
                "restore {} (`git checkout -- <path>`), or freeze the change as a new version (`git rails contract edit {sprint} --next`, then `git rails contract freeze {sprint} --bump`) and reopen the criteria that run it",
                if changed.len() == 1 { "it" } else { "them" }
            )));
        }
    }
    let files = match &pins {
        Some(p) => Some(pinned::schema_files(store, frozen.tree, p)?),
        None => None,
    };
    let items = pins.as_ref().and_then(|p| p.checklists.get(id).cloned());
    let mut committed = None;
    let mut uncommitted = None;
    if let crate::contract::schema::CheckSpec::ManualChecklist(c) = spec {
        // A checklist's ticks count once committed: the gate judges commits, and `.rails/`
        // never makes a proof stale, so a tick only in the work tree would prove nothing.
        let path = pinned::normalize(&c.path).unwrap_or_else(|| c.path.clone());
        let root = store.workdir()?;
        let on_disk = std::fs::read(root.join(&path)).ok();
        let in_head = match store.head_commit()? {
            Some(h) => store.read_file(h, &path)?,
            None => None,
        };
        match (&in_head, &on_disk) {
            (None, Some(_)) => {
                return Err(Error::refused(format!(
                    "the checklist {path} of {} is not committed; a checklist's ticks count only once they are committed",
                    q(id)
                ))
                .hint(format!(
                    "`git add {path} && git commit -m \"tick {id}\"`, then `git rails evidence surface {sprint} {id} --note \"<where>\"` again"
                )))
            }
            (Some(h), Some(d)) if h != d => {
                uncommitted = Some(format!(
                    "{path} has uncommitted changes, which do not count: ticks count only once committed (`git add {path} && git commit`)"
                ));
            }
            _ => {}
        }
        committed = in_head;
    }
    Ok(FrozenReads {
        files,
        items,
        committed,
        uncommitted,
    })
}

/// A GREEN whose tree differs from its RED's only in the tool folders (or, for a kind that
/// reads one file, outside the criterion's declared scope): nothing that can have made it pass
/// changed. The same words as a GREEN on the RED's very tree.
fn uncounted_change(
    store: &Store,
    id: &str,
    c: &Criterion,
    check: &Check,
    green_tree: ObjectId,
) -> Result<Option<Error>> {
    if !super::judges_tree(check.kind) {
        return Ok(None);
    }
    let Some(red_tree) = c
        .red
        .as_ref()
        .and_then(|r| r.tree.as_deref())
        .and_then(|t| ObjectId::from_hex(t.as_bytes()).ok())
        .filter(|t| store.has_object(*t))
    else {
        return Ok(None);
    };
    let changed = store.changed_paths(red_tree, green_tree)?;
    if changed.is_empty() || !subject::counted_changes(check, &changed)?.is_empty() {
        return Ok(None);
    }
    let shown: Vec<&str> = changed.iter().take(5).map(String::as_str).collect();
    let why = if changed.iter().all(|p| !subject::subject_path(p)) {
        format!(
            "the tool folders ({}), which never count",
            subject::TOOL_FOLDERS.join(", ")
        )
    } else {
        "paths outside the criterion's declared scope or in the tool folders, which never count"
            .to_string()
    };
    Ok(Some(Error::refused(format!(
        "GREEN of {} differs from its RED only in {}{} ({why}): no change that can make it pass, so this pass proves nothing changed.",
        q(id),
        shown.join(", "),
        if changed.len() > shown.len() { ", …" } else { "" },
    ))))
}

/// Refuses an observation that does not prove what the transition claims.
fn refuse_outcome(
    req: &Request<'_>,
    spec: &crate::contract::schema::CheckSpec,
    o: &checks::Outcome,
) -> Result<()> {
    let (sprint, id) = (req.sprint, req.criterion);
    if o.status == CheckStatus::Error {
        return Err(Error::refused(format!(
            "the check of {} could not run ({}): a failure that is not the criterion failing does not count, so nothing was recorded.",
            q(id),
            o.summary
        ))
        .hint(format!(
            "fix the environment or the check (a new contract version: `git rails contract edit {sprint} --next`), then run `git rails evidence {} {sprint} {id}` again",
            req.transition.as_str()
        )));
    }
    match req.transition {
        Transition::Red if o.status == CheckStatus::Fail => match red::not_red(spec, o) {
            None => Ok(()),
            Some(why) => Err(Error::refused(format!(
                "{id} failed, but not as the check failing: {} ({}). A RED records the check failing, so nothing was recorded.",
                why.reason(),
                o.summary
            ))
            .hint(format!(
                "fix what stops the check from running, then run `git rails evidence red {sprint} {id}` again; if this failure is the criterion failing, say which failures count in the check (`redExitCodes` or `redOutputPattern`: `git rails contract edit {sprint} --next`)"
            ))),
        },
        Transition::Red if o.status == CheckStatus::Pass => Err(Error::refused(format!(
            "{id} already passes, so this RED would prove nothing. Write the check so that it fails before the change, or bump the contract ({}).",
            o.summary
        ))
        .hint(format!(
            "`git rails contract edit {sprint} --next` and `git rails contract freeze {sprint} --bump`"
        ))),
        Transition::Green if o.status != CheckStatus::Pass => Err(Error::refused(format!(
            "{id} still fails ({}); GREEN records only an observed pass.",
            o.summary
        ))
        .hint(format!(
            "make it pass, then run `git rails evidence green {sprint} {id}` again"
        ))),
        Transition::Surface if o.status != CheckStatus::Pass => Err(Error::refused(format!(
            "the checklist of {} is not fully ticked ({}); a review proof is surfaced only when it is.",
            q(id),
            o.summary
        ))
        .hint(format!(
            "tick every item once a person has checked it, then run `git rails evidence surface {sprint} {id} --note \"<where>\"` again"
        ))),
        Transition::Recheck if o.status != CheckStatus::Pass => Err(Error::refused(format!(
            "{id} fails on this tree ({}); a recheck re-binds only an observed pass.",
            o.summary
        ))
        .hint(format!(
            "if the change broke it, fix it and recheck; if its subject changed, `git rails evidence reopen {sprint} {id} --note \"<what changed>\"`"
        ))),
        _ => Ok(()),
    }
}
