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

/// Words a newcomer cannot look up stay out of the README and every `--help`: internal row
/// numbers ("G27"), "the seed", links outside the repository.
#[test]
fn readme_and_help_use_plain_words() {
    let row = regex::Regex::new(r"\bG[0-9]{1,2}\b|§[0-9]|\bseed\b|\.\./shared").unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let bad: Vec<&str> = readme.lines().filter(|l| row.is_match(l)).collect();
    assert!(
        bad.is_empty(),
        "README lines with internal references: {bad:#?}"
    );
    fn walk(cmd: &mut clap::Command, path: &str, row: &regex::Regex, bad: &mut Vec<String>) {
        let help = cmd.render_long_help().to_string();
        for l in help.lines().filter(|l| row.is_match(l)) {
            bad.push(format!("{path}: {l}"));
        }
        for sub in cmd.get_subcommands_mut() {
            let name = format!("{path} {}", sub.get_name());
            walk(sub, &name, row, bad);
        }
    }
    let mut bad = Vec::new();
    for (name, mut cmd) in [
        ("git rails", rails_spar::cli::rails::command()),
        ("git spar", rails_spar::cli::spar::command()),
    ] {
        cmd.build();
        walk(&mut cmd, name, &row, &mut bad);
    }
    assert!(bad.is_empty(), "help with internal references: {bad:#?}");
}

/// Every row (`G17`) and section (`§4`) the code and tests cite is defined in
/// docs/spar-input-contract.md, so a citation resolves inside the repository.
#[test]
fn every_cited_row_is_in_the_input_contract() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/spar-input-contract.md")).unwrap();
    let cite = regex::Regex::new(r"\bG([0-9]{1,2})\b").unwrap();
    let mut cited = std::collections::BTreeSet::new();
    let mut stack = vec![root.join("src"), root.join("tests/cli")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                for c in cite.captures_iter(&text) {
                    cited.insert(c[1].parse::<u32>().unwrap());
                }
            }
        }
    }
    assert!(cited.len() > 20, "{cited:?}");
    for n in cited {
        assert!(
            doc.contains(&format!("\n### G{n} — ")),
            "G{n} is cited in the code but has no section in docs/spar-input-contract.md"
        );
    }
    for s in 1..=6 {
        assert!(doc.contains(&format!("\n## §{s} — ")), "§{s} is missing");
    }
}
