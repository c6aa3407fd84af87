//! `git spar run`: one review round, its reviewers and findings printed, and what to do when no
//! reviewer could run.

use super::*;

pub(super) fn cmd_run(a: RunArgs) -> Result<Outcome> {
    // G35 and the standpoint forms come before the repository is even opened.
    let decisions = round::pair_decisions(&a.decision_order)?;
    let standpoints = a
        .standpoints
        .iter()
        .map(|s| round::parse_standpoint(s))
        .collect::<Result<Vec<_>>>()?;
    let store = Store::discover()?;
    let stage = a.stage.as_deref().map(Stage::from_option).transpose()?;
    let series = a.series.as_deref().map(SeriesId::new).transpose()?;
    let base_arg = a.base.clone();
    let req = round::RunRequest {
        base: a.base,
        head: a.head,
        stage,
        series,
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
    let mut progress = StderrReporter::new();
    let out = round::run(&store, &req, &mut progress)?;
    let r = &out.round;
    if a.json {
        crate::cli::print_json(r)?;
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
                    rev.verdict
                        .as_ref()
                        .map(|v| v.to_string())
                        .unwrap_or_default()
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
    let env = spar::config::Env::from_vars(|k| std::env::var_os(k), PathBuf::new());
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
