use std::collections::{HashMap, HashSet};

use schemars::JsonSchema;
use serde::Deserialize;
use tether_fs::{ChangeOp, ContentHash, WritePath, encode_text};
use tether_tool::{CallCx, Concurrency, Tier, Tool, ToolError, ToolOutput};

use crate::patch::{FilePatch, MatchBudget, Stopped, apply_hunks_within, parse_patch};
use crate::read_text;

/// `apply_patch`: a multi-file patch applied in one all-or-nothing transaction.
pub struct ApplyPatchTool;

/// Arguments of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// The patch, from `*** Begin Patch` to `*** End Patch`.
    patch: String,
}

impl Tool for ApplyPatchTool {
    type Args = ApplyPatchArgs;

    fn name(&self) -> &'static str {
        "apply_patch"
    }

    fn description(&self) -> String {
        "Apply a patch in the `*** Begin Patch` format: `*** Add File: p` (+lines), `*** Delete \
         File: p`, `*** Update File: p` (optionally `*** Move to: q`) with `@@` hunks of ' ', '-', \
         '+' lines, then `*** End Patch`. All files change or none: a hunk that does not apply \
         rejects the whole patch and names the file and hunk."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Workspace
    }

    async fn call(&self, cx: &CallCx, args: ApplyPatchArgs) -> Result<ToolOutput, ToolError> {
        let patch = parse_patch(&args.patch)
            .map_err(|e| ToolError::invalid(format!("the patch does not parse: {e}")))?;
        if patch.files.is_empty() {
            return Err(ToolError::invalid("the patch changes no file"));
        }
        let ws = cx.workspace();
        // Locating hunks runs on this thread, so it polls the call's cancellation itself.
        let cancel = cx.cancel_token();
        let cancelled = || cancel.is_cancelled();
        let mut budget = MatchBudget::new(&cancelled);
        let mut ops = Vec::new();
        let mut summary = Vec::new();
        let mut seen = HashSet::new();
        // Files deleted earlier in this patch, by their op's index: a `Move to` may replace one.
        let mut deleted: HashMap<WritePath, (usize, ContentHash)> = HashMap::new();
        for file in &patch.files {
            let nothing = "; nothing was written";
            match file {
                FilePatch::Add { path, content } => {
                    let path = ws.resolve_write(path)?;
                    if ws.read_hashed(&path)?.is_some() {
                        return Err(ToolError::invalid(format!(
                            "{}: `Add File` but the file exists; use `Update File`{nothing}",
                            path.rel()
                        )));
                    }
                    claim(&mut seen, &path)?;
                    summary.push(format!("A {}", path.rel()));
                    ops.push(ChangeOp::Create {
                        path,
                        content: content.clone().into_bytes(),
                    });
                }
                FilePatch::Delete { path } => {
                    let path = ws.resolve_write(path)?;
                    claim(&mut seen, &path)?;
                    let Some((_, expect)) = ws.read_hashed(&path)? else {
                        return Err(ToolError::invalid(format!(
                            "{}: `Delete File` but the file does not exist{nothing}",
                            path.rel()
                        )));
                    };
                    summary.push(format!("D {}", path.rel()));
                    deleted.insert(path.clone(), (ops.len(), expect));
                    ops.push(ChangeOp::Delete { path, expect });
                }
                FilePatch::Update {
                    path,
                    move_to,
                    hunks,
                } => {
                    let path = ws.resolve_write(path)?;
                    // Refused before reading, so naming one big file many times costs nothing.
                    claim(&mut seen, &path)?;
                    if ws.read_hashed(&path)?.is_none() {
                        return Err(ToolError::invalid(format!(
                            "{}: `Update File` but the file does not exist; use `*** Add File:` \
                             to create it{nothing}",
                            path.rel()
                        )));
                    }
                    let text = read_text(ws, &path)
                        .map_err(|e| ToolError::invalid(format!("{e}{nothing}")))?;
                    let hunked = apply_hunks_within(&text.text, hunks, &mut budget);
                    let new_text = hunked.map_err(|e| {
                        if e.stopped == Some(Stopped::Cancelled) {
                            ToolError::Cancelled
                        } else {
                            ToolError::invalid(format!("{}: {e}{nothing}", path.rel()))
                        }
                    })?;
                    let content = encode_text(&new_text, text.shape);
                    match move_to {
                        None => {
                            summary.push(format!("M {}", path.rel()));
                            ops.push(ChangeOp::Write {
                                path,
                                content,
                                expect: text.hash,
                            });
                        }
                        Some(to) => {
                            let to = ws.resolve_write(to)?;
                            if to == path {
                                return Err(ToolError::invalid(format!(
                                    "{}: `Move to` names the file itself; drop the `Move to` \
                                     line{nothing}",
                                    path.rel()
                                )));
                            }
                            if let Some((at, to_hash)) = deleted.remove(&to) {
                                // The patch deleted `to` first, so the moved text replaces it:
                                // `to` is rewritten in place (keeping its own permission bits)
                                // and the source removed, all in the same transaction.
                                summary.push(format!("R {} -> {}", path.rel(), to.rel()));
                                if let Some(op) = ops.get_mut(at) {
                                    *op = ChangeOp::Write {
                                        path: to,
                                        content,
                                        expect: to_hash,
                                    };
                                }
                                ops.push(ChangeOp::Delete {
                                    path,
                                    expect: text.hash,
                                });
                                continue;
                            }
                            claim(&mut seen, &to)?;
                            if ws.read_hashed(&to)?.is_some() {
                                return Err(ToolError::invalid(format!(
                                    "{}: `Move to: {}` but that file exists; to replace it, put \
                                     `*** Delete File: {}` before the `*** Update File: {}` \
                                     section, or pick another name{nothing}",
                                    path.rel(),
                                    to.rel(),
                                    to.rel(),
                                    path.rel()
                                )));
                            }
                            summary.push(format!("R {} -> {}", path.rel(), to.rel()));
                            ops.push(ChangeOp::Rename {
                                from: path,
                                to,
                                expect: text.hash,
                                content: Some(content),
                            });
                        }
                    }
                }
            }
        }
        cx.fs().commit(ops).await?;
        Ok(ToolOutput::text(format!(
            "applied the patch to {} files:\n{}",
            summary.len(),
            summary.join("\n")
        )))
    }
}

/// Records that the patch names `path`, refusing a second mention before anything is read, so
/// one file is never matched twice and the model learns to merge its sections.
fn claim(seen: &mut HashSet<WritePath>, path: &WritePath) -> Result<(), ToolError> {
    if seen.insert(path.clone()) {
        Ok(())
    } else {
        Err(ToolError::invalid(format!(
            "{} appears twice in the patch; merge its changes into one section",
            path.rel()
        )))
    }
}
