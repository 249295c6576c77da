//! `lsp_rename` with `to_path`: a file moves and its importers are updated in the same change
//! where the real server offers the edits (typescript-language-server, rust-analyzer), and
//! where it offers none (pyright) the imports left naming the old module are listed, with the
//! diagnostics the move brought; the mistakes a model makes are refused with nothing moved.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::call_text as call;

use serde_json::json;

#[test]
fn a_typescript_module_moves_and_its_importer_follows_in_the_same_change() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let main =
            "import { basename } from \"./paths\";\n\nexport const b: string = basename(\"x\");\n";
        common::write(
            &ws,
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true}}\n",
        );
        common::write(&ws, "a.ts", main);
        common::write(
            &ws,
            "paths.ts",
            "export function basename(p: string): string {\n    return p;\n}\n",
        );
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);

        // The mistakes: a destination that exists, a symbol rename's fields beside it, a move
        // that changes the language. Nothing moves.
        let taken = call(
            &run,
            "lsp_rename",
            json!({"file": "paths.ts", "to_path": "a.ts"}),
        )
        .await;
        assert!(
            taken.contains("a.ts exists: a move never overwrites"),
            "{taken}"
        );
        let both = call(
            &run,
            "lsp_rename",
            json!({"file": "paths.ts", "to_path": "lib/p.ts", "new_name": "q"}),
        )
        .await;
        assert!(both.contains("not both"), "{both}");
        std::fs::create_dir_all(ws.join("lib")).unwrap();
        let folder = call(&run, "lsp_rename", json!({"file": "lib", "to_path": "src"})).await;
        assert!(
            folder.contains("lib is a folder: `to_path` moves one file at a time"),
            "{folder}"
        );
        let other = call(
            &run,
            "lsp_rename",
            json!({"file": "paths.ts", "to_path": "paths.py"}),
        )
        .await;
        assert!(other.contains("would change its language"), "{other}");
        assert!(ws.join("paths.ts").exists());

        let moved = call(
            &run,
            "lsp_rename",
            json!({"file": "paths.ts", "to_path": "lib/pathutil.ts"}),
        )
        .await;
        assert!(
            moved.starts_with(
                "moved paths.ts to lib/pathutil.ts (typescript-language-server updated the uses \
                 of it in 1 other file):\na.ts: 1 edit\npaths.ts moved to lib/pathutil.ts"
            ),
            "{moved}"
        );
        assert!(
            moved.contains("a.ts: clean") && moved.contains("lib/pathutil.ts: clean"),
            "{moved}"
        );
        assert!(!ws.join("paths.ts").exists() && ws.join("lib/pathutil.ts").exists());
        let now = std::fs::read_to_string(ws.join("a.ts")).unwrap();
        assert!(now.contains("from \"./lib/pathutil\""), "{now}");

        // The server no longer holds the old file: an import of it is an error now.
        let stale =
            "import { basename } from \"./paths\";\n\nexport const c: string = basename(\"y\");\n";
        let wrote = call(&run, "write", json!({"path": "c.ts", "content": stale})).await;
        assert!(
            wrote.contains("c.ts: 1 new problem") && wrote.contains("[2307]"),
            "{wrote}"
        );
        run.shutdown(std::time::Duration::from_secs(5)).await;
    });
}

#[test]
fn a_rust_module_file_moves_and_its_mod_and_uses_follow() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        common::write(&ws, "Cargo.toml", "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
        common::write(&ws, "src/lib.rs", "pub mod shapes;\n\nuse shapes::Square;\n\npub fn one() -> Square {\n    shapes::unit()\n}\n");
        common::write(&ws, "src/shapes.rs", "pub struct Square {\n    pub side: u32,\n}\n\npub fn unit() -> Square {\n    Square { side: 1 }\n}\n");
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
        let moved = call(
            &run,
            "lsp_rename",
            json!({"file": "src/shapes.rs", "to_path": "src/forms.rs"}),
        )
        .await;
        assert!(
            moved.starts_with("moved src/shapes.rs to src/forms.rs (rust-analyzer updated the uses of it in 1 other file)"),
            "{moved}"
        );
        assert!(moved.contains("checked: no `shapes` left as a name"), "{moved}");
        assert!(moved.contains("src/lib.rs: clean"), "{moved}");
        let lib = std::fs::read_to_string(ws.join("src/lib.rs")).unwrap();
        assert!(lib.contains("pub mod forms;") && lib.contains("forms::unit()"), "{lib}");
        run.shutdown(std::time::Duration::from_secs(5)).await;
    });
}

