//! G16: sources.

use super::*;

#[test]
fn g16_sources_in_order_first_existing_wins() {
    let fx = Fx::new();
    let spar = fx.write("spar.toml", "[[reviewers]]\npreset = \"agy\"\n");
    let xdg = fx.write(
        "xdg/jaekit/spar.toml",
        "[[reviewers]]\npreset = \"native\"\n",
    );
    let home = fx.write(
        "home/.config/jaekit/spar.toml",
        "[[reviewers]]\npreset = \"codex\"\n",
    );
    let cr_xdg = fx.write(
        "xdg/clean-review/config.json",
        r#"{"reviewers": ["claude"]}"#,
    );
    let cr_home = fx.write(
        "home/.config/clean-review/config.json",
        r#"{"reviewers": ["agy", "native"]}"#,
    );
    let env = fx.env_spar(&spar);

    let cfg = load(&env);
    assert_eq!(cfg.user_source, Some((Source::SparConfig, spar.clone())));
    assert_eq!(presets(&cfg), [Preset::Agy]);
    assert!(cfg.skipped.is_empty());

    fs::remove_file(&spar).unwrap();
    let cfg = load(&env);
    assert_eq!(cfg.user_source, Some((Source::XdgToml, xdg.clone())));
    assert_eq!(presets(&cfg), [Preset::Native]);
    assert_eq!(cfg.skipped.len(), 1);
    assert_eq!(cfg.skipped[0].source, Source::SparConfig);
    assert_eq!(cfg.skipped[0].path.as_deref(), Some(spar.as_path()));
    assert_eq!(cfg.skipped[0].reason, "does not exist");

    fs::remove_file(&xdg).unwrap();
    let cfg = load(&env);
    assert_eq!(cfg.user_source, Some((Source::HomeToml, home.clone())));
    assert_eq!(presets(&cfg), [Preset::Codex]);

    fs::remove_file(&home).unwrap();
    let cfg = load(&env);
    assert_eq!(
        cfg.user_source,
        Some((Source::CleanReviewXdg, cr_xdg.clone()))
    );
    assert_eq!(presets(&cfg), [Preset::Claude]);

    fs::remove_file(&cr_xdg).unwrap();
    let cfg = load(&env);
    assert_eq!(
        cfg.user_source,
        Some((Source::CleanReviewHome, cr_home.clone()))
    );
    assert_eq!(presets(&cfg), [Preset::Agy, Preset::Native]);
    let skipped: Vec<Source> = cfg.skipped.iter().map(|s| s.source).collect();
    assert_eq!(
        skipped,
        [
            Source::SparConfig,
            Source::XdgToml,
            Source::HomeToml,
            Source::CleanReviewXdg
        ]
    );

    fs::remove_file(&cr_home).unwrap();
    let cfg = load(&env);
    assert_eq!(cfg.user_source, None);
    assert_eq!(names(&cfg), ["claude", "codex"]);
    assert_eq!(cfg.skipped.len(), 5);
    assert!(cfg.files.is_empty());
}

#[test]
fn g16_empty_environment_variables_are_absent() {
    let fx = Fx::new();
    let home = fx.root().join("home");
    let env = Env::from_vars(
        |name| match name {
            "SPAR_CONFIG" | "XDG_CONFIG_HOME" => Some(OsString::new()),
            "HOME" => Some(home.clone().into()),
            _ => None,
        },
        fx.work(),
    );
    assert_eq!(env.spar_config, None);
    assert_eq!(env.xdg_config_home, None);
    assert_eq!(env.home, Some(home.clone().into()));
    let cfg = load(&env);
    let reasons: Vec<&str> = cfg.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert_eq!(reasons[0], "SPAR_CONFIG is unset or empty");
    assert_eq!(reasons[1], "XDG_CONFIG_HOME is unset or empty");
    assert_eq!(
        cfg.skipped[2].path,
        Some(home.join(".config/jaekit/spar.toml"))
    );

    let env = Env::from_vars(|_| Some(OsString::new()), fx.work());
    let cfg = load(&env);
    assert_eq!(cfg.skipped.len(), 5);
    assert!(cfg.skipped.iter().all(|s| s.path.is_none()));
}

