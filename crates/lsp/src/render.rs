//! What the model reads: every location as `path:line`, with the identifier there and the
//! line's text, grouped by file and capped with a count of what was cut.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_base::cut_line;
use tether_fs::Workspace;

use crate::position::Encoding;
use crate::protocol::{self, Diagnostic, HoverContents, Location, Symbol};
use crate::server::uri_path;

/// Characters of a line shown before it is cut with a mark.
const LINE_CHARS: usize = 300;
/// Characters of a hover shown before it is cut with a mark.
const HOVER_CHARS: usize = 2000;

/// One place an answer points at.
pub struct Place {
    /// The file.
    pub path: PathBuf,
    /// 0-based line.
    pub line: usize,
    /// The server's column there.
    pub col: u32,
}

impl Place {
    /// Where a location or link points, when it names a file and a span.
    pub fn of(location: &Location) -> Option<Place> {
        let (uri, start) = location.target()?;
        Some(Place {
            path: uri_path(uri)?,
            line: start.line as usize,
            col: start.character,
        })
    }
}

/// The places of a `Location`, `Location[]` or `LocationLink[]` answer, in order.
pub fn places(answer: Value) -> Vec<Place> {
    protocol::many::<Location>(answer)
        .iter()
        .filter_map(Place::of)
        .collect()
}

/// A file as the model names it: relative to the workspace, else absolute.
pub fn shown(path: &Path, workspace: &Path) -> String {
    match path.strip_prefix(workspace) {
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// `path:line  identifier  | text`, one per place, grouped by file, at most `cap`; a place in
/// a file that `read` could not read is `path:line  (reason: not shown)`. The files are read
/// through the door, on the blocking pool.
pub async fn locations(places: &[Place], ws: &Workspace, enc: Encoding, cap: usize) -> String {
    let mut order: Vec<&Path> = Vec::new();
    for p in places {
        if !order.contains(&p.path.as_path()) {
            order.push(&p.path);
        }
    }
    let shown_places: Vec<&Place> = order
        .iter()
        .flat_map(|file| places.iter().filter(move |p| p.path == *file))
        .take(cap)
        .collect();
    let mut wanted: HashMap<PathBuf, BTreeSet<usize>> = HashMap::new();
    for p in &shown_places {
        wanted.entry(p.path.clone()).or_default().insert(p.line);
    }
    let texts = crate::named::lines(ws, wanted).await;
    let mut out = Vec::new();
    for p in &shown_places {
        let at = format!("{}:{}", shown(&p.path, ws.root()), p.line + 1);
        let text = match texts.get(&p.path) {
            Some(Ok(lines)) => lines.get(&p.line).map_or("", String::as_str),
            Some(Err(why)) => {
                out.push(format!("{at}  ({why}: not shown)"));
                continue;
            }
            None => {
                out.push(format!("{at}  (not read: not shown)"));
                continue;
            }
        };
        let col = enc.byte(text, p.col);
        let ident: String = text[col..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        out.push(format!(
            "{at}  {ident}  | {}",
            cut_line(text.trim(), LINE_CHARS)
        ));
    }
    if places.len() > shown_places.len() {
        out.push(format!(
            "… {} more not shown (cap {cap})",
            places.len() - shown_places.len()
        ));
    }
    out.join("\n")
}

/// The text of a hover's `contents`, cut at about 2,000 characters.
pub fn hover(answer: Value) -> Option<String> {
    fn text(v: &HoverContents) -> String {
        match v {
            HoverContents::Text(s) => s.clone(),
            HoverContents::Many(items) => items.iter().map(text).collect::<Vec<_>>().join("\n\n"),
            HoverContents::Marked(m) => match (&m.value, &m.language) {
                (Some(s), Some(lang)) => format!("```{lang}\n{s}\n```"),
                (Some(s), None) => s.clone(),
                (None, _) => String::new(),
            },
            HoverContents::Other(_) => String::new(),
        }
    }
    let answer: protocol::Hover = protocol::read(answer);
    let t = plain(&text(&answer.contents?));
    let t = t.trim();
    (!t.is_empty()).then(|| cut_line(t, HOVER_CHARS))
}

/// Markdown as a model reads it best, plain: code fences dropped with their code kept as it
/// is, and elsewhere backslash escapes (`secret\_key`) and HTML entities (`&nbsp;`) undone.
fn plain(markdown: &str) -> String {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        out.push(match in_code {
            true => line.to_string(),
            false => unescape(line),
        });
    }
    out.join("\n")
}

/// One line of markdown prose without its escapes and entities.
fn unescape(line: &str) -> String {
    const ENTITIES: [(&str, &str); 6] = [
        ("&nbsp;", " "),
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&amp;", "&"),
    ];
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(&next)) if next.is_ascii_punctuation() => {
                out.push(next);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    ENTITIES
        .iter()
        .fold(out, |text, (entity, with)| text.replace(entity, with))
}

/// The LSP name of a `SymbolKind`.
pub fn symbol_kind(kind: u64) -> &'static str {
    const KINDS: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum member",
        "struct",
        "event",
        "operator",
        "type parameter",
    ];
    KINDS
        .get((kind as usize).wrapping_sub(1))
        .copied()
        .unwrap_or("symbol")
}

