//! Unit tests of drafting: sections, every mapping heuristic and the checks of the draft.

use super::*;

const EN: &str = include_str!("../../../tests/data/sprint-en.md");
const KO: &str = include_str!("../../../tests/data/sprint-ko.md");

fn now() -> jiff::Timestamp {
    "2026-04-10T12:00:00.123456Z".parse().unwrap()
}

fn gen(doc: &str) -> Generated {
    match generate(doc, None, now()) {
        Ok(g) => g,
        Err(e) => panic!("generate failed: {e}"),
    }
}

/// (id, kind, spec) of every check.
fn checks(g: &Generated) -> Vec<(String, &'static str, Value)> {
    g.contract
        .dod
        .checks
        .iter()
        .map(|c| (c.id.clone(), c.kind.as_str(), c.spec.clone()))
        .collect()
}

fn row(id: &str, kind: &'static str, spec: Value) -> (String, &'static str, Value) {
    (id.to_string(), kind, spec)
}

fn parses(g: &Generated) {
    if let Err(p) = schema::parse(&g.contract.to_canonical_json()) {
        panic!("generated contract refused: {p:?}");
    }
}

fn refusal(doc: &str, sprint: Option<&str>) -> Error {
    match generate(doc, sprint, now()) {
        Ok(g) => panic!("expected a refusal, got {:?}", g.contract),
        Err(e) => {
            assert_eq!(e.kind, crate::error::Kind::Refused, "{e}");
            e
        }
    }
}

#[test]
fn every_regex_compiles() {
    let all = [
        sprint_re(),
        heading_re(),
        closing_hashes_re(),
        list_item_re(),
        checkbox_re(),
        type_re(),
        url_re(),
        status_re(),
        ok_re(),
        method_re(),
        curl_method_re(),
        port_re(),
        exit_code_re(),
        success_re(),
        failure_re(),
        exists_re(),
        capability_re(),
        file_word_re(),
        dir_word_re(),
        command_word_re(),
        negation_re(),
        env_word_re(),
        dollar_var_re(),
        caps_name_re(),
        env_name_re(),
        program_re(),
        timeout_re(),
        link_re(),
        autolink_re(),
    ];
    for (i, re) in all.iter().enumerate() {
        assert!(re.is_some(), "regex #{i} does not compile");
    }
}

/// The runners generate knows get which exits count as RED, and "the suite stays green"
/// items are regression guards; a plain "passes" stays failing-first.
#[test]
fn known_runners_get_red_exit_codes_and_stays_green_items_are_guards() {
    let g = gen("# SPRINT-008: t\n\n## Done criteria\n- `pytest -q tests/test_api.py` passes\n- the existing suite still passes: `pytest`\n- `npm test` passes\n- `sh check.sh` exits 3\n");
    parses(&g);
    let checks: Vec<(&str, Option<schema::CheckProof>, &serde_json::Value)> = g
        .contract
        .dod
        .checks
        .iter()
        .map(|c| (c.id.as_str(), c.proof, &c.spec))
        .collect();
    assert_eq!(checks[0].1, None);
    assert_eq!(checks[0].2["redExitCodes"], json!([1, 2]));
    assert_eq!(checks[1].1, Some(schema::CheckProof::Guard));
    assert_eq!(checks[1].2["redExitCodes"], json!([1, 2]));
    assert_eq!(checks[2].1, None);
    assert!(checks[2].2.get("redExitCodes").is_none());
    assert!(checks[3].2.get("redExitCodes").is_none());
}

