//! A line-based three-way merge, so a staged change can be rebased onto a file that changed
//! after it was staged. Changes that touch or overlap the same lines are a conflict, never
//! guessed at, as git does.

use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};

/// How long each of the two diffs may look for a minimal answer before settling.
const DIFF_TIME: Duration = Duration::from_secs(2);

/// Lines of the base one side replaced, and what it put there.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Edit<'a> {
    base: Range<usize>,
    lines: Vec<&'a str>,
}

/// Where both sides changed the same base lines (1-based, inclusive, in the base).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlap {
    /// First base line the staged side changed there.
    pub first: usize,
    /// Last base line (equal to `first - 1` for a pure insertion).
    pub last: usize,
}

/// Merges `theirs` (the file now) and `ours` (the staged text), both made from `base`. Returns
/// the merged text, or every place where the two changed the same or adjacent lines.
pub fn merge3(base: &str, ours: &str, theirs: &str) -> Result<String, Vec<Overlap>> {
    let base_lines: Vec<&str> = base.split_inclusive('\n').collect();
    let our_edits = edits(&base_lines, ours);
    let their_edits = edits(&base_lines, theirs);
    let overlaps: Vec<Overlap> = our_edits
        .iter()
        .filter(|o| their_edits.iter().any(|t| clash(o, t)))
        .map(|o| Overlap {
            first: o.base.start + 1,
            last: o.base.end,
        })
        .collect();
    if !overlaps.is_empty() {
        return Err(overlaps);
    }
    let mut all: Vec<&Edit<'_>> = our_edits.iter().chain(&their_edits).collect();
    all.sort_by_key(|e| (e.base.start, e.base.end));
    all.dedup_by(|a, b| a == b);
    let mut out = String::with_capacity(theirs.len().max(ours.len()));
    let mut at = 0;
    for e in all {
        out.extend(base_lines[at..e.base.start].iter().copied());
        out.extend(e.lines.iter().copied());
        at = e.base.end;
    }
    out.extend(base_lines[at..].iter().copied());
    Ok(out)
}

/// Two edits clash when they change the same or adjacent base lines, unless they are the
/// very same edit (both sides made it).
fn clash(a: &Edit<'_>, b: &Edit<'_>) -> bool {
    a != b && a.base.start <= b.base.end && b.base.start <= a.base.end
}

/// The changed regions of `new` against `base`, as base line ranges and their new lines.
fn edits<'a>(base: &[&'a str], new: &'a str) -> Vec<Edit<'a>> {
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let deadline = Some(Instant::now() + DIFF_TIME);
    let ops = capture_diff_slices_deadline(Algorithm::Myers, base, &new_lines, deadline);
    let mut out: Vec<Edit<'a>> = Vec::new();
    for op in ops {
        let (old, new) = match op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => (old_index..old_index + old_len, new_index..new_index),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index..old_index, new_index..new_index + new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (
                old_index..old_index + old_len,
                new_index..new_index + new_len,
            ),
        };
        // Ops with no equal lines between them (a delete, then an insert) form one edit.
        match out.last_mut() {
            Some(last) if last.base.end == old.start => {
                last.base.end = old.end;
                last.lines.extend(&new_lines[new]);
            }
            _ => out.push(Edit {
                base: old,
                lines: new_lines[new].to_vec(),
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const BASE: &str = "a\nb\nc\nd\ne\nf\ng\n";

    #[test]
    fn changes_apart_merge() {
        let ours = "a\nB\nc\nd\ne\nf\ng\n";
        let theirs = "a\nb\nc\nd\ne\nF\ng\nh\n";
        assert_eq!(
            merge3(BASE, ours, theirs).unwrap(),
            "a\nB\nc\nd\ne\nF\ng\nh\n"
        );
    }

    #[test]
    fn the_same_change_on_both_sides_is_taken_once() {
        let both = "a\nB\nc\nd\ne\nf\ng\n";
        assert_eq!(merge3(BASE, both, both).unwrap(), both);
    }

    #[test]
    fn overlapping_and_adjacent_changes_conflict() {
        let ours = "a\nB\nc\nd\ne\nf\ng\n";
        let theirs = "a\nb2\nc\nd\ne\nf\ng\n";
        assert_eq!(
            merge3(BASE, ours, theirs).unwrap_err(),
            [Overlap { first: 2, last: 2 }]
        );
        let next_line = "a\nb\nC\nd\ne\nf\ng\n";
        assert!(merge3(BASE, ours, next_line).is_err());
    }

    #[test]
    fn an_insertion_far_from_our_change_merges() {
        let ours = "a\nb\nc\nd\ne\nf\nG\n";
        let theirs = "import x\na\nb\nc\nd\ne\nf\ng\n";
        assert_eq!(
            merge3(BASE, ours, theirs).unwrap(),
            "import x\na\nb\nc\nd\ne\nf\nG\n"
        );
    }
}
