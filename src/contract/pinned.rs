//! What a check reads is frozen with it.
//!
//! A check that reads a file of the repository to decide — an `artifact_schema`'s schema and
//! the files it `$ref`s, a `manual_checklist`'s list of items, the test files a contract
//! declares in `checkPaths` — would otherwise be judged against whatever that file says when
//! the check runs: replace the schema with `{}`, or delete the unticked items, and the check
//! passes without the work. So `freeze` captures them into the version's commit:
//! `pinned/<path>` holds each file's content and `pinned.json` says what was captured and why.
//! `artifact_schema` then validates against the frozen schema, a checklist's items are those
//! frozen, and a test file of `checkPaths` that differs from its frozen content makes the
//! criteria that run it ask for `reopen`, as a changed spec does.
//!
//! Only tracked files are captured: nothing git does not track goes into a record.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::schema::{Check, CheckKind, CheckSpec, Contract};
use super::validate::glob_matcher;
use crate::error::{Error, Result};
use crate::store::{ObjectId, Store};

/// The manifest in a version's tree.
pub const PINNED_FILE: &str = "pinned.json";
/// The folder of a version's tree that holds the captured files, by repository path.
pub const PINNED_DIR: &str = "pinned";
pub const SCHEMA: &str = "rails-pinned/v1";

/// Files to add to a version's tree: path and content.
pub type Files = Vec<(String, Vec<u8>)>;

/// `pinned.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Pinned {
    pub schema: String,
    /// Each captured file by repository path: its blob id and why it was captured.
    #[serde(default)]
    pub files: BTreeMap<String, PinnedFile>,
    /// Each `manual_checklist` criterion without its own `items`: the items its checklist
    /// held at freeze.
    #[serde(default)]
    pub checklists: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PinnedFile {
    pub blob: String,
    /// `schema of c3`, `$ref of schemas/a.json`, `checkPaths`.
    pub why: Vec<String>,
}

impl Pinned {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.checklists.is_empty()
    }

    /// The blob ids of the files captured for `checkPaths`.
    pub fn check_path_blobs(&self) -> BTreeMap<&str, &str> {
        self.files
            .iter()
            .filter(|(_, f)| f.why.iter().any(|w| w == "checkPaths"))
            .map(|(p, f)| (p.as_str(), f.blob.as_str()))
            .collect()
    }
}

