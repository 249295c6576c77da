//! `lsp` against the real rust-analyzer on a small two-file crate. One server serves every
//! case (one test, one run), as starting it is the slow part on 2 cores.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::lsp;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use tether::{Run, Surface};
use tokio_util::sync::CancellationToken;

const MANIFEST: &str = "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

const LIB: &str = "pub mod shapes;\n\nuse shapes::{Area, Square};\n\n/// Sums the areas.\npub fn total(items: &[Square]) -> u32 {\n    let label = \"😀 漢字\"; let side = items.len() as u32;\n    let _ = (label, side);\n    items.iter().map(|s| s.area()).sum()\n}\n";

const SHAPES: &str = "/// Anything with an area.\npub trait Area {\n    /// The area in square units.\n    fn area(&self) -> u32;\n}\n\n/// A square.\npub struct Square {\n    pub side: u32,\n}\n\nimpl Area for Square {\n    fn area(&self) -> u32 {\n        self.side * self.side\n    }\n}\n\npub fn unit() -> Square {\n    Square { side: 1 }\n}\n";

fn fixture(dir: &Path) -> Run {
    let ws = dir.join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("Cargo.toml"), MANIFEST).unwrap();
    std::fs::write(ws.join("src/lib.rs"), LIB).unwrap();
    std::fs::write(ws.join("src/shapes.rs"), SHAPES).unwrap();
    common::run_with_config(dir, common::LSP_BUDGETS)
}

