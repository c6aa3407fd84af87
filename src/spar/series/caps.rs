//! Caps: the rounds of each stage counted (a dry run, a round no reviewer could run, a stopped
//! round and a re-run of unfinished reviewers are not), the extensions of a series
//! (`extensions.jsonl`, G31), the cap check of `git spar run`, and the cap report.

use super::*;

/// The series-level file of cap extensions (at the root of the series tree, beside `rounds/`).
pub const EXTENSIONS_FILE: &str = "extensions.jsonl";

/// One line of `extensions.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Extension {
    pub stage: String,
    pub by: u64,
    /// None: cause not recorded (old lines, plan and plan-delta extensions; G32).
    pub cause: Option<String>,
    pub reason: Option<String>,
    pub at: Option<String>,
}

/// Reads the series' extensions; a line out of form is a refusal (G32).
pub fn read_extensions(store: &Store, series: &SeriesId) -> Result<(Vec<u8>, Vec<Extension>)> {
    let bytes = match record::series_tip(store, series)? {
        Some(tip) => store.read_file(tip, EXTENSIONS_FILE)?.unwrap_or_default(),
        None => Vec::new(),
    };
    let bad = |m: String| Error::refused(format!("{series}: {m}"));
    let mut out = Vec::new();
    for (i, v) in parse_jsonl(&bytes, EXTENSIONS_FILE)
        .map_err(bad)?
        .iter()
        .enumerate()
    {
        let stage = str_field(v, "stage").filter(|s| Stage::parse(s).is_some());
        let by = v.get("by").and_then(Value::as_u64).filter(|b| *b >= 1);
        let (Some(stage), Some(by)) = (stage, by) else {
            return Err(bad(format!(
                "{EXTENSIONS_FILE} line {}: needs a stage (plan, plan-delta, code) and by ≥ 1",
                i + 1
            )));
        };
        let opt = |k: &str| {
            str_field(v, k)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        out.push(Extension {
            stage: stage.to_string(),
            by,
            cause: opt("cause"),
            reason: opt("reason"),
            at: opt("at"),
        });
    }
    Ok((bytes, out))
}

/// What `git spar extend` was asked.
#[derive(Debug, Clone)]
pub struct ExtendRequest {
    pub series: SeriesId,
    pub stage: String,
    pub by: String,
    pub cause: Option<String>,
    pub reason: Option<String>,
}

/// Checks an extension against G31 without touching the repository: usage errors for what is
/// out of form, a refusal for a reason that is needed and missing.
pub fn check_extension(req: &ExtendRequest) -> Result<Extension> {
    let stage = Stage::from_option(&req.stage)?;
    let by = Some(req.by.as_str())
        .filter(|b| !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()))
        .and_then(|b| b.parse::<u64>().ok())
        .filter(|b| *b >= 1)
        .ok_or_else(|| {
            Error::usage(format!("--by {:?} must be an integer of 1 or more", req.by))
        })?;
    let reason = text(&req.reason);
    if stage != Stage::Code {
        if req.cause.is_some() || reason.is_some() {
            return Err(Error::usage(format!(
                "a {} extension takes no --cause or --reason",
                req.stage
            )));
        }
        return Ok(Extension {
            stage: req.stage.clone(),
            by,
            cause: None,
            reason: None,
            at: None,
        });
    }
    let cause = match req.cause.as_deref() {
        Some(c) => CodeCause::parse(c).ok_or_else(|| {
            Error::usage(format!(
                "--cause {c:?} is not one of {}",
                CodeCause::NAMES.join(", ")
            ))
        })?,
        None => {
            return Err(Error::usage(format!(
                "a code extension needs --cause (one of {})",
                CodeCause::NAMES.join(", ")
            )))
        }
    };
    if reason.is_none() && (by >= 2 || cause == CodeCause::Other) {
        return Err(Error::refused(format!(
            "a code extension {} needs --reason",
            if by >= 2 {
                "by 2 or more"
            } else {
                "with cause other"
            }
        )));
    }
    Ok(Extension {
        stage: req.stage.clone(),
        by,
        cause: Some(cause.as_str().to_string()),
        reason,
        at: None,
    })
}

