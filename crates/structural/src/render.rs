//! Model-facing text for search and edit results: capped, and always saying what was searched.

use crate::footer::{count, no_match_hint, searched_line};
use crate::search::{FileMatches, SearchStats};

/// Renders matches sorted by path then line, at most `max` of them.
pub(crate) fn render_matches(
    found: &[FileMatches],
    stats: &SearchStats,
    max: usize,
    lang: &str,
    target: &str,
) -> String {
    let total: usize = found.iter().map(|f| f.total).sum();
    let files = found.len();
    let mut out = match total {
        0 => "0 matches\n".to_string(),
        n => format!(
            "{} in {}\n",
            count(n, "match", "matches"),
            count(files, "file", "files")
        ),
    };
    let mut shown = 0;
    'files: for file in found {
        for m in &file.matches {
            if shown == max {
                break 'files;
            }
            shown += 1;
            out.push_str(&format!("{}:{} {}\n", file.rel, m.line, m.excerpt));
            if !m.captures.is_empty() {
                let caps: Vec<String> = m
                    .captures
                    .iter()
                    .map(|(k, v)| match v.as_str() {
                        "" => format!("{k} = (empty)"),
                        v => format!("{k} = {v}"),
                    })
                    .collect();
                out.push_str(&format!("    {}\n", caps.join("; ")));
            }
        }
    }
    if total > shown {
        out.push_str(&format!(
            "… showing the first {shown} of {total} matches (in {}); narrow `path` or raise `max_results`\n",
            count(files, "file", "files")
        ));
    }
    if total == 0
        && let Some(hint) = no_match_hint(stats)
    {
        out.push_str(&hint);
        out.push('\n');
    }
    out.push_str(&searched_line(stats, lang, target));
    out.push('\n');
    out
}
