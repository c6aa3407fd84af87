//! G25: --reviewers, --model, --effort.

use super::*;

fn cfg_with(user: &str) -> Config {
    let fx = Fx::new();
    let (env, _) = fx.user(user);
    load(&env)
}

fn run_names(run: &[SelectedReviewer]) -> Vec<&str> {
    run.iter().map(SelectedReviewer::name).collect()
}

const USER: &str = r#"
timeout_seconds = 300

[[reviewers]]
name = "opus"
preset = "claude"
allowed_models = ["opus", "sonnet"]
allowed_efforts = ["high", "max"]

[[reviewers]]
preset = "codex"
model = "gpt-5"

[[reviewers]]
name = "lint"
preset = "command"
argv = ["lint", "{prompt}"]

[[reviewers]]
name = "gem"
preset = "agy"
"#;

fn user_cfg() -> Config {
    cfg_with(USER)
}

#[test]
fn g25_reviewers_default_to_the_configured_list() {
    let cfg = user_cfg();
    let run = select(&cfg, None, &[], &[]).unwrap();
    assert_eq!(run_names(&run), ["opus", "codex", "lint", "gem"]);
    assert!(run.iter().all(|s| s.configured));
}

#[test]
fn g25_reviewers_list_is_split_trimmed_and_empty_items_skipped() {
    let cfg = user_cfg();
    let run = select(&cfg, Some(" gem , ,codex,,"), &[], &[]).unwrap();
    assert_eq!(run_names(&run), ["gem", "codex"]);
    for empty in ["", ",", " , ", ",,,"] {
        let run = select(&cfg, Some(empty), &[], &[]).unwrap();
        assert_eq!(run_names(&run), ["native"], "{empty:?}");
        assert_eq!(run[0].preset(), Preset::Native);
        assert_eq!(run[0].timeout_seconds(), 300);
    }
}

#[test]
fn g25_configured_name_first_then_preset() {
    let cfg = cfg_with("[[reviewers]]\nname = \"claude\"\npreset = \"command\"\nargv = [\"x\"]\n");
    let run = select(&cfg, Some("claude,codex,agy,native"), &[], &[]).unwrap();
    assert_eq!(run[0].preset(), Preset::Command);
    assert!(run[0].configured);
    assert_eq!(
        run[1..]
            .iter()
            .map(SelectedReviewer::preset)
            .collect::<Vec<_>>(),
        [Preset::Codex, Preset::Agy, Preset::Native]
    );
    assert!(!run[1].configured);
    assert_eq!(run[1].reviewer.preset.origin, Origin::Flag("--reviewers"));
}

fn reviewers_error(cfg: &Config, list: &str, needle: &str) {
    let e = select(cfg, Some(list), &[], &[]).unwrap_err();
    assert_eq!(e.kind, Kind::Refused, "{list}: {e}");
    assert!(e.message.starts_with("--reviewers: "), "{}", e.message);
    assert!(e.message.contains(needle), "{list}: {}", e.message);
    assert!(e.hint.is_some());
}

#[test]
fn g25_reviewers_out_of_form_are_configuration_errors() {
    let cfg = user_cfg();
    reviewers_error(
        &cfg,
        "command",
        "neither a configured reviewer nor a preset",
    );
    reviewers_error(&cfg, "gpt", "neither a configured reviewer nor a preset");
    reviewers_error(&cfg, "Opus", "neither");
    reviewers_error(&cfg, "CLAUDE", "neither");
    reviewers_error(&cfg, "a b", "1 to 64");
    reviewers_error(&cfg, "-x", "1 to 64");
    reviewers_error(&cfg, "opus,codex,OPUS", "\"OPUS\" repeats \"opus\"");
    reviewers_error(&cfg, "codex, codex", "repeats");
    reviewers_error(&cfg, "summary.md", "reserved");
    reviewers_error(&cfg, "Workspace.TMP", "reserved");
    let e = select_os(&cfg, Some(OsStr::from_bytes(b"opus,\xffx")), &[], &[]).unwrap_err();
    assert_eq!(e.kind, Kind::Refused);
    assert!(e.message.contains("\"\\xffx\""), "{}", e.message);
}

