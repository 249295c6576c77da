//! Rewrite templates: literal text with `$NAME` and `$$$NAME` filled from a match. Indentation
//! follows the matched site exactly, tabs included: each continuation line of the result starts
//! with the site line's own leading whitespace, and a multi-line capture keeps its shape.

use std::borrow::Cow;
use std::collections::HashSet;

use ast_grep_core::NodeMatch;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_language::SupportLang;

/// One part of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    /// An index into [`Template::vars`].
    Var(usize),
}

/// A parsed rewrite template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
    /// Each distinct metavariable the template uses, and whether it is a `$$$` list: looked
    /// up once per match however often the template repeats it.
    vars: Vec<(String, bool)>,
}

fn name_start(c: char) -> bool {
    c.is_ascii_uppercase() || c == '_'
}

fn name_char(c: char) -> bool {
    name_start(c) || c.is_ascii_digit()
}

/// Why a rewrite template was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BadTemplate {
    /// What is wrong and what the pattern does define.
    pub message: String,
}

impl Template {
    /// Parses `text`; every metavariable it names must be one the pattern `defined`.
    /// A `$` not followed by an uppercase name (`$x`, `${`) is plain text.
    pub fn parse(text: &str, defined: &HashSet<&str>) -> Result<Self, BadTemplate> {
        let mut pieces = Vec::new();
        let mut vars: Vec<(String, bool)> = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            literal.push_str(&rest[..at]);
            let after = &rest[at..];
            let dollars = after.chars().take_while(|c| *c == '$').count().min(3);
            let tail = &after[dollars..];
            let name_len = if tail.starts_with(name_start) {
                tail.find(|c: char| !name_char(c)).unwrap_or(tail.len())
            } else {
                0
            };
            if name_len == 0 || dollars == 2 {
                literal.push('$');
                rest = &after[1..];
                continue;
            }
            let name = &tail[..name_len];
            if !defined.contains(name) {
                let mut known: Vec<&str> = defined.iter().copied().collect();
                known.sort_unstable();
                let message = format!(
                    "the rewrite uses `{}{name}`, which the pattern does not define (it defines: {})",
                    &after[..dollars],
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                );
                return Err(BadTemplate { message });
            }
            if !literal.is_empty() {
                pieces.push(Piece::Text(std::mem::take(&mut literal)));
            }
            let var = (name.to_string(), dollars == 3);
            let slot = match vars.iter().position(|v| *v == var) {
                Some(slot) => slot,
                None => {
                    vars.push(var);
                    vars.len() - 1
                }
            };
            pieces.push(Piece::Var(slot));
            rest = &tail[name_len..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        Ok(Template { pieces, vars })
    }

    /// The replacement for one match in `source`, or None once it would pass `limit` bytes.
    /// Linear in what it writes: the indentation of the current output line is tracked as
    /// it grows, and a capture's own line is found through `lines`.
    pub(crate) fn render(
        &self,
        nm: &NodeMatch<'_, StrDoc<SupportLang>>,
        source: &str,
        lines: &LineStarts,
        limit: usize,
    ) -> Option<String> {
        let env = nm.get_env();
        // Each capture once: its bytes, its own line's indentation, whether it spans lines.
        let captures: Vec<Option<(std::ops::Range<usize>, &str, bool)>> = self
            .vars
            .iter()
            .map(|(name, multi)| {
                let range = if *multi {
                    let nodes = env.get_multiple_matches(name);
                    let (a, b) = (nodes.first()?, nodes.last()?);
                    a.range().start..b.range().end
                } else {
                    env.get_match(name)?.range()
                };
                let lines_spanned = memchr::memchr(b'\n', source[range.clone()].as_bytes());
                Some((
                    range.clone(),
                    lines.indent(source, range.start),
                    lines_spanned.is_some(),
                ))
            })
            .collect();
        let mut out = String::new();
        // Where the last line of `out` starts.
        let mut line_start = 0;
        for piece in &self.pieces {
            let added: Cow<'_, str> = match piece {
                Piece::Text(t) => Cow::Borrowed(t),
                Piece::Var(slot) => match &captures[*slot] {
                    None => continue,
                    // One line: nothing to re-indent, and the output line goes on.
                    Some((range, _, false)) => Cow::Borrowed(&source[range.clone()]),
                    Some((range, theirs, true)) => {
                        let here = leading_blanks(&out[line_start..]);
                        Cow::Owned(reindent(&source[range.clone()], theirs, here))
                    }
                },
            };
            if let Some(nl) = added.rfind('\n') {
                line_start = out.len() + nl + 1;
            }
            out.push_str(&added);
            if out.len() > limit {
                return None;
            }
        }
        let site = lines.indent(source, nm.range().start);
        let out = reindent(&out, "", site);
        (out.len() <= limit).then_some(out)
    }
}

/// Where each line of a text starts, so the indentation at any byte is found without scanning
/// back through a long line.
pub(crate) struct LineStarts(Vec<usize>);

impl LineStarts {
    /// Indexes `text`.
    pub(crate) fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineStarts(starts)
    }

    /// The leading whitespace of the line holding byte `at` of `text` (the indexed text).
    fn indent<'t>(&self, text: &'t str, at: usize) -> &'t str {
        let line = self.0.partition_point(|&s| s <= at).saturating_sub(1);
        leading_blanks(&text[self.0[line]..])
    }
}

/// The spaces and tabs `text` starts with.
fn leading_blanks(text: &str) -> &str {
    let end = text
        .find(|c: char| c != ' ' && c != '\t')
        .unwrap_or(text.len());
    &text[..end]
}

/// Moves the continuation lines of `text` from indentation `from` to `to`; empty lines stay
/// empty, so no trailing whitespace appears.
fn reindent(text: &str, from: &str, to: &str) -> String {
    let mut lines = text.split('\n');
    let mut out = lines.next().unwrap_or("").to_string();
    for line in lines {
        out.push('\n');
        let body = line.strip_prefix(from).unwrap_or(line);
        if !body.trim_end_matches('\r').is_empty() {
            out.push_str(to);
        }
        out.push_str(body);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defined<'a>(names: &[&'a str]) -> HashSet<&'a str> {
        names.iter().copied().collect()
    }

    #[test]
    fn parses_names_and_leaves_other_dollars_alone() {
        let t =
            Template::parse("$X.f(${y}, $$$ARGS) + $lower $X", &defined(&["X", "ARGS"])).unwrap();
        assert_eq!(
            t.pieces,
            vec![
                Piece::Var(0),
                Piece::Text(".f(${y}, ".into()),
                Piece::Var(1),
                Piece::Text(") + $lower ".into()),
                Piece::Var(0),
            ]
        );
        assert_eq!(
            t.vars,
            [("X".to_string(), false), ("ARGS".to_string(), true)]
        );
        let e = Template::parse("$Y", &defined(&["X"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`$Y`") && e.contains("defines: X"), "{e}");
    }

    #[test]
    fn reindent_moves_continuation_lines_only() {
        assert_eq!(reindent("a\n  b\n\nc", "  ", "\t"), "a\n\tb\n\n\tc");
        let text = "x\n\t\tfoo(1)\n  \n";
        let lines = LineStarts::new(text);
        assert_eq!(lines.indent(text, 5), "\t\t");
        assert_eq!(lines.indent(text, 0), "");
        assert_eq!(lines.indent(text, 11), "  ");
        assert_eq!(lines.indent(text, text.len()), "");
    }
}
