//! Diagnostics of a change before it is written, with the real servers: `edit` with
//! `dry_run` stages the change and says what it would bring, in the file and in a file that
//! imports it, with the disk untouched and the server answering for the disk's text again
//! afterwards; `resolve accept` writes it and reports the same problems as this write's, and
//! an accept onto a file changed since the preview says its verdict is stale.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::call_text as call;

use serde_json::json;

const A_PY: &str = "def scale(x: int) -> int:\n    return x * 2\n";
const B_PY: &str = "from a import scale\n\nprint(scale(3))\n";

/// A pyright project under `dir/ws` with a.py and b.py, which imports it; its path.
fn pyright_project(dir: &std::path::Path) -> std::path::PathBuf {
    let ws = dir.join("ws");
    common::write(
        &ws,
        "pyproject.toml",
        "[project]\nname = \"w\"\nversion = \"0.1\"\n",
    );
    common::write(&ws, "a.py", A_PY);
    common::write(&ws, "b.py", B_PY);
    ws
}

/// `lsp diagnostics` of `file`, as text.
async fn diagnostics_of(run: &tether::Run, file: &str) -> String {
    call(run, "lsp", json!({"action": "diagnostics", "file": file})).await
}

/// `edit`'s arguments for a dry run that replaces `old` by `new` in `path`.
fn dry_edit(path: &str, old: &str, new: &str) -> serde_json::Value {
    json!({"path": path, "old_string": old, "new_string": new, "dry_run": true})
}

/// `resolve` with `action` on the staged change `id`, as text.
async fn resolve(run: &tether::Run, id: &str, action: &str) -> String {
    call(run, "resolve", json!({"edit_id": id, "action": action})).await
}

/// A run over `dir/ws` whose writes wait `wait_ms` for their diagnostics.
fn run_waiting(dir: &std::path::Path, wait_ms: u64) -> tether::Run {
    let waits = format!("[lsp.diagnostics]\nwait_ms = {wait_ms}\nbaseline_ms = 30000\n");
    common::run_with_config(dir, &format!("{}{waits}", common::LSP_BUDGETS))
}

#[test]
fn a_pyright_preview_names_what_the_change_would_break_and_leaves_the_server_on_the_disk() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = pyright_project(dir.path());
        let run = run_waiting(dir.path(), 30000);
        let clean = diagnostics_of(&run, "b.py").await;
        assert!(clean.contains("no errors or warnings"), "{clean}");

        let edit = dry_edit("a.py", "def scale(x: int) -> int:", "def scale(x: str) -> int:");
        let preview = call(&run, "edit", edit).await;
        assert!(
            preview.starts_with("(proposed, dry run) 1 replacement in a.py")
                && preview.contains("edit_id \"edit_1\""),
            "{preview}"
        );
        assert!(
            preview.contains("+def scale(x: str) -> int:"),
            "{preview}"
        );
        assert!(
            preview.contains("would bring: 2 new problems in 2 files"),
            "{preview}"
        );
        assert!(preview.contains("b.py (another file, not written)"), "{preview}");
        assert_eq!(std::fs::read_to_string(ws.join("a.py")).unwrap(), A_PY);

        // A patch staged by a dry run is judged the same way.
        let patch = "*** Begin Patch\n*** Update File: b.py\n@@\n print(scale(3))\n+print(scale(\"x\"))\n*** End Patch";
        let patched = call(&run, "apply_patch", json!({"patch": patch, "dry_run": true})).await;
        assert!(
            patched.starts_with("(proposed, dry run) a patch to 1 file")
                && patched.contains("would bring: 1 new problem in 1 file")
                && patched.contains("b.py: 1 new problem"),
            "{patched}"
        );
        let dropped = resolve(&run, "edit_2", "discard").await;
        assert!(dropped.starts_with("discarded edit_2"), "{dropped}");
        assert_eq!(std::fs::read_to_string(ws.join("b.py")).unwrap(), B_PY);

        // The server holds the disk's text again: neither file has a problem.
        for file in ["a.py", "b.py"] {
            let now = diagnostics_of(&run, file).await;
            assert!(now.contains("no errors or warnings"), "{file} after the preview: {now}");
        }

        // Accepted, the write reports the same problems as its own.
        let accepted = resolve(&run, "edit_1", "accept").await;
        assert!(accepted.starts_with("accepted edit_1"), "{accepted}");
        assert!(accepted.contains("1 new problem"), "{accepted}");
        assert!(!accepted.contains("stale"), "{accepted}");
        let b = diagnostics_of(&run, "b.py").await;
        assert!(b.contains("1 problem") || b.contains("error"), "{b}");

        // A preview made stale by a change to its file before the accept says so.
        let fix = dry_edit("a.py", "def scale(x: str) -> int:", "def scale(x: int) -> int:");
        let second = call(&run, "edit", fix).await;
        assert!(second.contains("would bring: no new problems, and fix"), "{second}");
        let noted = json!({"path": "a.py", "old_string": "    return x * 2\n", "new_string": "    return x * 2\n# noted\n"});
        let noted = call(&run, "edit", noted).await;
        assert!(noted.starts_with("edited a.py"), "{noted}");
        let accepted = resolve(&run, "edit_3", "accept").await;
        assert!(
            accepted.contains("its preview's verdict (\"would bring: no new problems"),
            "{accepted}"
        );
        assert!(accepted.contains("is stale"), "{accepted}");
        run.shutdown(std::time::Duration::from_secs(10)).await;
    });
}

