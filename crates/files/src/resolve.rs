use schemars::JsonSchema;
use serde::Deserialize;
use tether_fs::Resolution;
use tether_tool::{CallCx, Concurrency, Tier, Tool, ToolError, ToolOutput, counted};

/// `resolve`: accepts (writes, all-or-nothing) or discards a staged change.
pub struct ResolveTool;

/// What to do with a staged change.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResolveAction {
    /// Write every file of the change, or none if any changed since staging.
    Accept,
    /// Drop the change; nothing is written.
    Discard,
}

/// Arguments of `resolve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveArgs {
    /// The id a staging tool returned, such as "edit_1".
    edit_id: String,
    /// `accept` or `discard`.
    action: ResolveAction,
}

impl Tool for ResolveTool {
    type Args = ResolveArgs;

    fn name(&self) -> &'static str {
        "resolve"
    }

    fn description(&self) -> String {
        "Accept or discard a staged change (from ast_edit and other staging tools) by its \
         edit_id. Accept writes every file or none: if any file changed since the change was \
         staged, the whole change is rejected."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Workspace
    }

    async fn call(&self, cx: &CallCx, args: ResolveArgs) -> Result<ToolOutput, ToolError> {
        let staged = cx.fs().staged();
        match args.action {
            ResolveAction::Discard => {
                let change = staged.take(&args.edit_id, Resolution::Discarded)?;
                Ok(ToolOutput::text(format!(
                    "discarded {} ({}); nothing was written",
                    change.id, change.summary
                )))
            }
            ResolveAction::Accept => {
                let change = staged.take(&args.edit_id, Resolution::Accepted)?;
                match cx.fs().commit(change.ops.clone()).await {
                    Ok(receipt) => {
                        let files: Vec<&str> = receipt.files.iter().map(|f| f.path.rel()).collect();
                        Ok(ToolOutput::text(format!(
                            "accepted {} ({}): wrote {}\n{}",
                            change.id,
                            change.summary,
                            counted(files.len(), "file"),
                            files.join("\n")
                        )))
                    }
                    Err(e) => {
                        let id = change.id.clone();
                        staged.restore(change);
                        Err(ToolError::invalid(format!(
                            "{id} was rejected and no file was written: {e}. It is still \
                             pending: discard it and stage the change again"
                        )))
                    }
                }
            }
        }
    }
}
