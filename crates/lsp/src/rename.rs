//! `lsp_rename`: the server's rename, applied to every file it touches in one all-or-nothing
//! write, against the text the server saw; an edit computed on a stale copy is refused. The
//! server decides which files it touches, so what it left is searched for afterwards.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use lsp_types as lsp;
use lsp_types::request::{PrepareRenameRequest, Rename};
use schemars::JsonSchema;
use serde::Deserialize;
use tether_fs::{ChangeOp, hash_bytes};
use tether_tool::{CallCx, Concurrency, Preview, Tier, Tool, ToolError, ToolOutput, counted};

use crate::error::LspError;
use crate::leftovers;
use crate::position::{Encoding, locate_line};
use crate::protocol::{self, WorkspaceEdit};
use crate::server::{Server, refusal, uri_path};
use crate::supervisor::Supervisor;

/// Arguments of `lsp_rename`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameArgs {
    /// The file, relative to the workspace.
    #[serde(alias = "path", alias = "file_path")]
    file: String,
    /// 1-based line of the symbol.
    #[schemars(range(min = 1))]
    line: usize,
    /// Text naming the symbol on that line (`name#2` for the second occurrence).
    symbol: String,
    /// The new name.
    new_name: String,
}

/// The `lsp_rename` tool.
pub struct LspRenameTool {
    pub(crate) servers: Arc<Supervisor>,
}

impl Tool for LspRenameTool {
    type Args = RenameArgs;

    fn name(&self) -> &'static str {
        "lsp_rename"
    }

    fn description(&self) -> String {
        "Project-wide rename through the language server: the symbol named by `file`, 1-based \
         `line` and `symbol` becomes `new_name` in the files the server finds (it may miss \
         some, e.g. pyright skips files outside its project's `include`); its edits are \
         written all or nothing. Reports the files changed and the edits in each, then every \
         use of the old name still left in files of that language (identifiers, not comments \
         or strings) with its line and its file's diagnostics."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn concurrency(&self, _: &RenameArgs) -> Concurrency {
        Concurrency::Workspace
    }

    fn preview(&self, args: &RenameArgs) -> Preview {
        let summary = format!(
            "rename `{}` to `{}` wherever the server finds it",
            args.symbol, args.new_name
        );
        Preview::new(summary, vec![args.file.clone()])
    }

    async fn call(&self, cx: &CallCx, args: RenameArgs) -> Result<ToolOutput, ToolError> {
        if args.line == 0 {
            return Err(ToolError::invalid("`line` is 1-based: the first line is 1"));
        }
        let t = crate::tool::target(&self.servers, cx, &args.file).await?;
        let lines: Vec<&str> = t.text.lines().collect();
        let (line, byte, ident) = locate_line(&args.file, &lines, args.line, &args.symbol)?;
        // A rename writes: a name that is only part of the identifier it lands on is refused.
        if let Some(typed) = crate::position::typed_name(&args.symbol).filter(|t| *t != ident) {
            return Err(ToolError::invalid(format!(
                "`{typed}` is not a whole name on line {}: it is part of `{ident}`; to rename \
                 that, give `symbol: \"{ident}\"`",
                args.line
            )));
        }
        let server = &t.server;
        let at = protocol::at(&t.abs, args.line - 1, server.encoding.column(line, byte))?;
        let can_prepare = server.capabilities.rename_provider.options.prepare_provider;
        if can_prepare {
            let ok = server
                .call::<PrepareRenameRequest>(at.clone(), cx.cancel_token())
                .await?;
            if ok.is_null() {
                return Err(ToolError::invalid(format!(
                    "{} cannot rename `{ident}` at {}:{} (not a renameable symbol there)",
                    server.id, args.file, args.line
                )));
            }
        }
        // A server whose queries search every file once it has listed them is given the
        // moment that takes (pyright: about a second); one still indexing renames the uses it
        // has reached: said beside the count, so the leftovers below are read as likely.
        server.listing_awaited().await;
        let indexing = match server.searches_whole_project() {
            true => None,
            false => match server.state().await {
                crate::server::State::Indexing(pct) => Some(pct),
                _ => None,
            },
        };
        let params = lsp::RenameParams {
            text_document_position: at,
            new_name: args.new_name.clone(),
            work_done_progress_params: Default::default(),
        };
        let rename = server.call::<Rename>(params, cx.cancel_token());
        let (edit, mut report) = serving_edits(cx, server, rename).await;
        let plan = plan(&edit?).map_err(|e| ToolError::invalid(e.to_string()))?;
        if plan.files.is_empty() && report.is_empty() {
            return Err(ToolError::invalid(format!(
                "{} returned no edits for renaming `{ident}`",
                server.id
            )));
        }
        if !plan.files.is_empty() {
            report.extend(write_plan(cx, server, &plan).await?);
        }
        let mut head = format!(
            "renamed `{ident}` to `{}` in {}",
            args.new_name,
            counted(report.len(), "file")
        );
        if let Some(pct) = indexing {
            head.push_str(&format!(
                " ({} was still indexing{} when it renamed, so it may have missed uses it had \
                 not reached: check the search for leftovers below, or rename again once `lsp \
                 status` says it is ready)",
                server.id,
                pct.map_or(String::new(), |p| format!(" ({p}%)"))
            ));
        }
        // The server picks the files; what it left is searched, unless the name did not change.
        let mut left = String::new();
        if let (Some(lang), true) = (
            self.servers.config().language_of(&t.abs),
            ident != args.new_name,
        ) {
            // Each report line is `path: N edits`, as `write_plan` writes it.
            let edited: Vec<&str> = report
                .iter()
                .filter_map(|line| Some(line.rsplit_once(": ")?.0))
                .collect();
            let found = leftovers::report(cx, &self.servers, lang, &ident, &edited).await;
            if let Some(summary) = found.summary {
                head.push_str(&format!(" ({} chose them; {summary})", server.id));
            }
            left = format!("\n{}", found.section);
        }
        Ok(ToolOutput::text(format!(
            "{head}:\n{}{left}",
            report.join("\n")
        )))
    }
}

