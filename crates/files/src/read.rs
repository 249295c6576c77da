use schemars::JsonSchema;
use serde::Deserialize;
use tether_base::cut_line;
use tether_fs::FsError;
use tether_tool::{CallCx, Concurrency, Tier, Tool, ToolError, ToolOutput, counted};

use tether_fs::suggest::did_you_mean;

/// Lines shown when the caller gives no `limit`.
const DEFAULT_LIMIT: usize = 2000;
/// Characters of one line shown before it is cut with a mark.
const MAX_LINE_CHARS: usize = 2000;
/// Characters of output after which `read` stops adding lines and says where to continue.
const MAX_OUTPUT_CHARS: usize = 100_000;
/// Regular files up to this size are read on the calling task, not the blocking pool.
const INLINE_BYTES: u64 = 256 * 1024;
/// Bytes looked at to tell a binary file from text.
const SNIFF_BYTES: usize = 8192;

/// `read`: numbered lines of a file inside the workspace or a configured read root.
pub struct ReadTool;

/// Arguments of `read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// File to read, relative to the workspace root (or absolute inside a read root);
    /// `file_path` is accepted too.
    #[serde(alias = "file_path")]
    path: String,
    /// First line to show, 1-based. Default 1.
    #[schemars(range(min = 1))]
    offset: Option<usize>,
    /// How many lines to show, at least 1. Default 2000.
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

impl Tool for ReadTool {
    type Args = ReadArgs;

    fn name(&self) -> &'static str {
        "read"
    }

    fn description(&self) -> String {
        "Read a text file as numbered lines. `offset` is the first line shown (1-based), `limit` \
         how many (default 2000). Long lines are cut with a mark; the header says which lines \
         are shown of how many."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Free
    }

    async fn call(&self, cx: &CallCx, args: ReadArgs) -> Result<ToolOutput, ToolError> {
        let abs = cx.workspace().resolve_read(&args.path)?;
        let shown = cx.workspace().display(&abs);
        if abs.is_dir() {
            return Err(ToolError::invalid(format!(
                "{shown} is a directory; `read` takes a file (use ast_grep or your listing tool \
                 to explore directories)"
            )));
        }
        let file = match cx.workspace().open_read(&abs) {
            Ok(file) => file,
            Err(FsError::NotFound { path }) => {
                let near = did_you_mean(&cx.similar_files(&path).await);
                let advice = if near.is_empty() {
                    "; check the path"
                } else {
                    ""
                };
                return Err(ToolError::invalid(format!(
                    "{path} does not exist{near}{advice}"
                )));
            }
            Err(e) => return Err(e.into()),
        };
        let window = Window::new(args.offset, args.limit)?;
        let cancel = cx.cancel_token().clone();
        let small = file
            .metadata()
            .is_ok_and(|m| m.is_file() && m.len() <= INLINE_BYTES);
        let scanned = if small {
            // A hand-off to the blocking pool costs more than reading a small file here.
            scan(std::io::BufReader::new(file), window, &|| false)
        } else {
            tokio::task::spawn_blocking(move || {
                scan(std::io::BufReader::new(file), window, &|| {
                    cancel.is_cancelled()
                })
            })
            .await
            .map_err(|e| ToolError::failed(format!("reading {shown} stopped: {e}")))?
        };
        let scan = scanned.map_err(|e| ToolError::failed(format!("cannot read {shown}: {e}")))?;
        if scan.binary {
            return Err(ToolError::invalid(format!(
                "{shown} is a binary file; `read` shows text only"
            )));
        }
        Ok(ToolOutput::text(render_scan(&shown, &scan, window)?))
    }
}

/// Which lines the caller asked for.
#[derive(Debug, Clone, Copy)]
struct Window {
    first: usize,
    limit: usize,
}

impl Window {
    fn new(offset: Option<usize>, limit: Option<usize>) -> Result<Self, ToolError> {
        let first = offset.unwrap_or(1);
        if first == 0 {
            return Err(ToolError::invalid(
                "offset is 1-based: use 1 for the first line",
            ));
        }
        let limit = limit.unwrap_or(DEFAULT_LIMIT);
        if limit == 0 {
            return Err(ToolError::invalid("limit must be at least 1"));
        }
        Ok(Window { first, limit })
    }
}

/// What one pass over a file found: the shown lines, and how many lines there are (exactly,
/// or at least, when counting stopped at [`COUNT_BYTES`] past the shown part).
#[derive(Debug, Default)]
struct Scan {
    shown: Vec<String>,
    lines: usize,
    counted_all: bool,
    cut_for_size: bool,
    lossy: bool,
    binary: bool,
}

/// Bytes read past the last shown line just to count lines; beyond it the total is a floor.
const COUNT_BYTES: u64 = 16 << 20;