#[test]
fn english_document() {
    let g = gen(EN);
    parses(&g);
    let c = &g.contract;
    assert_eq!(c.sprint_id, "SPRINT-007");
    assert_eq!(c.sprint_type, SprintType::Feature);
    assert_eq!(c.version, SchemaVersion::V1);
    assert!(ulid::Ulid::from_string(&c.id).is_ok());
    assert_eq!(c.created_at, "2026-04-10T12:00:00Z");
    assert_eq!(c.reviewer_profile, ReviewerProfile::Static);
    assert_eq!(c.approval_gates, Gates::default());
    assert!(c.risk_flags.is_empty());
    let list = ".rails/checklists/SPRINT-007.md";
    assert_eq!(
        checks(&g),
        vec![
            row(
                "cargo-test-workspace-passes",
                "command_success",
                json!({"command": "cargo test --workspace", "redExitCodes": [101]})
            ),
            row(
                "src-routes-health-rs-exists",
                "file_exists",
                json!({"path": "src/routes/health.rs"})
            ),
            row(
                "src-routes-mod-rs-contains-pub-mod",
                "regex_in_file",
                json!({"path": "src/routes/mod.rs", "pattern": "pub mod health;"})
            ),
            row(
                "src-main-rs-does-not-contain-println",
                "regex_in_file",
                json!({"path": "src/main.rs", "pattern": "println!", "negate": true})
            ),
            row(
                "get-localhost-3000-health-returns-200",
                "http_status",
                json!({"url": "http://localhost:3000/health", "method": "GET", "expectStatus": 200})
            ),
            row(
                "curl-s-x-post-localhost-3000-health-405",
                "http_status",
                json!({"url": "http://localhost:3000/health", "method": "POST", "expectStatus": 405})
            ),
            row(
                "the-server-listens-on-port-3000",
                "process_listening",
                json!({"port": 3000})
            ),
            row(
                "scripts-smoke-sh-exits-0",
                "command_success",
                json!({"command": "./scripts/smoke.sh"})
            ),
            row(
                "cargo-run-check-config-tests-bad-toml",
                "command_success",
                json!({"command": "cargo run -- --check-config tests/bad.toml", "expectExitCode": 2})
            ),
            row(
                "the-ui-feels-snappy",
                "manual_checklist",
                json!({"path": list, "items": ["The UI feels snappy"]})
            ),
            row(
                "docs-health-md-is-present",
                "file_exists",
                json!({"path": "docs/health.md"})
            ),
            row(
                "docs-api-directory-exists",
                "file_exists",
                json!({"path": "docs/api", "type": "dir"})
            ),
            row(
                "readme-md-mentions-the-endpoint",
                "manual_checklist",
                json!({"path": list, "items": ["README.md mentions the endpoint"]})
            ),
        ]
    );
    let first = &c.dod.checks[0];
    assert_eq!(first.description, "cargo test --workspace passes");
    assert!(first.blocking);
    assert_eq!(
        c.dod.checks[2].description,
        "src/routes/mod.rs contains /pub mod health;/"
    );
    assert_eq!(
        g.manual_items,
        vec![
            ManualItem {
                section: "Done criteria (DoD)".into(),
                text: "The UI feels snappy".into(),
                check_id: "the-ui-feels-snappy".into(),
            },
            ManualItem {
                section: "Done criteria (DoD)".into(),
                text: "README.md mentions the endpoint".into(),
                check_id: "readme-md-mentions-the-endpoint".into(),
            },
        ]
    );

    let commands: Vec<(&str, &str, u64, i32)> = c
        .runtime_validation
        .commands
        .iter()
        .map(|r| {
            (
                r.name.as_str(),
                r.command.as_str(),
                r.timeout_ms,
                r.expect_exit_code,
            )
        })
        .collect();
    assert_eq!(
        commands,
        vec![
            ("cargo-build-release", "cargo build --release", 180_000, 0),
            ("cargo-test-workspace", "cargo test --workspace", 60_000, 0),
            (
                "scripts-start-sh-detach-port-3000",
                "./scripts/start.sh --detach --port 3000",
                60_000,
                0
            ),
            (
                "curl-fss-localhost-3000-health",
                "curl -fsS http://localhost:3000/health",
                60_000,
                0
            ),
        ]
    );

    let prereqs: Vec<(&str, &str, Value, &str)> = c
        .environment_prerequisites
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                p.check.as_str(),
                p.spec.clone(),
                p.reason.as_str(),
            )
        })
        .collect();
    assert_eq!(
        prereqs,
        vec![
            (
                "cargo",
                "command_exists",
                json!({"command": "cargo"}),
                "cargo command (Rust 1.89 or newer)"
            ),
            (
                "docker",
                "command_exists",
                json!({"command": "docker"}),
                "docker installed"
            ),
            (
                "port-5432",
                "port_open",
                json!({"port": 5432}),
                "Port 5432 open (PostgreSQL for the integration tests)"
            ),
            (
                "DATABASE_URL",
                "env_var",
                json!({"name": "DATABASE_URL"}),
                "$DATABASE_URL points at the test database"
            ),
            (
                "RUST_LOG",
                "env_var",
                json!({"name": "RUST_LOG", "pattern": "^(info|debug)$"}),
                "RUST_LOG env var matches /^(info|debug)$/"
            ),
            (
                "config/local.toml",
                "file_exists",
                json!({"path": "config/local.toml"}),
                "config/local.toml exists"
            ),
            (
                "crates.example.com",
                "http_reachable",
                json!({"url": "https://crates.example.com"}),
                "https://crates.example.com reachable (crate mirror)"
            ),
        ]
    );
    assert_eq!(
        c.non_goals,
        vec![
            NonGoal::Text("Authentication on the health endpoint".into()),
            NonGoal::Text("Metrics export (Prometheus, OpenTelemetry)".into()),
        ]
    );
    assert_eq!(g.warnings.len(), 1, "{:?}", g.warnings);
    assert!(g.warnings[0].contains("A fast laptop"), "{:?}", g.warnings);
}

