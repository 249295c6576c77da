//! The shape of what ast_edit writes (multi-line captures placed after text on a line) and its
//! preview of large changes, through a real run and real files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{call, open, write};
use serde_json::json;
use tether::Run;

async fn stage_and_accept(run: &Run, args: serde_json::Value) -> String {
    let staged = call(run, "ast_edit", args).await.unwrap();
    call(
        run,
        "resolve",
        json!({"edit_id": "edit_1", "action": "accept"}),
    )
    .await
    .unwrap();
    staged
}

fn read(dir: &tempfile::TempDir, rel: &str) -> String {
    std::fs::read_to_string(dir.path().join(rel)).unwrap()
}

#[tokio::test]
async fn a_body_substituted_mid_line_keeps_its_line_break_and_indentation() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.py",
        "def f(a, b):\n    x = a\n    if x:\n        return b\n    return a\n\n\nclass C:\n    def f(self):\n        y = 1\n        return y\n",
    );
    let run = open(dir.path());
    let args =
        json!({"pattern": "def f($$$P): $$$B", "rewrite": "def g($$$P): $$$B", "path": "m.py"});
    stage_and_accept(&run, args).await;
    assert_eq!(
        read(&dir, "m.py"),
        "def g(a, b):\n    x = a\n    if x:\n        return b\n    return a\n\n\nclass C:\n    def g(self):\n        y = 1\n        return y\n"
    );
}

#[tokio::test]
async fn a_braced_body_moved_after_text_keeps_its_indentation() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "w.rs",
        "fn f() {\n    if ok {\n        a();\n        b();\n    }\n}\n",
    );
    let run = open(dir.path());
    let args = json!({"pattern": "if ok { $$$B }", "rewrite": "if ready() { log(); $$$B }", "path": "w.rs"});
    stage_and_accept(&run, args).await;
    assert_eq!(
        read(&dir, "w.rs"),
        "fn f() {\n    if ready() { log();\n        a();\n        b(); }\n}\n"
    );
}

#[tokio::test]
async fn a_shape_that_cannot_be_kept_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // The object starts its own line, less indented than the call it belongs to.
    let src = "function f() {\n    call(\n  {\n    k: 1,\n  });\n}\n";
    write(dir.path(), "o.js", src);
    let run = open(dir.path());
    let err = call(
        &run,
        "ast_edit",
        json!({"pattern": "call($A)", "rewrite": "other($A)", "path": "o.js"}),
    )
    .await
    .unwrap_err()
    .to_string();
    insta::assert_snapshot!(err);
    assert_eq!(read(&dir, "o.js"), src);
    // Put on its own line in the rewrite, the same capture is fine.
    let args = json!({"pattern": "call($A)", "rewrite": "other(\n$A)", "path": "o.js"});
    let staged = call(&run, "ast_edit", args).await.unwrap();
    assert!(
        staged.starts_with("(proposed) 1 replacement in 1 file;"),
        "{staged}"
    );
}

#[tokio::test]
async fn a_large_preview_lists_every_file_and_shares_the_diff() {
    let dir = tempfile::tempdir().unwrap();
    let big: String = (0..400)
        .map(|i| format!("old({i})\n\n\n\n\n\n\n"))
        .collect();
    write(dir.path(), "a_big.py", &big);
    for name in ["b.py", "c.py", "d.py"] {
        write(dir.path(), name, "x = 1\nold(1)\n");
    }
    let run = open(dir.path());
    let out = call(
        &run,
        "ast_edit",
        json!({"pattern": "old($A)", "rewrite": "new($A)", "language": "python"}),
    )
    .await
    .unwrap();
    let head: Vec<&str> = out.lines().take(8).collect();
    insta::assert_snapshot!(head.join("\n"));
    for name in ["b.py", "c.py", "d.py"] {
        assert!(
            out.contains(&format!(
                "--- a/{name}\n+++ b/{name}\n@@ -1,2 +1,2 @@\n x = 1\n-old(1)\n+new(1)\n"
            )),
            "{name}: {out}"
        );
    }
    assert!(out.lines().count() < 230, "{}", out.lines().count());
}