/// Appends an extension to the series' `extensions.jsonl` (one commit, under the lock).
pub fn extend(
    store: &Store,
    req: &ExtendRequest,
    progress: &mut dyn FnMut(&str),
) -> Result<Extension> {
    let mut ext = check_extension(req)?;
    let series = &req.series;
    let _lock = lock_series(store, series, progress)?;
    if record::series_tip(store, series)?.is_none() {
        return Err(Error::refused(format!("series {series} has no rounds"))
            .hint("extend a series that exists (see `git spar list`)"));
    }
    let (mut bytes, _) = read_extensions(store, series)?;
    ext.at = Some(now());
    let mut line = json!({"stage": ext.stage, "by": ext.by});
    if let Some(c) = &ext.cause {
        line["cause"] = json!(c);
    }
    if let Some(r) = &ext.reason {
        line["reason"] = json!(r);
    }
    line["at"] = json!(ext.at);
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    bytes.extend(record::jsonl(std::slice::from_ref(&line)));
    let tip = record::series_tip(store, series)?;
    let msg = store::message(
        &format!("spar {series}: extend {} by {}", ext.stage, ext.by),
        "",
        &[
            ("Spar-Series", series.to_string()),
            ("Spar-Extend", ext.stage.clone()),
        ],
    );
    store
        .append_commit(
            &record::series_ref(series),
            tip,
            &[(EXTENSIONS_FILE.to_string(), bytes)],
            &msg,
        )?
        .ok_or_else(|| moved(series))?;
    Ok(ext)
}

/// The configured cap of a stage.
pub fn configured_cap(cfg: &Config, stage: Stage) -> u64 {
    match stage {
        Stage::Plan => cfg.caps.plan.value,
        Stage::PlanDelta => cfg.caps.plan_delta.value,
        Stage::Code => cfg.caps.code.value,
    }
}

/// A recorded round as counting sees it.
#[derive(Debug, Clone, Serialize)]
pub struct CountedRound {
    pub round: String,
    pub counted: bool,
    /// Why it is not counted (empty when counted).
    pub why: String,
}

/// The cap picture of one stage.
#[derive(Debug, Clone, Serialize)]
pub struct StageCaps {
    pub stage: String,
    pub configured: u64,
    pub extensions: Vec<Extension>,
    pub cap: u64,
    pub rounds: Vec<CountedRound>,
    pub counted: u64,
    pub left: u64,
}

/// A round stopped before it recorded findings (no finished_at and no findings.json) counts
/// like a dry run (G29).
pub(super) fn stopped(store: &Store, series: &SeriesId, r: &Round) -> Result<bool> {
    Ok(r.finished_at.is_none()
        && record::round_file(store, series, &RoundName::named(&r.round), "findings.json")?
            .is_none())
}

/// The packet without its title line: the title names the round, so two packets of the same
/// change differ there even when everything the reviewers get is the same.
pub(super) fn packet_body(
    store: &Store,
    series: &SeriesId,
    round: &RoundName,
) -> Result<Option<Vec<u8>>> {
    Ok(
        record::round_file(store, series, round, "packet.md")?.map(|b| {
            match b.iter().position(|c| *c == b'\n') {
                Some(i) => b[i + 1..].to_vec(),
                None => Vec::new(),
            }
        }),
    )
}

/// Whether `r` re-ran only reviewers that had not completed in `prev` over the same stage,
/// base, head and packet.
pub(super) fn is_rerun(store: &Store, series: &SeriesId, r: &Round, prev: &Round) -> Result<bool> {
    if r.stage != prev.stage || r.base != prev.base || r.head != prev.head {
        return Ok(false);
    }
    if !reviewers_unfinished_in(r.reviewers.iter().map(|x| x.name.as_str()), prev) {
        return Ok(false);
    }
    if r.packet_sha256 == prev.packet_sha256 {
        return Ok(true);
    }
    let a = packet_body(store, series, &RoundName::named(&r.round))?;
    Ok(a.is_some() && a == packet_body(store, series, &RoundName::named(&prev.round))?)
}

