//! Finds the top-level `"id"` of a message that may be broken, huge or not UTF-8, so that a
//! line we refuse still gets an answer the client can match. Fed in pieces, it never holds
//! more than the id itself.

/// The longest id text kept; a longer one cannot be echoed and is answered with `null`.
const MAX_ID: usize = 1024;

/// Where the scanner is in the top-level object.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    /// Before the opening `{` (whitespace and a byte order mark are skipped).
    Start,
    Key,
    InKey,
    Colon,
    Value,
    /// Inside a string value at depth one.
    InString,
    /// Inside a number or literal at depth one.
    InScalar,
    /// Inside a nested object or array.
    Nested,
    Comma,
    /// The scan stopped: the id was found, the object ended, or the bytes stopped being JSON.
    Done,
}

/// A streaming scanner for the top-level `"id"` member of a JSON object.
pub(crate) struct IdScan {
    at: At,
    /// Nesting below the top level while `at` is `Nested`.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The current top-level key, while it is short enough to be `id`.
    key: Vec<u8>,
    key_is_id: bool,
    /// The raw id value being collected.
    id: Vec<u8>,
    found: Option<Vec<u8>>,
}

impl IdScan {
    pub(crate) fn new() -> Self {
        IdScan {
            at: At::Start,
            depth: 0,
            in_string: false,
            escaped: false,
            key: Vec::new(),
            key_is_id: false,
            id: Vec::new(),
            found: None,
        }
    }

    /// Scans the next piece of the line.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.at == At::Done {
                return;
            }
            self.step(b);
        }
    }

    /// The id as JSON text to echo (`null` when none could be recovered).
    pub(crate) fn finish(mut self) -> String {
        if self.at == At::InScalar && self.key_is_id {
            // The line ended right after a bare number or literal.
            self.found = Some(std::mem::take(&mut self.id));
        }
        self.found
            .as_deref()
            .and_then(echoable)
            .unwrap_or_else(|| "null".to_string())
    }

    fn step(&mut self, b: u8) {
        match self.at {
            At::Start => match b {
                b'{' => self.at = At::Key,
                0xEF | 0xBB | 0xBF => {}
                _ if b.is_ascii_whitespace() => {}
                _ => self.at = At::Done,
            },
            At::Key => match b {
                b'"' => {
                    self.key.clear();
                    self.escaped = false;
                    self.at = At::InKey;
                }
                _ if b.is_ascii_whitespace() => {}
                _ => self.at = At::Done,
            },
            At::InKey => {
                if self.escaped {
                    self.escaped = false;
                    self.push_key(b);
                } else if b == b'\\' {
                    self.escaped = true;
                    self.push_key(b);
                } else if b == b'"' {
                    self.key_is_id = self.key == b"id";
                    self.at = At::Colon;
                } else {
                    self.push_key(b);
                }
            }
            At::Colon => match b {
                b':' => self.at = At::Value,
                _ if b.is_ascii_whitespace() => {}
                _ => self.at = At::Done,
            },
            At::Value => match b {
                _ if b.is_ascii_whitespace() => {}
                b'"' => {
                    self.escaped = false;
                    self.start_value(b);
                    self.at = At::InString;
                }
                b'{' | b'[' => {
                    if self.key_is_id {
                        // An object or array is no id; answer with null.
                        self.at = At::Done;
                    } else {
                        self.depth = 1;
                        self.in_string = false;
                        self.at = At::Nested;
                    }
                }
                _ => {
                    self.start_value(b);
                    self.at = At::InScalar;
                }
            },
            At::InString => {
                self.push_value(b);
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.end_value();
                }
            }
            At::InScalar => {
                if b == b',' || b == b'}' || b == b']' || b.is_ascii_whitespace() {
                    self.end_value();
                    if self.at != At::Done {
                        self.step(b);
                    }
                } else {
                    self.push_value(b);
                }
            }
            At::Nested => self.nested(b),
            At::Comma => match b {
                b',' => self.at = At::Key,
                _ if b.is_ascii_whitespace() => {}
                _ => self.at = At::Done,
            },
            At::Done => {}
        }
    }

    fn nested(&mut self, b: u8) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            return;
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => {
                self.depth -= 1;
                if self.depth == 0 {
                    self.at = At::Comma;
                }
            }
            _ => {}
        }
    }

    fn push_key(&mut self, b: u8) {
        // Only `id` matters; a longer key is kept just long enough to know it is not `id`.
        if self.key.len() < 3 {
            self.key.push(b);
        }
    }

    fn start_value(&mut self, b: u8) {
        self.id.clear();
        self.push_value(b);
    }

    fn push_value(&mut self, b: u8) {
        if self.key_is_id && self.id.len() <= MAX_ID {
            self.id.push(b);
        }
    }

    fn end_value(&mut self) {
        if self.key_is_id {
            // The first id wins; the scan has what it came for.
            self.found = Some(std::mem::take(&mut self.id));
            self.at = At::Done;
        } else {
            self.at = At::Comma;
        }
    }
}

