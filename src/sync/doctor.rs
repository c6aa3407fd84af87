//! `git rails doctor`: what keeps records from being whole or from travelling, each finding with
//! the command that fixes it. Read-only.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

use crate::contract::SprintId;
use crate::error::Result;
use crate::store::{refs, ObjectId, Store};

pub const SCHEMA: &str = "rails-doctor/v1";

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// `unreachable-commit`, `missing-commit`, `stale-lock` (a lock file left in the
    /// repository), `diverged`, `evidence-chain`, `untracked-content`, `kept-replay` (a memo that
    /// disagrees with its records), `secret`, `hook`.
    pub kind: String,
    pub what: String,
    pub fix: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub remote: String,
    pub findings: Vec<Finding>,
    /// What is worth knowing and changes no exit code (no signing policy in force).
    pub notices: Vec<String>,
}

/// Records holding a known token format, each with what can be done: a record not yet on
/// `remote` (as last fetched) can be rewritten here; a signed one never is; one on the server
/// stays there, immutable, so the secret must be revoked.
fn secrets(store: &Store, remote: &str) -> Result<Vec<Finding>> {
    let theirs: std::collections::BTreeMap<String, ObjectId> =
        super::staged(store, remote)?.into_iter().collect();
    let mut names: Vec<(String, ObjectId)> = Vec::new();
    for prefix in [refs::RAILS, refs::SPAR] {
        names.extend(store.refs_under(prefix)?);
    }
    for n in refs::TRAVELLING_NOTES {
        if let Some(id) = store.ref_target(n)? {
            names.push((n.to_string(), id));
        }
    }
    let committed = crate::redact::records::committed_tokens(store, &[])?;
    let mut out = Vec::new();
    for (name, tip) in names {
        let pushed = theirs.get(&name).copied();
        let pushed_commits: HashSet<ObjectId> = match pushed.filter(|p| store.has_object(*p)) {
            Some(p) => store.reachable(&[p])?.into_iter().map(|c| c.id).collect(),
            None => HashSet::new(),
        };
        for leak in crate::redact::records::leaks(store, None, tip, &committed)? {
            let what = format!(
                "{name}: record {} ({}) holds a secret of the format {}",
                leak.short(),
                leak.path,
                leak.rule
            );
            let fix = if pushed_commits.contains(&leak.commit) {
                format!("it is on {remote} already, and records on a server are immutable: revoke the secret where it was issued (a new token); it cannot be taken back from the records")
            } else if store.is_signed(leak.commit) {
                "the record is signed, and a signed record is never rewritten: do not push it; revoke the secret where it was issued".to_string()
            } else {
                let back = match pushed {
                    Some(p) => format!("git update-ref {name} {p}"),
                    None => format!("git update-ref -d {name}"),
                };
                format!(
                    "not pushed yet: rewrite it locally without the secret, taking the ref back to what {remote} holds (`{back}`, then `rm -rf .git/rails/cache`) and recording again with this version, which redacts; and revoke the secret, since it was written down"
                )
            };
            out.push(Finding {
                kind: "secret".into(),
                what,
                fix,
            });
        }
    }
    Ok(out)
}

/// Commits the records point at: (the record, the commit).
fn referenced(store: &Store) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (sprint, tip) in store.refs_under(refs::CONTRACTS)? {
        for c in store.chain(tip)? {
            if let Some(base) = c.trailer("Rails-Base") {
                let v = c.trailer("Rails-Contract-Version").unwrap_or_default();
                out.push((format!("contract {sprint} {v} (base commit)"), base));
            }
        }
    }
    for (sprint, tip) in store.refs_under(refs::EVIDENCE)? {
        let Some(bytes) = store.read_file(tip, crate::evidence::STATE_FILE)? else {
            continue;
        };
        let Ok(state) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        if let Some(crits) = state.get("criteria").and_then(Value::as_object) {
            for (id, c) in crits {
                for key in ["red", "green", "surface", "binding"] {
                    if let Some(h) = c
                        .get(key)
                        .and_then(|r| r.get("head"))
                        .and_then(Value::as_str)
                    {
                        out.push((
                            format!("evidence {sprint} {id} {key} (HEAD)"),
                            h.to_string(),
                        ));
                    }
                }
            }
        }
    }
    for (series, tip) in store.refs_under(refs::SPAR_SERIES)? {
        for round in store.list_dir(tip, "rounds")? {
            let Some(bytes) = store.read_file(tip, &format!("rounds/{round}/round.json"))? else {
                continue;
            };
            let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
                continue;
            };
            for key in ["base", "head"] {
                if let Some(h) = v.get(key).and_then(Value::as_str) {
                    out.push((format!("spar {series} {round} ({key})"), h.to_string()));
                }
            }
        }
    }
    Ok(out)
}

