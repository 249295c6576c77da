//! Turning the matches of an `ast_edit` into a staged change: non-overlapping replacements,
//! indentation and line endings of the site, and a capped unified-diff preview. The texts are
//! built and diffed on the search thread, within the call's budget; only staging happens on
//! the async runtime.

use std::time::{Duration, Instant};

use std::collections::HashMap;

use tether_fs::{ChangeOp, ContentHash, Proposal, Recount};
use tether_tool::{CallCx, ToolError, ToolOutput};

use crate::budget::{Budget, Stop};
use crate::footer::count;
use crate::preview::{self, FileDiff};
use crate::search::FileMatches;

/// How long one file's preview diff may search for a minimal diff before it settles for a
/// coarser one (still exact, just less tidy).
const PREVIEW_DIFF_TIME: Duration = Duration::from_secs(5);

/// One file's new content and how many replacements and skipped inner matches it has.
struct Rewritten {
    rel: String,
    hash: ContentHash,
    /// The text the rewrite was made from, kept so the change can be rebased.
    base: String,
    new: String,
    replaced: usize,
    skipped_inner: usize,
}

/// An edit ready to stage: the changed files and the preview of all of them.
pub(crate) struct Prepared {
    files: Vec<Rewritten>,
    /// Whether anything matched at all (a rewrite can match and change nothing).
    matched: bool,
    preview: String,
}

/// Applies the outermost matches of a file, left to right; the search already left the inner
/// ones out for a second pass.
fn rewrite_file(file: FileMatches) -> Rewritten {
    let old = file.source.unwrap_or_default();
    let crlf = old.matches("\r\n").count() * 2 > old.matches('\n').count();
    let mut new = String::with_capacity(old.len());
    let mut cursor = 0;
    let mut replaced = 0;
    for m in &file.matches {
        let Some(text) = &m.replacement else { continue };
        new.push_str(&old[cursor..m.range.start]);
        if crlf {
            new.push_str(&text.replace("\r\n", "\n").replace('\n', "\r\n"));
        } else {
            new.push_str(text);
        }
        cursor = m.range.end;
        replaced += 1;
    }
    new.push_str(&old[cursor..]);
    Rewritten {
        rel: file.rel,
        hash: file.hash,
        base: old,
        new,
        replaced,
        skipped_inner: file.total - file.matches.len(),
    }
}

/// Builds every changed file's new text and the preview, looking at the budget between files.
pub(crate) fn prepare(found: Vec<FileMatches>, budget: &Budget<'_>) -> Result<Prepared, Stop> {
    let matched = !found.is_empty();
    let mut files = Vec::new();
    // Each diff's hunks, kept until every file's share of the preview is known.
    let mut before = Vec::new();
    for file in found {
        budget.check()?;
        let r = rewrite_file(file);
        if r.new == r.base {
            continue;
        }
        let deadline = budget.deadline().min(Instant::now() + PREVIEW_DIFF_TIME);
        before.push(preview::hunks(&r.base, &r.new, deadline));
        files.push(r);
    }
    budget.check()?;
    let diffs: Vec<FileDiff<'_>> = files
        .iter()
        .zip(before.iter_mut())
        .map(|(r, hunks)| FileDiff {
            rel: &r.rel,
            replaced: r.replaced,
            old: &r.base,
            new: &r.new,
            hunks: std::mem::take(hunks),
        })
        .collect();
    let preview = preview::render(&diffs);
    drop(diffs);
    Ok(Prepared {
        files,
        matched,
        preview,
    })
}

/// Stages the rewrite of every changed file under one edit id, with what the run's checkers
/// say it would bring; writes nothing. `recount` counts the pattern's sites in a text, for an
/// accept onto files changed since.
pub(crate) async fn stage_edit(
    cx: &CallCx,
    pattern: &str,
    prepared: Prepared,
    searched: &str,
    recount: Recount,
) -> Result<ToolOutput, ToolError> {
    let Prepared {
        files,
        matched,
        preview,
    } = prepared;
    if files.is_empty() {
        let why = if matched {
            "the matches already read as the rewrite"
        } else {
            "0 matches"
        };
        return Ok(ToolOutput::text(format!(
            "{why}; nothing was staged\n{searched}"
        )));
    }
    let replaced: usize = files.iter().map(|f| f.replaced).sum();
    let inner: usize = files.iter().map(|f| f.skipped_inner).sum();
    let files_count = files.len();
    let mut ops = Vec::with_capacity(files_count);
    let mut bases = HashMap::with_capacity(files_count);
    for f in files {
        let path = cx.workspace().resolve_write(&f.rel)?;
        bases.insert(path.clone(), f.base);
        ops.push(ChangeOp::Write {
            path,
            content: f.new.into_bytes(),
            expect: f.hash,
        });
    }
    let changed = format!(
        "{} in {}",
        count(replaced, "replacement", "replacements"),
        count(files_count, "file", "files")
    );
    let summary = format!("{changed} for `{}`", pattern.trim());
    let proposal = Proposal {
        origin: "ast_edit".into(),
        summary,
        preview: preview.clone(),
        ops,
        bases,
        recount: Some(recount),
        verdict: None,
    };
    let (id, verdict) = cx.fs().stage_judged(proposal).await;
    let mut out = format!(
        "(proposed) {changed}; nothing is written yet: call resolve with edit_id \"{id}\" and \
         action \"accept\" or \"discard\"\n"
    );
    if inner > 0 {
        out.push_str(&format!(
            "{} inside a replaced match {} left for a second pass: run the same ast_edit again \
             after accepting this one\n",
            count(inner, "inner match", "inner matches"),
            if inner == 1 { "was" } else { "were" }
        ));
    }
    out.push_str(searched);
    out.push_str("\n\n");
    out.push_str(&preview);
    out.push_str("\n\n");
    out.push_str(&verdict);
    Ok(ToolOutput::text(out))
}
