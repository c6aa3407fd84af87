//! The seed's representative input forms (§6) and further edge cases, from
//! `tests/data/input-forms.json`, checked against the library: locations (G7), the
//! classification of unreadable locations (§4), links (G8, G9) and check-path globs (G24).
//! The JSON's `_comment` describes its layout. Every failing case is printed, not just the first.

use std::collections::BTreeMap;

use rails_spar::spar::classify::{classify, Answer, CheckImpact, Class, FindingFacts};
use rails_spar::spar::glob::{validate, CheckPaths};
use rails_spar::spar::location::{
    count_lines, criterion_ids, Copy, Document, EntryKind, LinkKind, Resolver, Target,
};
use serde_json::Value;

/// A fixture of the JSON: the resolver and the head file texts a contract link may count.
struct Fixture {
    resolver: Resolver,
    head_texts: BTreeMap<String, String>,
}

impl Fixture {
    fn head_lines(&self) -> impl FnMut(&str) -> Option<u64> + '_ {
        |path: &str| self.head_texts.get(path).map(|t| count_lines(t.as_bytes()))
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is not a string in {v}"))
}

fn bool_of(v: &Value, key: &str) -> bool {
    v[key]
        .as_bool()
        .unwrap_or_else(|| panic!("{key} is not a boolean in {v}"))
}

fn copy(v: &Value) -> Copy {
    v.as_object()
        .expect("a copy is an object")
        .iter()
        .map(|(path, kind)| {
            let kind: EntryKind = kind.as_str().expect("kind").parse().expect("entry kind");
            (path.clone(), kind)
        })
        .collect()
}

fn document(v: &Value) -> Document {
    Document::new(
        str_of(v, "abs_path"),
        v["repo_path"].as_str(),
        str_of(v, "contents").as_bytes(),
    )
}

fn fixture(v: &Value) -> Fixture {
    let globs: Vec<&str> = v["check_paths"]
        .as_array()
        .expect("check_paths")
        .iter()
        .map(|g| g.as_str().expect("glob"))
        .collect();
    let check_paths = CheckPaths::new(globs).expect("fixture check paths are valid");
    let mut resolver = Resolver::new(copy(&v["head"]), copy(&v["base"]), check_paths);
    for doc in v["rule_documents"].as_array().expect("rule_documents") {
        resolver = resolver.with_rule_document(document(doc));
    }
    for doc in v["documents"].as_array().expect("documents") {
        resolver = resolver.with_document(document(doc));
    }
    if !v["criteria"].is_null() {
        resolver =
            resolver.with_criteria(document(&v["criteria"]), str_of(&v["criteria"], "contents"));
    }
    let head_texts = v["head_texts"]
        .as_object()
        .expect("head_texts")
        .iter()
        .map(|(k, t)| (k.clone(), t.as_str().expect("text").to_string()))
        .collect();
    Fixture {
        resolver,
        head_texts,
    }
}

fn lines_json(lines: Option<(u64, u64)>) -> Value {
    match lines {
        Some((a, b)) => serde_json::json!([a, b]),
        None => Value::Null,
    }
}

/// Collects failures with the case that failed.
#[derive(Default)]
struct Report {
    cases: usize,
    failures: Vec<String>,
}

impl Report {
    fn check(
        &mut self,
        case: &Value,
        what: &str,
        got: impl std::fmt::Debug,
        want: impl std::fmt::Debug,
    ) {
        let (got, want) = (format!("{got:?}"), format!("{want:?}"));
        if got != want {
            self.failures
                .push(format!("{case}\n    {what}: got {got}, want {want}"));
        }
    }

    fn fail(&mut self, case: &Value, what: String) {
        self.failures.push(format!("{case}\n    {what}"));
    }
}

