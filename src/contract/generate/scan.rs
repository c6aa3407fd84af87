//! Scanning the sprint document into sections: headings, list items (with their
//! continuation lines), code fences and HTML comments, the sprint id and type. Nothing here
//! decides what an item means.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SectionKind {
    Done,
    Verify,
    Prereq,
    NonGoals,
}

pub(super) const SECTION_KEYS: &[(SectionKind, &[&str])] = &[
    (
        SectionKind::Done,
        &[
            "완료 기준",
            "done criteria",
            "definition of done",
            "acceptance criteria",
        ],
    ),
    (
        SectionKind::Verify,
        &["검증 커맨드", "verification commands"],
    ),
    (SectionKind::Prereq, &["환경 전제", "prerequisites"]),
    (
        SectionKind::NonGoals,
        &["비목표", "non-goals", "out of scope"],
    ),
];

/// Lower case without whitespace, `-` and `_`: `Non-Goals` and `non goals` look the same.
pub(super) fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace() && *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The section a heading names: the key phrase found earliest in it wins.
pub(super) fn classify(heading: &str) -> Option<SectionKind> {
    let h = squash(heading);
    let mut best: Option<(usize, SectionKind)> = None;
    for (kind, keys) in SECTION_KEYS {
        for key in *keys {
            if let Some(pos) = h.find(&squash(key)) {
                if best.is_none_or(|(p, _)| pos < p) {
                    best = Some((pos, *kind));
                }
            }
        }
    }
    best.map(|(_, k)| k)
}

#[derive(Debug)]
pub(super) enum Block {
    /// A list item's text, without its marker and box.
    Item(String),
    /// A fenced code block: its language (lower case) and lines.
    Fence { info: String, lines: Vec<String> },
}

#[derive(Debug)]
pub(super) struct Section {
    pub(super) kind: SectionKind,
    pub(super) heading: String,
    pub(super) blocks: Vec<Block>,
}

#[derive(Debug, Default)]
pub(super) struct Scanned {
    /// The first `# ` heading.
    pub(super) title: Option<String>,
    pub(super) sections: Vec<Section>,
    /// The lines outside code blocks.
    pub(super) prose_lines: Vec<String>,
}

pub(super) struct OpenFence {
    pub(super) marker: char,
    pub(super) len: usize,
    pub(super) info: String,
    pub(super) lines: Vec<String>,
}

pub(super) fn fence_open(line: &str) -> Option<OpenFence> {
    let t = line.trim_start();
    let marker = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = t.chars().take_while(|c| *c == marker).count();
    if len < 3 {
        return None;
    }
    let info = t[len..].trim();
    if marker == '`' && info.contains('`') {
        return None;
    }
    Some(OpenFence {
        marker,
        len,
        info: info.split_whitespace().next().unwrap_or("").to_lowercase(),
        lines: Vec::new(),
    })
}

pub(super) fn fence_closes(line: &str, fence: &OpenFence) -> bool {
    let t = line.trim();
    t.chars().count() >= fence.len && t.chars().all(|c| c == fence.marker)
}

pub(super) fn heading(line: &str) -> Option<(usize, String)> {
    let c = captures(heading_re(), line)?;
    let level = c.get(1)?.as_str().len();
    let text = c.get(2).map_or("", |m| m.as_str());
    let text = match closing_hashes_re() {
        Some(re) => re.replace(text, "").into_owned(),
        None => text.to_string(),
    };
    Some((level, text.trim().to_string()))
}

pub(super) fn list_item(line: &str) -> Option<String> {
    let c = captures(list_item_re(), line)?;
    let text = c.get(1).map_or("", |m| m.as_str()).trim();
    let text = match find(checkbox_re(), text) {
        Some(m) => &text[m.end()..],
        None => text,
    };
    Some(text.trim().to_string())
}

