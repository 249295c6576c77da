//! Rewrite templates: literal text with `$NAME` and `$$$NAME` filled from a match. Indentation
//! follows the matched site exactly, tabs included: each continuation line of the result starts
//! with the site line's own leading whitespace, and a multi-line capture keeps its shape.

use std::collections::HashSet;

use ast_grep_core::NodeMatch;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_language::SupportLang;

/// One part of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Var { name: String, multi: bool },
}

/// A parsed rewrite template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

fn name_start(c: char) -> bool {
    c.is_ascii_uppercase() || c == '_'
}

fn name_char(c: char) -> bool {
    name_start(c) || c.is_ascii_digit()
}

impl Template {
    /// Parses `text`; every metavariable it names must be one the pattern `defined`.
    /// A `$` not followed by an uppercase name (`$x`, `${`) is plain text.
    pub fn parse(text: &str, defined: &HashSet<&str>) -> Result<Self, String> {
        let mut pieces = Vec::new();
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
                return Err(format!(
                    "the rewrite uses `{}{name}`, which the pattern does not define (it defines: {})",
                    &after[..dollars],
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
            }
            if !literal.is_empty() {
                pieces.push(Piece::Text(std::mem::take(&mut literal)));
            }
            pieces.push(Piece::Var {
                name: name.to_string(),
                multi: dollars == 3,
            });
            rest = &tail[name_len..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        Ok(Template { pieces })
    }

    /// The replacement for one match in `source`.
    pub(crate) fn render(&self, nm: &NodeMatch<'_, StrDoc<SupportLang>>, source: &str) -> String {
        let env = nm.get_env();
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Var { name, multi } => {
                    let range = if *multi {
                        let nodes = env.get_multiple_matches(name);
                        match (nodes.first(), nodes.last()) {
                            (Some(a), Some(b)) => a.range().start..b.range().end,
                            _ => continue,
                        }
                    } else {
                        match env.get_match(name) {
                            Some(n) => n.range(),
                            None => continue,
                        }
                    };
                    let here = line_indent(&out, out.len()).to_string();
                    let theirs = line_indent(source, range.start);
                    out.push_str(&reindent(&source[range], theirs, &here));
                }
            }
        }
        let site = line_indent(source, nm.range().start);
        reindent(&out, "", site)
    }
}

/// The leading whitespace of the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    let end = line
        .find(|c: char| c != ' ' && c != '\t')
        .unwrap_or(line.len());
    &line[..end]
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
        let t = Template::parse("$X.f(${y}, $$$ARGS) + $lower", &defined(&["X", "ARGS"])).unwrap();
        assert_eq!(
            t.pieces,
            vec![
                Piece::Var {
                    name: "X".into(),
                    multi: false
                },
                Piece::Text(".f(${y}, ".into()),
                Piece::Var {
                    name: "ARGS".into(),
                    multi: true
                },
                Piece::Text(") + $lower".into()),
            ]
        );
        let e = Template::parse("$Y", &defined(&["X"])).unwrap_err();
        assert!(e.contains("`$Y`") && e.contains("defines: X"), "{e}");
    }

    #[test]
    fn reindent_moves_continuation_lines_only() {
        assert_eq!(reindent("a\n  b\n\nc", "  ", "\t"), "a\n\tb\n\n\tc");
        assert_eq!(line_indent("x\n\t\tfoo(1)", 5), "\t\t");
    }
}
