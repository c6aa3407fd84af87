//! Mapping one item to a check (done criteria), a prerequisite or verification commands, by
//! the heuristics the module doc of `contract::generate` lists in order.

use super::*;

/// The check kind and spec of a done criterion, or `None` for a manual one.
pub(super) fn map_done(raw: &str) -> Option<(CheckKind, Value)> {
    let p = Parts::new(raw);
    let prose = p.prose(None);
    if let Some(spec) = http_check(&p, &prose) {
        return Some((CheckKind::HttpStatus, spec));
    }
    let first = p.first_code();
    if let Some(path) = first.filter(|s| one_token(&s.code)) {
        if let Some(lit) = p.regex_after(path.range.end) {
            let mut spec = json!({"path": path.code, "pattern": lit.pattern});
            if is_match(negation_re(), &p.prose(Some(&lit.range))) {
                spec["negate"] = json!(true);
            }
            return Some((CheckKind::RegexInFile, spec));
        }
        if exists(&prose) {
            let dir = path.code.ends_with('/') || is_match(dir_word_re(), &prose);
            let trimmed = path.code.trim_end_matches('/');
            let mut spec =
                json!({"path": if trimmed.is_empty() { path.code.as_str() } else { trimmed }});
            if dir {
                spec["type"] = json!("dir");
            }
            return Some((CheckKind::FileExists, spec));
        }
    }
    if let Some(port) = find_port(&prose) {
        return Some((CheckKind::ProcessListening, json!({"port": port})));
    }
    let command = first?;
    let code = exit_code(&prose);
    if is_match(failure_re(), &prose) && code.is_none_or(|c| c == 0) {
        return None;
    }
    if !one_token(&command.code) || is_match(success_re(), &prose) || code.is_some() {
        let mut spec = json!({"command": command.code});
        if let Some(c) = code.filter(|c| *c != 0) {
            spec["expectExitCode"] = json!(c);
        }
        return Some((CheckKind::CommandSuccess, spec));
    }
    None
}

/// `http_status` when the item has a URL and a status.
pub(super) fn http_check(p: &Parts, prose: &str) -> Option<Value> {
    let mut method = captures(method_re(), prose)
        .and_then(|c| c.get(1))
        .map(|m| m.as_str().to_string());
    let url = match p.url() {
        Some(u) => u,
        None => {
            // `curl -s -X POST http://…` → 405
            let client = p.spans.iter().find(|s| {
                matches!(
                    s.code.split_whitespace().next(),
                    Some("curl" | "wget" | "http" | "https" | "xh")
                ) && !urls(&s.code).is_empty()
            })?;
            if method.is_none() {
                method = captures(curl_method_re(), &client.code)
                    .and_then(|c| c.get(1))
                    .map(|m| m.as_str().to_uppercase())
                    .filter(|m| is_match(method_re(), m));
            }
            urls(&client.code).into_iter().next()?.1
        }
    };
    let status = captures(status_re(), prose)
        .and_then(|c| c.get(1))
        .and_then(|m| m.as_str().parse::<u16>().ok())
        .or_else(|| {
            p.spans
                .iter()
                .find_map(|s| captures(status_re(), &s.code).filter(|_| s.code.len() == 3))
                .and_then(|c| c.get(1))
                .and_then(|m| m.as_str().parse::<u16>().ok())
        })
        .or_else(|| is_match(ok_re(), prose).then_some(200))?;
    let mut spec = json!({"url": url});
    if let Some(m) = method {
        spec["method"] = json!(m);
    }
    spec["expectStatus"] = json!(status);
    Some(spec)
}

// ---------------------------------------------------------------------------------------------
// Prerequisites

pub(super) struct MappedPrereq {
    pub(super) name: String,
    pub(super) kind: PrereqKind,
    pub(super) spec: Value,
    /// What the author should know about the guess.
    pub(super) note: Option<String>,
}

