//! ast_grep, ast_edit and resolve through a real run, in Dart, Python, Rust, TypeScript and C
//! (and a few more), plus the tree-sitter syntax-error write hook.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{call, open, write};
use serde_json::json;
use tether::Run;

/// Accepts the run's first staged edit.
async fn accept_edit_1(run: &Run) {
    call(
        run,
        "resolve",
        json!({"edit_id": "edit_1", "action": "accept"}),
    )
    .await
    .unwrap();
}

/// Stages an ast_edit and accepts it, for tests about what lands on disk.
async fn stage_and_accept(run: &Run, args: serde_json::Value) {
    call(run, "ast_edit", args).await.unwrap();
    accept_edit_1(run).await;
}

async fn grep(run: &Run, pattern: &str, path: &str) -> String {
    call(run, "ast_grep", json!({"pattern": pattern, "path": path}))
        .await
        .unwrap()
}

/// (language, file, source, pattern with a repeated metavariable, expected match line,
/// the line where the repeated capture differs).
const REPEATED: &[(&str, &str, &str, &str, &str)] = &[
    (
        "dart",
        "a.dart",
        "void f() {\n  if (c != null) c.dispose();\n  if (c != null) d.dispose();\n}\n",
        "if ($X != null) $X.dispose()",
        "a.dart:2 ",
    ),
    (
        "python",
        "a.py",
        "x = a + a\ny = a + b\n",
        "$A + $A",
        "a.py:1 ",
    ),
    (
        "rust",
        "a.rs",
        "fn f() {\n    let x = g(a, a);\n    let y = g(a, b);\n}\n",
        "g($X, $X)",
        "a.rs:2 ",
    ),
    (
        "typescript",
        "a.ts",
        "const x = a === a;\nconst y = a === b;\n",
        "$X === $X",
        "a.ts:1 ",
    ),
    (
        "c",
        "a.c",
        "int f(int a, int b) {\n  int x = max(a, a);\n  int y = max(a, b);\n  return x + y;\n}\n",
        "max($X, $X)",
        "a.c:2 ",
    ),
];

#[tokio::test]
async fn repeated_metavariables_must_capture_the_same_text() {
    for (lang, file, src, pattern, hit) in REPEATED {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), file, src);
        let run = open(dir.path());
        let out = grep(&run, pattern, file).await;
        assert!(out.starts_with("1 match in 1 file\n"), "{lang}: {out}");
        assert!(out.contains(hit), "{lang}: {out}");
    }
}

#[tokio::test]
async fn no_match_inside_strings_or_comments_but_spacing_does_not_matter() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "a.py",
            "s = 'foo(1)'  # foo(2)\nfoo(  3 )\nfoo(\n  4)\n",
            "foo($A)",
        ),
        (
            "a.rs",
            "// foo(1)\nfn f() { let s = \"foo(2)\"; foo( 3 ); foo(\n 4); }\n",
            "foo($A)",
        ),
        (
            "a.ts",
            "// foo(1)\nconst s = 'foo(2)'; /* foo(5) */ foo( 3 );\nfoo(\n 4);\n",
            "foo($A)",
        ),
        (
            "a.c",
            "/* foo(1) */ void f(void) { char *s = \"foo(2)\"; foo( 3 ); foo(\n 4); }\n",
            "foo($A)",
        ),
        (
            "a.dart",
            "void f() { var s = 'foo(1)'; /* foo(2) */ foo( 3 ); foo(\n 4); }\n",
            "foo($A)",
        ),
    ];
    for (file, src, pattern) in cases {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), file, src);
        let run = open(dir.path());
        let out = grep(&run, pattern, file).await;
        assert!(out.starts_with("2 matches in 1 file\n"), "{file}: {out}");
        assert!(
            out.contains("$A = 3") && out.contains("$A = 4"),
            "{file}: {out}"
        );
    }
}

#[tokio::test]
async fn dart_call_pattern_matches_calls_not_signatures() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "lib/w.dart",
        "class W {\n  void dispose(int x) {}\n  void run() {\n    dispose(ctrl);\n  }\n}\n",
    );
    let run = open(dir.path());
    let out = grep(&run, "dispose($X)", "lib/w.dart").await;
    assert!(
        out.starts_with("1 match in 1 file\nlib/w.dart:4 dispose(ctrl)"),
        "{out}"
    );
    assert!(!out.contains("w.dart:2"), "{out}");
}

