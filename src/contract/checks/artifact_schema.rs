//! `artifact_schema`: a JSON file valid against a JSON Schema (draft 2020-12). `$ref`s resolve
//! to files only, and a frozen contract's checks read the schemas frozen with it, never the
//! work tree's or the network.

use super::*;

/// `file://` URI of an absolute path, percent-encoding what a URI path cannot hold.
pub(super) fn file_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Resolves the `$ref`s of a frozen schema among the frozen files only: nothing is read from
/// the work tree or the network.
pub(super) struct FrozenRetriever {
    pub(super) files: BTreeMap<String, Vec<u8>>,
}

/// The base URI of a frozen file: `file:///<repository path>`.
pub(super) fn frozen_uri(rel: &str) -> String {
    file_uri(&Path::new("/").join(rel))
}

pub(super) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl jsonschema::Retrieve for FrozenRetriever {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> std::result::Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let path = percent_decode(uri.path().as_str());
        let rel = path.trim_start_matches('/');
        match self.files.get(rel) {
            Some(bytes) => Ok(serde_json::from_slice(bytes)?),
            None => Err(format!("{rel} was not frozen with the contract").into()),
        }
    }
}

pub(super) fn artifact_schema(
    spec: &ArtifactSchemaSpec,
    root: &Path,
    frozen: Option<&BTreeMap<String, Vec<u8>>>,
) -> Outcome {
    let no_errors = json!({"errors": []});
    let schema_path = root.join(&spec.schema);
    let read = match frozen {
        // The schema as frozen: the work tree's copy is not read at all.
        Some(files) => {
            match crate::contract::pinned::normalize(&spec.schema).and_then(|p| files.get(&p)) {
                Some(bytes) => Ok(bytes.clone()),
                None => {
                    return Outcome::error(
                        format!("schema {:?} was not frozen with the contract", spec.schema),
                        no_errors,
                    )
                }
            }
        }
        None => fs::read(&schema_path),
    };
    let schema: Value = match read {
        Ok(bytes) => match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => {
                return Outcome::error(
                    format!("schema {:?} is not JSON: {e}", spec.schema),
                    no_errors,
                )
            }
        },
        Err(e) => {
            return Outcome::error(
                format!("cannot read schema {:?}: {e}", spec.schema),
                no_errors,
            )
        }
    };
    let artifact: Value = match read_file(&spec.path, root, &no_errors) {
        Ok(bytes) => match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => return Outcome::fail(format!("{:?} is not JSON: {e}", spec.path), no_errors),
        },
        Err(o) => return *o,
    };
    // Relative `$ref`s resolve next to the schema file (file references only, never the network).
    let absolute = if schema_path.is_absolute() {
        schema_path
    } else {
        std::env::current_dir()
            .map(|d| d.join(&schema_path))
            .unwrap_or(schema_path)
    };
    let options = jsonschema::options().with_draft(jsonschema::Draft::Draft202012);
    let options = match frozen {
        Some(files) => options
            .with_base_uri(frozen_uri(
                &crate::contract::pinned::normalize(&spec.schema).unwrap_or_default(),
            ))
            .with_retriever(FrozenRetriever {
                files: files.clone(),
            }),
        None => options.with_base_uri(file_uri(&absolute)),
    };
    let validator = match options.build(&schema) {
        Ok(v) => v,
        Err(e) => {
            return Outcome::error(
                format!(
                    "schema {:?} is not a valid JSON Schema (draft 2020-12): {}",
                    spec.schema,
                    clip(&e.to_string(), 200)
                ),
                no_errors,
            )
        }
    };
    let errors: Vec<(String, String)> = validator
        .iter_errors(&artifact)
        .map(|e| {
            (
                e.instance_path().to_string(),
                clip(&e.to_string(), QUOTE_CHARS),
            )
        })
        .collect();
    let evidence = json!({
        "errors": errors
            .iter()
            .map(|(at, message)| json!({"instancePath": at, "message": message}))
            .collect::<Vec<_>>()
    });
    match errors.first() {
        None => Outcome::pass(
            format!("{:?} validates against {:?}", spec.path, spec.schema),
            evidence,
        ),
        Some((at, message)) => {
            let at = if at.is_empty() { "(root)" } else { at.as_str() };
            Outcome::fail(
                format!(
                    "{:?}: {}; first at {at}: {}",
                    spec.path,
                    plural(errors.len(), "validation error", "validation errors"),
                    clip(message, 160)
                ),
                evidence,
            )
        }
    }
}