pub(super) fn reviewers_unfinished_in<'a>(
    mut names: impl Iterator<Item = &'a str>,
    prev: &Round,
) -> bool {
    let mut any = false;
    let all = names.all(|n| {
        any = true;
        prev.reviewers
            .iter()
            .any(|p| p.name == n && p.status != Status::Completed)
    });
    any && all
}

/// Counts the rounds of every stage of a series and adds the extensions to the caps.
pub fn stage_caps(store: &Store, cfg: &Config, series: &SeriesId) -> Result<Vec<StageCaps>> {
    let names = record::round_names(store, series)?;
    let (_, extensions) = read_extensions(store, series)?;
    stage_caps_of(store, cfg, series, &names, &extensions)
}

/// [`stage_caps`] over the round names and extensions already read.
fn stage_caps_of(
    store: &Store,
    cfg: &Config,
    series: &SeriesId,
    names: &[RoundName],
    extensions: &[Extension],
) -> Result<Vec<StageCaps>> {
    let mut rounds = Vec::new();
    for n in names {
        rounds.push(record::load_round(store, series, n)?);
    }
    let mut out = Vec::new();
    for stage in Stage::ALL {
        let configured = configured_cap(cfg, stage);
        let exts: Vec<Extension> = extensions
            .iter()
            .filter(|e| e.stage == stage)
            .cloned()
            .collect();
        let cap = configured + exts.iter().map(|e| e.by).sum::<u64>();
        let mut listed = Vec::new();
        let mut prev: Option<&Round> = None;
        for r in rounds.iter().filter(|r| r.stage == stage) {
            let why = if r.dry_run {
                "dry run".to_string()
            } else if r.no_reviewer_could_run() {
                "no reviewer could run".to_string()
            } else if stopped(store, series, r)? {
                "stopped before recording findings".to_string()
            } else if let Some(p) = prev.filter(|p| is_rerun(store, series, r, p).unwrap_or(false))
            {
                format!("re-run of the unfinished reviewers of {}", p.round)
            } else {
                String::new()
            };
            if !r.dry_run {
                prev = Some(r);
            }
            listed.push(CountedRound {
                round: r.round.clone(),
                counted: why.is_empty(),
                why,
            });
        }
        let counted = listed.iter().filter(|r| r.counted).count() as u64;
        out.push(StageCaps {
            stage: stage.as_str().to_string(),
            configured,
            extensions: exts,
            cap,
            rounds: listed,
            counted,
            left: cap.saturating_sub(counted),
        });
    }
    Ok(out)
}

/// The cap picture of a series that exists (`git spar cap-report`), with the configuration of
/// the work tree.
pub fn cap_report(store: &Store, series: &SeriesId) -> Result<Vec<StageCaps>> {
    if record::series_tip(store, series)?.is_none() {
        return Err(
            Error::refused(format!("series {series} does not exist")).hint("see `git spar list`")
        );
    }
    let root = store.workdir()?.to_path_buf();
    let cfg = Config::load(&crate::spar::config::Env::from_process(root))?;
    stage_caps(store, &cfg, series)
}

/// What `git spar run` is about to do, as far as counting needs it.
pub struct RunProbe<'a> {
    pub stage: Stage,
    pub base: ObjectId,
    pub head: ObjectId,
    pub dry_run: bool,
    pub reviewers: Vec<&'a str>,
    /// The configuration digest: the packet is not built yet, so a re-run is recognised by the
    /// same configuration over the same commits.
    pub config_digest: String,
}

