//! The preview of a staged rewrite. Every changed file is listed first with its replacement
//! count, so no file hides behind another's diff; then one diff budget is shared out between
//! the files a hunk at a time, whole hunks only, and the list says what each file left out.

use std::time::Instant;

use similar::udiff::UnifiedHunkHeader;
use similar::{ChangeTag, DiffOp, DiffableStr as _, TextDiff, group_diff_ops};
use tether_base::cut_line;

use crate::footer::count;

/// Diff lines (hunk headers included, file headers not) the preview shows in all.
pub(crate) const PREVIEW_LINES: usize = 200;

/// Files the list names before it counts the rest.
pub(crate) const LISTED_FILES: usize = 500;

/// Unchanged lines shown around each change.
const CONTEXT_LINES: usize = 2;

/// Characters of one diff line before it is cut.
const DIFF_LINE_CHARS: usize = 300;

/// One changed file as the preview sees it.
pub(crate) struct FileDiff<'a> {
    /// Path as shown.
    pub(crate) rel: &'a str,
    /// Replacements made in it.
    pub(crate) replaced: usize,
    pub(crate) old: &'a str,
    pub(crate) new: &'a str,
    /// The diff's hunks: each a run of operations with its context.
    pub(crate) hunks: Vec<Vec<DiffOp>>,
}

/// A hunk longer than this is split at its unchanged lines (its changes shown without
/// context), so that changes close together still show rather than one hunk too long for any
/// preview.
const SPLIT_HUNK_LINES: usize = PREVIEW_LINES / 2;

/// The hunks of a line diff from `old` to `new`, settling for a coarser (still exact) diff
/// when the search for a minimal one passes `deadline`.
pub(crate) fn hunks(old: &str, new: &str, deadline: Instant) -> Vec<Vec<DiffOp>> {
    let diff = TextDiff::configure()
        .deadline(deadline)
        .diff_lines(old, new);
    group_diff_ops(diff.ops().to_vec(), CONTEXT_LINES)
        .into_iter()
        .flat_map(|hunk| {
            if hunk_lines(&hunk) > SPLIT_HUNK_LINES {
                group_diff_ops(hunk, 0)
            } else {
                vec![hunk]
            }
        })
        .collect()
}

/// Lines a hunk takes in the preview: its header and every line it shows.
fn hunk_lines(hunk: &[DiffOp]) -> usize {
    1 + hunk
        .iter()
        .map(|op| op.old_range().len().max(op.new_range().len()) + replace_extra(op))
        .sum::<usize>()
}

/// A replacement shows both its old and its new lines.
fn replace_extra(op: &DiffOp) -> usize {
    match op {
        DiffOp::Replace { .. } => op.old_range().len().min(op.new_range().len()),
        _ => 0,
    }
}

