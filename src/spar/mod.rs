//! `git spar`: several independent reviewers over `base..head`, their output held to the
//! seed's input contract (rows G1–G35), findings classified by fixed rules.
//!
//! - [`vocab`]: every closed set of words (stages, angles, classes, dispositions, …), one macro.
//! - [`ids`]: series and round names, checked once where a command or a tool takes them.
//! - [`config`]: the five configuration sources, reviewers and presets (G14, G16–G25).
//! - [`glob`]: check-path globs with Go `path.Match` semantics per segment plus `**` (G24).
//! - [`location`]: the location and link grammar (§3), locations (G7), links (G8, G9).
//! - [`classify`]: the seven classification rules and the unreadable-location variant (§4).
//! - [`preset`]: running the claude, codex and agy CLIs, and native transcripts (G10–G15, G19).
//! - [`round`]: one round end to end; [`record`]: its files in git; [`progress`]: the reporter
//!   the caller owns (the library never prints).
//! - [`series`]: triage, waivers, cap extensions and counting, and the gate.
//! - [`view`], [`sarif`]: recorded rounds read back, and written as SARIF 2.1.0.

pub mod classify;
pub mod config;
pub mod glob;
pub mod ids;
pub mod location;
pub mod merge;
pub mod preset;
pub mod progress;
pub mod record;
pub mod result;
pub mod round;
pub mod sarif;
pub mod series;
pub mod summary;
pub mod view;
pub mod vocab;

/// The time a record says something happened at (RFC 3339, UTC).
pub(crate) fn now() -> String {
    jiff::Timestamp::now().to_string()
}

/// The lowercase hex sha256 of `bytes` (packets, configuration files, documents, cache keys).
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(bytes))
}

/// `path` made absolute against the current directory, as given otherwise (an `--out` path is
/// judged where it will be written).
pub(crate) fn absolute(path: &std::path::Path) -> crate::error::Result<std::path::PathBuf> {
    use crate::error::Context;
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    Ok(std::env::current_dir()
        .ctx("reading the current directory")?
        .join(path))
}
