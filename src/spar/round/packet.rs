//! `packet.md`, what every reviewer gets, and each reviewer's own input (its standpoint).

use super::*;

/// What one reviewer is given: the packet, and in a round with standpoints its own instruction
/// ("관점 전달"). Without standpoints it is the packet, byte for byte.
pub(super) fn reviewer_input(packet: &str, name: &str, standpoints: &[Standpoint]) -> String {
    if standpoints.is_empty() {
        return packet.to_string();
    }
    let mut s = packet.to_string();
    match standpoints.iter().find(|sp| sp.reviewer == name) {
        Some(sp) => {
            s.push_str(&format!(
                "\n## Your standpoint\n\nYou are the reviewer {name}. Your standpoint for this round is the risk below. Check every angle while attacking that risk, and report on it in `standpoint_report`: `checked` true and what you checked, or `checked` false and why you could not.\n\n"
            ));
            s.push_str(&fenced(&sp.text));
        }
        None => s.push_str(&format!(
            "\n## Your standpoint\n\nYou are the reviewer {name}. You have no standpoint in this round: review the whole change, every angle. Send `standpoint_report` as null.\n"
        )),
    }
    s
}

/// What the packet is made of. The round's name is not part of it, so a re-run of the same
/// inputs has the same `packet_sha256`.
pub(super) struct PacketInput<'a> {
    pub(super) series: &'a str,
    pub(super) stage: &'a str,
    pub(super) base: ObjectId,
    pub(super) head: ObjectId,
    pub(super) angles: &'a [Angle],
    pub(super) check_paths: &'a [String],
    pub(super) rules: &'a [(Document, String)],
    pub(super) criteria: Option<(&'a Document, &'a str)>,
    pub(super) subject: Option<(&'a Document, &'a str)>,
    /// The user's decisions (G35); no section without any.
    pub(super) decisions: &'a [Decision],
    /// The round's standpoints; no section without any.
    pub(super) standpoints: &'a [Standpoint],
}

pub(super) fn fenced(text: &str) -> String {
    let mut fence = "```".to_string();
    while text.contains(&fence) {
        fence.push('`');
    }
    format!(
        "{fence}\n{}{}{fence}\n",
        text,
        if text.ends_with('\n') { "" } else { "\n" }
    )
}

/// `packet.md`: what every reviewer gets.
pub(super) fn render_packet(store: &Store, p: &PacketInput<'_>) -> Result<String> {
    let stat = store.review_diff_stat(p.base, p.head)?;
    let diff = store.review_diff(p.base, p.head)?;
    let mut s = format!(
        "# Review packet: {} ({})\n\n- base: {}\n- head: {}\n\nYou review the change from base to head. The copies are read-only: `base/` and `head/` in your workspace. Read them, and nothing outside the workspace.\n\n",
        p.series, p.stage, p.base, p.head
    );
    s.push_str("## How to report\n\nAnswer with exactly one JSON object that validates against `schema.json`: `reviewed_head` (the head id above, at least 7 characters), `verdict` (no_blocking_findings, blocking_findings or could_not_review), `angles_checked` [{angle, result}], `angles_unchecked` [{angle, reason}] (every angle below in one of the two), `findings`, `limits`.\n\nA finding's `location` is `path`, `path:line` or `path:line-line` with the path as in the copies (`head/`, `base/` or `./` in front is fine; no prefix means head, then base); anything after the line must be separated by a space, a comma or a semicolon. A location that names nothing in the copies is an unreadable location. A `rule` link names a rule document below (`name:line` or `name:line-line`), a `contract` link a rule document or a file of the head commit, a `criterion` link the `AC-<n>` ids of the criteria document; a link that cannot be confirmed counts as no link.\n\n");
    s.push_str("## Angles to check\n\n");
    for a in p.angles {
        s.push_str(&format!("- {}\n", a.as_str()));
    }
    s.push_str("\n## Check paths\n\n");
    if p.check_paths.is_empty() {
        s.push_str("None configured.\n");
    } else {
        s.push_str("Findings in these paths are about the checks themselves:\n\n");
        for c in p.check_paths {
            s.push_str(&format!("- `{c}`\n"));
        }
    }
    if !p.rules.is_empty() {
        s.push_str("\n## Rule documents\n");
        for (d, text) in p.rules {
            s.push_str(&format!("\n### {}\n\n", d.name()));
            s.push_str(&fenced(text));
        }
    }
    if let Some((d, text)) = p.criteria {
        s.push_str(&format!("\n## Criteria: {}\n\n", d.name()));
        s.push_str(&fenced(text));
    }
    if let Some((d, text)) = p.subject {
        s.push_str(&format!("\n## Subject: {}\n\n", d.name()));
        s.push_str(&fenced(text));
    }
    if !p.decisions.is_empty() {
        s.push_str("\n## Decisions the user made\n\nThe user decided these, in their own words. Do not ask for them to be decided again.\n");
        for (i, d) in p.decisions.iter().enumerate() {
            s.push_str(&format!("\n### Decision {}\n\n", i + 1));
            s.push_str(&fenced(&d.decision));
            s.push_str("\nThe user's words:\n\n");
            s.push_str(&fenced(&d.quote));
        }
    }
    if !p.standpoints.is_empty() {
        s.push_str("\n## Standpoints for this round\n\nEach reviewer below attacks its risk while checking every angle; a reviewer without one reviews the whole change.\n");
        for sp in p.standpoints {
            s.push_str(&format!("\n### {}\n\n", sp.reviewer));
            s.push_str(&fenced(&sp.text));
        }
    }
    s.push_str("\n## The change\n\n");
    s.push_str(&fenced(&stat));
    s.push('\n');
    s.push_str(&fenced(&diff));
    Ok(s)
}