/// Reads the file once, keeping only what is shown: memory stays bounded by the output, not
/// the file, and a huge file is counted only up to [`COUNT_BYTES`] past the window.
fn scan(
    mut reader: impl std::io::BufRead,
    window: Window,
    cancelled: &dyn Fn() -> bool,
) -> std::io::Result<Scan> {
    let mut out = Scan::default();
    let keep_bytes = MAX_LINE_CHARS * 4 + 4;
    let last = (window.first - 1).saturating_add(window.limit);
    let mut st = LineState {
        at_start: true,
        ..LineState::default()
    };
    let mut past_window = 0u64;
    let mut sniffed = 0usize;
    let in_window =
        |out: &Scan| out.lines + 1 >= window.first && out.lines < last && !out.cut_for_size;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        if cancelled() {
            return Err(std::io::Error::other("the call was cancelled"));
        }
        if sniffed < SNIFF_BYTES {
            let look = &buf[..buf.len().min(SNIFF_BYTES - sniffed)];
            sniffed += look.len();
            if look.contains(&0) {
                out.binary = true;
                return Ok(out);
            }
        }
        let (chunk, newline) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let taken = chunk.len() + usize::from(newline);
        let wanted = in_window(&out);
        if wanted && st.line.len() < keep_bytes {
            let room = keep_bytes - st.line.len();
            st.line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        st.len += chunk.len();
        if out.lines >= last || out.cut_for_size {
            past_window += taken as u64;
        }
        reader.consume(taken);
        if newline {
            finish_line(&mut out, &mut st, wanted, true);
        } else if st.len as u64 > COUNT_BYTES || past_window > COUNT_BYTES {
            // One enormous line: stop reading it; the totals become floors.
            finish_line(&mut out, &mut st, wanted, false);
            return Ok(out);
        }
        if past_window > COUNT_BYTES && out.lines >= last {
            return Ok(out);
        }
    }
    if st.len > 0 {
        let wanted = in_window(&out);
        finish_line(&mut out, &mut st, wanted, true);
    }
    out.counted_all = true;
    Ok(out)
}

/// Ends one line: counts it and, when it is in the window, renders it cut to the line limit.
/// `ended` is false when reading stopped inside the line, so its length is only a floor.
fn finish_line(out: &mut Scan, st: &mut LineState, wanted: bool, ended: bool) {
    out.lines += 1;
    if wanted {
        let complete = st.line.len() == st.len && ended;
        let mut bytes: &[u8] = &st.line;
        if std::mem::take(&mut st.at_start) {
            bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
        }
        let shown = if complete {
            let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
            let text = String::from_utf8_lossy(bytes);
            out.lossy |= matches!(text, std::borrow::Cow::Owned(_));
            cut_line(&text, MAX_LINE_CHARS)
        } else {
            // Only a prefix was kept: show its first characters and count the rest in bytes.
            let text = String::from_utf8_lossy(bytes);
            let head: String = text.chars().take(MAX_LINE_CHARS).collect();
            let head_bytes = head.len().min(bytes.len());
            let rest = st.len.saturating_sub(head_bytes);
            let floor = if ended { "" } else { "at least " };
            format!("{head}… [+{floor}{rest} bytes]")
        };
        st.output_chars += shown.len() + 8;
        out.shown.push(shown);
        if st.output_chars > MAX_OUTPUT_CHARS {
            out.cut_for_size = true;
        }
    }
    st.at_start = false;
    st.line.clear();
    st.len = 0;
}

/// The line being read: a bounded prefix of its bytes and its full length so far.
#[derive(Default)]
struct LineState {
    line: Vec<u8>,
    len: usize,
    at_start: bool,
    output_chars: usize,
}

/// Renders a scan: a header with the shown range and the (possibly lower-bound) total.
fn render_scan(shown: &str, scan: &Scan, window: Window) -> Result<String, ToolError> {
    let first = window.first;
    let total = scan.lines;
    let of = match scan.counted_all {
        true => format!("{total}"),
        false => format!("at least {total}"),
    };
    let of_lines = match scan.counted_all {
        true => counted(total, "line"),
        false => format!("at least {}", counted(total, "line")),
    };
    if total == 0 && scan.counted_all {
        return Ok(format!("{shown}: empty file"));
    }
    if first > total {
        return Err(ToolError::invalid(format!(
            "offset {first} is past the end: {shown} has {of_lines}"
        )));
    }
    let shown_to = first - 1 + scan.shown.len();
    let mut body = String::new();
    for (i, line) in scan.shown.iter().enumerate() {
        body.push_str(&format!("{:>6}\t{line}\n", first + i));
    }
    let mut out = format!("{shown} (lines {first}-{shown_to} of {of})\n");
    if scan.lossy {
        out.push_str("note: the file is not valid UTF-8; bad bytes are shown as \u{fffd}\n");
    }
    out.push_str(&body);
    let left = total - shown_to;
    let noun = if left == 1 { "line" } else { "lines" };
    let more = match scan.counted_all {
        true => format!("{left} more {noun}"),
        false => format!("at least {left} more {noun}"),
    };
    if scan.cut_for_size && shown_to < total {
        out.push_str(&format!(
            "… output cut at {MAX_OUTPUT_CHARS} characters after line {shown_to}; call read with \
             offset={} to continue\n",
            shown_to + 1
        ));
    } else if shown_to < total {
        out.push_str(&format!(
            "… {more}; call read with offset={} to continue\n",
            shown_to + 1
        ));
    }
    Ok(out)
}

