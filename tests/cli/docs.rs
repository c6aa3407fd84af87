//! The guide (docs/, an mdBook) and the front-door files hold together (issue 40): every
//! internal link and anchor resolves, every page is in the book's summary, the examples the
//! guide shows are what the code reads, and the README's picture comes from a real run of
//! `scripts/picture.sh`. `.ci/run` builds the book with mdBook; these checks need no mdBook.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::harness::{bin, hermetic_command, system_path, Run, TestRepo};
use crate::readme::fenced_blocks;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The Markdown files of the guide, under docs/src.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("docs/src"), &mut out);
    out.sort();
    out
}

/// A page's text as mdBook sees it: `{{#include path}}` replaced by that file.
fn expanded(page: &Path) -> String {
    let text = read(page);
    let mut out = String::new();
    for line in text.lines() {
        if let Some(rest) = line.trim().strip_prefix("{{#include ") {
            let target = rest.trim_end_matches("}}").trim();
            out.push_str(&read(&page.parent().unwrap().join(target)));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// Text outside fenced code blocks and code spans, where Markdown reads links and headings.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if !fenced {
            let mut in_code = false;
            for c in line.chars() {
                if c == '`' {
                    in_code = !in_code;
                } else if !in_code {
                    out.push(c);
                }
            }
        }
        out.push('\n');
    }
    out
}

/// The anchor mdBook (and GitHub, for these headings) gives a heading: lower-case letters,
/// digits, `-` and `_` kept, whitespace made `-`, everything else dropped; repeats get `-1`….
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#').trim();
        // A link in a heading counts by its text.
        let mut plain = String::new();
        let mut chars = heading.chars().peekable();
        while let Some(c) = chars.next() {
            if c == ']' && chars.peek() == Some(&'(') {
                for d in chars.by_ref() {
                    if d == ')' {
                        break;
                    }
                }
            } else {
                plain.push(c);
            }
        }
        let id: String = plain
            .chars()
            .filter_map(|c| {
                if c.is_alphanumeric() || c == '_' || c == '-' {
                    Some(c.to_lowercase().next().unwrap_or(c))
                } else if c.is_whitespace() {
                    Some('-')
                } else {
                    None
                }
            })
            .collect();
        let mut unique = id.clone();
        let mut n = 1;
        while seen.contains(&unique) {
            unique = format!("{id}-{n}");
            n += 1;
        }
        seen.insert(unique);
    }
    seen
}

/// The link targets `](…)` of `text`'s prose.
fn links(text: &str) -> Vec<String> {
    let p = prose(text);
    let mut out = Vec::new();
    let mut rest = p.as_str();
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let Some(end) = after.find(')') else { break };
        out.push(after[..end].trim().to_string());
        rest = &after[end..];
    }
    out
}

/// Every link of `file` (with its text as mdBook reads it) to a file of the repository exists,
/// and each `#anchor` is a heading of its target.
fn check_links(file: &Path, text: &str, problems: &mut Vec<String>) {
    for link in links(text) {
        if link.starts_with("http://")
            || link.starts_with("https://")
            || link.starts_with("mailto:")
        {
            continue;
        }
        let (path, anchor) = match link.split_once('#') {
            Some((p, a)) => (p.to_string(), Some(a.to_string())),
            None => (link.clone(), None),
        };
        let target = if path.is_empty() {
            file.to_path_buf()
        } else {
            file.parent().unwrap().join(&path)
        };
        if !target.exists() {
            problems.push(format!("{}: {link}: no such file", file.display()));
            continue;
        }
        if let Some(anchor) = anchor {
            let body = if target == file {
                text.to_string()
            } else {
                expanded(&target)
            };
            if !anchors(&body).contains(&anchor) {
                problems.push(format!(
                    "{}: {link}: no heading makes #{anchor}",
                    file.display()
                ));
            }
        }
    }
}

#[test]
fn every_internal_link_and_anchor_resolves() {
    let mut problems = Vec::new();
    for page in pages() {
        check_links(&page, &expanded(&page), &mut problems);
    }
    for file in ["README.md", "CONTRIBUTING.md", "ARCHITECTURE.md"] {
        let path = root().join(file);
        check_links(&path, &read(&path), &mut problems);
    }
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

/// The checker itself: a missing page and a missing anchor are both found.
#[test]
fn the_link_check_finds_a_missing_page_and_a_missing_anchor() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("a.md");
    std::fs::write(
        dir.path().join("b.md"),
        "# Git 3.0 repositories\n## The agent's Stop hook\n",
    )
    .unwrap();
    let mut problems = Vec::new();
    check_links(
        &page,
        "[ok](b.md#git-30-repositories) [ok](b.md#the-agents-stop-hook) `[code](x.md)`\n\
         [gone](c.md) [no anchor](b.md#nothing-here)\n",
        &mut problems,
    );
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("c.md: no such file"), "{problems:?}");
    assert!(problems[1].contains("#nothing-here"), "{problems:?}");
}

