//! A reader of git's reftable files (`$GIT_DIR/reftable/`, Documentation/technical/reftable.txt
//! in git), for the refs only: the ref blocks of each table of the stack, newest table first.
//!
//! Why: the hooks and the gate run on every push and every agent stop, and in a reftable
//! repository a `git for-each-ref` process costs about as much as the whole command. Reading
//! the few kilobytes of ref blocks in process keeps them within 3× `git rev-parse HEAD`.
//! Anything this reader does not expect (another format version, a table that vanished while
//! it read, a malformed block) makes it give up (`None`); the caller then asks git.

use std::collections::BTreeMap;
use std::path::Path;

/// A ref's value in the table stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value {
    /// A direct ref: its object id (the raw bytes).
    Direct(Vec<u8>),
    /// A symbolic ref: the name it points at.
    Symbolic(String),
}

/// Every ref of the stack whose `tables.list` holds `list`, as `name -> value` (deleted refs
/// left out), or None when the reader cannot be sure.
pub(super) fn read_stack(
    dir: &Path,
    list: &[u8],
    hash_len: usize,
) -> Option<BTreeMap<String, Value>> {
    let text = std::str::from_utf8(list).ok()?;
    let mut seen: BTreeMap<String, Option<Value>> = BTreeMap::new();
    for table in text.lines().rev().filter(|l| !l.is_empty()) {
        if table.contains('/') {
            return None;
        }
        let bytes = std::fs::read(dir.join(table)).ok()?;
        read_table(&bytes, hash_len, &mut |name, value| {
            seen.entry(name).or_insert(value);
        })?;
    }
    Some(
        seen.into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .collect(),
    )
}

/// git's varint (varint.c): 7 bits a byte, most significant first, +1 per continuation.
fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut c = *buf.get(*pos)?;
    *pos += 1;
    let mut val = u64::from(c & 0x7f);
    while c & 0x80 != 0 {
        c = *buf.get(*pos)?;
        *pos += 1;
        val = val.checked_add(1)?.checked_mul(128)? + u64::from(c & 0x7f);
    }
    Some(val)
}

fn be(buf: &[u8], at: usize, n: usize) -> Option<usize> {
    let b = buf.get(at..at + n)?;
    Some(b.iter().fold(0usize, |acc, x| (acc << 8) | usize::from(*x)))
}