/// The id as JSON text fit to echo: a valid string (re-encoded), a number as written, or
/// `null`; anything else (too long, not JSON, `true`) cannot name a request.
fn echoable(raw: &[u8]) -> Option<String> {
    if raw.len() > MAX_ID {
        return None;
    }
    match raw.first()? {
        b'"' => {
            let s: String = serde_json::from_slice(raw).ok()?;
            serde_json::to_string(&s).ok()
        }
        b'n' if raw == b"null" => Some("null".to_string()),
        _ if is_json_number(raw) => String::from_utf8(raw.to_vec()).ok(),
        _ => None,
    }
}

/// Whether `raw` is a number as JSON writes it: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn is_json_number(raw: &[u8]) -> bool {
    fn digits(s: &[u8]) -> usize {
        s.iter().take_while(|b| b.is_ascii_digit()).count()
    }
    let mut s = raw.strip_prefix(b"-").unwrap_or(raw);
    match s.first() {
        Some(b'0') => s = &s[1..],
        Some(b'1'..=b'9') => s = &s[digits(s)..],
        _ => return false,
    }
    if let Some(rest) = s.strip_prefix(b".") {
        let n = digits(rest);
        if n == 0 {
            return false;
        }
        s = &rest[n..];
    }
    if let Some(rest) = s.strip_prefix(b"e").or_else(|| s.strip_prefix(b"E")) {
        let rest = rest
            .strip_prefix(b"+")
            .or_else(|| rest.strip_prefix(b"-"))
            .unwrap_or(rest);
        let n = digits(rest);
        if n == 0 {
            return false;
        }
        s = &rest[n..];
    }
    s.is_empty()
}

/// The id of a whole line, as JSON text (`null` when none can be recovered).
pub(crate) fn id_of(line: &[u8]) -> String {
    let mut scan = IdScan::new();
    scan.feed(line);
    scan.finish()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn finds_the_top_level_id_wherever_it_stands() {
        assert_eq!(id_of(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#), "7");
        assert_eq!(
            id_of(br#"{"method":"x","params":{"id":1,"a":[{"id":2}]},"id":"top"}"#),
            "\"top\""
        );
        assert_eq!(
            id_of(br#" {"params":{"s":"\"id\":5"} , "id" : -12.5e3 }"#),
            "-12.5e3"
        );
        assert_eq!(id_of(b"\xEF\xBB\xBF{\"id\":null}"), "null");
    }

    #[test]
    fn recovers_the_id_of_a_broken_or_cut_line() {
        assert_eq!(
            id_of(br#"{"jsonrpc":"2.0","id":41,"params":{"cursor":}"#),
            "41"
        );
        assert_eq!(
            id_of(br#"{"id":"cut","method":"tools/call","params":{"na"#),
            "\"cut\""
        );
        assert_eq!(id_of(b"{\"params\":{\"x\":\"\xff\"},\"id\":3,,}"), "3");
        assert_eq!(id_of(br#"{"id":9"#), "9");
    }

    #[test]
    fn answers_null_when_no_id_can_be_trusted() {
        for line in [
            &b"[1,2]"[..],
            b"garbage",
            br#"{"id":{"x":1}}"#,
            br#"{"id":true}"#,
            br#"{"id":01}"#,
            br#"{"id":"\ud800"}"#,
            b"{\"id\":\"\xff\"}",
            br#"{"method":"ping"}"#,
            br#"{"a" "id":1}"#,
        ] {
            assert_eq!(id_of(line), "null", "{}", String::from_utf8_lossy(line));
        }
        let long = format!(r#"{{"id":"{}"}}"#, "x".repeat(MAX_ID + 1));
        assert_eq!(id_of(long.as_bytes()), "null");
    }

    #[test]
    fn a_huge_number_id_is_echoed_as_written() {
        let digits = format!("1{}", "0".repeat(399));
        assert_eq!(
            id_of(format!(r#"{{"id":{digits},"x":1}}"#).as_bytes()),
            digits
        );
    }

    #[test]
    fn pieces_scan_like_the_whole() {
        let line = br#"{"a":{"b":"}{\"id\":1"},"id":"split here"}"#;
        for cut in 0..line.len() {
            let mut scan = IdScan::new();
            scan.feed(&line[..cut]);
            scan.feed(&line[cut..]);
            assert_eq!(scan.finish(), "\"split here\"", "cut at {cut}");
        }
    }

    #[test]
    fn deep_nesting_costs_no_stack() {
        let mut line = b"{\"x\":".to_vec();
        line.extend(std::iter::repeat_n(b'[', 1_000_000));
        line.extend(std::iter::repeat_n(b']', 1_000_000));
        line.extend(b",\"id\":5}");
        assert_eq!(id_of(&line), "5");
    }
}
