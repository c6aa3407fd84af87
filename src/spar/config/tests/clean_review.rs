//! G18: clean-review config.json.

use super::*;

#[test]
fn g18_not_an_object_is_an_error() {
    for text in ["null", "[]", "\"claude\"", "1", "true"] {
        let fx = Fx::new();
        let (env, path) = fx.clean_review(text);
        assert_config_error(&load_err(&env), &path, 1, "must be a JSON object");
    }
    let fx = Fx::new();
    let (env, path) = fx.clean_review("{\n  \"reviewers\": [\n");
    assert_config_error(&load_err(&env), &path, 3, "JSON");
    let (env, path) = fx.clean_review("");
    assert_config_error(&load_err(&env), &path, 1, "JSON");
}

#[test]
fn g18_without_reviewers_the_default_list() {
    let fx = Fx::new();
    let (env, path) = fx.clean_review("{\"model\": \"x\", \"other\": [1, {\"a\": null}]}");
    let cfg = load(&env);
    assert_eq!(cfg.user_source, Some((Source::CleanReviewXdg, path)));
    assert_eq!(names(&cfg), ["claude", "codex"]);
    assert_eq!(cfg.reviewers.origin, Origin::Default);
    assert_eq!(cfg.timeout_seconds.value, DEFAULT_TIMEOUT_SECONDS);
}

#[test]
fn g18_reviewers_must_be_an_array() {
    for (text, line) in [
        ("{\n\"reviewers\": null}", 2),
        ("{\"a\": 1,\n\n  \"reviewers\": \"claude\"}", 3),
        ("{\"reviewers\": {\"claude\": true}}", 1),
    ] {
        let fx = Fx::new();
        let (env, path) = fx.clean_review(text);
        assert_config_error(&load_err(&env), &path, line, "must be an array of strings");
    }
}

#[test]
fn g18_items_must_be_strings() {
    let fx = Fx::new();
    let (env, path) =
        fx.clean_review("{\"reviewers\": [\n  \"claude\",\n  {\"x\": \"[\"},\n  null\n]}");
    assert_config_error(
        &load_err(&env),
        &path,
        3,
        "item 2 must be a string, not an object",
    );
    let (env, path) = fx.clean_review("{\"reviewers\": [\"claude\", null]}");
    assert_config_error(&load_err(&env), &path, 1, "not null");
}

#[test]
fn g18_names_are_trimmed_and_empty_ones_skipped() {
    let fx = Fx::new();
    let (env, path) = fx.clean_review(
        "{\"reviewers\": [\n \" claude \",\n \"\",\n \"\\t\",\n \"agy\\n\",\n \"native\"\n]}",
    );
    let cfg = load(&env);
    assert_eq!(names(&cfg), ["claude", "agy", "native"]);
    assert_eq!(cfg.reviewers.value[1].preset.origin, file_origin(&path, 5));
    assert_eq!(cfg.reviewers.value[2].preset.origin, file_origin(&path, 6));
    assert_eq!(cfg.reviewers.origin, file_origin(&path, 1));
}

#[test]
fn g18_unknown_and_repeated_names_are_errors() {
    for (text, needle) in [
        ("{\"reviewers\": [\"command\"]}", "\"command\""),
        ("{\"reviewers\": [\"Claude\"]}", "\"Claude\""),
        ("{\"reviewers\": [\"gpt\"]}", "\"gpt\""),
        ("{\"reviewers\": [\"codex\", \" codex\"]}", "named twice"),
    ] {
        let fx = Fx::new();
        let (env, path) = fx.clean_review(text);
        assert_config_error(&load_err(&env), &path, 1, needle);
    }
}

#[test]
fn g18_all_empty_gives_one_native() {
    for text in ["{\"reviewers\": []}", "{\"reviewers\": [\"\", \"  \"]}"] {
        let fx = Fx::new();
        let (env, _) = fx.clean_review(text);
        let cfg = load(&env);
        assert_eq!(names(&cfg), ["native"]);
        assert_eq!(presets(&cfg), [Preset::Native]);
    }
}

#[test]
fn g18_used_only_when_no_toml_user_file_exists() {
    let fx = Fx::new();
    fx.clean_review("this is not JSON");
    let toml = fx.write(
        "home/.config/jaekit/spar.toml",
        "[[reviewers]]\npreset = \"agy\"\n",
    );
    let cfg = load(&fx.env());
    assert_eq!(cfg.user_source, Some((Source::HomeToml, toml)));
    assert_eq!(cfg.files.len(), 1);
}

#[test]
fn g18_last_duplicate_key_is_the_one_read() {
    let fx = Fx::new();
    let (env, path) = fx.clean_review("{\"reviewers\": [\"claude\"],\n \"reviewers\": [\n 5]}");
    assert_config_error(&load_err(&env), &path, 3, "item 1 must be a string");
}
