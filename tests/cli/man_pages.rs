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