/// Runs `request` while applying, through this call's write door, any `workspace/applyEdit`
/// the server sends meanwhile (some servers edit that way); also returns what those wrote.
async fn serving_edits<F>(cx: &CallCx, server: &Server, request: F) -> (F::Output, Vec<String>)
where
    F: std::future::Future,
{
    let (_accepting, mut edits) = server.accept_edits();
    let mut written = Vec::new();
    tokio::pin!(request);
    loop {
        tokio::select! {
            done = &mut request => return (done, written),
            Some((edit, reply)) = edits.recv() => {
                let result = match plan(&edit) {
                    Ok(p) => match write_plan(cx, server, &p).await {
                        Ok(lines) => {
                            written.extend(lines);
                            lsp::ApplyWorkspaceEditResponse {
                                applied: true,
                                failure_reason: None,
                                failed_change: None,
                            }
                        }
                        Err(e) => refusal(&e.to_string()),
                    },
                    Err(why) => refusal(&why.to_string()),
                };
                let _ = reply.send(result);
            }
        }
    }
}

/// Writes a workspace edit all or nothing, against the text the server saw, then gives the
/// server the new text; one `file: N edits` line per file.
async fn write_plan(cx: &CallCx, server: &Server, plan: &Plan) -> Result<Vec<String>, ToolError> {
    let mut ops = Vec::new();
    let mut report = Vec::new();
    let mut synced = Vec::new();
    for (path, file) in &plan.files {
        let rel = cx.workspace().resolve_write(&path.to_string_lossy())?;
        // The text the server saw is the text on disk now, or the commit refuses.
        let before = crate::named::read(cx.workspace(), path)
            .await
            .map_err(|why| ToolError::invalid(format!("cannot read {}: {why}", rel.rel())))?;
        if server.holds(path, &before).await == Some(false) {
            return Err(ToolError::invalid(format!(
                "{} changed after {} computed the edit, so it would land on the wrong text; \
                 nothing was written. Run lsp_rename again",
                rel.rel(),
                server.id
            )));
        }
        let after = apply(&before, &file.edits, server.encoding)
            .map_err(|e| ToolError::invalid(format!("{}: {e}", rel.rel())))?;
        report.push(format!(
            "{}: {}",
            rel.rel(),
            counted(file.edits.len(), "edit")
        ));
        let expect = hash_bytes(before.as_bytes());
        synced.push((path.clone(), after.clone()));
        match &file.rename_to {
            Some(to) => ops.push(ChangeOp::Rename {
                from: rel,
                to: cx.workspace().resolve_write(&to.to_string_lossy())?,
                expect,
                content: Some(after.into_bytes()),
            }),
            None => ops.push(ChangeOp::Write {
                path: rel,
                content: after.into_bytes(),
                expect,
            }),
        }
    }
    cx.fs().commit(ops).await?;
    for (path, text) in synced {
        server.sync(&path, &text).await?;
    }
    Ok(report)
}