/// The observed trees of a chain (`trees/<id>`) holding files that no commit the records name
/// holds: content that was never committed (possibly never tracked). By tree, with the paths.
fn uncommitted_content(store: &Store, tip: ObjectId) -> Result<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for c in store.chain(tip)? {
        if c.trailer("Rails-Transition").is_none() {
            continue;
        }
        for path in store.changed_paths(
            c.parents
                .first()
                .map(|p| store.tree_of(*p))
                .transpose()?
                .unwrap_or_else(|| ObjectId::empty_tree(store.repo().object_hash())),
            c.tree,
        )? {
            if !path.ends_with(".json") || !path.starts_with("cycles/") {
                continue;
            }
            let Some(bytes) = store.read_file_in_tree(c.tree, &path)? else {
                continue;
            };
            let Ok(r) = serde_json::from_slice::<Value>(&bytes) else {
                continue;
            };
            let (Some(tree), head) = (
                r.get("tree").and_then(Value::as_str),
                r.get("head").and_then(Value::as_str),
            ) else {
                continue;
            };
            if !seen.insert(tree.to_string()) {
                continue;
            }
            let Ok(tree_id) = ObjectId::from_hex(tree.as_bytes()) else {
                continue;
            };
            if !store.has_object(tree_id) {
                continue;
            }
            let base = match head.and_then(|h| ObjectId::from_hex(h.as_bytes()).ok()) {
                Some(h) if store.has_object(h) => store.tree_of(h)?,
                _ => ObjectId::empty_tree(store.repo().object_hash()),
            };
            let mut extra = Vec::new();
            for p in store.changed_paths(base, tree_id)? {
                if store.file_at(tree_id, &p)?.is_none() {
                    continue; // deleted in the work tree: nothing carried
                }
                if !committed_anywhere(store, &p)? {
                    extra.push(p);
                }
            }
            if !extra.is_empty() {
                out.push((tree.to_string(), extra));
            }
        }
    }
    Ok(out)
}

/// Whether `path` is held by HEAD or the index now (it was tracked, then).
fn committed_anywhere(store: &Store, path: &str) -> Result<bool> {
    Ok(store.is_in_index(path) || store.path_in_history(path))
}

