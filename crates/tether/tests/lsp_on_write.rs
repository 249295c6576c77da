//! Diagnostics on write with the real pyright: a write reports exactly what it broke, keyed
//! without positions (a moved error is not new), a second identical error is, a fix says so
//! and a relapse is reported again; what a file had before the run's first write is never
//! blamed on it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use serde_json::json;
use tether::{Run, Surface};
use tokio_util::sync::CancellationToken;

async fn call(run: &Run, tool: &str, args: serde_json::Value) -> String {
    run.runtime()
        .call(Surface::Agent, tool, args, CancellationToken::new())
        .await
        .map(|o| o.to_text())
        .unwrap_or_else(|e| format!("ERROR {e}"))
}

/// The diagnostics block of a result, if any.
fn block(out: &str) -> &str {
    out.find("diagnostics (pyright) after this write:")
        .map_or("", |i| &out[i..])
}

#[test]
fn pyright_reports_what_each_write_broke_and_nothing_else() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|d| d.join("pyright-langserver").is_file()),
        "pyright-langserver is not on PATH: run scripts/test, which installs it"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("pyproject.toml"), "[project]\nname = \"w\"\nversion = \"0.1\"\n").unwrap();
        // Broken before the run: never blamed on a write.
        std::fs::write(ws.join("old.py"), "count: int = \"zero\"\n\n\ndef f() -> int:\n    return 1\n").unwrap();
        std::fs::write(ws.join("m.py"), "def g() -> int:\n    return 1\n").unwrap();
        let waits = "[lsp.diagnostics]\nwait_ms = 30000\nbaseline_ms = 30000\n";
        let run = common::run_with_config(dir.path(), &format!("{}{waits}", common::LSP_BUDGETS));
        // The server is up before the first write, as `tether serve`'s warm-up makes it.
        call(&run, "lsp", json!({"action": "diagnostics", "file": "m.py"})).await;

        let one = call(&run, "edit", json!({"path": "m.py", "old_string": "    return 1", "new_string": "    return \"one\""})).await;
        let b = block(&one);
        assert!(b.contains("m.py: 1 new problem"), "{one}");
        assert!(b.contains("line 2 (new): error") && b.contains("\"int\""), "{one}");

        // The same error moved four lines down is not new.
        let moved = call(&run, "edit", json!({"path": "m.py", "old_string": "def g() -> int:", "new_string": "\n\n\n\ndef g() -> int:"})).await;
        let b = block(&moved);
        assert!(b.contains("m.py: still 1 problem (there before this write)") && !b.contains("(new)"), "{moved}");

        // A second identical error elsewhere is new.
        let twice = call(&run, "write", json!({"path": "m.py", "content": "\n\n\n\ndef g() -> int:\n    return \"one\"\n\n\ndef h() -> int:\n    return \"one\"\n"})).await;
        let b = block(&twice);
        assert!(b.contains("m.py: 1 new problem; still 1 more"), "{twice}");
        assert!(b.contains("line 10 (new): error"), "{twice}");

        // Fixed, then brought back: reported again.
        let fixed = call(&run, "write", json!({"path": "m.py", "content": "def g() -> int:\n    return 1\n"})).await;
        assert!(block(&fixed).contains("m.py: fixed 2 problems; none left"), "{fixed}");
        let clean = call(&run, "edit", json!({"path": "m.py", "old_string": "return 1", "new_string": "return 2"})).await;
        assert!(block(&clean).contains("m.py: clean"), "{clean}");
        let back = call(&run, "edit", json!({"path": "m.py", "old_string": "return 2", "new_string": "return \"two\""})).await;
        assert!(block(&back).contains("m.py: 1 new problem"), "{back}");

        // A file broken before the run: an unrelated edit blames nothing on the write.
        let old = call(&run, "edit", json!({"path": "old.py", "old_string": "return 1", "new_string": "return 2"})).await;
        let b = block(&old);
        assert!(b.contains("old.py: still 1 problem (there before this write)") && !b.contains("(new)"), "{old}");

        // apply_patch across two files reports both files' new problems.
        std::fs::write(ws.join("a.py"), "def a() -> int:\n    return 1\n").unwrap();
        std::fs::write(ws.join("b.py"), "def b() -> int:\n    return 1\n").unwrap();
        let patch = "*** Begin Patch\n*** Update File: a.py\n@@\n def a() -> int:\n-    return 1\n+    return \"a\"\n*** Update File: b.py\n@@\n def b() -> int:\n-    return 1\n+    return \"b\"\n*** End Patch";
        let patched = call(&run, "apply_patch", json!({"patch": patch})).await;
        let b = block(&patched);
        assert!(b.contains("a.py: 1 new problem") && b.contains("b.py: 1 new problem"), "{patched}");

        // Accepting a structural edit reports what it broke.
        std::fs::write(ws.join("c.py"), "def c() -> int:\n    return len(\"x\")\n").unwrap();
        let staged = call(&run, "ast_edit", json!({"pattern": "len($X)", "rewrite": "str($X)", "path": "c.py"})).await;
        assert!(staged.contains("edit_1"), "{staged}");
        let accepted = call(&run, "resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
        assert!(block(&accepted).contains("c.py: 1 new problem"), "{accepted}");

        // Before the agent says it is done: what its writes broke and left open.
        let status = call(&run, "lsp", json!({"action": "status"})).await;
        assert!(
            status.contains("still open, introduced by this run's writes:")
                && status.contains("\n  m.py:2  error")
                && status.contains("\n  c.py:2  error"),
            "{status}"
        );
        assert!(!status.contains("old.py:1"), "a problem from before the run was blamed: {status}");

        run.shutdown(Duration::from_secs(5)).await;
    });
}
