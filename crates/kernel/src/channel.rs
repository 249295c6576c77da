//! The kernel's messages as tether reads them: each frame is the kernel's mark, a
//! `Content-Length` header and a JSON body. A JSON body never holds a raw NUL and the mark
//! starts with one, so after bytes that are not a frame the reader finds the next frame again.

use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::sync::mpsc;

/// The largest message kept: a display is capped far below it by the kernel, so only a tool
/// call's arguments come near; anything larger is skipped without being held.
pub const MAX_MESSAGE: usize = 16 << 20;
/// The longest header after a mark.
const MAX_HEAD: usize = 64;

/// What the channel brought.
#[derive(Debug, PartialEq)]
pub enum Read {
    /// A message.
    Message(Value),
    /// Bytes outside any frame: something other than the kernel wrote on its channel.
    Stray(usize),
    /// A frame that was refused, and why.
    Bad(String),
}

enum State {
    /// Looking for the next mark.
    Seek,
    /// Inside a body of `len` bytes, of which `scanned` were checked for a NUL.
    Body { len: usize, scanned: usize },
    /// Skipping what is left of an oversized body.
    Skip { left: usize },
}

/// A frame parser fed with whatever the pipe gave.
pub struct Frames {
    mark: Vec<u8>,
    buf: Vec<u8>,
    state: State,
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn nul(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| *b == 0)
}

impl Frames {
    /// A parser for frames that start with `mark` (which must start with a NUL).
    pub fn new(mark: &[u8]) -> Frames {
        Frames {
            mark: mark.to_vec(),
            buf: Vec::new(),
            state: State::Seek,
        }
    }

    /// Adds bytes and appends what they complete to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Read>) {
        self.buf.extend_from_slice(bytes);
        loop {
            match self.state {
                State::Skip { left } => {
                    let n = left.min(self.buf.len());
                    match nul(&self.buf[..n]) {
                        Some(i) => {
                            self.buf.drain(..i);
                            self.state = State::Seek;
                        }
                        None => {
                            self.buf.drain(..n);
                            if n < left {
                                self.state = State::Skip { left: left - n };
                                return;
                            }
                            self.state = State::Seek;
                        }
                    }
                }
                State::Seek => {
                    if !self.seek(out) {
                        return;
                    }
                }
                State::Body { len, scanned } => {
                    let have = self.buf.len().min(len);
                    if let Some(i) = nul(&self.buf[scanned..have]) {
                        out.push(Read::Bad("a frame cut short by the next one".into()));
                        self.buf.drain(..scanned + i);
                        self.state = State::Seek;
                        continue;
                    }
                    if self.buf.len() < len {
                        self.state = State::Body { len, scanned: have };
                        return;
                    }
                    let body: Vec<u8> = self.buf.drain(..len).collect();
                    out.push(match serde_json::from_slice(&body) {
                        Ok(value) => Read::Message(value),
                        Err(e) => Read::Bad(format!("a frame that is not JSON ({e})")),
                    });
                    self.state = State::Seek;
                }
            }
        }
    }

    /// Finds a mark and reads the header after it; false when more bytes are needed.
    fn seek(&mut self, out: &mut Vec<Read>) -> bool {
        match find(&self.buf, &self.mark) {
            Some(0) => {}
            Some(at) => {
                out.push(Read::Stray(at));
                self.buf.drain(..at);
            }
            None => {
                // A mark cut by a read boundary waits for the rest of itself.
                let partial = (1..self.mark.len().min(self.buf.len() + 1))
                    .rev()
                    .find(|n| self.buf.ends_with(&self.mark[..*n]))
                    .unwrap_or(0);
                let stray = self.buf.len() - partial;
                if stray > 0 {
                    out.push(Read::Stray(stray));
                    self.buf.drain(..stray);
                }
                return false;
            }
        }
        let m = self.mark.len();
        let window = &self.buf[m..self.buf.len().min(m + MAX_HEAD)];
        let Some(end) = find(window, b"\r\n\r\n") else {
            if window.len() < MAX_HEAD && nul(window).is_none() {
                return false;
            }
            out.push(Read::Bad("a frame without a Content-Length header".into()));
            self.buf.drain(..m);
            return true;
        };
        let head = String::from_utf8_lossy(&window[..end]).to_string();
        let length = head
            .split_once(':')
            .filter(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
            .and_then(|(_, n)| n.trim().parse::<usize>().ok());
        let Some(len) = length else {
            out.push(Read::Bad(format!("a frame header `{}`", head.trim())));
            self.buf.drain(..m);
            return true;
        };
        self.buf.drain(..m + end + 4);
        if len > MAX_MESSAGE {
            out.push(Read::Bad(format!(
                "a message of {len} bytes, over the limit of {} MiB, skipped",
                MAX_MESSAGE >> 20
            )));
            self.state = State::Skip { left: len };
        } else {
            self.state = State::Body { len, scanned: 0 };
        }
        true
    }
}