#[tokio::test]
async fn unparseable_patterns_are_errors_that_say_where() {
    let cases = [
        ("dart", "void dispose("),
        ("python", "def f(:"),
        ("rust", "fn f( {"),
        ("typescript", "const = ;"),
        ("c", "int f(;"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let run = open(dir.path());
    for (lang, pattern) in cases {
        let err = call(
            &run,
            "ast_grep",
            json!({"pattern": pattern, "language": lang}),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("unparseable"), "{lang}: {err}");
        assert!(
            err.contains(&format!("unparseable {lang} pattern")),
            "{lang}: {err}"
        );
        assert!(err.contains("line 1, column"), "{lang}: {err}");
    }
}

#[tokio::test]
async fn language_is_required_for_a_directory_and_ids_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let run = open(dir.path());
    let err = call(&run, "ast_grep", json!({"pattern": "f($A)"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`language` is required") && err.contains("dart"),
        "{err}"
    );
    let err = call(
        &run,
        "ast_grep",
        json!({"pattern": "f($A)", "language": "cobol"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("unknown language `cobol`") && err.contains("python"),
        "{err}"
    );
    write(dir.path(), "a.py", "f(1)\n");
    let args = json!({"pattern": "f($A)", "path": "a.py", "language": "rust"});
    let err = call(&run, "ast_grep", args).await.unwrap_err().to_string();
    assert!(err.contains("is a python file by its extension"), "{err}");
    let args = json!({"pattern": "f($A)", "path": "a.py", "max_results": 0});
    let err = call(&run, "ast_grep", args).await.unwrap_err().to_string();
    assert!(err.contains("at least 1"), "{err}");
}

#[tokio::test]
async fn the_cap_says_how_many_exist_and_where() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..3 {
        let body: String = (0..10).map(|j| format!("log({j})\n")).collect();
        write(dir.path(), &format!("m{i}.py"), &body);
    }
    let run = open(dir.path());
    let out = call(
        &run,
        "ast_grep",
        json!({"pattern": "log($A)", "language": "python", "max_results": 4}),
    )
    .await
    .unwrap();
    assert!(
        out.starts_with("30 matches in 3 files\nm0.py:1 log(0)"),
        "{out}"
    );
    assert!(
        out.contains("showing the first 4 of 30 matches (in 3 files)"),
        "{out}"
    );
    assert_eq!(out.matches("m0.py:").count(), 4, "{out}");
    assert!(out.contains("searched 3 python files"), "{out}");
}

#[tokio::test]
async fn gitignore_is_respected_outside_a_git_repository() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".gitignore", "build/\n");
    write(dir.path(), "src/a.rs", "fn f() { g(1); }\n");
    write(dir.path(), "build/gen.rs", "fn f() { g(2); }\n");
    let run = open(dir.path());
    let out = call(
        &run,
        "ast_grep",
        json!({"pattern": "g($A)", "language": "rust"}),
    )
    .await
    .unwrap();
    assert!(out.starts_with("1 match in 1 file\nsrc/a.rs:1"), "{out}");
    assert!(out.contains("searched 1 rust file "), "{out}");
}

#[tokio::test]
async fn the_cache_never_serves_a_stale_tree() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.py", "old(1)\n");
    let run = open(dir.path());
    assert!(grep(&run, "old($A)", "a.py").await.starts_with("1 match"));
    let warm = grep(&run, "old($A)", "a.py").await;
    assert!(warm.contains("1 from cache"), "{warm}");
    // Changed behind the run's back, same length, same mtime second.
    write(dir.path(), "a.py", "new(1)\n");
    let out = grep(&run, "new($A)", "a.py").await;
    assert!(out.starts_with("1 match"), "{out}");
    assert!(grep(&run, "old($A)", "a.py").await.starts_with("0 matches"));
}

const TS_SRC: &str = "function f() {\n  dispose(a);\n  if (x) {\n    dispose(b.c);\n  }\n}\n";

#[tokio::test]
async fn stage_then_accept_writes_every_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/one.ts", TS_SRC);
    write(dir.path(), "src/two.ts", "dispose(z);\n");
    let run = open(dir.path());
    let out = call(
        &run,
        "ast_edit",
        json!({"pattern": "dispose($X)", "rewrite": "$X.dispose()", "language": "typescript"}),
    )
    .await
    .unwrap();
    assert!(
        out.starts_with("(proposed) 3 replacements in 2 files"),
        "{out}"
    );
    assert!(out.contains("edit_id \"edit_1\""), "{out}");
    assert!(out.contains("-  dispose(a);\n+  a.dispose();"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/one.ts")).unwrap(),
        TS_SRC
    );
    let done = call(
        &run,
        "resolve",
        json!({"edit_id": "edit_1", "action": "accept"}),
    )
    .await
    .unwrap();
    assert!(done.contains("wrote 2 files"), "{done}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/one.ts")).unwrap(),
        "function f() {\n  a.dispose();\n  if (x) {\n    b.c.dispose();\n  }\n}\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/two.ts")).unwrap(),
        "z.dispose();\n"
    );
    let again = call(
        &run,
        "resolve",
        json!({"edit_id": "edit_1", "action": "accept"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(again.contains("already accepted"), "{again}");
}

#[tokio::test]
async fn a_change_overlapping_a_later_write_rejects_the_whole_change() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.py", "old(1)\n");
    write(dir.path(), "b.py", "old(2)\n");
    let run = open(dir.path());
    let out = call(
        &run,
        "ast_edit",
        json!({"pattern": "old($A)", "rewrite": "new($A)", "language": "python"}),
    )
    .await
    .unwrap();
    assert!(
        out.starts_with("(proposed) 2 replacements in 2 files"),
        "{out}"
    );
    write(dir.path(), "b.py", "old(2)\nother()\n");
    let err = call(
        &run,
        "resolve",
        json!({"edit_id": "edit_1", "action": "accept"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("edit_1 was not written: in b.py, its edit of line 1 overlaps")
            && err.contains("outside this run"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.py")).unwrap(),
        "old(1)\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.py")).unwrap(),
        "old(2)\nother()\n"
    );
    let gone = call(
        &run,
        "resolve",
        json!({"edit_id": "edit_1", "action": "discard"}),
    )
    .await
    .unwrap();
    assert!(gone.contains("discarded edit_1"), "{gone}");
}

#[tokio::test]
async fn stage_then_discard_writes_nothing_and_unknown_ids_list_pending() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.c", "void f(void) { free(p); }\n");
    let run = open(dir.path());
    let args = json!({"pattern": "free($P)", "rewrite": "release($P)", "path": "a.c"});
    call(&run, "ast_edit", args.clone()).await.unwrap();
    call(&run, "ast_edit", args).await.unwrap();
    let err = call(
        &run,
        "resolve",
        json!({"edit_id": "edit_7", "action": "accept"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("edit_1, edit_2"), "{err}");
    let out = call(
        &run,
        "resolve",
        json!({"edit_id": "edit_1", "action": "discard"}),
    )
    .await
    .unwrap();
    assert!(out.contains("nothing was written"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.c")).unwrap(),
        "void f(void) { free(p); }\n"
    );
}

#[tokio::test]
async fn multi_line_rewrites_follow_the_site_and_nested_matches_wait() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.rs",
        "fn f() {\n    if ok {\n        wrap(wrap(x));\n    }\n}\n",
    );
    let run = open(dir.path());
    let out = call(
        &run,
        "ast_edit",
        json!({"pattern": "wrap($A)", "rewrite": "{\n    let v = $A;\n    v\n}", "path": "a.rs"}),
    )
    .await
    .unwrap();
    assert!(
        out.contains("1 inner match inside a replaced match was left"),
        "{out}"
    );
    accept_edit_1(&run).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.rs")).unwrap(),
        "fn f() {\n    if ok {\n        {\n            let v = wrap(x);\n            v\n        };\n    }\n}\n"
    );
}

#[tokio::test]
async fn syntax_check_false_in_the_workspace_config_turns_the_report_off() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "tether.toml",
        "[structural]\nsyntax_check = false\n",
    );
    let run = open(dir.path());
    let out = call(
        &run,
        "write",
        json!({"path": "new.py", "content": "def f(:\n    return 1\n"}),
    )
    .await
    .unwrap();
    assert!(!out.contains("syntax check"), "{out}");
}

