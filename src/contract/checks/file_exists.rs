//! `file_exists` (a DoD check) and the `file_exists` prerequisite: the path exists, of the
//! type asked, and (for a check) not empty unless allowed.

use super::*;

pub(super) fn file_exists(spec: &FileExistsSpec, root: &Path) -> Outcome {
    let full = root.join(&spec.path);
    let path = spec.path.as_str();
    let meta = match fs::metadata(&full) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Outcome::fail(
                format!("{path:?} is missing"),
                json!({"path": path, "type": null, "size": null}),
            )
        }
        Err(e) => {
            return Outcome::error(
                format!("cannot read {path:?}: {e}"),
                json!({"path": path, "type": null, "size": null}),
            )
        }
    };
    let found = if meta.is_dir() {
        "dir"
    } else if meta.is_file() {
        "file"
    } else {
        "other"
    };
    let evidence = json!({"path": path, "type": found, "size": meta.len()});
    let wanted = spec.file_type.map(|t| match t {
        FileType::File => "file",
        FileType::Dir => "dir",
    });
    match wanted {
        Some(want) if want != found => {
            Outcome::fail(format!("{path:?} is a {found}, not a {want}"), evidence)
        }
        _ if found == "dir" => Outcome::pass(format!("{path:?} is a directory"), evidence),
        _ => Outcome::pass(
            format!(
                "{path:?} exists ({})",
                plural(meta.len() as usize, "byte", "bytes")
            ),
            evidence,
        ),
    }
}

/// The `file_exists` prerequisite: the path exists, whatever its type.
pub(super) fn path_exists(path: &str, root: &Path) -> Outcome {
    file_exists(
        &FileExistsSpec {
            path: path.to_string(),
            file_type: None,
        },
        root,
    )
}
