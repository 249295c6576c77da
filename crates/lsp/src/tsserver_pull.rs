//! Diagnostics pulled through a server that forwards tsserver requests
//! (`workspace/executeCommand` `typescript.tsserverRequest`): tsserver computes a file's
//! syntactic and semantic diagnostics on request, from the texts it holds now, so the answer is
//! final the moment it comes. typescript-language-server offers no LSP pull and publishes
//! 300 to 800 ms after a change, and nothing at all for a file that stays clean.

use std::path::Path;

use serde_json::{Value, json};

use crate::protocol::{self, Diagnostic};

/// The command that forwards a request to tsserver.
const COMMAND: &str = "typescript.tsserverRequest";
/// tsserver's requests for a file's diagnostics, computed when asked.
const REQUESTS: [&str; 2] = ["syntacticDiagnosticsSync", "semanticDiagnosticsSync"];

/// The `workspace/executeCommand` params that ask tsserver `request` about `path`.
pub(crate) fn params(request: &str, path: &Path) -> lsp_types::ExecuteCommandParams {
    lsp_types::ExecuteCommandParams {
        command: COMMAND.to_string(),
        arguments: vec![
            json!(request),
            json!({"file": path.to_string_lossy(), "includeLinePosition": false}),
        ],
        work_done_progress_params: Default::default(),
    }
}

/// The tsserver requests one pull is made of.
pub(crate) fn requests() -> [&'static str; 2] {
    REQUESTS
}

/// The diagnostics in tsserver's answer to one request, as LSP diagnostics; `None` when the
/// answer is not one (an older server without the command answers with an error instead).
pub(crate) fn read(answer: &Value) -> Option<Vec<Diagnostic>> {
    let body = answer.get("body").unwrap_or(answer).as_array()?;
    Some(body.iter().filter_map(one).collect())
}

/// One tsserver diagnostic (1-based line and offset) as an LSP one (0-based).
fn one(d: &Value) -> Option<Diagnostic> {
    let at = |key: &str| {
        let p = d.get(key)?;
        let line = p.get("line")?.as_u64()?.saturating_sub(1);
        let character = p.get("offset")?.as_u64()?.saturating_sub(1);
        Some(json!({"line": line, "character": character}))
    };
    let severity = match d.get("category").and_then(Value::as_str) {
        Some("warning") => 2,
        Some("message") => 3,
        Some("suggestion") => 4,
        _ => 1,
    };
    let mut lsp = json!({
        "range": {"start": at("start")?, "end": at("end")?},
        "severity": severity,
        "source": "typescript",
        "message": d.get("text")?.as_str()?,
    });
    if let Some(code) = d.get("code").filter(|c| c.is_number()) {
        lsp["code"] = code.clone();
    }
    Some(protocol::read(lsp))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_tsserver_answer_reads_as_lsp_diagnostics() {
        let answer = json!({"type": "response", "success": true, "body": [
            {"start": {"line": 3, "offset": 7}, "end": {"line": 3, "offset": 8},
             "text": "Type 'string' is not assignable to type 'number'.", "code": 2322,
             "category": "error"},
            {"start": {"line": 1, "offset": 1}, "end": {"line": 1, "offset": 5},
             "text": "unused", "code": 6133, "category": "suggestion"},
        ]});
        let found = read(&answer).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].range.start.line, 2);
        assert_eq!(found[0].range.start.character, 6);
        assert_eq!(found[0].level(), 1);
        assert_eq!(found[0].code_tag(), " [2322]");
        assert_eq!(found[1].level(), 4);
        assert!(read(&json!({"code": -32601})).is_none());
    }
}
