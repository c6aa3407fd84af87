//! Check-path globs (seed row G24): which paths of a change are "in the check paths".
//!
//! A glob is split on `/`. A segment that is exactly `**` matches zero or more whole path
//! segments; any other segment is a Go `path.Match` pattern (`*`, `?`, `[...]` with ranges and
//! `^` negation, `\` escape) matched against one path segment, so `**` inside a segment is just
//! two `*`. A trailing `/` is ignored. Globs are repository-relative only.
//!
//! The matcher is written by hand on purpose: `globset` and friends give `*`, `[!…]` and `{…}`
//! their own meanings, while the seed names Go's `path.Match` exactly. The per-segment matcher
//! below follows Go's algorithm step by step, on bytes, so it also agrees with Go where Go is
//! surprising (a `*` may skip into the middle of a multi-byte character, and an invalid byte then
//! reads as U+FFFD); validation reports exactly the patterns Go reports as `ErrBadPattern`.

use std::fmt;

/// A check path that can not be used, with the reason in words.
///
/// The caller decides what it means: a configuration error for the project file's
/// `check_paths` (pointing at that line), a refusal for `--check-path` (G24).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobError {
    /// The glob as it was given.
    pub glob: String,
    /// Why it is out of form, e.g. `segment "a[" is not a valid pattern (syntax error in pattern)`.
    pub message: String,
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "check path {:?}: {}", self.glob, self.message)
    }
}

impl std::error::Error for GlobError {}

/// One compiled segment of a glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// The segment `**`: zero or more whole path segments.
    AnySegments,
    /// A Go `path.Match` pattern for exactly one path segment (already validated).
    Pattern(String),
}

/// One validated glob, split into segments.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Glob {
    segments: Vec<Segment>,
}

/// The compiled list of check paths of a round (project `check_paths` plus `--check-path`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckPaths {
    /// The globs exactly as given, for the packet and `round.json`.
    given: Vec<String>,
    compiled: Vec<Glob>,
}

impl CheckPaths {
    /// Compiles every glob; the first one out of form is the error.
    pub fn new<I, S>(globs: I) -> Result<CheckPaths, GlobError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut paths = CheckPaths::default();
        for glob in globs {
            paths.push(glob.as_ref())?;
        }
        Ok(paths)
    }

    /// Adds one glob (e.g. a `--check-path` after the project's list).
    pub fn push(&mut self, glob: &str) -> Result<(), GlobError> {
        let compiled = compile(glob).map_err(|message| GlobError {
            glob: glob.to_string(),
            message,
        })?;
        self.given.push(glob.to_string());
        self.compiled.push(compiled);
        Ok(())
    }

    /// The globs as given, in order.
    pub fn globs(&self) -> &[String] {
        &self.given
    }

    /// True when there are no check paths at all (then nothing is in the check paths).
    pub fn is_empty(&self) -> bool {
        self.given.is_empty()
    }

    /// Whether a repository path (`/`-separated, no leading or trailing `/`) is in the check
    /// paths. The empty path is the repository top level, which the seed says is never a check
    /// path (G7), whatever the globs are (even `**`).
    pub fn matches(&self, path: &str) -> bool {
        if path.is_empty() {
            return false;
        }
        let parts: Vec<&str> = path.split('/').collect();
        self.compiled
            .iter()
            .any(|glob| segments_match(&glob.segments, &parts))
    }
}

/// Checks one glob against G24 without keeping it: `Err` carries the reason in words.
///
/// Out of form: the empty glob, an absolute glob (leading `/`), a segment that is exactly `..`,
/// and a segment Go's `path.Match` reports as `ErrBadPattern` (an unclosed or empty `[...]`, a
/// trailing `\`, a bad range such as `[a-]`).
pub fn validate(glob: &str) -> Result<(), String> {
    compile(glob).map(|_| ())
}

fn compile(glob: &str) -> Result<Glob, String> {
    if glob.is_empty() {
        return Err("the glob is empty".to_string());
    }
    if glob.starts_with('/') {
        return Err("the glob is absolute; check paths are relative to the repository".to_string());
    }
    // "끝의 /는 무시": one trailing slash names the same folder.
    let body = glob.strip_suffix('/').unwrap_or(glob);
    let mut segments = Vec::new();
    for segment in body.split('/') {
        if segment == ".." {
            return Err("a \"..\" segment leaves the repository".to_string());
        }
        if segment == "**" {
            segments.push(Segment::AnySegments);
            continue;
        }
        if let Err(BadPattern) = go_match(segment.as_bytes(), b"") {
            return Err(format!(
                "segment {segment:?} is not a valid pattern (syntax error in pattern{})",
                bad_pattern_hint(segment)
            ));
        }
        segments.push(Segment::Pattern(segment.to_string()));
    }
    Ok(Glob { segments })
}

