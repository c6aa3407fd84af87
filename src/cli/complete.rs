//! Shell completion from the same clap definitions the binaries parse with.
//!
//! Two halves: `git rails completions <shell>` prints a script, and the hidden
//! `git rails __complete -- <words…>` answers one completion request with a candidate per line.
//! The bash script is a thin shim over `__complete`, so `git rails <TAB>` (through git's own
//! completion, which calls `_git_rails`) completes subcommands and options from the clap tree
//! and sprint, criterion, series and round names from the repository. zsh and fish get the
//! scripts clap_complete generates from the same tree (subcommands and options; zsh's and
//! fish's git completions call them for `git rails …`).

use clap::Command;

use crate::spar::ids::{RoundName, SeriesId};

/// What a value of an argument is, for names only the repository knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sprint,
    Criterion,
    Series,
    Round,
    SeriesRound,
    Reviewer,
    Finding,
}

/// The repository's names of one kind; `earlier` are the positional words given before the
/// one being completed (the sprint before a criterion, the series before a round).
pub type Names<'a> = &'a dyn Fn(Kind, &[String]) -> Vec<String>;

/// The kind of an argument, read from its value name.
fn kind_of(arg: &clap::Arg) -> Option<Kind> {
    let name = arg
        .get_value_names()
        .and_then(|v| v.first().map(|s| s.to_string()))
        .unwrap_or_else(|| arg.get_id().as_str().to_uppercase());
    Some(match name.as_str() {
        "SPRINT" => Kind::Sprint,
        "CRITERION" => Kind::Criterion,
        "SERIES" => Kind::Series,
        "ROUND" => Kind::Round,
        "SERIES:ROUND" | "TARGET" => Kind::SeriesRound,
        "REVIEWER" => Kind::Reviewer,
        "FINDING" => Kind::Finding,
        _ => return None,
    })
}

/// Fixed values clap does not know as such (the arguments are plain strings so their refusals
/// can say more than clap would).
fn fixed_values(arg: &clap::Arg) -> Vec<String> {
    let pv: Vec<String> = arg
        .get_possible_values()
        .iter()
        .map(|v| v.get_name().to_string())
        .collect();
    if !pv.is_empty() {
        return pv;
    }
    let words: &[&str] = match (arg.get_id().as_str(), arg.get_long()) {
        ("disposition", _) => &[
            "fixed",
            "duplicate",
            "rejected",
            "deferred",
            "answered",
            "accepted",
        ],
        (_, Some("stage")) => &["plan", "plan-delta", "code"],
        (_, Some("format")) => &["md", "json"],
        (_, Some("cause")) => &["churn", "recurring", "unrelated", "hardening", "other"],
        _ => &[],
    };
    words.iter().map(|s| s.to_string()).collect()
}

fn takes_value(arg: &clap::Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.takes_values())
}

