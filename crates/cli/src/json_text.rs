//! Edits a JSON document's text in place, so that everything tether does not own keeps the
//! user's own spelling (numbers beyond 64 bits, spacing, key order) byte for byte.

use std::ops::Range;

use serde_json::Value;

/// One value of the document and where its text lies.
pub struct Node {
    pub span: Range<usize>,
    pub kind: Kind,
}

pub enum Kind {
    /// Members in the order written: the key and the value.
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
    Scalar,
}

impl Node {
    /// The value of the member `key`, when this is an object that has one.
    pub fn member(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, n)| n),
            _ => None,
        }
    }

    pub fn elements(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(items) => Some(items),
            _ => None,
        }
    }
}

/// Where each value of `text` lies; `text` must already be valid JSON (serde_json says why
/// when it is not).
pub fn parse(text: &str) -> Result<Node, String> {
    serde_json::from_str::<Value>(text).map_err(|e| e.to_string())?;
    let mut at = Scanner { text, pos: 0 };
    at.value()
}

struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

impl Scanner<'_> {
    fn skip_space(&mut self) {
        let rest = &self.text[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn peek(&self) -> u8 {
        self.text.as_bytes().get(self.pos).copied().unwrap_or(0)
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        self.skip_space();
        if self.peek() != byte {
            return Err(format!("expected `{}` at byte {}", byte as char, self.pos));
        }
        self.pos += 1;
        Ok(())
    }

    fn value(&mut self) -> Result<Node, String> {
        self.skip_space();
        let start = self.pos;
        let kind = match self.peek() {
            b'{' => Kind::Object(self.members()?),
            b'[' => Kind::Array(self.items()?),
            b'"' => {
                self.string()?;
                Kind::Scalar
            }
            _ => {
                let rest = &self.text.as_bytes()[self.pos..];
                let len = rest
                    .iter()
                    .position(|b| matches!(b, b',' | b']' | b'}') || b.is_ascii_whitespace())
                    .unwrap_or(rest.len());
                self.pos += len;
                Kind::Scalar
            }
        };
        Ok(Node {
            span: start..self.pos,
            kind,
        })
    }

    /// Skips a string and gives its decoded text.
    fn string(&mut self) -> Result<String, String> {
        let start = self.pos;
        self.pos += 1;
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() && bytes[self.pos] != b'"' {
            self.pos += if bytes[self.pos] == b'\\' { 2 } else { 1 };
        }
        self.pos += 1;
        serde_json::from_str(&self.text[start..self.pos]).map_err(|e| e.to_string())
    }

    fn members(&mut self) -> Result<Vec<(String, Node)>, String> {
        self.pos += 1;
        let mut members = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                b'}' => break,
                b',' => self.pos += 1,
                _ => {
                    self.skip_space();
                    let key = self.string()?;
                    self.expect(b':')?;
                    members.push((key, self.value()?));
                }
            }
        }
        self.pos += 1;
        Ok(members)
    }

    fn items(&mut self) -> Result<Vec<Node>, String> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                b']' => break,
                b',' => self.pos += 1,
                _ => items.push(self.value()?),
            }
        }
        self.pos += 1;
        Ok(items)
    }
}

/// Replacements of byte ranges of one text, applied together.
#[derive(Default)]
pub struct Edits(Vec<(Range<usize>, String)>);

impl Edits {
    /// `text` with every replacement made; ranges must not overlap.
    pub fn apply(mut self, text: &str) -> String {
        self.0
            .sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
        let mut out = text.to_string();
        for (range, with) in self.0 {
            out.replace_range(range, &with);
        }
        out
    }

    /// Removes the elements of `list` (an array) at `gone`, with their separators.
    pub fn remove(&mut self, list: &Node, gone: &[usize]) {
        let Some(items) = list.elements() else { return };
        let Some(first_kept) = (0..items.len()).find(|i| !gone.contains(i)) else {
            self.0
                .push((list.span.start + 1..list.span.end - 1, String::new()));
            return;
        };
        if first_kept > 0 {
            self.0.push((
                items[0].span.start..items[first_kept].span.start,
                String::new(),
            ));
        }
        for &i in gone.iter().filter(|&&i| i > first_kept) {
            self.0
                .push((items[i - 1].span.end..items[i].span.end, String::new()));
        }
    }

