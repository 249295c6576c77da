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
