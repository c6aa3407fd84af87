//! The effective configuration as `git spar config` shows it: JSON with every value's origin,
//! the sources and the files read, and the same as text.

use super::*;

impl Config {
    /// The effective configuration for `git spar config --json`: every value with where it came
    /// from (`"<file>:<line>"`, `"default"` or the option), the sources, the files read with
    /// their sha256, and the digest of the applied values.
    pub fn effective_json(&self) -> Value {
        let user = match &self.user_source {
            Some((source, path)) => json!({
                "source": source.label(),
                "path": path.display().to_string(),
            }),
            None => Value::Null,
        };
        let skipped: Vec<Value> = self
            .skipped
            .iter()
            .map(|s| {
                json!({
                    "source": s.source.label(),
                    "path": s.path.as_ref().map(|p| p.display().to_string()),
                    "reason": s.reason,
                })
            })
            .collect();
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|f| {
                json!({
                    "source": f.source.label(),
                    "path": f.path.display().to_string(),
                    "sha256": f.sha256,
                })
            })
            .collect();
        json!({
            "schema": SCHEMA,
            "digest": self.digest(),
            "sources": {
                "user": user,
                "project": {
                    "path": self.project_file.display().to_string(),
                    "present": self.project_present,
                },
                "skipped": skipped,
            },
            "files": files,
            "timeout_seconds": sourced_json(&self.timeout_seconds, json!(self.timeout_seconds.value)),
            "reviewers": {
                "from": self.reviewers.origin.to_string(),
                "list": self.reviewers.value.iter().map(Reviewer::effective).collect::<Vec<_>>(),
            },
            "check_paths": self.check_paths.iter()
                .map(|c| sourced_json(c, json!(c.value)))
                .collect::<Vec<_>>(),
            "rules": self.rules.iter()
                .map(|r| json!({
                    "value": r.value.name,
                    "path": r.value.path.display().to_string(),
                    "from": r.origin.to_string(),
                }))
                .collect::<Vec<_>>(),
            "angles": sourced_json(
                &self.angles,
                json!(self.angles.value.iter().map(|a| a.as_str()).collect::<Vec<_>>()),
            ),
            "caps": {
                "plan": sourced_json(&self.caps.plan, json!(self.caps.plan.value)),
                "plan_delta": sourced_json(&self.caps.plan_delta, json!(self.caps.plan_delta.value)),
                "code": sourced_json(&self.caps.code, json!(self.caps.code.value)),
            },
        })
    }

    /// The effective configuration as text for `git spar config`: one value a line with its
    /// origin in parentheses.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let mut line = |s: String| {
            out.push_str(&s);
            out.push('\n');
        };
        line(format!("config digest: {}", self.digest()));
        match &self.user_source {
            Some((source, path)) => line(format!(
                "user file: {} ({})",
                path.display(),
                source.label()
            )),
            None => line("user file: none (defaults)".to_owned()),
        }
        for s in &self.skipped {
            let path = s
                .path
                .as_ref()
                .map(|p| format!(" {}", p.display()))
                .unwrap_or_default();
            line(format!(
                "  skipped {}{path}: {}",
                s.source.label(),
                s.reason
            ));
        }
        line(format!(
            "project file: {} ({})",
            self.project_file.display(),
            if self.project_present {
                "read"
            } else {
                "absent, defaults"
            }
        ));
        for f in &self.files {
            line(format!("read {} sha256 {}", f.path.display(), f.sha256));
        }
        line(format!(
            "timeout_seconds = {} ({})",
            self.timeout_seconds.value, self.timeout_seconds.origin
        ));
        line(format!("reviewers ({}):", self.reviewers.origin));
        for r in &self.reviewers.value {
            line(format!("  {} ({})", r.name.value, r.name.origin));
            line(format!(
                "    preset = {} ({})",
                r.preset.value, r.preset.origin
            ));
            line(format!(
                "    timeout_seconds = {} ({})",
                r.timeout_seconds.value, r.timeout_seconds.origin
            ));
            for (key, origin, value) in r.optional_fields() {
                line(format!("    {key} = {value} ({origin})"));
            }
        }
        if self.check_paths.is_empty() {
            line("check_paths: none (default)".to_owned());
        } else {
            line("check_paths:".to_owned());
            for c in &self.check_paths {
                line(format!("  {} ({})", c.value, c.origin));
            }
        }
        if self.rules.is_empty() {
            line("rules: none (default)".to_owned());
        } else {
            line("rules:".to_owned());
            for r in &self.rules {
                line(format!("  {} ({})", r.value.name, r.origin));
            }
        }
        let angles: Vec<&str> = self.angles.value.iter().map(|a| a.as_str()).collect();
        line(format!(
            "angles = {} ({})",
            angles.join(", "),
            self.angles.origin
        ));
        for (key, cap) in [
            ("plan", &self.caps.plan),
            ("plan_delta", &self.caps.plan_delta),
            ("code", &self.caps.code),
        ] {
            line(format!("caps.{key} = {} ({})", cap.value, cap.origin));
        }
        out
    }
}
