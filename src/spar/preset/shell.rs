//! G11: the shell lines an `agy` reviewer may run. A line is accepted when it is read-only
//! programs (and `sed -n` that only prints) joined by `|`, `&&`, `||` and `;` alone; `2>/dev/null`
//! and `2>&1` are removed first, and operator characters inside quotes or after `\` are not
//! operators. Anything else is a violation whose reason names the first problem: shell syntax
//! anywhere in the line (the leftmost), otherwise the leftmost part that breaks a rule.

/// The programs a reviewer may run ("review round §4"; the seed's examples name `ls`, `pwd`,
/// `diff`, `grep`, `head`, `wc`, `cat`, `find`, `sort`, `rg` and `true`). None of them writes a
/// file or runs another program unless given one of the [`forbidden_prefixes`] arguments.
pub const READ_ONLY_PROGRAMS: &[&str] = &[
    "basename",
    "cat",
    "cmp",
    "comm",
    "cut",
    "diff",
    "dirname",
    "du",
    "echo",
    "egrep",
    "false",
    "fgrep",
    "find",
    "grep",
    "head",
    "ls",
    "md5sum",
    "nl",
    "od",
    "printf",
    "pwd",
    "readlink",
    "realpath",
    "rg",
    "sha1sum",
    "sha256sum",
    "sort",
    "stat",
    "tac",
    "tail",
    "tr",
    "true",
    "wc",
];

/// The folders a program may be called from by path.
pub const PROGRAM_DIRS: &[&str] = &["/bin", "/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"];

