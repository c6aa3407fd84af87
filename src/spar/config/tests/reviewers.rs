//! G19–G21: timeouts, reviewer names, presets and their keys.

use super::*;

#[test]
fn g19_default_is_900_seconds() {
    let fx = Fx::new();
    let cfg = load(&fx.env());
    assert_eq!(cfg.timeout_seconds, Sourced::default_value(900));
    assert!(cfg
        .reviewers
        .value
        .iter()
        .all(|r| r.timeout_seconds == Sourced::default_value(900)));
}

#[test]
fn g19_top_level_applies_to_the_default_list() {
    let fx = Fx::new();
    let (env, path) = fx.user("\ntimeout_seconds = 120\n");
    let cfg = load(&env);
    assert_eq!(names(&cfg), ["claude", "codex"]);
    for r in &cfg.reviewers.value {
        assert_eq!(r.timeout_seconds.value, 120);
        assert_eq!(r.timeout_seconds.origin, file_origin(&path, 2));
    }
}

#[test]
fn g19_reviewer_value_overrides_the_top_level() {
    let fx = Fx::new();
    let (env, path) = fx.user(
            "timeout_seconds = 120\n[[reviewers]]\npreset = \"claude\"\ntimeout_seconds = 30\n[[reviewers]]\npreset = \"codex\"\n",
        );
    let cfg = load(&env);
    let t: Vec<u64> = cfg
        .reviewers
        .value
        .iter()
        .map(|r| r.timeout_seconds.value)
        .collect();
    assert_eq!(t, [30, 120]);
    assert_eq!(
        cfg.reviewers.value[0].timeout_seconds.origin,
        file_origin(&path, 4)
    );
    // A preset picked by --reviewers takes the file's top-level value.
    let run = select(&cfg, Some("claude,agy"), &[], &[]).unwrap();
    assert_eq!(run[1].timeout_seconds(), 120);
    assert_eq!(run[0].timeout_seconds(), 30);
}

#[test]
fn g19_empty_reviewers_list_gives_native_with_the_top_level() {
    let fx = Fx::new();
    let (env, _) = fx.user("timeout_seconds = 45\nreviewers = []\n");
    let cfg = load(&env);
    assert_eq!(presets(&cfg), [Preset::Native]);
    assert_eq!(cfg.reviewers.value[0].timeout_seconds.value, 45);
    // --reviewers "" gives native with it too.
    let (env, _) = fx.user("timeout_seconds = 46\n");
    let run = select(&load(&env), Some(""), &[], &[]).unwrap();
    assert_eq!(run[0].timeout_seconds(), 46);
}

#[test]
fn g19_zero_negative_and_non_integers_are_errors() {
    for value in ["0", "-5", "1.5", "\"900\"", "true", "inf", "[1]"] {
        user_error(
            &format!("\ntimeout_seconds = {value}\n"),
            2,
            "timeout_seconds must be a positive integer",
        );
        user_error(
            &format!("[[reviewers]]\npreset = \"claude\"\n\ntimeout_seconds = {value}\n"),
            4,
            "timeout_seconds must be a positive integer",
        );
    }
}

#[test]
fn g20_name_syntax() {
    let max = format!("a{}", "b".repeat(63));
    for ok in ["a", "9", "A.b_c-d", "claude-2", max.as_str(), "x.."] {
        assert_eq!(check_name(ok), Ok(()), "{ok}");
    }
    let long = format!("a{}", "b".repeat(64));
    for bad in [
        "",
        ".a",
        "-a",
        "_a",
        "a b",
        "é",
        "a/b",
        "a\n",
        "a,b",
        long.as_str(),
        " a",
    ] {
        assert!(check_name(bad).is_err(), "{bad:?}");
    }
    user_error(
        "[[reviewers]]\npreset = \"claude\"\nname = \"-x\"\n",
        3,
        "name \"-x\"",
    );
    user_error(
        &format!("[[reviewers]]\nname = \"{long}\"\npreset = \"claude\"\n"),
        2,
        "1 to 64",
    );
}

#[test]
fn g20_name_defaults_to_the_preset() {
    let fx = Fx::new();
    let (env, path) = fx.user(
            "[[reviewers]]\npreset = \"agy\"\n[[reviewers]]\nname = \"lint\"\npreset = \"command\"\nargv = [\"x\"]\n",
        );
    let cfg = load(&env);
    assert_eq!(names(&cfg), ["agy", "lint"]);
    assert_eq!(cfg.reviewers.value[0].name.origin, Origin::Default);
    assert_eq!(cfg.reviewers.value[1].name.origin, file_origin(&path, 4));
}

