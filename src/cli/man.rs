//! Man pages rendered from the same clap definitions the binaries use: `git-rails.1`,
//! `git-spar.1`, and one page per subcommand (`git-rails-contract-freeze.1`).

use std::path::Path;

/// Every page as (file name, roff bytes).
pub fn pages() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    render(super::rails::command(), "git-rails", &mut out);
    render(super::spar::command(), "git-spar", &mut out);
    out
}

fn render(cmd: clap::Command, name: &str, out: &mut Vec<(String, Vec<u8>)>) {
    let cmd = cmd
        .name(name.to_string())
        .bin_name(name.replacen('-', " ", 1).replace('-', " "));
    let mut buf = Vec::new();
    let man = clap_mangen::Man::new(cmd.clone())
        .title(name.to_uppercase())
        .section("1")
        .source(format!("rails-spar {}", env!("CARGO_PKG_VERSION")))
        .manual("Git Manual");
    if man.render(&mut buf).is_ok() {
        out.push((format!("{name}.1"), buf));
    }
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        render(sub.clone(), &format!("{name}-{}", sub.get_name()), out);
    }
}

/// Writes every page into `dir`.
pub fn write_all(dir: &Path) -> crate::error::Result<()> {
    for (name, bytes) in pages() {
        crate::store::atomic_write(&dir.join(name), &bytes)?;
    }
    Ok(())
}
