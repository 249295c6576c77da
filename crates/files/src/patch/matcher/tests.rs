//! Crafted worst cases for the matcher (they must finish and give the right answer), the
//! budget and cancellation, and a cross-check against the previous line-by-line matcher.

use std::time::Instant;

use super::MatchBudget;
use crate::patch::{
    FilePatch, Hunk, HunkLine, Stopped, apply_hunks, apply_hunks_within, parse_patch,
};

/// The previous matcher, kept verbatim as the reference the new one must agree with.
mod reference {
    use crate::patch::{END_OF_FILE, Hunk, HunkError, HunkLine};

    /// How loosely a patch line may match a file line; tried in declaration order.
    #[derive(Clone, Copy)]
    enum Strictness {
        Exact,
        TrimEnd,
        Trim,
    }

    const STRICTNESS_LEVELS: [Strictness; 3] =
        [Strictness::Exact, Strictness::TrimEnd, Strictness::Trim];

    fn line_eq(file: &str, patch: &str, strictness: Strictness) -> bool {
        match strictness {
            Strictness::Exact => file == patch,
            Strictness::TrimEnd => file.trim_end() == patch.trim_end(),
            Strictness::Trim => file.trim() == patch.trim(),
        }
    }

    fn matches_at(lines: &[String], old: &[&str], pos: usize, strictness: Strictness) -> bool {
        old.iter().enumerate().all(|(k, want)| {
            lines
                .get(pos + k)
                .is_some_and(|have| line_eq(have, want, strictness))
        })
    }

    /// First position at or after `start` where `old` matches, trying each strictness in turn.
    fn find_old(lines: &[String], old: &[&str], start: usize, end_of_file: bool) -> Option<usize> {
        let last_start = lines.len().checked_sub(old.len())?;
        for strictness in STRICTNESS_LEVELS {
            if end_of_file {
                if last_start >= start && matches_at(lines, old, last_start, strictness) {
                    return Some(last_start);
                }
            } else if let Some(pos) =
                (start..=last_start).find(|&p| matches_at(lines, old, p, strictness))
            {
                return Some(pos);
            }
        }
        None
    }

    /// Maps between the working line vector and the original file's 1-based line numbers,
    /// so error messages refer to the file the model actually saw.
    #[derive(Clone, Copy)]
    struct LineMap {
        /// Lines added minus lines removed by the hunks applied so far (all of them above the cursor).
        delta: isize,
    }

    impl LineMap {
        fn original(self, idx: usize) -> usize {
            let idx = isize::try_from(idx).unwrap_or(isize::MAX);
            usize::try_from(idx.saturating_sub(self.delta).saturating_add(1))
                .unwrap_or(1)
                .max(1)
        }
    }

    /// Implementation of [`super::apply_hunks`].
    pub(super) fn apply_hunks(original: &str, hunks: &[Hunk]) -> Result<String, HunkError> {
        let (mut lines, trailing_newline) = match original.strip_suffix('\n') {
            _ if original.is_empty() => (Vec::new(), true),
            Some(body) => (body.split('\n').map(str::to_string).collect(), true),
            None => (
                original.split('\n').map(str::to_string).collect::<Vec<_>>(),
                false,
            ),
        };
        let mut cursor = 0usize;
        let mut map = LineMap { delta: 0 };
        for (idx, hunk) in hunks.iter().enumerate() {
            let (new_cursor, delta) =
                apply_one(&mut lines, cursor, map, hunk).map_err(|reason| HunkError {
                    hunk: idx + 1,
                    reason,
                    stopped: None,
                })?;
            cursor = new_cursor;
            map.delta = map.delta.saturating_add(delta);
        }
        if lines.is_empty() {
            return Ok(String::new());
        }
        let mut out = lines.join("\n");
        if trailing_newline {
            out.push('\n');
        }
        Ok(out)
    }

