//! What diagnostics on write says when rustc stops looking: with the real rust-analyzer and
//! cargo check, lints rustc skips while errors stand are neither fixed nor new, an error on
//! the line of a warning that went away is new, and a target the write did not touch keeps
//! its label from write to write.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::call_text as call;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use tether::{Run, TrustStore};

const MANIFEST: &str = "[package]\nname = \"phases\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

/// A trusted crate with `files` under `dir/ws`, and a run over it with generous waits.
fn trusted(dir: &Path, files: &[(&str, &str)]) -> Run {
    let ws = dir.join("ws");
    common::write(&ws, "Cargo.toml", MANIFEST);
    for (name, text) in files {
        common::write(&ws, name, text);
    }
    let cfg = dir.join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    TrustStore::new(&cfg)
        .trust(&ws.canonicalize().unwrap())
        .unwrap();
    let waits = "[lsp.diagnostics]\nwait_ms = 90000\nbaseline_ms = 60000\n";
    common::run_with_config(dir, &format!("{}{waits}", common::LSP_BUDGETS))
}

/// Writes `lib` with comment `n` added to src/lib.rs, which changes no problem: the report
/// must call nothing fixed or new. Returns the report.
async fn comment_edit(run: &Run, lib: &str, n: usize) -> String {
    let text = format!("{lib}// edit {n}\n");
    let out = call(run, "write", json!({"path": "src/lib.rs", "content": text})).await;
    assert!(!out.contains("fixed"), "write {n}:\n{out}");
    assert!(!out.contains("new problem"), "write {n}:\n{out}");
    out
}

/// Three unused variables in the body the write breaks: rustc reports them only while that
/// body type-checks.
const UNUSED: &str = "pub fn total() -> u32 {\n    let a = 1;\n    let b = 2;\n    let c = 3;\n    \
                      let x: u32 = 1;\n    x + 1\n}\n";

#[test]
fn warnings_rustc_skips_while_errors_stand_are_neither_fixed_nor_new() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = trusted(dir.path(), &[("src/lib.rs", UNUSED)]);
        let before = call(
            &run,
            "lsp",
            json!({"action": "diagnostics", "file": "src/lib.rs"}),
        )
        .await;
        assert_eq!(before.matches("unused variable").count(), 3, "{before}");
        let bad = UNUSED.replace("let x: u32 = 1;", "let x: u32 = \"one\";");
        let broke = call(&run, "write", json!({"path": "src/lib.rs", "content": bad})).await;
        eprintln!("{broke}");
        assert!(
            broke.contains("1 new problem") && broke.contains("E0308"),
            "{broke}"
        );
        assert!(!broke.contains("fixed"), "{broke}");
        assert!(
            broke.contains("3 warnings not re-checked while errors stand"),
            "{broke}"
        );
        let mended = call(
            &run,
            "write",
            json!({"path": "src/lib.rs", "content": UNUSED}),
        )
        .await;
        eprintln!("{mended}");
        assert!(mended.contains("fixed 1 problem"), "{mended}");
        assert!(!mended.contains("new"), "{mended}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn an_error_on_the_line_of_a_warning_that_went_away_is_new() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let lib = "pub fn total() -> u32 {\n    let spare = 1;\n    2\n}\n";
        let run = trusted(dir.path(), &[("src/lib.rs", lib)]);
        let before = call(
            &run,
            "lsp",
            json!({"action": "diagnostics", "file": "src/lib.rs"}),
        )
        .await;
        assert!(before.contains("unused variable"), "{before}");
        let bad = lib.replace("let spare = 1;", "let spare: u32 = \"one\"; spare;");
        let broke = call(&run, "write", json!({"path": "src/lib.rs", "content": bad})).await;
        eprintln!("{broke}");
        assert!(
            broke.contains("1 new problem") && broke.contains("E0308"),
            "{broke}"
        );
        assert!(!broke.contains("there before this write"), "{broke}");
        let report = broke.split("\nNotices:").next().unwrap_or(&broke);
        assert!(!report.contains("still"), "{broke}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn an_error_in_a_target_the_write_did_not_touch_keeps_its_label() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let lib = "pub fn total() -> u32 {\n    2\n}\n";
        let bench = "fn main() {\n    let n: u32 = phases::total();\n    let s: String = n;\n    \
                     println!(\"{s}\");\n}\n";
        let run = trusted(dir.path(), &[("src/lib.rs", lib), ("benches/b.rs", bench)]);
        let first = call(
            &run,
            "lsp",
            json!({"action": "diagnostics", "file": "src/lib.rs"}),
        )
        .await;
        eprintln!("{first}");
        for n in 0..3 {
            let out = comment_edit(&run, lib, n).await;
            eprintln!("write {n}:\n{out}");
        }
        let all = call(&run, "lsp", json!({"action": "diagnostics", "file": "*"})).await;
        eprintln!("{all}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// A name rustc cannot find: its message and its label read as two phrases, and the one
/// error is one line, with nothing said to be "listed above".
#[test]
fn an_unknown_name_reads_as_one_problem_in_two_phrases() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let lib = "pub fn total() -> u32 {\n    2\n}\n";
        let run = trusted(dir.path(), &[("src/lib.rs", lib)]);
        let _ = call(
            &run,
            "lsp",
            json!({"action": "diagnostics", "file": "src/lib.rs"}),
        )
        .await;
        let bad = lib.replace("    2", "    missing + 2");
        let out = call(&run, "write", json!({"path": "src/lib.rs", "content": bad})).await;
        eprintln!("{out}");
        assert!(out.contains("src/lib.rs: 1 new problem\n"), "{out}");
        assert!(
            out.contains("in this scope; not found in this scope"),
            "{out}"
        );
        assert!(!out.contains("listed above"), "{out}");
        // Three mismatches on one line read alike: one line, with nothing said to be "listed
        // above" when nothing else was listed.
        let three = lib.replace(
            "    2",
            "    let (_a, _b, _c): (u32, u32, u32) = (\"x\", \"y\", \"z\");\n    2",
        );
        let out = call(
            &run,
            "write",
            json!({"path": "src/lib.rs", "content": three}),
        )
        .await;
        eprintln!("{out}");
        assert!(out.contains("E0308"), "{out}");
        assert!(!out.contains("listed above"), "{out}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// Forty warnings in one file, which cargo check reports a few at a time: rust-analyzer
/// publishes the file once per batch, and with more than one worker an older batch could
/// arrive last. Each write must leave all forty standing, neither fixed nor new.
#[test]
fn a_file_with_many_findings_is_whole_after_every_write() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let lib: String = (0..40)
            .map(|i| format!("pub fn f{i}() -> u32 {{\n    let unused{i} = {i};\n    1\n}}\n"))
            .collect();
        let run = trusted(dir.path(), &[("src/lib.rs", &lib)]);
        let file = json!({"action": "diagnostics", "file": "src/lib.rs"});
        let first = call(&run, "lsp", file.clone()).await;
        assert_eq!(first.matches("unused variable").count(), 40, "{first}");
        for n in 0..12 {
            comment_edit(&run, &lib, n).await;
            let now = call(&run, "lsp", file.clone()).await;
            assert_eq!(
                now.matches("unused variable").count(),
                40,
                "write {n}:\n{now}"
            );
        }
        run.shutdown(Duration::from_secs(5)).await;
    });
}
