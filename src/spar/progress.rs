//! Progress of a round's reviewers: on a terminal one line per reviewer (its state and elapsed
//! time, redrawn in place); elsewhere (CI, hooks) one log line per event. The library never
//! prints: it hands lines and the board's lines to a [`Reporter`] its caller owns (the CLI
//! writes them to stderr, an MCP tool drops them).

use std::time::{Duration, Instant};

/// Where a long write tells a person what it is doing.
pub trait Reporter {
    /// One line (`spar: …`).
    fn line(&mut self, text: &str);

    /// Whether the reviewers' board is shown in place (a terminal) instead of a line per event.
    fn live(&self) -> bool {
        false
    }

    /// Shows the board's lines in place of the ones shown before; called only when [`live`].
    ///
    /// [`live`]: Reporter::live
    fn board(&mut self, _lines: &[String]) {}
}

/// A closure is a reporter of lines.
impl<F: FnMut(&str)> Reporter for F {
    fn line(&mut self, text: &str) {
        self(text)
    }
}

/// One reviewer's line.
#[derive(Debug, Clone)]
struct Line {
    name: String,
    state: String,
    last: String,
    started: Instant,
    ended: Option<Duration>,
}

/// The reviewers' lines on a terminal.
pub struct Board {
    lines: Vec<Line>,
}

impl Board {
    pub fn new(names: &[&str]) -> Board {
        let now = Instant::now();
        Board {
            lines: names
                .iter()
                .map(|n| Line {
                    name: n.to_string(),
                    state: "running".into(),
                    last: String::new(),
                    started: now,
                    ended: None,
                })
                .collect(),
        }
    }

    /// Notes an event of reviewer `i`.
    pub fn event(&mut self, i: usize, text: &str) {
        if let Some(l) = self.lines.get_mut(i) {
            l.last = text.to_string();
        }
    }

    /// Notes that reviewer `i` ended with `status`.
    pub fn done(&mut self, i: usize, status: &str) {
        if let Some(l) = self.lines.get_mut(i) {
            l.state = status.to_string();
            l.ended = Some(l.started.elapsed());
        }
    }

    /// The lines as they read now.
    pub fn render(&self) -> Vec<String> {
        let width = self.lines.iter().map(|l| l.name.len()).max().unwrap_or(0);
        self.lines
            .iter()
            .map(|l| {
                let secs = l.ended.unwrap_or_else(|| l.started.elapsed()).as_secs();
                let mut last: String = l.last.chars().take(60).collect();
                if l.ended.is_some() {
                    last.clear();
                }
                format!(
                    "  {:<width$}  {:<15} {:>4}s  {}",
                    l.name, l.state, secs, last
                )
                .trim_end()
                .to_string()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Board;

    #[test]
    fn one_line_per_reviewer_with_state_and_time() {
        let mut b = Board::new(&["claude", "cx"]);
        b.event(0, "tool Read");
        b.done(1, "unavailable");
        let lines = b.render();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].contains("claude") && lines[0].contains("running"));
        assert!(lines[0].contains("0s") && lines[0].ends_with("tool Read"));
        assert!(lines[1].contains("unavailable"), "{lines:?}");
    }
}
