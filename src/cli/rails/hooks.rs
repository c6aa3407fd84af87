//! `git rails hooks` (install, uninstall, status, wiring) and `git rails hook`, what the
//! installed scripts run: both print what the `hooks` module decided.

use super::*;

pub(super) fn cmd_hooks(h: HooksCommand) -> Result<Outcome> {
    let store = Store::discover()?;
    match h {
        HooksCommand::Install(a) => {
            let actions = crate::hooks::install(&store, a.wiring.options())?;
            print_actions(&actions, a.wiring.json)?;
            if !a.wiring.json && crate::hooks::find_on_path("git-rails").is_none() {
                eprintln!("git-rails: warning: git-rails is not on PATH, so the hooks will refuse until it is");
            }
            // A server (a bare repository runs pre-receive): say plainly who can define done.
            if !a.wiring.json
                && store.workdir().is_err()
                && crate::policy::Policy::load(&store, crate::policy::Source::Server(None))?
                    .is_none()
            {
                eprintln!("git-rails: notice: {}", crate::policy::NO_POLICY_NOTICE);
                eprintln!("  {}", crate::policy::SETUP_HINT);
            }
            if !a.no_sync_setup && !a.wiring.dry_run {
                setup_record_sync(&store, !a.wiring.json)?;
            }
        }
        HooksCommand::Uninstall(a) => {
            let actions = crate::hooks::uninstall(&store, a.options())?;
            print_actions(&actions, a.json)?;
        }
        HooksCommand::Status(a) => {
            let st = crate::hooks::status(&store);
            if a.json {
                crate::cli::print_json(&st)?;
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

pub(super) fn print_actions(actions: &[crate::hooks::Action], json_out: bool) -> Result<()> {
    if json_out {
        return crate::cli::print_json(
            &json!({"schema": "rails-hooks-actions/v1", "actions": actions}),
        );
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

pub(super) fn cmd_hook(h: HookCommand) -> Result<Outcome> {
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
    if let Some(line) = crate::hooks::probe::answer(name, &args, &stdin)? {
        eprintln!("{line}");
        return Ok(Outcome::Ok);
    }
    let mut chained = crate::hooks::run::HookResult::default();
    let hook_dir = std::env::var_os("RAILS_HOOK_DIR").map(PathBuf::from);
    let failed =
        crate::hooks::run::run_chained(hook_dir.as_deref(), name, &args, &stdin, &mut chained)?;
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
        HookCommand::AgentStop => crate::hooks::run::event_cwd(&text),
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
        HookCommand::PrePush { remote, .. } => crate::hooks::run::pre_push(&store, &remote, &text)?,
        HookCommand::CommitMsg { file } => crate::hooks::run::commit_msg(&store, &file)?,
        HookCommand::PreReceive => crate::hooks::run::pre_receive(&store, &text)?,
        HookCommand::AgentStop => crate::hooks::run::agent_stop(&store, &text)?,
    };
    for l in &result.lines {
        eprintln!("{l}");
    }
    Ok(exit_with(result.code))
}
