//! `Content-Length` framing, as the Language Server and Debug Adapter protocols share it:
//! headers, a blank line, then exactly that many bytes of JSON.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use tether_base::cut_line;

/// The largest message read: a server that announces more is treated as broken.
pub const MAX_FRAME: usize = 64 << 20;
/// The longest header line read before the peer is treated as broken.
const MAX_HEADER_LINE: usize = 1024;

/// Why no message could be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The other side closed its output.
    #[error("the other side closed the connection")]
    Closed,
    /// The bytes are not a frame: a header line without `Content-Length`, a bad number, an
    /// oversized message, or a body that is not JSON.
    #[error("garbage on the wire: {0}")]
    Garbage(String),
    /// Reading failed.
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads one framed message's body.
pub async fn read_frame<R: AsyncBufRead + Unpin>(input: &mut R) -> Result<Vec<u8>, FrameError> {
    let mut body = Vec::new();
    read_frame_into(input, &mut body).await?;
    Ok(body)
}

/// Reads one framed message's body into `body`, whose allocation a reader of many messages
/// keeps from one to the next.
pub(crate) async fn read_frame_into<R: AsyncBufRead + Unpin>(
    input: &mut R,
    body: &mut Vec<u8>,
) -> Result<(), FrameError> {
    let mut length = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut *input)
            .take(MAX_HEADER_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 {
            return Err(FrameError::Closed);
        }
        if line.len() > MAX_HEADER_LINE || !line.ends_with(b"\n") {
            return Err(FrameError::Garbage(format!(
                "a header line of over {MAX_HEADER_LINE} bytes"
            )));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            break;
        }
        let Some((name, value)) = text.split_once(':') else {
            return Err(FrameError::Garbage(format!(
                "a header line `{}`",
                cut_line(text, 80)
            )));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let n: usize = value.trim().parse().map_err(|_| {
                FrameError::Garbage(format!("Content-Length `{}`", cut_line(value.trim(), 80)))
            })?;
            length = Some(n);
        }
    }
    let length =
        length.ok_or_else(|| FrameError::Garbage("headers without Content-Length".into()))?;
    if length > MAX_FRAME {
        return Err(FrameError::Garbage(format!(
            "a message of {length} bytes, over the limit of {MAX_FRAME}"
        )));
    }
    body.clear();
    body.resize(length, 0);
    input.read_exact(body).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => FrameError::Closed,
        _ => FrameError::Io(e),
    })?;
    Ok(())
}

/// Writes one message with its header, and flushes.
pub async fn write_frame<W: AsyncWrite + Unpin>(out: &mut W, body: &[u8]) -> std::io::Result<()> {
    let mut frame = Vec::with_capacity(body.len() + 32);
    append_frame(&mut frame, body);
    out.write_all(&frame).await?;
    out.flush().await
}

/// Appends one message with its header to `out`, so several can go in one write.
pub(crate) fn append_frame(out: &mut Vec<u8>, body: &[u8]) {
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    async fn read(bytes: &[u8]) -> Result<Vec<u8>, FrameError> {
        let mut input = tokio::io::BufReader::new(bytes);
        read_frame(&mut input).await
    }

    #[tokio::test]
    async fn frames_round_trip_and_extra_headers_are_ignored() {
        let mut out = Vec::new();
        write_frame(&mut out, br#"{"a":1}"#).await.unwrap();
        assert_eq!(out, b"Content-Length: 7\r\n\r\n{\"a\":1}");
        let typed = b"Content-Type: application/vscode-jsonrpc\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(read(typed).await.unwrap(), b"{}");
    }

    #[tokio::test]
    async fn garbage_and_closed_streams_are_told_apart() {
        assert!(matches!(read(b"").await, Err(FrameError::Closed)));
        assert!(matches!(
            read(b"Content-Length: 5\r\n\r\n{}").await,
            Err(FrameError::Closed)
        ));
        for bad in [
            &b"hello world\r\n\r\n"[..],
            b"Content-Length: x\r\n\r\n",
            b"Content-Type: a\r\n\r\n{}",
            b"Content-Length: 99999999999\r\n\r\n",
        ] {
            let err = read(bad).await.unwrap_err();
            assert!(matches!(err, FrameError::Garbage(_)), "{err}");
        }
        let long = vec![b'x'; 5000];
        assert!(matches!(read(&long).await, Err(FrameError::Garbage(_))));
    }
}
