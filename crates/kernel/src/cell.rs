//! What one cell produced, in order: its output on 1 and 2, what it displayed, its echoed last
//! expression and its error; capped, saying what was cut, and rendered for a model.

use std::collections::VecDeque;
use std::time::Duration;

use base64::Engine;
use serde_json::Value;
use tether_tool::ToolOutput;

/// Output kept from a cell's start.
const HEAD: usize = 16 << 10;
/// Output kept from a cell's end, once the head is full.
const TAIL: usize = 8 << 10;

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Which descriptor output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

#[derive(Debug)]
enum Piece {
    Output(Stream, Vec<u8>),
    /// Where the kernel's n-th `display` was called, between what it printed.
    Slot(usize),
}

#[derive(Debug)]
enum Shown {
    Text(String),
    Png(Vec<u8>),
}

/// One cell's results.
#[derive(Debug, Default)]
pub struct Cell {
    /// The bytes `display` writes to stdout where it is called (a kernel's own, unguessable).
    mark: Vec<u8>,
    /// The end of stdout read so far that may be the start of a mark.
    carry: Vec<u8>,
    /// Marks seen so far.
    marks: usize,
    /// What `display` showed, by call.
    shown: Vec<Shown>,
    pieces: Vec<Piece>,
    /// Output bytes kept in `pieces`.
    head: usize,
    /// The last output once the head is full.
    tail: VecDeque<u8>,
    /// Output bytes dropped between the head and the tail.
    cut: usize,
    /// The echoed value of the last expression.
    echo: Option<Shown>,
    /// The traceback, when the cell raised.
    pub error: Option<String>,
    /// Set when the cell was interrupted for being silent this long.
    pub interrupted_after: Option<Duration>,
}

impl Cell {
    /// A cell whose displays are placed where `mark` shows in its stdout.
    pub fn new(mark: &[u8]) -> Cell {
        Cell {
            mark: mark.to_vec(),
            ..Cell::default()
        }
    }

    /// Adds output; on stdout, each mark becomes the place of the next display.
    pub fn push(&mut self, stream: Stream, bytes: &[u8]) {
        if stream == Stream::Stderr || self.mark.is_empty() {
            self.keep(stream, bytes);
            return;
        }
        let mut data = std::mem::take(&mut self.carry);
        data.extend_from_slice(bytes);
        let mut rest = &data[..];
        while let Some(at) = find(rest, &self.mark) {
            self.keep(Stream::Stdout, &rest[..at]);
            self.pieces.push(Piece::Slot(self.marks));
            self.marks += 1;
            rest = &rest[at + self.mark.len()..];
        }
        // A mark cut by a read boundary waits for the rest of itself.
        let partial = (1..self.mark.len().min(rest.len() + 1))
            .rev()
            .find(|n| rest.ends_with(&self.mark[..*n]))
            .unwrap_or(0);
        let (now, later) = rest.split_at(rest.len() - partial);
        self.keep(Stream::Stdout, now);
        self.carry = later.to_vec();
    }

    /// Output that turned out not to start a mark, at the cell's end.
    pub fn finish(&mut self) {
        let carry = std::mem::take(&mut self.carry);
        self.keep(Stream::Stdout, &carry);
    }

    /// Keeps output: the first [`HEAD`] and the last [`TAIL`] bytes.
    fn keep(&mut self, stream: Stream, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let room = HEAD - self.head;
        let (kept, rest) = bytes.split_at(bytes.len().min(room));
        if !kept.is_empty() {
            self.head += kept.len();
            match self.pieces.last_mut() {
                Some(Piece::Output(s, text)) if *s == stream => text.extend_from_slice(kept),
                _ => self.pieces.push(Piece::Output(stream, kept.to_vec())),
            }
        }
        for byte in rest {
            if self.tail.len() == TAIL {
                self.tail.pop_front();
                self.cut += 1;
            }
            self.tail.push_back(*byte);
        }
    }

    /// Adds a `display` message from the kernel; an echo is kept apart, to come last.
    pub fn display(&mut self, message: &Value) {
        let data = message["data"].as_str().unwrap_or("");
        let shown = match message["mime"].as_str() {
            Some("image/png") => match base64::engine::general_purpose::STANDARD.decode(data) {
                Ok(png) => Shown::Png(png),
                Err(_) => Shown::Text("[an image that could not be decoded]".into()),
            },
            _ => Shown::Text(data.to_string()),
        };
        match message["echo"].as_bool() {
            Some(true) => self.echo = Some(shown),
            _ => self.shown.push(shown),
        }
    }

    /// The cell as text blocks and images, in order; the echo comes last, as `Out:`.
    pub fn render(self, first_line: Option<String>) -> (ToolOutput, Option<String>) {
        let mut out = ToolOutput::default();
        let mut text: Vec<String> = first_line.into_iter().collect();
        let flush = |text: &mut Vec<String>, out: &mut ToolOutput| {
            if !text.is_empty() {
                out.push_text(text.join("\n"));
                text.clear();
            }
        };
        let mut shown: Vec<Option<Shown>> = self.shown.into_iter().map(Some).collect();
        for piece in self.pieces {
            match piece {
                Piece::Output(_, bytes) => {
                    let printed = String::from_utf8_lossy(&bytes);
                    text.push(printed.trim_end_matches('\n').to_string());
                }
                Piece::Slot(n) => match shown.get_mut(n).and_then(Option::take) {
                    Some(Shown::Text(t)) => text.push(t),
                    Some(Shown::Png(png)) => {
                        flush(&mut text, &mut out);
                        out.push_png(png);
                    }
                    None => {}
                },
            }
        }
        // A display whose mark never came (its kernel died first) still shows, at the end.
        for left in shown.into_iter().flatten() {
            match left {
                Shown::Text(t) => text.push(t),
                Shown::Png(png) => {
                    flush(&mut text, &mut out);
                    out.push_png(png);
                }
            }
        }
        if !self.tail.is_empty() {
            let tail: Vec<u8> = self.tail.into_iter().collect();
            text.push(format!(
                "[… {} bytes of output cut; the first {} KiB and the last {} KiB are kept …]",
                self.cut,
                HEAD >> 10,
                TAIL >> 10
            ));
            text.push(
                String::from_utf8_lossy(&tail)
                    .trim_end_matches('\n')
                    .to_string(),
            );
        }
        match self.echo {
            Some(Shown::Text(echo)) => text.push(format!("Out: {echo}")),
            Some(Shown::Png(png)) => {
                flush(&mut text, &mut out);
                out.push_png(png);
            }
            None => {}
        }
        if let Some(after) = self.interrupted_after {
            text.push(format!(
                "interrupted after {} s without output (`[eval] idle_timeout_s`); the kernel and \
                 its variables are kept",
                after.as_secs()
            ));
        }
        flush(&mut text, &mut out);
        (out, self.error)
    }
}
