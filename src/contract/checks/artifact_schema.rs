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

/// boon's only loader: with `frozen`, the `$ref`s of a frozen schema resolve among the frozen
/// files only (nothing is read from the work tree); without, from disk. Every URL that is not
/// `file:` (`http:`, `https:`, …) is refused, so a check never reaches the network; the draft
/// metaschemas are built into boon and never come here.
pub(super) struct SchemaFiles {
    pub(super) frozen: Option<BTreeMap<String, Vec<u8>>>,
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

impl boon::UrlLoader for SchemaFiles {
    fn load(&self, url: &str) -> std::result::Result<Value, Box<dyn std::error::Error>> {
        // boon hands over absolute `file:` URLs without their fragment.
        let Some(path) = url.strip_prefix("file://") else {
            return Err("only file references are followed, never the network".into());
        };
        let path = percent_decode(path.split(['?', '#']).next().unwrap_or_default());
        match &self.frozen {
            Some(files) => {
                let rel = path.trim_start_matches('/');
                match files.get(rel) {
                    Some(bytes) => Ok(serde_json::from_slice(bytes)?),
                    None => Err(format!("{rel} was not frozen with the contract").into()),
                }
            }
            None => Ok(serde_json::from_slice(&fs::read(&path)?)?),
        }
    }
}

/// The failures boon found, each `(JSON pointer, what failed)`: the leaves of its tree of
/// errors, except that a failed `anyOf` / `oneOf` is one failure (the reasons each
/// alternative failed for would read as several).
fn failures(e: &boon::ValidationError, out: &mut Vec<(String, String)>) {
    let alternatives = matches!(e.kind, boon::ErrorKind::AnyOf | boon::ErrorKind::OneOf(_));
    if e.causes.is_empty() || alternatives {
        out.push((
            e.instance_location.to_string(),
            clip(&e.kind.to_string(), QUOTE_CHARS),
        ));
    } else {
        for cause in &e.causes {
            failures(cause, out);
        }
    }
}

/// Compiles `schema` (its base URI `base`) as draft 2020-12: a top-level `$schema` is dropped,
/// so that a schema naming another draft (or a metaschema of its own) is still read as the
/// documented draft; the files it `$ref`s follow their own `$schema` if they name one.
pub(super) fn compile(
    mut schema: Value,
    base: &str,
    files: SchemaFiles,
) -> std::result::Result<(boon::Schemas, boon::SchemaIndex), String> {
    if let Some(map) = schema.as_object_mut() {
        map.remove("$schema");
    }
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V2020_12);
    compiler.use_loader(Box::new(files));
    let mut schemas = boon::Schemas::new();
    let compiled = match compiler.add_resource(base, schema) {
        Ok(_) => compiler.compile(base, &mut schemas),
        Err(e) => Err(e),
    };
    compiled
        .map(|index| (schemas, index))
        .map_err(|e| format!("{e:#}"))
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
    let (base, files) = match frozen {
        Some(files) => (
            frozen_uri(&crate::contract::pinned::normalize(&spec.schema).unwrap_or_default()),
            SchemaFiles {
                frozen: Some(files.clone()),
            },
        ),
        None => (file_uri(&absolute), SchemaFiles { frozen: None }),
    };
    let (schemas, index) = match compile(schema, &base, files) {
        Ok(compiled) => compiled,
        Err(e) => {
            return Outcome::error(
                format!(
                    "schema {:?} is not a valid JSON Schema (draft 2020-12): {}",
                    spec.schema,
                    clip(&e, 200)
                ),
                no_errors,
            )
        }
    };
    let mut errors: Vec<(String, String)> = Vec::new();
    if let Err(e) = schemas.validate(&artifact, index) {
        failures(&e, &mut errors);
    }
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
