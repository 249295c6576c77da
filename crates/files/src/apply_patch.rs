use std::collections::{HashMap, HashSet};

use schemars::JsonSchema;
use serde::Deserialize;
use tether_fs::{ChangeOp, ContentHash, Workspace, WritePath, encode_text};
use tether_tool::{CallCx, Concurrency, Preview, Tier, Tool, ToolError, ToolOutput, counted};

use crate::patch::{FilePatch, Hunk, MatchBudget, Stopped, apply_hunks_within, parse_patch};
use crate::{read_text, similar_files_hint};

/// `apply_patch`: a multi-file patch applied in one all-or-nothing transaction.
pub struct ApplyPatchTool;

/// Arguments of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// The patch, from `*** Begin Patch` to `*** End Patch`.
    patch: String,
    /// Stage the change instead of writing it: the result shows its diff and the new
    /// problems the language servers find in the proposed text (nothing is written), and
    /// `resolve` with the edit_id it gives writes or drops it. Default false.
    #[serde(default)]
    dry_run: bool,
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
         rejects the whole patch and names the file and hunk. The result lists syntax errors \
         the patch introduced (a tree-sitter check of the bundled languages, on unless the run \
         turned it off). `dry_run` stages the patch instead, showing its diffs and the problems \
         it would bring, for `resolve`."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Workspace
    }

    fn preview(&self, args: &ApplyPatchArgs) -> Preview {
        let files = crate::patch::outline(&args.patch);
        let rows: Vec<String> = files.iter().map(|f| f.row()).collect();
        let summary = format!(
            "a patch to {}:\n{}",
            counted(files.len(), "file"),
            rows.join("\n")
        );
        Preview::new(summary, crate::patch::paths_of(&files))
    }

    async fn call(&self, cx: &CallCx, args: ApplyPatchArgs) -> Result<ToolOutput, ToolError> {
        let patch = parse_patch(&args.patch)
            .map_err(|e| ToolError::invalid(format!("the patch does not parse: {e}")))?;
        if patch.files.is_empty() {
            return Err(ToolError::invalid("the patch changes no file"));
        }
        // Locating hunks runs on this thread, so it polls the call's cancellation itself.
        let cancel = cx.cancel_token();
        let cancelled = || cancel.is_cancelled();
        let mut plan = Plan {
            ws: cx.workspace(),
            budget: MatchBudget::new(&cancelled),
            ops: Vec::new(),
            summary: Vec::new(),
            seen: HashSet::new(),
            deleted: HashMap::new(),
        };
        for file in &patch.files {
            match file {
                FilePatch::Add { path, content } => plan.add(path, content)?,
                FilePatch::Delete { path } => plan.delete(path)?,
                FilePatch::Update {
                    path,
                    move_to,
                    hunks,
                } => plan.update(path, move_to.as_deref(), hunks)?,
            }
        }
        let Plan { ops, summary, .. } = plan;
        if args.dry_run {
            let what = format!("a patch to {}", counted(summary.len(), "file"));
            return Ok(ToolOutput::text(
                tether_tool::stage_dry_run(cx, "apply_patch", &what, ops).await?,
            ));
        }
        cx.fs().commit(ops).await?;
        Ok(ToolOutput::text(format!(
            "applied the patch to {}:\n{}",
            counted(summary.len(), "file"),
            summary.join("\n")
        )))
    }
}

/// Every error of a patch ends with this: the whole patch is refused.
const NOTHING: &str = "; nothing was written";

/// The transaction a patch becomes, built one file section at a time.
struct Plan<'a> {
    ws: &'a Workspace,
    budget: MatchBudget<'a>,
    ops: Vec<ChangeOp>,
    /// One `A`/`D`/`M`/`R` line per file, for the result.
    summary: Vec<String>,
    /// Paths the patch named so far.
    seen: HashSet<WritePath>,
    /// Files deleted earlier in this patch, by their op's index: a `Move to` may replace one.
    deleted: HashMap<WritePath, (usize, ContentHash)>,
}

