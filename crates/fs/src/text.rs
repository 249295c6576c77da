//! Decoding and re-encoding text files without losing their shape.

use crate::FsError;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// How a text file is shaped (BOM, CRLF line endings, final newline), so a rewrite can keep it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TextShape {
    /// The file starts with a UTF-8 byte-order mark.
    pub bom: bool,
    /// Every line break of the file is CRLF. A file that mixes CRLF and LF is left as it is:
    /// its text keeps its `\r\n` where they are and `crlf` is false.
    pub crlf: bool,
    /// The file ends with a line break.
    pub final_newline: bool,
}

/// Decodes bytes to text with the BOM stripped and (in an all-CRLF file) CRLF turned into LF,
/// plus the shape to restore.
///
/// Fails with [`FsError::NotUtf8`] carrying the byte offset (in `bytes`) of the first bad byte.
pub fn decode_text(path_for_errors: &str, bytes: &[u8]) -> Result<(String, TextShape), FsError> {
    let bom = bytes.starts_with(BOM);
    let body = if bom { &bytes[BOM.len()..] } else { bytes };
    let text = std::str::from_utf8(body).map_err(|e| FsError::NotUtf8 {
        path: path_for_errors.into(),
        offset: e.valid_up_to() + if bom { BOM.len() } else { 0 },
    })?;
    let breaks = text.matches('\n').count();
    let crlfs = text.matches("\r\n").count();
    let shape = TextShape {
        bom,
        crlf: crlfs > 0 && crlfs == breaks,
        final_newline: text.ends_with('\n'),
    };
    let text = if shape.crlf {
        text.replace("\r\n", "\n")
    } else {
        text.to_owned()
    };
    Ok((text, shape))
}

/// Inverse of [`decode_text`]: applies CRLF, BOM and the final-newline choice to LF text
/// (every `\n` becomes `\r\n` in a CRLF file, so pass text without CRLF).
///
/// Empty text stays empty (apart from a BOM).
pub fn encode_text(text: &str, shape: TextShape) -> Vec<u8> {
    let mut body = text;
    if !shape.final_newline
        && let Some(without) = body.strip_suffix('\n')
    {
        body = without.strip_suffix('\r').unwrap_or(without);
    }
    let add_newline = shape.final_newline && !body.is_empty() && !body.ends_with('\n');
    let mut out = Vec::with_capacity(body.len() + body.len() / 16 + 4);
    if shape.bom {
        out.extend_from_slice(BOM);
    }
    if shape.crlf {
        // The text is LF-normalized, so a `\r` just before a `\n` is content: keep it.
        for &b in body.as_bytes() {
            if b == b'\n' {
                out.push(b'\r');
            }
            out.push(b);
        }
    } else {
        out.extend_from_slice(body.as_bytes());
    }
    if add_newline {
        if shape.crlf {
            out.push(b'\r');
        }
        out.push(b'\n');
    }
    out
}
