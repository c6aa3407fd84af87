//! Who decides: whose signatures count, and for what.
//!
//! The records prove that observations happened in order; they do not prove who set the bar or
//! who waived it. A policy says so: an allowed-signers file (ssh-keygen's format, the one
//! `gpg.ssh.allowedSignersFile` names) and three roles, each a set of principals of that file —
//! **planners** sign definitions of done (contract versions), **persons** make the decisions only
//! a person can make (waivers, acceptances), **verifiers** sign attestations. Roles name
//! people's keys, not the pipeline's actors.
//!
//! Where it comes from ([`Source`]):
//! - git configuration: `rails.allowedSigners <file>` and the multi-valued `rails.planner`,
//!   `rails.person`, `rails.verifier`, and `rails.owes <ref>=<sprint>`;
//! - the committed file `.rails/policy.toml` ([`file`]), read from a commit: in a clone from
//!   HEAD, on a server from the protected branch as it stood *before* the push (never from the
//!   pushed commits), in CI from the pull request's base (`verify --policy-from <rev>`).
//!
//! A server's own git configuration is authoritative: when it names `rails.allowedSigners`, the
//! file is not read. In a clone (and in CI), git configuration may only tighten what the file
//! says: a role set in both is the principals named in both; the allowed-signers file and the
//! roles of a committed policy are never widened by a clone's configuration.
//!
//! Only SSH signatures are checked (by `ssh-keygen -Y find-principals` and `-Y verify`, namespace
//! `git`, as `git verify-commit` checks them); an OpenPGP or X.509 signature is "signed by a key
//! outside the policy".

mod file;
mod signer;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

pub use file::POLICY_FILE;
pub use signer::Signer;

use crate::error::{Error, Result};
use crate::store::{ObjectId, Store};

/// What a principal may sign for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Signs definitions of done: a contract version counts for a protected ref only so.
    Planner,
    /// Makes the decisions only a person can make: a waiver, an acceptance, an answer.
    Person,
    /// Signs attestations of a verified sprint or a review gate.
    Verifier,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Planner => "planner",
            Role::Person => "person",
            Role::Verifier => "verifier",
        }
    }

    const ALL: [Role; 3] = [Role::Planner, Role::Person, Role::Verifier];
}

/// The policy in force.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Where it was read from, for messages ("git config", ".rails/policy.toml at 1a2b3c4").
    pub source: String,
    /// The allowed-signers file's content.
    allowed_signers: String,
    /// Its path in the commit the policy was read from (None: from git configuration).
    signers_path: Option<String>,
    roles: BTreeMap<Role, BTreeSet<String>>,
    /// Sprints a protected ref owes, by full ref name.
    owes: BTreeMap<String, Vec<String>>,
}

/// Where to look for the committed policy file.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// A clone: the file at HEAD, tightened by git configuration.
    Clone,
    /// A commit named on purpose (CI: the pull request's base), tightened by git configuration.
    At(ObjectId),
    /// A server judging an update: its own git configuration when it names an allowed-signers
    /// file, else the file on the protected ref before the push (None: the ref is new).
    Server(Option<ObjectId>),
}

/// What one source says, before sources are combined.
#[derive(Debug, Default, Clone)]
struct Said {
    allowed_signers: Option<(String, String)>,
    signers_path: Option<String>,
    roles: BTreeMap<Role, BTreeSet<String>>,
    owes: BTreeMap<String, Vec<String>>,
}

impl Policy {
    /// The policy in force for `source`, or None when nothing names an allowed-signers file.
    pub fn load(store: &Store, source: Source) -> Result<Option<Policy>> {
        let config = from_config(store)?;
        let committed = match source {
            Source::Clone => match store.head_commit()? {
                Some(c) => file::read(store, c)?,
                None => None,
            },
            Source::At(c) => file::read(store, c)?,
            Source::Server(_) if config.allowed_signers.is_some() => None,
            Source::Server(Some(c)) => file::read(store, c)?,
            Source::Server(None) => None,
        };
        let said = match committed {
            None => config,
            Some(file) => tighten(file, config),
        };
        let Some((source, allowed_signers)) = said.allowed_signers else {
            return Ok(None);
        };
        Ok(Some(Policy {
            source,
            allowed_signers,
            signers_path: said.signers_path,
            roles: said.roles,
            owes: said.owes,
        }))
    }

    /// The allowed-signers file's path in the commit the policy came from, when it came from
    /// the committed file.
    pub fn signers_path(&self) -> Option<&str> {
        self.signers_path.as_deref()
    }

    /// The allowed-signers file's content (what a memo of a signature check is keyed by).
    pub fn allowed_signers(&self) -> &str {
        &self.allowed_signers
    }