const TSCONFIG: &str = "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true}}\n";
const M_TS: &str = "export function g(): number {\n    return 1;\n}\n";
const MAIN_TS: &str = "import { g } from \"./m\";\n\nconst n: number = g();\nconsole.log(n);\n";

#[test]
fn a_typescript_preview_of_a_write_and_of_a_structural_rewrite_names_the_importer_it_breaks() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        for (name, text) in [
            ("tsconfig.json", TSCONFIG),
            ("m.ts", M_TS),
            ("main.ts", MAIN_TS),
        ] {
            common::write(&ws, name, text);
        }
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
        let clean = diagnostics_of(&run, "main.ts").await;
        assert!(clean.contains("no errors"), "{clean}");

        let bad = "export function g(): string {\n    return \"one\";\n}\n";
        let write = json!({"path": "m.ts", "content": bad, "dry_run": true});
        let preview = call(&run, "write", write).await;
        assert!(
            preview.starts_with("(proposed, dry run) write m.ts (3 lines)"),
            "{preview}"
        );
        assert!(
            preview.contains("would bring: 1 new problem in 1 file"),
            "{preview}"
        );
        assert!(
            preview.contains("main.ts (another file, not written): 1 new problem")
                && preview.contains("[2322]"),
            "{preview}"
        );
        assert_eq!(std::fs::read_to_string(ws.join("m.ts")).unwrap(), M_TS);
        let after = diagnostics_of(&run, "main.ts").await;
        assert!(
            after.contains("no errors"),
            "main.ts after the preview: {after}"
        );
        let discarded = resolve(&run, "edit_1", "discard").await;
        assert!(discarded.starts_with("discarded edit_1"), "{discarded}");

        // A structural rewrite's preview carries the same verdict.
        let rewrite = json!({"pattern": "return 1", "rewrite": "return \"1\"", "path": "m.ts"});
        let staged = call(&run, "ast_edit", rewrite).await;
        assert!(staged.starts_with("(proposed) 1 replacement"), "{staged}");
        assert!(
            staged.contains("would bring: 1 new problem in 1 file")
                && staged.contains("m.ts: 1 new problem"),
            "{staged}"
        );
        let own = diagnostics_of(&run, "m.ts").await;
        assert!(own.contains("no errors"), "m.ts after the preview: {own}");
        let accepted = resolve(&run, "edit_2", "accept").await;
        assert!(accepted.contains("m.ts: 1 new problem"), "{accepted}");
        run.shutdown(std::time::Duration::from_secs(10)).await;
    });
}

const MANIFEST: &str = "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
const LIB_RS: &str = "pub struct Square {\n    pub side: u32,\n    pub name: String,\n}\n\npub fn unit() -> Square {\n    Square { side: 1, name: String::new() }\n}\n";

#[test]
fn a_rust_analyzer_preview_gives_its_own_findings_and_says_cargo_check_waits_for_the_write() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        common::write(&ws, "Cargo.toml", MANIFEST);
        common::write(&ws, "src/lib.rs", LIB_RS);
        // Trusted, so cargo check runs on each save: the check a preview cannot ask.
        let cfg = dir.path().join("cfg");
        std::fs::create_dir_all(&cfg).unwrap();
        tether::TrustStore::new(&cfg)
            .trust(&ws.canonicalize().unwrap())
            .unwrap();
        let waits = "[lsp.diagnostics]\nwait_ms = 90000\nbaseline_ms = 60000\n";
        let run = common::run_with_config(dir.path(), &format!("{}{waits}", common::LSP_BUDGETS));
        let clean = diagnostics_of(&run, "src/lib.rs").await;
        assert!(clean.contains("no errors"), "{clean}");

        let edit = dry_edit(
            "src/lib.rs",
            "Square { side: 1, name: String::new() }",
            "Square { side: 1 }",
        );
        let preview = call(&run, "edit", edit).await;
        assert!(
            preview.contains("would bring: 1 new problem in 1 file; not judged for other files"),
            "{preview}"
        );
        assert!(preview.contains("[E0063]"), "{preview}");
        assert!(
            preview.contains("these are rust-analyzer's own findings: its project check reads"),
            "{preview}"
        );
        assert_eq!(
            std::fs::read_to_string(ws.join("src/lib.rs")).unwrap(),
            LIB_RS
        );
        let after = diagnostics_of(&run, "src/lib.rs").await;
        assert!(after.contains("no errors"), "after the preview: {after}");
        let accepted = resolve(&run, "edit_1", "accept").await;
        assert!(
            accepted.contains("src/lib.rs: 1 new problem") && accepted.contains("[E0063]"),
            "{accepted}"
        );
        run.shutdown(std::time::Duration::from_secs(10)).await;
    });
}