    /// Finds the line a `@@ header` names, at or after `cursor`: a line that is the header (trimmed)
    /// wins; then one holding it as whole words (`class Foo` is not `class FooBar`); a line that
    /// merely contains it is used only when it is the only one, since a wrong guess edits the
    /// wrong block.
    fn find_header(lines: &[String], cursor: usize, h: &str) -> Result<Option<usize>, String> {
        let after = || (cursor..lines.len()).filter_map(|i| lines.get(i).map(|l| (i, l)));
        if let Some((i, _)) = after().find(|(_, l)| l.trim() == h) {
            return Ok(Some(i));
        }
        if let Some((i, _)) = after().find(|(_, l)| contains_as_words(l, h)) {
            return Ok(Some(i));
        }
        let loose: Vec<usize> = after()
            .filter(|(_, l)| l.contains(h))
            .map(|(i, _)| i)
            .collect();
        match loose.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            many => Err(format!(
                "context header `{h}` is ambiguous: it is part of {} lines ({}); give the whole line",
                many.len(),
                many.iter()
                    .take(5)
                    .map(|i| format!("line {}", i + 1))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// Whether `line` holds `h` with no identifier character glued to either end.
    fn contains_as_words(line: &str, h: &str) -> bool {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        line.match_indices(h).any(|(at, _)| {
            let before = line[..at].chars().next_back();
            let after = line[at + h.len()..].chars().next();
            let glued_before = before.is_some_and(ident) && h.starts_with(ident);
            let glued_after = after.is_some_and(ident) && h.ends_with(ident);
            !glued_before && !glued_after
        })
    }

    /// Applies one hunk at or after `cursor`; returns the new cursor and the change in line count.
    fn apply_one(
        lines: &mut Vec<String>,
        cursor: usize,
        map: LineMap,
        hunk: &Hunk,
    ) -> Result<(usize, isize), String> {
        let header = hunk
            .header
            .as_deref()
            .map(str::trim)
            .filter(|h| !h.is_empty());
        let header_idx = match header {
            Some(h) => match find_header(lines, cursor, h)? {
                Some(i) => Some(i),
                None => {
                    let place = if cursor == 0 {
                        String::new()
                    } else {
                        format!(" after line {}", map.original(cursor - 1))
                    };
                    return Err(format!("context header `{h}` not found{place}"));
                }
            },
            None => None,
        };

        let old: Vec<&str> = old_lines(&hunk.lines);
        if old.is_empty() {
            let at = match header_idx {
                Some(i) if !hunk.end_of_file => i + 1,
                _ => lines.len(),
            };
            return Ok(splice(lines, at, 0, &hunk.lines));
        }

        // Search after the header line; fall back to including it, for hunks whose first
        // context line repeats the header.
        let starts: Vec<usize> = match header_idx {
            Some(i) => vec![i + 1, i],
            None => vec![cursor],
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
                if let Some(pos) = find_old(lines, &variant_old, start, hunk.end_of_file) {
                    return Ok(splice(lines, pos, variant_old.len(), variant));
                }
            }
        }
        let start = starts.first().copied().unwrap_or(cursor);
        Err(diagnose(
            lines,
            &old,
            start,
            hunk.end_of_file,
            map,
            header.zip(header_idx),
        ))
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

    /// Replaces `old_len` lines at `pos` with the hunk's context and added lines. Context lines keep
    /// the file's own text so a whitespace-tolerant match does not rewrite untouched lines.
    fn splice(
        lines: &mut Vec<String>,
        pos: usize,
        old_len: usize,
        hunk_lines: &[HunkLine],
    ) -> (usize, isize) {
        let pos = pos.min(lines.len());
        let end = pos.saturating_add(old_len).min(lines.len());
        let mut replacement = Vec::with_capacity(hunk_lines.len());
        let mut k = pos;
        for line in hunk_lines {
            match line {
                HunkLine::Context(s) => {
                    replacement.push(lines.get(k).cloned().unwrap_or_else(|| s.clone()));
                    k += 1;
                }
                HunkLine::Remove(_) => k += 1,
                HunkLine::Add(s) => replacement.push(s.clone()),
            }
        }
        let added = replacement.len();
        let removed = end - pos;
        lines.splice(pos..end, replacement);
        let delta = isize::try_from(added)
            .unwrap_or(isize::MAX)
            .saturating_sub(isize::try_from(removed).unwrap_or(isize::MAX));
        (pos + added, delta)
    }

    /// Explains why `old` was not found: the longest loosely-matching prefix and where it broke off.
    fn diagnose(
        lines: &[String],
        old: &[&str],
        start: usize,
        end_of_file: bool,
        map: LineMap,
        header: Option<(&str, usize)>,
    ) -> String {
        let prefix_len = |pos: usize| {
            old.iter()
                .zip(lines.iter().skip(pos))
                .take_while(|(want, have)| line_eq(have, want, Strictness::Trim))
                .count()
        };
        let mut best: Option<(usize, usize)> = None;
        for pos in start..lines.len() {
            let len = prefix_len(pos);
            if len > 0 && best.is_none_or(|(_, b)| len > b) {
                best = Some((pos, len));
            }
        }
        let first = old.first().copied().unwrap_or_default();
        match best {
            Some((pos, len)) if len >= old.len() && end_of_file => format!(
                "the hunk is marked `{END_OF_FILE}`, but its lines match at line {} and the file continues to line {}",
                map.original(pos),
                map.original(lines.len().saturating_sub(1)),
            ),
            Some((pos, len)) => {
                let matched = if len == 1 {
                    "line 1 of the hunk matches".to_string()
                } else {
                    format!("lines 1-{len} of the hunk match")
                };
                let expected = old.get(len).copied().unwrap_or_default();
                let found = match lines.get(pos + len) {
                    Some(have) => format!("the file has \"{have}\""),
                    None => "the file ends there".to_string(),
                };
                format!(
                    "could not find the lines to replace; {matched} at line {} but line {} expected \"{expected}\" and {found}",
                    map.original(pos),
                    len + 1,
                )
            }
            None => {
                let place = match header {
                    Some((h, idx)) => format!(
                        "after the context header `{h}` (line {})",
                        map.original(idx)
                    ),
                    None if start == 0 => "in the file".to_string(),
                    None => format!("after line {}", map.original(start - 1)),
                };
                format!(
                    "could not find the lines to replace; the first expected line \"{first}\" does not occur {place}"
                )
            }
        }
    }
}

fn update(hunks: &str) -> String {
    format!("*** Begin Patch\n*** Update File: f.txt\n{hunks}*** End Patch\n")
}

fn hunks_of(patch: &str) -> Vec<Hunk> {
    let mut parsed = parse_patch(patch).unwrap();
    match parsed.files.pop() {
        Some(FilePatch::Update { hunks, .. }) => hunks,
        other => panic!("expected one update, got {other:?}"),
    }
}

/// Small xorshift generator so generated cases are deterministic without dependencies.
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

/// 60,000 lines of `}` and a 120 KB hunk of 39,999 `}` context lines whose last line is
/// nowhere: every position matches all but the last line, at every whitespace level.
fn identical_lines() -> (String, String) {
    let file = "}\n".repeat(60_000);
    (file, update(&format!("@@\n{}-x\n", " }\n".repeat(39_999))))
}

/// The same against an indented file, so the exact levels fail and the trimmed one does the work.
fn indented_lines() -> (String, String) {
    let file = "    }\n".repeat(60_000);
    (file, update(&format!("@@\n{}-x\n", " }\n".repeat(39_999))))
}

/// The last line differs from the file only in whitespace, so the hunk fits at the trimmed
/// level after the exact levels have tried every position.
fn whitespace_last_line() -> (String, String) {
    let file = "}\n".repeat(60_000);
    (
        file,
        update(&format!("@@\n{}-  }}  \n", " }\n".repeat(39_999))),
    )
}

/// Lines alternate `}` and `  }`; 8,000 identical hunks of two `}` lines fit only when trimmed.
fn alternating_same_hunks() -> (String, String) {
    let file = "}\n  }\n".repeat(30_000);
    (file, update(&"@@\n }\n-}\n+]\n".repeat(8_000)))
}

/// Like [`alternating_same_hunks`], but 2,000 different 12-line hunks, so no answer repeats.
fn alternating_distinct_hunks() -> (String, String) {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut hunks = String::new();
    for _ in 0..2_000 {
        hunks.push_str("@@\n");
        let mut shape: Vec<bool> = (0..12).map(|_| rng.below(2) == 0).collect();
        // Two equal neighbours never occur in the alternating file at the exact levels.
        shape[5] = shape[4];
        for (k, &indented) in shape.iter().enumerate() {
            let line = if indented { "  }" } else { "}" };
            let marker = if k == 11 { '-' } else { ' ' };
            hunks.push_str(&format!("{marker}{line}\n"));
        }
        hunks.push_str("+]\n");
    }
    ("}\n  }\n".repeat(30_000), update(&hunks))
}

/// 20,000 functions; 4,000 hunks whose `@@` names a function only as whole words.
fn word_headers() -> (String, String) {
    headers(20_000, |i| format!("fn f{i:05}"))
}

/// Headers that are only part of a longer word, so each must be proven to be in one line only.
fn loose_headers() -> (String, String) {
    headers(20_000, |i| format!("{i:05}()"))
}

/// `functions` three-line functions and a hunk for every fifth, found through `header(i)`.
fn headers(functions: usize, header: fn(usize) -> String) -> (String, String) {
    let mut file = String::new();
    for i in 0..functions {
        file.push_str(&format!("fn f{i:05}() {{\n    x();\n}}\n"));
    }
    let mut hunks = String::new();
    for i in (0..functions).step_by(5) {
        hunks.push_str(&format!("@@ {}\n-    x();\n+    y();\n", header(i)));
    }
    (file, update(&hunks))
}

/// 30 kinds of line, half of them indented, 2,000 of each in random order; 2,500 seven-line
/// hunks written without indentation, so each fits only when trimmed and the stricter levels
/// check about 2,000 candidates apiece.
fn mixed_indent_hunks() -> (String, String) {
    let mut rng = Rng(0x1357_9bdf_2468_ace0);
    let lines: Vec<String> = (0..60_000)
        .map(|_| {
            let k = rng.below(15);
            if rng.below(2) == 0 {
                format!("x{k}")
            } else {
                format!("  x{k}")
            }
        })
        .collect();
    let mut hunks = String::new();
    for block in lines.chunks(7).take(2_500) {
        hunks.push_str("@@\n");
        for (k, line) in block.iter().enumerate() {
            let marker = if k == 6 { '-' } else { ' ' };
            hunks.push_str(&format!("{marker}{}\n", line.trim()));
        }
        hunks.push_str("+]\n");
    }
    (lines.join("\n") + "\n", update(&hunks))
}

/// Runs of 127 `}` lines, each closed by `  }`; 250 hunks of 128 to 191 `}` lines (longer
/// than any run, and than the window index's widest window) fit only when trimmed.
fn periodic_runs() -> (String, String) {
    let file = format!("{}  }}\n", "}\n".repeat(127)).repeat(468);
    let hunks: String = periodic_run_lengths()
        .map(|len| format!("@@\n{}-}}\n+]\n", " }\n".repeat(len - 1)))
        .collect();
    (file, update(&hunks))
}

fn periodic_run_lengths() -> impl Iterator<Item = usize> {
    (0..250).map(|i| 128 + i % 64)
}

/// Alternating `}` and `  }` again, with hunks of every length from 2 to 64 lines, so each
/// length needs its own window index at the stricter levels.
fn distinct_lengths() -> (String, String) {
    distinct_lengths_in(60_000)
}

fn distinct_lengths_in(lines: usize) -> (String, String) {
    let hunks: String = (2..=64)
        .map(|len| format!("@@\n{}-}}\n+]\n", " }\n".repeat(len - 1)))
        .collect();
    ("}\n  }\n".repeat(lines / 2), update(&hunks))
}

/// What a file becomes when hunks of the given lengths each take the next lines and replace
/// the last of them with `]`.
fn each_last_replaced(file: &str, lens: impl IntoIterator<Item = usize>) -> String {
    let lines: Vec<&str> = file.lines().collect();
    let mut out = String::new();
    let mut at = 0;
    for len in lens {
        for line in &lines[at..at + len - 1] {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("]\n");
        at += len;
    }
    for line in &lines[at..] {
        out.push_str(line);
        out.push('\n');
    }
    out
}

type MakeCase = fn() -> (String, String);
type Case = (&'static str, MakeCase);

const CASES: [Case; 10] = [
    ("identical_lines", identical_lines),
    ("indented_lines", indented_lines),
    ("whitespace_last_line", whitespace_last_line),
    ("alternating_same_hunks", alternating_same_hunks),
    ("alternating_distinct_hunks", alternating_distinct_hunks),
    ("word_headers", word_headers),
    ("loose_headers", loose_headers),
    ("mixed_indent_hunks", mixed_indent_hunks),
    ("periodic_runs", periodic_runs),
    ("distinct_lengths", distinct_lengths),
];

fn run(case: MakeCase) -> Result<String, crate::patch::HunkError> {
    let (file, patch) = case();
    apply_hunks(&file, &hunks_of(&patch))
}

#[test]
fn identical_lines_with_a_missing_last_line_fail_fast_and_say_where() {
    let err = run(identical_lines).unwrap_err();
    assert_eq!(err.stopped, None);
    assert_eq!(
        err.reason,
        "could not find the lines to replace; lines 1-39999 of the hunk match at line 1 but line 40000 expected \"x\" and the file has \"}\""
    );
    let err = run(indented_lines).unwrap_err();
    assert_eq!(
        err.reason,
        "could not find the lines to replace; lines 1-39999 of the hunk match at line 1 but line 40000 expected \"x\" and the file has \"    }\""
    );
}

#[test]
fn a_last_line_differing_only_in_whitespace_fits_loosely() {
    let out = run(whitespace_last_line).unwrap();
    assert_eq!(out, "}\n".repeat(59_999));
}

#[test]
fn many_hunks_that_fit_only_when_trimmed_all_apply() {
    let out = run(alternating_same_hunks).unwrap();
    assert_eq!(out, "}\n]\n".repeat(8_000) + &"}\n  }\n".repeat(22_000));
    let cases: [(MakeCase, Vec<usize>); 4] = [
        (alternating_distinct_hunks, vec![12; 2_000]),
        (mixed_indent_hunks, vec![7; 2_500]),
        (periodic_runs, periodic_run_lengths().collect()),
        // Smaller than the timing case: window indexes are slow to sort in a debug build.
        (|| distinct_lengths_in(6_000), (2..=64).collect()),
    ];
    for (case, lens) in cases {
        let (file, patch) = case();
        let out = apply_hunks(&file, &hunks_of(&patch)).unwrap();
        assert!(out == each_last_replaced(&file, lens), "{patch:.200}");
    }
}

#[test]
fn many_headers_found_as_words_or_loosely_all_apply() {
    // Loose headers are found by scanning the rest of the text; 4,000 functions keep a debug
    // build quick (the timing case has 20,000).
    let loose: MakeCase = || headers(4_000, |i| format!("{i:05}()"));
    for (case, edits) in [(word_headers as MakeCase, 4_000), (loose, 800)] {
        let (file, _) = case();
        let out = run(case).unwrap();
        assert_eq!(out.matches("    y();").count(), edits);
        assert_eq!(out.len(), file.len());
        assert!(out.starts_with("fn f00000() {\n    y();\n}\nfn f00001() {\n    x();\n"));
    }
}

#[test]
fn a_patch_over_its_budget_stops_with_an_explanation() {
    let (file, patch) = alternating_distinct_hunks();
    let never = || false;
    let mut budget = MatchBudget::with_steps(200_000, &never);
    let err = apply_hunks_within(&file, &hunks_of(&patch), &mut budget).unwrap_err();
    assert_eq!(err.stopped, Some(Stopped::OverBudget));
    assert!(
        err.reason.contains("more than 200000 comparison steps")
            && err.reason.contains("a line that occurs rarely"),
        "{err}"
    );
}

#[test]
fn a_cancelled_call_stops_matching() {
    let (file, patch) = identical_lines();
    let cancelled = || true;
    let mut budget = MatchBudget::new(&cancelled);
    let err = apply_hunks_within(&file, &hunks_of(&patch), &mut budget).unwrap_err();
    assert_eq!(err.stopped, Some(Stopped::Cancelled));
    assert_eq!(err.hunk, 1);
}

/// Random small files and hunks over a few similar lines (repeats, whitespace variants, words
/// sharing a prefix), with and without headers: the indexed matcher must give exactly what
/// the previous line-by-line matcher gave, text or error.
#[test]
fn agrees_with_the_previous_matcher() {
    let pool = [
        "}", "  }", "} ", "", "  ", "a", " a", "a ", "fn a", "fn ab", "b", "x_a",
    ];
    let headers = ["a", "fn a", "}", "ab", "b", "  fn a ", "zz", "a b"];
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for case in 0..20_000 {
        let n = rng.below(40);
        let mut original: String = (0..n)
            .map(|_| pool[rng.below(pool.len())])
            .collect::<Vec<_>>()
            .join("\n");
        if rng.below(3) > 0 {
            original.push('\n');
        }
        let hunks: Vec<Hunk> = (0..1 + rng.below(4))
            .map(|_| Hunk {
                header: (rng.below(4) == 0).then(|| headers[rng.below(headers.len())].into()),
                lines: (0..rng.below(6))
                    .map(|_| {
                        let s = pool[rng.below(pool.len())].to_string();
                        match rng.below(4) {
                            0 | 1 => HunkLine::Context(s),
                            2 => HunkLine::Remove(s),
                            _ => HunkLine::Add(s),
                        }
                    })
                    .collect(),
                end_of_file: rng.below(5) == 0,
            })
            .collect();
        let got = apply_hunks(&original, &hunks).map_err(|e| e.to_string());
        let want = reference::apply_hunks(&original, &hunks).map_err(|e| e.to_string());
        assert_eq!(got, want, "case {case}: {original:?}\n{hunks:?}");
    }
}

/// Long repetitive files with hunks of every length, some lines with a stray leading space.
#[test]
fn agrees_with_the_previous_matcher_on_long_repetitive_files() {
    let pool = ["}", "  }", "}", "}", "a"];
    let mut rng = Rng(0xfeed_f00d_dead_beef);
    for case in 0..40 {
        let n = 3_000 + rng.below(3_000);
        let lines: Vec<&str> = (0..n)
            .map(|_| pool[rng.below(if case % 2 == 0 { 2 } else { pool.len() })])
            .collect();
        let original = lines.join("\n") + "\n";
        let mut hunks = Vec::new();
        let mut at = 0;
        while at + 80 < n && hunks.len() < 12 {
            at += rng.below(400);
            let max = if rng.below(2) == 0 { 8 } else { 90 };
            let len = 1 + rng.below(max);
            let mut hl: Vec<HunkLine> = lines
                .iter()
                .skip(at)
                .take(len)
                .map(|l| {
                    let mut s = l.to_string();
                    if rng.below(6) == 0 {
                        s = format!(" {s}");
                    }
                    HunkLine::Context(s)
                })
                .collect();
            if let Some(HunkLine::Context(s)) = hl.pop() {
                hl.push(HunkLine::Remove(s));
            }
            hl.push(HunkLine::Add("new".into()));
            hunks.push(Hunk {
                header: None,
                lines: hl,
                end_of_file: false,
            });
            at += len;
        }
        let got = apply_hunks(&original, &hunks).map_err(|e| e.to_string());
        let want = reference::apply_hunks(&original, &hunks).map_err(|e| e.to_string());
        assert_eq!(got, want, "case {case}");
    }
}

/// Long files of a few repeated lines, and many hunks written without the file's indentation,
/// so the stricter levels fail after checking many places and the window index takes over.
#[test]
fn agrees_with_the_previous_matcher_when_hunks_lose_their_indentation() {
    let mut rng = Rng(0xfeed_f00d_dead_beef);
    for case in 0..12 {
        let kinds: &[&str] = if case % 2 == 0 {
            &["x", "  x", "y", "  y"]
        } else {
            &["x", "  x", "y", "  y", "x ", "z"]
        };
        let n = 3_000 + rng.below(500);
        let lines: Vec<&str> = (0..n).map(|_| kinds[rng.below(kinds.len())]).collect();
        let original = lines.join("\n") + "\n";
        let mut hunks = Vec::new();
        let mut at = 0;
        while hunks.len() < 100 {
            at += rng.below(5);
            let len = if case % 3 == 0 { 70 } else { 20 };
            if at + len > n {
                break;
            }
            let trim = rng.below(4) > 0;
            let mut hl: Vec<HunkLine> = lines[at..at + len]
                .iter()
                .map(|l| HunkLine::Context(if trim { l.trim() } else { l }.to_string()))
                .collect();
            if rng.below(40) == 0 {
                hl[len / 2] = HunkLine::Context("zz".into());
            }
            if let Some(HunkLine::Context(s)) = hl.pop() {
                hl.push(HunkLine::Remove(s));
            }
            hl.push(HunkLine::Add("new".into()));
            hunks.push(Hunk {
                header: None,
                lines: hl,
                end_of_file: false,
            });
            at += len;
        }
        let got = apply_hunks(&original, &hunks).map_err(|e| e.to_string());
        let want = reference::apply_hunks(&original, &hunks).map_err(|e| e.to_string());
        assert_eq!(got, want, "case {case}");
    }
}

/// Prints how long each crafted case takes with the new matcher and, when
/// `TETHER_PATCH_BASELINE=1` is set, with the previous one (which can take minutes):
/// `cargo test --release -p tether-files crafted_case_timings -- --ignored --nocapture`.
#[test]
#[ignore = "timing report, run by hand"]
fn crafted_case_timings() {
    let baseline = std::env::var("TETHER_PATCH_BASELINE").is_ok_and(|v| v == "1");
    for (name, case) in CASES {
        let (file, patch) = case();
        let hunks = hunks_of(&patch);
        let t = Instant::now();
        let mut budget = MatchBudget::default();
        let got = apply_hunks_within(&file, &hunks, &mut budget);
        let new = t.elapsed();
        let outcome = match &got {
            Ok(_) => "applied".to_string(),
            Err(e) => format!("error at hunk {} ({:?})", e.hunk, e.stopped),
        };
        let mut line = format!(
            "{name}: patch {} KB, file {} lines; new {new:.2?} ({outcome}, {} steps)",
            patch.len() / 1024,
            file.lines().count(),
            budget.spent()
        );
        if baseline {
            let t = Instant::now();
            let old = reference::apply_hunks(&file, &hunks);
            line.push_str(&format!("; previous {:.2?}", t.elapsed()));
            assert_eq!(
                got.map_err(|e| e.to_string()),
                old.map_err(|e| e.to_string())
            );
        }
        println!("{line}");
    }
}