/// The cap check of `git spar run`, called under the series lock before anything is written:
/// a run that would be counted past the stage's cap is refused.
///
/// `names` are the series' round names ([`record::round_names`]). A series with fewer rounds
/// than the stage's cap cannot have reached it, whatever its rounds say, so their records are
/// read only when it might have: `git spar run` does not read every round of a long series.
pub fn check_cap(
    store: &Store,
    cfg: &Config,
    series: &SeriesId,
    names: &[RoundName],
    probe: &RunProbe<'_>,
) -> Result<()> {
    if probe.dry_run {
        return Ok(());
    }
    let (_, extensions) = read_extensions(store, series)?;
    let cap = configured_cap(cfg, probe.stage)
        + extensions
            .iter()
            .filter(|e| e.stage == probe.stage)
            .map(|e| e.by)
            .sum::<u64>();
    if (names.len() as u64) < cap {
        return Ok(());
    }
    let caps = stage_caps_of(store, cfg, series, names, &extensions)?;
    let Some(sc) = caps.iter().find(|c| c.stage == probe.stage) else {
        return Ok(());
    };
    if sc.counted < sc.cap {
        return Ok(());
    }
    // A re-run of only the unfinished reviewers of the newest round of the stage is free.
    let newest = sc
        .rounds
        .iter()
        .rev()
        .find(|r| r.why != "dry run")
        .map(|r| record::load_round(store, series, &RoundName::named(&r.round)))
        .transpose()?;
    if let Some(prev) = newest {
        let (base, head) = (probe.base.to_string(), probe.head.to_string());
        if prev.base == base
            && prev.head == head
            && prev.config.get("digest").and_then(Value::as_str) == Some(&probe.config_digest)
            && reviewers_unfinished_in(probe.reviewers.iter().copied(), &prev)
        {
            return Ok(());
        }
    }
    let cause = if probe.stage == Stage::Code {
        " --cause …"
    } else {
        ""
    };
    Err(Error::refused(format!(
        "cap reached for stage {} ({} of {}); extend it with `git spar extend {series} --stage {} --by 1{cause}`",
        probe.stage, sc.counted, sc.cap, probe.stage
    ))
    .hint("see `git spar cap-report` for the rounds counted"))
}

/// The cap report of a series as markdown.
pub fn render_caps_md(series: &str, caps: &[StageCaps]) -> String {
    let mut s = format!("# spar caps: {series}\n");
    for c in caps {
        s.push_str(&format!(
            "\n## {}\n\n- cap: {} (configured {}{})\n- counted: {} · left: {}\n",
            c.stage,
            c.cap,
            c.configured,
            if c.extensions.is_empty() {
                String::new()
            } else {
                format!(
                    " + {} extended",
                    c.extensions.iter().map(|e| e.by).sum::<u64>()
                )
            },
            c.counted,
            c.left
        ));
        for e in &c.extensions {
            s.push_str(&format!(
                "- extension +{}: {}{}\n",
                e.by,
                match &e.cause {
                    Some(cause) => format!("cause {cause}"),
                    None => "cause not recorded".to_string(),
                },
                e.reason
                    .as_ref()
                    .map(|r| format!(" — {r}"))
                    .unwrap_or_default()
            ));
        }
        for r in &c.rounds {
            if r.counted {
                s.push_str(&format!("- {}: counted\n", r.round));
            } else {
                s.push_str(&format!("- {}: not counted ({})\n", r.round, r.why));
            }
        }
    }
    s
}

/// The cap report of a series as JSON.
pub fn caps_json(series: &str, caps: &[StageCaps]) -> Value {
    json!({
        "schema": "spar-cap-report/v1",
        "series": series,
        "stages": caps.iter().map(|c| {
            let mut v = json!(c);
            if let Some(exts) = v.get_mut("extensions").and_then(Value::as_array_mut) {
                for e in exts {
                    let recorded = !e["cause"].is_null();
                    e["cause_recorded"] = json!(recorded);
                }
            }
            v
        }).collect::<Vec<_>>(),
    })
}
