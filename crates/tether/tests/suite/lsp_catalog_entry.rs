//! A language tether's catalog has never seen, served by a server it has never seen, added
//! purely as catalog entries in a tether.toml (`[lsp.languages.toy]`, `[lsp.servers.toyls]`):
//! its files are mapped by extension, given the configured `languageId`, diagnosed on write
//! and answered for, with no code naming either. The entry is the one docs/architecture.md
//! shows ("How to add a language server"), read from that page.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::call_text as call;
use serde_json::json;

#[test]
fn a_language_and_its_server_added_as_catalog_entries_work_end_to_end() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let entry = common::documented_toy_project(dir.path(), "documented-lsp");
        let config = format!("{}{entry}", common::LSP_BUDGETS);
        let run = common::run_with_config(dir.path(), &config);

        let hover =
            json!({"action": "hover", "file": "src/hello.toy", "line": 1, "symbol": "hello"});
        let out = call(&run, "lsp", hover).await;
        assert!(out.contains("toy hover; languageId toylang"), "{out}");

        let out = call(
            &run,
            "write",
            json!({"path": "src/hello.toy", "content": "hello\nBAD\n"}),
        )
        .await;
        assert!(
            out.contains("diagnostics (toyls) after this write:"),
            "{out}"
        );
        assert!(out.contains("src/hello.toy: 1 new problem"), "{out}");
        assert!(
            out.contains("line 2 (new): error toy: BAD is not allowed"),
            "{out}"
        );

        let status = call(&run, "lsp", json!({"action": "status"})).await;
        assert!(status.contains("toyls for ."), "{status}");

        // A language added without extensions is refused, naming what it needs.
        let bad = dir.path().join("bad");
        common::write(
            &bad,
            "tether.toml",
            "[lsp.languages.toy2]\nservers = [\"clangd\"]\n",
        );
        let err = match tether::RunBuilder::new(&ws).user_config_dir(&bad).build() {
            Ok(_) => panic!("a language without extensions was taken"),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains(
                "[lsp.languages.toy2]: a language the catalog does not know needs `extensions"
            ),
            "{err}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}
