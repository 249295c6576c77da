//! Diagnostics on write with the real gopls: its publication for the written version is final,
//! and a file of the same package that the write broke is in the write's own result, as is its
//! fix.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::call_text as call;

use std::time::Duration;

use serde_json::json;

const GOOD: &str = "package main\n\nfunc g() int {\n\treturn 1\n}\n";
const BAD: &str = "package main\n\nfunc g() string {\n\treturn \"one\"\n}\n";
const MAIN: &str = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(g() + 1)\n}\n";

#[test]
fn a_write_that_breaks_a_file_of_its_package_says_so_and_its_fix_too() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        for (name, text) in [
            ("go.mod", "module bench\n\ngo 1.19\n"),
            ("m.go", GOOD),
            ("main.go", MAIN),
        ] {
            common::write(&ws, name, text);
        }
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
        let first = call(
            &run,
            "lsp",
            json!({"action": "diagnostics", "file": "m.go"}),
        )
        .await;
        assert!(first.contains("no errors"), "{first}");
        // gopls speaks of a clean file only once it is open: asked about, main.go has a
        // known state before the write (else its problem is rightly "not known before").
        let args = json!({"action": "diagnostics", "file": "main.go"});
        let other = call(&run, "lsp", args).await;
        assert!(other.contains("no errors"), "{other}");

        let broke = call(&run, "write", json!({"path": "m.go", "content": BAD})).await;
        assert!(broke.contains("m.go: clean"), "{broke}");
        assert!(
            broke.contains("main.go (another file, not written): 1 new problem"),
            "{broke}"
        );
        assert!(!broke.contains("pending"), "{broke}");

        let fixed = call(&run, "write", json!({"path": "m.go", "content": GOOD})).await;
        assert!(
            fixed.contains("main.go (another file, not written): fixed 1 problem"),
            "{fixed}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}