#[test]
fn korean_document() {
    let g = gen(KO);
    parses(&g);
    let c = &g.contract;
    assert_eq!(c.sprint_id, "SPRINT-008");
    assert_eq!(c.sprint_type, SprintType::Feature);
    let list = ".rails/checklists/SPRINT-008.md";
    assert_eq!(
        checks(&g),
        vec![
            row(
                "pnpm-tsc-noemit",
                "command_success",
                json!({"command": "pnpm tsc --noEmit"})
            ),
            row(
                "src-app-settings-page-tsx",
                "file_exists",
                json!({"path": "src/app/settings/page.tsx"})
            ),
            row(
                "tsconfig-json-strict-s-s-true",
                "regex_in_file",
                json!({"path": "tsconfig.json", "pattern": "\"strict\"\\s*:\\s*true"})
            ),
            row(
                "src-app-settings-page-tsx-console-log",
                "regex_in_file",
                json!({"path": "src/app/settings/page.tsx", "pattern": "console\\.log", "negate": true})
            ),
            row(
                "localhost-3000-api-health-200",
                "http_status",
                json!({"url": "http://localhost:3000/api/health", "expectStatus": 200})
            ),
            row(
                "post-localhost-3000-api-settings-201",
                "http_status",
                json!({"url": "http://localhost:3000/api/settings", "method": "POST", "expectStatus": 201})
            ),
            row("c7", "process_listening", json!({"port": 3000})),
            row(
                "pnpm-vitest-run",
                "command_success",
                json!({"command": "pnpm vitest run"})
            ),
            row(
                "scripts-seed-sh-0",
                "command_success",
                json!({"command": "scripts/seed.sh"})
            ),
            row(
                "public-icons",
                "file_exists",
                json!({"path": "public/icons", "type": "dir"})
            ),
            row(
                "qa",
                "manual_checklist",
                json!({"path": list, "items": ["다랑이 QA 체크리스트 확인"]})
            ),
            row(
                "c12",
                "manual_checklist",
                json!({"path": list, "items": ["다크 모드에서 글자가 잘 보인다"]})
            ),
        ]
    );
    assert_eq!(c.dod.checks[0].description, "pnpm tsc --noEmit 통과");
    assert_eq!(
        c.dod.checks[2].description,
        "tsconfig.json 에 /\"strict\"\\s*:\\s*true/ 포함"
    );
    let manual: Vec<(&str, &str, &str)> = g
        .manual_items
        .iter()
        .map(|m| (m.section.as_str(), m.text.as_str(), m.check_id.as_str()))
        .collect();
    assert_eq!(
        manual,
        vec![
            ("완료 기준", "다랑이 QA 체크리스트 확인", "qa"),
            ("완료 기준", "다크 모드에서 글자가 잘 보인다", "c12"),
        ]
    );

    let commands: Vec<(&str, &str, u64)> = c
        .runtime_validation
        .commands
        .iter()
        .map(|r| (r.name.as_str(), r.command.as_str(), r.timeout_ms))
        .collect();
    assert_eq!(
        commands,
        vec![
            (
                "pnpm-install-frozen-lockfile",
                "pnpm install --frozen-lockfile",
                180_000
            ),
            ("pnpm-build", "pnpm build", 60_000),
            ("pnpm-lint", "pnpm lint", 60_000),
        ]
    );

    let prereqs: Vec<(&str, &str, Value)> = c
        .environment_prerequisites
        .iter()
        .map(|p| (p.name.as_str(), p.check.as_str(), p.spec.clone()))
        .collect();
    assert_eq!(
        prereqs,
        vec![
            ("node", "command_exists", json!({"command": "node"})),
            ("pnpm", "command_exists", json!({"command": "pnpm"})),
            ("port-5432", "port_open", json!({"port": 5432})),
            ("DATABASE_URL", "env_var", json!({"name": "DATABASE_URL"})),
            (
                "SESSION_SECRET",
                "env_var",
                json!({"name": "SESSION_SECRET"})
            ),
            (".env.local", "file_exists", json!({"path": ".env.local"})),
            (
                "localhost:8080",
                "http_reachable",
                json!({"url": "http://localhost:8080"})
            ),
        ]
    );
    assert_eq!(
        c.environment_prerequisites[0].reason,
        "node 커맨드 (Node 22 필수)"
    );
    assert_eq!(
        c.non_goals,
        vec![
            NonGoal::Text("XState 머신 실제 구현".into()),
            NonGoal::Text("디스코드 연동".into()),
        ]
    );
    assert_eq!(g.warnings.len(), 1, "{:?}", g.warnings);
    assert!(g.warnings[0].contains("빠른 인터넷"), "{:?}", g.warnings);
    let md = g.checklist_markdown().unwrap();
    assert!(md.contains("- [ ] 다랑이 QA 체크리스트 확인\n"), "{md}");
    assert!(
        md.contains("- [ ] 다크 모드에서 글자가 잘 보인다\n"),
        "{md}"
    );
}

