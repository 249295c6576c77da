//! What one cell produced, in order: its output on 1 and 2, what it displayed, its echoed last
//! expression and its error; capped, saying what was cut, and rendered for a model.

use std::collections::VecDeque;
use std::time::Duration;

use crate::message::Displayed;
use base64::Engine;
use tether_tool::ToolOutput;

/// Output kept from a cell's start.
const HEAD: usize = 16 << 10;
/// Output kept from a cell's end, once the head is full.
const TAIL: usize = 8 << 10;
/// The largest image shown: a model's API takes about 5 MB per image, and a figure is far less.
pub const MAX_PNG: usize = 4 << 20;
/// What one cell's displays may hold in all: text, images, and how many.
const SHOWN_TEXT: usize = 64 << 10;
const SHOWN_PNG: usize = 16 << 20;
const SHOWN_COUNT: usize = 200;
/// Notes kept per cell, past which they are only counted.
const MAX_NOTES: usize = 8;

/// The line that stands where output was cut, the same for printed and displayed output.
fn cut_note(cut: usize) -> String {
    format!(
        "[… {cut} bytes of output cut; the first {} KiB and the last {} KiB are kept …]",
        HEAD >> 10,
        TAIL >> 10
    )
}

/// What a cell interrupted for its silence says.
pub fn interrupted_note(after: Duration) -> String {
    format!(
        "interrupted after {} s without output (`[eval] idle_timeout_s`); the kernel and its \
         variables are kept",
        after.as_secs()
    )
}

/// `text` cut like printed output when it is longer than the head and the tail together.
fn capped(text: &str) -> String {
    if text.len() <= HEAD + TAIL {
        return text.to_string();
    }
    let mut head = HEAD;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - TAIL;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n{}\n{}",
        &text[..head],
        cut_note(tail - head),
        &text[tail..]
    )
}

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
    /// Where the kernel's display numbered so was called, between what it printed.
    Slot(u64),
}

#[derive(Debug)]
enum Shown {
    Text(String),
    Png(Vec<u8>),
    /// Where the displays past the cell's budget begin.
    Cut,
    /// Where the kernel began this cell: what comes before is another cell's or nobody's.
    Begin,
}