/// The candidates for the last word of `words` (the words after the program name; the last
/// may be empty), one per line, each starting with that word.
pub fn candidates(mut cmd: Command, words: &[String], names: Names<'_>) -> Vec<String> {
    cmd.build();
    let (cur, done) = match words.split_last() {
        Some((c, d)) => (c.as_str(), d),
        None => ("", &[][..]),
    };
    let mut at = &cmd;
    let mut positionals: Vec<String> = Vec::new();
    let mut pending: Option<&clap::Arg> = None;
    let mut dashdash = false;
    for w in done {
        if let Some(arg) = pending.take() {
            let _ = arg;
            continue;
        }
        if w == "--" && !dashdash {
            dashdash = true;
            continue;
        }
        if !dashdash && w.starts_with('-') && w.len() > 1 {
            let found = if let Some(long) = w.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, _)) => (n, true),
                    None => (long, false),
                };
                at.get_arguments()
                    .find(|a| a.get_long() == Some(name))
                    .filter(|_| !inline)
            } else {
                let c = w.chars().nth(1);
                at.get_arguments()
                    .find(|a| a.get_short() == c)
                    .filter(|_| w.len() == 2)
            };
            if let Some(arg) = found.filter(|a| takes_value(a)) {
                pending = Some(arg);
            }
            continue;
        }
        if positionals.is_empty() {
            if let Some(sub) = at
                .get_subcommands()
                .find(|s| s.get_name() == w || s.get_all_aliases().any(|a| a == w))
            {
                at = sub;
                continue;
            }
        }
        positionals.push(w.clone());
    }
    let mut out: Vec<String> = Vec::new();
    if let Some(arg) = pending {
        out = fixed_values(arg);
        if let Some(k) = kind_of(arg) {
            out.extend(names(k, &positionals));
        }
    } else if cur.starts_with('-') && !dashdash {
        for a in at.get_arguments() {
            if a.is_hide_set() || a.is_positional() {
                continue;
            }
            if let Some(l) = a.get_long() {
                out.push(format!("--{l}"));
            }
        }
    } else if at.has_subcommands() && positionals.is_empty() {
        out = at
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| s.get_name().to_string())
            .collect();
    } else {
        let pos: Vec<&clap::Arg> = at.get_positionals().collect();
        let arg = pos
            .get(positionals.len())
            .or_else(|| {
                pos.last()
                    .filter(|a| a.get_num_args().is_some_and(|n| n.max_values() > 1))
            })
            .copied();
        if let Some(arg) = arg {
            out = fixed_values(arg);
            match kind_of(arg) {
                // `evidence red <criterion>` on a bound branch: the first word may be either.
                Some(Kind::Sprint) if pos.len() > 1 && kind_of(pos[1]) == Some(Kind::Criterion) => {
                    out.extend(names(Kind::Criterion, &[]));
                    out.extend(names(Kind::Sprint, &[]));
                }
                Some(k) => out.extend(names(k, &positionals)),
                None => {}
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|c| c.starts_with(cur) && seen.insert(c.clone()));
    out
}

/// The bash script: `_git_rails` / `_git_spar` for git's completion (`git rails <TAB>`), and
/// the same for `git-rails <TAB>`. Installed as `…/share/bash-completion/completions/git-<tool>`,
/// which bash-completion loads when git's completion asks for `git-<tool>`.
pub fn bash(tool: &str) -> String {
    let bin = format!("git-{tool}");
    let id = format!("git_{tool}");
    format!(
        r#"# bash completion for {bin} (generated by `{bin} completions bash`)
# git's completion calls _{id} for `git {tool} <TAB>`; `{bin} <TAB>` works too.
__{id}_complete_words() {{
    local IFS=$'\n'
    local candidates
    candidates=$("{bin}" __complete -- "$@" 2>/dev/null) || return
    COMPREPLY=($(compgen -W "$candidates" -- "${{@: -1}}"))
    if declare -F __ltrim_colon_completions >/dev/null; then
        __ltrim_colon_completions "${{@: -1}}"
    fi
}}
_{id}() {{
    # Called by git's completion, which has set words, cword and cur.
    local i start=1
    for ((i = 1; i < cword; i++)); do
        if [[ ${{words[i]}} == {tool} ]]; then start=$i; break; fi
    done
    __{id}_complete_words "${{words[@]:start+1:cword-start-1}}" "$cur"
}}
__{id}_direct() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}}
    __{id}_complete_words "${{COMP_WORDS[@]:1:COMP_CWORD-1}}" "$cur"
}}
complete -o bashdefault -o default -F __{id}_direct {bin}
"#
    )
}

