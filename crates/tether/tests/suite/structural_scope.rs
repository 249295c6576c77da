//! What ast_grep and ast_edit search by default (no dot-folders, node_modules, virtual
//! environments or caches, unless asked), the footer that says what was left out, the hints of
//! an empty result, and the small print of search results, through a real run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{call, open, write};
use serde_json::json;

/// A workspace with code in the open and in every kind of folder a default search skips.
fn vendored_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/app.py", "call(1)\n");
    write(root, ".venv/pyvenv.cfg", "home = /usr/bin\n");
    write(root, ".venv/lib/site.py", "call(2)\n");
    write(root, "node_modules/pkg/index.py", "call(3)\n");
    write(root, ".github/scripts/ci.py", "call(4)\n");
    write(root, ".git/hooks/x.py", "call(5)\n");
    write(root, ".tether/y.py", "call(6)\n");
    dir
}

#[tokio::test]
async fn vendored_and_hidden_folders_are_skipped_and_counted() {
    let dir = vendored_workspace();
    let run = open(dir.path());
    let out = call(
        &run,
        "ast_grep",
        json!({"pattern": "call($A)", "language": "python"}),
    )
    .await
    .unwrap();
    insta::assert_snapshot!(out);
}

#[tokio::test]
async fn hidden_true_adds_dot_folders_but_not_environments_or_vcs() {
    let dir = vendored_workspace();
    let run = open(dir.path());
    let out = call(
        &run,
        "ast_grep",
        json!({"pattern": "call($A)", "language": "python", "hidden": true}),
    )
    .await
    .unwrap();
    insta::assert_snapshot!(out);
}

#[tokio::test]
async fn a_path_inside_a_skipped_folder_is_searched() {
    let dir = vendored_workspace();
    // Even when .gitignore also names it, as most Python projects' do.
    write(dir.path(), ".gitignore", ".venv\nnode_modules/\n");
    let run = open(dir.path());
    for (path, hit) in [
        (".venv", ".venv/lib/site.py:1 call(2)"),
        (".venv/lib", ".venv/lib/site.py:1 call(2)"),
        ("node_modules/pkg", "node_modules/pkg/index.py:1 call(3)"),
    ] {
        let out = call(
            &run,
            "ast_grep",
            json!({"pattern": "call($A)", "language": "python", "path": path}),
        )
        .await
        .unwrap();
        assert!(
            out.starts_with(&format!("1 match in 1 file\n{hit}\n")),
            "{path}: {out}"
        );
        assert!(!out.contains("skipped"), "{path}: {out}");
    }
}

#[tokio::test]
async fn ast_edit_walks_the_same_way() {
    let dir = vendored_workspace();
    let run = open(dir.path());
    let edit = |hidden: bool| json!({"pattern": "call($A)", "rewrite": "ring($A)", "language": "python", "hidden": hidden});
    let out = call(&run, "ast_edit", edit(false)).await.unwrap();
    assert!(
        out.starts_with("(proposed) 1 replacement in 1 file;"),
        "{out}"
    );
    assert!(
        out.contains("\nskipped 3 folders: 1 virtual environment (.venv), 1 node_modules, 1 dot-folder (.github); "),
        "{out}"
    );
    let out = call(&run, "ast_edit", edit(true)).await.unwrap();
    assert!(
        out.starts_with("(proposed) 2 replacements in 2 files;"),
        "{out}"
    );
    assert!(out.contains("\n+++ b/.github/scripts/ci.py\n"), "{out}");
    assert!(out.contains("\n+++ b/src/app.py\n"), "{out}");
}