#[test]
fn a_python_module_moves_and_the_imports_left_naming_it_are_listed() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        common::write(
            &ws,
            "pyproject.toml",
            "[project]\nname = \"d\"\nversion = \"0.1\"\n",
        );
        common::write(&ws, "pkg/__init__.py", "");
        common::write(&ws, "pkg/utils.py", "def helper() -> int:\n    return 1\n");
        common::write(
            &ws,
            "app.py",
            "from pkg.utils import helper\n\n\ndef run() -> int:\n    return helper()\n",
        );
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
        // The importer was looked at before, as a model would have: what it had before the
        // move is known, so the move's problem in it is told as new (on a cold server the
        // baseline budget may end first, and the report then says it may predate the move).
        let before = call(
            &run,
            "lsp",
            json!({"action": "diagnostics", "file": "app.py"}),
        )
        .await;
        assert!(before.contains("no errors"), "{before}");
        let moved = call(
            &run,
            "lsp_rename",
            json!({"file": "pkg/utils.py", "to_path": "pkg/tools.py"}),
        )
        .await;
        assert!(
            moved.starts_with(
                "moved pkg/utils.py to pkg/tools.py (pyright offers no edits for a moved file, \
                 so no file that imports it was changed); NOT in every file: `utils` is still \
                 used 1 time in 1 file"
            ),
            "{moved}"
        );
        assert!(
            moved.contains("app.py:1  | from pkg.utils import helper"),
            "{moved}"
        );
        assert!(
            moved.contains("a use of the moved module here is now broken"),
            "{moved}"
        );
        // What the listing says of the importer agrees with what the write reports.
        assert!(
            moved.contains("app.py:1  error  Import \"pkg.utils\" could not be resolved"),
            "{moved}"
        );
        assert!(
            moved.contains("app.py (another file, not written): 1 new problem"),
            "{moved}"
        );
        run.shutdown(std::time::Duration::from_secs(5)).await;
    });
}

#[test]
fn a_header_moves_and_the_includes_left_naming_it_are_listed() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        common::write(&ws, "utils.h", "#pragma once\ninline int twice(int x) { return 2 * x; }\n");
        common::write(&ws, "main.cpp", "#include \"utils.h\"\n\nint main() {\n    return twice(0);\n}\n");
        let commands = format!(
            "[{{\"directory\": \"{0}\", \"file\": \"{0}/main.cpp\", \"arguments\": [\"clang++\", \"-std=c++17\", \"-c\", \"main.cpp\"]}}]\n",
            ws.canonicalize().unwrap().display()
        );
        common::write(&ws, "compile_commands.json", &commands);
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
        // clangd offers no edits for a moved file, and an include names it in a string, which
        // the search for names does not see: the include is listed as text.
        let moved = call(&run, "lsp_rename", json!({"file": "utils.h", "to_path": "helpers.h"})).await;
        assert!(
            moved.starts_with(
                "moved utils.h to helpers.h (clangd offers no edits for a moved file, so no file \
                 that imports it was changed); NOT every import: 1 line may still name the old \
                 file in a string"
            ),
            "{moved}"
        );
        assert!(moved.contains("main.cpp:1  | #include \"utils.h\""), "{moved}");
        assert!(ws.join("helpers.h").exists() && !ws.join("utils.h").exists());
        run.shutdown(std::time::Duration::from_secs(5)).await;
    });
}