/// Every check; findings empty means healthy.
pub fn run(store: &Store, remote: &str) -> Result<Report> {
    let mut findings = Vec::new();

    // 1. Records that point at commits git does not keep.
    let reachable: HashSet<String> = store.commits_on_branches_tags_remotes();
    let mut seen = HashSet::new();
    for (what, hex) in referenced(store)? {
        if !seen.insert((what.clone(), hex.clone())) || reachable.contains(&hex) {
            continue;
        }
        let Ok(id) = ObjectId::from_hex(hex.as_bytes()) else {
            continue;
        };
        let short = &hex[..12.min(hex.len())];
        if store.has_object(id) {
            findings.push(Finding {
                kind: "unreachable-commit".into(),
                what: format!(
                    "{what} points at {short}, which no branch or tag holds: git gc will drop it"
                ),
                fix: format!("git branch rails-keep/{short} {hex}"),
            });
        } else {
            findings.push(Finding {
                kind: "missing-commit".into(),
                what: format!("{what} points at {short}, which this clone does not have"),
                fix: format!("git fetch {remote} (the branch that holds {short}), or ask whoever recorded it to push it"),
            });
        }
    }

    // 2. Lock files: git's ref locks (`<ref>.lock`, `packed-refs.lock`, reftable's
    //    `tables.list.lock`) left by a process that died, and a pipeline holder whose lock is free.
    for lock in store.lock_files() {
        let secs = lock.age.as_secs();
        let what = if lock.ours {
            format!(
                "{} is {secs} s old: a writer that died left it (or a git is moving the ref right now); git refuses to move the ref while it exists, and the next record write removes it once it is 10 s old",
                lock.path.display()
            )
        } else {
            format!(
                "{} is {secs} s old: git holds it while it writes refs, and while it exists every ref update that needs it fails (exit 75); a git that died leaves it behind. Remove it only when no git command is running in this repository",
                lock.path.display()
            )
        };
        findings.push(Finding {
            kind: "stale-lock".into(),
            what,
            fix: format!("rm '{}'", lock.path.display()),
        });
    }
    let pipeline_lock = crate::store::LockName::pipeline();
    let holder = store.lock_path(&pipeline_lock).with_extension("holder");
    if holder.exists() {
        if let Ok(Some(_free)) = store.try_lock(&pipeline_lock) {
            findings.push(Finding {
                kind: "stale-lock".into(),
                what: format!(
                    "{} names a pipeline run that is gone (its lock is free)",
                    holder.display()
                ),
                fix: format!("rm '{}'", holder.display()),
            });
        }
    }

    // 3. Chains that diverged from the remote's (as last fetched).
    for (name, theirs) in super::staged(store, remote)? {
        let Some(ours) = store.ref_target(&name)? else {
            continue;
        };
        if ours == theirs
            || store.is_ancestor(&ours.to_string(), &theirs.to_string())?
            || store.is_ancestor(&theirs.to_string(), &ours.to_string())?
        {
            continue;
        }
        let fix = match name.strip_prefix(refs::CONTRACTS) {
            Some(sprint) => format!(
                "git rails sync --keep-remote {sprint} {remote} && git rails contract freeze {sprint} --bump"
            ),
            None => format!("git rails sync {remote}"),
        };
        findings.push(Finding {
            kind: "diverged".into(),
            what: format!("{name} diverged from {remote}'s"),
            fix,
        });
    }

    // 4. Evidence chains that do not replay, and records that carry files no commit holds.
    for (sprint, tip) in store.refs_under(refs::EVIDENCE)? {
        let sprint = SprintId::recorded(&sprint);
        if let Some(what) = crate::evidence::chain::memo_disagrees(store, &sprint)? {
            findings.push(Finding {
                kind: "kept-replay".into(),
                what,
                fix: format!(
                    "rm {} (the next command replays the chain again)",
                    store
                        .memo_path(crate::store::cache::Memo::EvidenceReplay, sprint.as_str())
                        .display()
                ),
            });
        }
        let derived = crate::evidence::chain::derive_at(store, &sprint, tip)?;
        if let Some(p) = &derived.problem {
            findings.push(Finding {
                kind: "evidence-chain".into(),
                what: p.line(&sprint),
                fix: p.fix(&sprint),
            });
        }
        for (tree, paths) in uncommitted_content(store, tip)? {
            let shown: Vec<&str> = paths.iter().take(5).map(String::as_str).collect();
            findings.push(Finding {
                kind: "untracked-content".into(),
                what: format!(
                    "{}{sprint} carries trees/{} with {} file{} no commit holds ({}{}): records written before untracked files were left out may hold private files",
                    refs::EVIDENCE,
                    &tree[..12.min(tree.len())],
                    paths.len(),
                    if paths.len() == 1 { "" } else { "s" },
                    shown.join(", "),
                    if paths.len() > 5 { ", …" } else { "" }
                ),
                fix: format!(
                    "if any of them is private, rewrite the chain locally before it is ever pushed: note where each criterion stands (`git rails status {sprint}`), drop the chain with `git update-ref -d {}{sprint}` (and `rm -r .git/rails/cache/evidence`), then record again with this version, which stores tracked content only; if it was pushed already, treat those files as leaked",
                    refs::EVIDENCE
                ),
            });
        }
    }

    // 5. Records holding a known token format (`redact::records`), as pre-push would refuse.
    findings.extend(secrets(store, remote)?);

    // 6. Hook scripts missing, not executable, outdated or shadowed.
    for p in crate::hooks::status(store).problems {
        findings.push(Finding {
            kind: "hook".into(),
            what: p,
            fix: "git rails hooks install".into(),
        });
    }

    let mut notices = Vec::new();
    if crate::policy::Policy::load(store, crate::policy::Source::Clone)?.is_none() {
        notices.push(crate::policy::NO_POLICY_NOTICE.to_string());
    }
    Ok(Report {
        schema: SCHEMA,
        remote: remote.to_string(),
        findings,
        notices,
    })
}
