//! Positions as the model gives them (a line and a symbol on it, never a column), and as a
//! server counts them (UTF-8 bytes or UTF-16 units, as negotiated).

/// How the server counts characters within a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Bytes of UTF-8.
    Utf8,
    /// UTF-16 code units (the LSP default).
    Utf16,
}

impl Encoding {
    /// The column of byte offset `byte` in `line`, as the server counts.
    pub fn column(self, line: &str, byte: usize) -> u32 {
        let prefix = &line[..floor_char(line, byte)];
        match self {
            Encoding::Utf8 => prefix.len() as u32,
            Encoding::Utf16 => prefix.encode_utf16().count() as u32,
        }
    }

    /// The byte offset in `line` of the server's column `col` (clamped to the line).
    pub fn byte(self, line: &str, col: u32) -> usize {
        match self {
            Encoding::Utf8 => floor_char(line, col as usize),
            Encoding::Utf16 => {
                let mut units = 0u32;
                for (i, c) in line.char_indices() {
                    if units >= col {
                        return i;
                    }
                    units += c.len_utf16() as u32;
                }
                line.len()
            }
        }
    }

    /// The name LSP gives it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
        }
    }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// `name#N` as the text and which occurrence (`N`); any other symbol is all text.
fn split_nth(symbol: &str) -> (&str, Option<usize>) {
    match symbol.rsplit_once('#') {
        Some((s, n)) if !s.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            (s, n.parse::<usize>().ok())
        }
        _ => (symbol, None),
    }
}

/// Line `line_no` (from 1) of `lines` and where `symbol` points on it. When the symbol is not
/// on that line, the error names the nearest lines that have it, since a model's line number
/// is often off by a few, or says that the file has it nowhere.
/// Why a symbol could not be placed on its line, said for the model: the lines that have it,
/// or how to say which occurrence it meant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unplaced(String);

impl From<Unplaced> for tether_tool::ToolError {
    fn from(e: Unplaced) -> Self {
        tether_tool::ToolError::invalid(e.0)
    }
}

pub fn locate_line<'a>(
    file: &str,
    lines: &[&'a str],
    line_no: usize,
    symbol: &str,
) -> Result<(&'a str, usize, String), Unplaced> {
    let found = match lines.get(line_no.wrapping_sub(1)) {
        Some(line) => locate(line, line_no, symbol).map(|(byte, ident)| (*line, byte, ident)),
        None => Err(Unplaced(format!(
            "{file} has {} lines, so line {line_no} does not exist",
            lines.len()
        ))),
    };
    found.map_err(|Unplaced(why)| {
        let (text, _) = split_nth(symbol);
        let here = lines.get(line_no.wrapping_sub(1));
        if text.is_empty() || here.is_some_and(|l| l.contains(text)) {
            return Unplaced(why);
        }
        let mut near: Vec<usize> = (1..=lines.len())
            .filter(|&n| lines[n - 1].contains(text))
            .collect();
        if near.is_empty() {
            return Unplaced(format!("{why}; `{text}` occurs nowhere in {file}"));
        }
        let total = near.len();
        near.sort_by_key(|n| n.abs_diff(line_no));
        near.truncate(NEAREST);
        near.sort_unstable();
        let listed: Vec<String> = near.iter().map(usize::to_string).collect();
        let more = if total > near.len() {
            format!(" (the {} nearest of {total})", near.len())
        } else {
            String::new()
        };
        Unplaced(format!(
            "{why}; `{text}` is on line{} {}{more} of {file}",
            if near.len() == 1 { "" } else { "s" },
            listed.join(", ")
        ))
    })
}

/// How many lines that have a missing symbol an error names.
const NEAREST: usize = 5;

/// Where a `symbol` on a line points: the byte where its last identifier starts, and that
/// identifier.
pub fn locate(line: &str, line_no: usize, symbol: &str) -> Result<(usize, String), Unplaced> {
    if symbol.is_empty() {
        return Err(Unplaced(
            "`symbol` is empty: give a name that appears on the line, such as a function or \
             variable name"
                .into(),
        ));
    }
    let (text, nth) = split_nth(symbol);
    let hits: Vec<usize> = line.match_indices(text).map(|(i, _)| i).collect();
    let shown = line.trim_end();
    if hits.is_empty() {
        return Err(Unplaced(format!(
            "`{text}` does not occur on line {line_no}: `{}`",
            tether_base::cut_line(shown, 300)
        )));
    }
    let start = match nth {
        Some(n) if n >= 1 && n <= hits.len() => hits[n - 1],
        Some(n) => {
            return Err(Unplaced(format!(
                "`{symbol}`: line {line_no} has {} occurrence{} of `{text}`, so #{n} does not \
                 exist: {}",
                hits.len(),
                if hits.len() == 1 { "" } else { "s" },
                numbered(line, text, &hits)
            )));
        }
        None if hits.len() == 1 => hits[0],
        None => {
            let whole: Vec<usize> = hits
                .iter()
                .copied()
                .filter(|&i| whole_word(line, i, text.len()))
                .collect();
            match whole.as_slice() {
                [one] => *one,
                _ => {
                    return Err(Unplaced(format!(
                        "`{text}` occurs {} times on line {line_no}: {}; say which with \
                         `{text}#N`",
                        hits.len(),
                        numbered(line, text, &hits)
                    )));
                }
            }
        }
    };
    let matched = &line[start..start + text.len()];
    // The last identifier inside the match: `self.foo`, `foo(` and `Foo::foo` all mean `foo`.
    let mut ident_start = None;
    let mut prev_ident = false;
    for (i, c) in matched.char_indices() {
        let id = is_ident(c);
        if id && !prev_ident {
            ident_start = Some(i);
        }
        prev_ident = id;
    }
    let at = start + ident_start.unwrap_or(0);
    let ident: String = line[at..].chars().take_while(|&c| is_ident(c)).collect();
    Ok((at, ident))
}

