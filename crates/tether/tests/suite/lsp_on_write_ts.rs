//! Diagnostics on write with the real typescript-language-server: a write that breaks the file
//! importing it says so in its own result, a fix says fixed, and a file that stays clean is
//! answered at once (the server publishes nothing for it; tsserver is asked instead).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::call_text as call;

use std::time::Duration;

use serde_json::json;

const TSCONFIG: &str = "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true}}\n";
const GOOD: &str = "export function g(): number {\n    return 1;\n}\n";
const BAD: &str = "export function g(): string {\n    return \"one\";\n}\n";
const MAIN: &str = "import { g } from \"./m\";\n\nconst n: number = g();\nconsole.log(n);\n";

#[test]
fn a_write_that_breaks_its_importer_says_so_and_a_clean_file_is_answered_at_once() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        for (name, text) in [
            ("tsconfig.json", TSCONFIG),
            ("m.ts", GOOD),
            ("main.ts", MAIN),
        ] {
            common::write(&ws, name, text);
        }
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
        let first = call(
            &run,
            "lsp",
            json!({"action": "diagnostics", "file": "m.ts"}),
        )
        .await;
        assert!(first.contains("no errors"), "{first}");

        let broke = call(&run, "write", json!({"path": "m.ts", "content": BAD})).await;
        assert!(broke.contains("m.ts: clean"), "{broke}");
        assert!(
            broke.contains("main.ts (another file, not written): 1 new problem"),
            "{broke}"
        );
        assert!(broke.contains("[2322]"), "{broke}");
        assert!(!broke.contains("pending"), "{broke}");

        let fixed = call(&run, "write", json!({"path": "m.ts", "content": GOOD})).await;
        assert!(
            fixed.contains("main.ts (another file, not written): fixed 1 problem"),
            "{fixed}"
        );
        assert!(!fixed.contains("pending"), "{fixed}");

        let own = GOOD.replace("return 1;", "return \"1\";");
        let out = call(&run, "write", json!({"path": "m.ts", "content": own})).await;
        assert!(out.contains("m.ts: 1 new problem"), "{out}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}
