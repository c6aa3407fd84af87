//! A reviewer's findings located, linked and classified against the round's copies and
//! documents, and what `round.json` keeps of those documents so a result recorded later is
//! judged the same way.

use super::*;

/// The copy of a commit as the location rules see it.
pub(super) fn copy_of(store: &Store, commit: ObjectId) -> Result<Copy> {
    let mut copy = Copy::new();
    for (path, mode) in store.tree_entries(commit)? {
        let kind = match mode.as_str() {
            "100755" => EntryKind::Executable,
            "120000" => EntryKind::Symlink,
            "160000" => EntryKind::Submodule,
            _ => EntryKind::Blob,
        };
        copy.insert(path, kind);
    }
    Ok(copy)
}

/// Everything the classification needs about the round.
pub struct RoundContext {
    pub(super) resolver: Resolver,
    pub(super) head: ObjectId,
}

impl RoundContext {
    pub(super) fn build(
        store: &Store,
        base: ObjectId,
        head: ObjectId,
        check_paths: CheckPaths,
        rules: &[(Document, String)],
        criteria: Option<&(Document, String)>,
        subject: Option<&Document>,
    ) -> Result<RoundContext> {
        let mut resolver = Resolver::new(copy_of(store, head)?, copy_of(store, base)?, check_paths);
        for (doc, _) in rules {
            resolver = resolver.with_rule_document(doc.clone());
        }
        if let Some((doc, text)) = criteria {
            resolver = resolver.with_criteria(doc.clone(), text);
        }
        if let Some(doc) = subject {
            resolver = resolver.with_document(doc.clone());
        }
        Ok(RoundContext { resolver, head })
    }

    /// Classifies a reviewer's findings, numbering them `<reviewer>-F<n>`.
    pub(super) fn findings(
        &self,
        store: &Store,
        reviewer: &str,
        res: &result::ReviewerResult,
    ) -> Vec<Finding> {
        let mut out = Vec::new();
        for (i, f) in res.findings.iter().enumerate() {
            let loc = self.resolver.resolve_location(&f.location);
            let kind: LinkKind = f.link_kind;
            let head = self.head;
            let mut lines = |path: &str| -> Option<u64> {
                store
                    .read_file(head, path)
                    .ok()
                    .flatten()
                    .map(|b| crate::spar::location::count_lines(&b))
            };
            let link = self.resolver.resolve_link(kind, &f.link, &mut lines);
            let facts = FindingFacts::new(
                f.proposed_class,
                f.check_impact,
                f.introduced_by_change,
                f.regression,
            )
            .location(&loc)
            .link(&link);
            let c = classify::classify(&facts);
            out.push(Finding {
                id: format!("{reviewer}-F{}", i + 1),
                reviewer: reviewer.to_string(),
                reviewer_id: f.id.clone(),
                proposed_class: f.proposed_class.into(),
                angle: Word::new(&f.angle),
                location: f.location.clone(),
                path: loc.path.clone(),
                lines: loc.lines,
                in_check_paths: loc.in_check_paths,
                location_unreadable: loc.is_unreadable(),
                claim: f.claim.clone(),
                failure_scenario: f.failure_scenario.clone(),
                evidence: f.evidence.clone(),
                link_kind: if link.confirmed {
                    link.kind.into()
                } else {
                    LinkKind::None.into()
                },
                link: if link.confirmed {
                    link.link.clone()
                } else {
                    String::new()
                },
                claimed_link_kind: link.claimed_kind.into(),
                claimed_link: link.claimed_link.clone(),
                introduced_by_change: f.introduced_by_change.into(),
                regression: f.regression.into(),
                check_impact: f.check_impact.into(),
                confidence: f.confidence.into(),
                smallest_fix: f.smallest_fix.clone().unwrap_or_default(),
                class: c.class.into(),
                class_reason: c.class_reason.clone(),
                auto_deferred: c.auto_deferred,
            });
        }
        out
    }
}

/// What `round.json` keeps of a document (G8: names, file_name, lines), enough to resolve
/// links and locations again when a result is recorded later.
pub(super) fn doc_facts(d: &Document) -> Value {
    json!({
        "names": [d.name(), d.abs_path()],
        "file_name": d.file_name(),
        "lines": d.lines(),
        "in_repo": d.in_repo(),
    })
}

pub(super) fn doc_from_facts(v: &Value) -> Option<Document> {
    let names = v.get("names")?.as_array()?;
    let name = names.first()?.as_str()?;
    let abs = names.get(1).and_then(Value::as_str).unwrap_or(name);
    let in_repo = v.get("in_repo").and_then(Value::as_bool).unwrap_or(true);
    let lines = v.get("lines").and_then(Value::as_u64).unwrap_or(0);
    Some(Document::recorded(abs, in_repo.then_some(name), lines))
}

/// The `auto_deferred` ledger lines of a round's findings.
pub(super) fn ledger_lines(findings: &[Finding]) -> Vec<Value> {
    findings
        .iter()
        .filter(|f| f.auto_deferred)
        .map(|f| {
            json!({
                "finding": f.id,
                "disposition": Disposition::AutoDeferred,
                "reason": f.class_reason,
                "at": now(),
            })
        })
        .collect()
}