/// How many files the second of two identical searches took from the tree cache.
async fn cached_on_the_second_search(config: &str) -> usize {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tether.toml", config);
    let body: String = (0..2000).map(|i| format!("x_{i} = f({i})\n")).collect();
    for n in 0..20 {
        write(dir.path(), &format!("m{n}.py"), &body);
    }
    let run = open(dir.path());
    let args = json!({"pattern": "f($A)", "language": "python"});
    call(&run, "ast_grep", args.clone()).await.unwrap();
    let out = call(&run, "ast_grep", args).await.unwrap();
    let cached = out
        .split(" from cache")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok());
    cached.unwrap_or_else(|| panic!("no cache count in: {out}"))
}

#[tokio::test]
async fn cache_mb_in_the_workspace_config_bounds_the_tree_cache() {
    // Each file's tree is estimated well above 1 MiB, so a 1 MiB cache keeps almost none.
    assert_eq!(cached_on_the_second_search("").await, 20);
    let small = cached_on_the_second_search("[structural]\ncache_mb = 1\n").await;
    assert!(small <= 1, "{small} trees were kept in a 1 MiB cache");
}

#[tokio::test]
async fn writes_report_the_syntax_status_of_each_file_they_touch() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "old.py", "x = 1\n\ndef broken(:\n    pass\n");
    let run = open(dir.path());
    let out = call(
        &run,
        "write",
        json!({"path": "new.py", "content": "def f(:\n    return 1\n"}),
    )
    .await
    .unwrap();
    assert!(out.contains("new.py: 1 new syntax error"), "{out}");
    assert!(out.contains("line 1 (new): "), "{out}");
    // An old error moved down by an edit above it is not new, but it is still there.
    let out = call(
        &run,
        "edit",
        json!({"path": "old.py", "old_string": "x = 1", "new_string": "x = 1\ny = 2\nz = 3"}),
    )
    .await
    .unwrap();
    assert!(!out.contains("new"), "{out}");
    assert!(
        out.contains("old.py: still 1 syntax error (there before this write)")
            && out.contains("line 5: missing"),
        "{out}"
    );
    // A failed fix that only changes the error's shape is still broken, not newly broken.
    let out = call(
        &run,
        "edit",
        json!({"path": "new.py", "old_string": "def f(:", "new_string": "def f(x:"}),
    )
    .await
    .unwrap();
    assert!(
        out.contains("new.py: 1 syntax error changed (one of its kind was at this place"),
        "{out}"
    );
    assert!(!out.contains("(new)"), "{out}");
    let out = call(
        &run,
        "edit",
        json!({"path": "new.py", "old_string": "def f(x:", "new_string": "def f(x):"}),
    )
    .await
    .unwrap();
    assert!(
        out.contains("new.py: fixed 1 syntax error; none left"),
        "{out}"
    );
    // A clean file that stays clean says nothing.
    let out = call(
        &run,
        "edit",
        json!({"path": "new.py", "old_string": "return 1", "new_string": "return 2"}),
    )
    .await
    .unwrap();
    assert!(!out.contains("syntax check"), "{out}");
}