#[test]
fn g20_names_must_differ_ignoring_case() {
    user_error(
            "[[reviewers]]\npreset = \"claude\"\n[[reviewers]]\nname = \"Claude\"\npreset = \"codex\"\n",
            4,
            "repeats \"claude\"",
        );
    user_error(
        "[[reviewers]]\npreset = \"codex\"\n[[reviewers]]\npreset = \"codex\"\n",
        3,
        "repeats \"codex\"",
    );
    user_error(
            "[[reviewers]]\nname = \"a\"\npreset = \"claude\"\n[[reviewers]]\npreset = \"codex\"\nname = \"A\"\n",
            6,
            "names must differ ignoring case",
        );
}

#[test]
fn g20_reserved_names_are_errors() {
    for reserved in RESERVED_NAMES {
        for name in [
            reserved.to_owned(),
            format!("{reserved}.tmp"),
            reserved.to_ascii_uppercase(),
            format!("{}.TMP", reserved.to_ascii_uppercase()),
        ] {
            assert!(check_name(&name).is_err(), "{name}");
            user_error(
                &format!("[[reviewers]]\npreset = \"claude\"\nname = \"{name}\"\n"),
                3,
                "reserved",
            );
        }
    }
    assert_eq!(check_name("workspace2"), Ok(()));
    assert_eq!(check_name("summary.md.tmp.x"), Ok(()));
}

#[test]
fn g21_preset_is_required_and_one_of_five() {
    user_error("[[reviewers]]\nname = \"a\"\n", 1, "has no preset");
    user_error("x = 1\n", 1, "unknown key");
    user_error(
        "[[reviewers]]\n\npreset = \"Claude\"\n",
        3,
        "unknown preset \"Claude\"",
    );
    user_error("[[reviewers]]\npreset = \"gpt\"\n", 2, "unknown preset");
    user_error("[[reviewers]]\npreset = 1\n", 2, "preset must be a string");
    user_error("[[reviewers]]\npreset = \"\"\n", 2, "unknown preset");
}

#[test]
fn g21_keys_of_other_presets_are_errors() {
    let cases = [
        ("claude", "argv = [\"x\"]", "argv"),
        ("native", "argv = [\"x\"]", "argv"),
        ("native", "binary = \"x\"", "binary"),
        ("command", "binary = \"x\"", "binary"),
        ("native", "model = \"x\"", "model"),
        ("command", "fallback_model = \"x\"", "fallback_model"),
        ("agy", "effort = \"high\"", "effort"),
        ("native", "effort = \"high\"", "effort"),
        ("native", "allowed_models = [\"x\"]", "allowed_models"),
        ("command", "allowed_models = [\"x\"]", "allowed_models"),
        ("agy", "allowed_efforts = [\"x\"]", "allowed_efforts"),
    ];
    for (preset, line, key) in cases {
        let argv = if preset == "command" {
            "argv = [\"x\"]\n"
        } else {
            ""
        };
        user_error(
            &format!("[[reviewers]]\npreset = \"{preset}\"\n{argv}{line}\n"),
            if argv.is_empty() { 3 } else { 4 },
            &format!("{key} does not apply to preset \"{preset}\""),
        );
    }
}

#[test]
fn g21_argv_rules() {
    user_error(
        "[[reviewers]]\nname = \"lint\"\npreset = \"command\"\n",
        3,
        "needs argv",
    );
    user_error(
        "[[reviewers]]\npreset = \"command\"\nargv = []\n",
        3,
        "argv must not be empty",
    );
    user_error(
        "[[reviewers]]\npreset = \"command\"\nargv = [\"x\", \"\"]\n",
        3,
        "argv item 2 \"\": is empty",
    );
    user_error(
        "[[reviewers]]\npreset = \"command\"\nargv = [\"x\", 1]\n",
        3,
        "must be a string",
    );
    user_error(
        "[[reviewers]]\npreset = \"command\"\nargv = \"x\"\n",
        3,
        "array of strings",
    );
}

