//! Our lines inside files other tools own (`.husky/<hook>`, `lefthook-local.yml`): a marked
//! block that `uninstall` takes out again so the file is byte for byte what it was.
//!
//! A block starts with a `# rails-spar gate: begin` line and ends with `# rails-spar gate: end`.
//! The begin line carries what else the insertion did, so removing it needs no state file:
//! `[created]` (the file did not exist) and `[newline]` (a final newline was added before it).

use crate::error::{Error, Result};

pub const BEGIN: &str = "# rails-spar gate: begin";
pub const END: &str = "# rails-spar gate: end";
const TAIL: &str = "(`git rails hooks uninstall` removes this block)";

/// Whether the text holds one of our blocks.
pub fn has_block(text: &str) -> bool {
    text.lines().any(|l| l.trim_start().starts_with(BEGIN))
}

fn begin_line(indent: &str, created: bool, newline: bool) -> String {
    let mut tags = String::new();
    if created {
        tags.push_str(" [created]");
    }
    if newline {
        tags.push_str(" [newline]");
    }
    format!("{indent}{BEGIN}{tags} {TAIL}\n")
}

/// `body` (whole lines, each ending in `\n`) wrapped in our markers, indented by `indent`.
fn wrap(indent: &str, body: &str, created: bool, newline: bool) -> String {
    let mut s = begin_line(indent, created, newline);
    for l in body.lines() {
        s.push_str(indent);
        s.push_str(l);
        s.push('\n');
    }
    s.push_str(indent);
    s.push_str(END);
    s.push('\n');
    s
}

/// Inserts `body` at byte offset `at` of `text` (None: the file does not exist).
fn insert_at(text: Option<&str>, at: usize, indent: &str, body: &str) -> String {
    let Some(text) = text else {
        return wrap(indent, body, true, false);
    };
    let (head, tail) = text.split_at(at);
    let newline = !head.is_empty() && !head.ends_with('\n');
    let mut s = head.to_string();
    if newline {
        s.push('\n');
    }
    s.push_str(&wrap(indent, body, false, newline));
    s.push_str(tail);
    s
}

/// A shell script (husky's `.husky/<hook>`): our lines go first, after a `#!` line if there
/// is one, so they read the hook's stdin before anything else can.
pub fn insert_shell(text: Option<&str>, body: &str) -> String {
    let at = match text {
        Some(t) if t.starts_with("#!") => t.find('\n').map(|i| i + 1).unwrap_or(t.len()),
        _ => 0,
    };
    insert_at(text, at, "", body)
}

/// Appends `body` at the end (a `.git/info/exclude` entry).
pub fn insert_at_end(text: Option<&str>, body: &str) -> String {
    insert_at(text, text.map(str::len).unwrap_or(0), "", body)
}

