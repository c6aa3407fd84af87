//! What the PreToolUse hook on Bash looks for in a command an agent is about to run: the cheap
//! ways around the rails hooks and records (including writing the hook scripts or the verdicts
//! `git rails` keeps under `.git/rails`), and the commands that publish work.
//!
//! This reads the command as words (split at `;`, `&&`, `||`, `|`, `&` and newlines, quotes
//! removed); it is a guard against the obvious, not a shell parser or a sandbox. What git
//! itself enforces (pre-push, commit-msg, pre-receive on a shared repository) stays the rule;
//! this only tells the agent before it tries.

/// What the hook does with one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing rails cares about.
    Allow,
    /// Refused whatever the sprint's state: the reason, for the agent.
    Block(String),
    /// It publishes work (`git push`, `gh pr create`): allowed only when the gate passes.
    Publish(String),
}

pub fn classify(command: &str) -> Verdict {
    let mut publish = None;
    for segment in segments(command) {
        let words = words(&segment);
        match one(&words) {
            Verdict::Allow => {}
            Verdict::Publish(p) => {
                publish.get_or_insert(p);
            }
            block => return block,
        }
    }
    publish.map_or(Verdict::Allow, Verdict::Publish)
}

fn segments(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let chars: Vec<char> = command.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if matches!(c, ';' | '|' | '&' | '\n' | '(' | ')' | '`') => {
                out.push(std::mem::take(&mut cur));
                i += 1;
                continue;
            }
            None => {}
        }
        cur.push(c);
        i += 1;
    }
    out.push(cur);
    out.retain(|s| !s.trim().is_empty());
    out
}

fn words(segment: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in segment.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                any = true;
            }
            None if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            None => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn names_record_ref(w: &str) -> bool {
    crate::store::refs::WRITTEN_BY_US
        .iter()
        .any(|r| w.contains(r))
}

const BYPASS: &str = "skips the rails hooks";

/// A path into the hook scripts or into what `git rails` and `git spar` keep under the git
/// dir: a verdict or a memo kept there is believed by the local gates, so writing one by hand
/// is a way around them.
fn names_rails_state(w: &str) -> bool {
    let w = w.trim_start_matches('>');
    w.contains(".git/rails/")
        || w.ends_with(".git/rails")
        || w.contains(".git/spar/")
        || w.ends_with(".git/spar")
        || w.contains(".git/hooks/")
        || w.ends_with(".git/hooks")
        || w.contains("rails/cache/")
        || w.contains("spar/cache/")
        || names_session_store(w)
}

/// A path into the agent session store (`$XDG_STATE_HOME/git-rails/sessions/`): a session
/// written or removed by hand would let the agent choose what holds it.
fn names_session_store(w: &str) -> bool {
    w.contains("git-rails/sessions") || w.ends_with("git-rails") && w.contains("state")
}

/// Why an Edit or Write of `path` is refused (the rails state, the hook scripts, the session
/// store), or None.
pub fn edit_refused(path: &str) -> Option<String> {
    names_rails_state(path).then(|| {
        "the hook scripts, what git rails and git spar keep under .git/rails and .git/spar, and \
         the agent session store are written only by those tools; leave them as they are"
            .to_string()
    })
}

/// Programs that only read the files they are given.
const READS: [&str; 16] = [
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "ls",
    "grep",
    "rg",
    "stat",
    "file",
    "wc",
    "diff",
    "jq",
    "sha256sum",
    "find",
    "tree",
];

/// Whether a command writes (or may write) the hook scripts or the rails state: any program
/// but git and the readers that names such a path, and any redirection into one.
fn writes_rails_state(program: &str, rest: &[String]) -> bool {
    let redirected = rest.iter().enumerate().any(|(k, w)| {
        (w.starts_with('>') && w.len() > 2 && names_rails_state(w))
            || (matches!(w.as_str(), ">" | ">>" | ">|")
                && rest.get(k + 1).is_some_and(|t| names_rails_state(t)))
    });
    let find_writes = program == "find"
        && rest
            .iter()
            .any(|a| matches!(a.as_str(), "-delete" | "-exec" | "-execdir"));
    redirected
        || ((!READS.contains(&program) || find_writes)
            && program != "git"
            && rest.iter().any(|w| names_rails_state(w)))
}

