//! The harness file tools through a real run: text shape, mode, symlinks, UTF-8 refusal,
//! read roots, and resolve's errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::os::unix::fs::PermissionsExt;

use common::{call, open};
use serde_json::json;
use tether::RunBuilder;

#[tokio::test]
async fn edits_keep_crlf_bom_final_newline_and_mode() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    std::fs::write(p("crlf.txt"), "one\r\ntwo\r\n").unwrap();
    std::fs::write(p("bom.txt"), "\u{feff}alpha\nbeta\n").unwrap();
    std::fs::write(p("nofinal.txt"), "x\ny").unwrap();
    std::fs::write(p("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(p("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = open(dir.path());

    call(
        &run,
        "edit",
        json!({"path": "crlf.txt", "old_string": "two", "new_string": "2\nthree"}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read(p("crlf.txt")).unwrap(),
        b"one\r\n2\r\nthree\r\n"
    );
    call(
        &run,
        "write",
        json!({"path": "crlf.txt", "content": "a\nb\n"}),
    )
    .await
    .unwrap();
    assert_eq!(std::fs::read(p("crlf.txt")).unwrap(), b"a\r\nb\r\n");

    call(
        &run,
        "edit",
        json!({"path": "bom.txt", "old_string": "beta", "new_string": "BETA"}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(p("bom.txt")).unwrap(),
        "\u{feff}alpha\nBETA\n"
    );

    call(
        &run,
        "edit",
        json!({"path": "nofinal.txt", "old_string": "y", "new_string": "z"}),
    )
    .await
    .unwrap();
    assert_eq!(std::fs::read_to_string(p("nofinal.txt")).unwrap(), "x\nz");
    let patch = "*** Begin Patch\n*** Update File: nofinal.txt\n@@\n x\n-z\n+w\n*** End Patch\n";
    call(&run, "apply_patch", json!({"patch": patch}))
        .await
        .unwrap();
    assert_eq!(std::fs::read_to_string(p("nofinal.txt")).unwrap(), "x\nw");

    call(
        &run,
        "edit",
        json!({"path": "run.sh", "old_string": "hi", "new_string": "ho"}),
    )
    .await
    .unwrap();
    let mode = std::fs::metadata(p("run.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[tokio::test]
async fn edits_refuse_non_utf8_and_keep_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = b"caf\xe9 latin-1\n".to_vec();
    std::fs::write(dir.path().join("latin1.txt"), &bytes).unwrap();
    let run = open(dir.path());
    let err = call(
        &run,
        "edit",
        json!({"path": "latin1.txt", "old_string": "latin", "new_string": "x"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("UTF-8"), "{err}");
    let patch = "*** Begin Patch\n*** Update File: latin1.txt\n@@\n-caf\n+x\n*** End Patch\n";
    let err = call(&run, "apply_patch", json!({"patch": patch}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("UTF-8") && err.contains("nothing was written"),
        "{err}"
    );
    assert_eq!(std::fs::read(dir.path().join("latin1.txt")).unwrap(), bytes);
}

#[tokio::test]
async fn symlinks_inside_the_root_are_written_through() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("target.txt"), "old\n").unwrap();
    std::os::unix::fs::symlink("target.txt", dir.path().join("alias.txt")).unwrap();
    let run = open(dir.path());
    call(
        &run,
        "edit",
        json!({"path": "alias.txt", "old_string": "old", "new_string": "new"}),
    )
    .await
    .unwrap();
    assert!(
        std::fs::symlink_metadata(dir.path().join("alias.txt"))
            .unwrap()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("target.txt")).unwrap(),
        "new\n"
    );
}

#[tokio::test]
async fn edit_errors_count_matches() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "a b a\n").unwrap();
    let run = open(dir.path());
    let e = call(
        &run,
        "edit",
        json!({"path": "f.txt", "old_string": "a", "new_string": "c"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.contains("occurs 2 times"), "{e}");
    let e = call(
        &run,
        "edit",
        json!({"path": "f.txt", "old_string": "q", "new_string": "c"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.contains("0 matches"), "{e}");
    let out = call(
        &run,
        "edit",
        json!({"path": "f.txt", "old_string": "a", "new_string": "c", "replace_all": true}),
    )
    .await
    .unwrap();
    assert!(out.contains("2 replacements"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "c b c\n"
    );
}

#[tokio::test]
async fn read_is_confined_to_the_workspace_and_read_roots() {
    let outer = tempfile::tempdir().unwrap();
    let ws = outer.path().join("ws");
    let lib = outer.path().join("lib");
    let cfg = outer.path().join("cfg");
    for d in [&ws, &lib, &cfg] {
        std::fs::create_dir(d).unwrap();
    }
    std::fs::write(lib.join("lib.rs"), "pub fn f() {}\n").unwrap();
    let lib_file = lib.join("lib.rs").display().to_string();
    let run = RunBuilder::new(&ws).user_config_dir(&cfg).build().unwrap();
    let err = call(&run, "read", json!({"path": lib_file}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not readable"), "{err}");
    let err = call(&run, "read", json!({"path": "../lib/lib.rs"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not readable"), "{err}");

    let toml = format!("[files]\nread_roots = [\"{}\"]\n", lib.display());
    std::fs::write(cfg.join("tether.toml"), toml).unwrap();
    let run = RunBuilder::new(&ws).user_config_dir(&cfg).build().unwrap();
    let out = call(&run, "read", json!({"path": lib_file})).await.unwrap();
    assert!(out.contains("     1\tpub fn f() {}"), "{out}");
    let canonical = lib.canonicalize().unwrap().join("lib.rs");
    assert!(out.starts_with(&canonical.display().to_string()), "{out}");
}

#[tokio::test]
async fn resolve_explains_unknown_ids() {
    let dir = tempfile::tempdir().unwrap();
    let run = open(dir.path());
    let err = call(
        &run,
        "resolve",
        json!({"edit_id": "edit_9", "action": "accept"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("edit_9") && err.contains("no staged edits are pending"),
        "{err}"
    );
    let err = call(
        &run,
        "resolve",
        json!({"edit_id": "edit_1", "action": "keep"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.is_usage() && err.to_string().contains("accept"),
        "{err}"
    );
}

#[tokio::test]
async fn patch_moves_and_updates_explain_missing_and_existing_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "two\n").unwrap();
    let run = open(dir.path());
    let mv = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-one\n+uno\n*** End Patch\n";
    let err = call(&run, "apply_patch", json!({"patch": mv}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`Move to: b.txt` but that file exists"),
        "{err}"
    );
    let up = "*** Begin Patch\n*** Update File: c.txt\n@@\n-x\n+y\n*** End Patch\n";
    let err = call(&run, "apply_patch", json!({"patch": up}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("to create it use `*** Add File:`"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "two\n"
    );
}

#[tokio::test]
async fn a_move_onto_an_existing_file_works_the_way_its_error_advises() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    std::fs::write(p("a.txt"), "one\n").unwrap();
    std::fs::write(p("b.txt"), "two\n").unwrap();
    let run = open(dir.path());
    let section = "*** Update File: a.txt\n*** Move to: b.txt\n@@\n-one\n+uno\n";
    let err = call(
        &run,
        "apply_patch",
        json!({"patch": format!("*** Begin Patch\n{section}*** End Patch\n")}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "a.txt: `Move to: b.txt` but that file exists; to replace it, put `*** Delete File: \
         b.txt` before the `*** Update File: a.txt` section, or pick another name; nothing was \
         written"
    );

    // A Delete after the section does not count: sections apply in order.
    let late = format!("*** Begin Patch\n{section}*** Delete File: b.txt\n*** End Patch\n");
    let again = call(&run, "apply_patch", json!({"patch": late}))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(again, err);
    assert_eq!(std::fs::read_to_string(p("b.txt")).unwrap(), "two\n");

    // Do what the message says, with the line it quotes.
    let delete = err
        .split('`')
        .find(|s| s.starts_with("*** Delete File:"))
        .unwrap();
    let advised = format!("*** Begin Patch\n{delete}\n{section}*** End Patch\n");
    let out = call(&run, "apply_patch", json!({"patch": advised}))
        .await
        .unwrap();
    assert_eq!(
        out,
        "applied the patch to 2 files:\nD b.txt\nR a.txt -> b.txt\n\nwrite #1: nothing to report"
    );
    assert!(!p("a.txt").exists());
    assert_eq!(std::fs::read_to_string(p("b.txt")).unwrap(), "uno\n");
}

#[tokio::test]
async fn a_patch_naming_a_file_twice_is_refused_before_its_hunks_are_matched() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    let run = open(dir.path());
    // The second section would not apply either; the repeat is the error worth reporting.
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** Update File: a.txt\n@@\n-absent\n+x\n*** End Patch\n";
    let err = call(&run, "apply_patch", json!({"patch": patch}))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "a.txt appears twice in the patch; merge its changes into one section"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n"
    );
}

#[tokio::test]
async fn a_patch_path_ending_in_a_slash_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let run = open(dir.path());
    let patch = "*** Begin Patch\n*** Add File: newdir/\n+x\n*** End Patch\n";
    let err = call(&run, "apply_patch", json!({"patch": patch}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`*** Add File: newdir/` names a folder") && err.contains("`newdir/name.ext`"),
        "{err}"
    );
    assert!(!dir.path().join("newdir").exists());
}

#[tokio::test]
async fn a_one_word_typo_in_old_string_gets_the_nearest_line() {
    let dir = tempfile::tempdir().unwrap();
    let code = "fn main() {\n    let name = \"world\";\n    println!(\"hello {name}\");\n}\n";
    common::write(dir.path(), "src/main.rs", code);
    let run = open(dir.path());
    let err = call(
        &run,
        "edit",
        json!({"path": "src/main.rs", "old_string": "println!(\"helo {name}\");", "new_string": "x"}),
    )
    .await
    .unwrap_err()
    .to_string();
    insta::assert_snapshot!(err);
    // What the error shows is enough to make the edit without reading the file.
    let fixed = err
        .lines()
        .find_map(|l| l.strip_prefix('+'))
        .unwrap()
        .trim();
    let out = call(
        &run,
        "edit",
        json!({"file_path": "src/main.rs", "old_string": fixed, "new_string": "println!(\"bye\");"}),
    )
    .await
    .unwrap();
    // No Cargo.toml here: the result says no language server checked the file.
    assert!(
        out.starts_with("edited src/main.rs: 1 replacement (first at line 3)\n\nwrite #1:\n"),
        "{out}"
    );
    assert!(
        std::fs::read_to_string(dir.path().join("src/main.rs"))
            .unwrap()
            .contains("    println!(\"bye\");\n")
    );
}

#[tokio::test]
async fn missing_paths_suggest_similar_workspace_files() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["src/main.rs", "src/lib.rs", "docs/guide.md"] {
        common::write(dir.path(), f, "x\n");
    }
    let run = open(dir.path());
    let read = call(&run, "read", json!({"file_path": "src/mian.rs"}))
        .await
        .unwrap_err()
        .to_string();
    insta::assert_snapshot!("read_missing", read);
    let abs = dir.path().join("scr/lib.rs").display().to_string();
    let edit = call(
        &run,
        "edit",
        json!({"path": abs, "old_string": "x", "new_string": "y"}),
    )
    .await
    .unwrap_err()
    .to_string();
    insta::assert_snapshot!("edit_missing", edit);
    let patch = "*** Begin Patch\n*** Update File: docs/giude.md\n@@\n-x\n+y\n*** End Patch\n";
    let update = call(&run, "apply_patch", json!({"patch": patch}))
        .await
        .unwrap_err()
        .to_string();
    insta::assert_snapshot!("patch_update_missing", update);
    let nothing = call(&run, "read", json!({"path": "README.md"}))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(nothing, "README.md does not exist; check the path");

    let wrote = call(
        &run,
        "write",
        json!({"file_path": "scr/new.rs", "content": "fn f() {}\n"}),
    )
    .await
    .unwrap();
    assert!(
        wrote.starts_with(
            "created scr/new.rs (1 line); the folder scr/ did not exist and was created (did \
             you mean src/?)\n\nwrite #1:\ndiagnostics after this write:\n  scr/new.rs: \
             unavailable (no language server checked it: rust-analyzer: "
        ) && wrote.contains("no root marker (Cargo.toml)"),
        "{wrote}"
    );
    let again = call(
        &run,
        "write",
        json!({"path": "scr/new.rs", "content": "fn a() {}\nfn b() {}\n"}),
    )
    .await
    .unwrap();
    assert_eq!(
        again,
        "wrote scr/new.rs (2 lines)\n\nwrite #2:\ndiagnostics after this write:\n  scr/new.rs: \
         unavailable (not checked by a language server, as said above)"
    );
}

#[tokio::test]
async fn counts_in_results_are_singular_for_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    let run = open(dir.path());
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch\n";
    let out = call(&run, "apply_patch", json!({"patch": patch}))
        .await
        .unwrap();
    assert_eq!(
        out,
        "applied the patch to 1 file:\nM a.txt\n\nwrite #1: nothing to report"
    );
    let out = call(
        &run,
        "read",
        json!({"path": "a.txt", "offset": 1, "limit": 1}),
    )
    .await
    .unwrap();
    assert_eq!(out, "a.txt (lines 1-1 of 1)\n     1\t1\n");
    let err = call(&run, "read", json!({"path": "a.txt", "offset": 3}))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(err, "offset 3 is past the end: a.txt has 1 line");
}