/// Argument prefixes that make a read-only program write a file or run another program.
pub fn forbidden_prefixes(program: &str) -> &'static [&'static str] {
    match program {
        "find" => &[
            "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ],
        "sort" => &["--compress-program", "--output", "-o"],
        "rg" => &[
            "--pre",
            "--hostname-bin",
            "--search-zip",
            "-z",
            "--follow",
            "-L",
        ],
        "diff" => &["--to-file", "--from-file", "-l", "--paginate"],
        _ => &[],
    }
}

/// Shell words that are syntax, not programs.
const KEYWORDS: &[&str] = &[
    "!", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
    "function", "if", "in", "select", "then", "time", "until", "while",
];

/// A word of the line: its text after quote removal and where it starts.
#[derive(Debug, Clone)]
struct Word {
    text: String,
    start: usize,
}

/// One problem and where it is (a byte offset in the line).
#[derive(Debug, Clone)]
struct Problem {
    at: usize,
    what: String,
}

/// Checks one shell line (G11). `Err` holds the first problem, as the reason shows it.
pub fn check_line(line: &str) -> Result<(), String> {
    if line.contains('\n') || line.contains('\r') {
        return Err("newline".to_string());
    }
    let (commands, mut syntax) = parse(line);
    // Shell syntax anywhere in the line comes first: keywords and assignments where a
    // command starts, brace expansion outside quotes.
    for cmd in &commands {
        if let Some(first) = cmd.first() {
            if KEYWORDS.contains(&first.text.as_str()) || is_assignment(&first.text) {
                syntax.push(Problem {
                    at: first.start,
                    what: first.text.clone(),
                });
            }
        }
    }
    if let Some(p) = syntax.iter().min_by_key(|p| p.at) {
        return Err(p.what.clone());
    }
    for cmd in &commands {
        check_command(cmd)?;
    }
    Ok(())
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Checks one command (the words between operators): the program and its arguments.
fn check_command(words: &[Word]) -> Result<(), String> {
    let Some(first) = words.first() else {
        return Ok(());
    };
    if first.text.is_empty() {
        // `'' x` or `"" x`: a program with an empty name, named so the reason is not empty.
        return Err("''".into());
    }
    let program = if first.text.contains('/') {
        let (dir, name) = first.text.rsplit_once('/').unwrap_or(("", &first.text));
        if !PROGRAM_DIRS.contains(&dir) {
            return Err(first.text.clone());
        }
        name
    } else {
        first.text.as_str()
    };
    let args: Vec<&str> = words[1..].iter().map(|w| w.text.as_str()).collect();
    if program == "sed" {
        return check_sed(&first.text, &args);
    }
    if !READ_ONLY_PROGRAMS.contains(&program) {
        return Err(first.text.clone());
    }
    let forbidden = forbidden_prefixes(program);
    for a in &args {
        if *a == "--" {
            break;
        }
        if forbidden.iter().any(|p| a.starts_with(p)) {
            return Err(a.to_string());
        }
        // A forbidden one-letter option inside a bundle (`sort -no x`, `rg -iz x`).
        if a.len() > 2 && a.starts_with('-') && !a.starts_with("--") {
            let bundled = forbidden
                .iter()
                .filter_map(|p| p.strip_prefix('-').filter(|l| l.len() == 1))
                .any(|letter| a[1..].contains(letter));
            if bundled {
                return Err(a.to_string());
            }
        }
    }
    Ok(())
}

/// `sed` must print only: `-n` before the first operand, no option after it, and each script
/// made of addresses and the commands `p P = l n N d D q Q { } !` alone.
fn check_sed(word: &str, args: &[&str]) -> Result<(), String> {
    let mut quiet = false;
    let mut scripts: Vec<&str> = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    let mut options_done = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        i += 1;
        if options_done || a == "-" || !a.starts_with('-') {
            if !options_done {
                // GNU sed would still read an option after the first operand: refused there.
                for b in &args[i..] {
                    if *b == "--" {
                        break;
                    }
                    if b.starts_with('-') && *b != "-" {
                        return Err(b.to_string());
                    }
                }
                options_done = true;
            }
            operands.push(a);
            continue;
        }
        if a == "--" {
            options_done = true;
            continue;
        }
        if let Some(v) = a.strip_prefix("--expression=") {
            scripts.push(v);
            continue;
        }
        match a {
            "--quiet" | "--silent" => {
                quiet = true;
                continue;
            }
            "--posix" | "--regexp-extended" | "--separate" | "--unbuffered" | "--null-data"
            | "--sandbox" | "--debug" => continue,
            "--expression" | "-e" => {
                let Some(v) = args.get(i) else {
                    return Err(a.to_string());
                };
                scripts.push(v);
                i += 1;
                continue;
            }
            _ => {}
        }
        if a.starts_with("--") {
            return Err(a.to_string());
        }
        // Short flags, possibly bundled: -n -E -r -s -u -z, and a final e taking the script.
        let flags = &a[1..];
        let mut takes_script = false;
        for (k, c) in flags.char_indices() {
            match c {
                'n' => quiet = true,
                'E' | 'r' | 's' | 'u' | 'z' => {}
                'e' => {
                    let rest = &flags[k + 1..];
                    if rest.is_empty() {
                        takes_script = true;
                    } else {
                        scripts.push(rest);
                    }
                    break;
                }
                _ => return Err(a.to_string()),
            }
        }
        if takes_script {
            let Some(v) = args.get(i) else {
                return Err(a.to_string());
            };
            scripts.push(v);
            i += 1;
        }
    }
    if !quiet {
        return Err(word.to_string());
    }
    if scripts.is_empty() {
        match operands.first() {
            Some(s) => scripts.push(s),
            None => return Err(word.to_string()),
        }
    }
    for s in scripts {
        if !sed_prints_only(s) {
            return Err(s.to_string());
        }
    }
    Ok(())
}

/// Whether a sed script only selects and prints lines.
fn sed_prints_only(script: &str) -> bool {
    let b = script.as_bytes();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && (b[*i] == b' ' || b[*i] == b'\t') {
            *i += 1;
        }
    };
    // One address: a number (with an optional ~step), `$`, or /regex/ (\cREGEXc) with flags.
    let address = |i: &mut usize| -> Option<bool> {
        if *i >= b.len() {
            return Some(false);
        }
        match b[*i] {
            b'0'..=b'9' => {
                while *i < b.len() && (b[*i].is_ascii_digit() || b[*i] == b'~') {
                    *i += 1;
                }
                Some(true)
            }
            b'$' => {
                *i += 1;
                Some(true)
            }
            b'/' | b'\\' => {
                let delim = if b[*i] == b'\\' {
                    *i += 1;
                    *b.get(*i)?
                } else {
                    b'/'
                };
                *i += 1;
                while *i < b.len() && b[*i] != delim {
                    if b[*i] == b'\\' {
                        *i += 1;
                    }
                    *i += 1;
                }
                if *i >= b.len() {
                    return None;
                }
                *i += 1;
                while *i < b.len() && (b[*i] == b'I' || b[*i] == b'M') {
                    *i += 1;
                }
                Some(true)
            }
            _ => Some(false),
        }
    };
    loop {
        skip_ws(&mut i);
        while i < b.len() && (b[i] == b';' || b[i] == b'}') {
            i += 1;
            skip_ws(&mut i);
        }
        if i >= b.len() {
            return true;
        }
        match address(&mut i) {
            None => return false,
            Some(true) => {
                skip_ws(&mut i);
                if i < b.len() && b[i] == b',' {
                    i += 1;
                    skip_ws(&mut i);
                    if i < b.len() && (b[i] == b'+' || b[i] == b'~') {
                        i += 1;
                        while i < b.len() && b[i].is_ascii_digit() {
                            i += 1;
                        }
                    } else if address(&mut i) != Some(true) {
                        return false;
                    }
                }
            }
            Some(false) => {}
        }
        skip_ws(&mut i);
        while i < b.len() && b[i] == b'!' {
            i += 1;
            skip_ws(&mut i);
        }
        let Some(&c) = b.get(i) else {
            return false;
        };
        i += 1;
        match c {
            b'p' | b'P' | b'=' | b'l' | b'n' | b'N' | b'd' | b'D' | b'{' => {}
            b'q' | b'Q' => {
                skip_ws(&mut i);
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            _ => return false,
        }
        skip_ws(&mut i);
        match b.get(i) {
            None => return true,
            Some(b';') | Some(b'}') | Some(b'{') => {}
            Some(_) => return false,
        }
    }
}

/// Splits the line into commands at the accepted operators, and collects every piece of shell
/// syntax it is not allowed to hold.
fn parse(line: &str) -> (Vec<Vec<Word>>, Vec<Problem>) {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let n = chars.len();
    let at = |k: usize| chars.get(k).map(|&(_, c)| c);
    let pos = |k: usize| chars.get(k).map(|&(p, _)| p).unwrap_or(line.len());
    let mut problems: Vec<Problem> = Vec::new();
    let mut commands: Vec<Vec<Word>> = vec![Vec::new()];
    // The operator that ended the previous command, to find operators without a command.
    let mut pending_op: Option<(usize, String)> = None;
    let mut word: Option<Word> = None;
    let mut k = 0;
    // A word ends: an unquoted brace in it is brace expansion unless the word is just `{}`.
    let end_word = |word: &mut Option<Word>,
                    brace_at: &mut Option<usize>,
                    commands: &mut Vec<Vec<Word>>,
                    problems: &mut Vec<Problem>| {
        if let Some(w) = word.take() {
            if let Some(b) = brace_at.take() {
                if w.text != "{}" {
                    problems.push(Problem {
                        at: b,
                        what: "{".into(),
                    });
                }
            }
            if let Some(cmd) = commands.last_mut() {
                cmd.push(w);
            }
        }
        *brace_at = None;
    };
    let mut brace_at: Option<usize> = None;
    while k < n {
        let c = chars[k].1;
        let p = chars[k].0;
        // Removed before anything else: 2>/dev/null and 2>&1 standing as their own word.
        if word.is_none() {
            for drop in ["2>/dev/null", "2>&1"] {
                if line[p..].starts_with(drop) {
                    let end = p + drop.len();
                    let next = line[end..].chars().next();
                    if next.is_none_or(|c| c.is_whitespace() || "|&;".contains(c)) {
                        let skip = drop.chars().count();
                        k += skip;
                        break;
                    }
                }
            }
            if k >= n || chars[k].0 != p {
                continue;
            }
        }
        if c.is_whitespace() {
            end_word(&mut word, &mut brace_at, &mut commands, &mut problems);
            k += 1;
            continue;
        }
        // Operators and other unquoted metacharacters.
        if matches!(c, '|' | '&' | ';' | '(' | ')' | '<' | '>') {
            end_word(&mut word, &mut brace_at, &mut commands, &mut problems);
            let next = at(k + 1);
            let (op, len): (String, usize) = match (c, next) {
                ('|', Some('|')) => ("||".into(), 2),
                ('|', Some('&')) => ("|&".into(), 2),
                ('&', Some('&')) => ("&&".into(), 2),
                ('&', Some('>')) => ("&>".into(), 2),
                (';', Some(';')) => (";;".into(), 2),
                (';', Some('&')) => (";&".into(), 2),
                ('<', Some('(')) => ("<(".into(), 2),
                ('>', Some('(')) => (">(".into(), 2),
                ('>', Some('>')) => (">>".into(), 2),
                ('<', Some('<')) => ("<<".into(), 2),
                _ => (c.to_string(), 1),
            };
            match op.as_str() {
                "|" | "||" | "&&" | ";" => {
                    let empty = commands.last().is_none_or(|c| c.is_empty());
                    if empty {
                        problems.push(Problem {
                            at: p,
                            what: op.clone(),
                        });
                    }
                    commands.push(Vec::new());
                    pending_op = Some((p, op));
                }
                _ => problems.push(Problem { at: p, what: op }),
            }
            k += len;
            continue;
        }
        // A word character: start a word if none.
        if word.is_none() {
            word = Some(Word {
                text: String::new(),
                start: p,
            });
        }
        match c {
            '\\' => {
                if let Some(next) = at(k + 1) {
                    if let Some(w) = word.as_mut() {
                        w.text.push(next);
                    }
                    k += 2;
                } else {
                    // A line ending in `\` continues on the next line: shell syntax.
                    problems.push(Problem {
                        at: p,
                        what: "\\".into(),
                    });
                    k += 1;
                }
            }
            '\'' => {
                let mut j = k + 1;
                while j < n && chars[j].1 != '\'' {
                    if let Some(w) = word.as_mut() {
                        w.text.push(chars[j].1);
                    }
                    j += 1;
                }
                if j >= n {
                    problems.push(Problem {
                        at: p,
                        what: "'".into(),
                    });
                }
                k = j + 1;
            }
            '"' => {
                let mut j = k + 1;
                while j < n && chars[j].1 != '"' {
                    let d = chars[j].1;
                    match d {
                        '\\' if matches!(at(j + 1), Some('$' | '`' | '"' | '\\')) => {
                            if let (Some(w), Some(e)) = (word.as_mut(), at(j + 1)) {
                                w.text.push(e);
                            }
                            j += 2;
                            continue;
                        }
                        '`' => problems.push(Problem {
                            at: pos(j),
                            what: "`".into(),
                        }),
                        '$' => {
                            if let Some(what) = expansion(at(j + 1), true) {
                                problems.push(Problem { at: pos(j), what });
                            }
                        }
                        _ => {}
                    }
                    if let Some(w) = word.as_mut() {
                        w.text.push(d);
                    }
                    j += 1;
                }
                if j >= n {
                    problems.push(Problem {
                        at: p,
                        what: "\"".into(),
                    });
                }
                k = j + 1;
            }
            '`' => {
                problems.push(Problem {
                    at: p,
                    what: "`".into(),
                });
                k += 1;
            }
            '$' => {
                if let Some(what) = expansion(at(k + 1), false) {
                    problems.push(Problem { at: p, what });
                }
                if let Some(w) = word.as_mut() {
                    w.text.push('$');
                }
                k += 1;
            }
            '{' | '}' => {
                if brace_at.is_none() {
                    brace_at = Some(p);
                }
                if let Some(w) = word.as_mut() {
                    w.text.push(c);
                }
                k += 1;
            }
            '#' if word
                .as_ref()
                .is_some_and(|w| w.text.is_empty() && w.start == p) =>
            {
                problems.push(Problem {
                    at: p,
                    what: "#".into(),
                });
                k += 1;
            }
            _ => {
                if let Some(w) = word.as_mut() {
                    w.text.push(c);
                }
                k += 1;
            }
        }
    }
    end_word(&mut word, &mut brace_at, &mut commands, &mut problems);
    // An operator with no command after it.
    if let Some((p, op)) = pending_op {
        if commands.last().is_none_or(|c| c.is_empty()) {
            problems.push(Problem { at: p, what: op });
        }
    }
    commands.retain(|c| !c.is_empty());
    (commands, problems)
}

/// What a `$` followed by `next` starts, if it starts an expansion: `$(` for command
/// substitution, `$` for anything else. Inside double quotes `$"` is the closing quote.
fn expansion(next: Option<char>, in_double: bool) -> Option<String> {
    match next {
        Some('(') => Some("$(".into()),
        Some('"') if in_double => None,
        Some(c) if c.is_ascii_alphanumeric() || "_{['\"@*#?-$!".contains(c) => Some("$".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::check_line;

    #[track_caller]
    fn ok(line: &str) {
        assert_eq!(check_line(line), Ok(()), "{line}");
    }

    #[track_caller]
    fn bad(line: &str, why: &str) {
        assert_eq!(check_line(line), Err(why.to_string()), "{line}");
    }

    #[test]
    fn read_only_lines_pass() {
        ok("ls -la && ls -la head base");
        ok("grep -n \"a && b; c\" head/a.go");
        ok("grep -c '|' head/a.go || true");
        ok("ls head;ls base");
        ok("grep -rn greet head 2>/dev/null");
        ok("cat head/app/main.go 2>&1");
        ok("grep -n \"\\$x\" head/a");
        ok("grep -c x$ head/a.go");
        ok("sed -n '/func/,/^}/p' head/b.go");
        ok("sed -n -- '1p' head/a");
        ok("find head -name '*.go'");
    }

    #[test]
    fn the_first_problem_is_named() {
        bad("ls; touch x", "touch");
        bad("for f in head/*.json; do cat \"$f\"; done", "for");
        bad("ls 2> x", ">");
        bad("ls ; ; ls", ";");
        bad("ls &&", "&&");
        bad("&& ls", "&&");
        bad("find head {-exec,} sh -c id {} +", "{");
        bad("ls head/{a,b}", "{");
        bad("sed -n 'w pwn' -e '1p' head/go.mod", "-e");
        bad("sed -n -e '1p' -e 'e python3 -V' head/a", "e python3 -V");
        bad("sed '1,2p' head/a", "sed");
        bad("ls\nrm -rf head", "newline");
        bad(
            "PYTHONDONTWRITEBYTECODE=1 python3 -c 'print(1)'",
            "PYTHONDONTWRITEBYTECODE=1",
        );
        bad("/bin/rm -rf head", "/bin/rm");
        bad("sort -no x head/a", "-no");
        bad("rg -iz x head", "-iz");
        ok("grep -rzn x head");
        ok("find head -type f -name '*.rs'");
    }
}