/// `rel` with `.` and `..` resolved, or None when it leaves the repository.
pub fn normalize(rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The relative file references (`$ref`) of a schema, resolved next to `at`.
fn refs_of(schema: &Value, at: &str, out: &mut Vec<String>) {
    match schema {
        Value::Object(m) => {
            for (k, v) in m {
                if k == "$ref" {
                    if let Some(r) = v.as_str() {
                        let file = r.split('#').next().unwrap_or("");
                        if !file.is_empty() && !file.contains(':') {
                            let dir = at.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
                            // `/x` resolves against `file:///<repo path>`: the top level.
                            let joined = if file.starts_with('/') || dir.is_empty() {
                                file.trim_start_matches('/').to_string()
                            } else {
                                format!("{dir}/{file}")
                            };
                            if let Some(n) = normalize(&joined) {
                                out.push(n);
                            }
                        }
                    }
                } else {
                    refs_of(v, at, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| refs_of(v, at, out)),
        _ => {}
    }
}

/// The items of a Markdown checklist, as `manual_checklist` reads them.
fn checklist_texts(markdown: &str) -> Vec<String> {
    super::checks::checklist_item_texts(markdown)
}

/// Captures one tracked file; returns its bytes the first time it is captured.
fn add(
    store: &Store,
    root: &Path,
    tracked: &BTreeSet<String>,
    pinned: &mut Pinned,
    contents: &mut BTreeMap<String, Vec<u8>>,
    path: &str,
    why: String,
) -> Result<Option<Vec<u8>>> {
    if !tracked.contains(path) {
        return Err(Error::refused(format!(
            "{path} ({why}) is not tracked by git; what a check reads is frozen with the contract, and only tracked files go into records"
        ))
        .hint(format!("`git add {path}`, then freeze again")));
    }
    // A tracked symbolic link may lead outside the repository: its target is never frozen.
    if let Some(problem) = super::confine::problem(root, path) {
        return Err(Error::refused(format!("{path} ({why}): {problem}"))
            .hint("freeze what the check reads as a file of the repository, then freeze again"));
    }
    let bytes = std::fs::read(root.join(path)).map_err(|e| {
        Error::refused(format!("{path} ({why}) cannot be read: {e}"))
            .hint("restore the file, then freeze again")
    })?;
    let blob = store.blob_id(&bytes)?.to_string();
    let entry = pinned
        .files
        .entry(path.to_string())
        .or_insert_with(|| PinnedFile {
            blob,
            why: Vec::new(),
        });
    if !entry.why.contains(&why) {
        entry.why.push(why);
    }
    if contents.contains_key(path) {
        return Ok(None);
    }
    contents.insert(path.to_string(), bytes.clone());
    Ok(Some(bytes))
}

/// Captures what the checks of `contract` read, from the work tree at `root`: the manifest
/// and the files to add to the version's tree (`pinned.json` and `pinned/<path>`; none when
/// nothing is read). Refused when a file to capture is missing or not tracked.
pub fn capture(store: &Store, root: &Path, contract: &Contract) -> Result<(Pinned, Files)> {
    let tracked: BTreeSet<String> = store.tracked_files()?.into_iter().collect();
    let mut pinned = Pinned {
        schema: SCHEMA.to_string(),
        ..Pinned::default()
    };
    let mut contents: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for check in &contract.dod.checks {
        match check.typed_spec() {
            Ok(CheckSpec::ArtifactSchema(a)) => {
                let Some(start) = normalize(&a.schema) else {
                    continue;
                };
                let mut queue = vec![(start, format!("schema of {}", check.id))];
                while let Some((path, why)) = queue.pop() {
                    let Some(bytes) = add(
                        store,
                        root,
                        &tracked,
                        &mut pinned,
                        &mut contents,
                        &path,
                        why,
                    )?
                    else {
                        continue;
                    };
                    if let Ok(v) = serde_json::from_slice::<Value>(&bytes) {
                        let mut refs = Vec::new();
                        refs_of(&v, &path, &mut refs);
                        for r in refs {
                            queue.push((r, format!("$ref of {path}")));
                        }
                    }
                }
            }
            Ok(CheckSpec::ManualChecklist(c)) if c.items.is_none() => {
                let Some(path) = normalize(&c.path) else {
                    continue;
                };
                // A checklist written after the freeze has nothing to capture yet: its
                // items are read when it is surfaced.
                let Ok(text) = std::fs::read(root.join(&path)) else {
                    continue;
                };
                let items = checklist_texts(&String::from_utf8_lossy(&text));
                if items.is_empty() {
                    return Err(Error::refused(format!(
                        "the checklist {path} of {} has no `- [ ] item` line; its items are frozen with the contract",
                        check.id
                    ))
                    .hint("write the items a person must tick, then freeze again"));
                }
                pinned.checklists.insert(check.id.clone(), items);
            }
            _ => {}
        }
    }
    if let Some(globs) = &contract.check_paths {
        let m = glob_matcher(globs)?;
        for path in tracked.iter().filter(|p| m.is_match(p.as_str())) {
            if root.join(path).is_file() {
                add(
                    store,
                    root,
                    &tracked,
                    &mut pinned,
                    &mut contents,
                    path,
                    "checkPaths".to_string(),
                )?;
            }
        }
    }
    if pinned.is_empty() {
        return Ok((pinned, Vec::new()));
    }
    let mut files = Vec::new();
    let mut manifest = serde_json::to_vec_pretty(&pinned)
        .map_err(|e| Error::internal(format!("rendering {PINNED_FILE}: {e}")))?;
    manifest.push(b'\n');
    files.push((PINNED_FILE.to_string(), manifest));
    for (path, bytes) in contents {
        files.push((format!("{PINNED_DIR}/{path}"), bytes));
    }
    Ok((pinned, files))
}

/// The manifest of the version whose tree is `tree`; None for a version frozen before
/// anything was captured (its checks read the work tree, as they always did).
pub fn load(store: &Store, tree: ObjectId) -> Result<Option<Pinned>> {
    let Some(bytes) = store.read_file_in_tree(tree, PINNED_FILE)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::internal(format!("{PINNED_FILE} cannot be read: {e}")))
}

/// The captured contents of the schema files (and their references), by repository path.
pub fn schema_files(
    store: &Store,
    tree: ObjectId,
    pinned: &Pinned,
) -> Result<BTreeMap<String, Vec<u8>>> {
    let mut out = BTreeMap::new();
    for (path, f) in &pinned.files {
        if f.why.iter().any(|w| w != "checkPaths") {
            if let Some(bytes) = store.read_file_in_tree(tree, &format!("{PINNED_DIR}/{path}"))? {
                out.insert(path.clone(), bytes);
            }
        }
    }
    Ok(out)
}

/// The test files of `checkPaths` whose content in `tree` differs from what was frozen:
/// changed, deleted, or new files matching the globs.
pub fn changed_check_paths(
    store: &Store,
    contract: &Contract,
    pinned: Option<&Pinned>,
    tree: ObjectId,
) -> Result<Vec<String>> {
    let (Some(globs), Some(pinned)) = (&contract.check_paths, pinned) else {
        return Ok(Vec::new());
    };
    let m = glob_matcher(globs)?;
    let frozen = pinned.check_path_blobs();
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (path, blob) in store.tree_blobs(tree)? {
        if !m.is_match(path.as_str()) {
            continue;
        }
        if frozen.get(path.as_str()) != Some(&blob.to_string().as_str()) {
            out.push(path.clone());
        }
        seen.insert(path);
    }
    for path in frozen.keys() {
        if !seen.contains(*path) {
            out.push(path.to_string());
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Whether a check runs (or reads) any of `paths`: a `command_success` may run any test file;
/// another kind reads only the file its spec names.
pub fn runs_any(check: &Check, paths: &[String]) -> bool {
    if paths.is_empty() {
        return false;
    }
    if check.kind == CheckKind::CommandSuccess {
        return true;
    }
    let named = check
        .spec
        .get("path")
        .and_then(Value::as_str)
        .and_then(normalize);
    named.is_some_and(|n| paths.contains(&n))
}

#[cfg(test)]
mod tests {
    use super::{normalize, refs_of};

    #[test]
    fn paths_normalize_inside_the_repository_only() {
        assert_eq!(normalize("./a/b/../c.json").as_deref(), Some("a/c.json"));
        assert_eq!(normalize("../x"), None);
    }

    #[test]
    fn relative_refs_resolve_next_to_the_file_and_others_are_left() {
        let schema = serde_json::json!({"$ref": "defs.json#/x", "properties": {
            "a": {"$ref": "../common/a.json"}, "b": {"$ref": "#/local"},
            "c": {"$ref": "https://example.com/s.json"}}});
        let mut out = Vec::new();
        refs_of(&schema, "schemas/out.json", &mut out);
        out.sort();
        assert_eq!(out, ["common/a.json", "schemas/defs.json"]);
    }
}