#[test]
fn every_page_is_in_the_summary_and_every_entry_exists() {
    let src = root().join("docs/src");
    let summary = read(&src.join("SUMMARY.md"));
    let listed: BTreeSet<PathBuf> = links(&summary).iter().map(|l| src.join(l)).collect();
    for l in &listed {
        assert!(
            l.exists(),
            "SUMMARY.md lists {} which does not exist",
            l.display()
        );
    }
    for page in pages() {
        if page.ends_with("SUMMARY.md") {
            continue;
        }
        assert!(
            listed.contains(&page),
            "{} is not in docs/src/SUMMARY.md",
            page.display()
        );
    }
    // The chapters the guide promises (issue 40).
    for chapter in [
        "getting-started.md",
        "contracts.md",
        "evidence.md",
        "hooks.md",
        "ci.md",
        "spar.md",
        "agents.md",
        "team.md",
        "policy.md",
        "reference/exit-codes.md",
        "reference/storage.md",
        "reference/records.md",
        "reference/handoff.md",
        "performance.md",
        "glossary.md",
    ] {
        assert!(
            listed.contains(&src.join(chapter)),
            "the guide has no {chapter}"
        );
    }
}

/// Each hand-off example of the reference parses as the pipeline parses an actor's answer.
#[test]
fn the_handoff_examples_are_what_the_pipeline_accepts() {
    let page = read(&root().join("docs/src/reference/handoff.md"));
    let block = fenced_blocks(&page)
        .into_iter()
        .find(|b| b.lang == "json")
        .expect("handoff.md shows its examples in a json block");
    let mut examples: Vec<String> = Vec::new();
    for line in block.text.lines() {
        if line.starts_with("{\"actor\"") {
            examples.push(String::new());
        }
        let last = examples
            .last_mut()
            .expect("an example starts with {\"actor\"");
        last.push_str(line);
        last.push('\n');
    }
    assert!(examples.len() >= 4, "{examples:?}");
    for e in &examples {
        if let Err(why) = rails_spar::pipeline::handoff::parse(e) {
            panic!("the example does not parse: {why}\n{e}");
        }
    }
    // And the schema is strict, as the page says: one unknown key is refused.
    let extra = examples[0].replacen("{\"actor\"", "{\"extra\": 1, \"actor\"", 1);
    assert!(rails_spar::pipeline::handoff::parse(&extra).is_err());
}

/// The full sprint document of the contracts chapter generates what the chapter says.
#[test]
fn the_sprint_document_example_generates_what_the_guide_shows() {
    let page = read(&root().join("docs/src/contracts.md"));
    let blocks = fenced_blocks(&page);
    let doc = blocks
        .iter()
        .find(|b| b.lang == "markdown" && b.text.starts_with("# SPRINT-007"))
        .expect("contracts.md shows a full sprint document");
    let shown = blocks
        .iter()
        .find(|b| b.lang == "text" && b.text.starts_with("wrote .rails/contracts/SPRINT-007.json"))
        .expect("contracts.md shows what generate says");
    let repo = TestRepo::new();
    repo.write("sprint.md", &doc.text);
    let out = repo.rails(&["contract", "generate", "sprint.md"]);
    out.ok();
    let said = format!("{}{}", out.stdout, out.stderr);
    for line in shown.text.lines() {
        assert!(said.contains(line), "generate did not say {line:?}:\n{out}");
    }
}

/// The README's picture: the script runs a real refused push and a passing gate, and the
/// committed SVG is what it draws (record ids and dates aside, which change with every run).
#[test]
fn the_picture_comes_from_a_real_run_of_the_script() {
    let readme = read(&root().join("README.md"));
    assert!(
        readme.contains("](docs/src/img/push-and-gate.svg)"),
        "the README shows the picture"
    );
    let tmp = tempfile::tempdir().unwrap();
    let out_svg = tmp.path().join("picture.svg");
    let bins = bin("git-rails").parent().unwrap().to_path_buf();
    let mut cmd = hermetic_command("sh", tmp.path(), &root());
    system_path(&mut cmd, &[&bins]);
    let run = Run::of(
        cmd.arg(root().join("scripts/picture.sh"))
            .arg(&out_svg)
            .env("TMPDIR", tmp.path()),
    );
    run.ok().stdout_has("picture: ");
    let drawn = read(&out_svg);
    let committed = read(&root().join("docs/src/img/push-and-gate.svg"));
    for svg in [&drawn, &committed] {
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{svg}"
        );
        assert!(svg.contains("push of refs/heads/main refused"), "{svg}");
        assert!(svg.contains("gate passed: SPRINT-001 v1 is done"), "{svg}");
        assert!(
            svg.contains("main -&gt; main"),
            "the second push went through: {svg}"
        );
    }
    // The same lines in the same order: only hexadecimal ids may differ.
    let shape = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| {
                l.split(|c: char| !c.is_ascii_alphanumeric())
                    .filter(|w| !(w.len() >= 7 && w.chars().all(|c| c.is_ascii_hexdigit())))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    let (drawn, committed) = (shape(&drawn), shape(&committed));
    let differs = (0..drawn.len().max(committed.len())).find(|&i| drawn.get(i) != committed.get(i));
    if let Some(i) = differs {
        panic!(
            "docs/src/img/push-and-gate.svg is stale from line {}: the script draws {:?}, the file has {:?}; \
             run `PATH=\"$PWD/target/debug:$PATH\" sh scripts/picture.sh docs/src/img/push-and-gate.svg`",
            i + 1,
            drawn.get(i),
            committed.get(i)
        );
    }
}