#[tokio::test]
async fn fixing_one_of_two_errors_says_what_is_left() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "two.py",
        "def a(:\n    pass\n\nitems = [1, 2\nprint(items)\n",
    );
    let run = open(dir.path());
    let out = call(
        &run,
        "edit",
        json!({"path": "two.py", "old_string": "def a(:", "new_string": "def a():"}),
    )
    .await
    .unwrap();
    // The syntax section alone: the language server's part depends on what is installed.
    let report = &out[out.find("syntax check").unwrap()..];
    let report = report.split("\ndiagnostics after").next().unwrap();
    insta::assert_snapshot!(report);
}

#[tokio::test]
async fn binary_and_huge_files_are_skipped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ok.py", "f(1)\n");
    std::fs::write(dir.path().join("blob.py"), b"f(2)\n\0\0\0binary").unwrap();
    let huge: String = "f(3)\n".repeat(500_000); // 2.5 MB
    write(dir.path(), "huge.py", &huge);
    let run = open(dir.path());
    let out = call(
        &run,
        "ast_grep",
        json!({"pattern": "f($A)", "language": "python"}),
    )
    .await
    .unwrap();
    assert!(out.starts_with("1 match in 1 file\nok.py:1"), "{out}");
    assert!(out.contains("skipped 1 over 2 MiB and 1 binary"), "{out}");
}

