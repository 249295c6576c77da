//! `dry_run`: a write tool's change staged instead of written, shown as a diff with what the
//! run's checkers say it would bring; `resolve` then writes it or drops it.

use std::collections::HashMap;

use similar::TextDiff;
use tether_fs::{ChangeOp, Proposal, Workspace, WritePath};

use crate::{CallCx, ToolError};

/// Diff lines a dry run shows in all, file headers included.
const DIFF_LINES: usize = 200;

/// Stages `ops` under an edit id instead of writing them, and says so: each file's diff, and
/// under it what the run's checkers say the change would bring.
pub async fn stage_dry_run(
    cx: &CallCx,
    origin: &str,
    summary: &str,
    ops: Vec<ChangeOp>,
) -> Result<String, ToolError> {
    let ws = cx.workspace();
    let mut bases = HashMap::new();
    let mut diffs = Vec::new();
    for op in &ops {
        match op {
            ChangeOp::Write { path, content, .. } => {
                let old = current_text(ws, path)?;
                diffs.push(diff(path.rel(), &old, &String::from_utf8_lossy(content)));
                bases.insert(path.clone(), old);
            }
            ChangeOp::Create { path, content } => {
                diffs.push(diff(path.rel(), "", &String::from_utf8_lossy(content)));
            }
            ChangeOp::Delete { path, .. } => diffs.push(format!("deleted {}", path.rel())),
            ChangeOp::Rename {
                from, to, content, ..
            } => {
                diffs.push(format!("moved {} -> {}", from.rel(), to.rel()));
                if let Some(content) = content {
                    let old = current_text(ws, from)?;
                    diffs.push(diff(to.rel(), &old, &String::from_utf8_lossy(content)));
                }
            }
            _ => diffs.push("a change this preview cannot show".into()),
        }
    }
    let joined = diffs.join("\n");
    let preview = crate::capped_list(joined.lines(), DIFF_LINES, "diff lines");
    let preview = preview.trim_end().to_string();
    let proposal = Proposal {
        origin: origin.into(),
        summary: summary.to_string(),
        preview: preview.clone(),
        ops,
        bases,
        recount: None,
        verdict: None,
    };
    let (id, verdict) = cx.fs().stage_judged(proposal).await;
    Ok(format!(
        "(proposed, dry run) {summary}; nothing is written yet: call resolve with edit_id \
         \"{id}\" and action \"accept\" or \"discard\"\n\n{preview}\n\n{verdict}"
    ))
}

/// A file's text now, as the rebase of a later accept takes it.
fn current_text(ws: &Workspace, path: &WritePath) -> Result<String, ToolError> {
    match ws.read_hashed(path)? {
        Some((bytes, _)) => String::from_utf8(bytes).map_err(|_| {
            ToolError::invalid(format!(
                "{} is not UTF-8 text, so a dry run cannot show its change",
                path.rel()
            ))
        }),
        None => Ok(String::new()),
    }
}

/// A unified diff of one file with two lines of context.
fn diff(rel: &str, old: &str, new: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(2)
        .header(&format!("a/{rel}"), &format!("b/{rel}"))
        .to_string()
}