fn models(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn g25_model_and_effort_are_applied_unchanged() {
    let cfg = user_cfg();
    let run = select(
        &cfg,
        Some("opus,agy,claude"),
        &models(&["opus=sonnet", "agy=gemini-3=pro", "claude=x.y/z"]),
        &models(&["opus=max", "claude=high"]),
    )
    .unwrap();
    assert_eq!(run[0].model.as_ref().unwrap().value, "sonnet");
    assert_eq!(
        run[0].model.as_ref().unwrap().origin,
        Origin::Flag("--model")
    );
    assert_eq!(run[0].effort.as_ref().unwrap().value, "max");
    assert_eq!(run[1].model.as_ref().unwrap().value, "gemini-3=pro");
    assert_eq!(run[2].model.as_ref().unwrap().value, "x.y/z");
    assert_eq!(run[2].effort.as_ref().unwrap().value, "high");
    // The codex entry keeps its configured model.
    let run = select(&cfg, None, &[], &[]).unwrap();
    assert_eq!(run[1].model.as_ref().unwrap().value, "gpt-5");
    assert_eq!(run[0].model, None);
}

#[test]
fn g25_missing_equals_or_name_is_a_usage_error() {
    let cfg = user_cfg();
    for (m, e) in [
        (vec!["opus"], vec![]),
        (vec!["=sonnet"], vec![]),
        (vec![], vec!["high"]),
        (vec![], vec!["=high"]),
        (vec![""], vec![]),
    ] {
        let err = select(&cfg, Some("no such"), &models(&m), &models(&e)).unwrap_err();
        assert_eq!(err.kind, Kind::Usage, "{m:?} {e:?}: {err}");
        assert_eq!(err.kind.exit_code(), 64);
    }
}

fn refusal(cfg: &Config, list: Option<&str>, m: &[&str], e: &[&str], needle: &str) {
    let err = select(cfg, list, &models(m), &models(e)).unwrap_err();
    assert_eq!(err.kind, Kind::Refused, "{m:?} {e:?}: {err}");
    assert!(
        !err.message.contains(": 1:"),
        "a refusal names no file: {}",
        err.message
    );
    assert!(err.message.contains(needle), "{m:?} {e:?}: {}", err.message);
}

#[test]
fn g25_refusals() {
    let cfg = user_cfg();
    // A key the user file sets.
    refusal(&cfg, None, &["codex=o3"], &[], "the user file sets model");
    // A preset without that key.
    refusal(
        &cfg,
        None,
        &["lint=x"],
        &[],
        "preset \"command\" takes no model",
    );
    refusal(
        &cfg,
        Some("native"),
        &["native=x"],
        &[],
        "preset \"native\" takes no model",
    );
    refusal(
        &cfg,
        None,
        &[],
        &["gem=high"],
        "preset \"agy\" takes no effort",
    );
    // A name not in this run (configured but not selected; case differs; unknown).
    refusal(
        &cfg,
        Some("codex"),
        &["opus=sonnet"],
        &[],
        "no reviewer of this run",
    );
    refusal(&cfg, None, &["Opus=sonnet"], &[], "no reviewer of this run");
    refusal(&cfg, None, &["nobody=x"], &[], "\"nobody\"");
    // The same key twice for one reviewer.
    refusal(
        &cfg,
        None,
        &["opus=opus", "opus=sonnet"],
        &[],
        "given twice",
    );
    refusal(&cfg, None, &[], &["opus=high", "opus=high"], "given twice");
    // Outside the allowed list (exact, case included).
    refusal(&cfg, None, &["opus=Opus"], &[], "not in allowed_models");
    refusal(&cfg, None, &[], &["opus=low"], "not in allowed_efforts");
    // Values out of form, shown with %q.
    for (value, shown, why) in [
        ("", "\"\"", "is empty"),
        ("-x", "\"-x\"", "starts with -"),
        ("a b", "\"a b\"", "whitespace"),
        ("a\tb", "\"a\\tb\"", "whitespace"),
        ("a\u{1b}b", "\"a\\x1bb\"", "control"),
        ("a\u{a0}b", "\"a\\u00a0b\"", "whitespace"),
    ] {
        let m = format!("claude={value}");
        refusal(&cfg, Some("claude"), &[m.as_str()], &[], why);
        refusal(
            &cfg,
            Some("claude"),
            &[m.as_str()],
            &[],
            &format!("reviewer \"claude\" with value {shown}"),
        );
    }
}

#[test]
fn g25_written_empty_effort_still_refuses_effort() {
    let cfg = cfg_with("[[reviewers]]\npreset = \"claude\"\neffort = \"\"\n");
    refusal(
        &cfg,
        None,
        &[],
        &["claude=high"],
        "the user file sets effort",
    );
}

#[test]
fn g25_value_that_is_not_utf8_is_refused() {
    let cfg = user_cfg();
    let m = [OsString::from_vec(b"opus=\xffx".to_vec())];
    let err = select_os(&cfg, None, &m, &[]).unwrap_err();
    assert_eq!(err.kind, Kind::Refused);
    assert!(err.message.contains("\"\\xffx\""), "{}", err.message);
    assert!(err.message.contains("not valid UTF-8"), "{}", err.message);
    // A name that is not UTF-8 matches no reviewer.
    let m = [OsString::from_vec(b"\xff=x".to_vec())];
    let err = select_os(&cfg, None, &m, &[]).unwrap_err();
    assert_eq!(err.kind, Kind::Refused);
    assert!(err.message.contains("\"\\xff\""), "{}", err.message);
}