/// A short hint for the two malformations people actually write; Go itself only says
/// "syntax error in pattern".
fn bad_pattern_hint(segment: &str) -> &'static str {
    let trailing_backslashes = segment.bytes().rev().take_while(|&b| b == b'\\').count();
    if trailing_backslashes % 2 == 1 {
        ": it ends with an unescaped \\"
    } else if segment.contains('[') {
        ": a [...] class is unclosed, empty or has a bad range"
    } else {
        ""
    }
}

/// Whether the glob segments match all of the path segments. `**` may take any number of path
/// segments, so this is the classic wildcard DP over (glob position, path position).
fn segments_match(glob: &[Segment], path: &[&str]) -> bool {
    // reach[j]: the first i glob segments can consume exactly the first j path segments.
    let mut reach = vec![false; path.len() + 1];
    reach[0] = true;
    for segment in glob {
        let mut next = vec![false; path.len() + 1];
        match segment {
            Segment::AnySegments => {
                let mut seen = false;
                for j in 0..=path.len() {
                    seen |= reach[j];
                    next[j] = seen;
                }
            }
            Segment::Pattern(pattern) => {
                for j in 0..path.len() {
                    if reach[j] {
                        next[j + 1] =
                            matches!(go_match(pattern.as_bytes(), path[j].as_bytes()), Ok(true));
                    }
                }
            }
        }
        reach = next;
    }
    reach[path.len()]
}

/// Go's `path.ErrBadPattern`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BadPattern;

/// Go's `utf8.RuneError`.
const RUNE_ERROR: u32 = 0xFFFD;

/// Go's `utf8.DecodeRuneInString`: the first character and its width; an invalid or truncated
/// sequence reads as `RUNE_ERROR` of width 1 (and the empty input as width 0).
fn decode_rune(s: &[u8]) -> (u32, usize) {
    let Some(&first) = s.first() else {
        return (RUNE_ERROR, 0);
    };
    let width = match first {
        0x00..=0x7F => return (u32::from(first), 1),
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return (RUNE_ERROR, 1),
    };
    match s.get(..width).map(std::str::from_utf8) {
        Some(Ok(text)) => match text.chars().next() {
            Some(c) => (u32::from(c), width),
            None => (RUNE_ERROR, 1),
        },
        _ => (RUNE_ERROR, 1),
    }
}

/// Go's `path.Match(pattern, name)`, step for step (see the module comment for why).
fn go_match(mut pattern: &[u8], mut name: &[u8]) -> Result<bool, BadPattern> {
    'pattern: while !pattern.is_empty() {
        let (star, chunk, rest) = scan_chunk(pattern);
        pattern = rest;
        if star && chunk.is_empty() {
            // A trailing `*` matches the rest of the name unless it has a `/`.
            return Ok(!name.contains(&b'/'));
        }
        // Look for a match at the current position; the last chunk must use up the name.
        let first = match_chunk(chunk, name);
        if let Ok(Some(t)) = first {
            if t.is_empty() || !pattern.is_empty() {
                name = t;
                continue;
            }
        }
        first?;
        if star {
            // Look for a match skipping i+1 bytes; a `*` cannot skip a `/`.
            let mut i = 0;
            while i < name.len() && name[i] != b'/' {
                match match_chunk(chunk, &name[i + 1..])? {
                    Some(t) if pattern.is_empty() && !t.is_empty() => {}
                    Some(t) => {
                        name = t;
                        continue 'pattern;
                    }
                    None => {}
                }
                i += 1;
            }
        }
        // Before answering "no", the rest of the pattern must still be well formed.
        while !pattern.is_empty() {
            let (_, chunk, rest) = scan_chunk(pattern);
            pattern = rest;
            match_chunk(chunk, b"")?;
        }
        return Ok(false);
    }
    Ok(name.is_empty())
}

/// Go's `scanChunk`: leading stars, then the chunk up to the next `*` outside a class.
fn scan_chunk(mut pattern: &[u8]) -> (bool, &[u8], &[u8]) {
    let mut star = false;
    while let Some((b'*', rest)) = pattern.split_first() {
        pattern = rest;
        star = true;
    }
    let mut in_range = false;
    let mut i = 0;
    while i < pattern.len() {
        match pattern[i] {
            // A trailing `\` is reported by match_chunk.
            b'\\' if i + 1 < pattern.len() => i += 1,
            b'[' => in_range = true,
            b']' => in_range = false,
            b'*' if !in_range => break,
            _ => {}
        }
        i += 1;
    }
    (star, &pattern[..i], &pattern[i..])
}

