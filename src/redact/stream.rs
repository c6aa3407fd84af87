//! Redacting output that arrives in chunks: a secret may be split across two reads of a pipe
//! (or two lines of a log), so the last [`HOLD`] bytes are held back until more arrives or the
//! stream ends, and a secret that reaches into them is held back whole.

use super::{replace, Redactor};

/// Bytes held back at the end of what arrived: longer than any token format's usual length
/// and any environment value worth hiding (a PEM key included).
pub const HOLD: usize = 16 * 1024;

/// A stream redactor: [`Stream::push`] each chunk, write what it returns, then write what
/// [`Stream::finish`] returns.
#[derive(Debug)]
pub struct Stream {
    redactor: Redactor,
    pending: Vec<u8>,
    count: usize,
}

impl Stream {
    pub(super) fn new(redactor: Redactor) -> Stream {
        Stream {
            redactor,
            pending: Vec::new(),
            count: 0,
        }
    }

    /// Takes one chunk; returns the redacted bytes that are now safe to write (maybe none).
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(chunk);
        if self.pending.len() <= 2 * HOLD {
            return Vec::new();
        }
        let spans = self.redactor.spans(&self.pending);
        let mut cut = self.pending.len() - HOLD;
        // A secret reaching into the held tail is held back whole.
        if let Some(s) = spans.iter().find(|s| s.start < cut && s.end > cut) {
            cut = s.start;
        }
        let (out, n) = replace(&self.pending, &spans, cut);
        self.count += n;
        self.pending.drain(..cut);
        out
    }

    /// Ends the stream: the rest, redacted, and how many values the whole stream had replaced.
    pub fn finish(mut self) -> (Vec<u8>, usize) {
        let (out, n) = self.redactor.bytes(&self.pending);
        self.count += n;
        (out, self.count)
    }
}
