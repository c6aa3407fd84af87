//! The gate's decisions kept on disk, so a gate asked again over the same records reads one
//! small file instead of every round.

use super::*;

/// Where a gate's decision is kept: `<common dir>/spar/cache/gate/<key>.json`, the key being
/// the sha256 of this build, the listed rounds, the tip of each of their series and what
/// `--expect-head` resolves to. A newer record moves a tip, so it is never served stale; an
/// entry that cannot be read is decided again.
pub(super) struct GateCache {
    pub(super) path: PathBuf,
}

/// One kept decision, as read.
#[derive(serde::Deserialize)]
struct Entry {
    passed: bool,
    reasons: Vec<String>,
    document: GateDocument,
}

/// One kept decision, as written.
#[derive(Serialize)]
struct EntryRef<'a> {
    passed: bool,
    reasons: &'a [String],
    document: &'a GateDocument,
}

/// Entries kept; the oldest are removed beyond this.
pub(super) const GATE_CACHE_ENTRIES: usize = 64;

impl GateCache {
    pub(super) fn new(
        store: &Store,
        targets: &[(SeriesId, RoundName)],
        expect: Option<&str>,
    ) -> Option<GateCache> {
        let mut series: Vec<&SeriesId> = targets.iter().map(|(s, _)| s).collect();
        series.sort();
        series.dedup();
        let mut tips = Vec::new();
        for s in series {
            let tip = record::series_tip(store, s).ok()?;
            tips.push(json!([s, tip.map(|t| t.to_string())]));
        }
        let expect = expect.map(|rev| match store.resolve_commit(rev) {
            Ok(id) => json!({"rev": rev, "id": id.to_string()}),
            Err(e) => json!({"rev": rev, "error": e.message}),
        });
        let key = json!({
            "cache": "spar-gate/1",
            "build": crate::BUILD_ID,
            "rounds": targets,
            "tips": tips,
            "expect_head": expect,
        });
        let digest = sha256_hex(key.to_string().as_bytes());
        Some(GateCache {
            path: store
                .common_dir()
                .join("spar/cache/gate")
                .join(format!("{digest}.json")),
        })
    }

    pub(super) fn read(&self) -> Option<Decided> {
        let e: Entry = serde_json::from_slice(&std::fs::read(&self.path).ok()?).ok()?;
        if e.document.schema != GATE_SCHEMA {
            return None;
        }
        Some((e.passed, e.reasons, e.document))
    }

    /// Best effort: a repository that cannot be written still gets its gate decided.
    pub(super) fn write(&self, (passed, reasons, document): &Decided) {
        let entry = EntryRef {
            passed: *passed,
            reasons,
            document,
        };
        let Ok(bytes) = serde_json::to_vec(&entry) else {
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
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
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
