//! `manual_checklist`: a markdown checklist whose items (the spec's and those frozen with the
//! contract) must all be ticked; a frozen contract judges the committed text.

use super::*;

/// One `- [ ] text` line of a Markdown checklist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ChecklistItem {
    pub(super) text: String,
    pub(super) ticked: bool,
    pub(super) line: usize,
}

pub(super) fn checkbox_regex() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\[([ xX])\](?:\s+(.*))?$").ok())
        .as_ref()
}

/// Every checkbox item in `markdown`, outside fenced code blocks.
pub(super) fn checklist_items(markdown: &str) -> Vec<ChecklistItem> {
    let Some(re) = checkbox_regex() else {
        return Vec::new();
    };
    let mut fence: Option<&str> = None;
    let mut items = Vec::new();
    for (i, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => {
                fence = Some(m);
                continue;
            }
            (Some(open), Some(m)) if open == m => {
                fence = None;
                continue;
            }
            (Some(_), _) => continue,
            (None, None) => {}
        }
        if let Some(c) = re.captures(line) {
            items.push(ChecklistItem {
                text: c.get(2).map_or("", |m| m.as_str()).trim().to_string(),
                ticked: c.get(1).is_some_and(|m| m.as_str() != " "),
                line: i + 1,
            });
        }
    }
    items
}

/// The texts of a Markdown checklist's items, in order (what `freeze` captures).
pub fn checklist_item_texts(markdown: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in checklist_items(markdown) {
        if !out.contains(&i.text) {
            out.push(i.text);
        }
    }
    out
}

pub(super) fn manual_checklist(spec: &ChecklistSpec, root: &Path, reads: Reads<'_>) -> Outcome {
    let path = spec.path.as_str();
    let empty = json!({"unticked": [], "missing": []});
    let text = match reads.checklist_text {
        Some(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        None => match read_file(path, root, &empty) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(o) => return *o,
        },
    };
    let items = checklist_items(&text);
    let frozen_items = reads.checklist_items.map(|i| i.to_vec());
    let (considered, missing): (Vec<&ChecklistItem>, Vec<String>) =
        match spec.items.as_ref().or(frozen_items.as_ref()) {
            None => (items.iter().collect(), Vec::new()),
            Some(wanted) => {
                let mut considered = Vec::new();
                let mut missing = Vec::new();
                for w in wanted {
                    let w = w.trim();
                    let found: Vec<&ChecklistItem> = items.iter().filter(|i| i.text == w).collect();
                    if found.is_empty() {
                        missing.push(w.to_string());
                    }
                    considered.extend(found);
                }
                (considered, missing)
            }
        };
    let mut unticked: Vec<String> = Vec::new();
    for item in considered.iter().filter(|i| !i.ticked) {
        if !unticked.contains(&item.text) {
            unticked.push(item.text.clone());
        }
    }
    let ticked = considered.iter().filter(|i| i.ticked).count();
    let evidence = json!({
        "unticked": unticked,
        "missing": missing,
        "ticked": ticked,
        "total": considered.len(),
    });
    if considered.is_empty() && missing.is_empty() {
        return Outcome::fail(format!("{path:?} has no checkbox items"), evidence);
    }
    let mut problems = Vec::new();
    if !unticked.is_empty() {
        problems.push(format!(
            "{}: {}",
            plural(unticked.len(), "unticked item", "unticked items"),
            quoted_list(&unticked, 5)
        ));
    }
    if !missing.is_empty() {
        problems.push(format!(
            "{} not in {path:?}: {}",
            plural(missing.len(), "listed item", "listed items"),
            quoted_list(&missing, 5)
        ));
    }
    if problems.is_empty() {
        Outcome::pass(
            format!(
                "{} of {} ticked in {path:?}",
                ticked,
                plural(considered.len(), "item", "items")
            ),
            evidence,
        )
    } else {
        Outcome::fail(problems.join("; "), evidence)
    }
}