fn one(words: &[String]) -> Verdict {
    let mut i = 0;
    // Leading assignments (`RAILS_SKIP=1 git push`) and wrappers (`env`, `command`, `sudo`).
    while i < words.len() {
        let w = words[i].as_str();
        if let Some((k, v)) = w.split_once('=') {
            if k == "RAILS_SKIP" && v == "1" {
                return Verdict::Block(format!(
                    "RAILS_SKIP=1 {BYPASS}; run the command without it (a person may choose to skip them, an agent may not)"
                ));
            }
            if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !k.is_empty() {
                i += 1;
                continue;
            }
        }
        if matches!(w, "env" | "command" | "exec" | "sudo" | "nohup" | "time") {
            i += 1;
            continue;
        }
        break;
    }
    let Some(program) = words.get(i) else {
        return Verdict::Allow;
    };
    let base = program.rsplit('/').next().unwrap_or(program);
    let rest = &words[i + 1..];
    if writes_rails_state(base, rest) {
        return Verdict::Block(
            "the hook scripts, what git rails and git spar keep under .git/rails and .git/spar \
             (their cached replays and memos) and the agent session store \
             (git-rails/sessions) are written only by those tools; leave them as they are"
                .to_string(),
        );
    }
    match base {
        // A command handed to another shell is read the same way.
        "sh" | "bash" | "zsh" | "dash" | "ksh" => match rest
            .iter()
            .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
        {
            Some(at) => rest.get(at + 1).map_or(Verdict::Allow, |c| classify(c)),
            None => Verdict::Allow,
        },
        "eval" => classify(&rest.join(" ")),
        "git" => git(rest),
        "git-spar" => spar(rest),
        "gh" => match (
            rest.first().map(String::as_str),
            rest.get(1).map(String::as_str),
        ) {
            (Some("pr"), Some(sub @ ("create" | "merge" | "ready"))) => {
                Verdict::Publish(format!("gh pr {sub}"))
            }
            _ => Verdict::Allow,
        },
        _ => Verdict::Allow,
    }
}

fn git(args: &[String]) -> Verdict {
    let mut i = 0;
    // git's own options before the subcommand.
    while i < args.len() {
        let a = args[i].as_str();
        if a == "-c" {
            if let Some(kv) = args.get(i + 1) {
                if kv.to_ascii_lowercase().starts_with("core.hookspath") {
                    return Verdict::Block(format!(
                        "-c core.hooksPath=… {BYPASS}; run git without it"
                    ));
                }
            }
            i += 2;
            continue;
        }
        if matches!(a, "-C" | "--git-dir" | "--work-tree" | "--namespace") {
            i += 2;
            continue;
        }
        if a.starts_with('-') {
            if a.to_ascii_lowercase().contains("core.hookspath") {
                return Verdict::Block(format!("core.hooksPath {BYPASS}; run git without it"));
            }
            i += 1;
            continue;
        }
        break;
    }
    let Some(sub) = args.get(i).map(String::as_str) else {
        return Verdict::Allow;
    };
    let rest = &args[i + 1..];
    // git takes an unambiguous prefix of a long option (`--no-veri`).
    let no_verify = rest
        .iter()
        .any(|a| a.len() >= "--no-veri".len() && "--no-verify".starts_with(a.as_str()))
        || (sub == "commit"
            && rest.iter().any(|a| {
                a.len() > 1 && a.starts_with('-') && !a.starts_with("--") && a[1..].contains('n')
            }));
    if no_verify
        && matches!(
            sub,
            "commit" | "push" | "merge" | "am" | "rebase" | "cherry-pick" | "revert" | "pull"
        )
    {
        return Verdict::Block(format!(
            "git {sub} --no-verify {BYPASS}; run it without --no-verify and fix what the hook reports"
        ));
    }
    match sub {
        "spar" => spar(rest),
        "config"
            if rest
                .iter()
                .any(|a| a.eq_ignore_ascii_case("core.hooksPath"))
                && !rest
                    .iter()
                    .any(|a| matches!(a.as_str(), "--get" | "--list" | "-l" | "get")) =>
        {
            Verdict::Block(format!(
                "changing core.hooksPath {BYPASS}; leave it as it is"
            ))
        }
        "update-ref" | "symbolic-ref" | "replace" if rest.iter().any(|a| names_record_ref(a)) => {
            Verdict::Block(
                "the rails and spar records are written only by `git rails` and `git spar` \
                 (through the tools: evidence, spar_record, …), never by hand"
                    .to_string(),
            )
        }
        "notes"
            if rest
                .iter()
                .any(|a| names_record_ref(a) || a == "--ref=rails" || a == "--ref=spar")
                || rest
                    .windows(2)
                    .any(|w| w[0] == "--ref" && (w[1] == "rails" || w[1] == "spar")) =>
        {
            let reads = rest.iter().any(|a| matches!(a.as_str(), "show" | "list"));
            if reads {
                Verdict::Allow
            } else {
                Verdict::Block(
                    "the rails and spar notes are written only by `git rails` and `git spar`, \
                     never by hand"
                        .to_string(),
                )
            }
        }
        "push" => {
            let destructive = rest
                .iter()
                .any(|a| names_record_ref(a) && (a.starts_with('+') || a.starts_with(':')))
                || (rest.iter().any(|a| names_record_ref(a))
                    && rest.iter().any(|a| {
                        matches!(
                            a.as_str(),
                            "--delete" | "-d" | "--force" | "-f" | "--mirror"
                        )
                    }));
            if destructive {
                Verdict::Block(
                    "a push that deletes or overwrites rails or spar records; share them with \
                     `git rails sync`"
                        .to_string(),
                )
            } else {
                Verdict::Publish("git push".to_string())
            }
        }
        _ => Verdict::Allow,
    }
}

