//! The sprints an update of a protected ref owes: the union of every source, never the one the
//! pusher prefers.
//!
//! A commit made without the commit-msg hook (`--no-verify`, a cherry-pick, `git am`, a rebase,
//! a commit from before `hooks install`) carries no `Rails-Sprint:` trailer, and a branch made
//! from a bound branch has no binding of its own. If any single source decided, leaving it
//! empty would be a side door. So an update owes every sprint that any of these names:
//!
//! - the trailers of its new commits (those not reachable from what the receiving side has);
//! - the binding (`branch.<name>.railsSprint`) of the branch pushed and of the destination
//!   branch, in the clone that judges (pre-push: the pusher's; pre-receive: the server's);
//! - what a signing policy says the destination owes (`owes`, see [`super::authority`]).
//!
//! A new commit with no trailer belongs to the sprint of its nearest ancestor that names one
//! *among the new commits* (so a branch made from a bound branch inherits its unpushed work's
//! sprint; commits the remote already has never pass their sprint on). Those sprints are in the
//! union already; the walk tells which new commits name no sprint by themselves or through an
//! ancestor: on a bound branch they are judged by the binding, and the hook names them with
//! the command that adds the trailer.

use std::collections::{BTreeMap, HashMap};

use super::*;

/// Where a sprint of the union came from, for the user.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Source {
    /// A `Rails-Sprint:` trailer in a new commit.
    Trailer,
    /// `branch.<name>.railsSprint` of this branch.
    Binding(String),
    /// The signing policy's `owes` for the destination.
    Owes,
}

/// A branch binding that applies to an update: the branch and the sprint bound to it.
#[derive(Debug, Clone)]
pub(super) struct Binding {
    pub branch: String,
    pub sprint: String,
}

/// The bindings a ref has in `store`'s configuration (a branch only; tags have none).
pub(super) fn binding_of(store: &Store, refname: &str) -> Option<Binding> {
    let branch = refname.strip_prefix("refs/heads/")?;
    store
        .config_string(&format!("branch.{branch}.railsSprint"))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .map(|sprint| Binding {
            branch: branch.to_string(),
            sprint,
        })
}

/// What an update owes.
#[derive(Debug, Default)]
pub(super) struct Owed {
    /// Every sprint, with where it came from.
    pub sprints: BTreeMap<String, Vec<Source>>,
    /// The new commits that name no sprint, by themselves or through a new ancestor, oldest
    /// first: (id, subject, whether it is a root commit).
    pub unnamed: Vec<(ObjectId, String, bool)>,
}

/// The most new commits one update walks (as before: a push of more is judged by these).
const WALK_LIMIT: usize = 1000;

/// The union of sprints the update of a ref to `tip` owes; `stop` is what the receiving side
/// has already.
pub(super) fn owed(
    store: &Store,
    (tip, stop): (ObjectId, &HashSet<ObjectId>),
    bindings: &[Binding],
    owes: &[String],
) -> Result<Owed> {
    // The new commits, each with its parents and the sprints its own message names.
    let mut commits: HashMap<ObjectId, (Vec<ObjectId>, BTreeSet<String>, String)> = HashMap::new();
    let mut queue = vec![tip];
    while let Some(id) = queue.pop() {
        if commits.len() >= WALK_LIMIT || stop.contains(&id) || commits.contains_key(&id) {
            continue;
        }
        let info = store.commit_info(id)?;
        let mut named = BTreeSet::new();
        for line in info.message.lines() {
            if let Some((k, v)) = line.split_once(':') {
                if k.trim().eq_ignore_ascii_case("Rails-Sprint") && !v.trim().is_empty() {
                    named.insert(v.trim().to_string());
                }
            }
        }
        let subject = info.message.lines().next().unwrap_or("").to_string();
        queue.extend(info.parents.iter().copied());
        commits.insert(id, (info.parents, named, subject));
    }
    // Parents before children, so each commit's inherited sprints are known from its new
    // parents' (a commit outside the walk passes nothing on).
    let mut order = Vec::new();
    let mut done: HashMap<ObjectId, bool> = HashMap::new();
    let mut stack = vec![(tip, false)];
    while let Some((id, expanded)) = stack.pop() {
        if !commits.contains_key(&id) || (done.contains_key(&id) && !expanded) {
            continue;
        }
        if expanded {
            order.push(id);
            continue;
        }
        done.insert(id, true);
        stack.push((id, true));
        for p in &commits[&id].0 {
            stack.push((*p, false));
        }
    }
    let mut out = Owed::default();
    let mut inherited: HashMap<ObjectId, bool> = HashMap::new();
    for id in &order {
        let (parents, named, subject) = &commits[id];
        for s in named {
            add(&mut out, s, Source::Trailer);
        }
        let has = !named.is_empty()
            || parents
                .iter()
                .any(|p| inherited.get(p).copied().unwrap_or(false));
        inherited.insert(*id, has);
        if !has {
            out.unnamed.push((*id, subject.clone(), parents.is_empty()));
        }
    }
    for b in bindings {
        add(&mut out, &b.sprint, Source::Binding(b.branch.clone()));
    }
    for s in owes {
        add(&mut out, s, Source::Owes);
    }
    Ok(out)
}

/// Where a sprint came from, in words: "a trailer and main's binding".
pub(super) fn describe(sources: &[Source]) -> String {
    let words: Vec<String> = sources
        .iter()
        .map(|s| match s {
            Source::Trailer => "a trailer".to_string(),
            Source::Binding(b) => format!("{b}'s binding"),
            Source::Owes => "the signing policy".to_string(),
        })
        .collect();
    words.join(" and ")
}

fn add(out: &mut Owed, sprint: &str, source: Source) {
    let sources = out.sprints.entry(sprint.to_string()).or_default();
    if !sources.contains(&source) {
        sources.push(source);
    }
}

/// The lines that name the new commits judged by a binding alone (they lack the trailer) and
/// the command that adds it to them.
pub(super) fn unnamed_lines(owed: &Owed, bindings: &[Binding], out: &mut HookResult) {
    let Some(first) = owed.unnamed.first() else {
        return;
    };
    let mut sprints: Vec<&str> = bindings.iter().map(|b| b.sprint.as_str()).collect();
    sprints.sort_unstable();
    sprints.dedup();
    if sprints.is_empty() {
        return;
    }
    let branches: Vec<String> = bindings
        .iter()
        .map(|b| format!("{} is bound to {}", b.branch, b.sprint))
        .collect();
    let n = owed.unnamed.len();
    out.say(format!(
        "git-rails: {n} new commit{} name{} no sprint (no `Rails-Sprint:` trailer, none from a new ancestor); {}, so {} judged by {}:",
        if n == 1 { "" } else { "s" },
        if n == 1 { "s" } else { "" },
        branches.join(", "),
        if n == 1 { "it is" } else { "they are" },
        sprints.join(" and "),
    ));
    for (id, subject, _) in owed.unnamed.iter().take(10) {
        out.say(format!("  - {} {subject}", &id.to_string()[..7]));
    }
    if n > 10 {
        out.say(format!("  - … and {} more", n - 10));
    }
    let base = if first.2 {
        "--root".to_string()
    } else {
        format!("{}~1", &first.0.to_string()[..7])
    };
    let trailers: Vec<String> = sprints
        .iter()
        .map(|s| format!("--trailer 'Rails-Sprint: {s}'"))
        .collect();
    out.say(format!(
        "  add the trailer to the unpushed commits: `git rebase {base} --exec \"git commit --amend --no-edit --allow-empty {}\"`",
        trailers.join(" ")
    ));
}