#[test]
fn g16_relative_xdg_config_home_is_skipped() {
    let fx = Fx::new();
    let env = Env {
        xdg_config_home: Some("relative/xdg".into()),
        ..fx.env()
    };
    let cfg = load(&env);
    assert_eq!(
        cfg.skipped[1].reason,
        "XDG_CONFIG_HOME is not an absolute path"
    );
    assert_eq!(cfg.skipped[1].path, None);
}

#[test]
fn g16_broken_symlink_and_symlink_loop_are_absent() {
    let fx = Fx::new();
    let broken = fx.root().join("broken.toml");
    symlink(fx.root().join("missing.toml"), &broken).unwrap();
    let cfg = load(&fx.env_spar(&broken));
    assert_eq!(cfg.skipped[0].reason, "broken symbolic link");
    assert_eq!(cfg.user_source, None);

    let a = fx.root().join("loop-a");
    let b = fx.root().join("loop-b");
    symlink(&b, &a).unwrap();
    symlink(&a, &b).unwrap();
    let cfg = load(&fx.env_spar(&a));
    assert_eq!(cfg.skipped[0].reason, "symbolic link loop");

    // A loop at the XDG path passes on to the next source too.
    fs::create_dir_all(fx.root().join("xdg/jaekit")).unwrap();
    symlink(&a, fx.root().join("xdg/jaekit/spar.toml")).unwrap();
    let home = fx.write(
        "home/.config/jaekit/spar.toml",
        "[[reviewers]]\npreset = \"agy\"\n",
    );
    let cfg = load(&fx.env());
    assert_eq!(cfg.user_source, Some((Source::HomeToml, home)));
}

#[test]
fn g16_symlink_to_a_regular_file_is_followed() {
    let fx = Fx::new();
    let target = fx.write("real.toml", "[[reviewers]]\npreset = \"agy\"\n");
    let link = fx.root().join("link.toml");
    symlink(&target, &link).unwrap();
    let cfg = load(&fx.env_spar(&link));
    assert_eq!(presets(&cfg), [Preset::Agy]);
    assert_eq!(cfg.files[0].path, link);
}

#[test]
fn g16_existing_user_path_that_is_not_a_regular_file_is_an_error() {
    let fx = Fx::new();
    let folder = fx.root().join("folder.toml");
    fs::create_dir(&folder).unwrap();
    assert_config_error(&load_err(&fx.env_spar(&folder)), &folder, 1, "a folder");

    let fifo = fx.root().join("fifo.toml");
    mkfifo(&fifo);
    assert_config_error(&load_err(&fx.env_spar(&fifo)), &fifo, 1, "a FIFO");

    // A symlink to a folder is the folder.
    let link = fx.root().join("link.toml");
    symlink(&folder, &link).unwrap();
    assert_config_error(&load_err(&fx.env_spar(&link)), &link, 1, "a folder");

    // At the XDG path, after a missing SPAR_CONFIG, too.
    fs::create_dir_all(fx.root().join("xdg/jaekit/spar.toml")).unwrap();
    let e = load_err(&fx.env_spar(&fx.root().join("missing.toml")));
    assert_config_error(&e, &fx.root().join("xdg/jaekit/spar.toml"), 1, "a folder");

    // A clean-review folder as well.
    let fx = Fx::new();
    let cr = fx.root().join("home/.config/clean-review/config.json");
    fs::create_dir_all(&cr).unwrap();
    assert_config_error(&load_err(&fx.env()), &cr, 1, "a folder");
}

#[test]
fn g16_stat_failing_for_another_reason_is_an_error() {
    let fx = Fx::new();
    let file = fx.write("file", "x");
    // ENOTDIR: a path through a regular file.
    let through = file.join("spar.toml");
    assert_config_error(
        &load_err(&fx.env_spar(&through)),
        &through,
        1,
        "cannot be examined",
    );
    // ENAMETOOLONG.
    let long = fx.root().join("x".repeat(300));
    assert_config_error(
        &load_err(&fx.env_spar(&long)),
        &long,
        1,
        "cannot be examined",
    );
}

