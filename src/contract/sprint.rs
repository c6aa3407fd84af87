//! [`SprintId`]: a sprint's name, checked once where it enters (a command's argument, an MCP
//! tool's argument, a hook's input, a branch's binding), then carried typed through contracts,
//! evidence, the pipeline, the hooks and sync, so nothing below re-checks it or forgets to.

use std::fmt;
use std::ops::Deref;

use serde::Serialize;

use crate::error::{Error, Result};

/// A sprint id that is usable as one git ref component and a file name (see
/// [`super::schema::check_sprint_id`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct SprintId(String);

impl SprintId {
    /// Checks `id`; a bad one is a usage error that says which rule it breaks.
    pub fn parse(id: &str) -> Result<SprintId> {
        super::schema::check_sprint_id(id).map_err(Error::usage)?;
        Ok(SprintId(id.to_string()))
    }

    /// A sprint a record already in git names (a record ref `refs/rails/evidence/<sprint>`, a
    /// kept agent session), taken as it is: git holds it as a ref name, and a record is judged
    /// by what it holds, never refused for its name (a remote's ref that no `git rails` could
    /// have written is judged, and reported, like any other).
    pub fn recorded(key: &str) -> SprintId {
        SprintId(key.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for SprintId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SprintId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SprintId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for SprintId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for SprintId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sprint_id_is_checked_once_where_it_enters() {
        assert_eq!(SprintId::parse("S-1").unwrap().as_str(), "S-1");
        for bad in ["", "-x", "a b", "x.lock", "a..b", "x."] {
            let e = SprintId::parse(bad).unwrap_err();
            assert_eq!(e.kind, crate::error::Kind::Usage, "{bad}");
        }
        assert_eq!(SprintId::recorded("S-1"), "S-1");
    }
}
