//! Workspace edits a server computes (a rename's, a code action's, those it sends by
//! `workspace/applyEdit`), gathered into one all-or-nothing change through the call's write
//! door, against the text the server saw: an edit computed on a stale copy is refused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use lsp_types as lsp;
use tether_fs::{ChangeOp, hash_bytes};
use tether_tool::{CallCx, ToolError, counted};

use crate::error::LspError;
use crate::position::Encoding;
use crate::protocol::{self, WorkspaceEdit};
use crate::server::{Server, refusal, uri_path};

/// Edits gathered for one change: each is applied, in order, to the text the ones before it
/// left; the disk is untouched until [`Gathered::commit`].
#[derive(Default)]
pub(crate) struct Gathered {
    files: BTreeMap<PathBuf, Gathering>,
}

/// One file's part of a gathered change.
struct Gathering {
    /// The text on disk when the first edit of it was gathered.
    before: String,
    after: String,
    edits: usize,
    rename_to: Option<PathBuf>,
}

impl Gathered {
    /// Whether nothing was gathered.
    pub(crate) fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Moves the file at `from` to `to` as part of the change; an edit gathered after this
    /// that names the file by its new path lands on it.
    pub(crate) async fn move_file(
        &mut self,
        cx: &CallCx,
        server: &Server,
        from: PathBuf,
        to: PathBuf,
    ) -> Result<(), ToolError> {
        self.start(cx, server, &from, "").await?;
        if let Some(entry) = self.files.get_mut(&from) {
            entry.rename_to = Some(to);
        }
        Ok(())
    }

    /// Begins gathering edits of `path` from the text on disk, which must be the text the
    /// server holds.
    async fn start(
        &mut self,
        cx: &CallCx,
        server: &Server,
        path: &PathBuf,
        again: &str,
    ) -> Result<(), ToolError> {
        if self.files.contains_key(path) {
            return Ok(());
        }
        let rel = cx.workspace().resolve_write(&path.to_string_lossy())?;
        let before = crate::named::read(cx.workspace(), path)
            .await
            .map_err(|why| ToolError::invalid(format!("cannot read {}: {why}", rel.rel())))?;
        if server.holds(path, &before).await == Some(false) {
            return Err(ToolError::invalid(format!(
                "{} changed after {} computed the edit, so it would land on the wrong text; \
                 nothing was written. {again}",
                rel.rel(),
                server.id
            )));
        }
        let start = Gathering {
            after: before.clone(),
            before,
            edits: 0,
            rename_to: None,
        };
        self.files.insert(path.clone(), start);
        Ok(())
    }

    /// Adds `edit`, checked against the text `server` holds; `again` is what to run for an
    /// edit computed on a copy that changed since ("Run lsp_rename again").
    pub(crate) async fn add(
        &mut self,
        cx: &CallCx,
        server: &Server,
        edit: &WorkspaceEdit,
        again: &str,
    ) -> Result<(), ToolError> {
        let plan = plan(edit).map_err(|e| ToolError::invalid(e.to_string()))?;
        for (path, file) in plan.files {
            // A file this change moves is edited under its old path.
            let moved = self
                .files
                .iter()
                .find(|(_, g)| g.rename_to.as_ref() == Some(&path))
                .map(|(from, _)| from.clone());
            let path = moved.unwrap_or(path);
            let rel = cx.workspace().resolve_write(&path.to_string_lossy())?;
            self.start(cx, server, &path, again).await?;
            let Some(entry) = self.files.get_mut(&path) else {
                continue;
            };
            entry.after = apply(&entry.after, &file.edits, server.encoding)
                .map_err(|e| ToolError::invalid(format!("{}: {e}", rel.rel())))?;
            entry.edits += file.edits.len();
            if file.rename_to.is_some() {
                entry.rename_to = file.rename_to;
            }
        }
        Ok(())
    }

