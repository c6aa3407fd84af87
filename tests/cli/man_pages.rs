//! The man pages in `man/` are generated from the clap definitions; a stale page fails here.
//! Regenerate with `UPDATE_MAN=1 cargo test --test cli man_pages`.

#[test]
fn man_pages_are_current() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let pages = rails_spar::cli::man::pages();
    assert!(pages.iter().any(|(n, _)| n == "git-rails.1"));
    assert!(pages.iter().any(|(n, _)| n == "git-spar.1"));
    assert!(pages
        .iter()
        .any(|(n, _)| n == "git-rails-contract-freeze.1"));
    if std::env::var_os("UPDATE_MAN").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in &pages {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }
    let mut stale = Vec::new();
    for (name, bytes) in &pages {
        match std::fs::read(dir.join(name)) {
            Ok(on_disk) if &on_disk == bytes => {}
            _ => stale.push(name.clone()),
        }
    }
    let expected: std::collections::BTreeSet<String> =
        pages.iter().map(|(n, _)| n.clone()).collect();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !expected.contains(&name) {
            stale.push(format!("{name} (no longer generated)"));
        }
    }
    assert!(
        stale.is_empty(),
        "stale man pages: {stale:?}; run `UPDATE_MAN=1 cargo test --test cli man_pages`"
    );
}

#[test]
fn cli_definitions_are_consistent() {
    rails_spar::cli::rails::command().debug_assert();
    rails_spar::cli::spar::command().debug_assert();
}

/// Every argument and option of every command says what it is in `--help` (and so in the man
/// pages): an empty description leaves a newcomer guessing at `<SPRINT>`.
#[test]
fn every_argument_has_a_description() {
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            if arg.is_hide_set() || matches!(arg.get_id().as_str(), "help" | "version") {
                continue;
            }
            let has = arg
                .get_help()
                .or(arg.get_long_help())
                .is_some_and(|h| !h.to_string().trim().is_empty());
            if !has {
                missing.push(format!("{path} {}", arg.get_id()));
            }
        }
        for sub in cmd.get_subcommands() {
            if sub.is_hide_set() {
                continue;
            }
            walk(sub, &format!("{path} {}", sub.get_name()), missing);
        }
    }
    let mut missing = Vec::new();
    for (name, mut cmd) in [
        ("git rails", rails_spar::cli::rails::command()),
        ("git spar", rails_spar::cli::spar::command()),
    ] {
        cmd.build();
        walk(&cmd, name, &mut missing);
    }
    assert!(
        missing.is_empty(),
        "arguments without a description: {missing:#?}"
    );
}
