//! `lsp_rename` with the real pyright: the server renames only the files of its project, so a
//! use it left out (a test folder outside pyright's `include`) is named with its line and its
//! file's diagnostics; a comment or string that mentions the old name is not a use.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use serde_json::json;
use tether::Run;

/// A pyright workspace under `dir/ws` whose project includes only `pkg/`, with `files`.
fn pyright_run(dir: &std::path::Path, files: &[(&str, &str)]) -> Run {
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|d| d.join("pyright-langserver").is_file()),
        "pyright-langserver is not on PATH: run scripts/test, which installs it"
    );
    let ws = dir.join("ws");
    let project =
        "[project]\nname = \"w\"\nversion = \"0.1\"\n\n[tool.pyright]\ninclude = [\"pkg\"]\n";
    common::write(&ws, "pyproject.toml", project);
    common::write(&ws, "pkg/__init__.py", "");
    for (name, text) in files {
        common::write(&ws, name, text);
    }
    let waits = "[lsp.diagnostics]\nwait_ms = 30000\nbaseline_ms = 30000\n";
    common::run_with_config(dir, &format!("{}{waits}", common::LSP_BUDGETS))
}

const MOD: &str = "def compute_total(x: int) -> int:\n    return x + 1\n";
const USE: &str = "from pkg.mod import compute_total\n\nprint(compute_total(1))\n";
/// Also has another symbol of the same name, which the server rightly leaves.
const MOD_K: &str =
    "def compute_total(x: int) -> int:\n    return x + 1\n\n\nclass K:\n    compute_total = 3\n";
/// Mentions the name only in a comment and a string.
const NOTES: &str = "# compute_total is the old name\nWHY = \"compute_total was renamed\"\n";

#[test]
fn a_use_outside_the_servers_project_is_named_with_its_line_and_diagnostics() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let test = "from pkg.mod import compute_total\n\n\ndef test_it() -> None:\n    assert compute_total(1) == 2\n";
        let run = pyright_run(
            dir.path(),
            &[("pkg/mod.py", MOD_K), ("pkg/use.py", USE), ("tests/test_x.py", test), ("tests/notes.py", NOTES)],
        );
        run.warm().await;
        let out = common::call_text(&run, "lsp_rename", json!({"file": "pkg/mod.py", "line": 1, "symbol": "compute_total", "new_name": "add_one"})).await;
        let ws = dir.path().join("ws");
        // The server's part is written: both files of its project.
        assert_eq!(std::fs::read_to_string(ws.join("pkg/use.py")).unwrap(), USE.replace("compute_total", "add_one"), "{out}");
        assert!(out.contains("pkg/mod.py: 1 edit") && out.contains("pkg/use.py: 2 edits"), "{out}");
        // The server left tests/ alone (outside its `include`), and the result says so, with
        // the lines themselves.
        assert_eq!(std::fs::read_to_string(ws.join("tests/test_x.py")).unwrap(), test, "{out}");
        assert!(out.contains("not renamed by the server"), "{out}");
        assert!(out.contains("tests/test_x.py:1  | from pkg.mod import compute_total"), "{out}");
        assert!(out.contains("tests/test_x.py:5  | assert compute_total(1) == 2"), "{out}");
        // Its diagnostics now: the import of the old name is broken.
        assert!(out.contains("tests/test_x.py:1  error"), "{out}");
        assert!(!out.contains("tests/test_x.py: no errors"), "{out}");
        // A name left in a file the server renamed in is listed, as likely another symbol.
        assert!(out.contains("pkg/mod.py:6  | compute_total = 3"), "{out}");
        assert!(
            out.contains("the server renamed other uses in pkg/mod.py, so what it left there is more likely another symbol"),
            "{out}"
        );
        assert!(out.contains("is still used 3 times in 2 files"), "{out}");
        // A comment or a string is not a use.
        assert!(!out.contains("notes.py"), "{out}");
        // The rename does not call itself complete.
        assert!(!out.contains("no `compute_total` left"), "{out}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn a_name_left_only_in_comments_and_strings_is_not_reported() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = pyright_run(
            dir.path(),
            &[("pkg/mod.py", MOD), ("pkg/use.py", USE), ("pkg/notes.py", NOTES), ("tests/notes.py", NOTES)],
        );
        run.warm().await;
        let out = common::call_text(&run, "lsp_rename", json!({"file": "pkg/mod.py", "line": 1, "symbol": "compute_total", "new_name": "add_one"})).await;
        assert!(out.starts_with("renamed `compute_total` to `add_one` in 2 files:"), "{out}");
        assert!(!out.contains("not renamed") && !out.contains("notes.py:"), "{out}");
        // The check ran, and says what it covered.
        assert!(out.contains("no `compute_total` left as a name (of a value, type or field) in the workspace's python files"), "{out}");
        let ws = dir.path().join("ws");
        assert_eq!(std::fs::read_to_string(ws.join("pkg/notes.py")).unwrap(), NOTES);
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// rust-analyzer renames in the crate's module tree only: a file no `mod` names keeps the old
/// name, and the result lists that use with its line.
#[test]
fn rust_analyzer_leaves_a_file_outside_the_module_tree_and_the_result_says_so() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let manifest = "[package]\nname = \"r\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
        common::write(&ws, "Cargo.toml", manifest);
        let lib = "mod used;\n\npub fn compute_total() -> u32 {\n    1\n}\n\npub struct Meter(pub u32);\n";
        common::write(&ws, "src/lib.rs", lib);
        common::write(&ws, "src/used.rs", "pub fn twice() -> u32 {\n    crate::compute_total() * 2\n}\n");
        let orphan = "// not in any mod\npub fn thrice() -> u32 {\n    crate::compute_total() * 3\n}\n\npub fn wider(m: crate::Meter) -> u32 {\n    m.0\n}\n";
        common::write(&ws, "src/orphan.rs", orphan);
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
        run.warm().await;
        let args = json!({"file": "src/lib.rs", "line": 3, "symbol": "compute_total", "new_name": "add_one"});
        let out = common::call_text(&run, "lsp_rename", args).await;
        let used = std::fs::read_to_string(ws.join("src/used.rs")).unwrap();
        assert!(used.contains("crate::add_one()"), "{out}\n{used}");
        assert_eq!(std::fs::read_to_string(ws.join("src/orphan.rs")).unwrap(), orphan, "{out}");
        assert!(out.contains("not renamed by the server"), "{out}");
        assert!(out.contains("src/orphan.rs:3"), "{out}");
        // A type's name left behind is found too: it is a `type_identifier`, not an
        // `identifier`, to the grammar.
        let args = json!({"file": "src/lib.rs", "line": 7, "symbol": "Meter", "new_name": "Length"});
        let out = common::call_text(&run, "lsp_rename", args).await;
        assert!(std::fs::read_to_string(ws.join("src/lib.rs")).unwrap().contains("pub struct Length"), "{out}");
        assert!(out.contains("not renamed by the server"), "{out}");
        assert!(out.contains("src/orphan.rs:6"), "{out}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}
