//! The sprint contract schema `v1`: exactly the seed's fields, stricter than its draft.
//!
//! Parsing is two-staged: serde (with `deny_unknown_fields` everywhere) reads the shape and
//! reports the JSON path of the first problem; then [`Contract::problems`] checks what serde
//! cannot: each kind's `spec`, ids, duplicates, regexes, globs, and checks that cannot fail.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One problem in a contract, with the JSON path where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl Problem {
    fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SchemaVersion {
    #[serde(rename = "v1")]
    V1,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SprintType {
    Scaffold,
    Feature,
    Refactor,
    Bugfix,
    Migration,
    Infra,
}

impl SprintType {
    pub fn as_str(self) -> &'static str {
        match self {
            SprintType::Scaffold => "scaffold",
            SprintType::Feature => "feature",
            SprintType::Refactor => "refactor",
            SprintType::Bugfix => "bugfix",
            SprintType::Migration => "migration",
            SprintType::Infra => "infra",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RiskFlag {
    SecuritySensitive,
    DataMigration,
    BreakingChange,
    UxRegression,
    PerformanceCritical,
    NeedsSpike,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReviewerProfile {
    Static,
    Runtime,
    Browser,
}

fn yes() -> bool {
    true
}

/// The contract document. Field names follow the seed's camelCase spelling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Contract {
    pub version: SchemaVersion,
    pub id: String,
    pub sprint_id: String,
    pub created_at: String,
    #[serde(rename = "type")]
    pub sprint_type: SprintType,
    pub dod: Dod,
    pub environment_prerequisites: Vec<Prerequisite>,
    pub non_goals: Vec<NonGoal>,
    pub runtime_validation: RuntimeValidation,
    pub risk_flags: Vec<RiskFlag>,
    pub reviewer_profile: ReviewerProfile,
    pub approval_gates: Gates,
    /// Globs of the test files the checks run. Their content is frozen with each version; a
    /// later change to one makes the criteria that run it ask for `reopen`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_paths: Option<Vec<String>>,
}

/// `approvalGates` {impl, review, deploy}, each default true.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gates {
    #[serde(default = "yes", rename = "impl")]
    pub implementation: bool,
    #[serde(default = "yes")]
    pub review: bool,
    #[serde(default = "yes")]
    pub deploy: bool,
}

impl Default for Gates {
    fn default() -> Self {
        Gates {
            implementation: true,
            review: true,
            deploy: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dod {
    pub checks: Vec<Check>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    FileExists,
    CommandSuccess,
    RegexInFile,
    HttpStatus,
    DbQuery,
    ProcessListening,
    ArtifactSchema,
    ManualChecklist,
}

impl CheckKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckKind::FileExists => "file_exists",
            CheckKind::CommandSuccess => "command_success",
            CheckKind::RegexInFile => "regex_in_file",
            CheckKind::HttpStatus => "http_status",
            CheckKind::DbQuery => "db_query",
            CheckKind::ProcessListening => "process_listening",
            CheckKind::ArtifactSchema => "artifact_schema",
            CheckKind::ManualChecklist => "manual_checklist",
        }
    }
}

/// A DoD check: one criterion of the sprint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub id: String,
    pub description: String,
    pub kind: CheckKind,
    pub spec: Value,
    #[serde(default = "yes")]
    pub blocking: bool,
    /// Globs of the paths the check is about (evidence staleness looks only there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Vec<String>>,
    /// How the criterion is proven: failing first (the default) or, `"guard"`, a regression
    /// guard that passes already and must keep passing (GREEN with no RED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<CheckProof>,
}

/// The `proof` of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CheckProof {
    /// The default: RED, then GREEN after a change.
    #[serde(rename = "failing-first")]
    FailingFirst,
    /// A regression guard: it already passes, and GREEN records that it still does.
    #[serde(rename = "guard")]
    Guard,
}

impl Check {
    /// Whether the criterion is a regression guard (`"proof": "guard"`).
    pub fn is_guard(&self) -> bool {
        self.proof == Some(CheckProof::Guard)
    }