/// One file's part of a workspace edit.
#[derive(Default)]
struct FileEdit {
    edits: Vec<TextEdit>,
    rename_to: Option<PathBuf>,
}

struct TextEdit {
    start: (u32, u32),
    end: (u32, u32),
    text: String,
}

struct Plan {
    files: BTreeMap<PathBuf, FileEdit>,
}

/// Reads a `WorkspaceEdit` (`changes` or `documentChanges`, with file renames).
fn plan(edit: &WorkspaceEdit) -> Result<Plan, LspError> {
    let mut files: BTreeMap<PathBuf, FileEdit> = BTreeMap::new();
    let mut add = |uri: &str, edits: &[protocol::TextEdit]| -> Result<(), LspError> {
        let path = uri_path(uri)
            .ok_or_else(|| LspError::unusable(format!("the server edits a non-file URI {uri}")))?;
        let entry = files.entry(path).or_default();
        for e in edits {
            let (start, end) = (e.range.start, e.range.end);
            entry.edits.push(TextEdit {
                start: (start.line, start.character),
                end: (end.line, end.character),
                text: e.new_text.clone(),
            });
        }
        Ok(())
    };
    for (uri, edits) in &edit.changes {
        add(uri, &edits.0)?;
    }
    let mut renames = Vec::new();
    for change in &edit.document_changes {
        match change.kind.as_deref() {
            None => add(&change.text_document.uri, &change.edits)?,
            Some("rename") => {
                let from = uri_path(&change.old_uri);
                let to = uri_path(&change.new_uri);
                match (from, to) {
                    (Some(f), Some(t)) => renames.push((f, t)),
                    _ => {
                        return Err(LspError::unusable(
                            "the server renames a file by a non-file URI",
                        ));
                    }
                }
            }
            Some(other) => {
                return Err(LspError::unusable(format!(
                    "the server's rename also wants to {other} a file, which lsp_rename does \
                     not do; nothing was written"
                )));
            }
        }
    }
    for (from, to) in renames {
        // Edits may name the file by its old or its new name.
        let mut entry = files.remove(&from).unwrap_or_default();
        if let Some(more) = files.remove(&to) {
            entry.edits.extend(more.edits);
        }
        entry.rename_to = Some(to);
        files.insert(from, entry);
    }
    Ok(Plan { files })
}

/// Applies text edits (positions in the server's encoding) to `text`, last first.
fn apply(text: &str, edits: &[TextEdit], enc: Encoding) -> Result<String, LspError> {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let offset = |(line, col): (u32, u32)| -> Result<usize, LspError> {
        let l = line as usize;
        let Some(&start) = starts.get(l) else {
            return Err(LspError::unusable(format!(
                "an edit points at line {}, past the end",
                l + 1
            )));
        };
        let end = starts.get(l + 1).map_or(text.len(), |e| e - 1);
        let line_text = text[start..end].trim_end_matches('\r');
        Ok(start + enc.byte(line_text, col))
    };
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| Ok((offset(e.start)?, offset(e.end)?, e.text.as_str())))
        .collect::<Result<_, LspError>>()?;
    spans.sort_by_key(|(s, _, _)| std::cmp::Reverse(*s));
    let mut out = text.to_string();
    let mut limit = usize::MAX;
    for (s, e, new) in spans {
        if s > e || e > limit {
            return Err(LspError::unusable(
                "the server sent overlapping edits; nothing was written",
            ));
        }
        out.replace_range(s..e, new);
        limit = s;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn edits_apply_last_first_in_either_encoding() {
        let text = "let s = \"😀\"; let old = 1;\nold + old\n";
        let edit = |start, end| TextEdit {
            start,
            end,
            text: "new".into(),
        };
        // In UTF-16 the emoji is 2 units, so `old` starts at 18; in UTF-8 (4 bytes) at 20.
        let utf16 = [
            edit((0, 18), (0, 21)),
            edit((1, 0), (1, 3)),
            edit((1, 6), (1, 9)),
        ];
        let out = apply(text, &utf16, Encoding::Utf16).unwrap();
        assert_eq!(out, "let s = \"😀\"; let new = 1;\nnew + new\n");
        let utf8 = [edit((0, 20), (0, 23))];
        assert_eq!(
            apply(text, &utf8, Encoding::Utf8).unwrap(),
            "let s = \"😀\"; let new = 1;\nold + old\n"
        );
        let overlapping = [edit((1, 0), (1, 5)), edit((1, 2), (1, 4))];
        assert!(apply(text, &overlapping, Encoding::Utf8).is_err());
    }
}
