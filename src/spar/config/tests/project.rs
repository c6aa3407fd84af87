//! G22–G24: caps, angles, rules and check paths.

use super::*;

#[test]
fn g22_caps() {
    let fx = Fx::new();
    let (env, path) = fx.project("[caps]\nplan = 0\ncode = 7\n");
    let cfg = load(&env);
    assert_eq!(
        cfg.caps.plan,
        Sourced {
            value: 0,
            origin: file_origin(&path, 2)
        }
    );
    assert_eq!(
        cfg.caps.plan_delta,
        Sourced::default_value(DEFAULT_CAP_PLAN_DELTA)
    );
    assert_eq!(cfg.caps.code.value, 7);
    project_error(
        "[caps]\nplan = -1\n",
        2,
        "caps.plan must be an integer of 0 or more",
    );
    project_error("[caps]\n\nplan_delta = 1.0\n", 3, "caps.plan_delta");
    project_error("[caps]\ncode = \"3\"\n", 2, "caps.code");
    project_error("[caps]\ncode = 3\nstage = 1\n", 3, "unknown key \"stage\"");
}

#[test]
fn g22_angles() {
    let fx = Fx::new();
    let (env, path) = fx.project("angles = [\"security\", \"correctness\", \"checks\"]\n");
    let cfg = load(&env);
    assert_eq!(
        cfg.angles,
        Sourced {
            value: vec![Angle::Correctness, Angle::Checks, Angle::Security],
            origin: file_origin(&path, 1)
        }
    );
    project_error("angles = []\n", 1, "at least one angle");
    project_error(
        "\nangles = [\"checks\", \"style\"]\n",
        2,
        "item 2 \"style\": unknown angle",
    );
    project_error("angles = [\"Checks\"]\n", 1, "unknown angle");
    project_error("angles = [\"checks\", \"checks\"]\n", 1, "twice");
    project_error("angles = [1]\n", 1, "must be a string");
}

#[test]
fn g23_rules_inside_the_repository() {
    let fx = Fx::new();
    fx.write("work/AGENTS.md", "rules\n");
    fx.write("work/docs/rules.md", "more\n");
    symlink("../AGENTS.md", fx.work().join("docs/link.md")).unwrap();
    let (env, path) = fx.project(
            "rules = [\n  \"AGENTS.md\",\n  \"./docs//rules.md\",\n  \"docs/../AGENTS.md\",\n  \"docs/link.md\",\n]\n",
        );
    let cfg = load(&env);
    let names: Vec<&str> = cfg.rules.iter().map(|r| r.value.name.as_str()).collect();
    assert_eq!(
        names,
        ["AGENTS.md", "docs/rules.md", "AGENTS.md", "docs/link.md"]
    );
    let agents = fs::canonicalize(fx.work().join("AGENTS.md")).unwrap();
    assert_eq!(cfg.rules[3].value.path, agents);
    assert_eq!(cfg.rules[0].origin, file_origin(&path, 1));
}

#[test]
fn g23_rules_out_of_form() {
    let fx = Fx::new();
    fx.write("work/AGENTS.md", "rules\n");
    fx.write("outside.md", "x\n");
    fs::create_dir_all(fx.work().join("docs")).unwrap();
    symlink(fx.root().join("outside.md"), fx.work().join("out.md")).unwrap();
    symlink(fx.work().join("gone.md"), fx.work().join("broken.md")).unwrap();
    let abs = fx.work().join("AGENTS.md");
    let cases = [
        ("", "is empty"),
        (abs.to_str().unwrap(), "absolute"),
        ("../outside.md", "leaves the repository"),
        ("docs/../../outside.md", "leaves the repository"),
        ("out.md", "outside the repository"),
        ("missing.md", "does not exist"),
        ("broken.md", "broken symbolic link"),
        ("docs", "a folder"),
        (".", "a folder"),
    ];
    for (item, why) in cases {
        let path = fx.write(
            "work/.jaekit/spar.toml",
            &format!("angles = [\"checks\"]\nrules = [\"AGENTS.md\", \"{item}\"]\n"),
        );
        let e = load_err(&fx.env());
        assert_config_error(&e, &path, 2, &format!("rules item 2 {}", quote(item)));
        assert!(e.message.contains(why), "{item}: {}", e.message);
    }
}

