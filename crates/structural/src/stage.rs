//! Turning the matches of an `ast_edit` into a staged change: non-overlapping replacements,
//! indentation and line endings of the site, and a capped unified-diff preview.

use similar::TextDiff;
use tether_fs::ChangeOp;
use tether_tool::{CallCx, ToolError, ToolOutput};

use crate::render::searched_line;
use crate::search::{FileMatches, SearchStats};

/// Lines of diff preview shown before it is cut.
const PREVIEW_LINES: usize = 200;

/// One file's new content and how many replacements and skipped inner matches it has.
struct Rewritten {
    rel: String,
    old: String,
    new: String,
    replaced: usize,
    skipped_inner: usize,
}

/// Applies the outermost matches of a file, left to right; a match that starts inside an
/// already-replaced one is left for a second pass, so the result is deterministic.
fn rewrite_file(file: &FileMatches) -> Rewritten {
    let old = file.source.clone().unwrap_or_default();
    let crlf = old.matches("\r\n").count() * 2 > old.matches('\n').count();
    let mut new = String::with_capacity(old.len());
    let mut cursor = 0;
    let (mut replaced, mut skipped_inner) = (0, 0);
    let mut matches: Vec<_> = file.matches.iter().collect();
    matches.sort_by_key(|m| (m.range.start, std::cmp::Reverse(m.range.end)));
    for m in matches {
        if m.range.start < cursor {
            skipped_inner += 1;
            continue;
        }
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
        rel: file.rel.clone(),
        old,
        new,
        replaced,
        skipped_inner,
    }
}

/// Stages the rewrite of every matched file under one edit id; writes nothing.
pub(crate) fn stage_edit(
    cx: &CallCx,
    pattern: &str,
    found: Vec<FileMatches>,
    stats: &SearchStats,
    lang: &str,
    target: &str,
) -> Result<ToolOutput, ToolError> {
    let searched = searched_line(stats, lang, target);
    let mut ops = Vec::new();
    let mut files = Vec::new();
    for file in &found {
        let r = rewrite_file(file);
        if r.new == r.old {
            continue;
        }
        let path = cx.workspace().resolve_write(&file.rel)?;
        ops.push(ChangeOp::Write {
            path,
            content: r.new.clone().into_bytes(),
            expect: file.hash,
        });
        files.push(r);
    }
    if ops.is_empty() {
        let why = if found.is_empty() {
            "0 matches"
        } else {
            "the matches already read as the rewrite"
        };
        return Ok(ToolOutput::text(format!(
            "{why}; nothing was staged\n{searched}"
        )));
    }
    let replaced: usize = files.iter().map(|f| f.replaced).sum();
    let inner: usize = files.iter().map(|f| f.skipped_inner).sum();
    let summary = format!(
        "{replaced} replacement{} in {} file{} for `{}`",
        plural(replaced),
        files.len(),
        plural(files.len()),
        pattern.trim()
    );
    let preview = preview(&files);
    let id = cx
        .fs()
        .staged()
        .stage("ast_edit", summary.clone(), preview.clone(), ops);
    let mut out = format!(
        "(proposed) {replaced} replacement{} in {} file{}; nothing is written yet: call resolve \
         with edit_id \"{id}\" and action \"accept\" or \"discard\"\n",
        plural(replaced),
        files.len(),
        plural(files.len()),
    );
    if inner > 0 {
        out.push_str(&format!(
            "{inner} inner match{} inside a replaced match {} left for a second pass: run the \
             same ast_edit again after accepting this one\n",
            if inner == 1 { "" } else { "es" },
            if inner == 1 { "was" } else { "were" }
        ));
    }
    out.push_str(&searched);
    out.push_str("\n\n");
    out.push_str(&preview);
    Ok(ToolOutput::text(out))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A unified diff of every file, cut at [`PREVIEW_LINES`] with a count of what was cut.
fn preview(files: &[Rewritten]) -> String {
    let mut lines: Vec<String> = Vec::new();
    for f in files {
        let diff = TextDiff::from_lines(&f.old, &f.new);
        let text = diff
            .unified_diff()
            .context_radius(2)
            .header(&format!("a/{}", f.rel), &format!("b/{}", f.rel))
            .to_string();
        lines.extend(text.lines().map(|l| l.trim_end_matches('\r').to_string()));
    }
    let total = lines.len();
    let mut out = lines
        .into_iter()
        .take(PREVIEW_LINES)
        .collect::<Vec<_>>()
        .join("\n");
    if total > PREVIEW_LINES {
        out.push_str(&format!(
            "\n… preview cut: {} more diff lines not shown ({} in all); the staged change holds every file",
            total - PREVIEW_LINES,
            total
        ));
    }
    out
}
