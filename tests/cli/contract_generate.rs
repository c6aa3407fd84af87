//! `generate` drafts a contract from a sprint document in English or Korean and reports what
//! it could only map to a manual check.

use crate::harness::TestRepo;
use serde_json::Value;

fn sample(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .unwrap()
}

fn kinds(draft: &Value) -> Vec<String> {
    draft["dod"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap().to_string())
        .collect()
}

#[track_caller]
fn generate_sample(doc: &str, sprint: &str) -> (TestRepo, Value, crate::harness::Run) {
    let repo = TestRepo::new();
    repo.write("plans/sprint.md", &sample(doc));
    let out = repo.rails(&["contract", "generate", "plans/sprint.md"]);
    out.ok();
    let draft: Value =
        serde_json::from_str(&repo.read(&format!(".rails/contracts/{sprint}.json"))).unwrap();
    assert_eq!(draft["sprintId"], sprint);
    // The draft is a valid contract: it freezes as it is.
    repo.rails(&["contract", "freeze", sprint]).ok();
    (repo, draft, out)
}

#[test]
fn english_sprint_document() {
    let (_repo, draft, out) = generate_sample("sprint-en.md", "SPRINT-007");
    let k = kinds(&draft);
    for want in [
        "command_success",
        "file_exists",
        "regex_in_file",
        "http_status",
        "process_listening",
        "manual_checklist",
    ] {
        assert!(k.iter().any(|x| x == want), "no {want} in {k:?}");
    }
    out.stdout_has("could only be mapped to a manual check")
        .stdout_has("snappy");
    assert!(!draft["runtimeValidation"]["commands"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(!draft["environmentPrerequisites"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(!draft["nonGoals"].as_array().unwrap().is_empty());
}

#[test]
fn korean_sprint_document() {
    let (_repo, draft, out) = generate_sample("sprint-ko.md", "SPRINT-008");
    let k = kinds(&draft);
    for want in [
        "command_success",
        "file_exists",
        "regex_in_file",
        "http_status",
        "process_listening",
        "manual_checklist",
    ] {
        assert!(k.iter().any(|x| x == want), "no {want} in {k:?}");
    }
    out.stdout_has("could only be mapped to a manual check")
        .stdout_has("다랑이");
    let checks = draft["dod"]["checks"].as_array().unwrap();
    let cmd = checks
        .iter()
        .find(|c| c["kind"] == "command_success")
        .unwrap();
    assert_eq!(cmd["spec"]["command"], "pnpm tsc --noEmit");
    assert!(!draft["runtimeValidation"]["commands"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(!draft["environmentPrerequisites"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(!draft["nonGoals"].as_array().unwrap().is_empty());
}

#[test]
fn json_summary_lists_manual_items() {
    let repo = TestRepo::new();
    repo.write("plans/sprint.md", &sample("sprint-en.md"));
    let doc = repo
        .rails(&["contract", "generate", "plans/sprint.md", "--json"])
        .json();
    assert_eq!(doc["schema"], "rails-generate/v1");
    assert_eq!(doc["sprint"], "SPRINT-007");
    let items = doc["manualItems"].as_array().unwrap();
    assert!(
        items
            .iter()
            .any(|i| i["text"].as_str().unwrap().contains("snappy")),
        "{items:?}"
    );
}

#[test]
fn generate_refuses_to_overwrite_a_draft_and_drafts_the_next_version_when_frozen() {
    let (repo, _, _) = generate_sample("sprint-en.md", "SPRINT-007");
    // Frozen, and the draft equals the tip: generate writes the draft of the next version.
    repo.rails(&["contract", "generate", "plans/sprint.md"])
        .ok()
        .stdout_has("this is the draft of v1.1");
    // Now the draft has changes of its own: refused without --force.
    repo.rails(&["contract", "generate", "plans/sprint.md"])
        .code(65)
        .stderr_has("a draft already exists")
        .stderr_has("--force");
    repo.rails(&["contract", "generate", "plans/sprint.md", "--force"])
        .ok();
}

#[test]
fn sprint_id_from_flag_or_title() {
    let repo = TestRepo::new();
    repo.write(
        "plan.md",
        "# Greeting\n\n## Done criteria\n- `hello.txt` exists\n",
    );
    repo.rails(&["contract", "generate", "plan.md"])
        .code(65)
        .stderr_has("--sprint");
    repo.rails(&["contract", "generate", "plan.md", "--sprint", "HELLO-1"])
        .ok();
    assert!(repo.path().join(".rails/contracts/HELLO-1.json").exists());
    repo.rails(&["contract", "generate", "missing.md", "--sprint", "X"])
        .code(65)
        .stderr_has("missing.md");
    repo.write("empty.md", "# SPRINT-009\n\nNothing here.\n");
    repo.rails(&["contract", "generate", "empty.md"])
        .code(65)
        .stderr_has("Done criteria");
}