/// Go's `matchChunk`: whether the star-free chunk matches the start of `s`, and what is left.
/// After a mismatch it keeps parsing the chunk so that a malformed chunk is always reported.
fn match_chunk<'s>(mut chunk: &[u8], mut s: &'s [u8]) -> Result<Option<&'s [u8]>, BadPattern> {
    let mut failed = false;
    while let Some(&c) = chunk.first() {
        if !failed && s.is_empty() {
            failed = true;
        }
        match c {
            b'[' => {
                let mut r = 0;
                if !failed {
                    let (rune, n) = decode_rune(s);
                    r = rune;
                    s = &s[n..];
                }
                chunk = &chunk[1..];
                let mut negated = false;
                if let Some((b'^', rest)) = chunk.split_first() {
                    negated = true;
                    chunk = rest;
                }
                let mut matched = false;
                let mut ranges = 0;
                loop {
                    if ranges > 0 {
                        if let Some((b']', rest)) = chunk.split_first() {
                            chunk = rest;
                            break;
                        }
                    }
                    let (lo, rest) = get_esc(chunk)?;
                    chunk = rest;
                    let mut hi = lo;
                    if let Some((b'-', rest)) = chunk.split_first() {
                        let (h, rest) = get_esc(rest)?;
                        hi = h;
                        chunk = rest;
                    }
                    if lo <= r && r <= hi {
                        matched = true;
                    }
                    ranges += 1;
                }
                if matched == negated {
                    failed = true;
                }
            }
            b'?' => {
                if !failed {
                    if s[0] == b'/' {
                        failed = true;
                    }
                    let (_, n) = decode_rune(s);
                    s = &s[n..];
                }
                chunk = &chunk[1..];
            }
            _ => {
                let literal = if c == b'\\' {
                    chunk = &chunk[1..];
                    match chunk.first() {
                        Some(&escaped) => escaped,
                        None => return Err(BadPattern),
                    }
                } else {
                    c
                };
                if !failed {
                    if literal != s[0] {
                        failed = true;
                    }
                    s = &s[1..];
                }
                chunk = &chunk[1..];
            }
        }
    }
    Ok(if failed { None } else { Some(s) })
}

