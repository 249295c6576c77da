//! Diagnostics of a change before it is written, with the real servers: `edit` with
//! `dry_run` stages the change and says what it would bring, in the file and in a file that
//! imports it, with the disk untouched and the server answering for the disk's text again
//! afterwards; `resolve accept` writes it and reports the same problems as this write's, and
//! an accept onto a file changed since the preview says its verdict is stale.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::call_text as call;

use serde_json::json;

const A_PY: &str = "def scale(x: int) -> int:\n    return x * 2\n";
const B_PY: &str = "from a import scale\n\nprint(scale(3))\n";

#[test]
fn a_pyright_preview_names_what_the_change_would_break_and_leaves_the_server_on_the_disk() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        common::write(
            &ws,
            "pyproject.toml",
            "[project]\nname = \"w\"\nversion = \"0.1\"\n",
        );
        common::write(&ws, "a.py", A_PY);
        common::write(&ws, "b.py", B_PY);
        let waits = "[lsp.diagnostics]\nwait_ms = 30000\nbaseline_ms = 30000\n";
        let run = common::run_with_config(dir.path(), &format!("{}{waits}", common::LSP_BUDGETS));
        let clean = call(&run, "lsp", json!({"action": "diagnostics", "file": "b.py"})).await;
        assert!(clean.contains("no errors or warnings"), "{clean}");

        let edit = json!({
            "path": "a.py",
            "old_string": "def scale(x: int) -> int:",
            "new_string": "def scale(x: str) -> int:",
            "dry_run": true,
        });
        let preview = call(&run, "edit", edit).await;
        assert!(
            preview.starts_with("(proposed, dry run) 1 replacement in a.py")
                && preview.contains("edit_id \"edit_1\""),
            "{preview}"
        );
        assert!(
            preview.contains("+def scale(x: str) -> int:"),
            "{preview}"
        );
        assert!(
            preview.contains("would bring: 2 new problems in 2 files"),
            "{preview}"
        );
        assert!(preview.contains("b.py (another file, not written)"), "{preview}");
        assert_eq!(std::fs::read_to_string(ws.join("a.py")).unwrap(), A_PY);

        // The server holds the disk's text again: neither file has a problem.
        for file in ["a.py", "b.py"] {
            let now = call(&run, "lsp", json!({"action": "diagnostics", "file": file})).await;
            assert!(now.contains("no errors or warnings"), "{file} after the preview: {now}");
        }

        // Accepted, the write reports the same problems as its own.
        let accepted = call(
            &run,
            "resolve",
            json!({"edit_id": "edit_1", "action": "accept"}),
        )
        .await;
        assert!(accepted.starts_with("accepted edit_1"), "{accepted}");
        assert!(accepted.contains("1 new problem"), "{accepted}");
        assert!(!accepted.contains("stale"), "{accepted}");
        let b = call(&run, "lsp", json!({"action": "diagnostics", "file": "b.py"})).await;
        assert!(b.contains("1 problem") || b.contains("error"), "{b}");

        // A preview made stale by a change to its file before the accept says so.
        let fix = json!({
            "path": "a.py",
            "old_string": "def scale(x: str) -> int:",
            "new_string": "def scale(x: int) -> int:",
            "dry_run": true,
        });
        let second = call(&run, "edit", fix).await;
        assert!(second.contains("would bring: no new problems, and fix"), "{second}");
        let noted = json!({"path": "a.py", "old_string": "    return x * 2\n", "new_string": "    return x * 2\n# noted\n"});
        let noted = call(&run, "edit", noted).await;
        assert!(noted.starts_with("edited a.py"), "{noted}");
        let accepted = call(
            &run,
            "resolve",
            json!({"edit_id": "edit_2", "action": "accept"}),
        )
        .await;
        assert!(
            accepted.contains("its preview's verdict (\"would bring: no new problems"),
            "{accepted}"
        );
        assert!(accepted.contains("is stale"), "{accepted}");
        run.shutdown(std::time::Duration::from_secs(10)).await;
    });
}
