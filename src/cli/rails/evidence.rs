//! `git rails evidence <transition>`, `status`, `report` and `verify`.

use super::*;
use crate::evidence::gate::Judged;

pub(super) fn cmd_evidence(t: Transition, a: EvidenceArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let (sprint, criterion) = match (a.first, a.second) {
        (Some(s), Some(c)) => (crate::contract::resolve_sprint(&store, Some(s))?, c),
        (Some(c), None) => (crate::contract::resolve_sprint(&store, None)?, c),
        (None, _) => {
            let verb = t.as_str();
            let hint = match crate::contract::resolve_sprint(&store, None)
                .ok()
                .and_then(|s| crate::contract::newest(&store, &s).ok().flatten())
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
    let because = crate::evidence::checked_because(t, a.because.as_deref(), "--because")?;
    let rec = crate::evidence::transition(
        &store,
        &crate::evidence::Request {
            sprint: &sprint,
            criterion: &criterion,
            transition: t,
            note,
            path,
            because,
        },
    )?;
    if a.json {
        crate::cli::print_json(&rec)?;
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

pub(super) fn cmd_status(a: StatusArgs) -> Result<Outcome> {
    let store = Store::discover()?;
    let sprint = crate::contract::resolve_sprint(&store, a.sprint)?;
    let head = store.head_commit()?;
    let mut report = crate::evidence::gate::evaluate(&store, &sprint, Judged::commit(head))?;
    let policy = crate::policy::Policy::load(&store, crate::policy::Source::Clone)?;
    crate::evidence::gate::judge_signer(&store, &mut report, policy.as_ref())?;
    if policy.is_none() {
        eprintln!("git-rails: notice: {}", crate::policy::NO_POLICY_NOTICE);
    }
    if a.json {
        crate::cli::print_json(&report)?;
    } else {
        out!("{}", crate::evidence::gate::render_status(&report));
    }
    Ok(Outcome::Ok)
}

pub(super) fn cmd_report(a: ReportArgs) -> Result<Outcome> {
    crate::report::check_out_file(&a.html)?;
    let store = Store::discover()?;
    let sprint = crate::contract::resolve_sprint(&store, a.sprint)?;
    let commit = match &a.commit {
        Some(rev) => Some(store.resolve_commit(rev)?),
        None => store.head_commit()?,
    };
    let mut report = crate::evidence::gate::evaluate(&store, &sprint, Judged::commit(commit))?;
    let policy = crate::policy::Policy::load(&store, crate::policy::Source::Clone)?;
    crate::evidence::gate::judge_signer(&store, &mut report, policy.as_ref())?;
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

pub(super) fn cmd_verify(a: VerifyArgs) -> Result<Outcome> {
    let could_not = "verify could not run; completion remains blocked";
    let store = Store::discover().map_err(|e| e.context(could_not))?;
    let (commit, since) =
        super::gate::judged_commit(&store, a.commit.as_deref(), a.since.as_deref())
            .map_err(|e| e.context(could_not))?;
    let named = a.commit.is_some() || since.is_some();
    let (sprints, from_commits) =
        crate::contract::resolve_for_commit(&store, a.sprint, named.then_some(commit), since)
            .map_err(|e| e.context(could_not))?;
    let source = match &a.policy_from {
        Some(rev) => crate::policy::Source::At(
            store
                .resolve_commit(rev)
                .map_err(|e| e.context(format!("{could_not}: --policy-from")))?,
        ),
        None => crate::policy::Source::Clone,
    };
    let policy = crate::policy::Policy::load(&store, source).map_err(|e| e.context(could_not))?;
    let mut reports = Vec::new();
    for sprint in &sprints {
        let mut report = crate::evidence::verify::verify(&store, sprint, commit, a.rerun)
            .map_err(|e| e.context(could_not))?;
        crate::evidence::verify::judge_signer(&store, &mut report, policy.as_ref())
            .map_err(|e| e.context(could_not))?;
        reports.push(report);
    }
    if let Some(path) = &a.junit {
        let docs: Vec<String> = reports.iter().map(crate::evidence::verify::junit).collect();
        crate::store::atomic_write(path, junit_suites(&docs).as_bytes())?;
    }
    let done = reports.iter().all(|r| r.done);
    if a.json && from_commits {
        // One entry per sprint the commits name.
        crate::cli::print_json(&json!({
            "schema": "rails-verify-list/v1",
            "commit": commit.to_string(),
            "done": done,
            "sprints": reports,
        }))?;
    } else {
        for report in &reports {
            if a.json {
                crate::cli::print_json(report)?;
            } else {
                out!("{}", crate::evidence::verify::render(report));
            }
        }
    }
    // The worst of them: 2 when any is not done, else 3 when a re-run could not run here,
    // else 0.
    Ok(if reports.iter().any(|r| r.verdict == "not done") {
        Outcome::Blocked
    } else if reports.iter().any(|r| r.verdict == "could not run") {
        Outcome::AbortPrecheck
    } else {
        Outcome::Ok
    })
}

/// One JUnit document holding one suite per sprint: each sprint's document's `<testsuite>`
/// under one `<testsuites>` (one document is written as it is).
fn junit_suites(docs: &[String]) -> String {
    if let [one] = docs {
        return one.clone();
    }
    let attr = |doc: &str, name: &str| -> usize {
        doc.split_once(&format!(" {name}=\""))
            .and_then(|(_, rest)| rest.split('"').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    let (mut tests, mut failures, mut errors) = (0, 0, 0);
    let mut suites = String::new();
    for d in docs {
        tests += attr(d, "tests");
        failures += attr(d, "failures");
        errors += attr(d, "errors");
        if let (Some(start), Some(end)) = (d.find("  <testsuite "), d.rfind("</testsuite>")) {
            suites.push_str(&d[start..end + "</testsuite>".len()]);
            suites.push('\n');
        }
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"rails verify\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">\n{suites}</testsuites>\n"
    )
}
