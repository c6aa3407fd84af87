//! `commit-msg <file>`: the bound sprint's `Rails-Sprint:` trailer added, a trailer naming no
//! frozen contract refused, and a `Rails-Done:` claim judged against the tree being committed.

use super::*;

/// `commit-msg <file>`: while the branch is bound, adds `Rails-Sprint: <sprint>` (as
/// `git interpret-trailers` would, never a second one); a `Rails-Sprint:` the author wrote
/// must name a frozen contract; `Rails-Done:` needs the
/// sprint's gate to pass for the tree being committed (the index's tree).
pub fn commit_msg(store: &Store, message_file: &Path) -> Result<HookResult> {
    let mut out = HookResult::default();
    let read = || {
        std::fs::read_to_string(message_file).map_err(|e| {
            Error::refused(format!(
                "commit-msg: cannot read the message file {}: {e}",
                message_file.display()
            ))
        })
    };
    let mut message = read()?;
    let written = trailers(&message, "Rails-Sprint");
    // The bound sprint travels in the commit (as Gerrit's hook adds Change-Id), so a clone,
    // CI and the server find it from the pushed commits alone. A message that is only
    // comments is left alone: git aborts such a commit, and a trailer would keep it alive.
    if written.is_empty() && has_text(&message) {
        if let Some(sprint) = bound_sprint(store)? {
            let sprint = SprintId::parse(&sprint)
                .map_err(|e| e.context("commit-msg: the sprint bound to the branch"))?;
            match in_process_trailer(store, &message, &sprint) {
                Some(with_trailer) => {
                    crate::store::rewrite_from_difference(
                        message_file,
                        message.as_bytes(),
                        with_trailer.as_bytes(),
                    )?;
                    message = with_trailer;
                }
                None => {
                    store.add_trailer(message_file, "Rails-Sprint", &sprint)?;
                    message = read()?;
                }
            }
            if !contract::is_frozen(store, &sprint)? {
                out.say(format!(
                    "git-rails: note: the branch is bound to {sprint}, which has no frozen contract yet; a push of this commit is refused until `git rails contract freeze {sprint}`"
                ));
            }
        }
    }
    for sprint in written {
        let sprint = SprintId::parse(&sprint).map_err(|e| e.context("commit-msg: Rails-Sprint"))?;
        if contract::newest(store, &sprint)?.is_none() {
            out.code = 65;
            out.say(format!(
                "git-rails: commit refused: Rails-Sprint: {sprint} names no frozen contract"
            ));
            out.say(format!(
                "  freeze it first with `git rails contract freeze {sprint}`, or fix the trailer (see `git rails contract list`)"
            ));
        }
    }
    let done = trailers(&message, "Rails-Done");
    if !done.is_empty() {
        let tree = store.index_tree()?;
        for sprint in done {
            let sprint =
                SprintId::parse(&sprint).map_err(|e| e.context("commit-msg: Rails-Done"))?;
            let report = gate::evaluate(
                store,
                &sprint,
                gate::Judged::Tree {
                    label: "the index".into(),
                    tree,
                },
            )
            .map_err(|e| {
                e.context(format!(
                    "the verification gate could not run for {sprint}; completion remains blocked"
                ))
            })?;
            if !report.done {
                out.code = 2;
                out.say(format!(
                    "git-rails: commit refused: Rails-Done: {sprint} claims completion, but {sprint} {} is not done for the tree being committed ({} step{} missing)",
                    report.version,
                    report.missing.len(),
                    if report.missing.len() == 1 { "" } else { "s" }
                ));
                gate_lines(&report, &mut out);
            }
        }
    }
    Ok(out)
}

/// The message with the `Rails-Sprint:` trailer added in-process, when that is certain to be
/// what `git interpret-trailers` writes: no configuration that changes git's trailer rules or
/// comment character, and a message [`trailer::add_to_message`] is sure of. `None`: ask git.
fn in_process_trailer(store: &Store, message: &str, sprint: &SprintId) -> Option<String> {
    if store.config_section_set("trailer")
        || store.config_string("core.commentChar").is_some()
        || store.config_string("core.commentString").is_some()
    {
        return None;
    }
    crate::hooks::trailer::add_to_message(message, "Rails-Sprint", sprint)
}
