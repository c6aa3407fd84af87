//! Adding one trailer to a commit message in-process, exactly as
//! `git interpret-trailers --if-exists doNothing --trailer "<key>: <value>"` would, for the
//! messages where that is certain — and only those.
//!
//! Why: the commit-msg hook runs on every commit, and starting `git interpret-trailers` was most
//! of its time (issue 15's hook figures). git's trailer rules have corners (an existing trailer
//! block is re-formatted, a token matches another by prefix, a `---` line ends the message, an
//! old `Conflicts:` block is ignored, configuration changes separators and placement). So this
//! handles one case — the message has no trailer block yet, which is what a bound branch's
//! commits look like before the hook's first trailer — and answers `None` for anything else;
//! the caller then asks git. `tests/fuzz` compares the answer with git's own output over
//! generated messages. The caller also asks git whenever `trailer.*` or `core.commentChar` /
//! `core.commentString` is configured, which this file does not read.

/// git's cut line (`git commit -v`): everything from it on is not the message.
const CUT_LINE: &str = "# ------------------------ >8 ------------------------\n";

/// The message with `key: value` added as git would add it, or `None` when this file cannot be
/// sure of git's answer (the caller asks git).
pub fn add_to_message(message: &str, key: &str, value: &str) -> Option<String> {
    if message.contains('\r') || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return None;
    }
    // git completes the last line before it looks at the message.
    let mut buf = message.to_string();
    if !buf.is_empty() && !buf.ends_with('\n') {
        buf.push('\n');
    }
    let cutoff = cut_line_start(&buf);
    if lines(&buf[..cutoff]).any(|(_, l)| l.starts_with("---") || l.starts_with("Conflicts:")) {
        return None;
    }
    let end = end_of_log_message(&buf, cutoff);
    let log = &buf[..end];
    if has_trailer_like_last_paragraph(log) {
        return None;
    }
    let mut out = String::with_capacity(buf.len() + key.len() + value.len() + 4);
    out.push_str(log);
    if !ends_with_blank_line(log) {
        out.push('\n');
    }
    out.push_str(key);
    out.push_str(": ");
    out.push_str(value);
    out.push('\n');
    out.push_str(&buf[end..]);
    Some(out)
}

/// Each line of `s` with its start offset (the line includes its `\n`).
fn lines(s: &str) -> impl Iterator<Item = (usize, &str)> {
    s.split_inclusive('\n').scan(0, |at, l| {
        let start = *at;
        *at += l.len();
        Some((start, l))
    })
}

/// Where the cut line starts, or the end of `buf` (git's `wt_status_locate_end`).
fn cut_line_start(buf: &str) -> usize {
    if buf.starts_with(CUT_LINE) {
        return 0;
    }
    match buf.find(&format!("\n{CUT_LINE}")) {
        Some(p) => p + 1,
        None => buf.len(),
    }
}

/// The end of the message proper: before the cut line and before the trailing run of comment
/// lines and empty lines (git's `ignored_log_message_bytes`; the `Conflicts:` case was refused
/// before this is called).
///
/// git keeps the start of that run in an offset where 0 means "no run yet", so a run that
/// starts at the very first byte is not ignored until its second line; kept as git has it.
fn end_of_log_message(buf: &str, cutoff: usize) -> usize {
    let mut run_start = 0;
    for (at, l) in lines(&buf[..cutoff]) {
        if l.starts_with('#') || l.starts_with('\n') {
            if run_start == 0 {
                run_start = at;
            }
        } else {
            run_start = 0;
        }
    }
    if run_start == 0 {
        cutoff
    } else {
        run_start
    }
}

/// git's `is_blank_line`: only white space up to the end of the line.
fn is_blank(line: &str) -> bool {
    line.bytes()
        .take_while(|&b| b != b'\n')
        .all(|b| b.is_ascii_whitespace())
}

