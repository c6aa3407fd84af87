//! Two things the binaries need from the build itself.
//!
//! 1. `RAILS_BUILD_ID`: the sha256 of every file that makes the program (`src/**`, `build.rs`,
//!    `Cargo.toml`, `Cargo.lock`). Caches of decisions (spar's gate cache) are keyed by it, so a
//!    development build whose rules changed never reads a decision an older build wrote; the
//!    package version does not change between such builds.
//! 2. On Linux, the binaries are linked as position-dependent executables (`-no-pie`). The hooks
//!    start `git rails` / `git spar` on every commit and push, and a PIE pays its load-time
//!    relocations on each start (README "Figures" has the measurement). Only the binaries get the
//!    flag: build scripts, proc macros and the test executables keep the defaults, and other
//!    platforms (macOS executables are always PIE) are left as they are.

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

    // A build with crt-static in RUSTFLAGS makes rustc link static-pie, and `-no-pie` beside
    // those flags makes a binary that crashes at start. (`scripts/install.sh` gives crt-static
    // and the static relocation model to git-rails' own crate only, through `cargo rustc`, where
    // this script does not see it and `-no-pie` is what rustc's `-static` link wants anyway.)
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let static_crt = features.split(',').any(|f| f == "crt-static");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") && !static_crt {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
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
