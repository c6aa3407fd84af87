//! Ref namespaces, in one place: every name of a ref the tools write is built and recognised
//! here, so a namespace is renamed or added in one file and sync, the hooks and the guard agree
//! on what a record ref is.

use std::fmt::Display;

/// Everything `git rails` writes lives under here.
pub const RAILS: &str = "refs/rails/";
/// Everything `git spar` writes lives under here.
pub const SPAR: &str = "refs/spar/";
/// Git's notes refs (ours are [`NOTES_RAILS`] and [`NOTES_SPAR`]).
pub const NOTES: &str = "refs/notes/";

pub const CONTRACTS: &str = "refs/rails/contracts/";
pub const EVIDENCE: &str = "refs/rails/evidence/";
pub const PIPELINE: &str = "refs/rails/pipeline/";
pub const AGENT_STOPS: &str = "refs/rails/agent-stops/";
pub const SPAR_SERIES: &str = "refs/spar/series/";
pub const NOTES_RAILS: &str = "refs/notes/rails";
pub const NOTES_SPAR: &str = "refs/notes/spar";

/// Where sync stages and keeps what it fetched (`refs/rails-sync/…`); never a record itself.
const SYNC: &str = "refs/rails-sync/";

/// A namespace of record refs: one ref a key (a sprint, a series) under a prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespace {
    /// `refs/rails/contracts/<sprint>`: a sprint's frozen contract versions.
    Contracts,
    /// `refs/rails/evidence/<sprint>`: a sprint's failing-first cycles.
    Evidence,
    /// `refs/rails/pipeline/<sprint>`: a sprint's pipeline events.
    Pipeline,
    /// `refs/rails/agent-stops/<sprint>`: what the agent-stop hook decided.
    AgentStops,
    /// `refs/spar/series/<series>`: a review series' rounds.
    SparSeries,
}

impl Namespace {
    /// The namespaces whose refs travel with sync, in the order sync lists them.
    pub const TRAVELLING: [Namespace; 4] = [
        Namespace::Contracts,
        Namespace::Evidence,
        Namespace::Pipeline,
        Namespace::SparSeries,
    ];

    /// The prefix every ref of the namespace starts with (ends in `/`).
    pub const fn prefix(self) -> &'static str {
        match self {
            Namespace::Contracts => CONTRACTS,
            Namespace::Evidence => EVIDENCE,
            Namespace::Pipeline => PIPELINE,
            Namespace::AgentStops => AGENT_STOPS,
            Namespace::SparSeries => SPAR_SERIES,
        }
    }

    /// The full name of the ref of `key` in the namespace.
    pub fn name(self, key: impl Display) -> String {
        format!("{}{key}", self.prefix())
    }

    /// The key of `name` when it is a ref of the namespace.
    pub fn key_of(self, name: &str) -> Option<&str> {
        name.strip_prefix(self.prefix())
    }
}

/// The notes refs that travel with sync.
pub const TRAVELLING_NOTES: [&str; 2] = [NOTES_RAILS, NOTES_SPAR];

/// A record ref that travels with sync, recognised by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record<'a> {
    Contract(&'a str),
    Evidence(&'a str),
    Pipeline(&'a str),
    SparSeries(&'a str),
    /// `refs/notes/rails` or `refs/notes/spar`.
    Notes,
}

impl<'a> Record<'a> {
    /// The record `name` is, or None when it is no record ref that travels.
    pub fn parse(name: &'a str) -> Option<Record<'a>> {
        if let Some(k) = Namespace::Contracts.key_of(name) {
            Some(Record::Contract(k))
        } else if let Some(k) = Namespace::Evidence.key_of(name) {
            Some(Record::Evidence(k))
        } else if let Some(k) = Namespace::Pipeline.key_of(name) {
            Some(Record::Pipeline(k))
        } else if let Some(k) = Namespace::SparSeries.key_of(name) {
            Some(Record::SparSeries(k))
        } else if TRAVELLING_NOTES.contains(&name) {
            Some(Record::Notes)
        } else {
            None
        }
    }
}

/// The refs only `git rails` / `git spar` write, as prefixes a command line may name.
pub const WRITTEN_BY_US: [&str; 4] = [RAILS, SPAR, NOTES_RAILS, NOTES_SPAR];

/// Whether a ref carries records (ours or anyone's notes): pre-push never blocks one.
pub fn carries_records(name: &str) -> bool {
    name.starts_with(RAILS) || name.starts_with(SPAR) || name.starts_with(NOTES)
}

/// Whether a pushed ref is one pre-receive holds to the record rules (never deleted, never
/// rewritten).
pub fn is_guarded(name: &str) -> bool {
    name.starts_with(RAILS) || name.starts_with(SPAR)
}

/// The namespaces sync fetches and pushes, as (the remote's pattern, the pattern under the
/// staging prefix).
pub const SYNC_SPACES: [(&str, &str); 4] = [
    ("refs/rails/*", "rails/*"),
    ("refs/spar/*", "spar/*"),
    ("refs/notes/rails*", "notes/rails*"),
    ("refs/notes/spar*", "notes/spar*"),
];

/// Where sync stages the records fetched from `remote`: `refs/rails-sync/<remote>/`.
pub fn sync_staging(remote: &str) -> String {
    format!("{SYNC}{remote}/")
}

/// The staged copy of the local ref `local` (`refs/x/y` → `refs/rails-sync/<remote>/x/y`).
pub fn sync_staged(remote: &str, local: &str) -> String {
    let rest = local.strip_prefix("refs/").unwrap_or(local);
    format!("{}{rest}", sync_staging(remote))
}

/// The local name of a ref staged from `remote` (`refs/rails-sync/<remote>/x/y` → `refs/x/y`).
pub fn sync_local(remote: &str, staged: &str) -> Option<String> {
    let rest = staged.strip_prefix(&sync_staging(remote))?;
    Some(format!("refs/{rest}"))
}

/// Where sync keeps a local contract chain it superseded: reachable, never a record.
pub fn sync_kept_contract(sprint: impl Display, commit: impl Display) -> String {
    format!("{SYNC}kept/contracts/{sprint}/{commit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_recognised_by_namespace() {
        assert_eq!(
            Record::parse("refs/rails/evidence/S-1"),
            Some(Record::Evidence("S-1"))
        );
        assert_eq!(
            Record::parse("refs/spar/series/x"),
            Some(Record::SparSeries("x"))
        );
        assert_eq!(Record::parse("refs/notes/spar"), Some(Record::Notes));
        assert_eq!(Record::parse("refs/notes/spare"), None);
        assert_eq!(Record::parse("refs/rails/agent-stops/S-1"), None);
        assert_eq!(Namespace::Contracts.name("S-1"), "refs/rails/contracts/S-1");
    }

    #[test]
    fn staged_names_round_trip() {
        let staged = sync_staged("origin", "refs/rails/evidence/S-1");
        assert_eq!(staged, "refs/rails-sync/origin/rails/evidence/S-1");
        assert_eq!(
            sync_local("origin", &staged).as_deref(),
            Some("refs/rails/evidence/S-1")
        );
        assert_eq!(sync_local("other", &staged), None);
    }
}
