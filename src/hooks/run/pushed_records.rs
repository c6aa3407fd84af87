//! What a pushed record ref must be wherever a push is judged — by `pre-receive` on a guarded
//! server, and by `pre-push` before it leaves the machine (a forge such as GitHub runs no
//! pre-receive of ours, so the client is the first place a hand-made record can be stopped):
//! an evidence chain replays from its first commit, and a spar series never replaces a
//! completed reviewer's result.

use super::*;

/// The reasons `name` at `tip` must not be pushed, each a line for stderr (the first says
/// what, the rest how to inspect or fix it); empty when it may. `view` reads `name` as `tip`
/// (pre-receive: the pushed objects in quarantine; pre-push: the ref as it is being pushed).
pub fn problems(view: &Store, name: &str, tip: ObjectId) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    if let Some(series) = Namespace::SparSeries.key_of(name) {
        let series = crate::spar::ids::SeriesId::recorded(series);
        let found = crate::spar::record::replaced_results(view, &series, tip)?;
        if !found.is_empty() {
            lines.push(format!(
                "update of {name} refused: its history replaces a completed review result"
            ));
            lines.extend(found.into_iter().map(|f| format!("  {f}")));
        }
    } else if let Some(sprint) = Namespace::Evidence.key_of(name) {
        // A summary written by hand, or a record without its observation, never leaves.
        let sprint = &SprintId::recorded(sprint);
        let derived = crate::evidence::chain::derive(view, sprint)?;
        if let Some(p) = derived.problem {
            lines.push(format!("update of {name} refused: {}", p.line(sprint)));
            lines.push(format!("  {}", p.fix(sprint)));
        }
    }
    Ok(lines)
}

/// [`problems`] said as a hook says them: a line that is not indented starts with
/// `git-rails: `, and any line at all refuses the push (its code at least 1; pre-push then
/// makes it 2, as for every push it refuses).
pub fn say(out: &mut HookResult, lines: Vec<String>) {
    for line in lines {
        out.code = out.code.max(1);
        if line.starts_with(' ') {
            out.say(line);
        } else {
            out.say(format!("git-rails: {line}"));
        }
    }
}