/// A run over `dir/ws` sharing `pool`'s servers, as a warm host's runs do.
fn pooled_run(
    dir: &std::path::Path,
    pool: &std::sync::Arc<tether::Pool>,
    name: &str,
) -> tether::Run {
    let cfg = dir.join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    let waits = "[lsp.diagnostics]\nwait_ms = 30000\nbaseline_ms = 30000\n";
    std::fs::write(
        cfg.join("tether.toml"),
        format!("{}{waits}", common::LSP_BUDGETS),
    )
    .unwrap();
    tether::RunBuilder::new(dir.join("ws"))
        .user_config_dir(&cfg)
        .state_dir(dir.join(name))
        .pool(pool.clone())
        .build()
        .unwrap()
}

#[test]
fn two_runs_sharing_pyright_never_see_each_others_unsaved_text() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = pyright_project(dir.path());
        let pool = std::sync::Arc::new(tether::Pool::for_host());
        let previewer = pooled_run(dir.path(), &pool, "previewer");
        let other = pooled_run(dir.path(), &pool, "other");
        let warm = diagnostics_of(&other, "b.py").await;
        assert!(warm.contains("no errors or warnings"), "{warm}");

        // One run previews a change that breaks both files, again and again, while the other
        // asks about both files and writes a third: it must only ever see the disk's text.
        let previews = async {
            for n in 1..=4 {
                let edit = dry_edit(
                    "a.py",
                    "def scale(x: int) -> int:",
                    "def scale(x: str) -> int:",
                );
                let preview = call(&previewer, "edit", edit).await;
                assert!(
                    preview.contains("would bring: 2 new problems in 2 files"),
                    "preview {n}: {preview}"
                );
                resolve(&previewer, &format!("edit_{n}"), "discard").await;
            }
        };
        let asks = async {
            let mut seen = Vec::new();
            for n in 0..12 {
                let file = ["a.py", "b.py"][n % 2];
                let said = diagnostics_of(&other, file).await;
                seen.push(format!("{file}: {said}"));
                if n % 4 == 3 {
                    let text = format!("from a import scale\n\nvalue = scale({n})\n");
                    let wrote =
                        call(&other, "write", json!({"path": "c.py", "content": text})).await;
                    seen.push(format!("write c.py: {wrote}"));
                    // The file the other run previews, written meanwhile: judged against the
                    // disk's text before it, never the preview's (which would read "fixed").
                    let text = format!("{A_PY}# note {n}\n");
                    let wrote =
                        call(&other, "write", json!({"path": "a.py", "content": text})).await;
                    assert!(wrote.starts_with("wrote a.py"), "{wrote}");
                    seen.push(format!("write a.py: {wrote}"));
                }
            }
            seen
        };
        let ((), seen) = tokio::join!(previews, asks);
        for said in &seen {
            let judged_the_preview = ["str", "new problem", "fixed"];
            assert!(
                !judged_the_preview.iter().any(|w| said.contains(w)),
                "the other run saw the unsaved text: {said}\nall it saw:\n{}",
                seen.join("\n")
            );
        }
        assert!(
            std::fs::read_to_string(ws.join("a.py"))
                .unwrap()
                .starts_with(A_PY)
        );
        previewer.shutdown(std::time::Duration::from_secs(5)).await;
        other.shutdown(std::time::Duration::from_secs(5)).await;
        pool.stop(std::time::Duration::from_secs(5)).await;
    });
}