#[tokio::test]
async fn an_empty_result_says_whether_structure_or_spelling_is_off() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "h.py",
        "def handler(event):\n    return event\n",
    );
    write(dir.path(), "other.py", "x = 1\n");
    let run = open(dir.path());
    // The name is right, the shape is not: `handler` takes one argument, not two.
    let structure = call(
        &run,
        "ast_grep",
        json!({"pattern": "def handler($A, $B): $$$BODY", "language": "python"}),
    )
    .await
    .unwrap();
    insta::assert_snapshot!("structure", structure);
    let spelling = call(
        &run,
        "ast_grep",
        json!({"pattern": "def handlr($A): $$$BODY", "language": "python"}),
    )
    .await
    .unwrap();
    insta::assert_snapshot!("spelling", spelling);
    // ast_edit gives the same hint when it stages nothing.
    let edit = call(
        &run,
        "ast_edit",
        json!({"pattern": "def handlr($A): $$$BODY", "rewrite": "pass", "language": "python"}),
    )
    .await
    .unwrap();
    assert!(
        edit.starts_with("0 matches; nothing was staged\nhint: no searched file contains `handlr`"),
        "{edit}"
    );
}

#[tokio::test]
async fn empty_captures_show_as_empty_and_counts_agree_in_number() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "c.py", "f()\nf(1, 2)\n");
    let run = open(dir.path());
    let out = call(
        &run,
        "ast_grep",
        json!({"pattern": "f($$$ARGS)", "path": "c.py"}),
    )
    .await
    .unwrap();
    insta::assert_snapshot!(out);
}

#[tokio::test]
async fn errors_name_paths_relative_to_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/a.py", "f(1)\n");
    // Two languages, so a search of the folder needs `language`.
    write(dir.path(), "src/b.rs", "fn f() {}\n");
    write(dir.path(), "notes.txt", "f(1)\n");
    let run = open(dir.path());
    let root = dir.path().canonicalize().unwrap();
    let cases = [
        (
            json!({"pattern": "f($A)", "path": "src/a.py", "language": "rust"}),
            "src/a.py is a python file",
        ),
        (
            json!({"pattern": "f($A)", "path": "notes.txt"}),
            "cannot tell the language of notes.txt",
        ),
        (
            json!({"pattern": "f($A)", "path": "src"}),
            "`language` is required when `path` is a folder (src)",
        ),
    ];
    for (args, says) in cases {
        let err = call(&run, "ast_grep", args).await.unwrap_err().to_string();
        assert!(err.contains(says), "{err}");
        assert!(!err.contains(root.to_str().unwrap()), "{err}");
    }
}

#[tokio::test]
async fn the_description_lists_every_language_and_the_folder_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let run = open(dir.path());
    let spec = run
        .runtime()
        .tools(tether::Surface::Agent)
        .into_iter()
        .find(|t| t.name == "ast_grep")
        .unwrap();
    for id in tether_structural::Lang::ids() {
        assert!(spec.description.contains(id), "{id}: {}", spec.description);
    }
    assert!(
        spec.description
            .contains("whose files are all of one language; a mixed folder needs it")
    );
    assert!(spec.description.contains("`hidden: true`"));
}

#[tokio::test]
async fn a_folder_of_one_language_needs_no_language_argument() {
    let dir = vendored_workspace();
    let root = dir.path();
    write(root, "src/util.py", "call(7)\n");
    // Files in no bundled language do not count; skipped folders (with their .py) neither.
    write(root, "README.md", "call(8)\n");
    write(root, "node_modules/pkg/index.js", "call(9);\n");
    let run = open(root);
    let out = call(&run, "ast_grep", json!({"pattern": "call($A)"}))
        .await
        .unwrap();
    assert!(
        out.starts_with("language inferred: python, every file under . is .py (besides 1 in no bundled language)\n2 matches in 2 files\n"),
        "{out}"
    );
    let args = json!({"pattern": "call($A)", "path": "src", "rewrite": "call2($A)"});
    let out = call(&run, "ast_edit", args).await.unwrap();
    assert!(
        out.contains("language inferred: python, every file under src is .py\n"),
        "{out}"
    );
    // A folder of two languages still needs `language`, and the error says which are there.
    write(root, "web/app.ts", "call(10);\n");
    write(root, "web/more.tsx", "call(11);\n");
    let err = call(&run, "ast_grep", json!({"pattern": "call($A)"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`language` is required")
            && err.contains("python (2 files), tsx (1 file), typescript (1 file)"),
        "{err}"
    );
}
