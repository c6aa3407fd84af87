//! What a round writes that it did not take from the commits goes through the redactor
//! (`crate::redact`): the reviewers' finding text, their output and error streams (the
//! transcripts), a reviewer's failure reason, the user's decisions and standpoints, and
//! documents from outside the repository. Committed content stays exact: tokens found in the
//! change under review are left alone, so a finding that quotes committed code still quotes it.
//!
//! Apart from the round's steps because it is one question asked at each of them: what is free
//! text from outside, and how many values were replaced (said in the round's `warnings` as
//! "redacted: 2 values redacted", never the values).

use super::*;
use crate::redact::Redactor;

/// The redactor of a round: this process's secret values, leaving alone the tokens of the
/// change `base..head` (content already in git).
pub(super) fn redactor(store: &Store, base: ObjectId, head: ObjectId) -> Redactor {
    let diff = store.review_diff(base, head).unwrap_or_default();
    Redactor::from_env().allowing(diff.as_bytes())
}

/// Redacts the reviewers' words in `findings`; ids, locations, paths and words of spar's
/// vocabulary are not free text and stay.
pub(super) fn findings(r: &Redactor, findings: &mut [Finding]) -> usize {
    let mut n = 0;
    for f in findings {
        for s in [
            &mut f.claim,
            &mut f.failure_scenario,
            &mut f.evidence,
            &mut f.smallest_fix,
        ] {
            n += r.in_place(s);
        }
    }
    n
}

/// Redacts the transcripts (`<reviewer>/output.txt`, `<reviewer>/stderr.txt`) among `files`.
pub(super) fn transcripts(r: &Redactor, files: &mut [(String, Vec<u8>)]) -> usize {
    let mut n = 0;
    for (name, bytes) in files {
        if name.ends_with("/output.txt") || name.ends_with("/stderr.txt") {
            let (clean, k) = r.bytes(bytes);
            if k > 0 {
                *bytes = clean;
                n += k;
            }
        }
    }
    n
}

/// Redacts the reviewers' failure reasons (they quote a reviewer's error output).
pub(super) fn reasons(r: &Redactor, round: &mut Round) -> usize {
    round
        .reviewers
        .iter_mut()
        .map(|rec| r.in_place(&mut rec.reason))
        .sum()
}

/// Says how many values this write replaced, in the round's warnings.
pub(super) fn count(round: &mut Round, n: usize) {
    if let Some(said) = crate::redact::counted(n) {
        round.warnings.push(format!("redacted: {said}"));
    }
}
