//! What `lsp` answers read like with the real pyright, at the edges a model hits: hover text
//! without markdown escapes, an action the server does not offer, an outline without locals,
//! a symbol that is only part of a name, a file named without its folder, and `status` when a
//! server is installed but finds no project marker.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::call_text as call;
use serde_json::json;
use tether::Run;

const TIMED: &str = "\
def want_bytes(value: str) -> bytes:
    \"\"\"Encodes the value with secret_key.

    Args:
        value: what to encode
    \"\"\"
    total = len(value)
    padded = value.ljust(total)
    return padded.encode()


LIMIT = 10


class Signer:
    def sign(self, data: bytes) -> bytes:
        digest = data[:LIMIT]
        return digest


print(want_bytes(\"x\"))
";

fn pyright_on_path() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|d| d.join("pyright-langserver").is_file()),
        "pyright-langserver is not on PATH: run scripts/test, which installs it"
    );
}

fn run_over(dir: &Path, marker: bool) -> Run {
    pyright_on_path();
    let ws = dir.join("ws");
    if marker {
        common::write(
            &ws,
            "pyproject.toml",
            "[project]\nname = \"w\"\nversion = \"0.1\"\n",
        );
    }
    common::write(&ws, "pkg/timed.py", TIMED);
    common::write(&ws, ".venv/pyvenv.cfg", "home = /usr/bin\n");
    common::write(&ws, ".venv/lib/python3/site-packages/timed.py", "x = 1\n");
    common::run_with_config(dir, common::LSP_BUDGETS)
}

