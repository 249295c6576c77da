//! `lsp_fix` with the real servers: typescript-language-server's quick fixes listed for a
//! whole file and applied by number or title (a changed file refused with the current list),
//! clangd's refactoring whose command sends its edit back by `workspace/applyEdit`,
//! rust-analyzer's own fix, and pyright, which offers none and says so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::call_text as call;

use serde_json::json;

const TSCONFIG: &str =
    "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true, \"noUnusedLocals\": true}}\n";
const TS: &str = "import { basename } from \"./paths\";\n\nexport function greet(name: string): string {\n    const unused = 1;\n    return \"hi \" + name;\n}\n";
const PATHS: &str = "export function basename(p: string): string {\n    return p;\n}\n";

#[test]
fn typescript_fixes_are_listed_for_a_file_and_applied_by_number_or_title() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        for (name, text) in [
            ("tsconfig.json", TSCONFIG),
            ("a.ts", TS),
            ("paths.ts", PATHS),
        ] {
            common::write(&ws, name, text);
        }
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
        let early = call(&run, "lsp_fix", json!({"file": "a.ts", "action": 1})).await;
        assert!(
            early.starts_with("ERROR") && early.contains("no code actions of a.ts were listed"),
            "{early}"
        );
        let listed = call(
            &run,
            "lsp",
            json!({"action": "code_actions", "file": "a.ts"}),
        )
        .await;
        assert!(
            listed.starts_with("code actions for the 2 diagnostics of the file"),
            "{listed}"
        );
        assert!(
            listed.contains("1. Remove import from './paths'"),
            "{listed}"
        );
        assert!(
            listed.contains("Remove unused declaration for: 'unused'"),
            "{listed}"
        );

        // The file changes after the listing: its numbers are refused, with the list as it is
        // now, and nothing is written.
        let changed = TS.replace("    const unused = 1;\n", "");
        std::fs::write(ws.join("a.ts"), &changed).unwrap();
        let stale = call(&run, "lsp_fix", json!({"file": "a.ts", "action": 1})).await;
        assert!(
            stale.starts_with("ERROR")
                && stale.contains("a.ts changed since its code actions were listed")
                && stale.contains("The current list:\ncode actions for the 1 diagnostic"),
            "{stale}"
        );
        assert_eq!(std::fs::read_to_string(ws.join("a.ts")).unwrap(), changed);

        // A title no action has, and a number past the list, name the list.
        let none = call(
            &run,
            "lsp_fix",
            json!({"file": "a.ts", "action": "organise"}),
        )
        .await;
        assert!(
            none.contains("no listed action's title has `organise`") && none.contains("1. "),
            "{none}"
        );
        let past = call(&run, "lsp_fix", json!({"file": "a.ts", "action": 7})).await;
        assert!(
            past.contains("there is no action 7: the listing has 1"),
            "{past}"
        );

        // By title, in any case: written, with what the write did to the diagnostics.
        let fixed = call(
            &run,
            "lsp_fix",
            json!({"file": "a.ts", "action": "remove import"}),
        )
        .await;
        assert!(
            fixed.starts_with("applied `Remove import from './paths'` (typescript-language-server")
                && fixed.contains(" in 1 file:\na.ts: 1 edit\n"),
            "{fixed}"
        );
        assert!(
            fixed.contains("a.ts: fixed 1 problem; none left"),
            "{fixed}"
        );
        let now = std::fs::read_to_string(ws.join("a.ts")).unwrap();
        assert!(!now.contains("import"), "{now}");

        // The listing described the text before that change.
        let again = call(&run, "lsp_fix", json!({"file": "a.ts", "action": 1})).await;
        assert!(
            again.contains("changed since its code actions were listed")
                && again.contains("offers no code action for the file (it has no diagnostics now)"),
            "{again}"
        );
        run.shutdown(std::time::Duration::from_secs(5)).await;
    });
}

