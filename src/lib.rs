//! rails + spar: "done" means something a machine checked, recorded in git.
//!
//! - [`contract`]: frozen, versioned sprint contracts and their validation.
//! - [`evidence`]: failing-first evidence cycles per criterion, status and the gate.
//! - [`hooks`]: installing the git hooks, and what they do when git runs them.
//! - [`pipeline`]: the hand-off state machine of the four actors.
//! - [`spar`]: the review rounds of `git spar`.
//! - [`store`]: every read and write of git objects, refs, notes and record files.
//! - [`sync`]: records that travel between clones (fetch, merge, push), and `doctor`.
//! - [`report`]: the HTML reports and the gates as markdown.
//! - [`process`]: running shell commands with timeouts that kill the whole process group.
//! - [`redact`]: the one redactor every writer passes free text through (secrets out).
//! - [`extras`]: finding and starting `rails-spar-extras`, the sibling executable that holds the
//!   MCP server and the `db_query` drivers, so `git-rails` (the hooks' binary) stays small.
//! - [`mcp`]: `git rails mcp`, the same tools for agents over the Model Context Protocol.
//! - [`agent`]: `git rails agent setup|remove`, the agents' configuration files, and the
//!   PreToolUse guard.
//! - [`cli`]: argument parsing and rendering; the only code that prints.
//! - [`error`]: one error type and the exit codes.
//!
//! Comments and tests cite spar's input contract by row (`G17`) and section (`§4`): both are
//! defined in `docs/spar-input-contract.md` (a test holds every cited row to a section there).

#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod agent;
pub mod cli;
pub mod contract;
pub mod error;
pub mod evidence;
pub mod extras;
pub mod hooks;
pub mod mcp;
pub mod pipeline;
pub mod policy;
pub mod process;
pub mod redact;
pub mod report;
pub mod spar;
pub mod store;
pub mod sync;

/// This build's identity: a sha256 of the sources, Cargo.toml and Cargo.lock (build.rs). It
/// changes whenever the code does, unlike the package version, so caches of decisions keyed by
/// it are never read by a build with other rules.
pub const BUILD_ID: &str = env!("RAILS_BUILD_ID");
