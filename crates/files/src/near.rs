//! The text an `edit` most likely meant when its `old_string` is not in the file, so a one-word
//! typo is answered with the file's real lines instead of a request to read the file again.
//!
//! Every window of the file with as many lines as `old_string` is scored by character-bigram
//! overlap (Dice), kept up to date as the window slides, so the scan is linear in the file's
//! size; only a short list of the best windows is scored exactly and shown as a diff.

use std::collections::HashMap;

use similar::{ChangeTag, TextDiff};
use tether_base::cut_line;

/// Files larger than this are not scanned: a hint is not worth more than a few milliseconds.
const MAX_SCAN_BYTES: usize = 2 << 20;
/// Below this bigram overlap a window is not shown: it would mislead more than help.
const MIN_SIMILARITY: f64 = 0.6;
/// `old_string`s with fewer bigrams than this are too short to be told apart from noise.
const MIN_BIGRAMS: usize = 4;
/// Buckets of the hashed bigram counts used while sliding.
const BUCKETS: usize = 4096;
/// Windows scored exactly after the hashed pass.
const SHORTLIST: usize = 8;
/// Diff lines shown before the rest is counted.
const MAX_DIFF_LINES: usize = 24;
/// Characters of one shown diff line.
const MAX_LINE_CHARS: usize = 300;
/// The diff of the chosen window gets this long at most.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(50);

/// The window of the file closest to what was asked.
#[derive(Debug, PartialEq)]
pub(crate) struct Nearest {
    /// 1-based line where the window starts.
    pub first_line: usize,
    /// 1-based line where it ends.
    pub last_line: usize,
    /// Whether the window equals `old_string` once each line's whitespace is normalized.
    pub whitespace_only: bool,
    /// `-` lines as asked, `+` lines as in the file, ` ` lines alike.
    pub diff: String,
    /// Whether some of the window's lines are alike (shown unmarked in the diff), so the `+`
    /// lines alone are not the window.
    pub has_context: bool,
    /// 1-based lines of the window that look nothing like the line asked in their place: the
    /// text meant there is likely elsewhere.
    pub unlike: Vec<usize>,
}

/// Below this character similarity a window line is "unlike" the line asked in its place.
const UNLIKE: f32 = 0.5;

/// The region of `text` most like `wanted`, or `None` when nothing is reasonably close (or the
/// file is too large to scan quickly).
pub(crate) fn nearest(text: &str, wanted: &str) -> Option<Nearest> {
    if text.len() > MAX_SCAN_BYTES {
        return None;
    }
    let wanted_lines: Vec<&str> = wanted.lines().collect();
    let file_lines: Vec<&str> = text.lines().collect();
    let k = wanted_lines.len().clamp(1, file_lines.len().max(1));
    if file_lines.is_empty() {
        return None;
    }
    let wanted_grams: Vec<(char, char)> = wanted_lines.iter().flat_map(|l| bigrams(l)).collect();
    if wanted_grams.len() < MIN_BIGRAMS {
        return None;
    }
    let shortlist = hashed_shortlist(&file_lines, &wanted_grams, k);
    let wanted_counts = counts(wanted_grams.iter().copied());
    let (score, start) = shortlist
        .into_iter()
        .map(|start| {
            let window = &file_lines[start..start + k];
            let grams = counts(window.iter().flat_map(|l| bigrams(l)));
            (exact_score(&wanted_counts, &grams, k == 1), start)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))?;
    if score < MIN_SIMILARITY {
        return None;
    }
    let window = &file_lines[start..start + k];
    let whitespace_only = window.len() == wanted_lines.len()
        && window
            .iter()
            .zip(&wanted_lines)
            .all(|(a, b)| normalized(a) == normalized(b));
    let unlike = window
        .iter()
        .zip(&wanted_lines)
        .enumerate()
        .filter(|(_, (have, want))| {
            TextDiff::from_chars(normalized(have).as_str(), normalized(want).as_str()).ratio()
                < UNLIKE
        })
        .map(|(i, _)| start + i + 1)
        .collect();
    Some(Nearest {
        first_line: start + 1,
        last_line: start + k,
        whitespace_only,
        has_context: window.iter().any(|line| wanted_lines.contains(line)),
        unlike,
        diff: render_diff(&wanted_lines, window),
    })
}

/// The starts of the best-scoring windows by hashed bigram counts, one pass over the file.
fn hashed_shortlist(lines: &[&str], wanted: &[(char, char)], k: usize) -> Vec<usize> {
    let mut want = vec![0u32; BUCKETS];
    for &g in wanted {
        want[bucket(g)] += 1;
    }
    let line_buckets: Vec<Vec<u16>> = lines
        .iter()
        .map(|l| bigrams(l).map(|g| bucket(g) as u16).collect())
        .collect();
    let mut have = vec![0u32; BUCKETS];
    let (mut common, mut size) = (0usize, 0usize);
    let mut scored: Vec<(f64, usize)> = Vec::with_capacity(lines.len());
    for (i, grams) in line_buckets.iter().enumerate() {
        for &b in grams {
            let b = usize::from(b);
            if have[b] < want[b] {
                common += 1;
            }
            have[b] += 1;
            size += 1;
        }
        if i >= k {
            for &b in &line_buckets[i - k] {
                let b = usize::from(b);
                have[b] -= 1;
                if have[b] < want[b] {
                    common -= 1;
                }
                size -= 1;
            }
        }
        if i + 1 >= k {
            scored.push((dice(common, wanted.len(), size, k == 1), i + 1 - k));
        }
    }
    let keep = SHORTLIST.min(scored.len());
    if keep > 0 && keep < scored.len() {
        scored.select_nth_unstable_by(keep - 1, |a, b| b.0.total_cmp(&a.0));
    }
    scored.truncate(keep);
    scored.into_iter().map(|(_, start)| start).collect()
}