/// Renders `text` as `read` would, for tests.
#[cfg(test)]
fn render(
    shown: &str,
    text: &str,
    _lossy: bool,
    offset: Option<usize>,
    limit: Option<usize>,
) -> Result<String, ToolError> {
    let window = Window::new(offset, limit)?;
    let scan = scan(std::io::Cursor::new(text.as_bytes()), window, &|| false)
        .map_err(|e| ToolError::failed(e.to_string()))?;
    render_scan(shown, &scan, window)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn numbers_lines_and_says_what_it_cut() {
        let text = "a\nb\nc\nd\n";
        let out = render("f.txt", text, false, Some(2), Some(2)).unwrap();
        assert_eq!(
            out,
            "f.txt (lines 2-3 of 4)\n     2\tb\n     3\tc\n… 1 more line; call read with offset=4 to continue\n"
        );
    }

    #[test]
    fn bad_offsets_are_explained() {
        assert!(
            render("f", "a\n", false, Some(0), None)
                .unwrap_err()
                .to_string()
                .contains("1-based")
        );
        let e = render("f", "a\n", false, Some(9), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("has 1 line"), "{e}");
        let e = render("f", "a\nb\n", false, Some(9), None)
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("f has 2 lines"), "{e}");
    }

    #[test]
    fn long_output_is_cut_with_a_place_to_continue() {
        let text: String = (0..200)
            .map(|_| format!("{}\n", "x".repeat(1500)))
            .collect();
        let out = render("f", &text, false, None, None).unwrap();
        assert!(out.len() < MAX_OUTPUT_CHARS + 4000, "{}", out.len());
        assert!(out.starts_with("f (lines 1-67 of 200)\n"), "{}", &out[..40]);
        assert!(out.contains("output cut at 100000 characters after line 67"));
        assert!(out.contains("offset=68"));
    }

    #[test]
    fn huge_limits_do_not_overflow() {
        let out = render("f", "a\nb\n", false, Some(2), Some(usize::MAX)).unwrap();
        assert!(out.starts_with("f (lines 2-2 of 2)"), "{out}");
    }

    fn scan_of(reader: impl std::io::Read, offset: Option<usize>) -> String {
        let window = Window::new(offset, None).unwrap();
        let reader = std::io::BufReader::new(reader);
        let scan = scan(reader, window, &|| false).unwrap();
        render_scan("big", &scan, window).unwrap()
    }

    #[test]
    fn a_huge_file_is_counted_only_a_bounded_way_past_what_is_shown() {
        let line = format!("{}\n", "y".repeat(999));
        let lines = (COUNT_BYTES as usize / 1000) * 3;
        let reader = std::io::repeat(0)
            .take(0)
            .chain(LineRepeat::new(line, lines));
        let out = scan_of(reader, None);
        assert!(out.starts_with("big (lines 1-"), "{}", &out[..60]);
        assert!(out.contains(" of at least "), "{}", &out[..80]);
        assert!(
            out.contains("offset=101 to continue"),
            "{}",
            &out[out.len() - 200..]
        );
    }

    #[test]
    fn an_endless_line_is_cut_and_its_length_given_as_a_floor() {
        let reader = std::io::repeat(b'a').take(COUNT_BYTES * 2);
        let out = scan_of(reader, None);
        assert!(
            out.starts_with("big (lines 1-1 of at least 1)"),
            "{}",
            &out[..60]
        );
        assert!(out.contains("… [+at least "), "{}", &out[out.len() - 100..]);
    }

    /// A reader of `n` copies of one line, made lazily.
    struct LineRepeat {
        line: Vec<u8>,
        left: usize,
        pos: usize,
    }

    impl LineRepeat {
        fn new(line: String, n: usize) -> Self {
            LineRepeat {
                line: line.into_bytes(),
                left: n,
                pos: 0,
            }
        }
    }

    impl std::io::Read for LineRepeat {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.left == 0 {
                return Ok(0);
            }
            let n = (self.line.len() - self.pos).min(buf.len());
            buf[..n].copy_from_slice(&self.line[self.pos..self.pos + n]);
            self.pos += n;
            if self.pos == self.line.len() {
                self.pos = 0;
                self.left -= 1;
            }
            Ok(n)
        }
    }

    #[test]
    fn crlf_and_bom_do_not_leak_into_lines() {
        let out = render("f", "\u{feff}x\r\ny\r\n", false, None, None).unwrap();
        assert!(out.contains("     1\tx\n     2\ty\n"), "{out}");
    }
}
