//! The project file `.jaekit/spar.toml` (G17, G22, G23, G24): check paths, rules, angles and
//! caps. A user key in it is refused at any depth: who reviews is the user's choice, what a
//! review checks is the project's.

use super::*;

/// Reads the project file into `cfg`: first any user key at any depth (G17), then
/// `check_paths`, `rules`, `angles` and `[caps]`.
pub(super) fn parse_project(
    doc: &Doc,
    fields: Vec<Field>,
    work_tree: &Path,
    cfg: &mut Config,
) -> Result<()> {
    if let Some((line, path)) = find_user_key(&fields, "") {
        return Err(doc.error(
            line,
            format!(
                "{path} is a user setting and may not appear in the project file: a cloned repository must never choose what runs on your machine"
            ),
        ));
    }
    for f in &fields {
        match f.key.as_str() {
            "check_paths" => {
                let globs = doc.strings(f, "check_paths", |g| validate_glob(g).err())?;
                cfg.check_paths = globs
                    .into_iter()
                    .map(|value| Sourced {
                        value,
                        origin: doc.origin(f.line),
                    })
                    .collect();
            }
            "rules" => {
                let items = doc.strings(f, "rules", |_| None)?;
                let mut rules = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let rule = resolve_rule(work_tree, item).map_err(|why| {
                        doc.error(
                            f.line,
                            format!("rules item {} {}: {why}", i + 1, quote(item)),
                        )
                    })?;
                    rules.push(Sourced {
                        value: rule,
                        origin: doc.origin(f.line),
                    });
                }
                cfg.rules = rules;
            }
            "angles" => {
                let names = doc.strings(f, "angles", |a| {
                    Angle::parse(a).is_none().then(|| {
                        format!(
                            "unknown angle; use {}",
                            Angle::ALL.map(Angle::as_str).join(", ")
                        )
                    })
                })?;
                let mut angles: Vec<Angle> = Vec::with_capacity(names.len());
                for name in &names {
                    let angle = Angle::parse(name).ok_or_else(|| {
                        doc.error(f.line, format!("unknown angle {}", quote(name)))
                    })?;
                    if angles.contains(&angle) {
                        return Err(
                            doc.error(f.line, format!("angles names {} twice", quote(name)))
                        );
                    }
                    angles.push(angle);
                }
                if angles.is_empty() {
                    return Err(doc.error(
                        f.line,
                        "angles must name at least one angle; leave the key out for all five",
                    ));
                }
                angles.sort();
                cfg.angles = Sourced {
                    value: angles,
                    origin: doc.origin(f.line),
                };
            }
            "caps" => parse_caps(doc, f, &mut cfg.caps)?,
            other => {
                return Err(doc.error(
                    f.line,
                    format!(
                    "unknown key {}; the project file takes check_paths, rules, angles and [caps]",
                    quote(other)
                ),
                ))
            }
        }
    }
    Ok(())
}

/// The first user key at any depth (G17), with its line and dotted path.
pub(super) fn find_user_key(fields: &[Field], prefix: &str) -> Option<(usize, String)> {
    for f in fields {
        let path = if prefix.is_empty() {
            f.key.clone()
        } else {
            format!("{prefix}.{}", f.key)
        };
        if USER_KEYS.contains(&f.key.as_str()) || f.key.starts_with("allowed_") {
            return Some((f.line, path));
        }
        if let Some(found) = find_user_key_in(&f.val, &path) {
            return Some(found);
        }
    }
    None
}

pub(super) fn find_user_key_in(val: &Val, path: &str) -> Option<(usize, String)> {
    match &val.v {
        V::Table(fields) => find_user_key(fields, path),
        V::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| find_user_key_in(item, &format!("{path}[{i}]"))),
        _ => None,
    }
}

/// Reads `[caps]` (G22): `plan`, `plan_delta`, `code`, integers ≥ 0.
pub(super) fn parse_caps(doc: &Doc, f: &Field, caps: &mut Caps) -> Result<()> {
    let V::Table(fields) = &f.val.v else {
        return Err(doc.error(
            f.line,
            format!("caps must be a table, not {}", f.val.v.describe()),
        ));
    };
    for cap in fields {
        let slot = match cap.key.as_str() {
            "plan" => &mut caps.plan,
            "plan_delta" => &mut caps.plan_delta,
            "code" => &mut caps.code,
            other => {
                return Err(doc.error(
                    cap.line,
                    format!(
                        "unknown key {} in [caps]; caps takes plan, plan_delta and code",
                        quote(other)
                    ),
                ))
            }
        };
        match &cap.val.v {
            V::Int(n) if *n >= 0 => {
                *slot = Sourced {
                    value: n.unsigned_abs(),
                    origin: doc.origin(cap.line),
                }
            }
            other => {
                return Err(doc.error(
                    cap.line,
                    format!(
                        "caps.{} must be an integer of 0 or more, not {}",
                        cap.key,
                        other.describe()
                    ),
                ))
            }
        }
    }
    Ok(())
}

/// Resolves a `rules` item (G23): a relative path inside the work tree, symbolic links resolving
/// inside it, naming a readable regular file.
pub(super) fn resolve_rule(work_tree: &Path, item: &str) -> std::result::Result<RuleDoc, String> {
    if item.is_empty() {
        return Err("is empty".to_owned());
    }
    if item.starts_with('/') {
        return Err("is an absolute path; give a path relative to the repository".to_owned());
    }
    let mut parts: Vec<&str> = Vec::new();
    for segment in item.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err("leaves the repository through ..".to_owned());
                }
            }
            s => parts.push(s),
        }
    }
    if parts.first() == Some(&".git") {
        return Err(
            "is inside .git/: git's own files (its configuration holds remote URLs and their tokens) are never given to reviewers"
                .to_owned(),
        );
    }
    let root = fs::canonicalize(work_tree).map_err(|e| {
        format!(
            "the work tree {} cannot be resolved: {e}",
            work_tree.display()
        )
    })?;
    let joined = work_tree.join(item);
    let resolved = match fs::canonicalize(&joined) {
        Ok(p) => p,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(if fs::symlink_metadata(&joined).is_ok() {
                "is a broken symbolic link".to_owned()
            } else {
                "does not exist".to_owned()
            })
        }
        Err(e) => return Err(format!("cannot be resolved: {e}")),
    };
    if !resolved.starts_with(&root) {
        return Err(format!(
            "leads outside the repository (to {}) through a symbolic link",
            resolved.display()
        ));
    }
    let meta = fs::metadata(&resolved).map_err(|e| format!("cannot be examined: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "is not a regular file but {}",
            describe_file_type(&meta.file_type())
        ));
    }
    let mut probe = [0u8; 1];
    fs::File::open(&resolved)
        .and_then(|mut f| f.read(&mut probe))
        .map_err(|e| format!("cannot be read: {e}"))?;
    Ok(RuleDoc {
        name: parts.join("/"),
        path: resolved,
    })
}

/// Validates a check-path glob (G24) with the matcher's own rules ([`crate::spar::glob`]): not
/// empty, relative, no `..` segment, every segment a valid Go `path.Match` pattern or `**`.
pub(super) fn validate_glob(glob: &str) -> std::result::Result<(), String> {
    crate::spar::glob::validate(glob)
}
