//! Staged changes compose: a change accepted after another write to its files is merged onto
//! them when their edits do not overlap, and refused with advice that works when they do.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{call, open, write};
use serde_json::json;

const FILE: &str =
    "def one():\n    print(1)\n\n\ndef two():\n    print(2)\n\n\ndef three():\n    log(3)\n";

fn read(dir: &tempfile::TempDir) -> String {
    std::fs::read_to_string(dir.path().join("m.py")).unwrap()
}

async fn resolve(run: &tether::Run, id: &str, action: &str) -> Result<String, tether::ToolError> {
    call(run, "resolve", json!({"edit_id": id, "action": action})).await
}

#[tokio::test]
async fn two_staged_edits_of_one_file_are_accepted_one_after_the_other() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.py", FILE);
    let run = open(dir.path());
    let prints = json!({"pattern": "print($A)", "rewrite": "emit($A)", "path": "m.py"});
    let logs = json!({"pattern": "log($A)", "rewrite": "emit($A)", "path": "m.py"});
    let first = call(&run, "ast_edit", prints).await.unwrap();
    assert!(first.contains("edit_1"), "{first}");
    call(&run, "ast_edit", logs).await.unwrap();
    let accepted = resolve(&run, "edit_1", "accept").await.unwrap();
    // The other pending change on the file is named, and will be merged.
    assert!(
        accepted.contains("edit_2 is pending on m.py and will be rebased onto this write"),
        "{accepted}"
    );
    let second = resolve(&run, "edit_2", "accept").await.unwrap();
    assert!(second.contains("accepted edit_2"), "{second}");
    assert!(
        second.contains("rebased onto later changes to m.py"),
        "{second}"
    );
    assert_eq!(
        read(&dir),
        FILE.replace("print(", "emit(").replace("log(", "emit(")
    );
}

#[tokio::test]
async fn overlapping_staged_edits_are_refused_with_advice_that_works() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.py", FILE);
    let run = open(dir.path());
    let emit = json!({"pattern": "print($A)", "rewrite": "emit($A)", "path": "m.py"});
    let show = json!({"pattern": "print($A)", "rewrite": "show($A)", "path": "m.py"});
    call(&run, "ast_edit", emit).await.unwrap();
    call(&run, "ast_edit", show.clone()).await.unwrap();
    resolve(&run, "edit_1", "accept").await.unwrap();
    let refused = resolve(&run, "edit_2", "accept")
        .await
        .unwrap_err()
        .to_string();
    insta::assert_snapshot!(refused);
    // Nothing of edit_2 was written, and following the advice works.
    assert_eq!(read(&dir), FILE.replace("print(", "emit("));
    resolve(&run, "edit_2", "discard").await.unwrap();
    let again = call(
        &run,
        "ast_edit",
        json!({"pattern": "emit($A)", "rewrite": "show($A)", "path": "m.py"}),
    )
    .await
    .unwrap();
    assert!(again.contains("edit_3"), "{again}");
    resolve(&run, "edit_3", "accept").await.unwrap();
    assert_eq!(read(&dir), FILE.replace("print(", "show("));
    let _ = show;
}

#[tokio::test]
async fn a_plain_edit_says_a_change_is_pending_and_the_accept_counts_new_sites() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.py", FILE);
    let run = open(dir.path());
    let prints = json!({"pattern": "print($A)", "rewrite": "emit($A)", "path": "m.py"});
    call(&run, "ast_edit", prints).await.unwrap();
    // Code added after staging, far from the staged edits, that the pattern matches too.
    let edited = call(
        &run,
        "edit",
        json!({"path": "m.py", "old_string": "    log(3)\n", "new_string": "    log(3)\n    print(4)\n"}),
    )
    .await
    .unwrap();
    assert!(
        edited.contains("edit_1 is pending on m.py and will be rebased onto this write"),
        "{edited}"
    );
    let accepted = resolve(&run, "edit_1", "accept").await.unwrap();
    assert!(
        accepted.contains(
            "1 more site matches the pattern now that this change does not cover (code added \
             after staging); stage again to include them"
        ),
        "{accepted}"
    );
    assert!(
        read(&dir).ends_with("    log(3)\n    print(4)\n"),
        "{}",
        read(&dir)
    );
    assert!(read(&dir).contains("    emit(1)\n"), "{}", read(&dir));
}
