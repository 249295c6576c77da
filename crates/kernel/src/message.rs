//! The messages on a kernel's channel, as the kernel scripts (`kernel.py`, `kernel.js`) write
//! and read them: one type per `type`, so a field the scripts and tether disagree on fails in
//! one place instead of reading as a default.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a kernel sends. Every message of a cell carries that cell's token in `cell`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromKernel {
    /// The kernel has started and waits for cells.
    Ready {
        #[serde(default)]
        interpreter: Option<String>,
    },
    /// A cell began: what its kernel shows from now on is its own.
    Begin {
        #[serde(default)]
        cell: Option<String>,
        /// Its place among the cell's displays.
        #[serde(default)]
        n: Option<u64>,
    },
    /// Something the cell displayed.
    Display {
        #[serde(default)]
        cell: Option<String>,
        #[serde(flatten)]
        shown: Displayed,
    },
    /// A tool call the cell asks the run to make.
    Tool {
        #[serde(default)]
        cell: Option<String>,
        /// What the answer must carry back.
        #[serde(default)]
        id: Value,
        #[serde(default)]
        name: String,
        #[serde(default)]
        args: Value,
    },
    /// The cell ended, with its error (a traceback's last line) and its summary, if any.
    Done {
        #[serde(default)]
        cell: Option<String>,
        #[serde(default)]
        error: Option<String>,
        #[serde(default)]
        summary: Option<String>,
    },
    /// A message of a type tether does not know.
    #[serde(other)]
    Unknown,
}

impl FromKernel {
    /// The token of the cell the message is about, if it names one.
    pub fn cell(&self) -> Option<&str> {
        match self {
            FromKernel::Begin { cell, .. }
            | FromKernel::Display { cell, .. }
            | FromKernel::Tool { cell, .. }
            | FromKernel::Done { cell, .. } => cell.as_deref(),
            FromKernel::Ready { .. } | FromKernel::Unknown => None,
        }
    }

    /// Its `type`, as the log and a cell's notes name it.
    pub fn kind(&self) -> &'static str {
        match self {
            FromKernel::Ready { .. } => "ready",
            FromKernel::Begin { .. } => "begin",
            FromKernel::Display { .. } => "display",
            FromKernel::Tool { .. } => "tool",
            FromKernel::Done { .. } => "done",
            FromKernel::Unknown => "unknown",
        }
    }
}

/// One display: its kind, its data (text, or an image in base64), and whether it is the
/// cell's echo (the value of its last expression).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Displayed {
    /// Its place among the cell's displays.
    pub n: Option<u64>,
    pub mime: Option<String>,
    pub data: String,
    pub echo: bool,
}

/// What tether sends a kernel.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToKernel<'a> {
    /// Runs `code` as the cell `cell` names.
    Run { code: &'a str, cell: &'a str },
    /// The answer to a bridged tool call `id`: its text and images, or why it failed.
    ToolResult {
        id: Value,
        ok: bool,
        text: String,
        images: Vec<String>,
    },
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn read(message: Value) -> FromKernel {
        serde_json::from_value(message).unwrap()
    }

    #[test]
    fn each_type_reads_as_its_own_message_and_an_unknown_one_is_said_so() {
        let shown = read(
            json!({"type": "display", "cell": "t1", "n": 2, "mime": "text/plain",
                                "data": "hi", "echo": true}),
        );
        let FromKernel::Display { cell, shown } = shown else {
            panic!("not a display");
        };
        assert_eq!(cell.as_deref(), Some("t1"));
        assert_eq!(
            (shown.n, shown.data.as_str(), shown.echo),
            (Some(2), "hi", true)
        );
        let tool = read(
            json!({"type": "tool", "cell": "t1", "id": 3, "name": "read",
                               "args": {"path": "a"}}),
        );
        assert_eq!((tool.kind(), tool.cell()), ("tool", Some("t1")));
        let done = read(json!({"type": "done", "cell": "t2", "error": null, "summary": "ok"}));
        assert!(matches!(done, FromKernel::Done { summary: Some(s), .. } if s == "ok"));
        assert!(matches!(
            read(json!({"type": "later"})),
            FromKernel::Unknown
        ));
        assert!(serde_json::from_value::<FromKernel>(json!({"cell": "t1"})).is_err());
        let answer = ToKernel::ToolResult {
            id: json!(3),
            ok: false,
            text: "no".into(),
            images: Vec::new(),
        };
        assert_eq!(
            serde_json::to_value(&answer).unwrap(),
            json!({"type": "tool_result", "id": 3, "ok": false, "text": "no", "images": []})
        );
    }
}