/// The zsh or fish script clap_complete generates from the tree.
pub fn generated(cmd: Command, bin: &str, shell: clap_complete::Shell) -> String {
    let mut cmd = cmd.name(bin.to_string()).bin_name(bin.to_string());
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, bin, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// The names of the repository in the current directory (nothing when there is none: a
/// completion never fails loudly).
pub fn repo_names(kind: Kind, earlier: &[String]) -> Vec<String> {
    use crate::store::{refs, Store};
    let Ok(store) = Store::discover() else {
        return Vec::new();
    };
    let under = |prefix: &str| -> Vec<String> {
        store
            .refs_under(prefix)
            .map(|v| v.into_iter().map(|(n, _)| n).collect())
            .unwrap_or_default()
    };
    let bound = || {
        let branch = store.current_branch().ok().flatten()?;
        store.config_string(&format!("branch.{branch}.railsSprint"))
    };
    let rounds = |series: &str| -> Vec<String> {
        crate::spar::record::round_names(&store, &SeriesId::recorded(series))
            .map(|names| names.iter().map(ToString::to_string).collect())
            .unwrap_or_default()
    };
    match kind {
        Kind::Sprint => {
            let mut v = under(refs::CONTRACTS);
            if let Ok(root) = store.workdir() {
                if let Ok(dir) = std::fs::read_dir(root.join(".rails/contracts")) {
                    for e in dir.flatten() {
                        let name = e.file_name().to_string_lossy().into_owned();
                        if let Some(s) = name.strip_suffix(".json") {
                            v.push(s.to_string());
                        }
                    }
                }
            }
            v
        }
        Kind::Criterion => {
            let Some(sprint) = earlier.first().cloned().or_else(bound) else {
                return Vec::new();
            };
            let Ok(sprint) = crate::contract::SprintId::parse(&sprint) else {
                return Vec::new();
            };
            let contract = match crate::contract::newest(&store, &sprint) {
                Ok(Some(f)) => Some(f.contract),
                _ => store
                    .workdir()
                    .ok()
                    .and_then(|root| crate::contract::load_draft(root, &sprint).ok())
                    .map(|(_, c)| c),
            };
            contract
                .map(|c| c.dod.checks.iter().map(|ch| ch.id.clone()).collect())
                .unwrap_or_default()
        }
        Kind::Series => under(refs::SPAR_SERIES),
        Kind::Round => earlier.first().map(|s| rounds(s)).unwrap_or_default(),
        Kind::SeriesRound => {
            let mut v = Vec::new();
            for s in under(refs::SPAR_SERIES) {
                v.push(s.clone());
                v.extend(rounds(&s).into_iter().map(|r| format!("{s}:{r}")));
            }
            v
        }
        Kind::Reviewer | Kind::Finding => {
            let (Some(series), Some(round)) = (earlier.first(), earlier.get(1)) else {
                return Vec::new();
            };
            if kind == Kind::Reviewer {
                crate::spar::record::load_round(
                    &store,
                    &SeriesId::recorded(series),
                    &RoundName::named(round),
                )
                .map(|r| r.reviewers.into_iter().map(|x| x.name).collect())
                .unwrap_or_default()
            } else {
                crate::spar::record::load_findings(
                    &store,
                    &SeriesId::recorded(series),
                    &RoundName::named(round),
                )
                .map(|f| f.into_iter().map(|x| x.id).collect())
                .unwrap_or_default()
            }
        }
    }
}

/// `completions <shell>` of either tool.
pub fn print_script(cmd: Command, tool: &str, shell: &str) -> crate::error::Result<()> {
    let bin = format!("git-{tool}");
    let text = match shell {
        "bash" => bash(tool),
        "zsh" => generated(cmd, &bin, clap_complete::Shell::Zsh),
        "fish" => generated(cmd, &bin, clap_complete::Shell::Fish),
        other => {
            return Err(crate::error::Error::usage(format!(
                "no completions for {other:?}: bash, zsh or fish"
            )))
        }
    };
    outln!("{}", text.trim_end());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        let mut w: Vec<String> = s.split(' ').map(str::to_string).collect();
        if s.is_empty() {
            w = vec![String::new()];
        }
        w
    }

    fn names(k: Kind, earlier: &[String]) -> Vec<String> {
        match k {
            Kind::Sprint => vec!["SPRINT-001".into()],
            Kind::Criterion => vec!["hello-exists".into()],
            Kind::Series => vec!["main".into()],
            Kind::Round if earlier.first().map(String::as_str) == Some("main") => {
                vec!["code-1".into()]
            }
            Kind::SeriesRound => vec!["main:code-1".into()],
            _ => vec![],
        }
    }

    #[test]
    fn subcommands_options_and_names() {
        let rails = || crate::cli::rails::command();
        let spar = || crate::cli::spar::command();
        let c = candidates(rails(), &words(""), &names);
        assert!(
            c.contains(&"contract".into()) && c.contains(&"gate".into()),
            "{c:?}"
        );
        assert!(
            !c.iter().any(|s| s.starts_with("__")),
            "hidden shown: {c:?}"
        );
        assert_eq!(candidates(rails(), &words("con"), &names), ["contract"]);
        let c = candidates(rails(), &words("contract fr"), &names);
        assert_eq!(c, ["freeze"]);
        assert_eq!(
            candidates(rails(), &words("contract freeze "), &names),
            ["SPRINT-001"]
        );
        let c = candidates(rails(), &words("contract freeze S --"), &names);
        assert!(
            c.contains(&"--bump".into()) && c.contains(&"--json".into()),
            "{c:?}"
        );
        let c = candidates(rails(), &words("evidence red "), &names);
        assert_eq!(c, ["hello-exists", "SPRINT-001"]);
        let c = candidates(rails(), &words("evidence red SPRINT-001 "), &names);
        assert_eq!(c, ["hello-exists"]);
        assert_eq!(candidates(spar(), &words("show "), &names), ["main:code-1"]);
        assert_eq!(
            candidates(spar(), &words("triage main "), &names),
            ["code-1"]
        );
        let c = candidates(spar(), &words("triage main code-1 F1 "), &names);
        assert!(
            c.contains(&"fixed".into()) && c.contains(&"rejected".into()),
            "{c:?}"
        );
        assert_eq!(
            candidates(spar(), &words("run --stage pl"), &names),
            ["plan", "plan-delta"]
        );
        assert_eq!(
            candidates(spar(), &words("gate main:code-1 "), &names),
            ["main:code-1"]
        );
    }
}
