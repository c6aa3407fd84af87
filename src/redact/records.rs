//! Finding known token formats in records already written: what pre-push and pre-receive
//! refuse to carry and `git rails doctor` reports. Scanned: the new commits of a record ref
//! (their messages and the blobs they add: logs, record JSON, notes, finding text). Never
//! scanned: the copies of the project's own tracked files inside a record (an evidence chain's
//! `trees/<id>` observed trees, a round's `packet.md` and reviewer inputs): they are content
//! already in git, and a token a round's packet holds (the change under review) may be quoted
//! by its findings, its transcripts and the summary noted on the head. Which is also why a
//! hand-made `packet.md` can carry a token past this check: the check is the last line behind
//! the redactor, not a scanner of the project's own content.

use std::collections::BTreeSet;

use crate::error::Result;
use crate::store::{ObjectId, Store};

/// A token found in a record: the commit that added it, where, and the rule that knows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Leak {
    pub commit: ObjectId,
    /// The file inside the record, or "its message".
    pub path: String,
    pub rule: &'static str,
}

impl Leak {
    /// The commit's short id.
    pub fn short(&self) -> String {
        self.commit.to_string()[..7].to_string()
    }
}

/// Paths inside a record that are copies of the project's files, never scanned.
fn is_copy(path: &str) -> bool {
    path.starts_with("trees/")
        || path.ends_with("packet.md")
        || path.ends_with("/input.md")
        || path.ends_with("/prompt.md")
        || path.ends_with("PACKET.md")
}

/// The tokens the change under review holds, as the packets of the spar series at `tips` (and
/// of every spar series `view` has) copy it: a record may quote them.
pub fn committed_tokens(view: &Store, tips: &[ObjectId]) -> Result<BTreeSet<Vec<u8>>> {
    let mut all: Vec<ObjectId> = tips.to_vec();
    all.extend(
        view.refs_under(crate::store::refs::SPAR_SERIES)?
            .into_iter()
            .map(|(_, id)| id),
    );
    let mut out = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for tip in all {
        let Some(commit) = view.peel_to_commit(tip)? else {
            continue;
        };
        for (path, id) in view.tree_blobs(view.tree_of(commit)?)? {
            if path.ends_with("packet.md") && seen.insert(id) {
                let bytes = view.blob(id)?;
                for h in crate::redact::rules::find(&bytes) {
                    out.insert(bytes[h.start..h.end].to_vec());
                }
            }
        }
    }
    Ok(out)
}

/// The tokens the commits of `tip` that `old` does not hold add, one per commit, file and rule;
/// tokens in `committed` (see [`committed_tokens`]) are content already in git.
pub fn leaks(
    view: &Store,
    old: Option<ObjectId>,
    tip: ObjectId,
    committed: &BTreeSet<Vec<u8>>,
) -> Result<Vec<Leak>> {
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
    let mut leaks = Vec::new();
    for commit in view.reachable(&[tip])? {
        if known.contains(&commit.id) {
            continue;
        }
        let blobs = view.tree_blobs(commit.tree)?;
        // Tokens the round's packet holds (the project's committed content) may be quoted.
        let mut allowed: BTreeSet<Vec<u8>> = committed.clone();
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
        leaks.extend(found.into_iter().map(|(path, rule)| Leak {
            commit: commit.id,
            path,
            rule,
        }));
    }
    Ok(leaks)
}