/// Calls `each(name, value)` for every ref record of one table (None: a deletion).
fn read_table(
    buf: &[u8],
    hash_len: usize,
    each: &mut dyn FnMut(String, Option<Value>),
) -> Option<()> {
    if buf.get(0..4)? != b"REFT" {
        return None;
    }
    let (header, footer) = match buf.get(4)? {
        1 if hash_len == 20 => (24, 68),
        2 => {
            let id = buf.get(24..28)?;
            let want: &[u8] = if hash_len == 20 { b"sha1" } else { b"s256" };
            if id != want {
                return None;
            }
            (28, 72)
        }
        _ => return None,
    };
    let block_size = be(buf, 5, 3)?;
    let end_of_blocks = buf.len().checked_sub(footer)?;
    let mut start = 0usize;
    let mut first = true;
    while start < end_of_blocks {
        let at = if first { header } else { start };
        match buf.get(at)? {
            b'r' => {}
            // Padding up to the next block boundary.
            0 if !first && block_size > 0 => {
                let next = start.div_ceil(block_size) * block_size;
                if next == start || buf[start..next.min(end_of_blocks)].iter().any(|b| *b != 0) {
                    return None;
                }
                start = next;
                continue;
            }
            // Index, object and log blocks follow the ref blocks.
            b'i' | b'o' | b'g' => return Some(()),
            _ => return None,
        }
        let len = be(buf, at + 1, 3)?;
        let block_end = start.checked_add(len)?;
        if block_end > end_of_blocks || len < 6 {
            return None;
        }
        let restarts = be(buf, block_end - 2, 2)?;
        let records_end = block_end.checked_sub(2 + 3 * restarts)?;
        let mut pos = at + 4;
        let mut key: Vec<u8> = Vec::new();
        while pos < records_end {
            let prefix = usize::try_from(varint(buf, &mut pos)?).ok()?;
            let suffix_and_type = varint(buf, &mut pos)?;
            let suffix = usize::try_from(suffix_and_type >> 3).ok()?;
            let kind = suffix_and_type & 7;
            if prefix > key.len() {
                return None;
            }
            key.truncate(prefix);
            key.extend_from_slice(buf.get(pos..pos + suffix)?);
            pos += suffix;
            varint(buf, &mut pos)?; // update index delta
            let value = match kind {
                0 => None,
                1 | 2 => {
                    let id = buf.get(pos..pos + hash_len)?.to_vec();
                    pos += hash_len * kind as usize; // the peeled id of a tag follows
                    Some(Value::Direct(id))
                }
                3 => {
                    let n = usize::try_from(varint(buf, &mut pos)?).ok()?;
                    let target = String::from_utf8(buf.get(pos..pos + n)?.to_vec()).ok()?;
                    pos += n;
                    Some(Value::Symbolic(target))
                }
                _ => return None,
            };
            each(String::from_utf8(key.clone()).ok()?, value);
        }
        if pos != records_end {
            return None;
        }
        start = block_end;
        first = false;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str], stdin: Option<&str>) -> String {
        use std::io::Write;
        let mut cmd = Command::new("git");
        cmd.args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        if let Some(s) = stdin {
            child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
        }
        drop(child.stdin.take());
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    fn ours(dir: &Path, hash_len: usize) -> BTreeMap<String, String> {
        let list = std::fs::read(dir.join(".git/reftable/tables.list")).unwrap();
        read_stack(&dir.join(".git/reftable"), &list, hash_len)
            .expect("the reader gave up")
            .into_iter()
            .filter(|(k, _)| k.starts_with("refs/"))
            .map(|(k, v)| match v {
                Value::Direct(id) => (k, id.iter().map(|b| format!("{b:02x}")).collect()),
                Value::Symbolic(t) => (k, format!("-> {t}")),
            })
            .collect()
    }

    fn gits(dir: &Path) -> BTreeMap<String, String> {
        git(
            dir,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname) %(symref)",
            ],
            None,
        )
        .lines()
        .map(|l| {
            let mut f = l.split(' ');
            let (name, id, sym) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap_or(""));
            let v = if sym.is_empty() {
                id.to_string()
            } else {
                format!("-> {sym}")
            };
            (name.to_string(), v)
        })
        .collect()
    }

    #[test]
    fn reads_what_git_lists_across_stacked_and_compacted_tables() {
        for (format, hash_len) in [("sha1", 20), ("sha256", 32)] {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            git(
                d,
                &[
                    "init",
                    "-q",
                    "-b",
                    "main",
                    "--ref-format=reftable",
                    &format!("--object-format={format}"),
                ],
                None,
            );
            git(d, &["commit", "-q", "--allow-empty", "-m", "a"], None);
            let head = git(d, &["rev-parse", "HEAD"], None).trim().to_string();
            git(d, &["tag", "-a", "-m", "t", "v1"], None);
            // Many refs in one transaction (several ref blocks), then small tables on top.
            let mut batch = String::new();
            for i in 0..3000 {
                batch.push_str(&format!("create refs/rails/evidence/S-{i:04} {head}\n"));
            }
            git(d, &["update-ref", "--stdin"], Some(&batch));
            git(
                d,
                &[
                    "symbolic-ref",
                    "refs/remotes/origin/HEAD",
                    "refs/heads/main",
                ],
                None,
            );
            for i in 0..40 {
                git(
                    d,
                    &["update-ref", &format!("refs/spar/series/x{i}"), &head],
                    None,
                );
            }
            git(d, &["update-ref", "-d", "refs/rails/evidence/S-0007"], None);
            git(d, &["update-ref", "-d", "refs/spar/series/x3"], None);
            assert_eq!(ours(d, hash_len), gits(d), "{format}, stacked");
            git(d, &["pack-refs", "--all"], None);
            assert_eq!(ours(d, hash_len), gits(d), "{format}, compacted");
            assert!(!ours(d, hash_len).contains_key("refs/rails/evidence/S-0007"));
        }
    }

    #[test]
    fn varints_as_git_writes_them() {
        let mut pos = 0;
        assert_eq!(varint(&[0x7f], &mut pos), Some(127));
        pos = 0;
        assert_eq!(varint(&[0x80, 0x00], &mut pos), Some(128));
        pos = 0;
        assert_eq!(varint(&[0x81, 0x7f], &mut pos), Some(383));
        assert_eq!(varint(&[0x80], &mut 0), None);
    }
}