#[test]
fn a_clangd_preview_of_a_header_names_the_open_file_it_breaks() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let main = "#include \"area.h\"\n\nint total() {\n    return area(2, 3);\n}\n";
        common::write(&ws, "compile_flags.txt", "-std=c++17\n");
        common::write(&ws, "area.h", "int area(int w, int h);\n");
        common::write(&ws, "main.cpp", main);
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
        let clean = diagnostics_of(&run, "main.cpp").await;
        assert!(clean.contains("no errors"), "{clean}");
        let edit = dry_edit(
            "main.cpp",
            "    return area(2, 3);",
            "    int x = \"a\";\n    return area(2, 3);",
        );
        let preview = call(&run, "edit", edit).await;
        assert!(
            preview.contains("would bring: 1 new problem in 1 file")
                && preview.contains("Cannot initialize a variable of type 'int'"),
            "{preview}"
        );
        let after = diagnostics_of(&run, "main.cpp").await;
        assert!(
            after.contains("no errors"),
            "main.cpp after the preview: {after}"
        );
        assert_eq!(std::fs::read_to_string(ws.join("main.cpp")).unwrap(), main);
        let header = dry_edit("area.h", "int h)", "int h, int d)");
        // clangd checks the files that include a header again only on its save: the preview
        // says it could not judge them, never that the change is harmless.
        let preview = call(&run, "edit", header).await;
        assert!(
            preview.contains("not judged for main.cpp")
                && preview.contains("clangd checks such files again only once the change is saved"),
            "{preview}"
        );
        let after = diagnostics_of(&run, "main.cpp").await;
        assert!(
            after.contains("no errors"),
            "main.cpp after the preview: {after}"
        );
        run.shutdown(std::time::Duration::from_secs(10)).await;
    });
}

#[test]
fn what_pyright_says_during_a_preview_is_no_earlier_writes_news() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        pyright_project(dir.path());
        let run = run_waiting(dir.path(), 5000);
        let clean = diagnostics_of(&run, "b.py").await;
        assert!(clean.contains("no errors or warnings"), "{clean}");
        // A write whose followers watch what pyright publishes of other files for a while,
        // then a preview that breaks b.py while they watch.
        let wrote = call(
            &run,
            "write",
            json!({"path": "c.py", "content": "VALUE = 1\n"}),
        )
        .await;
        assert!(wrote.starts_with("created c.py"), "{wrote}");
        let edit = dry_edit(
            "a.py",
            "def scale(x: int) -> int:",
            "def scale(x: str) -> int:",
        );
        let preview = call(&run, "edit", edit).await;
        assert!(preview.contains("would bring: 2 new problems"), "{preview}");
        let mut seen = String::new();
        let end = std::time::Instant::now() + std::time::Duration::from_secs(6);
        while std::time::Instant::now() < end {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            seen.push_str(&call(&run, "lsp", json!({"action": "status"})).await);
        }
        assert!(
            !seen.contains("new problem") && !seen.contains("Literal[3]"),
            "a follower took the preview's findings for news:\n{seen}"
        );
        let b = diagnostics_of(&run, "b.py").await;
        assert!(b.contains("no errors or warnings"), "{b}");
        run.shutdown(std::time::Duration::from_secs(10)).await;
    });
}

#[test]
fn a_rename_staged_by_dry_run_shows_every_file_and_writes_them_on_accept() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = pyright_project(dir.path());
        let run = run_waiting(dir.path(), 30000);
        let args = json!({
            "file": "a.py", "line": 1, "symbol": "scale", "new_name": "double", "dry_run": true,
        });
        let staged = call(&run, "lsp_rename", args).await;
        assert!(
            staged.starts_with(
                "(proposed, dry run) rename `scale` to `double`: a.py: 1 edit, b.py: 2 edits"
            ),
            "{staged}"
        );
        assert!(
            staged.contains("+from a import double")
                && staged.contains("would bring: no new problems"),
            "{staged}"
        );
        assert_eq!(std::fs::read_to_string(ws.join("b.py")).unwrap(), B_PY);
        let accepted = resolve(&run, "edit_1", "accept").await;
        assert!(accepted.starts_with("accepted edit_1"), "{accepted}");
        assert!(
            std::fs::read_to_string(ws.join("b.py"))
                .unwrap()
                .contains("print(double(3))"),
            "{accepted}"
        );
        run.shutdown(std::time::Duration::from_secs(10)).await;
    });
}

#[test]
fn a_rewrite_of_more_files_than_a_preview_shows_a_server_says_which_it_left_unjudged() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = pyright_project(dir.path());
        for n in 0..52 {
            let text = format!("def old(v: int) -> int:\n    return v\n\n\nY{n} = old({n})\n");
            common::write(&ws, &format!("m{n:02}.py"), &text);
        }
        let run = run_waiting(dir.path(), 30000);
        let rewrite = json!({"pattern": "old($A)", "rewrite": "older($A)", "path": "."});
        let staged = call(&run, "ast_edit", rewrite).await;
        assert!(
            staged.starts_with("(proposed) 52 replacements in 52 files"),
            "{staged}"
        );
        assert!(
            staged.contains("would bring: 50 new problems in 50 files; not judged for ")
                && staged.contains("a preview shows pyright at most 50 files"),
            "{staged}"
        );
        run.shutdown(std::time::Duration::from_secs(10)).await;
    });
}