/// `git spar …`: the decisions only a person can make are refused from an agent's shell — a
/// waiver, a triage disposition resting on the user's word, and any `--user-quote` or
/// `--decision-quote` (words the agent would put in the user's mouth). A speed bump: what
/// counts under a signing policy is a person's signature on the record commit, which this does
/// not check.
fn spar(args: &[String]) -> Verdict {
    let quotes = args.iter().find(|a| {
        ["--user-quote", "--decision-quote"]
            .iter()
            .any(|o| a.as_str() == *o || a.starts_with(&format!("{o}=")))
    });
    let sub = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str);
    let personal = match sub {
        Some("waive") => Some("waiving a reviewer".to_string()),
        Some("triage") => args
            .iter()
            .find(|a| {
                crate::spar::vocab::Disposition::parse(a)
                    .is_some_and(crate::spar::vocab::Disposition::rests_on_users_word)
            })
            .map(|d| format!("triage … {d}")),
        _ => None,
    };
    match (personal, quotes) {
        (Some(what), _) => Verdict::Block(format!(
            "{what} is a decision only a person can make: ask the user to run it in their own terminal, signed (`--sign`), with their own words"
        )),
        (None, Some(q)) => Verdict::Block(format!(
            "{} gives the user's words: only the user can, in their own terminal",
            q.split('=').next().unwrap_or(q)
        )),
        (None, None) => Verdict::Allow,
    }
}

#[cfg(test)]
mod tests {
    use super::{classify, Verdict};

    fn blocked(c: &str) -> bool {
        matches!(classify(c), Verdict::Block(_))
    }

    #[test]
    fn the_cheap_ways_around_the_hooks_are_blocked() {
        for c in [
            "git commit --no-verify -m wip",
            "git commit -nm wip",
            "git commit -a -n -m x",
            "cd sub && git push --no-verify origin main",
            "RAILS_SKIP=1 git push",
            "env RAILS_SKIP=1 git push origin HEAD",
            "git -c core.hooksPath=/dev/null commit -m x",
            "git config core.hooksPath /tmp/none",
            "git update-ref refs/rails/evidence/S HEAD",
            "/usr/bin/git update-ref -d refs/spar/series/x",
            "git notes --ref=rails add -m PASS HEAD",
            "git notes --ref rails remove HEAD",
            "git push origin :refs/rails/evidence/S",
            "git push --force origin refs/rails/evidence/S",
            "echo ok; git commit --no-verify -m 'a; b'",
            "git commit --no-veri -m x",
            "bash -c 'git commit --no-verify -m x'",
            "sh -lc \"git push --no-verify\"",
            "eval git commit --no-verify -m x",
            "rm -rf .git/rails/cache",
            "echo '{\"done\":true}' > .git/rails/cache/gate/S.json",
            "cat forged.json >.git/rails/cache/gate/S.json",
            "cp forged.json .git/rails/cache/evidence/S.json",
            "python3 -c 'x' .git/rails/cache/gate/S.json",
            "printf 'exit 0' > .git/hooks/pre-push",
            "chmod -x .git/hooks/pre-push",
            "find .git/rails -name '*.json' -delete",
            "sed -i s/false/true/ .git/rails/cache/gate/S.json",
            "echo '{}' >> .git/spar/cache/facts/S.jsonl",
            "rm -rf .git/spar",
            "cp forged.json .git/spar/cache/gate/x.json",
            "echo x > .git/spar/locks/s.lock",
            "git spar waive s code-1 claude --user-quote 'go on'",
            "git -C repo spar waive s code-1 claude",
            "git-spar waive s code-1 claude --user-quote ok",
            "git spar triage s code-1 claude-F1 accepted --user-quote 'fine'",
            "git spar triage s code-1 claude-F1 answered --user-quote=yes",
            "git spar triage s code-1 claude-F1 deferred --to issue-9 --user-quote later",
            "git spar run --base main --decision 'no cache' --decision-quote 'the user said so'",
            "bash -c \"git spar waive s code-1 claude --user-quote ok\"",
            "true && git spar waive s code-1 x",
        ] {
            assert!(blocked(c), "{c}: {:?}", classify(c));
        }
    }

    #[test]
    fn ordinary_work_is_allowed_and_publishing_asks_the_gate() {
        for c in [
            "cargo test",
            "git commit -m 'no --verify here'",
            "git commit -m \"fix -n handling\"",
            "git status && git diff",
            "git notes --ref=rails show HEAD",
            "git config --get core.hooksPath",
            "git log refs/rails/evidence/S",
            "echo git commit --no-verify",
            "git rails evidence red S c1",
            "cat .git/rails/cache/gate/S.json",
            "ls .git/hooks/",
            "jq .report.done .git/rails/cache/gate/S.json",
            "git rails doctor",
            "git spar triage s code-1 claude-F1 fixed --failed-before a --passed-after b",
            "git spar triage s code-1 claude-F1 rejected --evidence 'not reachable'",
            "git spar show s",
            "git spar gate s:code-1",
            "git spar run --base main",
        ] {
            assert_eq!(classify(c), Verdict::Allow, "{c}");
        }
        assert_eq!(
            classify("git add . && git push origin feature"),
            Verdict::Publish("git push".into())
        );
        assert_eq!(
            classify("gh pr create --fill"),
            Verdict::Publish("gh pr create".into())
        );
    }
}