#[test]
fn g23_unreadable_rule_file() {
    let fx = Fx::new();
    let file = fx.write("work/secret.md", "x\n");
    set_mode(&file, 0o000);
    // Tests usually run as root, who reads the file anyway: then there is nothing to check.
    if fs::read(&file).is_ok() {
        return;
    }
    let (env, path) = fx.project("rules = [\"secret.md\"]\n");
    assert_config_error(&load_err(&env), &path, 1, "cannot be read");
}

#[test]
fn g23_rule_that_is_a_fifo_is_an_error() {
    let fx = Fx::new();
    mkfifo(&fx.work().join("pipe.md"));
    let (env, path) = fx.project("rules = [\"pipe.md\"]\n");
    assert_config_error(&load_err(&env), &path, 1, "a FIFO");
}

#[test]
fn g24_check_paths_accepted() {
    let fx = Fx::new();
    let (env, path) = fx.project(
            "check_paths = [\"checks/**\", \"tests/\", \"**\", \"a/[abc]/*.py\", \"x\\\\*y\", \"[^a-c]?\", \"a/**b/c\", \"[\\\\]]\"]\n",
        );
    let cfg = load(&env);
    let globs: Vec<&str> = cfg.check_paths.iter().map(|c| c.value.as_str()).collect();
    assert_eq!(
        globs,
        [
            "checks/**",
            "tests/",
            "**",
            "a/[abc]/*.py",
            "x\\*y",
            "[^a-c]?",
            "a/**b/c",
            "[\\]]"
        ]
    );
    assert_eq!(cfg.check_paths[0].origin, file_origin(&path, 1));
}

#[test]
fn g24_check_paths_out_of_form() {
    for (glob, why) in [
        ("", "is empty"),
        ("/checks/**", "absolute"),
        ("/", "absolute"),
        ("..", "leaves the repository"),
        ("checks/../x", "leaves the repository"),
        ("a/[bc", "not a valid pattern"),
        ("a/b\\\\", "ends with an unescaped"),
        ("[]", "not a valid pattern"),
        ("[a-]", "not a valid pattern"),
        ("[-a]", "not a valid pattern"),
        ("[^]", "not a valid pattern"),
        ("[\\\\", "not a valid pattern"),
    ] {
        project_error(
            &format!("angles = [\"checks\"]\ncheck_paths = [\"ok/**\", \"{glob}\"]\n"),
            2,
            why,
        );
    }
}

#[test]
fn g24_check_path_option_is_refused_or_added() {
    let fx = Fx::new();
    fx.project("check_paths = [\"checks/**\"]\n");
    let mut cfg = load(&fx.env());
    let before = cfg.digest();
    for bad in ["", "/abs", "a/../b", "a/[b", "a\\"] {
        let e = cfg.add_check_paths(&[bad.to_owned()]).unwrap_err();
        assert_eq!(e.kind, Kind::Refused, "{bad}");
        assert!(e.message.starts_with("--check-path "), "{}", e.message);
        assert!(e.message.contains(&quote(bad)), "{}", e.message);
    }
    assert_eq!(cfg.digest(), before);
    cfg.add_check_paths(&["tests/**".to_owned()]).unwrap();
    assert_eq!(cfg.check_paths.len(), 2);
    assert_eq!(cfg.check_paths[1].origin, Origin::Flag("--check-path"));
    assert_ne!(cfg.digest(), before);
    assert_eq!(
        cfg.applied_values()["check_paths"],
        json!(["checks/**", "tests/**"])
    );
}
