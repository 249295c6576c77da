//! One match or capture as a short excerpt: the first lines or one collapsed line, cut.

use tether_base::{cut_line, cut_mark};

/// Characters of one match line before it is cut.
const LINE_CHARS: usize = 300;

/// Characters of one capture, put on one line, before it is cut.
pub(crate) const CAPTURE_CHARS: usize = 120;

/// The first one or two lines of a match, each cut, with a count of the rest; reads the
/// text once and copies no more than it shows.
pub(crate) fn excerpt(text: &str) -> String {
    let mut lines = text.lines();
    let (first, second) = (lines.next(), lines.next());
    match (first, second) {
        (None, _) | (Some(_), None) => cut_line(text.trim_end(), LINE_CHARS),
        (Some(a), Some(b)) => {
            let shown = format!(
                "{}\n    {}",
                cut_line(a, LINE_CHARS),
                cut_line(b.trim(), LINE_CHARS)
            );
            match lines.count() {
                0 => shown,
                rest => format!("{shown} … (+{rest} more lines)"),
            }
        }
    }
}

/// The text of `pieces` joined, with every whitespace run made one space and the ends
/// trimmed, cut at `max` characters as `cut_line` cuts; without building the whole line.
pub(crate) fn one_line_cut(pieces: &[&str], max: usize) -> String {
    let mut out = String::new();
    let (mut chars, mut gap, mut started) = (0usize, false, false);
    for c in pieces.iter().flat_map(|p| p.chars()) {
        if c.is_whitespace() {
            gap = started;
            continue;
        }
        for c in gap.then_some(' ').into_iter().chain([c]) {
            if chars < max {
                out.push(c);
            }
            chars += 1;
        }
        gap = false;
        started = true;
    }
    if chars > max {
        out.push_str(&cut_mark(chars - max));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_line(s: &str) -> String {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn one_line_cut_is_cut_line_of_the_collapsed_text() {
        let long = "word ".repeat(100);
        for text in ["", "  a \n\t b  ", "x", "é  ü\r\nz", long.as_str()] {
            for max in [0, 1, 3, 120] {
                assert_eq!(
                    one_line_cut(&[text], max),
                    cut_line(&one_line(text), max),
                    "{text:?} {max}"
                );
            }
        }
        assert_eq!(one_line_cut(&["a ", ", ", " b"], 120), "a , b");
        assert_eq!(one_line_cut(&["a", ", ", "b"], 120), one_line("a, b"));
    }

    #[test]
    fn excerpts_show_two_lines_and_count_the_rest() {
        assert_eq!(excerpt(""), "");
        assert_eq!(excerpt("f(1)\n"), "f(1)");
        assert_eq!(excerpt("f(\n  1)"), "f(\n    1)");
        assert_eq!(excerpt("f(\n  1,\n  2\n)"), "f(\n    1, … (+2 more lines)");
    }
}
