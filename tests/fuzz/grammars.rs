//! The targets with a grammar: locations and links (G7–G9), criterion ids, agy shell lines (G11)
//! and check-path globs (G24). Each first agrees with every case of tests/data/input-forms.json,
//! then fuzzes from those cases and from its grammar.

use std::collections::BTreeMap;

use arbitrary::Unstructured;
use rails_spar::spar::glob::{validate, CheckPaths};
use rails_spar::spar::location::{
    count_lines, criterion_ids, Copy, Document, EntryKind, LinkKind, Resolver, Target,
};
use rails_spar::spar::preset::shell::check_line;
use serde_json::Value;

use crate::corpus;
use crate::engine::fuzz;
use crate::gen::{number, words, Corpus};

fn copy(v: &Value) -> Copy {
    v.as_object()
        .expect("a copy")
        .iter()
        .map(|(p, k)| {
            let kind: EntryKind = k.as_str().expect("kind").parse().expect("entry kind");
            (p.clone(), kind)
        })
        .collect()
}

fn document(v: &Value) -> Document {
    Document::new(
        v["abs_path"].as_str().expect("abs_path"),
        v["repo_path"].as_str(),
        v["contents"].as_str().expect("contents").as_bytes(),
    )
}

struct Fixture {
    resolver: Resolver,
    head_texts: BTreeMap<String, String>,
    paths: Vec<String>,
}

fn fixture(v: &Value) -> Fixture {
    let globs: Vec<&str> = v["check_paths"]
        .as_array()
        .expect("check_paths")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let check_paths = CheckPaths::new(globs).expect("check paths");
    let mut resolver = Resolver::new(copy(&v["head"]), copy(&v["base"]), check_paths);
    let mut paths: Vec<String> = Vec::new();
    for side in ["head", "base"] {
        if let Some(m) = v[side].as_object() {
            paths.extend(m.keys().cloned());
        }
    }
    for doc in v["rule_documents"].as_array().into_iter().flatten() {
        resolver = resolver.with_rule_document(document(doc));
        paths.extend(doc["abs_path"].as_str().map(str::to_string));
    }
    for doc in v["documents"].as_array().into_iter().flatten() {
        resolver = resolver.with_document(document(doc));
        paths.extend(doc["abs_path"].as_str().map(str::to_string));
    }
    if !v["criteria"].is_null() {
        let c = &v["criteria"];
        resolver = resolver.with_criteria(document(c), c["contents"].as_str().expect("contents"));
        paths.extend(c["abs_path"].as_str().map(str::to_string));
    }
    let head_texts = v["head_texts"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, t)| (k.clone(), t.as_str().unwrap_or("").to_string()))
        .collect();
    Fixture {
        resolver,
        head_texts,
        paths,
    }
}

fn target_name(t: Option<Target>) -> &'static str {
    match t {
        Some(Target::HeadCopy) => "head",
        Some(Target::BaseCopy) => "base",
        Some(Target::RoundDocument) => "document",
        None => "none",
    }
}

fn lines_json(lines: Option<(u64, u64)>) -> Value {
    lines.map_or(Value::Null, |(a, b)| serde_json::json!([a, b]))
}

/// A location or link as a reviewer may spell one: a prefix, a known path (or pieces of one),
/// and a line part.
fn location(u: &mut Unstructured<'_>, paths: &[String]) -> arbitrary::Result<Vec<u8>> {
    let prefix = *u.choose(&[
        "",
        "",
        "head/",
        "base/",
        "./",
        "/repo/",
        "a/",
        "b/",
        "../",
        "head/base/",
        "/",
        "~/",
        "file://",
        "`",
    ])?;
    let path = if u.ratio(3, 4)? && !paths.is_empty() {
        let p = u.choose(paths)?.clone();
        if u.ratio(1, 5)? {
            p.to_uppercase()
        } else if u.ratio(1, 5)? {
            p.replace('/', "//")
        } else {
            p
        }
    } else {
        words(
            u,
            &[&[
                "app",
                "main.go",
                "checks",
                "t.py",
                "my test.py",
                "..",
                ".",
                "",
                "AGENTS.md",
                "rules",
                "API rules.md",
                "가.md",
                "x",
                "*",
                "PLAN.md",
                "docs",
                "specs",
            ]],
            &["/", "/", "\\", " "],
            5,
        )?
    };
    let n = number(u)?;
    let m = number(u)?;
    let suffix = match u.int_in_range(0..=14u8)? {
        0 => String::new(),
        1 => format!(":{n}"),
        2 => format!(":{n}-{m}"),
        3 => format!(":{n}–{m}"),
        4 => format!(":{n}:{m}"),
        5 => format!("#L{n}"),
        6 => format!("#L{n}-L{m}"),
        7 => format!(" (line {n})"),
        8 => ":".to_string(),
        9 => format!(":{n}-"),
        10 => format!(":{n},{m}"),
        11 => format!(":{n} trailing words"),
        12 => format!(":{n}-{m}:{n}"),
        13 => format!(" {n}"),
        _ => format!(":L{n}"),
    };
    let tail = if u.ratio(1, 8)? {
        *u.choose(&[" ", "\t", "`", ",", ".", "\n", " AC-1"])?
    } else {
        ""
    };
    Ok(format!("{prefix}{path}{suffix}{tail}").into_bytes())
}

