//! Refusals name the next step as a shell command (`git rails evidence red s1 c1`); an agent
//! talking MCP calls tools instead. This rewrites each command that has a tool into the tool
//! call ("call evidence with kind red, sprint s1, criterion c1") and leaves the rest of the
//! text word for word. A command with no tool (`contract freeze`, `bind`) stays a command.

/// `text` with every `git rails …` / `git spar …` command that has a tool named as that call.
pub fn rewrite(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    loop {
        let at = [rest.find("git rails "), rest.find("git spar ")]
            .into_iter()
            .flatten()
            .min();
        let Some(at) = at else {
            out.push_str(rest);
            return out;
        };
        let (before, from) = rest.split_at(at);
        let spar = from.starts_with("git spar ");
        let after = &from[if spar { 9 } else { 10 }..];
        let tokens = tokenize(after);
        match call_for(spar, &tokens) {
            Some((call, used)) => {
                // A command quoted in backticks loses its backticks with it.
                let before = before.strip_suffix('`').unwrap_or(before);
                let quoted = before.len() != rest[..at].len();
                // "run `git rails …` again" becomes "call … again", not "run call …".
                let before = before
                    .strip_suffix("run ")
                    .or_else(|| before.strip_suffix("with "))
                    .map(|b| {
                        b.to_string()
                            + if before.ends_with("with ") {
                                "with: "
                            } else {
                                ""
                            }
                    })
                    .unwrap_or_else(|| before.to_string());
                out.push_str(&before);
                out.push_str(&call);
                let mut tail = &after[used..];
                if quoted {
                    tail = tail.strip_prefix('`').unwrap_or(tail);
                }
                rest = tail;
            }
            None => {
                out.push_str(before);
                out.push_str(&from[..4]);
                rest = &from[4..];
            }
        }
    }
}

/// One word of a command and the byte offset just after it.
struct Token {
    word: String,
    end: usize,
}

/// Words up to a backtick or the end of the line; a `"…"` word is one word.
fn tokenize(s: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b' ' => i += 1,
            b'`' | b'\n' => break,
            b'"' => {
                let Some(close) = s[i + 1..].find('"') else {
                    break;
                };
                let end = i + 1 + close + 1;
                tokens.push(Token {
                    word: s[i..end].to_string(),
                    end,
                });
                i = end;
            }
            _ => {
                let len = s[i..].find([' ', '`', '\n']).unwrap_or(s.len() - i);
                let mut word = &s[i..i + len];
                // Sentence punctuation after a command is not part of its last word.
                let trimmed = word.trim_end_matches(['.', ',', ';', ':', ')']);
                let end = i + trimmed.len();
                word = trimmed;
                if word.is_empty() {
                    break;
                }
                tokens.push(Token {
                    word: word.to_string(),
                    end,
                });
                if trimmed.len() != len {
                    break;
                }
                i += len;
            }
        }
    }
    tokens
}

fn positional(t: &Token) -> bool {
    !t.word.starts_with('-') && !t.word.starts_with('"') && !t.word.starts_with('<')
}