#[test]
fn g21_empty_values() {
    user_error(
        "[[reviewers]]\npreset = \"codex\"\nmodel = \"\"\n",
        3,
        "model must not be empty",
    );
    let fx = Fx::new();
    let (env, _) = fx.user(
        "[[reviewers]]\npreset = \"claude\"\nbinary = \"\"\nfallback_model = \"\"\neffort = \"\"\n",
    );
    let cfg = load(&env);
    let r = &cfg.reviewers.value[0];
    assert_eq!(r.executable(), Some("claude"));
    assert_eq!(r.fallback_model(), None);
    assert_eq!(r.effort(), None);
    let run = select(&cfg, None, &[], &[]).unwrap();
    assert_eq!(run[0].effort, None);
    assert_eq!(run[0].fallback_model(), None);
}

#[test]
fn g21_values_are_kept() {
    let fx = Fx::new();
    let (env, path) = fx.user(
            "[[reviewers]]\npreset = \"codex\"\nbinary = \"/usr/local/bin/codex\"\nmodel = \"gpt-5\"\nfallback_model = \"gpt-5-mini\"\neffort = \"high\"\n[[reviewers]]\npreset = \"agy\"\nallowed_models = [\"a\", \"B.2\"]\n",
        );
    let cfg = load(&env);
    let r = &cfg.reviewers.value[0];
    assert_eq!(r.executable(), Some("/usr/local/bin/codex"));
    assert_eq!(r.fallback_model(), Some("gpt-5-mini"));
    assert_eq!(r.effort(), Some("high"));
    assert_eq!(r.model.as_ref().unwrap().origin, file_origin(&path, 4));
    let run = select(&cfg, None, &[], &[]).unwrap();
    assert_eq!(run[0].model.as_ref().unwrap().value, "gpt-5");
    assert_eq!(run[0].effort.as_ref().unwrap().value, "high");
    assert_eq!(
        cfg.reviewers.value[1]
            .allowed_models
            .as_ref()
            .unwrap()
            .value,
        ["a", "B.2"]
    );
}

#[test]
fn g21_allowed_lists() {
    for (preset, key) in [
        ("claude", "allowed_models"),
        ("agy", "allowed_models"),
        ("codex", "allowed_efforts"),
    ] {
        let head = format!("[[reviewers]]\npreset = \"{preset}\"\n");
        user_error(&format!("{head}{key} = []\n"), 3, "must not be empty");
        user_error(&format!("{head}{key} = [1]\n"), 3, "must be a string");
        user_error(&format!("{head}{key} = \"x\"\n"), 3, "array of strings");
        for (bad, why) in [
            ("a b", "whitespace"),
            ("-x", "starts with -"),
            ("", "is empty"),
            ("a\\u0007", "control"),
            ("a\\u00a0", "whitespace"),
        ] {
            user_error(&format!("{head}{key} = [\"ok\", \"{bad}\"]\n"), 3, why);
        }
    }
}

#[test]
fn g21_fixed_value_and_allowed_list_together_are_errors() {
    user_error(
        "[[reviewers]]\npreset = \"claude\"\nmodel = \"opus\"\nallowed_models = [\"opus\"]\n",
        4,
        "allowed_models cannot be combined with model",
    );
    user_error(
        "[[reviewers]]\npreset = \"codex\"\nallowed_efforts = [\"low\"]\neffort = \"low\"\n",
        3,
        "allowed_efforts cannot be combined with effort",
    );
    // An empty effort is written too.
    user_error(
        "[[reviewers]]\npreset = \"codex\"\neffort = \"\"\nallowed_efforts = [\"low\"]\n",
        4,
        "cannot be combined",
    );
}

#[test]
fn g21_argv_substitution() {
    let values = Placeholders {
        prompt: OsStr::new("/w/lint/input.md"),
        workspace: OsStr::new("/w/{schema}"),
        schema: OsStr::new("/w/schema.json"),
    };
    let argv: Vec<String> = [
        "./tools/review",
        "--prompt={prompt}",
        "{workspace}",
        "{schema}{schema}",
        "{other} {prompt",
        "{{prompt}}",
        "{}",
    ]
    .map(String::from)
    .to_vec();
    let out = substitute_argv(&argv, &values);
    let expected = [
        "./tools/review",
        "--prompt=/w/lint/input.md",
        "/w/{schema}",
        "/w/schema.json/w/schema.json",
        "{other} {prompt",
        "{/w/lint/input.md}",
        "{}",
    ];
    assert_eq!(out, expected.map(OsString::from));
}
