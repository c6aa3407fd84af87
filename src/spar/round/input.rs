//! What a round is given, checked before anything starts or is written: the user's decisions
//! (G35) and standpoints, the documents named on the command line (G26), the series name, and
//! the `--out` folder (G28).

use super::*;

/// A decision the user made and the user's words for it (G35), both kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub decision: String,
    pub quote: String,
}

/// A standpoint for one reviewer ("관점 인자"): a risk it attacks while checking every angle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standpoint {
    pub reviewer: String,
    pub text: String,
}

/// Which of the two decision options a command-line value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionPart {
    /// `--decision`
    Decision,
    /// `--decision-quote`
    Quote,
}

impl DecisionPart {
    fn option(self) -> &'static str {
        match self {
            DecisionPart::Decision => "--decision",
            DecisionPart::Quote => "--decision-quote",
        }
    }
}

/// One `--decision` or `--decision-quote` as given; `None` is the option at the very end of
/// the command line without a value.
pub type DecisionArg = (DecisionPart, Option<OsString>);

/// A decision value: valid UTF-8 and not empty after trimming, kept as given (G35).
pub(super) fn decision_text(part: DecisionPart, n: usize, value: Option<&OsStr>) -> Result<String> {
    let option = part.option();
    let Some(value) = value else {
        return Err(Error::refused(format!(
            "decision {n}: {option} at the end of the command line has no value"
        ))
        .hint(format!("give the text right after {option}")));
    };
    let Some(text) = value.to_str() else {
        return Err(Error::refused(format!(
            "decision {n}: {option} {} is not valid UTF-8",
            config::quote_bytes(value.as_bytes())
        )));
    };
    if text.trim().is_empty() {
        return Err(Error::refused(format!(
            "decision {n}: {option} {} is empty",
            config::quote(text)
        )));
    }
    Ok(text.to_string())
}

/// Pairs `--decision` and `--decision-quote` values given in command-line order (G35): each
/// decision is followed by exactly one quote before the next decision. Anything else is
/// refused, naming the decision's number and the option.
pub fn pair_decisions(args: &[DecisionArg]) -> Result<Vec<Decision>> {
    let pairing = "each --decision needs exactly one --decision-quote (the user's words) after it, before the next --decision";
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for (part, value) in args {
        match part {
            DecisionPart::Decision => {
                if pending.is_some() {
                    return Err(Error::refused(format!(
                        "decision {}: --decision has no --decision-quote before the next --decision",
                        out.len() + 1
                    ))
                    .hint(pairing));
                }
                pending = Some(decision_text(*part, out.len() + 1, value.as_deref())?);
            }
            DecisionPart::Quote => {
                let n = out.len() + 1;
                let Some(decision) = pending.take() else {
                    return Err(Error::refused(if out.is_empty() {
                        format!("decision {n}: --decision-quote comes before any --decision")
                    } else {
                        format!(
                            "decision {}: --decision-quote without a --decision (decision {} already has its quote)",
                            n,
                            n - 1
                        )
                    })
                    .hint(pairing));
                };
                let quote = decision_text(*part, n, value.as_deref())?;
                out.push(Decision { decision, quote });
            }
        }
    }
    if pending.is_some() {
        return Err(Error::refused(format!(
            "decision {}: --decision has no --decision-quote",
            out.len() + 1
        ))
        .hint(pairing));
    }
    Ok(out)
}

/// Reads one `--standpoint NAME=TEXT`: the first `=` splits. No `=` or an empty name is a
/// usage error; a name or text that is not valid UTF-8, or a text empty after trimming, is
/// refused. Whether the name is one of the run's reviewers is checked by [`run`].
pub fn parse_standpoint(raw: &OsStr) -> Result<Standpoint> {
    let bytes = raw.as_bytes();
    let shown = config::quote_bytes(bytes);
    let Some(eq) = bytes.iter().position(|&b| b == b'=') else {
        return Err(
            Error::usage(format!("--standpoint {shown}: expected NAME=TEXT"))
                .hint("name a reviewer of this run, then `=`, then the risk it should attack"),
        );
    };
    let (name, text) = (&bytes[..eq], &bytes[eq + 1..]);
    if name.is_empty() {
        return Err(Error::usage(format!(
            "--standpoint {shown}: the reviewer name before `=` is empty"
        )));
    }
    let Ok(name) = std::str::from_utf8(name) else {
        return Err(Error::refused(format!(
            "--standpoint {shown}: the reviewer name is not valid UTF-8"
        )));
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return Err(Error::refused(format!(
            "--standpoint {shown}: the text for {} is not valid UTF-8",
            config::quote(name)
        )));
    };
    if text.trim().is_empty() {
        return Err(Error::refused(format!(
            "--standpoint {shown}: the text for {} is empty",
            config::quote(name)
        )));
    }
    Ok(Standpoint {
        reviewer: name.to_string(),
        text: text.to_string(),
    })
}

