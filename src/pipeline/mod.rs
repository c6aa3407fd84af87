//! The planner → implementer → reviewer → deployer hand-offs as one persisted state machine.
//!
//! A hand-off **is** a state transition: the orchestrator spawns the actor of the current state,
//! parses its answer strictly ([`handoff`]), and commits the transition to
//! `refs/rails/pipeline/<sprint>` before anything else happens; notifications follow the commit
//! ([`notify`]). A run killed at any point resumes from the last committed state.
//!
//! One concept a file: `state` (the record: states, events, reading and committing them),
//! `lock` (one pipeline per repository), `run` (run, resume, abort and the loop), `verdict`
//! (what a verdict moves the pipeline to), `announce` (what each event says to people),
//! `status`; [`config`], [`handoff`], [`merge`], [`notify`].

mod announce;
pub mod config;
pub mod handoff;
mod lock;
pub mod merge;
pub mod notify;
mod run;
mod state;
mod status;
mod verdict;

use crate::store::refs;

pub use lock::{take_lock, RunLock};
pub use run::{abort, resume, run};
pub use state::{history, load, Event, PState, State};
pub use status::{render_status, status_json};

pub const SCHEMA: &str = "rails-pipeline/v1";

pub fn pipeline_ref(sprint: &str) -> String {
    refs::Namespace::Pipeline.name(sprint)
}

/// What the run loop reports as it goes (progress for a person or a log).
pub trait Progress {
    fn line(&mut self, text: &str);
}

impl<F: FnMut(&str)> Progress for F {
    fn line(&mut self, text: &str) {
        self(text)
    }
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}