const CPP: &str = "#include <cstdio>\n\nint main() {\n    auto count = 1;\n    std::printf(\"%d\\n\", count);\n    return 0;\n}\n";

#[test]
fn a_clangd_refactoring_sends_its_edit_back_and_it_goes_through_the_door() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        common::write(&ws, "main.cpp", CPP);
        let commands = format!(
            "[{{\"directory\": \"{0}\", \"file\": \"{0}/main.cpp\", \"arguments\": [\"clang++\", \"-std=c++17\", \"-c\", \"main.cpp\"]}}]\n",
            ws.canonicalize().unwrap().display()
        );
        common::write(&ws, "compile_commands.json", &commands);
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
        let listed = call(
            &run,
            "lsp",
            json!({"action": "code_actions", "file": "main.cpp", "line": 4, "symbol": "auto"}),
        )
        .await;
        assert!(
            listed.contains("1. Replace with deduced type (refactor)"),
            "{listed}"
        );
        let applied = call(
            &run,
            "lsp_fix",
            json!({"file": "main.cpp", "action": "deduced type"}),
        )
        .await;
        // The action is a command: clangd computes the edit when it runs and sends it back.
        assert!(
            applied.starts_with(
                "applied `Replace with deduced type` (clangd, by its command `clangd.applyTweak`) in 1 file"
            ),
            "{applied}"
        );
        assert!(applied.contains("main.cpp: clean"), "{applied}");
        let now = std::fs::read_to_string(ws.join("main.cpp")).unwrap();
        assert!(now.contains("int count = 1;"), "{now}");
        run.shutdown(std::time::Duration::from_secs(5)).await;
    });
}

const MANIFEST: &str = "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
const RS: &str = "pub struct Square {\n    pub side: u32,\n    pub name: String,\n}\n\npub fn unit() -> Square {\n    Square { side: 1 }\n}\n";

#[test]
fn rust_analyzers_own_fix_is_applied_and_fixes_its_diagnostic() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        common::write(&ws, "Cargo.toml", MANIFEST);
        common::write(&ws, "src/lib.rs", RS);
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
        let listed = call(
            &run,
            "lsp",
            json!({"action": "code_actions", "file": "src/lib.rs"}),
        )
        .await;
        assert!(
            listed.contains("1. Fill struct fields (quickfix)"),
            "{listed}"
        );
        let applied = call(&run, "lsp_fix", json!({"file": "src/lib.rs", "action": 1})).await;
        assert!(
            applied.starts_with("applied `Fill struct fields` (rust-analyzer) in 1 file"),
            "{applied}"
        );
        assert!(
            applied.contains("src/lib.rs: fixed 1 problem; none left"),
            "{applied}"
        );
        let now = std::fs::read_to_string(ws.join("src/lib.rs")).unwrap();
        assert!(now.contains("Square { side: 1, name: todo!() }"), "{now}");
        run.shutdown(std::time::Duration::from_secs(5)).await;
    });
}

#[test]
fn pyright_offers_no_fix_and_says_so() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        common::write(
            &ws,
            "pyproject.toml",
            "[project]\nname = \"d\"\nversion = \"0.1\"\n",
        );
        let app = "def greet(name: str) -> str:\n    return name + missing\n";
        common::write(&ws, "app.py", app);
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
        let listed = call(
            &run,
            "lsp",
            json!({"action": "code_actions", "file": "app.py"}),
        )
        .await;
        assert_eq!(
            listed, "pyright offers no code action for the 1 diagnostic of the file",
            "{listed}"
        );
        let refused = call(&run, "lsp_fix", json!({"file": "app.py", "action": 1})).await;
        assert!(
            refused.contains("there is no action 1: the listing has 0"),
            "{refused}"
        );
        assert_eq!(std::fs::read_to_string(ws.join("app.py")).unwrap(), app);
        run.shutdown(std::time::Duration::from_secs(5)).await;
    });
}
