//! `git rails pipeline`: the hand-off state machine's status, runs and abort.

use super::*;

pub(super) fn cmd_pipeline(p: PipelineCommand) -> Result<Outcome> {
    use crate::pipeline::{self, PState};
    let store = Store::discover()?;
    let mut progress = |l: &str| eprintln!("{l}");
    let finished = |s: pipeline::State| -> Outcome {
        match s.state {
            PState::Done => Outcome::Ok,
            _ => Outcome::Fail,
        }
    };
    match p {
        PipelineCommand::Run(a) => {
            let sprint = crate::contract::resolve_sprint(&store, a.sprint)?;
            let s = pipeline::run(&store, &sprint, &mut progress)?;
            outln!("pipeline {sprint}: {}", s.state.as_str());
            Ok(finished(s))
        }
        PipelineCommand::Resume(a) => {
            let sprint = crate::contract::resolve_sprint(&store, a.sprint)?;
            let s = pipeline::resume(&store, &sprint, &mut progress)?;
            outln!("pipeline {sprint}: {}", s.state.as_str());
            Ok(finished(s))
        }
        PipelineCommand::Abort(a) => {
            let sprint = crate::contract::resolve_sprint(&store, a.sprint)?;
            if a.reason.trim().is_empty() {
                return Err(Error::refused("an abort needs a reason").hint(format!(
                    "git rails pipeline abort {sprint} --reason \"<why>\""
                )));
            }
            let s = pipeline::abort(&store, &sprint, a.reason.trim(), &mut progress)?;
            outln!("pipeline {sprint}: {}", s.state.as_str());
            Ok(Outcome::Ok)
        }
        PipelineCommand::Status(a) => {
            let sprint = crate::contract::resolve_sprint(&store, a.sprint)?;
            let Some((state, _)) = pipeline::load(&store, &sprint)? else {
                return Err(Error::refused(format!("no pipeline for {sprint}"))
                    .hint(format!("start one with `git rails pipeline run {sprint}`")));
            };
            let events = pipeline::history(&store, &sprint)?;
            if a.json {
                crate::cli::print_json(&pipeline::status_json(&state, &events))?;
            } else {
                let mut buf = Vec::new();
                pipeline::render_status(&state, &events, &mut buf)
                    .map_err(|e| Error::internal(e.to_string()))?;
                out!("{}", String::from_utf8_lossy(&buf));
            }
            Ok(Outcome::Ok)
        }
    }
}