/// The name a `symbol` ends with, as typed (`self.foo` and `foo(` end with `foo`; a `#N` is
/// not part of it): compared with the identifier [`locate`] chose, it tells a misspelt or cut
/// name (`want_byte` inside `want_bytes`) from the whole one.
pub fn typed_name(symbol: &str) -> Option<String> {
    let (text, _) = split_nth(symbol);
    let end = text.rfind(is_ident)?;
    let end = end + text[end..].chars().next()?.len_utf8();
    let start = text[..end]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_ident(c))
        .last()?
        .0;
    Some(text[start..end].to_string())
}

fn whole_word(line: &str, at: usize, len: usize) -> bool {
    let before = line[..at].chars().next_back().is_none_or(|c| !is_ident(c));
    let after = line[at + len..].chars().next().is_none_or(|c| !is_ident(c));
    before && after
}

fn numbered(line: &str, text: &str, hits: &[usize]) -> String {
    hits.iter()
        .enumerate()
        .map(|(n, &i)| {
            let from = floor_char(line, i.saturating_sub(12));
            let to = floor_char(line, (i + text.len() + 12).min(line.len()));
            format!("#{} `…{}…`", n + 1, line[from..to].trim())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_addressing_rules() {
        let line = "    let foo = foobar(self.foo) + Foo::foo;";
        // Several hits, several whole words: an error listing them.
        let err = locate(line, 3, "foo").unwrap_err().to_string();
        assert!(
            err.contains("occurs 4 times on line 3") && err.contains("#2"),
            "{err}"
        );
        assert_eq!(locate(line, 3, "foo#1").unwrap(), (8, "foo".into()));
        assert_eq!(locate(line, 3, "self.foo").unwrap(), (26, "foo".into()));
        assert_eq!(locate(line, 3, "Foo::foo").unwrap(), (38, "foo".into()));
        assert_eq!(locate(line, 3, "foobar(").unwrap(), (14, "foobar".into()));
        // One whole-word hit among substrings is enough.
        assert_eq!(
            locate("let foo = foobar();", 1, "foo").unwrap(),
            (4, "foo".into())
        );
        let err = locate(line, 3, "bar#9").unwrap_err().to_string();
        assert!(err.contains("#9 does not exist"), "{err}");
        let err = locate(line, 3, "baz").unwrap_err().to_string();
        assert_eq!(err, format!("`baz` does not occur on line 3: `{line}`"));
    }

    #[test]
    fn a_missing_symbol_names_the_nearest_lines_that_have_it() {
        let text = "fn total() {}\n\nlet a = 1;\nlet t = total();\n";
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            locate_line("m.rs", &lines, 4, "total").unwrap(),
            (lines[3], 8, "total".into())
        );
        let err = locate_line("m.rs", &lines, 3, "total")
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("; `total` is on lines 1, 4 of m.rs"), "{err}");
        let err = locate_line("m.rs", &lines, 9, "total()")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "m.rs has 4 lines, so line 9 does not exist; `total()` is on lines 1, 4"
            ),
            "{err}"
        );
        let err = locate_line("m.rs", &lines, 3, "totl")
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("; `totl` occurs nowhere in m.rs"), "{err}");
        let many: Vec<String> = (0..20).map(|i| format!("x{i} = total")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let err = locate_line("m.py", &many, 10, "nope#2")
            .unwrap_err()
            .to_string();
        assert!(err.contains("occurs nowhere"), "{err}");
        let err = locate_line("m.py", &[&["y"][..], &many].concat(), 1, "total")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("is on lines 2, 3, 4, 5, 6 (the 5 nearest of 20)"),
            "{err}"
        );
    }

    #[test]
    fn the_name_a_symbol_ends_with() {
        assert_eq!(typed_name("self.foo").as_deref(), Some("foo"));
        assert_eq!(typed_name("foobar(").as_deref(), Some("foobar"));
        assert_eq!(typed_name("Foo::foo#2").as_deref(), Some("foo"));
        assert_eq!(typed_name("want_byte").as_deref(), Some("want_byte"));
        assert_eq!(typed_name("(").as_deref(), None);
        let (_, ident) = locate("    x = want_bytes(1)", 1, "want_byte").unwrap();
        assert_eq!(ident, "want_bytes");
    }

    #[test]
    fn columns_in_both_encodings_on_non_ascii_lines() {
        let line = "let s = \"😀 漢字\"; let target = 1;";
        let (byte, ident) = locate(line, 1, "target").unwrap();
        assert_eq!(ident, "target");
        // 😀 is 4 bytes and 2 UTF-16 units; each CJK character is 3 bytes and 1 unit.
        assert_eq!(Encoding::Utf8.column(line, byte), byte as u32);
        let utf16 = Encoding::Utf16.column(line, byte);
        assert_eq!(utf16 as usize, byte - 2 - 2 * 2);
        assert_eq!(Encoding::Utf16.byte(line, utf16), byte);
        assert_eq!(Encoding::Utf8.byte(line, byte as u32), byte);
    }
}