/// Removes every block; returns the text left and whether a block said it created the file.
/// None when there is no block.
pub fn remove(text: &str) -> Option<(String, bool)> {
    if !has_block(text) {
        return None;
    }
    let mut out = String::new();
    let mut created = false;
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if !inside && t.starts_with(BEGIN) {
            inside = true;
            let tags = &t[BEGIN.len()..];
            if tags.contains("[created]") {
                created = true;
            }
            if tags.contains("[newline]") && out.ends_with('\n') {
                out.pop();
            }
            continue;
        }
        if inside {
            if t.trim_end() == END {
                inside = false;
            }
            continue;
        }
        out.push_str(line);
    }
    Some((out, created))
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_content(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

/// A lefthook configuration: our command under `<hook>:`, added to the `commands:` or `jobs:`
/// the hook already has, or as a new top-level `<hook>:` key. Refuses layouts it cannot edit
/// safely (flow style) rather than writing YAML lefthook would read differently.
/// `fields` are the command's keys (`run: …` lines, comments allowed), unindented.
pub fn insert_lefthook(text: Option<&str>, hook: &str, fields: &str, file: &str) -> Result<String> {
    let command = format!("rails-gate:\n{}", indent_all(fields, 2));
    let Some(t) = text else {
        let body = format!("{hook}:\n  commands:\n{}", indent_all(&command, 4));
        return Ok(insert_at(None, 0, "", &body));
    };
    // Offsets of each line.
    let mut lines = Vec::new();
    let mut off = 0;
    for l in t.split_inclusive('\n') {
        lines.push((off, l));
        off += l.len();
    }
    let key = format!("{hook}:");
    let Some(hi) = lines.iter().position(|(_, l)| {
        indent_of(l) == 0 && {
            let s = l.trim_end();
            s == key || s.starts_with(&format!("{key} #"))
        }
    }) else {
        if lines
            .iter()
            .any(|(_, l)| indent_of(l) == 0 && l.starts_with(&key))
        {
            return Err(unsafe_layout(file, hook));
        }
        let body = format!("{hook}:\n  commands:\n{}", indent_all(&command, 4));
        return Ok(insert_at(Some(t), t.len(), "", &body));
    };
    // The hook's block: the lines after it up to the next top-level content line.
    let end = lines[hi + 1..]
        .iter()
        .position(|(_, l)| is_content(l) && indent_of(l) == 0)
        .map(|p| hi + 1 + p)
        .unwrap_or(lines.len());
    let block = &lines[hi + 1..end];
    let after = |i: usize| -> usize { lines[i].0 + lines[i].1.len() };
    let child = block
        .iter()
        .find(|(_, l)| is_content(l))
        .map(|(_, l)| indent_of(l));
    let Some(ci) = child else {
        let body = format!("commands:\n{}", indent_all(&command, 2));
        return Ok(insert_at(Some(t), after(hi), "  ", &body));
    };
    for (k, (_, l)) in block.iter().enumerate() {
        if indent_of(l) != ci || !is_content(l) {
            continue;
        }
        let s = l.trim();
        let idx = hi + 1 + k;
        if s == "commands:" || s.starts_with("commands: #") {
            let gi = block[k + 1..]
                .iter()
                .find(|(_, l)| is_content(l))
                .map(|(_, l)| indent_of(l))
                .filter(|&g| g > ci)
                .unwrap_or(ci + 2);
            return Ok(insert_at(Some(t), after(idx), &" ".repeat(gi), &command));
        }
        if s == "jobs:" || s.starts_with("jobs: #") {
            let ji = block[k + 1..]
                .iter()
                .find(|(_, l)| is_content(l))
                .map(|(_, l)| indent_of(l))
                .filter(|&g| g >= ci)
                .unwrap_or(ci + 2);
            let job = format!("- name: rails-gate\n{}", indent_all(fields, 2));
            return Ok(insert_at(Some(t), after(idx), &" ".repeat(ji), &job));
        }
        if s.starts_with("commands:") || s.starts_with("jobs:") {
            return Err(unsafe_layout(file, hook));
        }
    }
    let body = format!("commands:\n{}", indent_all(&command, 2));
    Ok(insert_at(Some(t), after(hi), &" ".repeat(ci), &body))
}

fn indent_all(s: &str, n: usize) -> String {
    s.lines()
        .map(|l| format!("{}{l}\n", " ".repeat(n)))
        .collect()
}

fn unsafe_layout(file: &str, hook: &str) -> Error {
    Error::refused(format!(
        "{file}: the `{hook}` key is written in a form this command does not edit (flow style or a value on the same line); nothing was written"
    ))
    .hint(format!(
        "write it in block style (`{hook}:` on its own line), or add the command yourself: `git rails hook {hook} …` with `use_stdin: true`"
    ))
}

/// The lines added and removed between two texts, for `--dry-run` and the install report
/// (our edits only ever insert or remove one contiguous run of lines).
pub fn diff(path: &str, old: Option<&str>, new: Option<&str>) -> String {
    let a: Vec<&str> = old.map(|s| s.lines().collect()).unwrap_or_default();
    let b: Vec<&str> = new.map(|s| s.lines().collect()).unwrap_or_default();
    let pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut s = format!(
        "--- {}\n+++ {}\n@@ line {} @@\n",
        if old.is_some() { path } else { "/dev/null" },
        if new.is_some() { path } else { "/dev/null" },
        pre + 1
    );
    for l in &a[pre..a.len() - suf] {
        s.push_str(&format!("-{l}\n"));
    }
    for l in &b[pre..b.len() - suf] {
        s.push_str(&format!("+{l}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(orig: Option<&str>, new: &str) {
        let (left, created) = remove(new).expect("a block");
        match orig {
            Some(o) => {
                assert_eq!(left, o);
                assert!(!created);
            }
            None => {
                assert_eq!(left, "");
                assert!(created);
            }
        }
    }

    #[test]
    fn shell_blocks_go_after_the_shebang_and_come_out_exactly() {
        let body = "git rails hook pre-push \"$@\"\n";
        for orig in [
            None,
            Some(""),
            Some("npm test\n"),
            Some("npm test"),
            Some("#!/bin/sh"),
            Some("#!/bin/sh\nnpm test\n"),
        ] {
            let new = insert_shell(orig, body);
            assert!(new.contains(body), "{new}");
            if let Some(o) = orig {
                if o.starts_with("#!") {
                    assert!(
                        new.starts_with("#!/bin/sh\n# rails-spar gate: begin"),
                        "{new}"
                    );
                }
            }
            roundtrip(orig, &new);
        }
    }

    #[test]
    fn lefthook_commands_land_under_the_hook() {
        let run = "run: git rails hook pre-push {1} {2}\nuse_stdin: true\n";
        let f = "lefthook.yml";
        let new = insert_lefthook(None, "pre-push", run, f).unwrap();
        assert!(new.contains("pre-push:\n  commands:\n    rails-gate:\n      run: git rails hook pre-push {1} {2}\n      use_stdin: true\n"), "{new}");
        roundtrip(None, &new);

        let orig = "pre-commit:\n  commands:\n    lint:\n      run: true\n";
        let new = insert_lefthook(Some(orig), "pre-push", run, f).unwrap();
        assert!(new.starts_with(orig));
        assert!(
            new.contains("\npre-push:\n  commands:\n    rails-gate:\n"),
            "{new}"
        );
        roundtrip(Some(orig), &new);

        let orig =
            "pre-push:\n  parallel: true\n  commands:\n    test:\n      run: npm test\nother: 1\n";
        let new = insert_lefthook(Some(orig), "pre-push", run, f).unwrap();
        assert!(
            new.contains("  commands:\n    # rails-spar gate: begin"),
            "{new}"
        );
        assert!(
            new.contains("    rails-gate:\n      run: git rails"),
            "{new}"
        );
        roundtrip(Some(orig), &new);

        let orig = "pre-push:\n  jobs:\n    - name: test\n      run: npm test\n";
        let new = insert_lefthook(Some(orig), "pre-push", run, f).unwrap();
        assert!(
            new.contains("  jobs:\n    # rails-spar gate: begin"),
            "{new}"
        );
        assert!(
            new.contains("    - name: rails-gate\n      run: git rails"),
            "{new}"
        );
        roundtrip(Some(orig), &new);

        let orig = "pre-push:\n  parallel: true\n";
        let new = insert_lefthook(Some(orig), "pre-push", run, f).unwrap();
        assert!(
            new.contains("pre-push:\n  # rails-spar gate: begin"),
            "{new}"
        );
        assert!(new.contains("  commands:\n    rails-gate:\n"), "{new}");
        roundtrip(Some(orig), &new);

        assert!(insert_lefthook(Some("pre-push: {parallel: true}\n"), "pre-push", run, f).is_err());
        let orig = "pre-push:\n  commands: {a: {run: x}}\n";
        assert!(insert_lefthook(Some(orig), "pre-push", run, f).is_err());
    }

    #[test]
    fn diff_shows_the_inserted_lines() {
        let d = diff("f", Some("a\nb\n"), Some("a\nx\nb\n"));
        assert!(d.contains("@@ line 2 @@\n+x\n"), "{d}");
        let d = diff("f", None, Some("x\n"));
        assert!(d.starts_with("--- /dev/null\n+++ f\n"), "{d}");
    }
}
