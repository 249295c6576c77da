//! Diagnostics on write with the real rust-analyzer (trusted, so cargo check runs on save)
//! and clangd: one type error is reported exactly, a moved one is not new, a second identical
//! one is, a fix and a relapse are both said, and a changed signature reports the break in
//! its caller, a file the write did not touch.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use tether::{Run, Surface, TrustStore};
use tokio_util::sync::CancellationToken;

async fn call(run: &Run, tool: &str, args: serde_json::Value) -> String {
    run.runtime()
        .call(Surface::Agent, tool, args, CancellationToken::new())
        .await
        .map(|o| o.to_text())
        .unwrap_or_else(|e| format!("ERROR {e}"))
}

/// Writes `files` under `dir/ws` and opens a run over it with generous waits; `trusted`
/// trusts the workspace first, as `tether trust` would.
fn run_over(dir: &Path, files: &[(&str, &str)], trusted: bool) -> Run {
    let ws = dir.join("ws");
    for (name, text) in files {
        common::write(&ws, name, text);
    }
    if trusted {
        let cfg = dir.join("cfg");
        std::fs::create_dir_all(&cfg).unwrap();
        TrustStore::new(&cfg)
            .trust(&ws.canonicalize().unwrap())
            .unwrap();
    }
    let waits = "[lsp.diagnostics]\nwait_ms = 90000\nbaseline_ms = 60000\n";
    common::run_with_config(dir, &format!("{}{waits}", common::LSP_BUDGETS))
}

/// The diagnostics block of a result.
fn block<'a>(out: &'a str, server: &str) -> &'a str {
    let head = format!("diagnostics ({server}) after this write:");
    out.find(&head).map_or("", |i| &out[i..])
}

/// The steps every server goes through on one file: `good` is its text with no problem,
/// `bad` the one line that brings a type error, `bad2` a second copy of it elsewhere.
struct Steps<'a> {
    server: &'a str,
    file: &'a str,
    good: &'a str,
    bad: (&'a str, &'a str),
    bad2: (&'a str, &'a str),
    /// Words the one error's text must hold.
    error: &'a str,
    /// Another file, broken before the run, and an edit of it that leaves its error alone.
    old: (&'a str, &'a str, &'a str),
}

async fn introduce_move_repeat_fix_relapse(run: &Run, s: &Steps<'_>) {
    let edit = |old: &str, new: &str| json!({"path": s.file, "old_string": old, "new_string": new});
    let one = call(run, "edit", edit(s.bad.0, s.bad.1)).await;
    let b = block(&one, s.server);
    assert!(b.contains(&format!("{}: 1 new problem\n", s.file)), "{one}");
    assert!(b.contains("(new): error") && b.contains(s.error), "{one}");
    assert_eq!(
        b.matches("(new)").count(),
        1,
        "more than the one error: {one}"
    );

    let moved = call(run, "edit", edit(s.bad.1, &format!("\n\n\n\n{}", s.bad.1))).await;
    let b = block(&moved, s.server);
    assert!(
        b.contains(&format!(
            "{}: still 1 problem (there before this write)",
            s.file
        )) && !b.contains("(new"),
        "{moved}"
    );

    let twice = call(run, "edit", edit(s.bad2.0, s.bad2.1)).await;
    let b = block(&twice, s.server);
    assert!(
        b.contains(&format!("{}: 1 new problem; still 1 more", s.file)),
        "{twice}"
    );
    assert!(b.contains("(new; now 2 of these, was 1): error"), "{twice}");

    let fixed = call(run, "write", json!({"path": s.file, "content": s.good})).await;
    assert!(
        block(&fixed, s.server).contains(&format!("{}: fixed 2 problems; none left", s.file)),
        "{fixed}"
    );
    let back = call(run, "edit", edit(s.bad.0, s.bad.1)).await;
    assert!(
        block(&back, s.server).contains(&format!("{}: 1 new problem\n", s.file)),
        "{back}"
    );
    let clean = call(run, "write", json!({"path": s.file, "content": s.good})).await;
    assert!(
        block(&clean, s.server).contains("fixed 1 problem; none left"),
        "{clean}"
    );

    // A file broken before the run: an unrelated edit of it blames nothing on the write.
    let (old, from, to) = s.old;
    let args = json!({"path": old, "old_string": from, "new_string": to});
    let out = call(run, "edit", args).await;
    let b = block(&out, s.server);
    let still = format!("{old}: still 1 problem (there before this write)");
    assert!(b.contains(&still) && !b.contains("(new"), "{out}");
}