    /// The change as ops for the write door, with one `file: N edits` line per file, the
    /// texts the server is given once written, and the files moved away.
    fn into_change(self, cx: &CallCx) -> Result<Change, ToolError> {
        let mut change = Change::default();
        for (path, file) in self.files {
            let rel = cx.workspace().resolve_write(&path.to_string_lossy())?;
            let expect = hash_bytes(file.before.as_bytes());
            // The server is given the text under the name the file has after the change.
            let now = file.rename_to.clone().unwrap_or_else(|| path.clone());
            if file.rename_to.is_some() {
                change.moved.push(path.clone());
            }
            change.synced.push((now, file.after.clone()));
            let shown = match &file.rename_to {
                Some(to) => format!(
                    "{} moved to {}",
                    rel.rel(),
                    cx.workspace().resolve_write(&to.to_string_lossy())?.rel()
                ),
                None => rel.rel().to_string(),
            };
            change
                .report
                .push(format!("{shown}: {}", counted(file.edits, "edit")));
            change.ops.push(match &file.rename_to {
                Some(to) => ChangeOp::Rename {
                    from: rel,
                    to: cx.workspace().resolve_write(&to.to_string_lossy())?,
                    expect,
                    content: Some(file.after.into_bytes()),
                },
                None => ChangeOp::Write {
                    path: rel,
                    content: file.after.into_bytes(),
                    expect,
                },
            });
        }
        Ok(change)
    }

    /// Writes what was gathered all or nothing, then gives the server the new text; one
    /// `file: N edits` line per file.
    pub(crate) async fn commit(
        self,
        cx: &CallCx,
        server: &Server,
    ) -> Result<Vec<String>, ToolError> {
        let change = self.into_change(cx)?;
        cx.fs().commit(change.ops).await?;
        // The write hooks run after the call; what the call asks next must already see the
        // files moved away gone and the new texts in place.
        for path in change.moved {
            server.tell_gone(&path).await;
        }
        for (path, text) in change.synced {
            server.tell_exists(&path).await;
            server.sync(&path, &text).await?;
        }
        Ok(change.report)
    }

    /// Stages what was gathered instead of writing it (a `dry_run`): the staged change's text,
    /// with what it would bring, and its `file: N edits` lines.
    pub(crate) async fn stage(
        self,
        cx: &CallCx,
        origin: &str,
        summary: impl FnOnce(&[String]) -> String,
    ) -> Result<(String, Vec<String>), ToolError> {
        let change = self.into_change(cx)?;
        let summary = summary(&change.report);
        let staged = tether_tool::stage_dry_run(cx, origin, &summary, change.ops).await?;
        Ok((staged, change.report))
    }
}

/// A gathered change made ready for the write door ([`Gathered::into_change`]).
#[derive(Default)]
struct Change {
    ops: Vec<ChangeOp>,
    report: Vec<String>,
    synced: Vec<(PathBuf, String)>,
    moved: Vec<PathBuf>,
}

/// Runs `request` while taking the `workspace/applyEdit` requests the server sends meanwhile
/// (some servers edit that way): each is gathered into `into`, or refused with why.
pub(crate) async fn gathering_edits<F>(
    cx: &CallCx,
    server: &Server,
    request: F,
    into: &mut Gathered,
    again: &str,
) -> F::Output
where
    F: std::future::Future,
{
    let (_accepting, mut edits) = server.accept_edits().await;
    tokio::pin!(request);
    loop {
        tokio::select! {
            done = &mut request => return done,
            Some((edit, reply)) = edits.recv() => {
                let result = match into.add(cx, server, &edit, again).await {
                    Ok(()) => lsp::ApplyWorkspaceEditResponse {
                        applied: true,
                        failure_reason: None,
                        failed_change: None,
                    },
                    Err(why) => refusal(&why.to_string()),
                };
                let _ = reply.send(result);
            }
        }
    }
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
                    "the server's edit also wants to {other} a file, which tether does not do \
                     for a server; nothing was written"
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