/// Checks the standpoints against this run's reviewers ("관점 인자"): each names a configured
/// reviewer or one `--reviewers` selected (exactly, case-sensitive), at most once.
pub(super) fn check_standpoints(
    standpoints: &[Standpoint],
    cfg: &Config,
    selected: &[SelectedReviewer],
) -> Result<()> {
    let mut known: Vec<&str> = cfg
        .reviewers
        .value
        .iter()
        .map(|r| r.name.value.as_str())
        .collect();
    for s in selected {
        if !known.contains(&s.name()) {
            known.push(s.name());
        }
    }
    for (i, sp) in standpoints.iter().enumerate() {
        if !known.contains(&sp.reviewer.as_str()) {
            return Err(Error::refused(format!(
                "--standpoint {}: {} is not a reviewer of this run (its reviewers: {})",
                config::quote(&format!("{}={}", sp.reviewer, sp.text)),
                config::quote(&sp.reviewer),
                known.join(", ")
            )));
        }
        if standpoints[..i].iter().any(|o| o.reviewer == sp.reviewer) {
            return Err(Error::refused(format!(
                "--standpoint {}: {} already has a standpoint; give each reviewer at most one",
                config::quote(&format!("{}={}", sp.reviewer, sp.text)),
                config::quote(&sp.reviewer)
            )));
        }
    }
    Ok(())
}

/// A document given on the command line (G26), or a rule document of the project file.
pub(super) struct ArgDocument {
    pub(super) doc: Document,
    pub(super) contents: String,
}

/// Where a round's documents are read from: the head commit's tree for a document of the
/// repository (never `.git/`, never an untracked file or an uncommitted change), the file
/// itself for one outside the repository (only when named on the command line), redacted.
pub(super) struct DocumentSource<'a> {
    pub(super) store: &'a Store,
    pub(super) head: ObjectId,
    pub(super) root: &'a Path,
    pub(super) redactor: &'a crate::redact::Redactor,
}

impl DocumentSource<'_> {
    /// Reads `path` for `what`; `outside_ok`: it was named on the command line, so a file
    /// outside the repository may be used. Adds what was redacted to `redacted`.
    pub(super) fn read(
        &self,
        path: &Path,
        what: &str,
        outside_ok: bool,
        redacted: &mut usize,
    ) -> Result<ArgDocument> {
        let shown = path.display();
        let abs = std::fs::canonicalize(path).map_err(|e| {
            Error::refused(format!("{what} {shown}: cannot be read: {e}"))
                .hint("name a readable file")
        })?;
        let root_abs = std::fs::canonicalize(self.root).unwrap_or_else(|_| self.root.to_path_buf());
        let Ok(rel) = abs.strip_prefix(&root_abs) else {
            if !outside_ok {
                return Err(Error::refused(format!(
                    "{what} {shown}: leads outside the repository"
                )));
            }
            let bytes = std::fs::read(&abs).map_err(|e| {
                Error::refused(format!("{what} {shown}: cannot be read: {e}"))
                    .hint("name a readable file")
            })?;
            if !std::fs::metadata(&abs).is_ok_and(|m| m.is_file()) {
                return Err(Error::refused(format!(
                    "{what} {shown}: is not a regular file"
                )));
            }
            // From outside the repository: free text, redacted before a reviewer sees it.
            let clean = self.redactor.text(&String::from_utf8_lossy(&bytes));
            *redacted += clean.count;
            let doc = Document::new(
                abs.to_string_lossy().into_owned(),
                None,
                clean.text.as_bytes(),
            );
            return Ok(ArgDocument {
                doc,
                contents: clean.text,
            });
        };
        let rel = rel.to_string_lossy().into_owned();
        if rel.split('/').next() == Some(".git") {
            return Err(Error::refused(format!(
                "{what} {shown}: is inside .git/; git's own files (its configuration holds remote URLs and their tokens) are never given to reviewers"
            )));
        }
        let Some(bytes) = self.store.read_file(self.head, &rel)? else {
            return Err(Error::refused(format!(
                "{what} {shown}: {rel} is not in the head commit {}: a round reads the repository's documents from the commits under review, never an untracked file",
                self.head
            ))
            .hint(format!(
                "commit it (`git add {rel} && git commit`), or name a copy outside the repository on the command line"
            )));
        };
        let doc = Document::new(abs.to_string_lossy().into_owned(), Some(&rel), &bytes);
        Ok(ArgDocument {
            doc,
            contents: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }
}

/// The default series: the current branch, `/` replaced by `-`.
pub fn default_series(store: &Store) -> Result<SeriesId> {
    match store.current_branch()? {
        Some(b) => SeriesId::new(&b.replace('/', "-")),
        None => Err(
            Error::usage("HEAD is detached, so no branch names the series")
                .hint("name it with --series <name>"),
        ),
    }
}

/// G28 for `run --out`: a folder that does not exist yet, and, inside any git repository,
/// ignored by every repository around it with no tracked file below it.
pub(super) fn check_out_dir(out: &Path) -> Result<PathBuf> {
    if out.exists() || out.symlink_metadata().is_ok() {
        return Err(Error::refused(format!(
            "--out {}: the folder must not exist yet",
            out.display()
        )));
    }
    let abs = crate::spar::absolute(out)?;
    let mut dir = abs.parent().map(Path::to_path_buf);
    while let Some(d) = dir {
        if d.join(".git").exists() {
            let rel = abs.strip_prefix(&d).unwrap_or(&abs);
            // The folder does not exist yet: ask about it as a folder, so `out/` patterns match.
            let mut as_dir = rel.as_os_str().to_owned();
            as_dir.push("/");
            match Store::ignores(&d, &as_dir)? {
                Some(true) => {}
                Some(false) => {
                    return Err(Error::refused(format!(
                        "--out {}: it is inside the git repository {} and not ignored there",
                        out.display(),
                        d.display()
                    ))
                    .hint("choose a folder outside the repository, or one its .gitignore ignores"))
                }
                None => {
                    return Err(Error::refused(format!(
                        "--out {}: git cannot tell whether {} ignores it",
                        out.display(),
                        d.display()
                    )))
                }
            }
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    Ok(abs)
}