#[test]
fn input_forms_of_the_seed() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/input-forms.json");
    let text = std::fs::read_to_string(path).expect("tests/data/input-forms.json");
    let data: Value = serde_json::from_str(&text).expect("input-forms.json is JSON");
    let fixtures: BTreeMap<String, Fixture> = data["fixtures"]
        .as_object()
        .expect("fixtures")
        .iter()
        .map(|(name, v)| (name.clone(), fixture(v)))
        .collect();
    let fixture_of = |case: &Value| -> &Fixture {
        let name = str_of(case, "fixture");
        fixtures
            .get(name)
            .unwrap_or_else(|| panic!("unknown fixture {name}"))
    };
    let mut report = Report::default();

    // G7 locations.
    for case in data["locations"].as_array().expect("locations") {
        report.cases += 1;
        let got = fixture_of(case)
            .resolver
            .resolve_location(str_of(case, "location"));
        report.check(case, "path", &got.path, str_of(case, "path"));
        report.check(
            case,
            "in_check_paths",
            got.in_check_paths,
            bool_of(case, "in_check_paths"),
        );
        report.check(
            case,
            "unreadable",
            got.is_unreadable(),
            bool_of(case, "unreadable"),
        );
        report.check(case, "lines", lines_json(got.lines), &case["lines"]);
        if let Some(target) = case["target"].as_str() {
            let got_target = match got.target {
                Some(Target::HeadCopy) => "head",
                Some(Target::BaseCopy) => "base",
                Some(Target::RoundDocument) => "document",
                None => "none",
            };
            report.check(case, "target", got_target, target);
        }
    }

    // §4: the unreadable-location table, both columns.
    let table = &data["unreadable_classification"];
    let fx = fixture_of(table);
    let read = fx.resolver.resolve_location(str_of(table, "read_as"));
    let unreadable = fx.resolver.resolve_location(str_of(table, "location"));
    report.check(table, "read_as path", &read.path, "checks/t.py");
    report.check(table, "read_as in_check_paths", read.in_check_paths, true);
    report.check(
        table,
        "location unreadable",
        unreadable.is_unreadable(),
        true,
    );
    for row in table["rows"].as_array().expect("rows") {
        report.cases += 1;
        let r = &row["reviewer"];
        let parsed = (
            str_of(r, "proposed_class").parse::<Class>(),
            str_of(r, "check_impact").parse::<CheckImpact>(),
            str_of(r, "introduced_by_change").parse::<Answer>(),
            str_of(r, "regression").parse::<Answer>(),
            str_of(r, "link_kind").parse::<LinkKind>(),
        );
        let (Ok(class), Ok(impact), Ok(intro), Ok(regression), Ok(kind)) = parsed else {
            report.fail(row, format!("reviewer values do not parse: {parsed:?}"));
            continue;
        };
        let link = fx
            .resolver
            .resolve_link(kind, str_of(r, "link"), &mut fx.head_lines());
        let facts = FindingFacts::new(class, impact, intro, regression).link(&link);
        for (column, location) in [
            ("read_as_checks_t_py", &read),
            ("when_unreadable", &unreadable),
        ] {
            let got = classify(&facts.clone().location(location));
            let want = &row[column];
            report.check(
                row,
                &format!("{column} class"),
                got.class.as_str(),
                str_of(want, "class"),
            );
            report.check(
                row,
                &format!("{column} auto_deferred"),
                got.auto_deferred,
                bool_of(want, "auto_deferred"),
            );
            let prefix = if location.is_unreadable() {
                "unreadable location ("
            } else {
                "rule "
            };
            if !got.class_reason.starts_with(prefix) {
                report.fail(
                    row,
                    format!(
                        "{column} class_reason {:?} should start with {prefix:?}",
                        got.class_reason
                    ),
                );
            }
        }
    }

    // The rules one by one, from the classifier's inputs.
    for case in data["classification"].as_array().expect("classification") {
        report.cases += 1;
        let parsed = (
            str_of(case, "proposed_class").parse::<Class>(),
            str_of(case, "check_impact").parse::<CheckImpact>(),
            str_of(case, "introduced_by_change").parse::<Answer>(),
            str_of(case, "regression").parse::<Answer>(),
        );
        let (Ok(class), Ok(impact), Ok(intro), Ok(regression)) = parsed else {
            report.fail(case, format!("values do not parse: {parsed:?}"));
            continue;
        };
        let mut facts = FindingFacts::new(class, impact, intro, regression);
        facts.link_confirmed = bool_of(case, "link_confirmed");
        facts.in_check_paths = bool_of(case, "in_check_paths");
        facts.unreadable = case["unreadable"].as_str().map(str::to_string);
        let got = classify(&facts);
        report.check(case, "class", got.class.as_str(), str_of(case, "class"));
        report.check(
            case,
            "auto_deferred",
            got.auto_deferred,
            bool_of(case, "auto_deferred"),
        );
        let prefix = str_of(case, "reason_starts_with");
        if !got.class_reason.starts_with(prefix) {
            report.fail(
                case,
                format!(
                    "class_reason {:?} should start with {prefix:?}",
                    got.class_reason
                ),
            );
        }
    }

    // G8 and G9 links.
    for case in data["links"].as_array().expect("links") {
        report.cases += 1;
        let fx = fixture_of(case);
        let Ok(kind) = str_of(case, "kind").parse::<LinkKind>() else {
            report.fail(case, "kind does not parse".to_string());
            continue;
        };
        let link = str_of(case, "link");
        let got = fx.resolver.resolve_link(kind, link, &mut fx.head_lines());
        let confirmed = bool_of(case, "confirmed");
        report.check(
            case,
            &format!("confirmed ({})", got.reason),
            got.confirmed,
            confirmed,
        );
        report.check(case, "claimed_link_kind", got.claimed_kind, kind);
        report.check(case, "claimed_link", &got.claimed_link, link);
        if confirmed {
            report.check(case, "link_kind", got.kind, kind);
            report.check(case, "link", &got.link, link);
        } else {
            report.check(case, "link_kind", got.kind, LinkKind::None);
            report.check(case, "link", &got.link, "");
        }
        if let Some(target) = case["target"].as_str() {
            report.check(case, "target", got.target.as_deref(), Some(target));
        }
        if !case["lines"].is_null() {
            report.check(case, "lines", lines_json(got.lines), &case["lines"]);
        }
    }

    // G24 globs.
    for case in data["globs"].as_array().expect("globs") {
        report.cases += 1;
        let glob = str_of(case, "glob");
        let valid = bool_of(case, "valid");
        report.check(case, "valid", validate(glob).is_ok(), valid);
        let Ok(paths) = CheckPaths::new([glob]) else {
            if valid {
                report.fail(case, "CheckPaths::new refused a valid glob".to_string());
            }
            continue;
        };
        for (key, want) in [("match", true), ("no_match", false)] {
            for path in case[key].as_array().expect("paths") {
                let path = path.as_str().expect("path");
                report.check(
                    case,
                    &format!("matches({path:?})"),
                    paths.matches(path),
                    want,
                );
            }
        }
    }

    // Go's path.Match on one segment: a glob of one segment against a one-name path.
    for case in data["go_path_match"].as_array().expect("go_path_match") {
        report.cases += 1;
        let (pattern, name) = (
            case[0].as_str().expect("pattern"),
            case[1].as_str().expect("name"),
        );
        let got = match CheckPaths::new([pattern]) {
            Err(_) => Value::from("bad"),
            Ok(paths) => Value::from(paths.matches(name)),
        };
        report.check(case, "path.Match", &got, &case[2]);
    }

    // G9 ids.
    for case in data["criterion_ids"].as_array().expect("criterion_ids") {
        report.cases += 1;
        let want: Vec<&str> = case["ids"]
            .as_array()
            .expect("ids")
            .iter()
            .map(|id| id.as_str().expect("id"))
            .collect();
        report.check(case, "ids", criterion_ids(str_of(case, "text")), want);
    }

    assert!(report.cases > 150, "only {} cases read", report.cases);
    assert!(
        report.failures.is_empty(),
        "{} of {} input forms failed:\n{}",
        report.failures.len(),
        report.cases,
        report.failures.join("\n")
    );
}

