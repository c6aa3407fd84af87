//! The gate's decisions kept on disk, so a gate asked again over the same records reads one
//! small file instead of every round.

use super::*;

/// Where a gate's decision is kept: `<common dir>/spar/cache/gate/<key>.tsv`, the key being
/// the sha256 of this build, the listed rounds, the tip of each of their series and what
/// `--expect-head` resolves to. A newer record moves a tip, so it is never served stale; an
/// entry that cannot be read is decided again.
///
/// The entry is tab-separated lines, one a reason, a growth entry or an uncovered standpoint
/// (see [`GateCache::write`]): reading it back is splitting lines, not parsing a JSON document
/// of a thousand growth objects. The listed rounds are in the key, so the entry does not hold
/// them again.
pub(super) struct GateCache {
    pub(super) path: PathBuf,
    rounds: Vec<String>,
}

/// The first line of a kept decision.
const ENTRY_SCHEMA: &str = "spar-gate-kept/2";

/// Entries kept; the oldest are removed beyond this.
pub(super) const GATE_CACHE_ENTRIES: usize = 64;

impl GateCache {
    pub(super) fn new(
        store: &Store,
        targets: &[(SeriesId, RoundName)],
        expect: Option<&str>,
    ) -> Option<GateCache> {
        use sha2::{Digest, Sha256};
        let mut series: Vec<&SeriesId> = targets.iter().map(|(s, _)| s).collect();
        series.sort();
        series.dedup();
        // Each part ends in a newline; a part that may hold one (a round name is any text, a
        // revision too) is preceded by its length, so two lists never hash alike.
        let mut key = Sha256::new();
        key.update(format!("{ENTRY_SCHEMA}\n{}\n", crate::BUILD_ID));
        for s in series {
            let tip = record::series_tip(store, s).ok()?;
            let tip = tip.map(|t| t.to_string()).unwrap_or_default();
            key.update(format!("tip {} {s} {tip}\n", s.len()));
        }
        match expect {
            None => key.update("expect none\n"),
            Some(rev) => {
                let at = match store.resolve_commit(rev) {
                    Ok(id) => id.to_string(),
                    Err(e) => format!("error {}", e.message),
                };
                key.update(format!("expect {} {rev} {at}\n", rev.len()));
            }
        }
        let mut rounds = Vec::with_capacity(targets.len());
        for (s, r) in targets {
            let listed = format!("{s}:{r}");
            key.update(format!("{} {listed}\n", listed.len()));
            rounds.push(listed);
        }
        let digest = format!("{:x}", key.finalize());
        Some(GateCache {
            path: store
                .common_dir()
                .join("spar/cache/gate")
                .join(format!("{digest}.tsv")),
            rounds,
        })
    }

    pub(super) fn read(&self) -> Option<Decided> {
        let bytes = std::fs::read(&self.path).ok()?;
        let text = std::str::from_utf8(&bytes).ok()?;
        parse_entry(text, &self.rounds)
    }

    /// Best effort: a repository that cannot be written still gets its gate decided, and a
    /// decision with a tab or a line break in a field it keeps is decided again next time.
    pub(super) fn write(&self, decided: &Decided) {
        let Some(bytes) = render_entry(decided, &self.rounds) else {
            return;
        };
        if store::cache_write(&self.path, &bytes).is_err() {
            return;
        }
        let Some(dir) = self.path.parent() else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
            .flatten()
            .filter(|e| {
                e.path()
                    .extension()
                    .is_some_and(|x| x == "tsv" || x == "json")
            })
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if files.len() > GATE_CACHE_ENTRIES {
            files.sort();
            for (_, old) in &files[..files.len() - GATE_CACHE_ENTRIES] {
                let _ = std::fs::remove_file(old);
            }
        }
    }
}

/// A field fit for a tab-separated line.
fn plain(s: &str) -> bool {
    !s.bytes().any(|b| matches!(b, b'\t' | b'\n' | b'\r'))
}