/// One cell's results.
#[derive(Debug, Default)]
pub struct Cell {
    /// The bytes `display` writes to stdout where it is called (a kernel's own, unguessable),
    /// each followed by the display's number and a NUL.
    mark: Vec<u8>,
    /// The end of stdout read so far that may be the start of a mark.
    carry: Vec<u8>,
    /// Marks seen so far.
    marks: usize,
    /// What `display` showed, by number, and whether a past cell sent it.
    shown: Vec<(u64, Shown, bool)>,
    pieces: Vec<Piece>,
    /// Output bytes kept in `pieces`.
    head: usize,
    /// The last output once the head is full.
    tail: VecDeque<u8>,
    /// Output bytes dropped between the head and the tail.
    cut: usize,
    /// The echoed value of the last expression.
    echo: Option<Shown>,
    /// Displayed text and image bytes kept so far.
    shown_bytes: (usize, usize),
    /// Displays dropped past the budget, and their bytes.
    dropped: (usize, usize),
    /// What tether saw go wrong on the kernel's channel, with how often.
    notes: Vec<(String, usize)>,
    /// Set when an earlier cell's real `done` came during this one: what came before this
    /// cell's begin is that cell's.
    stale: bool,
    /// The traceback, when the cell raised.
    pub error: Option<String>,
    /// The error's kind and message on one line, to head the result.
    pub summary: Option<String>,
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
            let after = &rest[at + self.mark.len()..];
            let number = after.iter().take(21).position(|b| *b == 0);
            if number.is_none() && after.len() < 21 {
                // The number is still to come.
                break;
            }
            self.keep(Stream::Stdout, &rest[..at]);
            let parsed =
                number.and_then(|end| std::str::from_utf8(&after[..end]).ok()?.parse().ok());
            // Marks past the displays' budget have nothing to show.
            if let Some(n) = parsed
                && self.marks <= SHOWN_COUNT + 1
            {
                self.pieces.push(Piece::Slot(n));
                self.marks += 1;
            }
            rest = &after[number.map_or(0, |end| end + 1)..];
        }
        // A mark cut by a read boundary, or waiting for its number, waits for the rest.
        let partial = match find(rest, &self.mark) {
            Some(at) => rest.len() - at,
            None => (1..self.mark.len().min(rest.len() + 1))
                .rev()
                .find(|n| rest.ends_with(&self.mark[..*n]))
                .unwrap_or(0),
        };
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

    /// Adds a `display` message from the kernel (`past` when an earlier cell sent it), capped
    /// like output; an echo is kept apart, to come last; past the budget displays are counted.
    pub fn display(&mut self, message: &Displayed, past: bool) {
        let number = message.n.unwrap_or(u64::MAX);
        let data = message.data.as_str();
        let shown = match message.mime.as_deref() {
            Some("image/png") if data.len() / 4 * 3 > MAX_PNG => Shown::Text(format!(
                "[an image of about {} bytes was not shown: over tether's limit of {} MiB for \
                 one image]",
                data.len() / 4 * 3,
                MAX_PNG >> 20
            )),
            Some("image/png") => match base64::engine::general_purpose::STANDARD.decode(data) {
                Ok(png) => Shown::Png(png),
                Err(_) => Shown::Text("[an image that could not be decoded]".into()),
            },
            _ => Shown::Text(capped(data)),
        };
        if message.echo {
            self.echo = Some(shown);
            return;
        }
        let (text, png) = match &shown {
            Shown::Text(t) => (t.len(), 0),
            Shown::Png(p) => (0, p.len()),
            Shown::Cut | Shown::Begin => (0, 0),
        };
        let over = self.dropped.0 > 0
            // The cell's begin has a place among them too.
            || self.shown.len() > SHOWN_COUNT
            || self.shown_bytes.0 + text > SHOWN_TEXT
            || self.shown_bytes.1 + png > SHOWN_PNG;
        if !over {
            self.shown_bytes.0 += text;
            self.shown_bytes.1 += png;
            self.shown.push((number, shown, past));
            return;
        }
        if self.dropped.0 == 0 {
            self.shown.push((number, Shown::Cut, past));
        }
        self.dropped.0 += 1;
        self.dropped.1 += text + png;
    }

    /// Records something wrong on the kernel's channel, to be said with the result.
    pub fn note(&mut self, what: String) {
        if let Some(seen) = self.notes.iter_mut().find(|(n, _)| *n == what) {
            seen.1 += 1;
        } else if self.notes.len() < MAX_NOTES {
            self.notes.push((what, 1));
        }
    }

    /// Marks where the kernel began this cell; it comes like a display, so it has its place.
    pub fn begin(&mut self, n: Option<u64>) {
        let number = n.unwrap_or(u64::MAX);
        self.shown.push((number, Shown::Begin, false));
    }

    /// Says that an earlier cell ran on after its end was signalled early: what came before
    /// this cell's begin is that cell's and is not shown.
    pub fn earlier_done(&mut self) {
        self.stale = true;
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
        let dropped = self.dropped;
        let cut_shown = |text: &mut Vec<String>| {
            text.push(format!(
                "[… {} more displays ({} bytes) not shown: a cell shows at most {SHOWN_COUNT} \
                 displays, {} KiB of displayed text and {} MiB of images …]",
                dropped.0,
                dropped.1,
                SHOWN_TEXT >> 10,
                SHOWN_PNG >> 20
            ));
        };
        let mut pieces = self.pieces;
        let mut shown = self.shown;
        if self.stale {
            let begin = shown
                .iter()
                .rfind(|(_, s, _)| matches!(s, Shown::Begin))
                .map(|(n, _, _)| *n);
            let begun = pieces
                .iter()
                .rposition(|p| matches!(p, Piece::Slot(n) if Some(*n) == begin));
            let skipped: usize = pieces[..begun.unwrap_or(0)]
                .iter()
                .map(|p| match p {
                    Piece::Output(_, bytes) => bytes.len(),
                    Piece::Slot(_) => 0,
                })
                .sum();
            pieces.drain(..begun.unwrap_or(0));
            shown.retain(|(_, _, past)| !past);
            text.push(format!(
                "[tether: the previous cell's end was signalled early on the kernel's channel \
                 (something wrote there), and it ran on: the {skipped} bytes of output and the \
                 displays it made after that are not shown]"
            ));
        }
        let mut shown: Vec<(u64, Option<Shown>)> =
            shown.into_iter().map(|(n, s, _)| (n, Some(s))).collect();
        for piece in pieces {
            match piece {
                Piece::Output(_, bytes) => {
                    let printed = String::from_utf8_lossy(&bytes);
                    text.push(printed.trim_end_matches('\n').to_string());
                }
                Piece::Slot(n) => match shown
                    .iter_mut()
                    .find(|(k, _)| *k == n)
                    .and_then(|(_, s)| s.take())
                {
                    Some(Shown::Text(t)) => text.push(t),
                    Some(Shown::Png(png)) => {
                        flush(&mut text, &mut out);
                        out.push_png(png);
                    }
                    Some(Shown::Cut) => cut_shown(&mut text),
                    Some(Shown::Begin) | None => {}
                },
            }
        }
        // A display whose mark never came (its kernel died first) still shows, at the end.
        for left in shown.into_iter().filter_map(|(_, s)| s) {
            match left {
                Shown::Text(t) => text.push(t),
                Shown::Png(png) => {
                    flush(&mut text, &mut out);
                    out.push_png(png);
                }
                Shown::Cut => cut_shown(&mut text),
                Shown::Begin => {}
            }
        }
        if !self.tail.is_empty() {
            let tail: Vec<u8> = self.tail.into_iter().collect();
            text.push(cut_note(self.cut));
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
            Some(Shown::Cut | Shown::Begin) | None => {}
        }
        for (note, times) in self.notes {
            let times = match times {
                1 => String::new(),
                n => format!(" ({n} times)"),
            };
            text.push(format!("[tether: {note}{times}]"));
        }
        if let Some(after) = self.interrupted_after {
            text.push(interrupted_note(after));
        }
        flush(&mut text, &mut out);
        (out, self.error)
    }
}