/// Overlap of two bigram bags. A one-line `old_string` may be part of a longer line, so there
/// the window's extra text is not held against it.
fn dice(common: usize, wanted: usize, window: usize, one_line: bool) -> f64 {
    let window = if one_line { window.min(wanted) } else { window };
    if wanted + window == 0 {
        return 0.0;
    }
    (2 * common) as f64 / (wanted + window) as f64
}

fn exact_score(
    wanted: &HashMap<(char, char), usize>,
    window: &HashMap<(char, char), usize>,
    one_line: bool,
) -> f64 {
    let common = wanted
        .iter()
        .map(|(g, n)| (*n).min(window.get(g).copied().unwrap_or(0)))
        .sum();
    let total = |m: &HashMap<(char, char), usize>| m.values().sum::<usize>();
    dice(common, total(wanted), total(window), one_line)
}

fn counts(grams: impl Iterator<Item = (char, char)>) -> HashMap<(char, char), usize> {
    let mut out = HashMap::new();
    for g in grams {
        *out.entry(g).or_insert(0) += 1;
    }
    out
}

/// The bigrams of a line with its whitespace normalized, so indentation does not count.
fn bigrams(line: &str) -> impl Iterator<Item = (char, char)> + '_ {
    let chars: Vec<char> = normalized(line).chars().collect();
    (1..chars.len())
        .map(move |i| (chars[i - 1], chars[i]))
        .collect::<Vec<_>>()
        .into_iter()
}

/// A line trimmed, with each run of inner whitespace made one space.
fn normalized(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn bucket((a, b): (char, char)) -> usize {
    let key = (u64::from(a) << 32) | u64::from(b);
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize % BUCKETS
}

/// A line diff from what was asked (`-`) to the file's window (`+`), bounded in lines and
/// characters, with tabs and trailing spaces made visible only by the diff itself.
fn render_diff(wanted: &[&str], window: &[&str]) -> String {
    let old = wanted.join("\n") + "\n";
    let new = window.join("\n") + "\n";
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(&old, &new);
    let mut out = Vec::new();
    let mut left = 0usize;
    for change in diff.iter_all_changes() {
        if out.len() == MAX_DIFF_LINES {
            left += 1;
            continue;
        }
        let mark = match change.tag() {
            ChangeTag::Delete => '-',
            ChangeTag::Insert => '+',
            ChangeTag::Equal => ' ',
        };
        let line = change.value().trim_end_matches('\n');
        out.push(format!("{mark}{}", cut_line(line, MAX_LINE_CHARS)));
    }
    if left > 0 {
        out.push(format!("… {left} more diff lines"));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODE: &str = "fn main() {\n    let name = \"world\";\n    println!(\"hello {name}\");\n    \
                        let total = count_items(&list);\n    report(total);\n}\n";

    #[test]
    fn a_one_word_typo_finds_its_line() {
        let near = nearest(CODE, "println!(\"helo {name}\");").unwrap();
        assert_eq!(near.first_line, 3);
        assert!(!near.whitespace_only);
        insta::assert_snapshot!(near.diff);
    }

    #[test]
    fn a_block_with_one_wrong_line_finds_the_block() {
        let wanted = "    let total = count_item(&list);\n    report(totl);\n";
        let near = nearest(CODE, wanted).unwrap();
        assert_eq!(near.first_line, 4);
        assert_eq!(
            near.diff,
            "-    let total = count_item(&list);\n-    report(totl);\n+    let total = \
             count_items(&list);\n+    report(total);"
        );
    }

    #[test]
    fn indentation_alone_is_recognized() {
        let near = nearest(CODE, "let total = count_items(&list);\nreport(total);").unwrap();
        assert_eq!(near.first_line, 4);
        assert!(near.whitespace_only);
    }

    #[test]
    fn nothing_is_shown_when_nothing_is_close() {
        assert_eq!(nearest(CODE, "impl Display for Matrix {"), None);
        assert_eq!(nearest(CODE, "xy"), None);
        assert_eq!(nearest("", "println!(\"hello\")"), None);
    }

    #[test]
    fn a_large_file_is_scanned_in_a_few_milliseconds() {
        let text: String = (0..10_000)
            .map(|i| format!("    let value_{i} = compute(input_{i}, {i});\n"))
            .collect();
        let started = std::time::Instant::now();
        let near = nearest(&text, "    let value_7777 = compute(inptu_7777, 7777);").unwrap();
        let took = started.elapsed();
        assert_eq!(near.first_line, 7778);
        // Generous for an unoptimized build on a shared machine; optimized it is a few ms.
        assert!(took < std::time::Duration::from_millis(500), "{took:?}");
    }
}