/// The kept form of a decision over `rounds`, None when a field cannot be kept as it is.
fn render_entry((passed, reasons, d): &Decided, rounds: &[String]) -> Option<Vec<u8>> {
    use std::fmt::Write as _;
    // The entry keeps what the decision made; anything else is decided again.
    let made = d.schema == GATE_SCHEMA
        && d.result == if *passed { "passed" } else { "blocked" }
        && d.reasons == *reasons
        && d.rounds == rounds
        && d.previous_gate_digest.is_none()
        && d.at.is_none()
        && d.decisions.is_empty()
        && d.notice.is_none();
    if !made {
        return None;
    }
    let fields = d
        .reasons
        .iter()
        .chain(&d.standpoints_uncovered)
        .chain(&d.head)
        .chain(&d.expect_head)
        .chain(
            d.growth
                .iter()
                .flat_map(|g| [&g.series, &g.round, &g.stage]),
        );
    for f in fields {
        if !plain(f) {
            return None;
        }
    }
    let mut t = String::with_capacity(64 + 48 * d.growth.len());
    let _ = writeln!(
        t,
        "{ENTRY_SCHEMA}\t{}\t{}\t{}",
        u8::from(*passed),
        d.open_findings,
        d.auto_deferred
    );
    if let Some(h) = &d.head {
        let _ = writeln!(t, "head\t{h}");
    }
    if let Some(h) = &d.expect_head {
        let _ = writeln!(t, "expect\t{h}");
    }
    for r in &d.reasons {
        let _ = writeln!(t, "reason\t{r}");
    }
    for g in &d.growth {
        let _ = writeln!(
            t,
            "growth\t{}\t{}\t{}\t{}\t{}\t{}",
            g.series, g.round, g.stage, g.findings, g.in_check_paths, g.outside_check_paths
        );
    }
    for u in &d.standpoints_uncovered {
        let _ = writeln!(t, "uncovered\t{u}");
    }
    Some(t.into_bytes())
}

/// A kept decision over `rounds` read back; None when any line is not as written.
fn parse_entry(text: &str, rounds: &[String]) -> Option<Decided> {
    let mut lines = text.split_terminator('\n');
    let mut first = lines.next()?.split('\t');
    if first.next()? != ENTRY_SCHEMA {
        return None;
    }
    let passed = match first.next()? {
        "1" => true,
        "0" => false,
        _ => return None,
    };
    let open_findings: usize = first.next()?.parse().ok()?;
    let auto_deferred: usize = first.next()?.parse().ok()?;
    if first.next().is_some() {
        return None;
    }
    let (mut head, mut expect) = (None, None);
    let (mut reasons, mut growth, mut uncovered) = (Vec::new(), Vec::new(), Vec::new());
    for line in lines {
        let (tag, rest) = line.split_once('\t')?;
        match tag {
            "head" if head.is_none() && growth.is_empty() => head = Some(rest.to_string()),
            "expect" if expect.is_none() && growth.is_empty() => expect = Some(rest.to_string()),
            "reason" if growth.is_empty() => reasons.push(rest.to_string()),
            "growth" if uncovered.is_empty() => {
                let mut f = rest.split('\t');
                let (series, round, stage) = (f.next()?, f.next()?, f.next()?);
                let g = Growth {
                    series: series.to_string(),
                    round: round.to_string(),
                    stage: stage.to_string(),
                    findings: f.next()?.parse().ok()?,
                    in_check_paths: f.next()?.parse().ok()?,
                    outside_check_paths: f.next()?.parse().ok()?,
                };
                if f.next().is_some() {
                    return None;
                }
                growth.push(g);
            }
            "uncovered" => uncovered.push(rest.to_string()),
            _ => return None,
        }
    }
    if passed != reasons.is_empty() {
        return None;
    }
    let document = GateDocument {
        schema: GATE_SCHEMA.to_string(),
        result: if passed { "passed" } else { "blocked" }.to_string(),
        reasons: reasons.clone(),
        rounds: rounds.to_vec(),
        head,
        expect_head: expect,
        open_findings,
        auto_deferred,
        growth,
        standpoints_uncovered: uncovered,
        previous_gate_digest: None,
        at: None,
        decisions: Vec::new(),
        notice: None,
    };
    Some((passed, reasons, document))
}
