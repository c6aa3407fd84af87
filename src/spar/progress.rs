//! Progress of a round's reviewers: on a terminal one line per reviewer (its state and elapsed
//! time, redrawn in place); elsewhere (CI, hooks) one log line per event, which the caller
//! prints.

use std::io::Write;
use std::time::{Duration, Instant};

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
    drawn: usize,
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
            drawn: 0,
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

    /// Redraws the lines in place on stderr.
    pub fn draw(&mut self) {
        let mut err = std::io::stderr().lock();
        let mut s = String::new();
        if self.drawn > 0 {
            s.push_str(&format!("\x1b[{}A", self.drawn));
        }
        for l in self.render() {
            s.push_str("\x1b[2K");
            s.push_str(&l);
            s.push('\n');
        }
        let _ = err.write_all(s.as_bytes());
        let _ = err.flush();
        self.drawn = self.lines.len();
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