#[tokio::test]
async fn rewrites_keep_crlf_line_endings() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "w.py", "if x:\r\n    old(a)\r\n");
    let run = open(dir.path());
    let args = json!({"pattern": "old($A)", "rewrite": "new($A)\nnew($A)", "path": "w.py"});
    stage_and_accept(&run, args).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("w.py")).unwrap(),
        "if x:\r\n    new(a)\r\n    new(a)\r\n"
    );
}

#[tokio::test]
async fn long_previews_say_what_they_cut() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (0..300).map(|i| format!("old({i})\n\n\n\n")).collect();
    write(dir.path(), "many.py", &body);
    let run = open(dir.path());
    let out = call(
        &run,
        "ast_edit",
        json!({"pattern": "old($A)", "rewrite": "new($A)", "path": "many.py"}),
    )
    .await
    .unwrap();
    assert!(
        out.starts_with("(proposed) 300 replacements in 1 file"),
        "{out}"
    );
    // Changes three lines apart would share their context in one hunk too long to show: it
    // is split, and the list says how many of the pieces were left out.
    assert!(
        out.contains(
            "\n  many.py: 300 replacements (diff cut: 234 of 300 hunks not shown, 702 lines)\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("\n@@ -1 +1 @@\n-old(0)\n+new(0)\n@@ -5 +5 @@\n"),
        "{out}"
    );
    assert!(
        out.contains("the staged change holds every file and line\n\nwould bring: "),
        "{out}"
    );
}

#[tokio::test]
async fn multi_line_strings_in_patterns_keep_their_text() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "d.py",
        "x = \"\"\"a\nb\"\"\"\ny = \"\"\"a\n    b\"\"\"\n",
    );
    let run = open(dir.path());
    let out = grep(&run, "x = \"\"\"a\nb\"\"\"", "d.py").await;
    assert!(out.starts_with("1 match in 1 file\nd.py:1 "), "{out}");
}

#[tokio::test]
async fn multi_captures_show_their_named_items_and_lenient_metavariables_work() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.rs",
        "fn f(x: u8) -> u8 {\n    match x {\n        0 => 1,\n        _ => 2,\n    }\n}\nfn g() { h(a, b, c); }\n",
    );
    let run = open(dir.path());
    let out = grep(&run, "h($$$ARGS)", "m.rs").await;
    assert!(out.contains("$$$ARGS = a, b, c"), "{out}");
    // `$$$ARMS` is not a valid match arm, yet it clearly stands for the arms.
    let out = grep(&run, "match $E { $$$ARMS }", "m.rs").await;
    assert!(out.starts_with("1 match in 1 file\nm.rs:2 "), "{out}");
    assert!(out.contains("$E = x"), "{out}");
}

#[tokio::test]
async fn c_like_statement_patterns_take_any_body() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "s.c",
        "int f(int x) {\n  if (x) { g(); h(); }\n  if (x) return 1;\n  if (x) g();\n  while (x) { x--; }\n  return 0;\n}\n",
    );
    let run = open(dir.path());
    let out = grep(&run, "if ($C) $S", "s.c").await;
    assert!(out.starts_with("3 matches in 1 file\n"), "{out}");
    let out = grep(&run, "if ($C) { $$$B }", "s.c").await;
    assert!(out.starts_with("1 match in 1 file\ns.c:2 "), "{out}");
    assert!(out.contains("$$$B = g();, h();"), "{out}");
    let out = grep(&run, "while ($C) { $$$B }", "s.c").await;
    assert!(out.starts_with("1 match in 1 file\ns.c:5 "), "{out}");
}

#[tokio::test]
async fn non_utf8_files_count_as_failed_not_searched() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ok.py", "f(1)\n");
    std::fs::write(dir.path().join("latin1.py"), b"f(2)  # caf\xe9\n").unwrap();
    std::fs::write(dir.path().join("other.py"), b"g()  # caf\xe9\n").unwrap();
    let run = open(dir.path());
    let out = call(
        &run,
        "ast_grep",
        json!({"pattern": "f($A)", "language": "python"}),
    )
    .await
    .unwrap();
    assert!(out.contains("searched 1 python file "), "{out}");
    assert!(
        out.contains("; 2 unreadable or not UTF-8, not searched"),
        "{out}"
    );
}

