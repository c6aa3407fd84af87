//! The names spar's records are found by: a series (one ref component under
//! `refs/spar/series/`) and a round of it (`<stage>-<n>`). A name is checked once, where a
//! command or a tool takes it; below that it travels as the type, never re-checked.

use std::fmt;

use serde::Serialize;

use super::vocab::Stage;
use crate::error::{Error, Result};

/// What both names are as text: shown, compared with and read as the `str` they hold.
macro_rules! name_text {
    ($name:ident) => {
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }
    };
}

/// A series name: one ref component of at most 100 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct SeriesId(String);

impl SeriesId {
    /// Checks a series name given by a person or a tool (a usage error otherwise).
    pub fn new(series: &str) -> Result<SeriesId> {
        SeriesId::check(series)?;
        Ok(SeriesId(series.to_string()))
    }

    /// A series name taken as it is: one read from a record already in git (a ref under
    /// `refs/spar/series/`, a `round.json`), since records are judged by what they hold, not
    /// refused by name; or one only looked up, never written under (a shell completion, the
    /// series of a branch being pushed): a name that names no series finds no rounds.
    pub fn recorded(series: &str) -> SeriesId {
        SeriesId(series.to_string())
    }

    /// Whether `series` may name a series, without keeping it.
    pub fn check(series: &str) -> Result<()> {
        if series.len() > 100 {
            return Err(Error::usage(format!(
                "series {series:?} is too long: at most 100 characters"
            )));
        }
        match crate::contract::schema::id_rule_broken(series) {
            None => Ok(()),
            Some(rule) => Err(Error::usage(format!(
                "series {series:?} is not valid: {rule}"
            ))),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

name_text!(SeriesId);

/// Parses `<series>:<round>` as `gate`, `report` and `show` name a round (a usage error
/// otherwise: it is not a round at all).
pub fn parse_target(t: &str) -> Result<(SeriesId, RoundName)> {
    match t.split_once(':') {
        Some((s, r)) if !s.is_empty() && !r.is_empty() => {
            Ok((SeriesId::new(s)?, RoundName::named(r)))
        }
        _ => Err(Error::usage(format!(
            "{t:?} is not <series>:<round> (e.g. my-branch:code-1)"
        ))),
    }
}

/// The name of a round in its series: `<stage>-<n>` as `git spar run` names it. A round
/// named otherwise (a hand-made record) is still readable; it has no number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct RoundName(String);

impl RoundName {
    /// The `n`-th round of `stage`.
    pub fn numbered(stage: Stage, n: usize) -> RoundName {
        RoundName(format!("{stage}-{n}"))
    }

    /// A round name as recorded, or as a command or a tool gives it. Its spelling is never
    /// refused: a round is only a name to look up in its series, and one that is not there is
    /// refused by the lookup ("round … is not recorded"), the same for every name.
    pub fn named(round: &str) -> RoundName {
        RoundName(round.to_string())
    }

    /// The stage part of a recorded round name (`code` of `code-3`).
    pub fn stage_of(name: &str) -> Option<&str> {
        name.rsplit_once('-').map(|(s, _)| s)
    }

    /// The number of a round name `<stage>-<n>` (0 when it has none), so `code-10` follows
    /// `code-9`.
    pub fn number_of(name: &str) -> u64 {
        name.rsplit_once('-')
            .and_then(|(_, n)| n.parse().ok())
            .unwrap_or(0)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

name_text!(RoundName);

/// Hashes and compares as its text, so `join` and maps keyed by name take it as a `str`.
impl std::borrow::Borrow<str> for RoundName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_names_are_one_ref_component() {
        assert!(SeriesId::new("feature-x").is_ok());
        assert!(SeriesId::new("a/b").is_err());
        assert!(SeriesId::new(&"x".repeat(101)).is_err());
        assert_eq!(SeriesId::new("s").unwrap().as_str(), "s");
    }

    #[test]
    fn round_names() {
        assert_eq!(
            RoundName::numbered(Stage::PlanDelta, 2).as_str(),
            "plan-delta-2"
        );
        assert_eq!(RoundName::stage_of("plan-delta-2"), Some("plan-delta"));
        assert!(RoundName::number_of("code-10") > RoundName::number_of("code-9"));
        assert_eq!(RoundName::number_of("plan-delta-2"), 2);
        assert_eq!(RoundName::number_of("odd"), 0);
    }

    #[test]
    fn targets_are_checked_once_into_their_types() {
        let (s, r) = parse_target("s:code-1").unwrap();
        assert_eq!((s.as_str(), r.as_str()), ("s", "code-1"));
        // A round name may hold a colon: only the first one parts the series from the round.
        assert_eq!(parse_target("s:a:b").unwrap().1, *"a:b");
        for bad in ["s:", ":r", "s", "S.:r"] {
            let e = parse_target(bad).unwrap_err();
            assert_eq!(e.kind, crate::error::Kind::Usage, "{bad}: {}", e.message);
        }
    }
}
