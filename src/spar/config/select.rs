//! The reviewers of one run (G25): `--reviewers`, `--model` and `--effort` applied to the
//! configuration, every problem a refusal that names the option.

use super::*;

/// A reviewer of one run: its configuration (or a bare preset), and the model and effort this
/// run gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectedReviewer {
    /// The configured entry, or the preset `--reviewers` picked by name.
    pub reviewer: Reviewer,
    /// Whether it comes from the configured list (not a bare preset picked by `--reviewers`).
    pub configured: bool,
    /// The configured `model`, or `--model`'s value; `None` lets the CLI choose.
    pub model: Option<Sourced<String>>,
    /// The configured non-empty `effort`, or `--effort`'s value; `None` passes no effort.
    pub effort: Option<Sourced<String>>,
}

impl SelectedReviewer {
    /// The reviewer's name.
    pub fn name(&self) -> &str {
        &self.reviewer.name.value
    }

    /// The reviewer's preset.
    pub fn preset(&self) -> Preset {
        self.reviewer.preset.value
    }

    /// The timeout of each attempt (G19).
    pub fn timeout_seconds(&self) -> u64 {
        self.reviewer.timeout_seconds.value
    }

    /// The model to retry with after a quota refusal (G13), if on.
    pub fn fallback_model(&self) -> Option<&str> {
        self.reviewer.fallback_model()
    }

    /// What [`find_executable`] looks for; `None` for native.
    pub fn executable(&self) -> Option<&str> {
        self.reviewer.executable()
    }
}

/// Selects this run's reviewers from `--reviewers` (or the configured list) and applies
/// `--model NAME=VALUE` / `--effort NAME=VALUE` (G25, G20, G19).
pub fn select(
    cfg: &Config,
    reviewers: Option<&str>,
    models: &[String],
    efforts: &[String],
) -> Result<Vec<SelectedReviewer>> {
    let models: Vec<OsString> = models.iter().map(OsString::from).collect();
    let efforts: Vec<OsString> = efforts.iter().map(OsString::from).collect();
    select_os(cfg, reviewers.map(OsStr::new), &models, &efforts)
}

/// [`select`] for arguments that may not be valid UTF-8 (a value that is not is refused; a name
/// that is not matches no reviewer).
pub fn select_os(
    cfg: &Config,
    reviewers: Option<&OsStr>,
    models: &[OsString],
    efforts: &[OsString],
) -> Result<Vec<SelectedReviewer>> {
    let model_args = models
        .iter()
        .map(|a| split_assignment("--model", a.as_bytes()))
        .collect::<Result<Vec<_>>>()?;
    let effort_args = efforts
        .iter()
        .map(|a| split_assignment("--effort", a.as_bytes()))
        .collect::<Result<Vec<_>>>()?;

    let mut run = match reviewers {
        None => cfg
            .reviewers
            .value
            .iter()
            .map(|r| SelectedReviewer {
                reviewer: r.clone(),
                configured: true,
                model: None,
                effort: None,
            })
            .collect(),
        Some(list) => pick_reviewers(cfg, list.as_bytes())?,
    };
    for s in &mut run {
        s.model = s.reviewer.model.clone();
        s.effort = s.reviewer.effort.clone().filter(|e| !e.value.is_empty());
    }

    let mut given: HashSet<(usize, &'static str)> = HashSet::new();
    for (flag, args) in [("--model", &model_args), ("--effort", &effort_args)] {
        for (name, value) in args {
            let index = apply_assignment(&mut run, flag, name, value, &given)?;
            given.insert((index, flag));
        }
    }
    Ok(run)
}

/// Splits `NAME=VALUE` at the first `=`; no `=` or an empty name is a usage error.
pub(super) fn split_assignment<'a>(flag: &str, arg: &'a [u8]) -> Result<(&'a [u8], &'a [u8])> {
    let Some(eq) = arg.iter().position(|&b| b == b'=') else {
        return Err(Error::usage(format!(
            "{flag} takes NAME=VALUE, got {}",
            quote_bytes(arg)
        )));
    };
    let (name, value) = (&arg[..eq], &arg[eq + 1..]);
    if name.is_empty() {
        return Err(Error::usage(format!(
            "{flag} takes NAME=VALUE with a reviewer name before =, got {}",
            quote_bytes(arg)
        )));
    }
    Ok((name, value))
}