/// G11: every shell line of the seed's list (and a few more), against the agy shell check. A
/// violation's reason names the first problem exactly.
#[test]
fn agy_shell_lines_of_the_seed() {
    use rails_spar::spar::preset::shell::check_line;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/input-forms.json");
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let forms = &data["agy_commands"];
    let mut failures = Vec::new();
    let mut cases = 0;
    for key in ["accepted", "accepted_before"] {
        for line in forms[key].as_array().expect(key) {
            cases += 1;
            let line = line.as_str().expect("a line");
            if let Err(why) = check_line(line) {
                failures.push(format!(
                    "{line:?}: refused ({why}), but the seed accepts it"
                ));
            }
        }
    }
    for key in ["violations", "extra_violations"] {
        for case in forms[key].as_array().expect(key) {
            cases += 1;
            let line = str_of(case, "line");
            let want = str_of(case, "first_problem");
            match check_line(line) {
                Ok(()) => failures.push(format!(
                    "{line:?}: accepted, but it is a violation ({want})"
                )),
                Err(got) if got != want => {
                    failures.push(format!("{line:?}: first problem {got:?}, want {want:?}"))
                }
                Err(_) => {}
            }
        }
    }
    assert!(cases >= 78, "only {cases} lines read");
    assert!(
        failures.is_empty(),
        "{} of {cases} shell lines failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
