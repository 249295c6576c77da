use schemars::JsonSchema;
use serde::Deserialize;
use tether_fs::{ChangeOp, decode_text, encode_text};
use tether_fs::{Workspace, WritePath};
use tether_tool::{CallCx, Concurrency, Preview, Tier, Tool, ToolError, ToolOutput, counted};

use crate::lf;
use tether_fs::suggest::{Kind, did_you_mean, similar_paths};

/// `write`: replaces or creates a whole file, keeping an existing file's text shape.
pub struct WriteTool;

/// Arguments of `write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// File to write, relative to the workspace root (`file_path` is accepted too). Parent
    /// folders are created.
    #[serde(alias = "file_path")]
    path: String,
    /// The whole new content.
    content: String,
    /// Stage the change instead of writing it: the result shows its diff and the new
    /// problems the language servers find in the proposed text (nothing is written), and
    /// `resolve` with the edit_id it gives writes or drops it. Default false.
    #[serde(default)]
    dry_run: bool,
}

impl Tool for WriteTool {
    type Args = WriteArgs;

    fn name(&self) -> &'static str {
        "write"
    }

    fn description(&self) -> String {
        "Write a whole file, creating it and its parent folders if needed (the result names a \
         folder it had to create). An existing file keeps its mode, line endings (CRLF stays \
         CRLF), BOM and final-newline convention. The result lists syntax errors the write \
         introduced (a tree-sitter check of the bundled languages, on unless the run turned it \
         off). `dry_run` stages the write instead, showing its diff and the problems it would \
         bring, for `resolve`."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Workspace
    }

    fn preview(&self, args: &WriteArgs) -> Preview {
        let summary = format!(
            "write the whole file ({}):\n{}",
            counted(args.content.lines().count(), "line"),
            Preview::quoted('+', &args.content)
        );
        Preview::new(summary, vec![args.path.clone()])
    }

    async fn call(&self, cx: &CallCx, args: WriteArgs) -> Result<ToolOutput, ToolError> {
        let path = cx.workspace().resolve_write(&args.path)?;
        let lines = args.content.lines().count();
        let new_folder = first_missing_folder(cx.workspace(), &path);
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
        let verb = if created { "created" } else { "wrote" };
        if args.dry_run {
            let summary = format!(
                "{} {} ({})",
                if created { "create" } else { "write" },
                path.rel(),
                counted(lines, "line")
            );
            return Ok(ToolOutput::text(
                tether_tool::stage_dry_run(cx, "write", &summary, vec![op]).await?,
            ));
        }
        cx.fs().commit(vec![op]).await?;
        let mut out = format!("{verb} {} ({})", path.rel(), counted(lines, "line"));
        if let Some(folder) = new_folder {
            let near = tokio::task::spawn_blocking({
                let (ws, folder) = (cx.workspace().clone(), folder.clone());
                move || similar_paths(&ws, &folder, Kind::Folder)
            })
            .await
            .unwrap_or_default();
            out.push_str(&format!(
                "; the folder {folder}/ did not exist and was created"
            ));
            let near: Vec<String> = near.into_iter().map(|f| f + "/").collect();
            out.push_str(&did_you_mean(&near));
        }
        Ok(ToolOutput::text(out))
    }
}

/// The outermost folder on the way to `path` that does not exist yet (the write creates it),
/// so a misspelt folder is noticed instead of silently made.
fn first_missing_folder(ws: &Workspace, path: &WritePath) -> Option<String> {
    let mut folder = String::new();
    let parts: Vec<&str> = path.rel().split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        if !folder.is_empty() {
            folder.push('/');
        }
        folder.push_str(part);
        if !ws.root().join(&folder).is_dir() {
            return Some(folder);
        }
    }
    None
}
