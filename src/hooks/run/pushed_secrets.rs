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
//! Never scanned: the copies of the project's own tracked files inside a record (an evidence
//! chain's `trees/<id>` observed trees, a round's `packet.md` and reviewer inputs): they are
//! content already in git, and a token a round's packet holds may be quoted by its findings.

use std::collections::BTreeSet;

use super::*;

/// Paths inside a record that are copies of the project's files, never scanned.
fn is_copy(path: &str) -> bool {
    path.starts_with("trees/")
        || path.ends_with("packet.md")
        || path.ends_with("/input.md")
        || path.ends_with("/prompt.md")
        || path.ends_with("PACKET.md")
}

/// What in `name` at `tip` (and not already in `old`) holds a token: one line per finding for
/// stderr, the first of each unindented; empty when nothing does.
pub fn problems(view: &Store, name: &str, old: Option<ObjectId>, tip: ObjectId) -> Result<Vec<String>> {
    let Some(tip) = view.peel_to_commit(tip)? else {
        return Ok(Vec::new());
    };
    let known: BTreeSet<ObjectId> = match old.filter(|o| view.has_object(*o)) {
        Some(o) => view.reachable(&[o])?.into_iter().map(|c| c.id).collect(),
        None => BTreeSet::new(),
    };
    let mut seen_blobs: BTreeSet<ObjectId> = BTreeSet::new();
    if let Some(o) = old.filter(|o| view.has_object(*o)) {
        if let Some(c) = view.peel_to_commit(o)? {
            for (_, id) in view.tree_blobs(view.tree_of(c)?)? {
                seen_blobs.insert(id);
            }
        }
    }
    let mut lines = Vec::new();
    for commit in view.reachable(&[tip])? {
        if known.contains(&commit.id) {
            continue;
        }
        let short = &commit.id.to_string()[..7];
        let blobs = view.tree_blobs(commit.tree)?;
        // Tokens the round's packet holds (the project's committed content) may be quoted.
        let mut allowed: BTreeSet<Vec<u8>> = BTreeSet::new();
        for (path, id) in &blobs {
            if is_copy(path) && path.ends_with("packet.md") {
                let bytes = view.blob(*id)?;
                for h in crate::redact::rules::find(&bytes) {
                    allowed.insert(bytes[h.start..h.end].to_vec());
                }
            }
        }
        let mut found: Vec<(String, &'static str)> = Vec::new();
        for h in crate::redact::rules::find(commit.message.as_bytes()) {
            found.push(("its message".to_string(), h.rule));
        }
        for (path, id) in blobs {
            if is_copy(&path) || !seen_blobs.insert(id) {
                continue;
            }
            let bytes = view.blob(id)?;
            for h in crate::redact::rules::find(&bytes) {
                if !allowed.contains(&bytes[h.start..h.end]) {
                    found.push((path.clone(), h.rule));
                }
            }
        }
        found.sort();
        found.dedup();
        for (path, rule) in found {
            lines.push(format!(
                "{name} refused: record {short} ({path}) holds a secret of the format {rule}"
            ));
        }
    }
    if !lines.is_empty() {
        lines.push("  a record on a server is immutable, so it must not leave with a secret: `git rails doctor` names such records and the command that rewrites one not yet pushed".into());
    }
    Ok(lines)
}
