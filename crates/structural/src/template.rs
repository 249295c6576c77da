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

    /// The replacement for one match in `source`; an error once it would pass `limit` bytes,
    /// or when a capture's shape cannot be kept. Linear in what it writes: the indentation of
    /// the current output line is tracked as it grows, and a capture's own line is found
    /// through `lines`.
    pub(crate) fn render(
        &self,
        nm: &NodeMatch<'_, StrDoc<SupportLang>>,
        source: &str,
        lines: &LineStarts,
        limit: usize,
    ) -> Result<String, RenderError> {
        let env = nm.get_env();
        let site_start = nm.range().start;
        let captures: Vec<Option<Capture<'_>>> = self
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
                Some(Capture::new(source, lines, range, site_start))
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
                    Some(c) if !c.multi_line => Cow::Borrowed(&source[c.range.clone()]),
                    Some(c) => {
                        let line_so_far = &out[line_start..];
                        let here = leading_blanks(line_so_far);
                        let text = &source[c.range.clone()];
                        match c.hangs_from {
                            // After text on the output line, a capture that started its own
                            // line keeps that line break and its indentation relative to the
                            // line it hung from; the blanks before it would only trail.
                            Some(anchor) if !line_so_far.trim().is_empty() => {
                                let Some(relative) = c.indent.strip_prefix(anchor) else {
                                    let var = self.shown_var(*slot);
                                    let line = lines.line_of(c.range.start);
                                    return Err(RenderError::Shape(ShapeError { var, line }));
                                };
                                let to = format!("{here}{relative}");
                                let kept = out.trim_end_matches([' ', '\t']).len();
                                out.truncate(kept);
                                Cow::Owned(format!("\n{to}{}", reindent(text, c.indent, &to)))
                            }
                            _ => Cow::Owned(reindent(text, c.indent, here)),
                        }
                    }
                },
            };
            if let Some(nl) = added.rfind('\n') {
                line_start = out.len() + nl + 1;
            }
            out.push_str(&added);
            if out.len() > limit {
                return Err(RenderError::TooLarge);
            }
        }
        let site = lines.indent(source, site_start);
        let out = reindent(&out, "", site);
        if out.len() > limit {
            return Err(RenderError::TooLarge);
        }
        Ok(out)
    }

    /// A metavariable as the template spells it, for messages.
    fn shown_var(&self, slot: usize) -> String {
        let (name, multi) = &self.vars[slot];
        format!("{}{name}", if *multi { "$$$" } else { "$" })
    }
}

/// Why one match could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RenderError {
    /// The replacement would pass the output budget.
    TooLarge,
    /// A capture's shape cannot be kept where the template puts it.
    Shape(ShapeError),
}

/// A multi-line capture that the template puts after text on a line, while in the source it
/// started its own line less indented than the line it hung from (or with other blanks), so
/// no indentation keeps its shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError {
    /// The metavariable, as the template spells it (`$$$BODY`).
    pub var: String,
    /// 1-based line of the capture in its file.
    pub line: usize,
}

/// What rendering needs to know of one capture.
struct Capture<'s> {
    range: std::ops::Range<usize>,
    /// The leading whitespace of the capture's first line.
    indent: &'s str,
    multi_line: bool,
    /// When the capture starts its own line after a line break inside the match: the
    /// indentation of the line holding the last code before it.
    hangs_from: Option<&'s str>,
}

impl<'s> Capture<'s> {
    fn new(
        source: &'s str,
        lines: &LineStarts,
        range: std::ops::Range<usize>,
        site_start: usize,
    ) -> Self {
        let multi_line = memchr::memchr(b'\n', source[range.clone()].as_bytes()).is_some();
        let before = &source[site_start..range.start];
        let code_before = before.trim_end_matches([' ', '\t', '\r', '\n']).len();
        let own_line = before[code_before..].contains('\n');
        let hangs_from = (own_line && code_before > 0)
            .then(|| lines.indent(source, site_start + code_before - 1));
        Capture {
            indent: lines.indent(source, range.start),
            range,
            multi_line,
            hangs_from,
        }
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

    /// The 1-based line holding byte `at`.
    pub(crate) fn line_of(&self, at: usize) -> usize {
        self.0.partition_point(|&s| s <= at).max(1)
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