pub(super) fn prereq(
    name: impl Into<String>,
    kind: PrereqKind,
    spec: Value,
) -> Option<MappedPrereq> {
    Some(MappedPrereq {
        name: name.into(),
        kind,
        spec,
        note: None,
    })
}

pub(super) fn map_prerequisite(raw: &str) -> Option<MappedPrereq> {
    let p = Parts::new(raw);
    let prose = p.prose(None);

    // env_var: `$NAME`, or "env var NAME" / "환경 변수 NAME"
    let env_name = captures(dollar_var_re(), raw)
        .and_then(|c| c.get(1))
        .map(|m| m.as_str().to_string())
        .or_else(|| {
            if !is_match(env_word_re(), &prose) {
                return None;
            }
            p.spans
                .iter()
                .find(|s| is_match(env_name_re(), &s.code))
                .map(|s| s.code.clone())
                .or_else(|| {
                    caps_name_re().and_then(|re| {
                        re.find_iter(&prose)
                            .map(|m| m.as_str())
                            .find(|w| !matches!(*w, "ENV" | "VAR"))
                            .map(str::to_string)
                    })
                })
        });
    if let Some(name) = env_name {
        let mut spec = json!({"name": name});
        if let Some(lit) = p.regex_after(0) {
            spec["pattern"] = json!(lit.pattern);
        }
        return prereq(name, PrereqKind::EnvVar, spec);
    }

    if let Some(url) = p.url() {
        let host = url
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or(&url)
            .to_string();
        return prereq(host, PrereqKind::HttpReachable, json!({"url": url}));
    }

    if let Some(port) = find_port(&prose) {
        return prereq(
            format!("port-{port}"),
            PrereqKind::PortOpen,
            json!({"port": port}),
        );
    }

    let first = p.first_code()?;
    if one_token(&first.code)
        && (exists(&prose) || is_match(file_word_re(), &prose))
        && !is_match(command_word_re(), &prose)
        && !is_match(negation_re(), &prose)
    {
        return prereq(
            first.code.clone(),
            PrereqKind::FileExists,
            json!({"path": first.code}),
        );
    }

    let program = first.code.split_whitespace().next()?;
    if !is_match(program_re(), program) {
        return None;
    }
    let mut mapped = prereq(
        program,
        PrereqKind::CommandExists,
        json!({"command": program}),
    )?;
    if !one_token(&first.code) {
        mapped.note = Some(format!(
            "only checks that `{program}` exists, not `{}`",
            first.code
        ));
    }
    Some(mapped)
}

// ---------------------------------------------------------------------------------------------
// Verification commands

pub(super) fn timeout_ms(prose: &str) -> Option<u64> {
    let c = captures(timeout_re(), prose)?;
    let n: u64 = c.get(1)?.as_str().parse().ok()?;
    let unit = c.get(2)?.as_str().to_lowercase();
    let factor = match unit.as_str() {
        "ms" | "밀리초" => 1,
        "m" | "min" | "mins" | "minute" | "minutes" | "분" => 60_000,
        _ => 1_000,
    };
    n.checked_mul(factor).filter(|ms| *ms > 0)
}

pub(super) const SHELL_FENCES: &[&str] = &[
    "",
    "sh",
    "bash",
    "shell",
    "zsh",
    "console",
    "terminal",
    "shell-session",
    "shellsession",
];

/// The commands of a shell code block: one a line, `\` continuations joined, `$ ` prompts
/// and `#` comments dropped.
pub(super) fn fence_commands(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in lines {
        let mut t = line.trim();
        if pending.is_empty() {
            t = t.strip_prefix("$ ").unwrap_or(t).trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
        }
        match t.strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head.trim_end());
                pending.push(' ');
            }
            None => {
                pending.push_str(t);
                out.push(std::mem::take(&mut pending).trim().to_string());
            }
        }
    }
    let rest = pending.trim();
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
    out
}
