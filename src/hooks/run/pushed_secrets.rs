//! The last line of defence: a pushed record ref whose new blobs written by our tools (logs,
//! record JSON, notes, finding text, commit messages) hold a known token format is refused,
//! by pre-push before it leaves the machine and by pre-receive on a guarded server, naming the
//! record and the rule. Everything written goes through `crate::redact` first; this catches
//! what was written by another build, by hand, or before the redactor existed.
//!
//! Apart from [`super::pushed_records`] because it asks another question (what a record holds,
//! not whether its history is sound) of every record ref, notes included. The rule set is
//! compiled only here on the hook path, so only when record refs are pushed.
//!
//! What is scanned, and what is never (the copies of the project's own tracked files inside a record (an evidence
//! chain's `trees/<id>` observed trees, a round's `packet.md` and reviewer inputs): they are
//! content already in git), is `crate::redact::records`.

use super::*;

/// What in `name` at `tip` (and not already in `old`) holds a token: lines for stderr, the
/// first of each unindented; empty when nothing does.
/// `series_tips`: the spar series pushed alongside (their packets say what is committed).
pub fn problems(
    view: &Store,
    name: &str,
    old: Option<ObjectId>,
    tip: ObjectId,
    series_tips: &[ObjectId],
) -> Result<Vec<String>> {
    let mut tips = series_tips.to_vec();
    tips.push(tip);
    let committed = crate::redact::records::committed_tokens(view, &tips)?;
    let mut lines: Vec<String> = crate::redact::records::leaks(view, old, tip, &committed)?
        .into_iter()
        .map(|l| {
            format!(
                "{name} refused: record {} ({}) holds a secret of the format {}",
                l.short(),
                l.path,
                l.rule
            )
        })
        .collect();
    if !lines.is_empty() {
        lines.push("  a record on a server is immutable, so it must not leave with a secret: `git rails doctor` names such records and the command that rewrites one not yet pushed".into());
    }
    Ok(lines)
}
