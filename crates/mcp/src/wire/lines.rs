//! Newline-delimited input with a cap: a line over the cap is read through and dropped as it
//! streams by, keeping only what it takes to find its id, so no client can make us buffer it.

use tether_proc::{CappedLine, read_line_capped};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use super::scan::IdScan;

/// One line of input.
pub(crate) enum Line {
    /// A whole line, without its line break.
    Text(Vec<u8>),
    /// A line over the cap, already discarded.
    TooLong {
        /// Its length in bytes.
        len: u64,
        /// Its id as JSON text, `null` when none could be found.
        id: String,
    },
}

/// Reads capped lines from `inner`.
pub(crate) struct LineReader<R> {
    inner: R,
    max: usize,
    buf: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(inner: R, max: usize) -> Self {
        LineReader {
            inner,
            max,
            buf: Vec::new(),
        }
    }

    /// The next line; `None` at end of input. A last line without a line break still counts.
    pub(crate) async fn next(&mut self) -> std::io::Result<Option<Line>> {
        match read_line_capped(&mut self.inner, &mut self.buf, self.max).await? {
            CappedLine::Line => Ok(Some(Line::Text(std::mem::take(&mut self.buf)))),
            CappedLine::End => Ok(None),
            CappedLine::Over => {
                let mut scan = IdScan::new();
                scan.feed(&self.buf);
                let len = self.buf.len() as u64;
                self.buf = Vec::new();
                self.discard(scan, len).await.map(Some)
            }
        }
    }

    /// Reads the rest of an oversized line through `scan`, up to and including its line break.
    async fn discard(&mut self, mut scan: IdScan, mut len: u64) -> std::io::Result<Line> {
        loop {
            let chunk = self.inner.fill_buf().await?;
            if chunk.is_empty() {
                break;
            }
            let newline = chunk.iter().position(|&b| b == b'\n');
            let take = newline.unwrap_or(chunk.len());
            scan.feed(&chunk[..take]);
            len += take as u64;
            self.inner.consume(newline.map_or(take, |n| n + 1));
            if newline.is_some() {
                break;
            }
        }
        Ok(Line::TooLong {
            len,
            id: scan.finish(),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<String> {
        // A small buffer, so lines span many reads.
        let reader = tokio::io::BufReader::with_capacity(7, input);
        let mut lines = LineReader::new(reader, max);
        let mut out = Vec::new();
        while let Some(line) = lines.next().await.unwrap() {
            out.push(match line {
                Line::Text(t) => String::from_utf8(t).unwrap(),
                Line::TooLong { len, id } => format!("too long: {len} bytes, id {id}"),
            });
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_and_keeps_a_last_line_without_a_break() {
        assert_eq!(
            lines(b"a\n\nbc\r\nlast", 100).await,
            ["a", "", "bc\r", "last"]
        );
    }

    #[tokio::test]
    async fn an_oversized_line_is_dropped_with_its_id_and_the_next_line_survives() {
        let mut input = br#"{"params":{"content":""#.to_vec();
        input.extend(std::iter::repeat_n(b'x', 500));
        input.extend(br#""},"id":"late"}"#);
        input.extend(b"\n{\"id\":2}\n");
        let got = lines(&input, 64).await;
        assert_eq!(
            got[0],
            format!("too long: {} bytes, id \"late\"", input.len() - 10)
        );
        assert_eq!(got[1], r#"{"id":2}"#);
        assert_eq!(got.len(), 2);
    }

    #[tokio::test]
    async fn a_line_of_exactly_the_cap_is_kept() {
        assert_eq!(
            lines(b"12345\n123456\n", 5).await,
            ["12345", "too long: 6 bytes, id null"]
        );
    }
}