#[test]
fn g16_later_sources_are_not_examined_once_one_exists() {
    let fx = Fx::new();
    fs::create_dir_all(fx.root().join("home/.config/jaekit/spar.toml")).unwrap();
    let (env, path) = fx.user("");
    let cfg = load(&env);
    assert_eq!(cfg.user_source, Some((Source::SparConfig, path)));
}

#[test]
fn g16_project_file_missing_or_broken_link_gives_defaults() {
    let fx = Fx::new();
    let cfg = load(&fx.env());
    assert!(!cfg.project_present);
    assert_eq!(cfg.project_file, fx.work().join(".jaekit/spar.toml"));
    assert_eq!(cfg.angles.value, Angle::ALL);
    assert_eq!(cfg.caps, Caps::default());
    assert!(cfg.check_paths.is_empty() && cfg.rules.is_empty());
    // The project file is not a user source: nothing about it in `skipped`.
    assert!(cfg.skipped.iter().all(|s| s.source != Source::Project));

    fs::create_dir_all(fx.work().join(".jaekit")).unwrap();
    symlink(fx.root().join("gone"), fx.work().join(".jaekit/spar.toml")).unwrap();
    assert!(!load(&fx.env()).project_present);
}

#[test]
fn g16_project_file_that_is_not_a_regular_file_is_an_error() {
    let fx = Fx::new();
    let path = fx.work().join(".jaekit/spar.toml");
    fs::create_dir_all(&path).unwrap();
    assert_config_error(&load_err(&fx.env()), &path, 1, "a folder");

    let fx = Fx::new();
    let path = fx.work().join(".jaekit/spar.toml");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    mkfifo(&path);
    assert_config_error(&load_err(&fx.env()), &path, 1, "a FIFO");

    let fx = Fx::new();
    fx.write("work/.jaekit", "a file where the folder should be");
    let path = fx.work().join(".jaekit/spar.toml");
    assert_config_error(&load_err(&fx.env()), &path, 1, "cannot be examined");
}

#[test]
fn g16_files_read_are_recorded_with_their_sha256() {
    let fx = Fx::new();
    let user_text = "timeout_seconds = 60\n";
    let project_text = "angles = [\"checks\"]\n";
    let (env, user) = fx.user(user_text);
    let project = fx.write("work/.jaekit/spar.toml", project_text);
    let cfg = load(&env);
    assert!(cfg.project_present);
    assert_eq!(
        cfg.files,
        [
            FileRead {
                source: Source::SparConfig,
                path: user,
                sha256: sha256_hex(user_text.as_bytes()),
            },
            FileRead {
                source: Source::Project,
                path: project,
                sha256: sha256_hex(project_text.as_bytes()),
            },
        ]
    );
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn g16_project_file_is_read_from_the_work_tree() {
    let fx = Fx::new();
    fx.write("work/.jaekit/spar.toml", "angles = [\"security\"]\n");
    let cfg = load(&fx.env());
    assert_eq!(cfg.angles.value, [Angle::Security]);
    let other = Env {
        work_tree: fx.root().join("home"),
        ..fx.env()
    };
    assert_eq!(load(&other).angles.value, Angle::ALL);
}

#[test]
fn g16_digest_looks_only_at_applied_values() {
    let fx = Fx::new();
    let a = fx.write(
        "a.toml",
        "# one file\ntimeout_seconds = 60\n[[reviewers]]\npreset = \"claude\"\n",
    );
    let b = fx.write(
            "elsewhere/b.toml",
            "\n\ntimeout_seconds = 60\n[[reviewers]]\nname = \"claude\" # the same name, written out\npreset = 'claude'\ntimeout_seconds = 60\n",
        );
    let c = fx.write(
        "c.toml",
        "timeout_seconds = 61\n[[reviewers]]\npreset = \"claude\"\n",
    );
    let da = load(&fx.env_spar(&a));
    let db = load(&fx.env_spar(&b));
    let dc = load(&fx.env_spar(&c));
    assert_ne!(da.files, db.files);
    assert_eq!(da.digest(), db.digest());
    assert_ne!(da.digest(), dc.digest());
    assert_eq!(da.digest().len(), 64);

    // The project file counts through its values too.
    fx.write("work/.jaekit/spar.toml", "[caps]\ncode = 4\n");
    assert_ne!(load(&fx.env_spar(&a)).digest(), da.digest());
}
