//! The patch parser's tests, kept apart so the parser stays short.

use super::*;

fn ctx(s: &str) -> HunkLine {
    HunkLine::Context(s.to_string())
}
fn rm(s: &str) -> HunkLine {
    HunkLine::Remove(s.to_string())
}
fn add(s: &str) -> HunkLine {
    HunkLine::Add(s.to_string())
}

#[test]
fn parses_all_operations() {
    let text = "\
*** Begin Patch
*** Add File: path/new.txt
+line one
+line two
*** Update File: src/lib.rs
*** Move to: src/renamed.rs
@@ fn main() {
 context line
-removed line
+added line
 context line
@@
 more context
-x
+y
*** End of File
*** Delete File: old.txt
*** End Patch
";
    let patch = parse_patch(text).unwrap();
    assert_eq!(
        patch.files,
        vec![
            FilePatch::Add {
                path: "path/new.txt".into(),
                content: "line one\nline two\n".into(),
            },
            FilePatch::Update {
                path: "src/lib.rs".into(),
                move_to: Some("src/renamed.rs".into()),
                hunks: vec![
                    Hunk {
                        header: Some("fn main() {".into()),
                        lines: vec![
                            ctx("context line"),
                            rm("removed line"),
                            add("added line"),
                            ctx("context line"),
                        ],
                        end_of_file: false,
                    },
                    Hunk {
                        header: None,
                        lines: vec![ctx("more context"), rm("x"), add("y")],
                        end_of_file: true,
                    },
                ],
            },
            FilePatch::Delete {
                path: "old.txt".into()
            },
        ]
    );
}

#[test]
fn tolerates_envelope_whitespace_crlf_and_headerless_first_hunk() {
    let text = "\n  \n  *** Begin Patch  \r\n*** Update File: a.txt\r\n-old\r\n+new\r\n\t*** End Patch \n\n";
    let patch = parse_patch(text).unwrap();
    assert_eq!(
        patch.files,
        vec![FilePatch::Update {
            path: "a.txt".into(),
            move_to: None,
            hunks: vec![Hunk {
                header: None,
                lines: vec![rm("old"), add("new")],
                end_of_file: false,
            }],
        }]
    );
}

#[test]
fn empty_line_in_hunk_is_empty_context() {
    let text = "*** Begin Patch\n*** Update File: a\n@@\n a\n\n-b\n*** End Patch";
    let patch = parse_patch(text).unwrap();
    let FilePatch::Update { hunks, .. } = &patch.files[0] else {
        panic!("expected update");
    };
    assert_eq!(hunks[0].lines, vec![ctx("a"), ctx(""), rm("b")]);
}

#[test]
fn add_file_edge_cases() {
    let text = "*** Begin Patch\n*** Add File: empty.txt\n*** Add File: gap.txt\n+a\n\n+b\n\n*** End Patch";
    let patch = parse_patch(text).unwrap();
    assert_eq!(
        patch.files,
        vec![
            FilePatch::Add {
                path: "empty.txt".into(),
                content: String::new()
            },
            FilePatch::Add {
                path: "gap.txt".into(),
                content: "a\n\nb\n".into()
            },
        ]
    );
}

#[test]
fn unified_diff_ranges_in_header_are_ignored() {
    assert_eq!(
        parse_header(" -1,3 +1,4 @@ fn main() {"),
        Some("fn main() {".into())
    );
    assert_eq!(parse_header(" -1,3 +1,4 @@"), None);
    assert_eq!(parse_header(" -1 +1"), None);
    assert_eq!(parse_header("  impl Foo  "), Some("impl Foo".into()));
    assert_eq!(parse_header(""), None);
}

#[test]
fn missing_begin_is_an_error() {
    let err = parse_patch("*** Update File: a\n-x\n*** End Patch\n").unwrap_err();
    assert_eq!(err.line, 1);
    assert!(err.message.contains("*** Begin Patch"), "{err}");

    let err = parse_patch("Here is the patch:\n*** Begin Patch\n*** Delete File: a\n*** End Patch")
        .unwrap_err();
    assert_eq!(err.line, 1);

    let err = parse_patch("").unwrap_err();
    assert_eq!(err.line, 1);
}

#[test]
fn a_unified_diff_is_named_and_the_format_shown() {
    let diff =
        "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n";
    let err = parse_patch(diff).unwrap_err();
    assert!(
        err.message
            .contains("this is a unified diff (`--- a/app.py`)"),
        "{err}"
    );
    assert!(
        err.message.ends_with("*** Begin Patch\n*** Update File: src/app.py\n-    return 1\n+    return 2\n*** End Patch"),
        "{err}"
    );
    // The example shown is itself a patch this parser takes.
    assert!(parse_patch(EXAMPLE).is_ok());
}

#[test]
fn missing_end_is_an_error() {
    let err = parse_patch("*** Begin Patch\n*** Delete File: a\n").unwrap_err();
    assert_eq!(err.line, 2);
    assert!(err.message.contains("*** End Patch"), "{err}");

    let err = parse_patch("*** Begin Patch\n").unwrap_err();
    assert!(err.message.contains("*** End Patch"), "{err}");
}

#[test]
fn text_after_end_is_an_error() {
    let err =
        parse_patch("*** Begin Patch\n*** Delete File: a\n*** End Patch\n\nDone!\n").unwrap_err();
    assert_eq!(err.line, 5);
    assert!(err.message.contains("after"), "{err}");

    let err =
        parse_patch("*** Begin Patch\n*** Delete File: a\n*** End Patch\nmore\n*** End Patch")
            .unwrap_err();
    assert_eq!(err.line, 4);
}

#[test]
fn garbage_line_inside_hunk_names_its_line() {
    let text = "*** Begin Patch\n*** Update File: a.rs\n@@\n keep\n-old\nthis is not a hunk line\n+new\n*** End Patch";
    let err = parse_patch(text).unwrap_err();
    assert_eq!(err.line, 6);
    assert!(err.message.contains("this is not a hunk line"), "{err}");
    assert!(err.to_string().starts_with("patch line 6: "), "{err}");
}

#[test]
fn structural_errors() {
    let cases: &[(&str, usize)] = &[
        // Update with neither hunks nor move.
        ("*** Begin Patch\n*** Update File: a\n*** End Patch", 2),
        // `@@` with no lines.
        (
            "*** Begin Patch\n*** Update File: a\n@@ x\n*** End Patch",
            3,
        ),
        // End of File with no hunk lines.
        (
            "*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch",
            3,
        ),
        // Hunk lines after End of File without a new `@@`.
        (
            "*** Begin Patch\n*** Update File: a\n-x\n*** End of File\n+y\n*** End Patch",
            5,
        ),
        // Move not directly after Update.
        (
            "*** Begin Patch\n*** Update File: a\n-x\n*** Move to: b\n*** End Patch",
            4,
        ),
        // Missing path.
        ("*** Begin Patch\n*** Delete File:   \n*** End Patch", 2),
        // Unknown operation.
        ("*** Begin Patch\n*** Rename File: a\n*** End Patch", 2),
        // Non-'+' line in Add File.
        ("*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch", 4),
        // Content after Delete File.
        ("*** Begin Patch\n*** Delete File: a\n-x\n*** End Patch", 3),
        // No operations at all.
        ("*** Begin Patch\n\n*** End Patch", 3),
    ];
    for (text, line) in cases {
        let err = parse_patch(text).unwrap_err();
        assert_eq!(err.line, *line, "{text:?}: {err}");
    }
}

#[test]
fn folder_paths_are_refused_for_every_operation() {
    let cases: &[(&str, usize, &str)] = &[
        ("*** Add File: newdir/\n+x", 2, "`*** Add File: newdir/`"),
        ("*** Delete File: src/", 2, "`*** Delete File: src/`"),
        ("*** Update File: a/b/\n-x", 2, "`*** Update File: a/b/`"),
        (
            "*** Update File: a\n*** Move to: out/\n-x",
            3,
            "`*** Move to: out/`",
        ),
        ("*** Add File: src/.\n+x", 2, "ends in `.`"),
        ("*** Add File: src/x/..\n+x", 2, "ends in `..`"),
        ("*** Add File: /\n+x", 2, "`src/name.ext`"),
    ];
    for (ops, line, needle) in cases {
        let text = format!("*** Begin Patch\n{ops}\n*** End Patch");
        let err = parse_patch(&text).unwrap_err();
        assert_eq!(err.line, *line, "{text:?}: {err}");
        assert!(
            err.message.contains(needle) && err.message.contains("the path of a file"),
            "{text:?}: {err}"
        );
    }
    let err = parse_patch("*** Begin Patch\n*** Add File: newdir/\n+x\n*** End Patch").unwrap_err();
    assert_eq!(
        err.to_string(),
        "patch line 2: `*** Add File: newdir/` names a folder (the path ends in `/`), but \
         every patch operation needs the path of a file; give one such as `newdir/name.ext`"
    );
    // Dots inside a name, or a folder part of `..`, are fine.
    let ok =
        "*** Begin Patch\n*** Add File: a/../b.txt\n+x\n*** Add File: .env.\n+y\n*** End Patch";
    assert_eq!(parse_patch(ok).unwrap().files.len(), 2);
}

#[test]
fn blank_lines_between_sections_do_not_start_hunks() {
    let text = "*** Begin Patch\n*** Update File: a\n*** Move to: b\n\n*** Update File: c\n-x\n*** End of File\n\n*** Delete File: d\n*** End Patch";
    let patch = parse_patch(text).unwrap();
    assert_eq!(
        patch.files,
        vec![
            FilePatch::Update {
                path: "a".into(),
                move_to: Some("b".into()),
                hunks: vec![]
            },
            FilePatch::Update {
                path: "c".into(),
                move_to: None,
                hunks: vec![Hunk {
                    header: None,
                    lines: vec![rm("x")],
                    end_of_file: true
                }]
            },
            FilePatch::Delete { path: "d".into() },
        ]
    );
}

#[test]
fn move_only_update_is_allowed() {
    let patch =
        parse_patch("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch").unwrap();
    assert_eq!(
        patch.files,
        vec![FilePatch::Update {
            path: "a".into(),
            move_to: Some("b".into()),
            hunks: vec![]
        }]
    );
}

#[test]
fn parser_never_panics_on_odd_input() {
    let pieces = [
        "*** Begin Patch",
        "*** End Patch",
        "*** Update File: a",
        "*** Add File: b",
        "*** Delete File: c",
        "*** Move to: d",
        "*** End of File",
        "@@",
        "@@ x",
        " ctx",
        "-rm",
        "+add",
        "",
        "  ",
        "junk",
        "\r",
        "***",
        "é",
        "@@ -1 +1 @@",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..3000 {
        let mut text = String::new();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let n = (seed % 9) as usize;
        let mut s = seed;
        for _ in 0..n {
            text.push_str(pieces[(s % pieces.len() as u64) as usize]);
            text.push('\n');
            s /= pieces.len() as u64;
            if s == 0 {
                s = seed.rotate_left(17);
            }
        }
        let _ = parse_patch(&text);
    }
}

#[test]
fn parse_then_apply_end_to_end() {
    let text = "*** Begin Patch\n*** Update File: f.txt\n@@ fn b\n-    old();\n+    new();\n*** End Patch\n";
    let patch = parse_patch(text).unwrap();
    let FilePatch::Update { hunks, .. } = &patch.files[0] else {
        panic!("expected update");
    };
    let original = "fn a\n    old();\nfn b\n    old();\n";
    assert_eq!(
        apply_hunks(original, hunks).unwrap(),
        "fn a\n    old();\nfn b\n    new();\n"
    );
}
