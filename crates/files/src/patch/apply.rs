//! Applying parsed hunks to file text: locating each hunk by content, with progressively looser
//! whitespace matching, and explaining precisely why a hunk did not fit.
//!
//! The file's lines are never edited in place: the new text is built front to back while the
//! search moves forward over the untouched original, whose index ([`FileIndex`]) stays valid.

use super::matcher::{FileIndex, MatchBudget, STRICTNESS_LEVELS, TextHits};
use super::{END_OF_FILE, Hunk, HunkError, HunkLine, Stopped};

/// Why a hunk could not be placed: a reason for the model, or matching stopped early.
enum Failure {
    Reason(String),
    Stopped(Stopped),
}

impl From<Stopped> for Failure {
    fn from(s: Stopped) -> Self {
        Failure::Stopped(s)
    }
}

/// Where the next hunk starts, in the original file and in the text written so far, so error
/// messages refer to the file the model actually saw.
#[derive(Clone, Copy)]
struct Cursor {
    /// Lines of the original file consumed so far; the search starts here.
    line: usize,
    /// Lines of the new text written so far.
    written: usize,
}

impl Cursor {
    /// The original line the cursor follows, or `None` at the very start of the new text.
    fn after_line(self) -> Option<usize> {
        (self.written > 0).then_some(self.line.max(1))
    }

    /// The position of original line `idx` (at or after the cursor) in the edited text.
    fn edited(self, idx: usize) -> usize {
        (idx + self.written).saturating_sub(self.line)
    }
}

/// One placed hunk: `old_len` original lines at `pos` give way to the hunk's lines.
struct Placement<'h> {
    pos: usize,
    old_len: usize,
    lines: &'h [HunkLine],
}

/// Implementation of [`super::apply_hunks_within`].
pub(super) fn apply_hunks(
    original: &str,
    hunks: &[Hunk],
    budget: &mut MatchBudget,
) -> Result<String, HunkError> {
    let trailing_newline = original.is_empty() || original.ends_with('\n');
    let body = (!original.is_empty()).then(|| original.strip_suffix('\n').unwrap_or(original));
    let mut index = FileIndex::new(body);
    let mut out: Vec<&str> = Vec::with_capacity(index.len());
    let mut cursor = Cursor {
        line: 0,
        written: 0,
    };
    for (idx, hunk) in hunks.iter().enumerate() {
        let placed = place(&mut index, cursor, hunk, budget).map_err(|f| {
            let (reason, stopped) = match f {
                Failure::Reason(r) => (r, None),
                Failure::Stopped(s) => (stopped_reason(s, budget.limit()), Some(s)),
            };
            HunkError {
                hunk: idx + 1,
                reason,
                stopped,
            }
        })?;
        let lines = index.lines();
        out.extend(lines.get(cursor.line..placed.pos).unwrap_or_default());
        // Context lines keep the file's own text, so a whitespace-tolerant match does not
        // rewrite untouched lines.
        let mut k = placed.pos;
        for line in placed.lines {
            match line {
                HunkLine::Context(s) => {
                    out.push(lines.get(k).copied().unwrap_or(s));
                    k += 1;
                }
                HunkLine::Remove(_) => k += 1,
                HunkLine::Add(s) => out.push(s),
            }
        }
        cursor = Cursor {
            line: (placed.pos + placed.old_len).min(lines.len()),
            written: out.len(),
        };
    }
    out.extend(index.lines().get(cursor.line..).unwrap_or_default());
    if out.is_empty() {
        return Ok(String::new());
    }
    let mut text = out.join("\n");
    if trailing_newline {
        text.push('\n');
    }
    Ok(text)
}

fn stopped_reason(s: Stopped, limit: u64) -> String {
    match s {
        Stopped::Cancelled => "the call was cancelled while locating the hunks".into(),
        Stopped::OverBudget => format!(
            "locating the hunks took more than {limit} comparison steps, the limit for one \
             patch, so it was stopped: the hunks' lines occur very often in the file (for \
             example many identical or blank lines). Give each hunk a line that occurs rarely, \
             or an `@@` line naming a nearby unique line, or split the patch into smaller ones"
        ),
    }
}