fn ends_with_blank_line(log: &str) -> bool {
    lines(log).last().is_some_and(|(_, l)| is_blank(l))
}

/// Whether the last paragraph after the title holds a line git could read as a trailer (a
/// `token:` line or one git writes itself). Such a message may have a trailer block, whose
/// handling this file leaves to git.
fn has_trailer_like_last_paragraph(log: &str) -> bool {
    let all: Vec<(usize, &str)> = lines(log).collect();
    // The first paragraph is the title and never holds trailers (comment lines are skipped).
    let title_end = all
        .iter()
        .find(|(_, l)| !l.starts_with('#') && is_blank(l))
        .map_or(log.len(), |(at, _)| *at);
    let mut seen_text = false;
    for (at, l) in all.iter().rev() {
        if *at < title_end {
            break;
        }
        if l.starts_with('#') {
            continue;
        }
        if is_blank(l) {
            if seen_text {
                break;
            }
            continue;
        }
        seen_text = true;
        if l.starts_with("Signed-off-by: ")
            || l.starts_with("(cherry picked from commit ")
            || looks_like_trailer(l)
        {
            return true;
        }
    }
    false
}

/// git's `find_separator` with the default separators (`:`), at a position ≥ 1, on a line that
/// does not start with white space: `Token:`, `Bug #42:` …
fn looks_like_trailer(line: &str) -> bool {
    let b = line.as_bytes();
    if b.first().is_none_or(|c| c.is_ascii_whitespace()) {
        return false;
    }
    let mut whitespace = false;
    for (i, &c) in b.iter().enumerate() {
        if c == b':' {
            return i >= 1;
        }
        if !whitespace && (c.is_ascii_alphanumeric() || c == b'-') {
            continue;
        }
        if i != 0 && (c == b' ' || c == b'\t') {
            whitespace = true;
            continue;
        }
        return false;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::add_to_message;

    fn add(m: &str) -> Option<String> {
        add_to_message(m, "Rails-Sprint", "S")
    }

    // Each expected output is what `git interpret-trailers --if-exists doNothing` (2.47) wrote.
    #[test]
    fn the_cases_git_was_asked() {
        assert_eq!(add("msg").as_deref(), Some("msg\n\nRails-Sprint: S\n"));
        assert_eq!(add("msg\n").as_deref(), Some("msg\n\nRails-Sprint: S\n"));
        assert_eq!(
            add("msg\n\n# comment\n").as_deref(),
            Some("msg\n\nRails-Sprint: S\n\n# comment\n")
        );
        assert_eq!(
            add("feat: x\n").as_deref(),
            Some("feat: x\n\nRails-Sprint: S\n")
        );
        assert_eq!(
            add("subj\n\nbody\n").as_deref(),
            Some("subj\n\nbody\n\nRails-Sprint: S\n")
        );
        assert_eq!(
            add("subj\n\nbody\n\n\n\n").as_deref(),
            Some("subj\n\nbody\n\nRails-Sprint: S\n\n\n\n")
        );
        assert_eq!(add("").as_deref(), Some("\nRails-Sprint: S\n"));
        assert_eq!(
            add("subj\n\nbody\n# ------------------------ >8 ------------------------\ndiff\n")
                .as_deref(),
            Some("subj\n\nbody\n\nRails-Sprint: S\n# ------------------------ >8 ------------------------\ndiff\n")
        );
    }

    #[test]
    fn what_may_be_a_trailer_block_is_left_to_git() {
        // git re-formats `Key:val`, and `Rails:` matches `Rails-Sprint` as a prefix.
        for m in [
            "subj\n\nKey:val\n",
            "subj\n\nRails: x\n",
            "subj\n\nbody\nSigned-off-by: a\n",
            "subj\n---\nfoo\n",
            "subj\r\n\r\nbody\r\n",
            "subj\n\nConflicts:\n\ta.txt\n",
        ] {
            assert_eq!(add(m), None, "{m:?}");
        }
    }
}