/// The tool call for the command in `t`, and how many bytes of the text it took.
fn call_for(spar: bool, t: &[Token]) -> Option<(String, usize)> {
    let w = |i: usize| t.get(i).map(|x| x.word.as_str());
    if spar {
        let tool = match w(0)? {
            "show" => "spar_show",
            "gate" => "spar_gate",
            // A person's decision (signed, with the user's words) has no tool: it stays the
            // command a person runs.
            "triage"
                if !t.iter().any(|x| {
                    matches!(
                        x.word.as_str(),
                        "--sign" | "--user-quote" | "accepted" | "deferred" | "answered"
                    )
                }) =>
            {
                "spar_triage"
            }
            "record" => "spar_record",
            _ => return None,
        };
        return Some((format!("call {tool}"), spar_end(t)));
    }
    match w(0)? {
        "evidence" => {
            let kind = w(1)?;
            if !["red", "green", "surface", "cleanup", "reopen", "recheck"].contains(&kind) {
                return None;
            }
            let mut end = t[1].end;
            let mut pos = Vec::new();
            let mut i = 2;
            while let Some(x) = t.get(i) {
                if pos.len() < 2 && positional(x) && !x.word.contains("<") {
                    pos.push(x.word.clone());
                    end = x.end;
                    i += 1;
                } else {
                    break;
                }
            }
            let mut opts = Vec::new();
            while let (Some(flag), Some(val)) = (t.get(i), t.get(i + 1)) {
                let name = match flag.word.as_str() {
                    "--note" => "note",
                    "--path" => "path",
                    "--because" => "because",
                    _ => break,
                };
                opts.push(format!("{name} {}", val.word));
                end = val.end;
                i += 2;
            }
            let mut call = format!("call evidence with kind {kind}");
            match pos.as_slice() {
                [s, c] => call.push_str(&format!(", sprint {s}, criterion {c}")),
                [c] => call.push_str(&format!(", criterion {c}")),
                _ => {}
            }
            for o in opts {
                call.push_str(&format!(", {o}"));
            }
            Some((call, end))
        }
        tool @ ("status" | "gate" | "verify") => {
            let mut call = format!("call {tool}");
            let mut end = t[0].end;
            if let Some(s) = t.get(1).filter(|x| positional(x)) {
                call.push_str(&format!(" with sprint {}", s.word));
                end = s.end;
            }
            if tool == "verify" {
                if let Some(r) = t.iter().skip(1).take(2).find(|x| x.word == "--rerun") {
                    call.push_str(" and rerun true");
                    end = end.max(r.end);
                }
            }
            Some((call, end))
        }
        "contract" => match w(1)? {
            "list" => Some(("call contracts".to_string(), t[1].end)),
            "show" | "validate" => {
                let tool = if w(1)? == "show" {
                    "contracts"
                } else {
                    "validate"
                };
                let s = t.get(2).filter(|x| positional(x))?;
                Some((format!("call {tool} with sprint {}", s.word), s.end))
            }
            _ => None,
        },
        _ => None,
    }
}

/// A spar command is named by its verb; its arguments run to the end of the quoted command.
fn spar_end(t: &[Token]) -> usize {
    t.iter()
        .take_while(|x| !x.word.is_empty())
        .last()
        .map(|x| x.end)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn failing_first_names_the_evidence_call() {
        assert_eq!(
            rewrite("Failing-first violation: criterion \"c1\" is pending. Capture the failure before implementing: git rails evidence red s1 c1"),
            "Failing-first violation: criterion \"c1\" is pending. Capture the failure before implementing: call evidence with kind red, sprint s1, criterion c1"
        );
    }

    #[test]
    fn backticks_options_and_punctuation() {
        assert_eq!(
            rewrite("see `git rails status s1`."),
            "see call status with sprint s1."
        );
        assert_eq!(
            rewrite("reopen it with git rails evidence reopen s1 c1 --note \"<what changed>\" and earn RED again"),
            "reopen it with: call evidence with kind reopen, sprint s1, criterion c1, note \"<what changed>\" and earn RED again"
        );
        assert_eq!(
            rewrite("make it pass, then run `git rails evidence green s1 c1` again"),
            "make it pass, then call evidence with kind green, sprint s1, criterion c1 again"
        );
        assert_eq!(
            rewrite("then run `git rails contract freeze s1 --bump`"),
            "then run `git rails contract freeze s1 --bump`"
        );
    }

    #[test]
    fn a_persons_decision_stays_the_command_a_person_runs() {
        for c in [
            "a person runs `git spar waive s code-1 claude --user-quote \"<their words>\" --sign`",
            "a person runs `git spar triage s code-1 a-F1 accepted --user-quote \"<w>\" --sign`",
        ] {
            assert_eq!(rewrite(c), c);
        }
        assert_eq!(
            rewrite("see `git spar triage s code-1 a-F1 fixed`"),
            "see call spar_triage"
        );
    }
}
