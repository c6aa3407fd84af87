//! `RAILS_BUILD_ID`: the sha256 of every file that makes the program (`src/**`, `build.rs`,
//! `Cargo.toml`, `Cargo.lock`). Memos of derived decisions (`store::cache`) are keyed by it, so a
//! development build whose rules changed never reads what an older build derived; the package
//! version does not change between such builds.
//!
//! The binaries are linked as rustc links them by default (position-independent, so the
//! kernel's address space randomisation applies to a program that parses pushed objects on a
//! server; an earlier `-no-pie` is gone), with one addition where the linker and the C library
//! support it (GNU ld 2.38+ and glibc 2.36+, probed by linking a one-line C program): their
//! relative relocations packed (`-z pack-relative-relocs`, DT_RELR). A PIE's relocation table
//! was 400 KB of `rails-spar-extras` (10.24 MB, over the 10 MB budget; 9.85 MB packed), and the
//! loader applies a packed table faster on every hook start.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut files = vec![
        PathBuf::from("build.rs"),
        PathBuf::from("Cargo.toml"),
        PathBuf::from("Cargo.lock"),
    ];
    collect(&root, Path::new("src"), &mut files);
    files.sort();
    let mut hash = Sha256::new();
    for file in &files {
        // A file that cannot be read still changes the id (its name with no content).
        let content = std::fs::read(root.join(file)).unwrap_or_default();
        let name = file.to_string_lossy();
        hash.update((name.len() as u64).to_le_bytes());
        hash.update(name.as_bytes());
        hash.update((content.len() as u64).to_le_bytes());
        hash.update(&content);
    }
    let id: String = hash.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=RAILS_BUILD_ID={id}");
    for watched in ["src", "build.rs", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={watched}");
    }

    if packs_relative_relocations() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the C toolchain links (and the C library loads) a program with packed relative
/// relocations: Linux with glibc, building for this machine, and a probe that links and runs.
fn packs_relative_relocations() -> bool {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || var("TARGET") != var("HOST")
    {
        return false;
    }
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let source = out.join("relr-probe.c");
    let program = out.join("relr-probe");
    if std::fs::write(&source, "int main(void) { return 0; }\n").is_err() {
        return false;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let linked = std::process::Command::new(cc)
        .args(["-fPIE", "-pie", "-Wl,-z,pack-relative-relocs", "-o"])
        .arg(&program)
        .arg(&source)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    linked
        && std::process::Command::new(&program)
            .status()
            .is_ok_and(|s| s.success())
}

/// Every regular file below `dir` (relative to `root`), in no particular order.
fn collect(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return;
    };
    for entry in entries.flatten() {
        let rel = dir.join(entry.file_name());
        match entry.file_type() {
            Ok(t) if t.is_dir() => collect(root, &rel, out),
            Ok(t) if t.is_file() => out.push(rel),
            _ => {}
        }
    }
}
