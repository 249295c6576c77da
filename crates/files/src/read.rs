use schemars::JsonSchema;
use serde::Deserialize;
use tether_tool::{CallCx, Concurrency, Tier, Tool, ToolError, ToolOutput, cut_line};

/// Lines shown when the caller gives no `limit`.
const DEFAULT_LIMIT: usize = 2000;
/// Characters of one line shown before it is cut with a mark.
const MAX_LINE_CHARS: usize = 2000;
/// Characters of output after which `read` stops adding lines and says where to continue.
const MAX_OUTPUT_CHARS: usize = 100_000;
/// Bytes looked at to tell a binary file from text.
const SNIFF_BYTES: usize = 8192;

/// `read`: numbered lines of a file inside the workspace or a configured read root.
pub struct ReadTool;

/// Arguments of `read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// File to read, relative to the workspace root (or absolute inside a read root).
    path: String,
    /// First line to show, 1-based. Default 1.
    offset: Option<usize>,
    /// How many lines to show. Default 2000.
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

    fn concurrency(&self) -> Concurrency {
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
        let bytes = tokio::fs::read(&abs)
            .await
            .map_err(|e| ToolError::failed(format!("cannot read {shown}: {e}")))?;
        if bytes[..bytes.len().min(SNIFF_BYTES)].contains(&0) {
            return Err(ToolError::invalid(format!(
                "{shown} is a binary file ({} bytes); `read` shows text only",
                bytes.len()
            )));
        }
        let text = String::from_utf8_lossy(&bytes);
        let lossy = matches!(text, std::borrow::Cow::Owned(_));
        Ok(ToolOutput::text(render(
            &shown,
            &text,
            lossy,
            args.offset,
            args.limit,
        )?))
    }
}

fn render(
    shown: &str,
    text: &str,
    lossy: bool,
    offset: Option<usize>,
    limit: Option<usize>,
) -> Result<String, ToolError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
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
    if total == 0 {
        return Ok(format!("{shown}: empty file"));
    }
    if first > total {
        return Err(ToolError::invalid(format!(
            "offset {first} is past the end: {shown} has {total} lines"
        )));
    }
    let last = (first - 1).saturating_add(limit).min(total);
    let mut body = String::new();
    let mut shown_to = first - 1;
    let mut cut_for_size = false;
    for (i, line) in lines[first - 1..last].iter().enumerate() {
        if body.len() > MAX_OUTPUT_CHARS {
            cut_for_size = true;
            break;
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        body.push_str(&format!(
            "{:>6}\t{}\n",
            first + i,
            cut_line(line, MAX_LINE_CHARS)
        ));
        shown_to = first + i;
    }
    let mut out = format!("{shown} (lines {first}-{shown_to} of {total})\n");
    if lossy {
        out.push_str("note: the file is not valid UTF-8; bad bytes are shown as \u{fffd}\n");
    }
    out.push_str(&body);
    if cut_for_size {
        out.push_str(&format!(
            "… output cut at {MAX_OUTPUT_CHARS} characters after line {shown_to}; call read with \
             offset={} to continue\n",
            shown_to + 1
        ));
    } else if shown_to < total {
        out.push_str(&format!(
            "… {} more lines; call read with offset={} to continue\n",
            total - shown_to,
            shown_to + 1
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_lines_and_says_what_it_cut() {
        let text = "a\nb\nc\nd\n";
        let out = render("f.txt", text, false, Some(2), Some(2)).unwrap();
        assert_eq!(
            out,
            "f.txt (lines 2-3 of 4)\n     2\tb\n     3\tc\n… 1 more lines; call read with offset=4 to continue\n"
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
        assert!(e.contains("has 1 lines"), "{e}");
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

    #[test]
    fn crlf_and_bom_do_not_leak_into_lines() {
        let out = render("f", "\u{feff}x\r\ny\r\n", false, None, None).unwrap();
        assert!(out.contains("     1\tx\n     2\ty\n"), "{out}");
    }
}