/// Reads the kernel's channel until it closes; the bounded queue holds the kernel back while
/// no cell reads it, rather than piling its messages up here.
pub async fn read_messages(mut from: pipe::Receiver, mark: Vec<u8>, to: mpsc::Sender<Read>) {
    let mut frames = Frames::new(&mark);
    let mut chunk = vec![0u8; 64 << 10];
    let mut out = Vec::new();
    loop {
        let n = match from.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        frames.feed(&chunk[..n], &mut out);
        for read in out.drain(..) {
            if to.send(read).await.is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    const MARK: &[u8] = b"\0mark\0";

    fn frame(body: &str) -> Vec<u8> {
        let mut f = MARK.to_vec();
        f.extend_from_slice(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
        f
    }

    fn parse(chunks: &[&[u8]]) -> Vec<Read> {
        let mut frames = Frames::new(MARK);
        let mut out = Vec::new();
        for chunk in chunks {
            frames.feed(chunk, &mut out);
        }
        out
    }

    #[test]
    fn frames_split_anywhere_are_read_whole() {
        let mut bytes = frame(r#"{"a":1}"#);
        bytes.extend(frame(r#"{"b":"x\u0000y"}"#));
        for cut in 0..bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(
                parse(&[a, b]),
                vec![
                    Read::Message(json!({"a": 1})),
                    Read::Message(json!({"b": "x\0y"}))
                ],
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn bytes_that_are_not_frames_are_counted_and_the_next_frame_is_found() {
        // Stray bytes, a bare header swallowing nothing, a frame cut short by the next mark,
        // a header that is not Content-Length and a body that is not JSON.
        let mut bytes = b"garbage".to_vec();
        bytes.extend(b"Content-Length: 999\r\n\r\n");
        bytes.extend(frame(r#"{"a":1}"#));
        bytes.extend(MARK);
        bytes.extend(b"Content-Length: 1000\r\n\r\n{\"cut");
        bytes.extend(frame(r#"{"b":2}"#));
        bytes.extend(MARK);
        bytes.extend(b"Hello: x\r\n\r\n");
        bytes.extend(frame("not json"));
        bytes.extend(frame(r#"{"c":3}"#));
        let out = parse(&[&bytes]);
        assert_eq!(out[0], Read::Stray(30));
        assert_eq!(out[1], Read::Message(json!({"a": 1})));
        assert!(matches!(&out[2], Read::Bad(why) if why.contains("cut short")));
        assert_eq!(out[3], Read::Message(json!({"b": 2})));
        assert!(matches!(&out[4], Read::Bad(why) if why.contains("Hello: x")));
        assert_eq!(out[5], Read::Stray(12));
        assert!(matches!(&out[6], Read::Bad(why) if why.contains("not JSON")));
        assert_eq!(out[7], Read::Message(json!({"c": 3})));
        assert_eq!(out.len(), 8);
    }

    #[test]
    fn an_oversized_message_is_skipped_without_being_kept() {
        let big = MAX_MESSAGE + 10;
        let mut frames = Frames::new(MARK);
        let mut out = Vec::new();
        let mut head = MARK.to_vec();
        head.extend(format!("Content-Length: {big}\r\n\r\n").as_bytes());
        frames.feed(&head, &mut out);
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..16 {
            frames.feed(&chunk, &mut out);
            assert!(frames.buf.is_empty(), "the skipped body was kept");
        }
        frames.feed(&[b'x'; 10], &mut out);
        frames.feed(&frame(r#"{"after":true}"#), &mut out);
        assert!(matches!(&out[0], Read::Bad(why) if why.contains("over the limit")));
        assert_eq!(out[1], Read::Message(json!({"after": true})));
        assert_eq!(out.len(), 2);
    }
}
