//! Turning the matches of an `ast_edit` into a staged change: non-overlapping replacements,
//! indentation and line endings of the site, and a capped unified-diff preview. The texts are
//! built and diffed on the search thread, within the call's budget; only staging happens on
//! the async runtime.

use std::time::{Duration, Instant};

use similar::TextDiff;
use std::collections::HashMap;

use tether_fs::{ChangeOp, ContentHash, Proposal, Recount};
use tether_tool::{CallCx, ToolError, ToolOutput};

use crate::budget::{Budget, Stop};
use crate::search::FileMatches;

/// Lines of diff preview shown before it is cut.
const PREVIEW_LINES: usize = 200;

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
    let mut preview = Preview::default();
    let mut files = Vec::new();
    for file in found {
        budget.check()?;
        let r = rewrite_file(file);
        if r.new == r.base {
            continue;
        }
        let deadline = budget.deadline().min(Instant::now() + PREVIEW_DIFF_TIME);
        preview.add(&r.rel, &r.base, &r.new, deadline);
        files.push(r);
    }
    budget.check()?;
    Ok(Prepared {
        files,
        matched,
        preview: preview.finish(),
    })
}

/// Stages the rewrite of every changed file under one edit id; writes nothing. `recount`
/// counts the pattern's sites in a text, for an accept onto files changed since.
pub(crate) fn stage_edit(
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
    let count = files.len();
    let mut ops = Vec::with_capacity(count);
    let mut bases = HashMap::with_capacity(count);
    for f in files {
        let path = cx.workspace().resolve_write(&f.rel)?;
        bases.insert(path.clone(), f.base);
        ops.push(ChangeOp::Write {
            path,
            content: f.new.into_bytes(),
            expect: f.hash,
        });
    }
    let summary = format!(
        "{replaced} replacement{} in {count} file{} for `{}`",
        plural(replaced),
        plural(count),
        pattern.trim()
    );
    let id = cx.fs().staged().stage_change(Proposal {
        origin: "ast_edit".into(),
        summary,
        preview: preview.clone(),
        ops,
        bases,
        recount: Some(recount),
    });
    let mut out = format!(
        "(proposed) {replaced} replacement{} in {count} file{}; nothing is written yet: call \
         resolve with edit_id \"{id}\" and action \"accept\" or \"discard\"\n",
        plural(replaced),
        plural(count),
    );
    if inner > 0 {
        out.push_str(&format!(
            "{inner} inner match{} inside a replaced match {} left for a second pass: run the \
             same ast_edit again after accepting this one\n",
            if inner == 1 { "" } else { "es" },
            if inner == 1 { "was" } else { "were" }
        ));
    }
    out.push_str(searched);
    out.push_str("\n\n");
    out.push_str(&preview);
    Ok(ToolOutput::text(out))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A unified diff of every file, cut at [`PREVIEW_LINES`] with a count of what was cut. Only
/// the shown lines are kept; the rest are counted one hunk at a time.
#[derive(Default)]
struct Preview {
    lines: Vec<String>,
    total: usize,
}

impl Preview {
    fn add(&mut self, rel: &str, old: &str, new: &str, deadline: Instant) {
        let diff = TextDiff::configure()
            .deadline(deadline)
            .diff_lines(old, new);
        let mut unified = diff.unified_diff();
        unified.context_radius(2);
        for (i, hunk) in unified.iter_hunks().enumerate() {
            if i == 0 {
                self.push(&format!("--- a/{rel}"));
                self.push(&format!("+++ b/{rel}"));
            }
            for line in hunk.to_string().lines() {
                self.push(line.trim_end_matches('\r'));
            }
        }
    }

    fn push(&mut self, line: &str) {
        if self.lines.len() < PREVIEW_LINES {
            self.lines.push(line.to_string());
        }
        self.total += 1;
    }

    fn finish(self) -> String {
        let mut out = self.lines.join("\n");
        if self.total > PREVIEW_LINES {
            out.push_str(&format!(
                "\n… preview cut: {} more diff lines not shown ({} in all); the staged change holds every file",
                self.total - PREVIEW_LINES,
                self.total
            ));
        }
        out
    }
}
