use schemars::JsonSchema;
use serde::Deserialize;
use tether_fs::{ChangeOp, decode_text, encode_text};
use tether_tool::{CallCx, Concurrency, Tier, Tool, ToolError, ToolOutput};

use crate::lf;

/// `write`: replaces or creates a whole file, keeping an existing file's text shape.
pub struct WriteTool;

/// Arguments of `write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// File to write, relative to the workspace root. Parent folders are created.
    path: String,
    /// The whole new content.
    content: String,
}

impl Tool for WriteTool {
    type Args = WriteArgs;

    fn name(&self) -> &'static str {
        "write"
    }

    fn description(&self) -> String {
        "Write a whole file, creating it and its parent folders if needed. An existing file \
         keeps its mode, line endings (CRLF stays CRLF), BOM and final-newline convention."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Workspace
    }

    async fn call(&self, cx: &CallCx, args: WriteArgs) -> Result<ToolOutput, ToolError> {
        let path = cx.workspace().resolve_write(&args.path)?;
        let lines = args.content.lines().count();
        let op = match cx.workspace().read_hashed(&path)? {
            None => ChangeOp::Create {
                path: path.clone(),
                content: args.content.into_bytes(),
            },
            Some((old, expect)) => {
                let content = match decode_text(path.rel(), &old) {
                    Ok((_, shape)) => encode_text(&lf(&args.content), shape),
                    Err(_) => args.content.into_bytes(),
                };
                ChangeOp::Write {
                    path: path.clone(),
                    content,
                    expect,
                }
            }
        };
        let created = matches!(op, ChangeOp::Create { .. });
        cx.fs().commit(vec![op]).await?;
        let verb = if created { "created" } else { "wrote" };
        Ok(ToolOutput::text(format!(
            "{verb} {} ({lines} lines)",
            path.rel()
        )))
    }
}