impl Plan<'_> {
    fn add(&mut self, path: &str, content: &str) -> Result<(), ToolError> {
        let path = self.ws.resolve_write(path)?;
        if self.ws.read_hashed(&path)?.is_some() {
            return Err(ToolError::invalid(format!(
                "{}: `Add File` but the file exists; use `Update File`{NOTHING}",
                path.rel()
            )));
        }
        claim(&mut self.seen, &path)?;
        self.summary.push(format!("A {}", path.rel()));
        self.ops.push(ChangeOp::Create {
            path,
            content: content.as_bytes().to_vec(),
        });
        Ok(())
    }

    fn delete(&mut self, path: &str) -> Result<(), ToolError> {
        let path = self.ws.resolve_write(path)?;
        claim(&mut self.seen, &path)?;
        let Some((_, expect)) = self.ws.read_hashed(&path)? else {
            return Err(ToolError::invalid(format!(
                "{}: `Delete File` but the file does not exist{}{NOTHING}",
                path.rel(),
                similar_files_hint(self.ws, path.rel())
            )));
        };
        self.summary.push(format!("D {}", path.rel()));
        self.deleted.insert(path.clone(), (self.ops.len(), expect));
        self.ops.push(ChangeOp::Delete { path, expect });
        Ok(())
    }

    fn update(
        &mut self,
        path: &str,
        move_to: Option<&str>,
        hunks: &[Hunk],
    ) -> Result<(), ToolError> {
        let path = self.ws.resolve_write(path)?;
        // Refused before reading or matching, so naming one big file many times costs nothing
        // (the transaction would refuse it too, but only after every hunk was located).
        claim(&mut self.seen, &path)?;
        if self.ws.read_hashed(&path)?.is_none() {
            return Err(ToolError::invalid(format!(
                "{}: `Update File` but the file does not exist{}; to create it use `*** Add \
                 File:`{NOTHING}",
                path.rel(),
                similar_files_hint(self.ws, path.rel())
            )));
        }
        let text =
            read_text(self.ws, &path).map_err(|e| ToolError::invalid(format!("{e}{NOTHING}")))?;
        let new_text = apply_hunks_within(&text.text, hunks, &mut self.budget).map_err(|e| {
            if e.stopped == Some(Stopped::Cancelled) {
                ToolError::Cancelled
            } else {
                ToolError::invalid(format!("{}: {e}{NOTHING}", path.rel()))
            }
        })?;
        let content = encode_text(&new_text, text.shape);
        match move_to {
            None => {
                self.summary.push(format!("M {}", path.rel()));
                self.ops.push(ChangeOp::Write {
                    path,
                    content,
                    expect: text.hash,
                });
                Ok(())
            }
            Some(to) => self.move_to(path, text.hash, to, content),
        }
    }

    /// The `Move to` of an updated file: a rename, or, onto a file this patch deleted, a
    /// rewrite of that file in place.
    fn move_to(
        &mut self,
        path: WritePath,
        hash: ContentHash,
        to: &str,
        content: Vec<u8>,
    ) -> Result<(), ToolError> {
        let to = self.ws.resolve_write(to)?;
        if to == path {
            return Err(ToolError::invalid(format!(
                "{}: `Move to` names the file itself; drop the `Move to` line{NOTHING}",
                path.rel()
            )));
        }
        self.summary
            .push(format!("R {} -> {}", path.rel(), to.rel()));
        if let Some((at, to_hash)) = self.deleted.remove(&to) {
            // `to` is rewritten in place (keeping its own permission bits) and the source
            // removed, all in the same transaction.
            if let Some(op) = self.ops.get_mut(at) {
                *op = ChangeOp::Write {
                    path: to,
                    content,
                    expect: to_hash,
                };
            }
            self.ops.push(ChangeOp::Delete { path, expect: hash });
            return Ok(());
        }
        claim(&mut self.seen, &to)?;
        if self.ws.read_hashed(&to)?.is_some() {
            return Err(ToolError::invalid(format!(
                "{}: `Move to: {}` but that file exists; to replace it, put `*** Delete File: \
                 {}` before the `*** Update File: {}` section, or pick another name{NOTHING}",
                path.rel(),
                to.rel(),
                to.rel(),
                path.rel()
            )));
        }
        self.ops.push(ChangeOp::Rename {
            from: path,
            to,
            expect: hash,
            content: Some(content),
        });
        Ok(())
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