    /// The principals holding `role`.
    pub fn principals(&self, role: Role) -> Vec<&str> {
        self.roles
            .get(&role)
            .map(|s| s.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// Whether `signer` holds `role` under this policy.
    pub fn allows(&self, signer: &Signer, role: Role) -> bool {
        match signer {
            Signer::Allowed { principals } => principals
                .iter()
                .any(|p| self.roles.get(&role).is_some_and(|r| r.contains(p))),
            _ => false,
        }
    }

    /// Who signed commit `id`, judged against this policy's allowed signers.
    pub fn signer(&self, store: &Store, id: ObjectId) -> Result<Signer> {
        signer::of_commit(store, &self.allowed_signers, id)
    }

    /// The sprints the policy says `refname` owes.
    pub fn owed_by(&self, refname: &str) -> &[String] {
        self.owes.get(refname).map(Vec::as_slice).unwrap_or(&[])
    }

    /// `alice@example.com (planner, person)` or `unsigned`, for status lines.
    pub fn describe(&self, signer: &Signer) -> String {
        match signer {
            Signer::Allowed { principals } => {
                let roles: Vec<&str> = Role::ALL
                    .into_iter()
                    .filter(|r| self.allows(signer, *r))
                    .map(Role::as_str)
                    .collect();
                if roles.is_empty() {
                    format!("{} (no role)", principals.join(", "))
                } else {
                    format!("{} ({})", principals.join(", "), roles.join(", "))
                }
            }
            other => other.describe(),
        }
    }
}

/// The notice shown where no policy is in force: it changes no exit code.
pub const NO_POLICY_NOTICE: &str = "no signing policy is in force (rails.allowedSigners or .rails/policy.toml): anyone who can push can define done for their own push";

/// The command that sets a policy up, for hints.
pub const SETUP_HINT: &str = "see the guide's \"Who decides\" chapter: `git config rails.allowedSigners <file>` and `git config --add rails.planner <principal>`";

/// What git configuration says.
fn from_config(store: &Store) -> Result<Said> {
    let mut said = Said::default();
    if let Some(path) = store.config_string("rails.allowedSigners") {
        let full = resolve(store, &path);
        let content = std::fs::read_to_string(&full).map_err(|e| {
            Error::refused(format!(
                "rails.allowedSigners names {}, which cannot be read: {e}",
                full.display()
            ))
            .hint("point it at an allowed-signers file: `git config rails.allowedSigners <file>`")
        })?;
        said.allowed_signers = Some((format!("git config ({})", full.display()), content));
    }
    for role in Role::ALL {
        let names: BTreeSet<String> = store
            .config_strings(&format!("rails.{}", role.as_str()))
            .into_iter()
            .flat_map(|v| v.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .collect();
        if !names.is_empty() {
            said.roles.insert(role, names);
        }
    }
    for v in store.config_strings("rails.owes") {
        let Some((r, sprint)) = v.split_once('=') else {
            return Err(
                Error::refused(format!("rails.owes {v:?} is not <ref>=<sprint>"))
                    .hint("e.g. `git config --add rails.owes refs/heads/main=SPRINT-002`"),
            );
        };
        said.owes
            .entry(full_ref(r.trim()))
            .or_default()
            .push(sprint.trim().to_string());
    }
    Ok(said)
}

/// A committed policy tightened by a clone's configuration: a role both set is the principals
/// both name; the file's allowed signers stay; owed sprints add up (owing more is tighter).
fn tighten(file: Said, config: Said) -> Said {
    let mut roles = file.roles.clone();
    for (role, names) in config.roles {
        let narrowed = match file.roles.get(&role) {
            Some(f) => f.intersection(&names).cloned().collect(),
            None => BTreeSet::new(), // the file gives this role to nobody: config cannot add
        };
        roles.insert(role, narrowed);
    }
    let mut owes = file.owes;
    for (r, sprints) in config.owes {
        owes.entry(r).or_default().extend(sprints);
    }
    Said {
        allowed_signers: file.allowed_signers,
        signers_path: file.signers_path,
        roles,
        owes,
    }
}

/// `main` → `refs/heads/main`; a full ref name stays.
fn full_ref(r: &str) -> String {
    if r.starts_with("refs/") {
        r.to_string()
    } else {
        format!("refs/heads/{r}")
    }
}

/// A configured path: absolute, or relative to the work tree's top (a bare repository's git
/// directory).
fn resolve(store: &Store, path: &str) -> PathBuf {
    let p = PathBuf::from(path);
    if p.is_absolute() {
        return p;
    }
    if let Some(rest) = path.strip_prefix("~/") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(rest);
        }
    }
    match store.workdir() {
        Ok(w) => w.join(p),
        Err(_) => store.git_dir().join(p),
    }
}

#[cfg(test)]
mod tests;