#[test]
fn rust_analyzer_answers_navigation_queries() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = fixture(dir.path());
        let before = lsp(&run, json!({"action": "status"})).await.unwrap();
        assert!(before.contains("no language server runs yet"), "{before}");

        let def = lsp(&run, json!({"action": "definition", "file": "src/lib.rs", "line": 9, "symbol": "area"}))
            .await
            .unwrap();
        assert!(def.contains("src/shapes.rs:13  area  | fn area(&self) -> u32 {"), "{def}");

        let refs = lsp(&run, json!({"action": "references", "file": "src/shapes.rs", "line": 8, "symbol": "Square"}))
            .await
            .unwrap();
        for at in ["src/shapes.rs:8  Square", "src/shapes.rs:12  Square", "src/lib.rs:3  Square", "src/lib.rs:6  Square"] {
            assert!(refs.contains(at), "{at} missing:\n{refs}");
        }

        let hover = lsp(&run, json!({"action": "hover", "file": "src/lib.rs", "line": 6, "symbol": "total"}))
            .await
            .unwrap();
        assert!(hover.contains("pub fn total(items: &[Square]) -> u32") && hover.contains("Sums the areas."), "{hover}");

        // After an emoji and CJK text on the same line, the symbol is still found exactly.
        let side = lsp(&run, json!({"action": "definition", "file": "src/lib.rs", "line": 8, "symbol": "side"}))
            .await
            .unwrap();
        assert!(side.contains("src/lib.rs:7  side  | let label"), "{side}");

        let imp = lsp(&run, json!({"action": "implementation", "file": "src/shapes.rs", "line": 2, "symbol": "Area"}))
            .await
            .unwrap();
        assert!(imp.contains("src/shapes.rs:12"), "{imp}");
        let ty = lsp(&run, json!({"action": "type_definition", "file": "src/shapes.rs", "line": 19, "symbol": "Square {"}))
            .await
            .unwrap();
        assert!(ty.contains("src/shapes.rs:8  Square"), "{ty}");

        let outline = lsp(&run, json!({"action": "symbols", "file": "src/shapes.rs"})).await.unwrap();
        assert!(outline.contains("2  interface Area") && outline.contains("  4  method area"), "{outline}");
        let query = lsp(&run, json!({"action": "symbols", "query": "unit", "file": "src/lib.rs"})).await.unwrap();
        assert!(query.contains("src/shapes.rs:18  unit"), "{query}");

        // The mistakes models make get answers they can act on.
        let err = lsp(&run, json!({"action": "definition", "file": "src/lib.rs", "line": 9, "symbol": "aera"}))
            .await
            .unwrap_err();
        assert!(err.contains("`aera` does not occur on line 9"), "{err}");
        assert!(err.ends_with("`aera` occurs nowhere in src/lib.rs"), "{err}");
        // A line number a little off gets the lines that have the name.
        let err = lsp(&run, json!({"action": "hover", "file": "src/lib.rs", "line": 8, "symbol": "area"}))
            .await
            .unwrap_err();
        assert!(err.ends_with("`area` is on lines 5, 9 of src/lib.rs"), "{err}");
        let err = lsp(&run, json!({"action": "hover", "file": "src/lib.rs", "line": 9}))
            .await
            .unwrap_err();
        assert!(err.contains("needs `symbol`"), "{err}");

        let actions = lsp(&run, json!({"action": "code_actions", "file": "src/shapes.rs", "line": 18, "symbol": "unit"}))
            .await
            .unwrap();
        assert!(actions.starts_with("code actions for `unit` at line 18 ("), "{actions}");
        assert!(actions.contains("\n1. "), "{actions}");

        // A file changed behind the run's back reaches the server before the next answer.
        let ws = dir.path().join("ws");
        let broken = format!("{SHAPES}\npub fn broken() -> u32 {{\n    let x = ;\n    x\n}}\n");
        std::fs::write(ws.join("src/shapes.rs"), &broken).unwrap();
        let diags = lsp(&run, json!({"action": "diagnostics", "file": "src/shapes.rs"}))
            .await
            .unwrap();
        let bad_line = SHAPES.lines().count() + 3;
        assert!(diags.contains(&format!("src/shapes.rs:{bad_line}  error")), "{diags}");
        std::fs::write(ws.join("src/shapes.rs"), SHAPES).unwrap();
        let clean = lsp(&run, json!({"action": "diagnostics", "file": "src/shapes.rs"}))
            .await
            .unwrap();
        assert_eq!(clean, "src/shapes.rs: no errors or warnings");

        // A rename across both files, all or nothing, then the server sees the new text.
        let renamed = run
            .runtime()
            .call(
                Surface::Agent,
                "lsp_rename",
                json!({"file": "src/shapes.rs", "line": 8, "symbol": "Square", "new_name": "Quad"}),
                CancellationToken::new(),
            )
            .await
            .unwrap()
            .to_text();
        // Two files, with or without a word that rust-analyzer was still indexing.
        assert!(renamed.starts_with("renamed `Square` to `Quad` in 2 files"), "{renamed}");
        assert!(renamed.contains("src/lib.rs: 2 edits") && renamed.contains("src/shapes.rs: 4 edits"), "{renamed}");
        let lib = std::fs::read_to_string(ws.join("src/lib.rs")).unwrap();
        assert_eq!(lib, LIB.replace("Square", "Quad"));
        let refs = lsp(&run, json!({"action": "references", "file": "src/lib.rs", "line": 3, "symbol": "Quad"}))
            .await
            .unwrap();
        assert!(refs.contains("src/shapes.rs:8  Quad"), "{refs}");

        // An open file changed outside the run (git, a formatter) is caught before the next
        // request even when the request names another file.
        let more = format!("{}pub fn more() -> u32 {{\n    shapes::unit().side\n}}\n", LIB.replace("Square", "Quad"));
        std::fs::write(ws.join("src/lib.rs"), more).unwrap();
        let refs = lsp(&run, json!({"action": "references", "file": "src/shapes.rs", "line": 18, "symbol": "unit"}))
            .await
            .unwrap();
        let line = LIB.lines().count() + 2;
        assert!(refs.contains(&format!("src/lib.rs:{line}  unit")), "{refs}");

        let status = lsp(&run, json!({"action": "status"})).await.unwrap();
        assert!(status.contains("rust-analyzer for . ") && status.contains("positions in utf-8"), "{status}");
        assert!(status.contains("restricted: build scripts"), "{status}");
        assert!(status.contains("offers hover, definition") && status.contains("diagnostics pulled per file"), "{status}");

        // The run ends its server.
        let pid = server_pid();
        run.shutdown(Duration::from_secs(5)).await;
        if let Some(pid) = pid {
            assert!(tether_proc::gone_within(pid, Duration::from_secs(10)), "rust-analyzer outlived the run");
        }
    });
}

/// The pid of this process's rust-analyzer child, from /proc.
fn server_pid() -> Option<u32> {
    tether_proc::children_named(std::process::id(), "rust-analyzer")
        .first()
        .copied()
}
