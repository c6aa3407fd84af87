//! How a frozen contract's chain compares with another clone's: it never merges (a version is
//! frozen once), so two clones that froze different contents for one version are a conflict,
//! described by the versions each side froze after the last one they share.

use serde::Serialize;

use crate::error::Result;
use crate::store::{CommitInfo, ObjectId, Store};

/// One frozen version on one side of a contract conflict.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionSide {
    pub version: String,
    pub commit: String,
    /// The blob id of the version's `contract.json` (what `git hash-object` prints for it).
    pub digest: String,
}

/// The versions each side froze after the last version they share.
pub fn sides(
    store: &Store,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<(Vec<VersionSide>, Vec<VersionSide>, Option<String>)> {
    let a = store.chain(ours)?;
    let b = store.chain(theirs)?;
    let shared = a
        .iter()
        .zip(b.iter())
        .take_while(|(x, y)| x.id == y.id)
        .count();
    let side = |chain: &[CommitInfo]| -> Result<Vec<VersionSide>> {
        chain
            .iter()
            .map(|c| {
                let digest = match store.read_file(c.id, "contract.json")? {
                    Some(bytes) => store.blob_id(&bytes)?.to_string(),
                    None => String::from("(no contract.json)"),
                };
                Ok(VersionSide {
                    version: c
                        .trailer("Rails-Contract-Version")
                        .unwrap_or_else(|| "?".into()),
                    commit: c.id.to_string(),
                    digest,
                })
            })
            .collect()
    };
    let base = shared
        .checked_sub(1)
        .and_then(|i| a.get(i))
        .and_then(|c| c.trailer("Rails-Contract-Version"));
    Ok((side(&a[shared..])?, side(&b[shared..])?, base))
}
