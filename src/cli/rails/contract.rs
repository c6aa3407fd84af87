//! `git rails contract`: generate, edit, freeze, validate, show, history, list and bind.
//! Whether a draft may be replaced, the checklist it starts and the documents `--json` prints
//! are the `contract` module's; this file turns arguments into those calls and results into text.

use super::*;

pub(super) fn cmd_bind(a: BindArgs) -> Result<Outcome> {
    let sprint = crate::contract::SprintId::parse(&a.sprint)?;
    let store = Store::discover()?;
    let Some(branch) = store.current_branch()? else {
        return Err(
            Error::refused("HEAD is detached; a sprint is bound to a branch")
                .hint("check out the sprint's branch and run `git rails contract bind` there"),
        );
    };
    let frozen = crate::contract::newest(&store, &sprint)?;
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

pub(super) fn cmd_generate(a: GenerateArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let root = store.workdir()?.to_path_buf();
    if let Some(s) = &a.sprint {
        crate::contract::SprintId::parse(s)?;
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
    let written = generate::write_draft(
        &store,
        &root,
        &generated,
        a.force,
        &a.doc.display().to_string(),
    )?;
    let (path, next_version, checklist) = (written.path, written.next_version, written.checklist);
    if a.json {
        crate::cli::print_json(&json!({
            "schema": "rails-generate/v1",
            "sprint": sprint,
            "draft": crate::contract::rel(&root, &path),
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
            crate::contract::rel(&root, &path),
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

pub(super) fn cmd_edit(a: EditArgs) -> Result<Outcome> {
    let sprint = &crate::contract::SprintId::parse(&a.sprint)?;
    let store = Store::discover()?;
    let root = store.workdir()?.to_path_buf();
    let path = crate::contract::draft_path(&root, sprint);
    let frozen = crate::contract::newest(&store, sprint)?;
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
    let (_, c) = crate::contract::load_draft(&root, sprint).map_err(|e| {
        let msg = e.message.clone();
        Error::refused(format!("{msg}\n(the draft was saved as you left it)")).hint(format!(
            "run `git rails contract edit {sprint}` again to fix it"
        ))
    })?;
    let bump = if frozen.is_some() { " --bump" } else { "" };
    outln!(
        "{} is valid ({} checks); freeze it with `git rails contract freeze {sprint}{bump}`",
        crate::contract::rel(&root, &path),
        c.dod.checks.len()
    );
    Ok(Outcome::Ok)
}

pub(super) fn ensure_writable(path: &std::path::Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ctx(format!("reading {}", path.display()))?;
    if meta.permissions().mode() & 0o200 == 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
            .ctx(format!("making {} writable", path.display()))?;
    }
    Ok(())
}

pub(super) fn run_editor(path: &std::path::Path) -> Result<()> {
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

pub(super) fn cmd_freeze(a: FreezeArgs) -> Result<Outcome> {
    let sprint = crate::contract::SprintId::parse(&a.sprint)?;
    let store = Store::discover()?;
    if a.reason.len() != a.drop.len() && a.reason.len() != 1 {
        return Err(Error::usage(format!(
            "{} --drop and {} --reason: give one --reason after each --drop (or one for all)",
            a.drop.len(),
            a.reason.len()
        )));
    }
    let drops: Vec<crate::contract::DropRequest> = a
        .drop
        .iter()
        .enumerate()
        .map(|(i, id)| crate::contract::DropRequest {
            id: id.clone(),
            reason: a
                .reason
                .get(i)
                .or(a.reason.first())
                .cloned()
                .unwrap_or_default(),
        })
        .collect();
    let f = crate::contract::freeze(&store, &sprint, a.bump, &drops, a.sign)?;
    if a.json {
        crate::cli::print_json(&crate::contract::frozen_json(&f))?;
    } else {
        outln!(
            "froze {} {} as {} ({}); the draft is now read-only",
            f.sprint,
            f.version,
            short(&f.commit.to_string()),
            crate::store::refs::Namespace::Contracts.name(&f.sprint)
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

pub(super) fn short(id: &str) -> &str {
    &id[..id.len().min(7)]
}

pub(super) fn cmd_validate(a: ValidateArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let sprint = crate::contract::SprintId::parse(&a.sprint)?;
    let chosen = validate::Chosen::of(&store, &sprint, a.version.as_deref(), a.draft)?;
    let target = chosen.target(&sprint);
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
        crate::cli::print_json(&report)?;
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

pub(super) fn cmd_show(a: ShowArgs) -> Result<Outcome> {
    let sprint = crate::contract::SprintId::parse(&a.sprint)?;
    let store = Store::discover()?;
    let f = crate::contract::find(&store, &sprint, a.version.as_deref())?;
    if a.json {
        crate::cli::print_json(&crate::contract::frozen_json(&f))?;
        return Ok(Outcome::Ok);
    }
    let c = &f.contract;
    outln!(
        "Contract {} {} [{}] frozen {} at {}",
        f.sprint,
        f.version,
        c.sprint_type.as_str(),
        crate::contract::rfc3339(f.frozen_at),
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

pub(super) fn cmd_history(a: HistoryArgs) -> Result<Outcome> {
    let sprint = crate::contract::SprintId::parse(&a.sprint)?;
    let store = Store::discover()?;
    let all = crate::contract::versions(&store, &sprint)?;
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
            crate::contract::describe_changes(&all[i - 1].contract, &f.contract)
        };
        rows.push((f, changes));
    }
    if a.json {
        crate::cli::print_json(&json!({
            "schema": "rails-contract-history/v1",
            "sprint": a.sprint,
            "versions": rows.iter().map(|(f, ch)| json!({
                "version": f.version,
                "commit": f.commit.to_string(),
                "base": f.base.map(|b| b.to_string()),
                "frozenAt": crate::contract::rfc3339(f.frozen_at),
                "changes": ch,
            })).collect::<Vec<_>>(),
        }))?;
        return Ok(Outcome::Ok);
    }
    for (f, changes) in rows {
        outln!(
            "{:<6} {}  commit {}  base {}",
            f.version,
            crate::contract::rfc3339(f.frozen_at),
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

pub(super) fn cmd_list(a: ListArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let all = crate::contract::list(&store)?;
    if a.json {
        crate::cli::print_json(&crate::contract::list_json(&all))?;
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
            crate::contract::rfc3339(f.frozen_at)
        );
    }
    Ok(Outcome::Ok)
}