#[test]
fn location_and_link() {
    let data = corpus::input_forms();
    let fixtures: BTreeMap<String, Fixture> = data["fixtures"]
        .as_object()
        .expect("fixtures")
        .iter()
        .map(|(k, v)| (k.clone(), fixture(v)))
        .collect();
    let of = |case: &Value| &fixtures[case["fixture"].as_str().expect("fixture")];

    // Agreement with every listed case.
    let mut failures = Vec::new();
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    for case in data["locations"].as_array().expect("locations") {
        let text = case["location"].as_str().expect("location");
        seeds.push(text.as_bytes().to_vec());
        let got = of(case).resolver.resolve_location(text);
        let want = (
            case["path"].as_str().unwrap_or(""),
            case["in_check_paths"].as_bool(),
            case["unreadable"].as_bool(),
            &case["lines"],
        );
        let have = (
            got.path.as_str(),
            Some(got.in_check_paths),
            Some(got.is_unreadable()),
            &lines_json(got.lines),
        );
        if have != want
            || case["target"]
                .as_str()
                .is_some_and(|t| t != target_name(got.target))
        {
            failures.push(format!("location {text:?}: got {got:?}, want {case}"));
        }
    }
    for case in data["links"].as_array().expect("links") {
        let link = case["link"].as_str().expect("link");
        seeds.push(link.as_bytes().to_vec());
        let kind: LinkKind = case["kind"]
            .as_str()
            .expect("kind")
            .parse()
            .expect("a kind");
        let fx = of(case);
        let mut lines = |p: &str| fx.head_texts.get(p).map(|t| count_lines(t.as_bytes()));
        let got = fx.resolver.resolve_link(kind, link, &mut lines);
        if Some(got.confirmed) != case["confirmed"].as_bool() {
            failures.push(format!("link {link:?} ({kind}): got {got:?}, want {case}"));
        }
    }
    for case in data["criterion_ids"].as_array().expect("criterion_ids") {
        let text = case["text"].as_str().expect("text");
        seeds.push(text.as_bytes().to_vec());
        let want: Vec<String> = serde_json::from_value(case["ids"].clone()).expect("ids");
        if criterion_ids(text) != want {
            failures.push(format!(
                "criterion ids of {text:?}: got {:?}, want {want:?}",
                criterion_ids(text)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} cases disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(seeds.len() >= 100, "only {} cases read", seeds.len());

    let fx = &fixtures["repo"];
    let c = Corpus::new(seeds.clone(), &["head/", "base/", ":", "-", "–", "#L"]);
    let paths = fx.paths.clone();
    let grammar = |u: &mut Unstructured<'_>| location(u, &paths);
    fuzz(
        "location_and_link",
        &seeds,
        |u| c.input(u, Some(&grammar)),
        |input| {
            let text = String::from_utf8_lossy(input);
            for fx in fixtures.values() {
                let loc = fx.resolver.resolve_location(&text);
                if loc.is_unreadable() {
                    assert!(
                        loc.path.is_empty() && !loc.in_check_paths && loc.target.is_none(),
                        "{loc:?}"
                    );
                }
                if loc.in_check_paths {
                    assert!(
                        fx.resolver.check_paths().matches(&loc.path),
                        "{loc:?} is not in the check paths"
                    );
                }
                if let Some((a, b)) = loc.lines {
                    assert!(a <= b, "a reversed range was read: {loc:?}");
                }
                let mut lines = |p: &str| fx.head_texts.get(p).map(|t| count_lines(t.as_bytes()));
                for kind in [
                    LinkKind::Rule,
                    LinkKind::Contract,
                    LinkKind::Criterion,
                    LinkKind::None,
                ] {
                    let r = fx.resolver.resolve_link(kind, &text, &mut lines);
                    if r.confirmed {
                        assert_eq!(r.kind, kind);
                        assert_eq!(r.link, text.as_ref());
                    } else {
                        assert_eq!(r.kind, LinkKind::None, "{r:?}");
                        assert!(r.link.is_empty(), "{r:?}");
                    }
                    assert_eq!(r.claimed_link, text.as_ref());
                }
            }
            let ids = criterion_ids(&text);
            for id in &ids {
                assert!(text.contains(id.as_str()), "{id} is not in the text");
            }
        },
    );
}

const PROGRAMS: &[&str] = &[
    "ls",
    "grep",
    "sed",
    "cat",
    "head",
    "tail",
    "wc",
    "find",
    "diff",
    "pwd",
    "sort",
    "rg",
    "echo",
    "printf",
    "true",
    "touch",
    "rm",
    "cd",
    "git",
    "python3",
    "sh",
    "bash",
    "env",
    "xargs",
    "tee",
    "awk",
    "/bin/ls",
    "/usr/bin/grep",
    "/tmp/ls",
    "./ls",
    "command",
    "exec",
    "eval",
    "if",
    "then",
    "for",
    "X=1",
    "sudo",
    "\\ls",
    "l\\s",
    "'ls'",
    "\"grep\"",
];
const ARGS: &[&str] = &[
    "-la",
    "-n",
    "-rn",
    "-i",
    "-e",
    "-exec",
    "-execdir",
    "-delete",
    "-fprint",
    "-ok",
    "--",
    "-c",
    "-o",
    "-u",
    "-r",
    "-E",
    "-name",
    "'*.go'",
    "-w",
    "-s",
    "--output=x",
    "-o/tmp/x",
    "--pre=sh",
    "head",
    "base",
    "head/a.go",
    "'a b'",
    "\"x y\"",
    "$HOME",
    "\"$HOME\"",
    "'$HOME'",
    "$(id)",
    "`id`",
    "'1,20p'",
    "'/x/,/y/p'",
    "'s/a/b/w out'",
    "'1d'",
    "'e ls'",
    "'1w x'",
    "x$",
    "{a,b}",
    "{}",
    "\\;",
    "';'",
    "'|'",
    "\"&&\"",
    "~",
    "*",
    "?",
    "[a]",
    "!",
    "%",
    "'",
    "\"",
    "\\",
    "\\\\",
    "-n'1p'",
    "-i.bak",
    "--in-place",
    "-z",
    "--files0-from=x",
    "2>/dev/null",
    "2>&1",
    "1>&2",
    "-n -e '1p'",
    "'p;w x'",
    "'1p;e id'",
    "'y/a/b/'",
    "'$p'",
    "\"$p\"",
    "'s/x/y/e'",
];
const OPS: &[&str] = &[
    " ",
    " ",
    " ",
    " | ",
    " && ",
    " || ",
    "; ",
    ";",
    " & ",
    " > ",
    " >> ",
    " < ",
    " 2>&1 ",
    " 2>/dev/null ",
    " >&2 ",
    " <<EOF ",
    " ( ",
    " ) ",
    " { ",
    " } ",
    " # ",
    " \\ ",
    "|",
    "&&",
    " <(",
    " >(",
    " $(",
    " `",
    " |& ",
    " ;; ",
    " ! ",
    "\t",
];

fn shell_line(u: &mut Unstructured<'_>) -> arbitrary::Result<Vec<u8>> {
    let commands = u.int_in_range(1..=4usize)?;
    let mut s = String::new();
    for i in 0..commands {
        if i > 0 {
            s.push_str(u.choose(OPS)?);
        }
        s.push_str(u.choose(PROGRAMS)?);
        let args = u.int_in_range(0..=4usize)?;
        for _ in 0..args {
            s.push_str(if u.ratio(9, 10)? { " " } else { "" });
            s.push_str(u.choose(ARGS)?);
        }
    }
    Ok(s.into_bytes())
}

#[test]
fn agy_shell_line() {
    let data = corpus::input_forms();
    let forms = &data["agy_commands"];
    let mut seeds = Vec::new();
    let mut failures = Vec::new();
    for key in ["accepted", "accepted_before"] {
        for line in forms[key].as_array().expect(key) {
            let line = line.as_str().expect("a line");
            seeds.push(line.as_bytes().to_vec());
            if let Err(why) = check_line(line) {
                failures.push(format!("{line:?}: refused ({why}), listed as accepted"));
            }
        }
    }
    for key in ["violations", "extra_violations"] {
        for case in forms[key].as_array().expect(key) {
            let line = case["line"].as_str().expect("line");
            let want = case["first_problem"].as_str().expect("first_problem");
            seeds.push(line.as_bytes().to_vec());
            match check_line(line) {
                Ok(()) => failures.push(format!(
                    "{line:?}: accepted, listed as a violation ({want})"
                )),
                Err(got) if got != want => {
                    failures.push(format!("{line:?}: first problem {got:?}, listed {want:?}"))
                }
                Err(_) => {}
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} shell lines disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(seeds.len() >= 78, "only {} lines read", seeds.len());

    let c = Corpus::new(
        seeds.clone(),
        PROGRAMS
            .iter()
            .chain(ARGS)
            .chain(OPS)
            .copied()
            .collect::<Vec<_>>()
            .as_slice(),
    );
    fuzz(
        "agy_shell_line",
        &seeds,
        |u| c.input(u, Some(&shell_line)),
        |input| {
            let line = String::from_utf8_lossy(input);
            let verdict = check_line(&line);
            if let Err(why) = &verdict {
                assert!(!why.is_empty(), "an empty reason for {line:?}");
            }
            if verdict.is_ok() && !line.contains('#') {
                // An accepted line followed by a write is never accepted.
                for tail in [" ; touch pwned", " > pwned", " && rm -rf head", " | sh"] {
                    let longer = format!("{line}{tail}");
                    assert!(check_line(&longer).is_err(), "accepted: {longer:?}");
                }
            }
        },
    );
}

fn glob(u: &mut Unstructured<'_>) -> arbitrary::Result<Vec<u8>> {
    Ok(words(
        u,
        &[
            &[
                "*", "**", "?", "[a-z]", "[!x]", "[^x]", "[]", "[", "]", "\\", "\\*", "{a,b}", "-",
                "[a-]", "[\\]]",
            ],
            &[
                "checks",
                "src",
                "a",
                "t.py",
                "my test.py",
                ".",
                "..",
                "",
                "가",
                "*.go",
                "x**",
                "**y",
            ],
        ],
        &["/", "/", "", "//"],
        6,
    )?
    .into_bytes())
}

#[test]
fn check_path_glob() {
    let data = corpus::input_forms();
    let mut seeds = Vec::new();
    let mut paths: Vec<String> = Vec::new();
    let mut failures = Vec::new();
    for case in data["globs"].as_array().expect("globs") {
        let g = case["glob"].as_str().expect("glob");
        seeds.push(g.as_bytes().to_vec());
        let valid = case["valid"].as_bool().expect("valid");
        if validate(g).is_ok() != valid {
            failures.push(format!("glob {g:?}: valid should be {valid}"));
            continue;
        }
        if !valid {
            continue;
        }
        let cp = CheckPaths::new([g]).expect("valid");
        for (key, want) in [("match", true), ("no_match", false)] {
            for p in case[key].as_array().into_iter().flatten() {
                let p = p.as_str().expect("a path");
                paths.push(p.to_string());
                if cp.matches(p) != want {
                    failures.push(format!("glob {g:?} on {p:?}: match should be {want}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} globs disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
    paths.sort();
    paths.dedup();
    let c = Corpus::new(seeds.clone(), &["*", "**", "[", "]", "\\", "/"]);
    fuzz(
        "check_path_glob",
        &seeds,
        |u| c.input(u, Some(&glob)),
        |input| {
            let g = String::from_utf8_lossy(input);
            let valid = validate(&g);
            let compiled = CheckPaths::new([g.as_ref()]);
            assert_eq!(
                valid.is_ok(),
                compiled.is_ok(),
                "validate and compile disagree on {g:?}"
            );
            if let Ok(cp) = compiled {
                // The glob as a path too, up to a path's usual length (matching is
                // O(glob segments × path segments), fine for real paths).
                let own = if g.len() <= 1024 { g.as_ref() } else { "" };
                for p in paths
                    .iter()
                    .map(String::as_str)
                    .chain([own, "", "a/b/c/d/e/f/g/h"])
                {
                    let _ = cp.matches(p);
                }
            }
        },
    );
}