#[test]
fn rust_analyzer_with_cargo_check_reports_what_each_write_broke() {
    let lib = "pub mod old;\npub mod shapes;\n\npub fn total() -> u32 {\n    shapes::area(2, 3)\n}\n\npub fn spare() -> u32 {\n    1\n}\n";
    let shapes = "pub fn area(w: u32, h: u32) -> u32 {\n    w * h\n}\n";
    let files = [
        (
            "Cargo.toml",
            "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        ("src/lib.rs", lib),
        ("src/shapes.rs", shapes),
        (
            "src/old.rs",
            "pub fn old() -> u32 {\n    let _o: u32 = \"o\";\n    1\n}\n",
        ),
    ];
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = run_over(dir.path(), &files, true);
        run.warm().await;
        // The first write's save starts the first cargo check: before it, nothing is known.
        let first = call(&run, "write", json!({"path": "src/lib.rs", "content": lib})).await;
        assert!(!first.contains("(new"), "{first}");

        let steps = Steps {
            server: "rust-analyzer",
            file: "src/lib.rs",
            good: lib,
            bad: ("    shapes::area(2, 3)\n}\n\npub fn spare", "    let _x: u32 = \"a\";\n    shapes::area(2, 3)\n}\n\npub fn spare"),
            bad2: ("    1\n}\n", "    let _y: u32 = \"a\";\n    1\n}\n"),
            error: "E0308",
            old: ("src/old.rs", "    1\n", "    2\n"),
        };
        introduce_move_repeat_fix_relapse(&run, &steps).await;

        // A changed signature: cargo check finds the caller in lib.rs broken.
        let out = call(&run, "edit", json!({"path": "src/shapes.rs", "old_string": "h: u32)", "new_string": "h: u32, d: u32)"})).await;
        let b = block(&out, "rust-analyzer");
        assert!(b.contains("src/lib.rs (another file, not written): 1 new problem"), "{out}");
        assert!(b.contains("E0061"), "{out}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn clangd_reports_what_each_write_broke() {
    let clangd = [
        "clangd",
        "clangd-22",
        "clangd-21",
        "clangd-20",
        "clangd-19",
        "clangd-18",
    ];
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|d| clangd.iter().any(|c| d.join(c).is_file())),
        "clangd is not on PATH: run scripts/test, which installs it"
    );
    let main = "#include \"area.h\"\n\nint total() {\n    return area(2, 3);\n}\n\nint spare() {\n    return 1;\n}\n";
    let files = [
        ("compile_flags.txt", "-std=c++17\n"),
        ("area.h", "int area(int w, int h);\n"),
        ("main.cpp", main),
        (
            "old.cpp",
            "int old() {\n    int o = \"o\";\n    return 1;\n}\n",
        ),
    ];
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = run_over(dir.path(), &files, false);
        run.warm().await;
        call(
            &run,
            "lsp",
            json!({"action": "diagnostics", "file": "main.cpp"}),
        )
        .await;
        let steps = Steps {
            server: "clangd",
            file: "main.cpp",
            good: main,
            bad: (
                "    return area(2, 3);",
                "    int x = \"a\";\n    return area(2, 3);",
            ),
            bad2: ("    return 1;", "    int y = \"a\";\n    return 1;"),
            error: "Cannot initialize a variable of type 'int'",
            old: ("old.cpp", "return 1;", "return 2;"),
        };
        introduce_move_repeat_fix_relapse(&run, &steps).await;

        // A changed signature in the header: clangd rebuilds the open main.cpp on the save,
        // and the write's own result has its break, not a later notice.
        let out = call(
            &run,
            "edit",
            json!({"path": "area.h", "old_string": "int h)", "new_string": "int h, int d)"}),
        )
        .await;
        let b = block(&out, "clangd");
        assert!(
            b.contains("main.cpp (another file, not written): 1 new problem"),
            "{out}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}