#[tokio::test]
async fn rewrites_in_tab_indented_files_use_tabs() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.py", "def outer():\n\tif x:\n\t\tprint(a)\n");
    let run = open(dir.path());
    let args = json!({"pattern": "print($X)", "rewrite": "if debug:\n    log($X)\ndone()", "path": "t.py"});
    stage_and_accept(&run, args).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("t.py")).unwrap(),
        "def outer():\n\tif x:\n\t\tif debug:\n\t\t    log(a)\n\t\tdone()\n"
    );
    let err = call(
        &run,
        "ast_edit",
        json!({"pattern": "log($X)", "rewrite": "log($Y)", "path": "t.py"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("`$Y`, which the pattern does not define"),
        "{err}"
    );
}

#[tokio::test]
async fn multi_line_captures_keep_their_shape_when_moved() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.ts",
        "function f() {\n  run(a, {\n    k: 1,\n  });\n}\n",
    );
    let run = open(dir.path());
    let args = json!({"pattern": "run($A, $B)", "rewrite": "go(\n  $B,\n  $A,\n)", "path": "m.ts"});
    stage_and_accept(&run, args).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("m.ts")).unwrap(),
        "function f() {\n  go(\n    {\n      k: 1,\n    },\n    a,\n  );\n}\n"
    );
}

/// A configuration file gets no language server's check, and the write says so; its syntax
/// check says clean out loud, or that there is no grammar for it.
#[tokio::test]
async fn a_configuration_file_write_says_what_checked_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = open(dir.path());
    let json_out = call(
        &run,
        "write",
        json!({"path": "cfg.json", "content": "{\"a\": 1}\n"}),
    )
    .await
    .unwrap();
    assert!(
        json_out.contains("syntax check (tree-sitter) after this write:\n  cfg.json: clean"),
        "{json_out}"
    );
    // JSON's server is in the catalog, not installed here: the write names how to get it.
    assert!(
        json_out.contains("cfg.json: unavailable (no language server checked it:")
            && json_out.contains("`tether install vscode-json-language-server`"),
        "{json_out}"
    );
    let toml_out = call(
        &run,
        "write",
        json!({"path": "cfg.toml", "content": "a = 1\n"}),
    )
    .await
    .unwrap();
    assert!(toml_out.contains("cfg.toml: unavailable (tether has no grammar for this kind of file, so its syntax was not checked)"), "{toml_out}");
    // TOML's server is in the catalog too; an INI file has none.
    assert!(toml_out.contains("`tether install tombi`"), "{toml_out}");
    let ini_out = call(
        &run,
        "write",
        json!({"path": "cfg.ini", "content": "[a]\nb = 1\n"}),
    )
    .await
    .unwrap();
    assert!(
        ini_out.contains("cfg.ini: unavailable (no language server checks .ini files)"),
        "{ini_out}"
    );
    let yaml_out = call(
        &run,
        "write",
        json!({"path": "ci.yml", "content": "on: [push]\n"}),
    )
    .await
    .unwrap();
    assert!(yaml_out.contains("ci.yml: clean"), "{yaml_out}");
}

#[tokio::test]
async fn an_ignore_rule_that_excludes_every_file_is_named() {
    // An unpacked release tarball (no git) whose .gitignore starts with `/*`.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".gitignore",
        "# build output\n/*\n!.gitignore\n",
    );
    write(dir.path(), "fs/inode.c", "int f(void) { return g(1); }\n");
    write(dir.path(), "fs/super.c", "int h(void) { return g(2); }\n");
    let run = open(dir.path());
    let out = call(
        &run,
        "ast_grep",
        json!({"pattern": "g($A)", "language": "c"}),
    )
    .await
    .unwrap();
    assert!(out.contains("searched 0 c files"), "{out}");
    assert!(
        out.contains(
            "all 2 files of this language here are excluded by ignore files: the first by the \
             rule `/*` (.gitignore, line 2)"
        ),
        "{out}"
    );
    // Named in `path`, the folder below the rule's reach is searched.
    let out = call(
        &run,
        "ast_grep",
        json!({"pattern": "g($A)", "language": "c", "path": "fs"}),
    )
    .await
    .unwrap();
    assert!(out.starts_with("2 matches in 2 files"), "{out}");
}
