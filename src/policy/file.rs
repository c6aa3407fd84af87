//! `.rails/policy.toml`: the policy a team commits and changes by pull request.
//!
//! ```toml
//! allowedSigners = ".rails/allowed_signers"   # a path in the same commit
//! planner = ["alice@example.com"]
//! person = ["alice@example.com", "bob@example.com"]
//! verifier = ["ci@example.com"]
//!
//! [owes]
//! "refs/heads/main" = ["SPRINT-002"]
//! ```
//!
//! It is always read from a commit (never the work tree): what a reviewer saw merged is what
//! decides. It runs nothing, so a clone's file needs no trust to be read.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use super::{full_ref, Role, Said};
use crate::error::{Error, Result};
use crate::store::{ObjectId, Store};

/// Where the committed policy lives.
pub const POLICY_FILE: &str = ".rails/policy.toml";

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PolicyFile {
    allowed_signers: Option<String>,
    #[serde(default)]
    planner: Vec<String>,
    #[serde(default)]
    person: Vec<String>,
    #[serde(default)]
    verifier: Vec<String>,
    #[serde(default)]
    owes: BTreeMap<String, Vec<String>>,
}

/// What the policy file at `commit` says; None when the commit has none.
pub(super) fn read(store: &Store, commit: ObjectId) -> Result<Option<Said>> {
    let tree = store.tree_of(commit)?;
    let Some(bytes) = store.read_file_in_tree(tree, POLICY_FILE)? else {
        return Ok(None);
    };
    let short = &commit.to_string()[..7];
    let at = format!("{POLICY_FILE} at {short}");
    let text =
        String::from_utf8(bytes).map_err(|_| Error::refused(format!("{at} is not UTF-8 text")))?;
    let parsed: PolicyFile = toml::from_str(&text).map_err(|e| {
        Error::refused(format!("{at} cannot be read: {}", e.message())).hint(format!(
            "fix {POLICY_FILE} in a commit of its own (a person signs it)"
        ))
    })?;
    let mut said = Said::default();
    if let Some(path) = parsed.allowed_signers {
        let path = path.trim_start_matches("./").to_string();
        let content = store.read_file_in_tree(tree, &path)?.ok_or_else(|| {
            Error::refused(format!(
                "{at} names allowedSigners {path:?}, which that commit does not hold"
            ))
            .hint("commit the allowed-signers file beside the policy")
        })?;
        let content = String::from_utf8(content)
            .map_err(|_| Error::refused(format!("{path} at {short} is not UTF-8 text")))?;
        said.allowed_signers = Some((at, content));
        said.signers_path = Some(path);
    }
    for (role, names) in [
        (Role::Planner, parsed.planner),
        (Role::Person, parsed.person),
        (Role::Verifier, parsed.verifier),
    ] {
        let names: BTreeSet<String> = names.into_iter().collect();
        if !names.is_empty() {
            said.roles.insert(role, names);
        }
    }
    said.owes = parsed
        .owes
        .into_iter()
        .map(|(r, s)| (full_ref(&r), s))
        .collect();
    Ok(Some(said))
}