pub(super) fn scan(doc: &str) -> Scanned {
    let mut out = Scanned::default();
    // The level of the open section's heading; the open section is the last one.
    let mut open: Option<usize> = None;
    let mut fence: Option<OpenFence> = None;
    let mut item_open = false;
    let mut in_comment = false;
    for line in doc.lines() {
        if let Some(mut f) = fence.take() {
            if fence_closes(line, &f) {
                push_fence(&mut out, open, f);
            } else {
                f.lines.push(line.to_string());
                fence = Some(f);
            }
            continue;
        }
        let line = strip_comments(line, &mut in_comment);
        let line = line.as_str();
        if let Some(f) = fence_open(line) {
            fence = Some(f);
            item_open = false;
            continue;
        }
        out.prose_lines.push(line.to_string());
        if let Some((level, text)) = heading(line) {
            item_open = false;
            // The title names the sprint; it is a section only when it names none.
            let title = level == 1 && out.title.is_none();
            if title {
                out.title = Some(text.clone());
            }
            let kind = if title && is_match(sprint_re(), &text) {
                None
            } else {
                classify(&text)
            };
            match kind {
                Some(kind) => {
                    out.sections.push(Section {
                        kind,
                        heading: text,
                        blocks: Vec::new(),
                    });
                    open = Some(level);
                }
                None => {
                    if open.is_some_and(|l| level <= l) {
                        open = None;
                    }
                }
            }
            continue;
        }
        if line.trim().is_empty() {
            item_open = false;
            continue;
        }
        let Some(section) = open.and(out.sections.last_mut()) else {
            continue;
        };
        if let Some(text) = list_item(line) {
            item_open = text.chars().any(char::is_alphanumeric);
            if item_open {
                section.blocks.push(Block::Item(text));
            }
        } else if item_open {
            if let Some(Block::Item(text)) = section.blocks.last_mut() {
                text.push(' ');
                text.push_str(line.trim());
            }
        }
    }
    // A block left open runs to the end of the document.
    if let Some(f) = fence {
        push_fence(&mut out, open, f);
    }
    out
}

/// `line` without HTML comments; `in_comment` carries an unclosed `<!--` to the next lines.
pub(super) fn strip_comments(line: &str, in_comment: &mut bool) -> String {
    let mut out = String::new();
    let mut rest = line;
    loop {
        if *in_comment {
            match rest.find("-->") {
                Some(i) => {
                    *in_comment = false;
                    rest = &rest[i + 3..];
                }
                None => return out,
            }
        }
        match rest.find("<!--") {
            Some(i) => {
                out.push_str(&rest[..i]);
                *in_comment = true;
                rest = &rest[i + 4..];
            }
            None => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

pub(super) fn push_fence(out: &mut Scanned, open: Option<usize>, f: OpenFence) {
    if let Some(section) = open.and(out.sections.last_mut()) {
        section.blocks.push(Block::Fence {
            info: f.info,
            lines: f.lines,
        });
    }
}

pub(super) fn sprint_id(
    scanned: &Scanned,
    doc: &str,
    given: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<String, Error> {
    let in_title = scanned
        .title
        .as_deref()
        .and_then(|t| find(sprint_re(), t))
        .map(|m| m.as_str().to_string());
    let id = match given {
        Some(id) => {
            let id = id.trim().to_string();
            if let Some(t) = in_title.filter(|t| *t != id) {
                warnings.push(format!(
                    "the sprint id is {id} (from --sprint), but the document's title names {t}"
                ));
            }
            id
        }
        None => match in_title {
            Some(id) => id,
            None => match find(sprint_re(), doc) {
                Some(m) => {
                    let id = m.as_str().to_string();
                    warnings.push(format!(
                        "the document's title names no sprint; took {id}, the first sprint id in its text"
                    ));
                    id
                }
                None => {
                    return Err(Error::refused(
                        "no sprint id: neither the document's title (its first `# ` heading) nor its text names a SPRINT-NNN",
                    )
                    .hint("name the sprint with --sprint, e.g. `git rails contract generate <sprint-doc.md> --sprint SPRINT-001`"))
                }
            },
        },
    };
    schema::check_sprint_id(&id)
        .map_err(|e| Error::refused(e).hint("pass a sprint id like SPRINT-001 with --sprint"))?;
    Ok(id)
}

/// `Type: feature` / `유형: bugfix` anywhere outside code blocks; `feature` when none.
pub(super) fn sprint_type(lines: &[String], warnings: &mut Vec<String>) -> SprintType {
    let Some(word) = lines
        .iter()
        .find_map(|l| captures(type_re(), l).and_then(|c| c.get(1)))
        .map(|m| m.as_str().to_lowercase())
    else {
        return SprintType::Feature;
    };
    match serde_json::from_value::<SprintType>(Value::String(word.clone())) {
        Ok(t) => t,
        Err(_) => {
            warnings.push(format!(
                "the sprint type {word:?} is not one of scaffold, feature, refactor, bugfix, migration, infra; used feature"
            ));
            SprintType::Feature
        }
    }
}