    /// The kind-specific spec, typed. The contract was checked when parsed, so this fails only
    /// on a contract built by hand in code.
    pub fn typed_spec(&self) -> Result<CheckSpec, Problem> {
        CheckSpec::parse(self.kind, &self.spec, "spec")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileType {
    File,
    Dir,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileExistsSpec {
    pub path: String,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub file_type: Option<FileType>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CommandSpec {
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_exit_code: Option<i32>,
    /// The exit codes that count as the check failing for a RED (`[1]` for pytest's failed
    /// tests); others are refused as RED (`evidence::red`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red_exit_codes: Option<Vec<i32>>,
    /// A pattern that must appear in the output for a failure to count as a RED.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red_output_pattern: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegexSpec {
    pub path: String,
    pub pattern: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negate: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HttpSpec {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_for_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DbDriver {
    Sqlite,
    Postgres,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CompareOp {
    #[serde(rename = "==")]
    Eq,
    #[serde(rename = "!=")]
    Ne,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "<=")]
    Le,
}

impl CompareOp {
    pub fn as_str(self) -> &'static str {
        match self {
            CompareOp::Eq => "==",
            CompareOp::Ne => "!=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub op: CompareOp,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DbQuerySpec {
    pub driver: DbDriver,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub query: String,
    pub expect: Expect,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortSpec {
    pub port: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactSchemaSpec {
    pub path: String,
    pub schema: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecklistSpec {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<String>>,
}

/// A DoD check's spec, typed by its kind.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckSpec {
    FileExists(FileExistsSpec),
    CommandSuccess(CommandSpec),
    RegexInFile(RegexSpec),
    HttpStatus(HttpSpec),
    DbQuery(DbQuerySpec),
    ProcessListening(PortSpec),
    ArtifactSchema(ArtifactSchemaSpec),
    ManualChecklist(ChecklistSpec),
}

impl CheckSpec {
    /// Parses `spec` for `kind`; `at` is the JSON path of the spec, used in the problem.
    pub fn parse(kind: CheckKind, spec: &Value, at: &str) -> Result<CheckSpec, Problem> {
        Ok(match kind {
            CheckKind::FileExists => CheckSpec::FileExists(typed(spec, at)?),
            CheckKind::CommandSuccess => CheckSpec::CommandSuccess(typed(spec, at)?),
            CheckKind::RegexInFile => CheckSpec::RegexInFile(typed(spec, at)?),
            CheckKind::HttpStatus => CheckSpec::HttpStatus(typed(spec, at)?),
            CheckKind::DbQuery => CheckSpec::DbQuery(typed(spec, at)?),
            CheckKind::ProcessListening => CheckSpec::ProcessListening(typed(spec, at)?),
            CheckKind::ArtifactSchema => CheckSpec::ArtifactSchema(typed(spec, at)?),
            CheckKind::ManualChecklist => CheckSpec::ManualChecklist(typed(spec, at)?),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrereqKind {
    CommandExists,
    PortOpen,
    EnvVar,
    FileExists,
    HttpReachable,
}

impl PrereqKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PrereqKind::CommandExists => "command_exists",
            PrereqKind::PortOpen => "port_open",
            PrereqKind::EnvVar => "env_var",
            PrereqKind::FileExists => "file_exists",
            PrereqKind::HttpReachable => "http_reachable",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prerequisite {
    pub name: String,
    pub check: PrereqKind,
    pub spec: Value,
    pub reason: String,
}

impl Prerequisite {
    pub fn typed_spec(&self) -> Result<PrereqSpec, Problem> {
        PrereqSpec::parse(self.check, &self.spec, "spec")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandExistsSpec {
    pub command: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvVarSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathSpec {
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HttpReachableSpec {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// An environment prerequisite's spec, typed by its check.
#[derive(Debug, Clone, PartialEq)]
pub enum PrereqSpec {
    CommandExists(CommandExistsSpec),
    PortOpen(PortSpec),
    EnvVar(EnvVarSpec),
    FileExists(PathSpec),
    HttpReachable(HttpReachableSpec),
}

impl PrereqSpec {
    pub fn parse(kind: PrereqKind, spec: &Value, at: &str) -> Result<PrereqSpec, Problem> {
        Ok(match kind {
            PrereqKind::CommandExists => PrereqSpec::CommandExists(typed(spec, at)?),
            PrereqKind::PortOpen => PrereqSpec::PortOpen(typed(spec, at)?),
            PrereqKind::EnvVar => PrereqSpec::EnvVar(typed(spec, at)?),
            PrereqKind::FileExists => PrereqSpec::FileExists(typed(spec, at)?),
            PrereqKind::HttpReachable => PrereqSpec::HttpReachable(typed(spec, at)?),
        })
    }
}

/// A non-goal: a sentence shown to reviewers, or a sentence with globs that FAIL validation
/// when the change since the contract's base commit touches them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum NonGoal {
    Text(String),
    Paths(NonGoalPaths),
}

impl NonGoal {
    pub fn text(&self) -> &str {
        match self {
            NonGoal::Text(t) => t,
            NonGoal::Paths(p) => &p.text,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NonGoalPaths {
    pub text: String,
    pub paths: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeValidation {
    pub commands: Vec<RuntimeCommand>,
}

fn default_timeout() -> u64 {
    60_000
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuntimeCommand {
    pub name: String,
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
    #[serde(default)]
    pub expect_exit_code: i32,
}

/// Reads `value` as `T`, reporting the JSON path of the first problem below `at`.
fn typed<T: serde::de::DeserializeOwned>(value: &Value, at: &str) -> Result<T, Problem> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.path().to_string();
        let path = if inner == "." || inner.is_empty() {
            at.to_string()
        } else {
            join_path(at, &inner)
        };
        serde_problem(path, &e.inner().to_string())
    })
}

fn join_path(at: &str, inner: &str) -> String {
    if at.is_empty() {
        inner.to_string()
    } else if inner.starts_with('[') {
        format!("{at}{inner}")
    } else {
        format!("{at}.{inner}")
    }
}

/// Turns serde's message into the spec's form: `a.b.field: missing`, `a.b.extra: unknown key`.
fn serde_problem(path: String, message: &str) -> Problem {
    let message = message
        .split(" at line ")
        .next()
        .unwrap_or(message)
        .to_string();
    if let Some(rest) = message.strip_prefix("missing field `") {
        let field = rest.split('`').next().unwrap_or(rest);
        return Problem::new(join_path(&path, field), "missing");
    }
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let mut parts = rest.splitn(2, '`');
        let field = parts.next().unwrap_or(rest);
        let expected = parts
            .next()
            .map(|s| s.trim_start_matches(", "))
            .unwrap_or("");
        // serde_path_to_error already ends the path with the unknown key.
        let at = if path == field || path.ends_with(&format!(".{field}")) {
            path
        } else {
            join_path(&path, field)
        };
        return Problem::new(at, format!("unknown key ({expected})").replace(" ()", ""));
    }
    Problem::new(path, message)
}

/// Parses a contract document, reporting every problem with its JSON path.
pub fn parse(bytes: &[u8]) -> Result<Contract, Vec<Problem>> {
    parse_at(bytes, None)
}

/// Like [`parse`]; with the repository's top level, files the contract names (an
/// `artifact_schema`'s schema) are read too, to refuse a schema that accepts everything.
pub fn parse_at(bytes: &[u8], root: Option<&Path>) -> Result<Contract, Vec<Problem>> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        vec![Problem::new(
            "",
            format!(
                "not valid JSON: {e} (line {}, column {})",
                e.line(),
                e.column()
            ),
        )]
    })?;
    if !value.is_object() {
        return Err(vec![Problem::new("", "a contract is a JSON object")]);
    }
    let contract: Contract = typed(&value, "").map_err(|p| vec![p])?;
    let problems = contract.problems_at(root);
    if problems.is_empty() {
        Ok(contract)
    } else {
        Err(problems)
    }
}

fn simple_id(s: &str) -> bool {
    id_rule_broken(s).is_none()
}

/// The first rule `s` breaks as one git ref component and file name, or None when it keeps them
/// all. The rules are git's (`git check-ref-format`) narrowed to a portable alphabet.
pub fn id_rule_broken(s: &str) -> Option<&'static str> {
    let mut chars = s.chars();
    if !matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric()) {
        return Some("it must start with a letter or digit");
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) {
        return Some("it may contain only letters, digits, '.', '_' and '-'");
    }
    if s.ends_with('.') {
        return Some("it must not end with '.' (git refuses such a ref name)");
    }
    if s.ends_with(".lock") {
        return Some("it must not end with \".lock\" (git keeps its lock files under that name)");
    }
    if s.contains("..") {
        return Some("it must not contain \"..\" (git refuses such a ref name)");
    }
    None
}

/// A sprint id must be usable as one git ref component and a file name.
pub fn check_sprint_id(id: &str) -> Result<(), String> {
    if id.len() > 100 {
        return Err(format!(
            "sprint id {id:?} is too long: at most 100 characters"
        ));
    }
    match id_rule_broken(id) {
        None => Ok(()),
        Some(rule) => Err(format!("sprint id {id:?} is not valid: {rule}")),
    }
}

fn glob_problem(path: String, glob: &str) -> Option<Problem> {
    globset::Glob::new(glob)
        .err()
        .map(|e| Problem::new(path, format!("invalid glob {glob:?}: {e}")))
}

impl Contract {
    /// Everything serde cannot see: per-kind specs, ids, duplicates, regexes, globs, and
    /// checks that cannot fail.
    pub fn problems(&self) -> Vec<Problem> {
        self.problems_at(None)
    }

    /// [`Contract::problems`], reading the files the contract names below `root` when given.
    pub fn problems_at(&self, root: Option<&Path>) -> Vec<Problem> {
        let mut out = Vec::new();
        if ulid::Ulid::from_string(&self.id).is_err() {
            out.push(Problem::new("id", format!("{:?} is not a ULID", self.id)));
        }
        if let Err(e) = check_sprint_id(&self.sprint_id) {
            out.push(Problem::new("sprintId", e));
        }
        if self.created_at.parse::<jiff::Timestamp>().is_err() {
            out.push(Problem::new(
                "createdAt",
                format!("{:?} is not an RFC 3339 date-time", self.created_at),
            ));
        }
        if self.dod.checks.is_empty() {
            out.push(Problem::new(
                "dod.checks",
                "empty; a contract needs at least one check",
            ));
        }
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, check) in self.dod.checks.iter().enumerate() {
            let at = format!("dod.checks[{i}]");
            if !simple_id(&check.id) {
                out.push(Problem::new(
                    format!("{at}.id"),
                    format!(
                        "{:?} must start with a letter or digit and contain only letters, digits, '.', '_' and '-'",
                        check.id
                    ),
                ));
            }
            if let Some(first) = seen.insert(&check.id, i) {
                out.push(Problem::new(
                    format!("{at}.id"),
                    format!(
                        "duplicate check id {:?} (first used at dod.checks[{first}])",
                        check.id
                    ),
                ));
                seen.insert(&check.id, first);
            }
            for (j, g) in check.scope.iter().flatten().enumerate() {
                out.extend(glob_problem(format!("{at}.scope[{j}]"), g));
            }
            if check.is_guard() && check.kind == CheckKind::ManualChecklist {
                out.push(Problem::new(
                    format!("{at}.proof"),
                    "a manual_checklist is a person's judgement, surfaced when ticked; it cannot be a regression guard",
                ));
            }
            match CheckSpec::parse(check.kind, &check.spec, &format!("{at}.spec")) {
                Err(p) => out.push(p),
                Ok(spec) => {
                    out.extend(confined(&spec, &format!("{at}.spec"), root));
                    out.extend(spec_problems(&spec, &format!("{at}.spec"), root));
                }
            }
        }
        for (i, p) in self.environment_prerequisites.iter().enumerate() {
            let at = format!("environmentPrerequisites[{i}].spec");
            match PrereqSpec::parse(p.check, &p.spec, &at) {
                Err(p) => out.push(p),
                Ok(PrereqSpec::EnvVar(EnvVarSpec {
                    pattern: Some(re), ..
                })) => {
                    if let Err(e) = regex::Regex::new(&re) {
                        out.push(Problem::new(
                            format!("{at}.pattern"),
                            format!("invalid regex: {e}"),
                        ));
                    }
                }
                Ok(PrereqSpec::HttpReachable(h)) => {
                    out.extend(url_problem(&format!("{at}.url"), &h.url));
                }
                Ok(_) => {}
            }
        }
        for (i, g) in self.non_goals.iter().enumerate() {
            if let NonGoal::Paths(p) = g {
                if p.paths.is_empty() {
                    out.push(Problem::new(
                        format!("nonGoals[{i}].paths"),
                        "empty; use a plain string for a non-goal without paths",
                    ));
                }
                for (j, glob) in p.paths.iter().enumerate() {
                    out.extend(glob_problem(format!("nonGoals[{i}].paths[{j}]"), glob));
                }
            }
        }
        if let Some(globs) = &self.check_paths {
            if globs.is_empty() {
                out.push(Problem::new(
                    "checkPaths",
                    "empty; leave the key out for a contract without test files to freeze",
                ));
            }
            for (i, g) in globs.iter().enumerate() {
                out.extend(glob_problem(format!("checkPaths[{i}]"), g));
            }
        }
        for (i, c) in self.runtime_validation.commands.iter().enumerate() {
            if let Some(cwd) = &c.cwd {
                let why = match root {
                    Some(r) => super::confine::problem(r, cwd),
                    None => super::confine::lexical_problem(cwd),
                };
                if let Some(why) = why {
                    out.push(Problem::new(
                        format!("runtimeValidation.commands[{i}].cwd"),
                        why,
                    ));
                }
            }
            if c.command.trim().is_empty() {
                out.push(Problem::new(
                    format!("runtimeValidation.commands[{i}].command"),
                    "empty",
                ));
            }
        }
        out
    }

    /// Canonical bytes: pretty JSON with the contract-level defaults (`blocking`, `approvalGates`,
    /// runtime `timeoutMs` and `expectExitCode`) written out, ending in a newline.
    pub fn to_canonical_json(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).unwrap_or_default();
        v.push(b'\n');
        v
    }

    pub fn check(&self, id: &str) -> Option<&Check> {
        self.dod.checks.iter().find(|c| c.id == id)
    }
}

fn url_problem(at: &str, url: &str) -> Option<Problem> {
    if url.starts_with("http://") || url.starts_with("https://") {
        None
    } else {
        Some(Problem::new(
            at,
            format!("{url:?} is not an http:// or https:// URL"),
        ))
    }
}

/// The spec's paths that leave the repository (`confine`): judged from their text, and with
/// `root` also by the symbolic links on the way.
fn confined(spec: &CheckSpec, at: &str, root: Option<&Path>) -> Vec<Problem> {
    super::confine::spec_paths(spec)
        .into_iter()
        .filter_map(|(field, p)| {
            let why = match root {
                Some(r) => super::confine::problem(r, p),
                None => super::confine::lexical_problem(p),
            };
            why.map(|w| Problem::new(format!("{at}.{field}"), w))
        })
        .collect()
}

/// Per-kind checks beyond the shape, including checks that cannot fail.
fn spec_problems(spec: &CheckSpec, at: &str, root: Option<&Path>) -> Vec<Problem> {
    let mut out = Vec::new();
    match spec {
        CheckSpec::CommandSuccess(c) => {
            let trimmed = c.command.trim();
            let expect = c.expect_exit_code.unwrap_or(0);
            if expect == 0 && matches!(trimmed, "" | "true" | ":" | "exit 0") {
                out.push(Problem::new(
                    format!("{at}.command"),
                    format!("{trimmed:?} cannot fail, so this check proves nothing; run the thing the criterion is about"),
                ));
            }
            if c.timeout_ms == Some(0) {
                out.push(Problem::new(format!("{at}.timeoutMs"), "must be above 0"));
            }
            if let Some(codes) = &c.red_exit_codes {
                if codes.is_empty() {
                    out.push(Problem::new(
                        format!("{at}.redExitCodes"),
                        "is empty, so no failure could ever count as a RED; list the exit codes of the check failing (pytest: [1, 2])",
                    ));
                }
                if let Some(x) = codes.iter().find(|x| **x == expect) {
                    out.push(Problem::new(
                        format!("{at}.redExitCodes"),
                        format!("holds {x}, the exit code the check expects to pass with"),
                    ));
                }
            }
            if let Some(p) = &c.red_output_pattern {
                match regex::Regex::new(p) {
                    Err(e) => out.push(Problem::new(
                        format!("{at}.redOutputPattern"),
                        format!("invalid regex: {e}"),
                    )),
                    Ok(re) if re.is_match("") => out.push(Problem::new(
                        format!("{at}.redOutputPattern"),
                        format!("{p:?} matches the empty string, so any failure would count; anchor it to what the failing test prints"),
                    )),
                    Ok(_) => {}
                }
            }
        }
        CheckSpec::RegexInFile(r) => match regex::Regex::new(&r.pattern) {
            Err(e) => out.push(Problem::new(
                format!("{at}.pattern"),
                format!("invalid regex: {e}"),
            )),
            Ok(re) => {
                if re.is_match("") && !r.negate.unwrap_or(false) {
                    out.push(Problem::new(
                        format!("{at}.pattern"),
                        format!("{:?} matches the empty string, so this check cannot fail; anchor it to the text the criterion is about", r.pattern),
                    ));
                }
            }
        },
        CheckSpec::HttpStatus(h) => {
            out.extend(url_problem(&format!("{at}.url"), &h.url));
            if let Some(m) = &h.method {
                if !matches!(
                    m.as_str(),
                    "GET" | "HEAD" | "POST" | "PUT" | "DELETE" | "PATCH" | "OPTIONS"
                ) {
                    out.push(Problem::new(
                        format!("{at}.method"),
                        format!("{m:?} is not one of GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS"),
                    ));
                }
            }
            if let Some(s) = h.expect_status {
                if !(100..=599).contains(&s) {
                    out.push(Problem::new(
                        format!("{at}.expectStatus"),
                        format!("{s} is not an HTTP status"),
                    ));
                }
            }
        }
        CheckSpec::DbQuery(d) => match d.driver {
            DbDriver::Sqlite if d.path.is_none() => out.push(Problem::new(
                format!("{at}.path"),
                "missing (sqlite needs a path)",
            )),
            DbDriver::Postgres if d.url.is_none() => out.push(Problem::new(
                format!("{at}.url"),
                "missing (postgres needs a url)",
            )),
            _ => {
                if !(d.expect.value.is_number() || d.expect.value.is_string()) {
                    out.push(Problem::new(
                        format!("{at}.expect.value"),
                        "must be a number or a string",
                    ));
                }
            }
        },
        CheckSpec::ArtifactSchema(a) => {
            // The schema file is read when it is there: one that accepts everything is refused.
            let file = root.map(|r| r.join(&a.schema));
            if let Some(Ok(bytes)) = file.map(std::fs::read) {
                if let Ok(schema) = serde_json::from_slice::<Value>(&bytes) {
                    if accepts_everything(&schema) {
                        out.push(Problem::new(
                            format!("{at}.schema"),
                            format!(
                                "{} accepts every document, so this check cannot fail",
                                a.schema
                            ),
                        ));
                    }
                }
            }
        }
        CheckSpec::FileExists(_)
        | CheckSpec::ProcessListening(_)
        | CheckSpec::ManualChecklist(_) => {}
    }
    out
}

/// `true`, `{}`, or an object with only annotation keywords accepts every instance.
pub fn accepts_everything(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(m) => m.keys().all(|k| {
            matches!(
                k.as_str(),
                "$schema" | "$id" | "$comment" | "title" | "description" | "examples" | "default"
            )
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Value {
        serde_json::json!({
            "version": "v1",
            "id": "01HW0XYZ0000000000000000AB",
            "sprintId": "SPRINT-001",
            "createdAt": "2026-04-10T12:00:00Z",
            "type": "scaffold",
            "dod": {"checks": [
                {"id": "a", "description": "d", "kind": "regex_in_file",
                 "spec": {"path": "x", "pattern": "y+"}}
            ]},
            "environmentPrerequisites": [],
            "nonGoals": ["x", {"text": "no docs", "paths": ["docs/**"]}],
            "runtimeValidation": {"commands": []},
            "riskFlags": [],
            "reviewerProfile": "static",
            "approvalGates": {"impl": true, "review": true, "deploy": false}
        })
    }

    fn problems(v: Value) -> Vec<String> {
        match parse(&serde_json::to_vec(&v).unwrap()) {
            Ok(_) => vec![],
            Err(p) => p.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn good_contract_parses() {
        assert_eq!(problems(base()), Vec::<String>::new());
    }

    #[test]
    fn missing_spec_field_has_path() {
        let mut v = base();
        v["dod"]["checks"][0]["spec"] = serde_json::json!({"path": "x"});
        assert_eq!(problems(v), vec!["dod.checks[0].spec.pattern: missing"]);
    }

    #[test]
    fn unknown_key_has_path() {
        let mut v = base();
        v["dod"]["checks"][0]["bogus"] = serde_json::json!(1);
        let p = problems(v);
        assert!(
            p[0].starts_with("dod.checks[0].bogus: unknown key"),
            "{p:?}"
        );
    }

    #[test]
    fn wrong_type_has_path() {
        let mut v = base();
        v["dod"]["checks"][0]["blocking"] = serde_json::json!("yes");
        let p = problems(v);
        assert!(
            p[0].starts_with("dod.checks[0].blocking: invalid type"),
            "{p:?}"
        );
    }
}
