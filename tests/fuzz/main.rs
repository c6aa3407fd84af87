//! Fuzzing every parser of hostile input (issue 24): reviewer results and event streams,
//! transcripts, contract drafts, sprint documents, the TOML and JSON configuration, hook stdin
//! and agent events, HandoffMessages, locations and links, agy shell lines and globs.
//!
//! Each target is a test: it runs its seeds (the real corpus) and then generated inputs for
//! `FUZZ_SECONDS` (default 2) and prints `fuzz <target>: N inputs in T s`. Every input must keep
//! the target's property, finish within `FUZZ_TIME_BOUND_MS` (50) of CPU and hold at most 64 MiB.
//! A failing input is saved under target/fuzz-crashes/ with its minimised form. Reproduce a
//! failure with the seed arbtest prints: `ARBTEST_SEED=0x… cargo test --test fuzz <target>`.
//! `benches/fuzz.sh` runs a campaign; crashes found are kept as cases in tests/cli/fuzz_cases.rs.

// Test code may unwrap: a failed unwrap is a failed test (Cargo.toml [lints] refuses it elsewhere).
#![allow(clippy::unwrap_used)]

mod cli;
mod corpus;
mod engine;
mod gen;
mod grammars;
mod parsers;
