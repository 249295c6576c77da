use schemars::JsonSchema;
use serde::Deserialize;
use tether_fs::{RebaseError, Resolution};
use tether_tool::{CallCx, Concurrency, Preview, Tier, Tool, ToolError, ToolOutput, counted};

/// `resolve`: accepts (writes, all-or-nothing) or discards a staged change.
pub struct ResolveTool;

/// What to do with a staged change.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResolveAction {
    /// Write every file of the change (merged onto files changed since), or none.
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
         edit_id. Accept writes every file or none. A file changed since the change was staged \
         (by another accepted edit, say) is merged: the change's edits are applied to the \
         current text, unless they overlap lines the other write changed; then nothing is \
         written and the change stays pending. A merged change's preview verdict is said to \
         be stale; the write's own diagnostics follow as for any write."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Workspace
    }

    fn preview(&self, args: &ResolveArgs) -> Preview {
        let what = match args.action {
            ResolveAction::Accept => "write",
            ResolveAction::Discard => "drop",
        };
        Preview::new(
            format!("{what} the staged change {}", args.edit_id),
            Vec::new(),
        )
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
            ResolveAction::Accept => accept(cx, &args.edit_id).await,
        }
    }
}

/// Writes a staged change, merged onto any of its files that changed since it was staged; on
/// any failure nothing is written and the change stays pending.
async fn accept(cx: &CallCx, id: &str) -> Result<ToolOutput, ToolError> {
    let staged = cx.fs().staged();
    let change = staged.take(id, Resolution::Accepted)?;
    let rebased = match change.rebase(cx.workspace()) {
        Ok(rebased) => rebased,
        Err(e) => {
            let id = change.id.clone();
            let why = conflict_advice(staged, &id, &e);
            staged.restore(change);
            return Err(ToolError::invalid(why));
        }
    };
    cx.fs().label_writes(&format!("accepting {}", change.id));
    let receipt = match cx.fs().commit(rebased.ops).await {
        Ok(receipt) => receipt,
        Err(e) => {
            let id = change.id.clone();
            staged.restore(change);
            return Err(ToolError::invalid(format!(
                "{id} was not written: {e}. It is still pending; discard it and stage it again"
            )));
        }
    };
    let files: Vec<&str> = receipt.files.iter().map(|f| f.path.rel()).collect();
    let mut text = format!(
        "accepted {} ({}): wrote {}\n{}",
        change.id,
        change.summary,
        counted(files.len(), "file"),
        files.join("\n")
    );
    if !rebased.rebased.is_empty() {
        text.push_str(&format!(
            "\nrebased onto later changes to {}: the same edits, merged with what changed since",
            rebased.rebased.join(", ")
        ));
        if let Some(verdict) = &change.verdict {
            text.push_str(&format!(
                "\nits preview's verdict (\"{verdict}\") is stale: it judged the text before \
                 those changes; the diagnostics of this write below are the ones that hold"
            ));
        }
    }
    if rebased.more_sites > 0 {
        let verb = if rebased.more_sites == 1 {
            "matches"
        } else {
            "match"
        };
        text.push_str(&format!(
            "\n{} {verb} the pattern now that this change does not cover (code added after \
             staging); stage again to include them",
            counted(rebased.more_sites, "more site"),
        ));
    }
    Ok(ToolOutput::text(text))
}

/// Why a change could not be rebased, who made the change in its way, and what to do.
fn conflict_advice(staged: &tether_fs::StagedStore, id: &str, e: &RebaseError) -> String {
    let by = match e {
        RebaseError::Overlap { path, .. }
        | RebaseError::Gone { path, .. }
        | RebaseError::NoBase { path } => staged.last_writer(path).map_or_else(
            || ", outside this run".to_string(),
            |w| format!(", last by {w}"),
        ),
        RebaseError::Fs(_) => String::new(),
    };
    format!(
        "{id} was not written: {e}{by}. It is still pending: discard {id} and stage it again to \
         work on the current text"
    )
}