/// Go's `getEsc`: one possibly escaped character of a class; it must not be the last byte.
fn get_esc(chunk: &[u8]) -> Result<(u32, &[u8]), BadPattern> {
    let mut chunk = match chunk.first() {
        None | Some(b'-') | Some(b']') => return Err(BadPattern),
        Some(_) => chunk,
    };
    if chunk[0] == b'\\' {
        chunk = &chunk[1..];
        if chunk.is_empty() {
            return Err(BadPattern);
        }
    }
    let (r, n) = decode_rune(chunk);
    if r == RUNE_ERROR && n == 1 {
        return Err(BadPattern);
    }
    let rest = &chunk[n..];
    if rest.is_empty() {
        return Err(BadPattern);
    }
    Ok((r, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, name: &str) -> Result<bool, BadPattern> {
        go_match(pattern.as_bytes(), name.as_bytes())
    }

    /// The table of Go's own `path.Match` tests (src/path/match_test.go), plus the cases
    /// `go run` printed for this port (see tests/data/input-forms.json `go_path_match`).
    #[test]
    fn go_path_match_table() {
        let ok = |p: &str, n: &str, want: bool| {
            assert_eq!(m(p, n), Ok(want), "Match({p:?}, {n:?})");
        };
        let bad = |p: &str, n: &str| {
            assert_eq!(
                m(p, n),
                Err(BadPattern),
                "Match({p:?}, {n:?}) should be bad"
            );
        };
        ok("abc", "abc", true);
        ok("*", "abc", true);
        ok("*c", "abc", true);
        ok("a*", "a", true);
        ok("a*", "abc", true);
        ok("a*", "ab/c", false);
        ok("a*/b", "abc/b", true);
        ok("a*/b", "a/c/b", false);
        ok("a*b*c*d*e*/f", "axbxcxdxe/f", true);
        ok("a*b*c*d*e*/f", "axbxcxdxexxx/f", true);
        ok("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", false);
        ok("a*b*c*d*e*/f", "axbxcxdxexxx/fff", false);
        ok("a*b?c*x", "abxbbxdbxebxczzx", true);
        ok("a*b?c*x", "abxbbxdbxebxczzy", false);
        ok("ab[c]", "abc", true);
        ok("ab[b-d]", "abc", true);
        ok("ab[e-g]", "abc", false);
        ok("ab[^c]", "abc", false);
        ok("ab[^b-d]", "abc", false);
        ok("ab[^e-g]", "abc", true);
        ok("a\\*b", "a*b", true);
        ok("a\\*b", "ab", false);
        ok("a?b", "a☺b", true);
        ok("a[^a]b", "a☺b", true);
        ok("a???b", "a☺b", false);
        ok("a[^a][^a][^a]b", "a☺b", false);
        ok("[a-ζ]*", "α", true);
        ok("*[a-ζ]", "A", false);
        ok("a?b", "a/b", false);
        ok("a*b", "a/b", false);
        ok("[\\]a]", "]", true);
        ok("[\\-]", "-", true);
        ok("[x\\-]", "x", true);
        ok("[x\\-]", "-", true);
        ok("[x\\-]", "z", false);
        ok("[\\-x]", "x", true);
        ok("[\\-x]", "-", true);
        ok("[\\-x]", "a", false);
        bad("[]a]", "]");
        bad("[-]", "-");
        bad("[x-]", "x");
        bad("[x-]", "-");
        bad("[x-]", "z");
        bad("[-x]", "x");
        bad("[-x]", "-");
        bad("[-x]", "a");
        bad("\\", "a");
        bad("[a-b-c]", "a");
        bad("[", "a");
        bad("[^", "a");
        bad("[^bc", "a");
        bad("a[", "a");
        bad("a[", "ab");
        bad("a[", "x");
        bad("a/b[", "x");
        bad("ad[", "ab");
        bad("*x[", "a");
        ok("*x", "xxx", true);
        ok("*", "", true);
        ok("**", "", true);
        ok("?", "", false);
        // A `*` may skip into a multi-byte character, as in Go: "€" is three bytes, and from
        // its second byte `??` sees two invalid bytes.
        ok("*??", "€", true);
        ok("??", "€", false);
    }

    #[test]
    fn validation() {
        for good in [
            "checks/**",
            "checks/",
            "**",
            "**/*.py",
            "a/**/b",
            "a**b",
            "[a-z]*/x",
            "\\*",
            ".",
            "a..b",
        ] {
            assert_eq!(validate(good), Ok(()), "{good:?}");
        }
        for bad in [
            "", "/", "/abs", "../x", "a/../b", "a/..", "x[", "[]", "a/b\\", "[a-]", "[z-",
        ] {
            assert!(validate(bad).is_err(), "{bad:?} should be out of form");
        }
        let err = CheckPaths::new(["checks/**", "a["]).unwrap_err();
        assert_eq!(err.glob, "a[");
        assert!(err.to_string().contains("syntax error in pattern"), "{err}");
        assert!(validate("x\\").unwrap_err().contains("unescaped"));
    }

    #[test]
    fn double_star_segments() {
        let paths = CheckPaths::new(["checks/**"]).unwrap();
        assert!(paths.matches("checks"));
        assert!(paths.matches("checks/t.py"));
        assert!(paths.matches("checks/a/b/c.py"));
        assert!(!paths.matches("base/checks/t.py"));
        assert!(!paths.matches("checksx/t.py"));
        assert!(!paths.matches(""));

        let paths = CheckPaths::new(["**/test_*.py", "docs/*/spec.md/", "a/**/**/z"]).unwrap();
        assert!(paths.matches("test_a.py"));
        assert!(paths.matches("x/y/test_a.py"));
        assert!(!paths.matches("x/y/test_a.pyc"));
        assert!(paths.matches("docs/v1/spec.md"));
        assert!(!paths.matches("docs/v1/v2/spec.md"));
        assert!(paths.matches("a/z"));
        assert!(paths.matches("a/b/c/z"));
        assert!(!paths.matches("a/b/c/zz"));

        // `**` inside a segment is two `*`: it stays inside one name.
        let paths = CheckPaths::new(["a**b"]).unwrap();
        assert!(paths.matches("ab"));
        assert!(paths.matches("axxb"));
        assert!(!paths.matches("ax/xb"));

        // Even `**` alone never takes the repository top level.
        let all = CheckPaths::new(["**"]).unwrap();
        assert!(all.matches("x"));
        assert!(!all.matches(""));
        assert!(!CheckPaths::default().matches("x"));
    }
}
