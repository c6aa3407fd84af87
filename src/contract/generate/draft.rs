//! Putting the contract together: the mapped items become checks, prerequisites and commands
//! with unique names; the draft is checked against the schema and what it refuses becomes a
//! manual check with a warning, so what is returned always parses.

use super::*;

#[derive(Default)]
pub(super) struct Drafted {
    pub(super) checks: Vec<Check>,
    /// The heading of the section each check came from.
    pub(super) check_sections: Vec<String>,
    pub(super) check_ids: BTreeSet<String>,
    pub(super) manual: Vec<ManualItem>,
    pub(super) commands: Vec<RuntimeCommand>,
    pub(super) command_names: BTreeSet<String>,
    pub(super) prerequisites: Vec<Prerequisite>,
    pub(super) prereq_names: BTreeSet<String>,
    pub(super) non_goals: Vec<NonGoal>,
}

pub(super) fn ignored_fence(section: &Section, warnings: &mut Vec<String>) {
    warnings.push(format!(
        "{:?}: a code block was left out; only list items are read in this section",
        section.heading
    ));
}

impl Drafted {
    pub(super) fn done(&mut self, section: &Section, checklist: &str, warnings: &mut Vec<String>) {
        for block in &section.blocks {
            let raw = match block {
                Block::Item(raw) => raw,
                Block::Fence { .. } => {
                    ignored_fence(section, warnings);
                    continue;
                }
            };
            let description = clean(raw);
            let base = slug(&description).unwrap_or_else(|| format!("c{}", self.checks.len() + 1));
            let id = unique(base, &mut self.check_ids);
            let (kind, spec) = match map_done(raw) {
                Some(mapped) => mapped,
                None => {
                    self.manual.push(ManualItem {
                        section: section.heading.clone(),
                        text: description.clone(),
                        check_id: id.clone(),
                    });
                    manual_spec(checklist, &description)
                }
            };
            let (spec, proof) = runner_settings(kind, spec, raw);
            self.checks.push(Check {
                id,
                description,
                kind,
                spec,
                blocking: true,
                scope: None,
                proof,
            });
            self.check_sections.push(section.heading.clone());
        }
    }

    pub(super) fn verify(&mut self, section: &Section, warnings: &mut Vec<String>) {
        for block in &section.blocks {
            match block {
                Block::Item(raw) => {
                    let p = Parts::new(raw);
                    let Some(code) = p.first_code() else {
                        warnings.push(format!(
                            "{:?}: {:?} has no `command` in backticks; it was left out",
                            section.heading,
                            clean(raw)
                        ));
                        continue;
                    };
                    let prose = p.prose(None);
                    let command = code.code.clone();
                    self.command(command, timeout_ms(&prose), exit_code(&prose).unwrap_or(0));
                }
                Block::Fence { info, lines } => {
                    if !SHELL_FENCES.contains(&info.as_str()) {
                        warnings.push(format!(
                            "{:?}: a `{info}` code block was left out; only shell blocks hold commands",
                            section.heading
                        ));
                        continue;
                    }
                    for command in fence_commands(lines) {
                        self.command(command, None, 0);
                    }
                }
            }
        }
    }

    pub(super) fn command(&mut self, command: String, timeout: Option<u64>, expect: i32) {
        let base = slug(&command).unwrap_or_else(|| format!("command-{}", self.commands.len() + 1));
        let name = unique(base, &mut self.command_names);
        self.commands.push(RuntimeCommand {
            name,
            command,
            cwd: None,
            env: None,
            timeout_ms: timeout.unwrap_or(RUNTIME_TIMEOUT_MS),
            expect_exit_code: expect,
        });
    }

    pub(super) fn prerequisites(&mut self, section: &Section, warnings: &mut Vec<String>) {
        for block in &section.blocks {
            let raw = match block {
                Block::Item(raw) => raw,
                Block::Fence { .. } => {
                    ignored_fence(section, warnings);
                    continue;
                }
            };
            let reason = clean(raw);
            let Some(mapped) = map_prerequisite(raw) else {
                warnings.push(format!(
                    "{:?}: {reason:?} is not a command, port, environment variable, file or URL \
                     that can be checked, and a prerequisite cannot be manual; it was left out",
                    section.heading
                ));
                continue;
            };
            if let Some(note) = mapped.note {
                warnings.push(format!("{:?}: {reason:?} {note}", section.heading));
            }
            let name = unique(mapped.name, &mut self.prereq_names);
            self.prerequisites.push(Prerequisite {
                name,
                check: mapped.kind,
                spec: mapped.spec,
                reason,
            });
        }
    }

