//! The labels diagnostics on write gives with the real rust-analyzer and cargo check, at the
//! default budgets, counted over many runs: a write that brings a type error must never be
//! told the error was there before, nor that the file is clean, and a result that says
//! `pending` must be followed by its notice. In every other run the file is changed behind
//! tether's back just before the write, so a check of that change runs when the write is saved.
//! `TETHER_LABEL_RUNS` sets how many runs (default 3); run it under load (a busy loop per
//! core) to look for races.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::call_text as call;

use std::time::Duration;

use serde_json::json;
use tether::{Run, TrustStore};

const MANIFEST: &str = "[package]\nname = \"labels\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
const GOOD: &str = "pub fn total() -> u32 {\n    let x: u32 = 1;\n    x + 1\n}\n";
const BAD: &str = "pub fn total() -> u32 {\n    let x: u32 = \"one\";\n    x + 1\n}\n";

async fn notices(run: &Run) -> String {
    let start = std::time::Instant::now();
    run.settle(Duration::from_secs(150)).await;
    eprintln!("settled in {:?}", start.elapsed());
    let (list, _) = run.runtime().notices().drain();
    list.iter().map(|n| n.line()).collect::<Vec<_>>().join("\n")
}

/// A trusted crate whose lib is `lib`, and a run over it at the default write budgets.
fn trusted_crate(lib: &str) -> (tempfile::TempDir, Run) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    common::write(&ws, "Cargo.toml", MANIFEST);
    common::write(&ws, "src/lib.rs", lib);
    let cfg = dir.path().join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    TrustStore::new(&cfg)
        .trust(&ws.canonicalize().unwrap())
        .unwrap();
    let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
    (dir, run)
}

/// What is wrong with one run's labels, if anything.
async fn one_run(n: usize) -> Vec<String> {
    let (dir, run) = trusted_crate(GOOD);
    run.warm().await;
    let mut wrong = Vec::new();
    // Ready: a hover answers once the project is loaded.
    let hover = json!({"action": "hover", "file": "src/lib.rs", "line": 1, "symbol": "total"});
    let _ = call(&run, "lsp", hover).await;
    let first = call(
        &run,
        "write",
        json!({"path": "src/lib.rs", "content": GOOD}),
    )
    .await;
    if first.contains("(new") {
        wrong.push(format!("an unchanged file was blamed:\n{first}"));
    }
    if n % 2 == 1 {
        // An outside change whose check is under way, or about to begin, when the write is
        // saved: the server cancels it and checks again.
        let lib = dir.path().join("ws/src/lib.rs");
        std::fs::write(&lib, format!("{GOOD}// touched\n")).unwrap();
        tokio::time::sleep(Duration::from_millis(100 * (n as u64 / 2 % 5))).await;
    }
    let broke = call(&run, "write", json!({"path": "src/lib.rs", "content": BAD})).await;
    let pending = broke.contains("pending");
    eprintln!("---\n{first}\n{broke}");
    // The write's own report, not the notices after it (one may say "still writing").
    let report = broke.split("\nNotices:").next().unwrap_or(&broke);
    if report.contains("still") && report.contains("E0308") {
        wrong.push(format!("the new error was called old:\n{broke}"));
    }
    if broke.contains("src/lib.rs: clean") {
        wrong.push(format!("the broken file was called clean:\n{broke}"));
    }
    let reported = broke.contains("1 new problem") && broke.contains("E0308");
    if !(pending || reported) {
        wrong.push(format!("neither the new error nor pending:\n{broke}"));
    }
    let later = notices(&run).await;
    eprintln!("notices: {later}");
    if pending && !later.contains("E0308") {
        eprintln!("{}", call(&run, "lsp", json!({"action": "status"})).await);
    }
    if pending && !later.contains("E0308") {
        wrong.push(format!(
            "pending, and no notice followed:\n{broke}\nnotices: {later}"
        ));
    }
    let fixed = call(
        &run,
        "write",
        json!({"path": "src/lib.rs", "content": GOOD}),
    )
    .await;
    if fixed.contains("(new") {
        wrong.push(format!("the fix was said to break something:\n{fixed}"));
    }
    run.shutdown(Duration::from_secs(5)).await;
    wrong
}

#[test]
fn a_new_type_error_is_never_labelled_old_or_clean() {
    let runs: usize = std::env::var("TETHER_LABEL_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut wrong = Vec::new();
    for n in 0..runs {
        for w in rt.block_on(one_run(n)) {
            wrong.push(format!("run {n}: {w}"));
        }
    }
    eprintln!("wrong labels: {} in {runs} runs", wrong.len());
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// `lsp diagnostics` on one file includes what cargo check found there (a lint only rustc
/// reports), not only rust-analyzer's own analysis.
#[test]
fn a_files_diagnostics_include_the_checks_findings() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (_dir, run) = trusted_crate(&format!("{GOOD}fn helper() {{}}\n"));
        let args = json!({"action": "diagnostics", "file": "src/lib.rs"});
        let out = call(&run, "lsp", args).await;
        assert!(
            out.contains("never used") && out.contains("dead_code"),
            "{out}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}
