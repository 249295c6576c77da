//! Newline-delimited input with a cap, the one loop both the MCP stdio reader and the warm
//! host's socket use: a line past the cap is never buffered whole.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// How [`read_line_capped`] ended.
#[derive(Debug, PartialEq, Eq)]
pub enum CappedLine {
    /// A whole line is in the buffer, without its line break (a last line without one counts).
    Line,
    /// The input ended with nothing read.
    End,
    /// The line is longer than the cap: its first bytes are in the buffer, the rest is unread.
    Over,
}

/// Reads into `buf` (cleared first) up to the next line break, keeping at most `cap` bytes.
pub async fn read_line_capped(
    input: &mut (impl AsyncBufRead + Unpin),
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<CappedLine> {
    buf.clear();
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(match buf.is_empty() {
                true => CappedLine::End,
                false => CappedLine::Line,
            });
        }
        let newline = chunk.iter().position(|&b| b == b'\n');
        let take = newline.unwrap_or(chunk.len());
        if buf.len() + take > cap {
            return Ok(CappedLine::Over);
        }
        buf.extend_from_slice(&chunk[..take]);
        input.consume(newline.map_or(take, |n| n + 1));
        if newline.is_some() {
            return Ok(CappedLine::Line);
        }
    }
}
