//! Restricted mode: in an untrusted workspace, rust-analyzer runs none of the repository's
//! code (a `build.rs` that leaves a marker never runs) and `status` says why; once the user
//! trusts the workspace, the build script runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use tether::{Run, Surface, TrustStore};
use tokio_util::sync::CancellationToken;

const MANIFEST: &str = "[package]\nname = \"marked\"\nversion = \"0.1.0\"\nedition = \"2021\"\nbuild = \"build.rs\"\n[features]\nextra = []\n";
const BUILD: &str = "fn main() {\n    let dir = std::env::var(\"CARGO_MANIFEST_DIR\").unwrap();\n    std::fs::write(format!(\"{dir}/build-script-ran\"), \"yes\").unwrap();\n}\n";
const LIB: &str = "pub fn answer() -> u32 {\n    42\n}\n";

/// The run, with budgets for a cold rust-analyzer and a cargo check on 2 cores.
fn run_over(dir: &Path) -> Run {
    let waits = "[lsp.diagnostics]\nwait_ms = 60000\nbaseline_ms = 30000\n";
    common::run_with_config(dir, &format!("{}{waits}", common::LSP_BUDGETS))
}

async fn lsp(run: &Run, args: serde_json::Value) -> String {
    common::lsp(run, args).await.unwrap_or_else(|e| e)
}

fn marker_within(ws: &Path, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if ws.join("build-script-ran").exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

#[test]
fn an_untrusted_workspace_runs_no_build_script_until_trusted() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join("Cargo.toml"), MANIFEST).unwrap();
        std::fs::write(ws.join("build.rs"), BUILD).unwrap();
        std::fs::write(ws.join("src/lib.rs"), LIB).unwrap();
        let cfg = dir.path().join("cfg");
        let hover = json!({"action": "hover", "file": "src/lib.rs", "line": 1, "symbol": "answer"});

        let run = run_over(dir.path());
        let out = lsp(&run, hover.clone()).await;
        assert!(out.contains("pub fn answer() -> u32"), "{out}");
        let status = lsp(&run, json!({"action": "status"})).await;
        assert!(status.contains("restricted: build scripts, proc macros and cargo check are off, the toolchain is the one chosen outside the workspace"), "{status}");
        assert!(status.contains("this workspace is not trusted"), "{status}");
        // The server has loaded the project (it answered); the build script never ran.
        assert!(!marker_within(&ws, Duration::from_secs(3)), "the build script ran untrusted");
        let all = lsp(&run, json!({"action": "diagnostics", "file": "*"})).await;
        assert!(all.contains("this workspace is not trusted"), "{all}");
        run.shutdown(Duration::from_secs(5)).await;
        drop(run);

        TrustStore::new(&cfg).trust(&ws.canonicalize().unwrap()).unwrap();
        let run = run_over(dir.path());
        let out = lsp(&run, hover).await;
        assert!(out.contains("pub fn answer() -> u32"), "{out}");
        let status = lsp(&run, json!({"action": "status"})).await;
        assert!(!status.contains("restricted"), "{status}");
        assert!(marker_within(&ws, Duration::from_secs(120)), "the trusted build script never ran");
        // The project checker, trusted: cargo check in rust-analyzer's own target folder.
        std::fs::write(ws.join("src/lib.rs"), "pub fn answer() -> u32 {\n    \"forty-two\"\n}\n").unwrap();
        let all = lsp(&run, json!({"action": "diagnostics", "file": "*"})).await;
        assert!(all.contains("rust (cargo check: every member, every target"), "{all}");
        assert!(all.contains("all features): 1 error; without --all-features: 1 error"), "{all}");
        assert!(all.contains("src/lib.rs:2  error  mismatched types [E0308]"), "{all}");
        // An error only test code has counts too (cargo test would fail on it).
        let in_tests = "pub fn answer() -> u32 {\n    42\n}\n#[cfg(test)]\nmod tests {\n    fn f() -> u32 {\n        \"x\"\n    }\n}\n";
        std::fs::write(ws.join("src/lib.rs"), in_tests).unwrap();
        let all = lsp(&run, json!({"action": "diagnostics", "file": "*"})).await;
        assert!(all.contains("src/lib.rs:7  error  mismatched types [E0308]"), "{all}");
        // So does an error behind a feature, marked as one only that feature set has.
        let featured = "pub fn answer() -> u32 {\n    42\n}\n#[cfg(feature = \"extra\")]\npub fn more() -> u32 {\n    \"x\"\n}\n";
        std::fs::write(ws.join("src/lib.rs"), featured).unwrap();
        let all = lsp(&run, json!({"action": "diagnostics", "file": "*"})).await;
        assert!(
            all.contains("src/lib.rs:6  error  mismatched types [E0308] (only with --all-features)"),
            "{all}"
        );
        assert!(all.contains("without --all-features: no errors or warnings"), "{all}");
        // An error only the default features have is listed, not only counted.
        let both = format!("{featured}#[cfg(not(feature = \"extra\"))]\npub fn less() -> u32 {{\n    \"y\"\n}}\n");
        std::fs::write(ws.join("src/lib.rs"), both).unwrap();
        let all = lsp(&run, json!({"action": "diagnostics", "file": "*"})).await;
        assert!(all.contains("all features): 1 error; without --all-features: 1 error"), "{all}");
        assert!(
            all.contains("src/lib.rs:10  error  mismatched types [E0308] (only without --all-features)"),
            "{all}"
        );
        std::fs::write(ws.join("src/lib.rs"), "pub fn answer() -> u32 {\n    \"forty-two\"\n}\n").unwrap();
        // Diagnostics on write wait for cargo check (a separate check) before answering, and
        // never call a file clean before it has ended.
        let call = |tool: &'static str, args: serde_json::Value| {
            let runtime = run.runtime().clone();
            async move {
                runtime
                    .call(Surface::Agent, tool, args, CancellationToken::new())
                    .await
                    .map(|o| o.to_text())
                    .unwrap_or_else(|e| e.to_string())
            }
        };
        let fixed = call("write", json!({"path": "src/lib.rs", "content": LIB})).await;
        assert!(!fixed.contains("(new)"), "{fixed}");
        let broke = call(
            "edit",
            json!({"path": "src/lib.rs", "old_string": "    42", "new_string": "    \"forty-two\""}),
        )
        .await;
        assert!(broke.contains("src/lib.rs: 1 new problem") && broke.contains("[E0308]"), "{broke}");
        assert!(!broke.contains("clean"), "{broke}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}
