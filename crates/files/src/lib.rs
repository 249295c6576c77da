//! The harness file tools (`read`, `write`, `edit`, `apply_patch`) and `resolve`, which
//! commits or drops a staged change. Every write goes through `cx.fs()`, so the run's write
//! hooks see it, and keeps the file's mode, line endings, BOM and final newline.

#![forbid(unsafe_code)]

mod apply_patch;
mod edit;
mod near;
mod patch;
mod read;
mod resolve;
mod write;

pub use apply_patch::ApplyPatchTool;
pub use edit::EditTool;
pub use patch::{PatchOutline, outline as patch_outline, touched_paths as patch_paths};
pub use read::ReadTool;
pub use resolve::ResolveTool;
pub use write::WriteTool;

use tether_fs::{ContentHash, TextShape, Workspace, WritePath, decode_text};
use tether_tool::{Capability, Install, ToolError};

/// The file tools as a capability: `read`, `write`, `edit`, `apply_patch` (the harness tools,
/// which a host with its own may leave out) and `resolve`, which every run has because every
/// run has a staged store.
pub struct FileTools {
    /// Whether to install the harness tools (read, write, edit, apply_patch).
    pub harness: bool,
}

impl Capability for FileTools {
    fn name(&self) -> &'static str {
        "files"
    }

    fn install(&mut self, run: &mut Install) {
        if self.harness {
            run.tool(ReadTool)
                .tool(WriteTool)
                .tool(EditTool)
                .tool(ApplyPatchTool);
        }
        run.tool(ResolveTool);
    }
}

/// A text file as it is on disk now: its LF-normalized text, shape and hash for the change op.
struct TextFile {
    text: String,
    shape: TextShape,
    hash: ContentHash,
}

/// Reads a file that must exist and be UTF-8 text, for the edit-style tools.
fn read_text(ws: &Workspace, path: &WritePath) -> Result<TextFile, ToolError> {
    let Some((bytes, hash)) = ws.read_hashed(path)? else {
        return Err(ToolError::invalid(format!(
            "{} does not exist{}; to create a file use `write`",
            path.rel(),
            similar_files_hint(ws, path.rel())
        )));
    };
    let (text, shape) = decode_text(path.rel(), &bytes)?;
    Ok(TextFile { text, shape, hash })
}

/// " (did you mean …?)" naming workspace files like `rel`, or "" when none is close. It walks the
/// workspace, bounded in entries and time (see `suggest.rs`).
fn similar_files_hint(ws: &Workspace, rel: &str) -> String {
    use tether_fs::suggest;
    suggest::did_you_mean(&suggest::similar_paths(ws, rel, suggest::Kind::File))
}

/// Turns CRLF in model-given text into LF, so it matches decoded file text.
fn lf(s: &str) -> String {
    s.replace("\r\n", "\n")
}

#[cfg(test)]
mod previews {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;
    use tether_tool::Tool;

    fn preview<T: Tool>(tool: T, args: serde_json::Value) -> tether_tool::Preview {
        tool.preview(&serde_json::from_value(args).unwrap())
    }

    #[test]
    fn a_card_shows_what_will_change() {
        let patch =
            "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x = 1\n+x = 2\n+y = 3\n*** End Patch";
        let shown = preview(ApplyPatchTool, json!({"patch": patch}));
        assert_eq!(shown.summary, "a patch to 1 file:\n  M src/a.py (+2 -1)");
        assert_eq!(shown.paths, ["src/a.py"]);
        let patch = "*** Begin Patch\n*** Add File: n.txt\n+hi\n*** Delete File: old.txt\n*** Update File: a\n*** Move to: b\n*** End Patch";
        let shown = preview(ApplyPatchTool, json!({"patch": patch}));
        assert_eq!(
            shown.summary,
            "a patch to 3 files:\n  A n.txt (+1 -0)\n  D old.txt\n  M a -> b (+0 -0)"
        );
        assert_eq!(shown.paths, ["n.txt", "old.txt", "a", "b"]);

        // `file_path`, the name other harnesses use, names the file too.
        let args = json!({"file_path": "cfg.toml", "content": "a = 1\nb = 2\n"});
        let shown = preview(WriteTool, args);
        assert_eq!(
            shown.summary,
            "write the whole file (2 lines):\n  + a = 1\n  + b = 2"
        );
        assert_eq!(shown.paths, ["cfg.toml"]);
        let long: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        let shown = preview(WriteTool, json!({"path": "l.txt", "content": long}));
        assert!(
            shown.summary.contains("  + line 8\n  … 12 lines not shown"),
            "{}",
            shown.summary
        );

        let args = json!({"path": "a.rs", "old_string": "let x = 1;", "new_string": "let x = 2;\nlet y = 3;"});
        let shown = preview(EditTool, args);
        assert_eq!(
            shown.summary,
            "replace:\n  - let x = 1;\n  + let x = 2;\n  + let y = 3;"
        );
        assert_eq!(shown.paths, ["a.rs"]);
    }
}
