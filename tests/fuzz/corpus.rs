//! The real corpus the targets are seeded from: the recorded reviewer outputs, the sprint
//! documents, tests/data/input-forms.json, and the few seeds of tests/data/fuzz/.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The head commit the recorded outputs' `@HEAD@` stands for in the seeds.
pub const HEAD: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

pub fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file of `dir` whose name starts with `prefix` and ends with `suffix`, sorted.
pub fn files(dir: &str, prefix: &str, suffix: &str) -> Vec<Vec<u8>> {
    let dir = data().join(dir);
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.starts_with(prefix) && n.ends_with(suffix)
        })
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| {
            String::from_utf8_lossy(&read(p))
                .replace("@HEAD@", HEAD)
                .into_bytes()
        })
        .collect()
}

/// The event streams a preset's CLI printed (both recording folders).
pub fn streams(preset: &str) -> Vec<Vec<u8>> {
    let mut out = files("reviewer-cli", preset, ".jsonl");
    out.extend(files("real-cli", preset, ".jsonl"));
    out
}

/// Every JSON object with a `verdict` and `findings` inside the recordings, also those carried
/// as a JSON string (a structured output, a final message).
pub fn results() -> Vec<Vec<u8>> {
    fn walk(v: &Value, out: &mut Vec<Vec<u8>>) {
        match v {
            Value::Object(m) => {
                if m.contains_key("verdict") && m.contains_key("findings") {
                    out.push(serde_json::to_vec_pretty(v).unwrap_or_default());
                }
                m.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::String(s) => {
                let t = s.trim();
                let t = t.strip_prefix("```json").unwrap_or(t);
                let t = t.trim_end_matches("```").trim();
                if let Ok(inner) = serde_json::from_str::<Value>(t) {
                    if inner.is_object() {
                        walk(&inner, out);
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for s in ["claude", "codex", "agy"].iter().flat_map(|p| streams(p)) {
        for line in String::from_utf8_lossy(&s).lines() {
            if let Ok(v) = serde_json::from_str::<Value>(line) {
                walk(&v, &mut out);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

pub fn sprints() -> Vec<Vec<u8>> {
    files("", "sprint-", ".md")
}

/// tests/data/fuzz/<name>: a file of seeds, one JSON value per line.
pub fn seeds(name: &str) -> Vec<Vec<u8>> {
    String::from_utf8_lossy(&read(&data().join("fuzz").join(name)))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.as_bytes().to_vec())
        .collect()
}

pub fn input_forms() -> Value {
    serde_json::from_slice(&read(&data().join("input-forms.json"))).expect("input-forms.json")
}
