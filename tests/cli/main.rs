//! Integration tests: real temporary git repositories driven through the real binaries.
//! One test binary, one module per command (a file not declared here fails
//! `no_forgotten_test_files`).

// Test code may unwrap: a failed unwrap is a failed test (Cargo.toml [lints] refuses it elsewhere).
#![allow(clippy::unwrap_used)]

mod harness;

mod agent;
mod authority;
mod ci_action;
mod contract_checks;
mod contract_freeze;
mod contract_generate;
mod contract_schema;
mod contract_validate;
mod docs;
mod evidence;
mod evidence_durability;
mod first_hour;
mod foundation;
mod fuzz_cases;
mod git_formats;
mod hook_managers;
mod hooks;
mod input_forms;
mod man_pages;
mod mcp;
mod model_server;
mod pipeline;
mod privacy;
mod readme;
mod real_cli;
mod real_mcp;
mod real_spar;
mod spar_fixture;
mod spar_presets;
mod spar_report;
mod spar_results;
mod spar_run;
mod spar_series;
mod spar_standpoints;
mod status_gate;
mod sync;
mod trailer_agreement;
mod verify;

#[test]
fn no_forgotten_test_files() {
    let declared = include_str!("main.rs");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli");
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(module) = name.strip_suffix(".rs") {
            if module != "main" {
                assert!(
                    declared.contains(&format!("mod {module};")),
                    "tests/cli/{name} is not declared in tests/cli/main.rs"
                );
            }
        }
    }
}