    /// Adds `value` as the last element of `list` (an array), in the list's own layout;
    /// `gone` are elements removed by this same set of edits.
    pub fn push(&mut self, text: &str, list: &Node, gone: &[usize], value: &Value) {
        let Some(items) = list.elements() else { return };
        let kept: Vec<&Node> = (0..items.len())
            .filter(|i| !gone.contains(i))
            .map(|i| &items[i])
            .collect();
        let indent = inner_indent(text, list.span.start, items.first());
        let rendered = render(value, &indent);
        match kept.last() {
            Some(last) => self.0.push((
                last.span.end..last.span.end,
                format!(",\n{indent}{rendered}"),
            )),
            None => {
                let close = line_indent(text, list.span.start);
                // With no element left, the whole inside is rewritten (removals included).
                self.0
                    .retain(|(r, _)| !(r.start > list.span.start && r.end < list.span.end));
                self.0.push((
                    list.span.start + 1..list.span.end - 1,
                    format!("\n{indent}{rendered}\n{close}"),
                ));
            }
        }
    }

    /// Adds `members` after the last member of `object`, in the object's own layout.
    pub fn add_members(&mut self, text: &str, object: &Node, members: &[(&str, Value)]) {
        let Kind::Object(present) = &object.kind else {
            return;
        };
        if members.is_empty() {
            return;
        }
        let indent = inner_indent(text, object.span.start, present.first().map(|(_, n)| n));
        let added: Vec<String> = members
            .iter()
            .map(|(key, value)| format!("{}: {}", Value::from(*key), render(value, &indent)))
            .collect();
        let added = added.join(&format!(",\n{indent}"));
        match present.last() {
            Some((_, last)) => self
                .0
                .push((last.span.end..last.span.end, format!(",\n{indent}{added}"))),
            None => {
                let close = line_indent(text, object.span.start);
                self.0.push((
                    object.span.start + 1..object.span.end - 1,
                    format!("\n{indent}{added}\n{close}"),
                ));
            }
        }
    }
}

/// The leading white space of the line that holds byte `pos`.
fn line_indent(text: &str, pos: usize) -> String {
    let line_start = text[..pos].rfind('\n').map_or(0, |n| n + 1);
    text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// The indent of a container's elements: the first element's, when it begins its own line,
/// else two spaces more than the container's line.
fn inner_indent(text: &str, container: usize, first: Option<&Node>) -> String {
    if let Some(first) = first {
        let line_start = text[..first.span.start].rfind('\n').map_or(0, |n| n + 1);
        let before = &text[line_start..first.span.start];
        if line_start > container && before.trim().is_empty() {
            return before.to_string();
        }
    }
    format!("{}  ", line_indent(text, container))
}

/// `value` pretty-printed, every line after the first indented by `indent`.
fn render(value: &Value, indent: &str) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    pretty.replace('\n', &format!("\n{indent}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn removing_and_adding_keeps_every_other_byte() {
        let text = "{\n  \"big\": 123456789012345678901234567890,\n  \"list\": [1, 2.50, 3]\n}\n";
        let root = parse(text).unwrap();
        let list = root.member("list").unwrap();
        let mut edits = Edits::default();
        edits.remove(list, &[0, 1]);
        edits.push(text, list, &[0, 1], &json!({"a": 1}));
        let out = edits.apply(text);
        assert!(
            out.contains("\"big\": 123456789012345678901234567890,"),
            "{out}"
        );
        let parsed: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["list"], json!([3, {"a": 1}]));

        let mut edits = Edits::default();
        edits.remove(list, &[0, 1, 2]);
        edits.push(text, list, &[0, 1, 2], &json!("x"));
        let parsed: Value = serde_json::from_str(&edits.apply(text)).unwrap();
        assert_eq!(parsed["list"], json!(["x"]));

        let mut edits = Edits::default();
        edits.remove(list, &[1]);
        edits.add_members(
            text,
            &root,
            &[("new", json!({"k": [true]})), ("n2", json!(2))],
        );
        let out = edits.apply(text);
        assert!(out.contains("[1, 3]"), "{out}");
        let parsed: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["new"], json!({"k": [true]}));
        assert_eq!(parsed["n2"], json!(2));

        let empty = "{\n  \"hooks\": {}\n}";
        let root = parse(empty).unwrap();
        let mut edits = Edits::default();
        let hooks = root.member("hooks").unwrap();
        edits.add_members(empty, hooks, &[("a", json!([1])), ("b", json!([2]))]);
        let parsed: Value = serde_json::from_str(&edits.apply(empty)).unwrap();
        assert_eq!(parsed, json!({"hooks": {"a": [1], "b": [2]}}));
    }

    #[test]
    fn strings_with_brackets_and_escapes_do_not_confuse_the_scanner() {
        let text = r#"{"a\"]": "}{,", "b": [ "]", {"c": "\\"} ] }"#;
        let root = parse(text).unwrap();
        let b = root.member("b").unwrap();
        assert_eq!(b.elements().unwrap().len(), 2);
        assert_eq!(&text[b.span.clone()], r#"[ "]", {"c": "\\"} ]"#);
        assert!(root.member("a\"]").is_some());
    }
}