/// Symbol kinds whose children are parameters and local variables: function, method,
/// constructor.
const BODIES: [u64; 3] = [12, 6, 9];

/// A document's outline: `line  kind name`, nested by indentation, at most `cap` entries.
/// The names inside a function or method body (its parameters and locals) are listed only
/// with `locals`; otherwise the last line says how many were left out.
pub fn outline(symbols: &[Symbol], cap: usize, locals: bool) -> String {
    struct Walk {
        out: Vec<String>,
        total: usize,
        hidden: usize,
        cap: usize,
        locals: bool,
    }
    fn count(items: &[Symbol]) -> usize {
        items
            .iter()
            .map(|i| 1 + i.children.as_deref().map_or(0, count))
            .sum()
    }
    fn walk(items: &[Symbol], depth: usize, w: &mut Walk) {
        for item in items {
            w.total += 1;
            let line = u64::from(item.line()) + 1;
            let kind = item.kind;
            if w.out.len() < w.cap {
                w.out.push(format!(
                    "{}{line}  {} {}",
                    "  ".repeat(depth),
                    symbol_kind(kind),
                    item.name.as_deref().unwrap_or("?")
                ));
            }
            let Some(children) = &item.children else {
                continue;
            };
            if BODIES.contains(&kind) && !w.locals {
                w.hidden += count(children);
            } else {
                walk(children, depth + 1, w);
            }
        }
    }
    let mut w = Walk {
        out: Vec::new(),
        total: 0,
        hidden: 0,
        cap,
        locals,
    };
    walk(symbols, 0, &mut w);
    let mut out = w.out;
    let shown = out.len();
    if w.total > shown {
        out.push(format!("… {} more not shown (cap {cap})", w.total - shown));
    }
    if w.hidden > 0 {
        out.push(format!(
            "({} inside function and method bodies not listed: parameters and locals; \
             `locals: true` lists them)",
            tether_tool::counted(w.hidden, "name")
        ));
    }
    out.join("\n")
}

/// A file's diagnostics as `path:line  severity  message [code] (source)`, worst first within
/// a line, with counts by severity, at most `cap`.
pub fn diagnostics(shown_path: &str, items: &[Diagnostic], cap: usize) -> String {
    const SEVERITY: [&str; 4] = ["error", "warning", "info", "hint"];
    let mut rows: Vec<(u64, u64, String)> = items
        .iter()
        .map(|d| {
            let line = u64::from(d.range.start.line);
            let sev = d.level();
            let code = d.code_tag();
            let source = d
                .source
                .as_ref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            let message = d.one_line();
            let text = format!(
                "{shown_path}:{}  {}  {}{code}{source}",
                line + 1,
                SEVERITY[(sev - 1) as usize],
                cut_line(message.trim(), LINE_CHARS)
            );
            (line, sev, text)
        })
        .collect();
    rows.sort();
    rows.dedup_by(|a, b| a.2 == b.2);
    let mut counts = [0usize; 4];
    for (_, sev, _) in &rows {
        counts[(*sev - 1) as usize] += 1;
    }
    let summary: Vec<String> = counts
        .iter()
        .zip(SEVERITY)
        .filter(|(n, _)| **n > 0)
        .map(|(n, s)| tether_tool::counted(*n, s))
        .collect();
    if summary.is_empty() {
        return format!("{shown_path}: no errors or warnings");
    }
    let mut out = vec![format!("{shown_path}: {}", summary.join(", "))];
    out.extend(rows.iter().take(cap).map(|(_, _, t)| t.clone()));
    if rows.len() > cap {
        out.push(format!("… {} more not shown (cap {cap})", rows.len() - cap));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn hover_markdown_reads_as_plain_text() {
        let answer = json!({"contents": {"kind": "markdown", "value":
            "```python\ndef sign(secret_key: str) -> str\n```\n---\nSigns with the `secret\\_key`:&nbsp;a &lt;str&gt; \\*only\\*."}});
        assert_eq!(
            hover(answer).unwrap(),
            "def sign(secret_key: str) -> str\n---\nSigns with the `secret_key`: a <str> *only*."
        );
    }

    #[test]
    fn an_outline_leaves_out_what_is_inside_bodies_unless_asked() {
        let symbol = |name: &str, kind: u64, line: u64, children: Vec<Value>| {
            json!({"name": name, "kind": kind, "children": children,
                   "selectionRange": {"start": {"line": line, "character": 0}}})
        };
        let method = symbol(
            "run",
            6,
            2,
            vec![symbol("self", 13, 2, vec![]), symbol("n", 13, 3, vec![])],
        );
        let class = symbol("Job", 5, 1, vec![method, symbol("name", 8, 5, vec![])]);
        let answer: Vec<Symbol> = protocol::many(json!([class, symbol("LIMIT", 14, 7, vec![])]));
        let short = outline(&answer, 50, false);
        assert_eq!(
            short,
            "2  class Job\n  3  method run\n  6  field name\n8  constant LIMIT\n(2 names inside \
             function and method bodies not listed: parameters and locals; `locals: true` lists \
             them)"
        );
        let long = outline(&answer, 50, true);
        assert!(
            long.contains("    3  variable self\n    4  variable n"),
            "{long}"
        );
        assert!(!long.contains("not listed"), "{long}");
    }
}
