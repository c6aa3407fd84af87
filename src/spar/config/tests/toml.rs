//! G17: TOML syntax and keys.

use super::*;

#[test]
fn g17_syntax_errors_name_their_line() {
    user_error("timeout_seconds = 5\n\n[[reviewers]\n", 3, "TOML");
    user_error("timeout_seconds = 5\ntimeout_seconds = 6\n", 2, "TOML");
    project_error("angles = [\"checks\"\n", 2, "TOML");
    project_error("# c\n\ncheck_paths = [\"a\"]\nrules = \n", 4, "TOML");
}

#[test]
fn g17_bytes_that_are_not_utf8_are_an_error() {
    let fx = Fx::new();
    let path = fx.write_bytes("user.toml", b"# ok\n# \xff\n");
    assert_config_error(&load_err(&fx.env_spar(&path)), &path, 2, "UTF-8");
}

#[test]
fn g17_unknown_keys_are_errors() {
    user_error("timeout = 5\n", 1, "unknown key \"timeout\"");
    user_error("check_paths = []\n", 1, "unknown key \"check_paths\"");
    user_error(
        "[[reviewers]]\npreset = \"claude\"\nmodle = \"x\"\n",
        3,
        "unknown key \"modle\"",
    );
    user_error(
        "[[reviewers]]\npreset = \"claude\"\nallowed_binaries = [\"x\"]\n",
        3,
        "unknown key \"allowed_binaries\"",
    );
    project_error("\nangle = [\"checks\"]\n", 2, "unknown key \"angle\"");
    project_error(
        "[caps]\nplan = 1\nreview = 2\n",
        3,
        "unknown key \"review\"",
    );
}

#[test]
fn g17_user_keys_in_the_project_file_are_errors_at_any_depth() {
    for key in USER_KEYS {
        project_error(
            &format!("angles = [\"checks\"]\n{key} = 1\n"),
            2,
            "must never choose what runs on your machine",
        );
    }
    project_error(
        "[[reviewers]]\npreset = \"command\"\n",
        1,
        "reviewers is a user setting",
    );
    project_error("[caps]\ncode = 1\nmodel = \"x\"\n", 3, "caps.model");
    project_error("[a.b]\nc.argv = [\"sh\"]\n", 2, "a.b.c.argv");
    project_error(
        "check_paths = [\n  { binary = \"x\" },\n]\n",
        2,
        "check_paths[0].binary",
    );
    project_error("x = [[{ allowed_whatever = 1 }]]\n", 1, "allowed_whatever");
    project_error("\n\"timeout_seconds\" = 5\n", 2, "timeout_seconds");
    project_error("[caps]\nallowed_models = []\n", 2, "caps.allowed_models");
}

#[test]
fn g17_full_toml_1_0_is_accepted() {
    let fx = Fx::new();
    let (env, _) = fx.user(
            "# comment\n'timeout_seconds' = 1_200\nreviewers = [\n  { preset = 'claude', model = '''opus''' },\n  { preset = \"codex\", allowed_efforts = [\"low\", \"high\",] },\n]\n",
        );
    let cfg = load(&env);
    assert_eq!(cfg.timeout_seconds.value, 1200);
    assert_eq!(names(&cfg), ["claude", "codex"]);
    assert_eq!(cfg.reviewers.value[0].model.as_ref().unwrap().value, "opus");

    let (env, _) = fx.project("caps.code = 5\ncaps.plan = 0x1\n");
    let cfg = load(&env);
    assert_eq!((cfg.caps.code.value, cfg.caps.plan.value), (5, 1));
}

#[test]
fn g17_values_of_the_wrong_type_are_errors() {
    user_error("timeout_seconds = 1979-05-27T07:32:00Z\n", 1, "date-time");
    user_error("reviewers = \"claude\"\n", 1, "array of tables");
    user_error("reviewers = [\"claude\"]\n", 1, "must be a table");
    user_error(
        "[[reviewers]]\npreset = \"claude\"\nbinary = 1\n",
        3,
        "binary must be a string",
    );
    user_error(
        "[[reviewers]]\npreset = \"claude\"\nname = true\n",
        3,
        "name must be a string",
    );
    project_error("angles = \"checks\"\n", 1, "array of strings");
    project_error("caps = 3\n", 1, "caps must be a table");
    project_error("check_paths = \"checks/**\"\n", 1, "array of strings");
    project_error(
        "rules = [\n\"AGENTS.md\", 2]\n",
        1,
        "rules item 2 must be a string",
    );
}