    pub(super) fn non_goals(&mut self, section: &Section, warnings: &mut Vec<String>) {
        for block in &section.blocks {
            match block {
                Block::Item(raw) => {
                    let text = clean(raw);
                    if !text.is_empty() {
                        self.non_goals.push(NonGoal::Text(text));
                    }
                }
                Block::Fence { .. } => ignored_fence(section, warnings),
            }
        }
    }
}

/// The settings a `command_success` gets for the runners `generate` knows: which exits count
/// as a RED, and a guard for an item that says the suite stays green.
fn runner_settings(kind: CheckKind, mut spec: Value, raw: &str) -> (Value, Option<CheckProof>) {
    if kind != CheckKind::CommandSuccess {
        return (spec, None);
    }
    let command = spec
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let words: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
        .filter(|w| !w.is_empty())
        .collect();
    let named = |n: &str| words.iter().any(|w| w.rsplit('/').next() == Some(n));
    let codes = if named("pytest") || named("py.test") {
        Some(json!([1, 2]))
    } else if words.windows(2).any(|w| w[0] == "cargo" && w[1] == "test") {
        Some(json!([101]))
    } else {
        None
    };
    if let (Some(codes), Value::Object(m)) = (codes, &mut spec) {
        if !m.contains_key("expectExitCode") {
            m.insert("redExitCodes".into(), codes);
        }
    }
    let prose = Parts::new(raw).prose(None);
    let guard = is_match(stays_green_re(), &prose).then_some(CheckProof::Guard);
    (spec, guard)
}

pub(super) fn manual_spec(checklist: &str, text: &str) -> (CheckKind, Value) {
    (
        CheckKind::ManualChecklist,
        json!({"path": checklist, "items": [text]}),
    )
}

/// `n` when `path` starts with `prefix` + `n]`.
pub(super) fn index_at(path: &str, prefix: &str) -> Option<usize> {
    path.strip_prefix(prefix)?.split(']').next()?.parse().ok()
}

/// Makes the draft pass the schema: a check it refuses becomes manual, a prerequisite or
/// runtime command it refuses is left out, each with a warning.
pub(super) fn settle(
    contract: &mut Contract,
    check_sections: &[String],
    checklist: &str,
    manual: &mut Vec<ManualItem>,
    warnings: &mut Vec<String>,
) -> Result<(), Error> {
    for _ in 0..3 {
        let problems = contract.problems();
        if problems.is_empty() {
            break;
        }
        let mut drop_prereqs = BTreeSet::new();
        let mut drop_commands = BTreeSet::new();
        for p in &problems {
            if let Some(i) = index_at(&p.path, "dod.checks[") {
                let Some(check) = contract.dod.checks.get_mut(i) else {
                    continue;
                };
                if check.kind == CheckKind::ManualChecklist {
                    continue;
                }
                warnings.push(format!(
                    "{:?} became a manual check: as a {} check it would be refused ({p})",
                    check.description,
                    check.kind.as_str()
                ));
                (check.kind, check.spec) = manual_spec(checklist, &check.description);
                manual.push(ManualItem {
                    section: check_sections.get(i).cloned().unwrap_or_default(),
                    text: check.description.clone(),
                    check_id: check.id.clone(),
                });
            } else if let Some(i) = index_at(&p.path, "environmentPrerequisites[") {
                if drop_prereqs.insert(i) {
                    warnings.push(format!("a prerequisite was left out: {p}"));
                }
            } else if let Some(i) = index_at(&p.path, "runtimeValidation.commands[") {
                if drop_commands.insert(i) {
                    warnings.push(format!("a runtime command was left out: {p}"));
                }
            }
        }
        for i in drop_prereqs.into_iter().rev() {
            if i < contract.environment_prerequisites.len() {
                contract.environment_prerequisites.remove(i);
            }
        }
        for i in drop_commands.into_iter().rev() {
            if i < contract.runtime_validation.commands.len() {
                contract.runtime_validation.commands.remove(i);
            }
        }
    }
    let problems = contract.problems();
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(Error::internal(format!(
            "the drafted contract does not pass the schema: {}",
            list.join("; ")
        )));
    }
    let order: Vec<&str> = contract.dod.checks.iter().map(|c| c.id.as_str()).collect();
    manual.sort_by_key(|m| order.iter().position(|id| *id == m.check_id));
    Ok(())
}