#[test]
fn pyright_answers_read_as_a_model_needs_them() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = run_over(dir.path(), true);
        let file = "pkg/timed.py";

        // Hover: plain text, no `secret\_key`, no `&nbsp;`.
        let out = call(
            &run,
            "lsp",
            json!({"action": "hover", "file": file, "line": 1, "symbol": "want_bytes"}),
        )
        .await;
        assert!(out.contains("def want_bytes(value: str) -> bytes"), "{out}");
        assert!(out.contains("secret_key") && !out.contains("\\_"), "{out}");
        assert!(!out.contains("&nbsp;") && !out.contains("```"), "{out}");

        // An action pyright does not offer: said so, with what to ask instead.
        let out = call(
            &run,
            "lsp",
            json!({"action": "implementation", "file": file, "line": 16, "symbol": "sign"}),
        )
        .await;
        assert!(
            out.contains("pyright does not offer `implementation`"),
            "{out}"
        );
        let not_found = tether_rpc::codes::METHOD_NOT_FOUND.to_string();
        assert!(
            out.contains("references") && !out.contains(&not_found),
            "{out}"
        );

        // The outline: functions, classes, methods and module names; no locals unless asked.
        let out = call(&run, "lsp", json!({"action": "symbols", "file": file})).await;
        assert!(
            out.contains("function want_bytes") && out.contains("method sign"),
            "{out}"
        );
        assert!(
            out.contains("LIMIT") && out.contains("class Signer"),
            "{out}"
        );
        assert!(!out.contains("total") && !out.contains("digest"), "{out}");
        assert!(out.contains("`locals: true` lists them"), "{out}");
        let out = call(
            &run,
            "lsp",
            json!({"action": "symbols", "file": file, "locals": true}),
        )
        .await;
        assert!(out.contains("total") && out.contains("digest"), "{out}");

        // A symbol that is only part of a name: a read says which name it took; a rename
        // refuses.
        let out = call(
            &run,
            "lsp",
            json!({"action": "hover", "file": file, "line": 21, "symbol": "want_byte"}),
        )
        .await;
        assert!(
            out.contains("`want_byte` is not a whole name on that line"),
            "{out}"
        );
        assert!(out.contains("def want_bytes"), "{out}");
        let out = call(
            &run,
            "lsp_rename",
            json!({"file": file, "line": 21, "symbol": "want_byte", "new_name": "to_bytes"}),
        )
        .await;
        assert!(
            out.contains("`want_byte` is not a whole name on line 21: it is part of `want_bytes`"),
            "{out}"
        );
        let after = std::fs::read_to_string(dir.path().join("ws").join(file)).unwrap();
        assert_eq!(after, TIMED, "the refused rename changed the file");

        // A file named without its folder: the one in the project is suggested, never the
        // copy in the virtual environment.
        let out = call(
            &run,
            "lsp",
            json!({"action": "hover", "file": "timed.py", "line": 1, "symbol": "want_bytes"}),
        )
        .await;
        assert!(out.contains("did you mean pkg/timed.py?"), "{out}");
        assert!(!out.contains("site-packages"), "{out}");

        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn status_names_a_language_whose_server_finds_no_project_marker() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = run_over(dir.path(), false);
        let out = call(&run, "lsp", json!({"action": "status"})).await;
        assert!(
            out.contains("python: unavailable for pkg/timed.py"),
            "{out}"
        );
        assert!(
            out.contains("is installed, but no root marker (pyproject.toml"),
            "{out}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// A pyright run over `lib.py` and 1,500 modules: a pass long enough to be running when the
/// first question comes. Every 25th module calls `area`, so 60 modules use it.
fn long_pass_run(dir: &Path) -> Run {
    pyright_on_path();
    let ws = dir.join("ws");
    common::write(&ws, "pyproject.toml", "[project]\nname = \"w\"\n");
    common::write(&ws, "lib.py", "def area(w: int) -> int:\n    return w\n");
    for i in 0..1500_usize {
        let body = match i % 25 {
            0 => format!("from lib import area\n\nV{i}: int = area({i})\n"),
            _ => format!("import missing_{i}\n\nY{i}: int = \"y\"\n"),
        };
        common::write(&ws, &format!("pkg{}/m{i:04}.py", i % 10), &body);
    }
    common::run_with_config(dir, common::LSP_BUDGETS)
}

/// pyright searches every file when asked for references, so its answer is whole while its
/// diagnostics pass still runs: the count is exact at once, with no "partial" note and no
/// wait for the pass (on Django the note held a complete answer back for a minute).
#[test]
fn pyright_references_are_whole_while_its_pass_runs() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = long_pass_run(dir.path());
        let out = call(
            &run,
            "lsp",
            json!({"action": "references", "file": "lib.py", "line": 1, "symbol": "area"}),
        )
        .await;
        // The definition, and an import and a call in each of 60 modules.
        assert!(out.contains("(121 found)"), "{out}");
        assert!(!out.contains("partial"), "{out}");
        let status = call(&run, "lsp", json!({"action": "status"})).await;
        eprintln!("status then: {status}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// A rename asked of a server that has not reached every use yet (pyright before it listed
/// the project's files renames in its open files alone) says so beside the count.
#[test]
fn a_rename_by_a_server_still_indexing_says_it_may_have_missed_uses() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = long_pass_run(dir.path());
        let args = json!({"file": "lib.py", "line": 1, "symbol": "area", "new_name": "surface"});
        let out = call(&run, "lsp_rename", args).await;
        let head = out.lines().next().unwrap_or_default();
        // Whole (lib.py and the 60 modules), or said not to be.
        let whole = head.contains("in 61 files");
        assert!(whole || head.contains("was still indexing"), "{out}");
        eprintln!("{head}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// Modules created outside tether reach pyright's listing: references asked while it lists
/// its files again wait for that (asked at once, pyright answers from its old listing), and
/// files it never lists (a text file, a module under node_modules) hold no answer back.
#[test]
fn references_find_modules_created_outside_once_pyright_lists_them() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = long_pass_run(dir.path());
        let ask = json!({"action": "references", "file": "lib.py", "line": 1, "symbol": "area"});
        let out = call(&run, "lsp", ask.clone()).await;
        assert!(out.contains("(121 found)"), "{out}");
        // As `serve` does once it has started: the watch of outside changes runs from here.
        run.warm().await;
        let ws = dir.path().join("ws");
        common::write(&ws, "notes.txt", "area\n");
        common::write(&ws, "node_modules/x/area.py", "from lib import area\n");
        let out = call(&run, "lsp", ask.clone()).await;
        assert!(
            out.contains("(121 found)") && !out.contains("partial"),
            "{out}"
        );
        for i in 0..20 {
            let body = "from lib import area\n\nZ: int = area(1)\n";
            common::write(&ws, &format!("fresh/n{i:02}.py"), body);
        }
        // The watch tells the run a moment later: asked until the count takes them in.
        // Two places in each: 161. The module under node_modules is neither watched nor
        // opened, so pyright, which never lists that folder, does not count it.
        let found = |out: &str| {
            let n = out.split(" found)").next()?.rsplit('(').next()?;
            n.parse::<usize>().ok()
        };
        // Asked while pyright lists them again, the answer waits for the listing: never a
        // note, and the count is 121 only while the run has not heard of them yet.
        let mut last = String::new();
        for _ in 0..60 {
            last = call(&run, "lsp", ask.clone()).await;
            assert!(!last.contains("partial"), "{last}");
            if found(&last) >= Some(161) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(found(&last), Some(161), "{last}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}
