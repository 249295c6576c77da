//! Model-facing text for search and edit results: capped, and always saying what was searched.

use tether_tool::cut_line;

use crate::search::{FileMatches, SearchStats};

/// Characters of one match line or capture before it is cut.
const LINE_CHARS: usize = 300;

/// The summary of what was searched, so "0 matches" can be trusted.
pub(crate) fn searched_line(stats: &SearchStats, lang: &str, target: &str) -> String {
    let files = if stats.searched == 1 { "file" } else { "files" };
    let mut s = format!(
        "searched {} {lang} {files} under {target} ({} ruled out by the pattern's fixed text, {} parsed, {} from cache)",
        stats.searched, stats.prefiltered, stats.parsed, stats.cached
    );
    s.push_str(&format!(
        "; {} failed to parse (unreadable or not UTF-8)",
        stats.failed
    ));
    if stats.syntax_errors > 0 {
        s.push_str(&format!(
            "; {} contain syntax errors and were searched anyway",
            stats.syntax_errors
        ));
    }
    if stats.too_large + stats.binary > 0 {
        s.push_str(&format!(
            "; skipped {} over 2 MiB and {} binary",
            stats.too_large, stats.binary
        ));
    }
    s
}

/// Renders matches sorted by path then line, at most `max` of them.
pub(crate) fn render_matches(
    found: &[FileMatches],
    stats: &SearchStats,
    max: usize,
    lang: &str,
    target: &str,
) -> String {
    let total: usize = found.iter().map(|f| f.matches.len()).sum();
    let files = found.len();
    let mut out = match total {
        0 => "0 matches\n".to_string(),
        1 => "1 match in 1 file\n".to_string(),
        n => format!(
            "{n} matches in {files} file{}\n",
            if files == 1 { "" } else { "s" }
        ),
    };
    let mut shown = 0;
    'files: for file in found {
        for m in &file.matches {
            if shown == max {
                break 'files;
            }
            shown += 1;
            out.push_str(&format!("{}:{} {}\n", file.rel, m.line, excerpt(&m.text)));
            if !m.captures.is_empty() {
                let caps: Vec<String> = m
                    .captures
                    .iter()
                    .map(|(k, v)| format!("{k} = {}", cut_line(&one_line(v), 120)))
                    .collect();
                out.push_str(&format!("    {}\n", caps.join("; ")));
            }
        }
    }
    if total > shown {
        out.push_str(&format!(
            "… showing the first {shown} of {total} matches (in {files} files); narrow `path` or raise `max_results`\n"
        ));
    }
    out.push_str(&searched_line(stats, lang, target));
    out.push('\n');
    out
}

/// The first one or two lines of a match, each cut, with a count of the rest.
pub(crate) fn excerpt(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    match lines.len() {
        0 | 1 => cut_line(text.trim_end(), LINE_CHARS),
        2 => format!(
            "{}\n    {}",
            cut_line(lines[0], LINE_CHARS),
            cut_line(lines[1].trim(), LINE_CHARS)
        ),
        n => format!(
            "{}\n    {} … (+{} more lines)",
            cut_line(lines[0], LINE_CHARS),
            cut_line(lines[1].trim(), LINE_CHARS),
            n - 2
        ),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