/// Finds the line a `@@ header` names, at or after `cursor`: a line that is the header (trimmed)
/// wins; then one holding it as whole words (`class Foo` is not `class FooBar`); a line that
/// merely contains it is used only when it is the only one, since a wrong guess edits the
/// wrong block.
fn find_header(
    index: &mut FileIndex,
    cursor: Cursor,
    h: &str,
    budget: &mut MatchBudget,
) -> Result<Option<usize>, Failure> {
    if let Some(i) = index.find_trimmed_line(h, cursor.line) {
        return Ok(Some(i));
    }
    let loose = match index.find_in_text(h, cursor.line, budget)? {
        TextHits::Words(i) => return Ok(Some(i)),
        TextHits::Loose(loose) => loose,
    };
    match loose.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        many => Err(Failure::Reason(format!(
            "context header `{h}` is ambiguous: it is part of {} lines ({}); give the whole line",
            many.len(),
            many.iter()
                .take(5)
                .map(|&i| format!("line {}", cursor.edited(i) + 1))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Locates one hunk at or after `cursor` without changing anything.
fn place<'h>(
    index: &mut FileIndex,
    cursor: Cursor,
    hunk: &'h Hunk,
    budget: &mut MatchBudget,
) -> Result<Placement<'h>, Failure> {
    let header = hunk
        .header
        .as_deref()
        .map(str::trim)
        .filter(|h| !h.is_empty());
    let header_idx = match header {
        Some(h) => match find_header(index, cursor, h, budget)? {
            Some(i) => Some(i),
            None => {
                let place = match cursor.after_line() {
                    None => String::new(),
                    Some(line) => format!(" after line {line}"),
                };
                return Err(Failure::Reason(format!(
                    "context header `{h}` not found{place}"
                )));
            }
        },
        None => None,
    };

    let old: Vec<&str> = old_lines(&hunk.lines);
    if old.is_empty() {
        let pos = match header_idx {
            Some(i) if !hunk.end_of_file => i + 1,
            _ => index.len(),
        };
        return Ok(Placement {
            pos,
            old_len: 0,
            lines: &hunk.lines,
        });
    }

    // Search after the header line; fall back to including it, for hunks whose first
    // context line repeats the header.
    let starts: Vec<usize> = match header_idx {
        Some(i) => vec![i + 1, i],
        None => vec![cursor.line],
    };
    // If the hunk ends in empty context lines (often a stray blank line in the patch),
    // retry without them before giving up.
    let trimmed_len = hunk
        .lines
        .iter()
        .rposition(|l| !matches!(l, HunkLine::Context(c) if c.trim().is_empty()))
        .map_or(0, |i| i + 1);
    let mut variants: Vec<&[HunkLine]> = vec![&hunk.lines];
    if let Some(trimmed) = hunk.lines.get(..trimmed_len)
        && trimmed_len < hunk.lines.len()
        && !old_lines(trimmed).is_empty()
    {
        variants.push(trimmed);
    }
    for variant in &variants {
        let variant_old = old_lines(variant);
        for &start in &starts {
            for strictness in STRICTNESS_LEVELS {
                if let Some(pos) =
                    index.find(&variant_old, start, hunk.end_of_file, strictness, budget)?
                {
                    return Ok(Placement {
                        pos,
                        old_len: variant_old.len(),
                        lines: variant,
                    });
                }
            }
        }
    }
    let start = starts.first().copied().unwrap_or(cursor.line);
    Err(Failure::Reason(diagnose(
        index,
        &old,
        start,
        hunk.end_of_file,
        cursor,
        header.zip(header_idx),
        budget,
    )?))
}

fn old_lines(hunk_lines: &[HunkLine]) -> Vec<&str> {
    hunk_lines
        .iter()
        .filter_map(|l| match l {
            HunkLine::Context(s) | HunkLine::Remove(s) => Some(s.as_str()),
            HunkLine::Add(_) => None,
        })
        .collect()
}

/// Explains why `old` was not found: the longest loosely-matching prefix and where it broke off.
fn diagnose(
    index: &mut FileIndex,
    old: &[&str],
    start: usize,
    end_of_file: bool,
    cursor: Cursor,
    header: Option<(&str, usize)>,
    budget: &mut MatchBudget,
) -> Result<String, Stopped> {
    let best = index.longest_prefix(old, start, budget)?;
    let first = old.first().copied().unwrap_or_default();
    Ok(match best {
        Some((pos, len)) if len >= old.len() && end_of_file => format!(
            "the hunk is marked `{END_OF_FILE}`, but its lines match at line {} and the file continues to line {}",
            pos + 1,
            index.len().max(1),
        ),
        Some((pos, len)) => {
            let matched = if len == 1 {
                "line 1 of the hunk matches".to_string()
            } else {
                format!("lines 1-{len} of the hunk match")
            };
            let expected = old.get(len).copied().unwrap_or_default();
            let found = match index.line(pos + len) {
                Some(have) => format!("the file has \"{have}\""),
                None => "the file ends there".to_string(),
            };
            format!(
                "could not find the lines to replace; {matched} at line {} but line {} expected \"{expected}\" and {found}",
                pos + 1,
                len + 1,
            )
        }
        None => {
            let place = match (header, cursor.after_line()) {
                (Some((h, idx)), _) => {
                    format!("after the context header `{h}` (line {})", idx + 1)
                }
                (None, None) => "in the file".to_string(),
                (None, Some(line)) => format!("after line {line}"),
            };
            format!(
                "could not find the lines to replace; the first expected line \"{first}\" does not occur {place}"
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::apply_hunks;

    fn ctx(s: &str) -> HunkLine {
        HunkLine::Context(s.to_string())
    }
    fn rm(s: &str) -> HunkLine {
        HunkLine::Remove(s.to_string())
    }
    fn add(s: &str) -> HunkLine {
        HunkLine::Add(s.to_string())
    }
    fn hunk(header: Option<&str>, lines: Vec<HunkLine>) -> Hunk {
        Hunk {
            header: header.map(str::to_string),
            lines,
            end_of_file: false,
        }
    }

    #[test]
    fn simple_replace() {
        let h = hunk(None, vec![ctx("a"), rm("b"), add("B"), ctx("c")]);
        assert_eq!(apply_hunks("a\nb\nc\nd\n", &[h]).unwrap(), "a\nB\nc\nd\n");
    }

    #[test]
    fn two_hunks_in_order() {
        let text = "x\na\nb\nc\ny\na\nb\nc\nz\n";
        // Both hunks have identical old lines; the second must land after the first.
        let h1 = hunk(None, vec![ctx("a"), rm("b"), add("1"), ctx("c")]);
        let h2 = hunk(None, vec![ctx("a"), rm("b"), add("2"), ctx("c")]);
        assert_eq!(
            apply_hunks(text, &[h1, h2]).unwrap(),
            "x\na\n1\nc\ny\na\n2\nc\nz\n"
        );
    }

    #[test]
    fn header_disambiguates_identical_blocks() {
        let text = "fn one() {\n    let x = 1;\n}\nfn two() {\n    let x = 1;\n}\n";
        let h = hunk(
            Some("fn two()"),
            vec![rm("    let x = 1;"), add("    let x = 2;")],
        );
        assert_eq!(
            apply_hunks(text, &[h]).unwrap(),
            "fn one() {\n    let x = 1;\n}\nfn two() {\n    let x = 2;\n}\n"
        );
    }

    #[test]
    fn header_repeated_as_first_context_line() {
        let text = "fn one() {\n    a();\n}\nfn two() {\n    a();\n}\n";
        let h = hunk(
            Some("fn two() {"),
            vec![ctx("fn two() {"), rm("    a();"), add("    b();")],
        );
        assert_eq!(
            apply_hunks(text, &[h]).unwrap(),
            "fn one() {\n    a();\n}\nfn two() {\n    b();\n}\n"
        );
    }

    #[test]
    fn header_not_found() {
        let h = hunk(Some("  fn missing  "), vec![rm("a")]);
        let err = apply_hunks("a\n", &[h]).unwrap_err();
        assert_eq!(err.hunk, 1);
        assert_eq!(err.reason, "context header `fn missing` not found");
    }

    #[test]
    fn whitespace_tolerant_match_keeps_file_context() {
        // Trailing whitespace differs in the file; leading indentation differs in the patch.
        let text = "if x {  \n\tdo_it();\n}\n";
        let h = hunk(
            None,
            vec![
                ctx("if x {"),
                rm("    do_it();"),
                add("\tdo_other();"),
                ctx("}"),
            ],
        );
        assert_eq!(
            apply_hunks(text, &[h]).unwrap(),
            "if x {  \n\tdo_other();\n}\n"
        );
    }

    #[test]
    fn stricter_match_wins_over_earlier_loose_match() {
        // The loose match comes first in the file, but the exact one must be chosen.
        let text = "  a\nb\na\nb\n";
        let h = hunk(None, vec![rm("a"), add("A"), ctx("b")]);
        assert_eq!(apply_hunks(text, &[h]).unwrap(), "  a\nb\nA\nb\n");
    }

    #[test]
    fn end_of_file_hunk_matches_at_end() {
        let text = "x\n}\ny\n}\n";
        let mut h = hunk(None, vec![rm("}"), add("} // end")]);
        h.end_of_file = true;
        assert_eq!(apply_hunks(text, &[h]).unwrap(), "x\n}\ny\n} // end\n");

        let mut h = hunk(None, vec![rm("x")]);
        h.end_of_file = true;
        let err = apply_hunks(text, &[h]).unwrap_err();
        assert!(err.reason.contains("End of File"), "{err}");
        assert!(err.reason.contains("line 1"), "{err}");
    }

    #[test]
    fn pure_addition() {
        // No header: appended at the end.
        let h = hunk(None, vec![add("z")]);
        assert_eq!(apply_hunks("a\nb\n", &[h]).unwrap(), "a\nb\nz\n");
        // With a header: right after the header line.
        let h = hunk(Some("a"), vec![add("after a")]);
        assert_eq!(apply_hunks("a\nb\n", &[h]).unwrap(), "a\nafter a\nb\n");
        // Header plus End of File: at the end.
        let mut h = hunk(Some("a"), vec![add("z")]);
        h.end_of_file = true;
        assert_eq!(apply_hunks("a\nb\n", &[h]).unwrap(), "a\nb\nz\n");
        // Into an empty file.
        let h = hunk(None, vec![add("first")]);
        assert_eq!(apply_hunks("", &[h]).unwrap(), "first\n");
    }

    #[test]
    fn final_newline_is_preserved_both_ways() {
        let h = hunk(None, vec![rm("b"), add("B")]);
        assert_eq!(
            apply_hunks("a\nb\n", std::slice::from_ref(&h)).unwrap(),
            "a\nB\n"
        );
        assert_eq!(
            apply_hunks("a\nb", std::slice::from_ref(&h)).unwrap(),
            "a\nB"
        );
        let tail = hunk(None, vec![add("c")]);
        assert_eq!(
            apply_hunks("a\nb", std::slice::from_ref(&tail)).unwrap(),
            "a\nb\nc"
        );
        assert_eq!(apply_hunks("a\nb\n", &[tail]).unwrap(), "a\nb\nc\n");
        // Removing everything yields an empty file.
        let all = hunk(None, vec![rm("a"), rm("b")]);
        assert_eq!(apply_hunks("a\nb\n", &[all]).unwrap(), "");
        // A file with an empty last line keeps it.
        let h = hunk(None, vec![rm("a"), add("A")]);
        assert_eq!(apply_hunks("a\n\n", &[h]).unwrap(), "A\n\n");
    }

    #[test]
    fn trailing_blank_context_is_forgiven() {
        let h = hunk(None, vec![rm("b"), add("B"), ctx("")]);
        assert_eq!(apply_hunks("a\nb\n", &[h]).unwrap(), "a\nB\n");
    }

    #[test]
    fn not_found_names_hunk_and_missing_line() {
        let text = "one\ntwo\nthree\n";
        let h1 = hunk(None, vec![rm("one"), add("1")]);
        let h2 = hunk(None, vec![ctx("two"), rm("    let x = 1;")]);
        let err = apply_hunks(text, &[h1, h2]).unwrap_err();
        assert_eq!(err.hunk, 2);
        assert_eq!(
            err.reason,
            "could not find the lines to replace; line 1 of the hunk matches at line 2 but line 2 expected \"    let x = 1;\" and the file has \"three\""
        );
        assert!(err.to_string().starts_with("hunk 2: "), "{err}");

        let h1 = hunk(None, vec![rm("one"), add("1")]);
        let h2 = hunk(None, vec![rm("    let x = 1;")]);
        let err = apply_hunks(text, &[h1, h2]).unwrap_err();
        assert_eq!(err.hunk, 2);
        assert_eq!(
            err.reason,
            "could not find the lines to replace; the first expected line \"    let x = 1;\" does not occur after line 1"
        );

        let h = hunk(None, vec![rm("nope")]);
        let err = apply_hunks(text, &[h]).unwrap_err();
        assert!(err.reason.ends_with("does not occur in the file"), "{err}");
    }

    #[test]
    fn partial_match_reports_longest_prefix_in_original_line_numbers() {
        let mut text = String::new();
        for i in 1..=50 {
            text.push_str(&format!("l{i}\n"));
        }
        // The first hunk grows the file by two lines; reported numbers must still be original.
        let h1 = hunk(None, vec![ctx("l1"), add("new a"), add("new b")]);
        let h2 = hunk(None, vec![ctx("l40"), ctx("l41"), ctx("l42"), rm("foo")]);
        let err = apply_hunks(&text, &[h1, h2]).unwrap_err();
        assert_eq!(
            err.reason,
            "could not find the lines to replace; lines 1-3 of the hunk match at line 40 but line 4 expected \"foo\" and the file has \"l43\""
        );
        let h = hunk(None, vec![ctx("l50"), rm("l51")]);
        let err = apply_hunks(&text, &[h]).unwrap_err();
        assert!(err.reason.ends_with("and the file ends there"), "{err}");
    }

    #[test]
    fn header_scoped_not_found_mentions_header() {
        let h = hunk(Some("fn b"), vec![rm("zzz")]);
        let err = apply_hunks("fn a\nzzz\nfn b\nyyy\n", &[h]).unwrap_err();
        assert_eq!(
            err.reason,
            "could not find the lines to replace; the first expected line \"zzz\" does not occur after the context header `fn b` (line 3)"
        );
    }

    /// Small xorshift generator so the round-trip check is deterministic without dependencies.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// Builds a hunk from an edit replacing `old[start..end]` with `new_lines`, with up to three context lines.
    fn make_hunk(old: &[String], start: usize, end: usize, new_lines: &[String]) -> Hunk {
        let before = start.saturating_sub(3);
        let after = (end + 3).min(old.len());
        let mut lines: Vec<HunkLine> = old[before..start].iter().map(|l| ctx(l)).collect();
        lines.extend(old[start..end].iter().map(|l| rm(l)));
        lines.extend(new_lines.iter().map(|l| add(l)));
        lines.extend(old[end..after].iter().map(|l| ctx(l)));
        Hunk {
            header: None,
            lines,
            end_of_file: after == old.len(),
        }
    }

    #[test]
    fn round_trips_generated_edits() {
        let words = [
            "alpha",
            "beta",
            "",
            "  gamma",
            "delta  ",
            "}",
            "{",
            "return x;",
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..500 {
            let n = 4 + rng.below(30);
            let old: Vec<String> = (0..n)
                .map(|i| format!("{}{}", words[rng.below(words.len())], i))
                .collect();
            // Two non-overlapping edits, kept apart so their hunks do not share lines.
            let a_start = rng.below(n / 2);
            let a_end = (a_start + rng.below(3)).min(n / 2);
            let b_start = (a_end + 7 + rng.below(5)).min(n);
            let b_end = (b_start + rng.below(3)).min(n);
            let new_a: Vec<String> = (0..rng.below(4))
                .map(|i| format!("new a{case}.{i}"))
                .collect();
            let new_b: Vec<String> = (0..rng.below(4))
                .map(|i| format!("new b{case}.{i}"))
                .collect();
            let mut hunks = vec![make_hunk(&old, a_start, a_end, &new_a)];
            let second = b_start < n;
            if second {
                hunks.push(make_hunk(&old, b_start, b_end, &new_b));
            }
            let mut expected: Vec<String> = old[..a_start].to_vec();
            expected.extend(new_a.iter().cloned());
            if second {
                expected.extend(old[a_end..b_start].iter().cloned());
                expected.extend(new_b.iter().cloned());
                expected.extend(old[b_end..].iter().cloned());
            } else {
                expected.extend(old[a_end..].iter().cloned());
            }
            for trailing in ["\n", ""] {
                let original = format!("{}{trailing}", old.join("\n"));
                let want = if expected.is_empty() {
                    String::new()
                } else {
                    format!("{}{trailing}", expected.join("\n"))
                };
                let got = apply_hunks(&original, &hunks)
                    .unwrap_or_else(|e| panic!("case {case}: {e}\n{original:?}\n{hunks:?}"));
                assert_eq!(got, want, "case {case}: {hunks:?}");
            }
        }
    }

    #[test]
    fn never_panics_on_arbitrary_hunks() {
        let pool = ["a", "b", "", " a", "a ", "c"];
        let mut rng = Rng(0xdead_beef_cafe_f00d);
        for _ in 0..3000 {
            let text: Vec<&str> = (0..rng.below(6))
                .map(|_| pool[rng.below(pool.len())])
                .collect();
            let mut original = text.join("\n");
            if rng.below(2) == 0 {
                original.push('\n');
            }
            let hunks: Vec<Hunk> = (0..rng.below(3))
                .map(|_| Hunk {
                    header: match rng.below(3) {
                        0 => None,
                        1 => Some(String::new()),
                        _ => Some(pool[rng.below(pool.len())].to_string()),
                    },
                    lines: (0..rng.below(4))
                        .map(|_| {
                            let s = pool[rng.below(pool.len())];
                            match rng.below(3) {
                                0 => ctx(s),
                                1 => rm(s),
                                _ => add(s),
                            }
                        })
                        .collect(),
                    end_of_file: rng.below(2) == 0,
                })
                .collect();
            let _ = apply_hunks(&original, &hunks);
        }
    }

    #[test]
    fn short_headers_pick_the_whole_word_not_a_longer_name() {
        let text = "class FooBar:\n    def run(self):\n        return 1\nclass Foo:\n    def run(self):\n        return 1\n";
        let hunk = Hunk {
            header: Some("class Foo".into()),
            lines: vec![
                HunkLine::Context("    def run(self):".into()),
                HunkLine::Remove("        return 1".into()),
                HunkLine::Add("        return 2".into()),
            ],
            end_of_file: false,
        };
        let out = apply_hunks(text, &[hunk]).unwrap();
        assert!(
            out.starts_with("class FooBar:\n    def run(self):\n        return 1\n"),
            "{out}"
        );
        assert!(
            out.ends_with("class Foo:\n    def run(self):\n        return 2\n"),
            "{out}"
        );
    }

    #[test]
    fn a_header_only_contained_in_several_lines_is_ambiguous() {
        let text = "def run_a():\n    x = 1\ndef run_b():\n    x = 1\n";
        let hunk = Hunk {
            header: Some("run".into()),
            lines: vec![
                HunkLine::Remove("    x = 1".into()),
                HunkLine::Add("    x = 2".into()),
            ],
            end_of_file: false,
        };
        let err = apply_hunks(text, &[hunk]).unwrap_err().to_string();
        assert!(
            err.contains("ambiguous") && err.contains("line 1, line 3"),
            "{err}"
        );
    }
}