#[test]
fn no_sprint_id_is_refused() {
    let e = refusal(
        "# Health endpoint\n\n## Done criteria\n\n- `cargo test` passes\n",
        None,
    );
    assert!(e.message.contains("SPRINT-NNN"), "{e}");
    assert!(e.hint.unwrap_or_default().contains("--sprint"));
}

#[test]
fn sprint_option_wins_and_is_checked() {
    let doc = "# SPRINT-001: x\n\n## Done criteria\n\n- `cargo test` passes\n";
    let g = match generate(doc, Some("SPRINT-042"), now()) {
        Ok(g) => g,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(g.contract.sprint_id, "SPRINT-042");
    assert!(g.warnings[0].contains("SPRINT-001"), "{:?}", g.warnings);
    refusal(doc, Some("bad id/with slash"));
}

#[test]
fn sprint_id_from_the_text_when_the_title_has_none() {
    let g =
        gen("# Health\n\nTracked as SPRINT-012.\n\n## Done criteria\n\n- `make check` passes\n");
    assert_eq!(g.contract.sprint_id, "SPRINT-012");
    assert_eq!(g.warnings.len(), 1);
}

#[test]
fn no_done_section_is_refused() {
    let e = refusal(
        "# SPRINT-001: x\n\n## Verification commands\n\n- `cargo test`\n",
        None,
    );
    assert!(e.message.contains("Done criteria"), "{e}");
    assert!(e.message.contains("완료 기준"), "{e}");
    assert!(e.message.contains("Acceptance criteria"), "{e}");
}

#[test]
fn empty_done_section_is_refused() {
    let e = refusal(
        "# SPRINT-001: x\n\n## 완료 기준\n\nTBD\n\n## Notes\n\n- `cargo test` passes\n",
        None,
    );
    assert!(e.message.contains("no list items"), "{e}");
}

#[test]
fn heading_variants_and_section_ends() {
    let doc = "# SPRINT-003\n\n\
                   ### ACCEPTANCE CRITERIA (DoD) ###\n\
                   1. `cargo test` passes\n\
                   2) `make lint` succeeds\n\
                   * [x] `README.md` exists\n\
                   + the release notes are\n  written by hand\n\
                   ## Out of scope\n\
                   - Windows support\n\
                   ## Definition of done, continued\n\
                   - `a.txt` exists\n\
                   ## Notes\n\
                   - `b.txt` exists\n";
    let g = gen(doc);
    let ids: Vec<&str> = g
        .contract
        .dod
        .checks
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(
        ids,
        vec![
            "cargo-test-passes",
            "make-lint-succeeds",
            "readme-md-exists",
            "the-release-notes-are-written-by-hand",
            "a-txt-exists"
        ]
    );
    assert_eq!(
        g.manual_items[0].text,
        "the release notes are written by hand"
    );
    assert_eq!(
        g.contract.non_goals,
        vec![NonGoal::Text("Windows support".into())]
    );
}

#[test]
fn title_and_comments_are_not_sections() {
    let doc = "# SPRINT-004: Prerequisites cleanup\n\n## Context\n\n- `make` installed\n\n\
                   ## Done criteria\n\n- `make check` passes <!-- was: make test -->\n\
                   <!--\n- `old.txt` exists\n-->\n- `new.txt` exists\n";
    let g = gen(doc);
    assert!(g.contract.environment_prerequisites.is_empty());
    let ids: Vec<&str> = g
        .contract
        .dod
        .checks
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(ids, vec!["make-check-passes", "new-txt-exists"]);
}

#[test]
fn duplicate_items_get_unique_ids() {
    let g = gen("# SPRINT-001\n## Done criteria\n- `cargo test` passes\n- `cargo test` passes\n- `cargo test` passes\n");
    let ids: Vec<&str> = g
        .contract
        .dod
        .checks
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(
        ids,
        vec![
            "cargo-test-passes",
            "cargo-test-passes-2",
            "cargo-test-passes-3"
        ]
    );
    parses(&g);
}

#[test]
fn checks_that_cannot_fail_become_manual() {
    let g = gen("# SPRINT-001\n## Done criteria\n- `true` passes\n- `a.txt` contains /x*/\n- `b.txt` contains /(/\n- `cargo test` passes\n");
    parses(&g);
    let kinds: Vec<&str> = g
        .contract
        .dod
        .checks
        .iter()
        .map(|c| c.kind.as_str())
        .collect();
    assert_eq!(
        kinds,
        vec![
            "manual_checklist",
            "manual_checklist",
            "manual_checklist",
            "command_success"
        ]
    );
    let texts: Vec<&str> = g.manual_items.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(
        texts,
        vec!["true passes", "a.txt contains /x*/", "b.txt contains /(/"]
    );
    assert_eq!(g.warnings.len(), 3, "{:?}", g.warnings);
    assert!(g.warnings[0].contains("cannot fail"), "{:?}", g.warnings);
}

#[test]
fn item_heuristics() {
    let cases: &[(&str, Option<(CheckKind, Value)>)] = &[
        (
            "`README.md`, `/## Getting Started/`",
            Some((
                CheckKind::RegexInFile,
                json!({"path": "README.md", "pattern": "## Getting Started"}),
            )),
        ),
        (
            "`src/lib.rs` matches /^use std/m",
            Some((
                CheckKind::RegexInFile,
                json!({"path": "src/lib.rs", "pattern": "(?m)^use std"}),
            )),
        ),
        (
            "`web/.env` contains /https?:\\/\\/api/",
            Some((
                CheckKind::RegexInFile,
                json!({"path": "web/.env", "pattern": "https?://api"}),
            )),
        ),
        (
            "`https://example.com/status` returns OK",
            Some((
                CheckKind::HttpStatus,
                json!({"url": "https://example.com/status", "expectStatus": 200}),
            )),
        ),
        (
            "[health](http://localhost:8080/health) answers 204",
            Some((
                CheckKind::HttpStatus,
                json!({"url": "http://localhost:8080/health", "expectStatus": 204}),
            )),
        ),
        ("`debug.log` does not exist", None),
        ("`git rails freeze` fails on a dirty draft", None),
        (
            "`git rails freeze` exits 65 on a dirty draft",
            Some((
                CheckKind::CommandSuccess,
                json!({"command": "git rails freeze", "expectExitCode": 65}),
            )),
        ),
        ("`README.md` updated", None),
        ("http://localhost:3000 loads quickly", None),
        (
            "3000번 포트가 열려 있다",
            Some((CheckKind::ProcessListening, json!({"port": 3000}))),
        ),
        (
            "`pnpm dev` listens on :5173",
            Some((CheckKind::ProcessListening, json!({"port": 5173}))),
        ),
        (
            "`dist/` 디렉터리 생성",
            Some((
                CheckKind::FileExists,
                json!({"path": "dist", "type": "dir"}),
            )),
        ),
        ("`docs/` 에서 확인할 수 있다", None),
        (
            "`dist/` 디렉터리가 있다",
            Some((
                CheckKind::FileExists,
                json!({"path": "dist", "type": "dir"}),
            )),
        ),
        (
            "`cargo build` output contains /warning/",
            Some((CheckKind::CommandSuccess, json!({"command": "cargo build"}))),
        ),
    ];
    for (item, want) in cases {
        assert_eq!(&map_done(item), want, "{item}");
    }
}

#[test]
fn prerequisite_heuristics() {
    type Want = Option<(&'static str, PrereqKind, Value)>;
    let cases: &[(&str, Want)] = &[
        (
            "`${HOME}` set",
            Some(("HOME", PrereqKind::EnvVar, json!({"name": "HOME"}))),
        ),
        (
            "env `API_TOKEN`",
            Some((
                "API_TOKEN",
                PrereqKind::EnvVar,
                json!({"name": "API_TOKEN"}),
            )),
        ),
        (
            "`docker compose` v2",
            Some((
                "docker",
                PrereqKind::CommandExists,
                json!({"command": "docker"}),
            )),
        ),
        (
            "`.env` file",
            Some((".env", PrereqKind::FileExists, json!({"path": ".env"}))),
        ),
        (
            "Redis on port 6379",
            Some(("port-6379", PrereqKind::PortOpen, json!({"port": 6379}))),
        ),
        ("Node 22", None),
    ];
    for (item, want) in cases {
        let got = map_prerequisite(item).map(|m| (m.name, m.kind, m.spec));
        let want = want
            .as_ref()
            .map(|(n, k, s)| (n.to_string(), *k, s.clone()));
        assert_eq!(got, want, "{item}");
    }
    assert!(map_prerequisite("`docker compose` v2")
        .and_then(|m| m.note)
        .is_some());
}

#[test]
fn verification_blocks() {
    let doc = "# SPRINT-001\n## Done criteria\n- `cargo test` passes\n\
                   ## Verification commands\n\
                   - Run the linter\n\
                   - `./smoke.sh` exits 3 (timeout 2 min)\n\
                   ```json\n{\"a\": 1}\n```\n\
                   ```\n$ make \\\n    all\n# comment\n\nmake all\n```\n";
    let g = gen(doc);
    let commands: Vec<(&str, &str, u64, i32)> = g
        .contract
        .runtime_validation
        .commands
        .iter()
        .map(|r| {
            (
                r.name.as_str(),
                r.command.as_str(),
                r.timeout_ms,
                r.expect_exit_code,
            )
        })
        .collect();
    assert_eq!(
        commands,
        vec![
            ("smoke-sh", "./smoke.sh", 120_000, 3),
            ("make-all", "make all", 60_000, 0),
            ("make-all-2", "make all", 60_000, 0),
        ]
    );
    assert_eq!(g.warnings.len(), 2, "{:?}", g.warnings);
    parses(&g);
}

#[test]
fn sprint_type_line() {
    let base = "# SPRINT-001\n## Done criteria\n- `cargo test` passes\n";
    assert_eq!(
        gen(&format!("**Type:** bugfix\n{base}"))
            .contract
            .sprint_type,
        SprintType::Bugfix
    );
    let g = gen(&format!("- 유형: `infra`\n{base}"));
    assert_eq!(g.contract.sprint_type, SprintType::Infra);
    let g = gen(&format!("Type: epic\n{base}"));
    assert_eq!(g.contract.sprint_type, SprintType::Feature);
    assert!(g.warnings[0].contains("epic"));
}

#[test]
fn slugs() {
    assert_eq!(
        slug("`pnpm tsc --noEmit` 통과").as_deref(),
        Some("pnpm-tsc-noemit")
    );
    assert_eq!(slug("포트 3000 리스닝"), None);
    assert_eq!(slug("다크 모드"), None);
    let long = slug("a very long criterion that keeps going well past the forty character limit")
        .unwrap_or_default();
    assert!(long.len() <= MAX_SLUG, "{long}");
    assert_eq!(long, "a-very-long-criterion-that-keeps-going");
}