/// Applies one `--model`/`--effort` to the run; returns the index of the reviewer it applies to.
pub(super) fn apply_assignment(
    run: &mut [SelectedReviewer],
    flag: &'static str,
    name: &[u8],
    value: &[u8],
    given: &HashSet<(usize, &'static str)>,
) -> Result<usize> {
    let refuse = |why: String| {
        Error::refused(format!(
            "{flag} for reviewer {} with value {}: {why}",
            quote_bytes(name),
            quote_bytes(value)
        ))
        .hint("`git spar config` lists the reviewers, their presets and allowed values")
    };
    let Some(index) = run.iter().position(|s| s.name().as_bytes() == name) else {
        let names: Vec<&str> = run.iter().map(SelectedReviewer::name).collect();
        return Err(refuse(format!(
            "no reviewer of this run has that name (this run: {})",
            names.join(", ")
        )));
    };
    let s = &mut run[index];
    let is_model = flag == "--model";
    let preset = s.preset();
    let (takes, written, allowed) = if is_model {
        (
            preset.takes_model(),
            &s.reviewer.model,
            &s.reviewer.allowed_models,
        )
    } else {
        (
            preset.takes_effort(),
            &s.reviewer.effort,
            &s.reviewer.allowed_efforts,
        )
    };
    let key = if is_model { "model" } else { "effort" };
    if !takes {
        return Err(refuse(format!(
            "preset {} takes no {key}",
            quote(preset.as_str())
        )));
    }
    if let Some(w) = written {
        return Err(refuse(format!(
            "the user file sets {key} for this reviewer ({}); change it there",
            w.origin
        )));
    }
    if given.contains(&(index, flag)) {
        return Err(refuse(format!("{flag} is given twice for this reviewer")));
    }
    if let Some(problem) = value_problem(value) {
        return Err(refuse(format!("the value {problem}")));
    }
    let text = String::from_utf8_lossy(value).into_owned();
    if let Some(list) = allowed {
        if !list.value.contains(&text) {
            return Err(refuse(format!(
                "not in allowed_{key}s ({}): {}",
                list.origin,
                list.value
                    .iter()
                    .map(|v| quote(v))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let chosen = Some(Sourced {
        value: text,
        origin: Origin::Flag(flag),
    });
    if is_model {
        s.model = chosen;
    } else {
        s.effort = chosen;
    }
    Ok(index)
}

/// Reads `--reviewers` (G25, G20): names split at `,`, trimmed, empty ones skipped, all empty →
/// one native; each a configured name or else a preset other than command.
pub(super) fn pick_reviewers(cfg: &Config, list: &[u8]) -> Result<Vec<SelectedReviewer>> {
    let err = |message: String| {
        Error::refused(format!("--reviewers: {message}"))
            .hint("`git spar config` lists the configured reviewers; presets are claude, codex, agy, native")
    };
    let mut out: Vec<SelectedReviewer> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for raw in list.split(|&b| b == b',') {
        let Ok(text) = std::str::from_utf8(raw) else {
            return Err(err(format!(
                "{}: a reviewer name is 1 to 64 of A-Z a-z 0-9 . _ -",
                quote_bytes(raw)
            )));
        };
        let name = text.trim();
        if !name.is_empty() {
            names.push(name.to_owned());
        }
    }
    if names.is_empty() {
        names.push(Preset::Native.as_str().to_owned());
    }
    for name in names {
        check_name(&name).map_err(|why| err(format!("{}: {why}", quote(&name))))?;
        if let Some(earlier) = out.iter().find(|s| s.name().eq_ignore_ascii_case(&name)) {
            return Err(err(format!(
                "{} repeats {}; names must differ ignoring case",
                quote(&name),
                quote(earlier.name())
            )));
        }
        let selected = if let Some(r) = cfg.reviewer(&name) {
            SelectedReviewer {
                reviewer: r.clone(),
                configured: true,
                model: None,
                effort: None,
            }
        } else {
            match Preset::parse(&name).filter(|p| !matches!(p, Preset::Command | Preset::Sarif)) {
                Some(preset) => SelectedReviewer {
                    reviewer: Reviewer::bare(
                        preset,
                        Origin::Flag("--reviewers"),
                        cfg.timeout_seconds.clone(),
                    ),
                    configured: false,
                    model: None,
                    effort: None,
                },
                None => {
                    return Err(err(format!(
                        "{} is neither a configured reviewer nor a preset",
                        quote(&name)
                    )))
                }
            }
        };
        out.push(selected);
    }
    Ok(out)
}