/// How many leading hunks of each file the preview shows: a round at a time, each file in
/// path order takes its next hunk while the budget holds it (a file's first hunk also pays for
/// its two file headers); a file whose next hunk does not fit stops there.
fn share_out(files: &[FileDiff<'_>], budget: usize) -> Vec<usize> {
    let mut shown = vec![0; files.len()];
    let mut stopped = vec![false; files.len()];
    let mut left = budget;
    loop {
        let mut progress = false;
        for (i, file) in files.iter().enumerate() {
            if stopped[i] {
                continue;
            }
            let Some(hunk) = file.hunks.get(shown[i]) else {
                stopped[i] = true;
                continue;
            };
            let cost = hunk_lines(hunk) + if shown[i] == 0 { 2 } else { 0 };
            if cost <= left {
                left -= cost;
                shown[i] += 1;
                progress = true;
            } else {
                stopped[i] = true;
            }
        }
        if !progress {
            return shown;
        }
    }
}

/// The list of files, then the shared diff.
pub(crate) fn render(files: &[FileDiff<'_>]) -> String {
    let shown = share_out(files, PREVIEW_LINES);
    let mut out = String::from("files:\n");
    let mut any_cut = false;
    for (file, &n) in files.iter().zip(&shown).take(LISTED_FILES) {
        out.push_str(&format!(
            "  {}: {}",
            file.rel,
            count(file.replaced, "replacement", "replacements")
        ));
        let hidden = &file.hunks[n..];
        if !hidden.is_empty() {
            any_cut = true;
            let lines: usize = hidden.iter().map(|h| hunk_lines(h)).sum();
            let lines = count(lines, "line", "lines");
            if n == 0 {
                let hunks = count(hidden.len(), "hunk", "hunks");
                out.push_str(&format!(" (diff not shown: {hunks}, {lines})"));
            } else {
                let (cut, all) = (hidden.len(), file.hunks.len());
                out.push_str(&format!(
                    " (diff cut: {cut} of {all} hunks not shown, {lines})"
                ));
            }
        }
        out.push('\n');
    }
    if files.len() > LISTED_FILES {
        let rest = &files[LISTED_FILES..];
        let replaced: usize = rest.iter().map(|f| f.replaced).sum();
        any_cut |= rest.iter().any(|f| !f.hunks.is_empty());
        out.push_str(&format!(
            "  … and {} more ({}), not listed and not shown\n",
            count(rest.len(), "file", "files"),
            count(replaced, "replacement", "replacements")
        ));
    }
    for (file, &n) in files.iter().zip(&shown) {
        if n == 0 {
            continue;
        }
        out.push_str(&format!("--- a/{}\n+++ b/{}\n", file.rel, file.rel));
        let old_lines = file.old.tokenize_lines();
        let new_lines = file.new.tokenize_lines();
        for hunk in &file.hunks[..n] {
            out.push_str(&format!("{}\n", UnifiedHunkHeader::new(hunk)));
            for op in hunk {
                for change in op.iter_changes(&old_lines, &new_lines) {
                    let sign = match change.tag() {
                        ChangeTag::Equal => ' ',
                        ChangeTag::Delete => '-',
                        ChangeTag::Insert => '+',
                    };
                    let line = change.value();
                    let text = line.trim_end_matches(['\n', '\r']);
                    out.push_str(&format!("{sign}{}\n", cut_line(text, DIFF_LINE_CHARS)));
                    if !line.ends_with('\n') {
                        out.push_str("\\ No newline at end of file\n");
                    }
                }
            }
        }
    }
    if any_cut {
        out.push_str(
            "… the diff is cut per file as listed above (whole hunks only); the staged change \
             holds every file and line\n",
        );
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn file<'a>(rel: &'a str, old: &'a str, new: &'a str, replaced: usize) -> FileDiff<'a> {
        let deadline = Instant::now() + Duration::from_secs(5);
        FileDiff {
            rel,
            replaced,
            old,
            new,
            hunks: hunks(old, new, deadline),
        }
    }

    #[test]
    fn a_huge_file_cannot_hide_the_others() {
        let old: String = (0..400)
            .map(|i| format!("old({i})\n\n\n\n\n\n\n"))
            .collect();
        let new = old.replace("old(", "new(");
        let files = [
            file("big.py", &old, &new, 400),
            file("small.py", "old(1)\n", "new(1)\n", 1),
            file("tail.py", "x = 1\nold(2)", "x = 1\nnew(2)", 1),
        ];
        let text = render(&files);
        // Every file's diff appears, and the budget is kept.
        assert!(text.contains("-old(1)\n+new(1)"), "{text}");
        assert!(
            text.contains("+new(2)\n\\ No newline at end of file"),
            "{text}"
        );
        let diff_lines = text.lines().filter(|l| !l.starts_with("  ")).count();
        assert!(diff_lines <= PREVIEW_LINES + 10, "{diff_lines}");
        let lines: Vec<&str> = text.lines().collect();
        let (head, tail) = (&lines[..6], &lines[lines.len() - 12..]);
        insta::assert_snapshot!(format!("{}\n[…]\n{}", head.join("\n"), tail.join("\n")));
        assert!(text.ends_with("holds every file and line"), "{text}");
    }

    #[test]
    fn a_hunk_is_shown_whole_or_not_at_all() {
        // 300 changed lines in a row: one hunk, and no unchanged line to split it at.
        let old: String = (0..300).map(|i| format!("line{i}\n")).collect();
        let new = old.replace("line", "LINE");
        let files = [file("one.py", &old, &new, 300)];
        let text = render(&files);
        assert!(!text.contains("-line0"), "{text}");
        assert!(
            text.contains("one.py: 300 replacements (diff not shown: 1 hunk, 601 lines)"),
            "{text}"
        );
    }

    #[test]
    fn a_long_hunk_splits_at_unchanged_lines() {
        let old: String = (0..100).map(|i| format!("old({i})\n\n")).collect();
        let new = old.replace("old(", "new(");
        let files = [file("near.py", &old, &new, 100)];
        let text = render(&files);
        assert!(
            text.starts_with("files:\n  near.py: 100 replacements (diff cut: "),
            "{text}"
        );
        assert!(
            text.contains("\n@@ -1 +1 @@\n-old(0)\n+new(0)\n@@ -3 +3 @@\n-old(1)\n"),
            "{text}"
        );
    }
}
