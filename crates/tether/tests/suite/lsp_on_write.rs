//! Diagnostics on write with the real pyright: a write reports exactly what it broke, keyed
//! without positions (a moved error is not new), a second identical error is, a fix says so
//! and a relapse is reported again; what a file had before the run's first write is never
//! blamed on it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use serde_json::json;
use tether::{Run, Surface};
use tokio_util::sync::CancellationToken;

async fn call(run: &Run, tool: &str, args: serde_json::Value) -> String {
    run.runtime()
        .call(Surface::Agent, tool, args, CancellationToken::new())
        .await
        .map(|o| o.to_text())
        .unwrap_or_else(|e| format!("ERROR {e}"))
}

/// Every result of cheap calls made until one carries `needle` (notices ride on root
/// results), or all of them once `secs` have passed.
async fn notices_until(run: &Run, needle: &str, secs: u64) -> String {
    let end = std::time::Instant::now() + Duration::from_secs(secs);
    let mut seen = String::new();
    while std::time::Instant::now() < end && !seen.contains(needle) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        seen.push_str(&call(run, "lsp", json!({"action": "status"})).await);
    }
    seen
}

/// A pyright workspace under `dir/ws` with `files`, and a run over it with generous waits.
fn pyright_run(dir: &std::path::Path, files: &[(&str, &str)]) -> Run {
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|d| d.join("pyright-langserver").is_file()),
        "pyright-langserver is not on PATH: run scripts/test, which installs it"
    );
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        ws.join("pyproject.toml"),
        "[project]\nname = \"w\"\nversion = \"0.1\"\n",
    )
    .unwrap();
    for (name, text) in files {
        common::write(&ws, name, text);
    }
    let waits = "[lsp.diagnostics]\nwait_ms = 30000\nbaseline_ms = 30000\n";
    common::run_with_config(dir, &format!("{}{waits}", common::LSP_BUDGETS))
}

/// A run over `dir/ws` whose pyright is behind a wrapper that copies what tether sends it
/// into `log`, with generous waits.
fn logged_pyright_run(dir: &std::path::Path, log: &std::path::Path) -> Run {
    let wrapper = format!(
        "tee -a '{}' | exec pyright-langserver --stdio",
        log.display()
    );
    let config = format!(
        "{}[lsp.servers.pyright]\ncommand = [\"sh\", \"-c\", {wrapper:?}]\n\
         [lsp.diagnostics]\nwait_ms = 30000\nbaseline_ms = 30000\n",
        common::LSP_BUDGETS
    );
    common::run_with_config(dir, &config)
}

/// How many pulls of `file`'s diagnostics are in `sent`, what tether sent the server.
fn pulls_of(sent: &str, file: &str) -> usize {
    sent.split("Content-Length")
        .filter(|m| m.contains("\"textDocument/diagnostic\"") && m.contains(file))
        .count()
}

/// The diagnostics block of a result, if any.
fn block(out: &str) -> &str {
    out.find("diagnostics (pyright) after this write:")
        .map_or("", |i| &out[i..])
}

#[test]
fn pyright_reports_what_each_write_broke_and_nothing_else() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        // old.py is broken before the run: never blamed on a write.
        let old = "count: int = \"zero\"\n\n\ndef f() -> int:\n    return 1\n";
        let run = pyright_run(dir.path(), &[("old.py", old), ("m.py", "def g() -> int:\n    return 1\n")]);
        let ws = dir.path().join("ws");
        // The server is up before the first write, as `tether serve`'s warm-up makes it.
        call(&run, "lsp", json!({"action": "diagnostics", "file": "m.py"})).await;

        let one = call(&run, "edit", json!({"path": "m.py", "old_string": "    return 1", "new_string": "    return \"one\""})).await;
        let b = block(&one);
        assert!(b.contains("m.py: 1 new problem"), "{one}");
        assert!(b.contains("line 2 (new): error") && b.contains("\"int\""), "{one}");

        // The same error moved four lines down is not new.
        let moved = call(&run, "edit", json!({"path": "m.py", "old_string": "def g() -> int:", "new_string": "\n\n\n\ndef g() -> int:"})).await;
        let b = block(&moved);
        assert!(b.contains("m.py: still 1 problem (there before this write)") && !b.contains("(new)"), "{moved}");

        // A second identical error elsewhere is new.
        let twice = call(&run, "write", json!({"path": "m.py", "content": "\n\n\n\ndef g() -> int:\n    return \"one\"\n\n\ndef h() -> int:\n    return \"one\"\n"})).await;
        let b = block(&twice);
        assert!(b.contains("m.py: 1 new problem; still 1 more"), "{twice}");
        assert!(b.contains("line 10 (new; now 2 of these, was 1): error"), "{twice}");

        // Fixed, then brought back: reported again.
        let fixed = call(&run, "write", json!({"path": "m.py", "content": "def g() -> int:\n    return 1\n"})).await;
        assert!(block(&fixed).contains("m.py: fixed 2 problems; none left"), "{fixed}");
        let clean = call(&run, "edit", json!({"path": "m.py", "old_string": "return 1", "new_string": "return 2"})).await;
        assert!(block(&clean).contains("m.py: clean"), "{clean}");
        let back = call(&run, "edit", json!({"path": "m.py", "old_string": "return 2", "new_string": "return \"two\""})).await;
        assert!(block(&back).contains("m.py: 1 new problem"), "{back}");

        // A file broken before the run: an unrelated edit blames nothing on the write.
        let old = call(&run, "edit", json!({"path": "old.py", "old_string": "return 1", "new_string": "return 2"})).await;
        let b = block(&old);
        assert!(b.contains("old.py: still 1 problem (there before this write)") && !b.contains("(new)"), "{old}");

        // apply_patch across two files reports both files' new problems.
        std::fs::write(ws.join("a.py"), "def a() -> int:\n    return 1\n").unwrap();
        std::fs::write(ws.join("b.py"), "def b() -> int:\n    return 1\n").unwrap();
        let patch = "*** Begin Patch\n*** Update File: a.py\n@@\n def a() -> int:\n-    return 1\n+    return \"a\"\n*** Update File: b.py\n@@\n def b() -> int:\n-    return 1\n+    return \"b\"\n*** End Patch";
        let patched = call(&run, "apply_patch", json!({"patch": patch})).await;
        let b = block(&patched);
        assert!(b.contains("a.py: 1 new problem") && b.contains("b.py: 1 new problem"), "{patched}");

        // Accepting a structural edit reports what it broke.
        std::fs::write(ws.join("c.py"), "def c() -> int:\n    return len(\"x\")\n").unwrap();
        let staged = call(&run, "ast_edit", json!({"pattern": "len($X)", "rewrite": "str($X)", "path": "c.py"})).await;
        assert!(staged.contains("edit_1"), "{staged}");
        let accepted = call(&run, "resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
        assert!(block(&accepted).contains("c.py: 1 new problem"), "{accepted}");

        // A rename through the server is a write too: both files it touched are reported.
        let made = call(&run, "write", json!({"path": "use_b.py", "content": "from b import b\n\nprint(b())\n"})).await;
        assert!(!made.contains("(new"), "{made}");
        let renamed = call(&run, "lsp_rename", json!({"file": "b.py", "line": 1, "symbol": "b", "new_name": "bee"})).await;
        let b = block(&renamed);
        assert!(b.contains("b.py: still 1 problem (there before this write)"), "{renamed}");
        assert!(b.contains("use_b.py: clean") && !b.contains("(new"), "{renamed}");

        // Before the agent says it is done: what its writes broke and left open.
        let status = call(&run, "lsp", json!({"action": "status"})).await;
        assert!(
            status.contains("still open, introduced since the run began by its writes or by edits outside tether: ")
                && status.contains("\n  m.py:2  error")
                && status.contains("\n  c.py:2  error"),
            "{status}"
        );
        assert!(!status.contains("old.py:1"), "a problem from before the run was blamed: {status}");

        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn a_broken_caller_in_another_file_and_an_outside_edit_are_reported() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let lib = "def area(width: int, height: int) -> int:\n    return width * height\n";
        let app = "from lib import area\n\nprint(area(2, 3))\n";
        let run = pyright_run(dir.path(), &[("lib.py", lib), ("app.py", app)]);
        run.warm().await;

        // A changed signature: the caller in app.py breaks, and the write says so.
        let out = call(&run, "edit", json!({"path": "lib.py", "old_string": "width: int, height: int", "new_string": "width: int, height: int, depth: int"})).await;
        // The result is never silent about the other file: it names it, or says it may follow.
        assert!(out.contains("app.py (another file") || out.contains("other files: pending"), "{out}");
        let seen = if out.contains("app.py (another file") { out.clone() } else { notices_until(&run, "app.py (another file", 60).await };
        assert!(seen.contains("app.py (another file, not written): 1 new problem"), "{out}\n---\n{seen}");
        assert!(seen.contains("line 3 (new): error") && seen.contains("depth"), "{seen}");
        assert!(!block(&out).contains("lib.py: 1 new"), "the signature change itself is fine: {out}");

        // Edited behind tether's back: the next calls carry its new problem as a notice that
        // names the outside change, not a tether write.
        let ws = dir.path().join("ws");
        std::fs::write(ws.join("app.py"), "from lib import area\n\nprint(area(2, 3, 4))\nlength: int = \"x\"\n").unwrap();
        let seen = notices_until(&run, "after an outside change to app.py", 60).await;
        assert!(seen.contains("diagnostics (pyright) after an outside change to app.py (not a tether write):"), "{seen}");
        assert!(seen.contains("line 4 (new): error"), "{seen}");
        // Its fix of the call is seen too, and nothing is blamed on a write.
        assert!(seen.contains("fixed 1 problem"), "{seen}");
        assert!(!seen.contains("after this write"), "{seen}");

        // A module created outside is known to the server before the file importing it is
        // diagnosed: the import resolves, and the type error through it shows.
        std::fs::write(ws.join("extra.py"), "def five() -> int:\n    return 5\n").unwrap();
        std::fs::write(ws.join("app.py"), "from extra import five\n\nname: str = five()\n").unwrap();
        // (The status that carries the notice lists the open problem as soon as it is known;
        // the notice, which names the change, may follow a moment later.)
        let seen = notices_until(&run, "line 3 (new): error", 60).await;
        assert!(seen.contains("declared type \"str\""), "{seen}");
        assert!(seen.contains("after an outside change to app.py"), "{seen}");
        assert!(!seen.contains("could not be resolved"), "{seen}");

        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn a_write_before_the_server_is_ready_is_not_blamed() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let old = "count: int = \"zero\"\n";
        let run = pyright_run(dir.path(), &[("old.py", old)]);
        // No warm-up: the server starts with this write. It is asked about the file before
        // the write when it starts within the baseline budget; else nothing is known of it.
        let out = call(&run, "edit", json!({"path": "old.py", "old_string": "count", "new_string": "total"})).await;
        let b = block(&out);
        let asked = b.contains("old.py: still 1 problem (there before this write)");
        let unknown = b.contains("old.py: unavailable (no baseline: the server was not ready before this write); 1 problem now, which may predate this change");
        assert!(asked || unknown, "{out}");
        assert!(!b.contains("(new)"), "{out}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// A file the write did not touch, with a problem on a line before the write and a different
/// one on that same line after it: the new one is new (its line did not change), never the
/// old one "still there". Tested with a caller whose return type was already wrong.
#[test]
fn a_new_problem_in_another_file_on_the_line_of_an_old_one_is_new() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let lexer = "def split(s: str, comments: bool = False) -> list:\n    return [s]\n";
        let caller = "from lexer import split\n\n\ndef words(s: str) -> int:\n    return split(s)\n";
        let run = pyright_run(dir.path(), &[("lexer.py", lexer), ("caller.py", caller)]);
        run.warm().await;
        let out = call(&run, "edit", json!({"path": "lexer.py", "old_string": "comments: bool = False", "new_string": "comments: bool"})).await;
        assert!(!out.contains("caller.py (another file, not written): still"), "{out}");
        let seen = if out.contains("caller.py (another file") { out.clone() } else { notices_until(&run, "caller.py (another file", 60).await };
        assert!(seen.contains("caller.py (another file, not written): 1 new problem"), "{out}\n---\n{seen}");
        assert!(seen.contains("(new): error [reportCallIssue]"), "{seen}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn files_changed_outside_at_once_are_each_judged_against_before_the_change() {
    // A checkout or formatter changes many files at once. pyright re-checks each as soon as it
    // hears of them, so by the time the later files are looked at their new problems are
    // already published; each must still be judged against what it had before the change.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let base = "def f(x: int) -> int:\n    return x\n";
        let module = |i: usize, ty: &str| format!("from base import f\n\nv{i}: {ty} = f({i})\n");
        let files: Vec<(String, String)> = (0..12)
            .map(|i| (format!("m{i:02}.py"), module(i, "int")))
            .collect();
        let mut all: Vec<(&str, &str)> = vec![("base.py", base)];
        all.extend(files.iter().map(|(n, t)| (n.as_str(), t.as_str())));
        let run = pyright_run(dir.path(), &all);
        run.warm().await;
        call(
            &run,
            "lsp",
            json!({"action": "diagnostics", "file": "base.py"}),
        )
        .await;
        // Only what pyright reported before the change is a baseline; a file it had not yet
        // checked is rightly "not known before".
        let reported = notices_until(&run, "has reported on 13 files", 60).await;
        assert!(reported.contains("has reported on 13 files"), "{reported}");
        let ws = dir.path().join("ws");
        for i in 0..12 {
            std::fs::write(ws.join(format!("m{i:02}.py")), module(i, "str")).unwrap();
        }
        let seen = notices_until(&run, "m11.py: 1 new problem", 60).await;
        let told = (0..12)
            .filter(|i| seen.contains(&format!("m{i:02}.py: 1 new problem")))
            .count();
        assert_eq!(told, 12, "{seen}");
        assert!(
            seen.contains("after an outside change to m00.py, m01.py, m02.py, 9 more"),
            "{seen}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// A cold server of the whole workspace, first asked by a write: the callers the write broke
/// are reported (their state before was asked for before the write), a file the write did not
/// touch and that does not import it is never called newly broken, and its old problems,
/// published later, are not told as new.
#[test]
fn a_first_write_to_a_cold_workspace_reports_the_callers_it_broke_and_nothing_old() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let core = "def area(width: int, height: int) -> int:\n    return width * height\n";
        let caller = |n: usize| format!("from lib.core import area\n\nA{n} = area({n}, 2)\n");
        let old = "import not_installed_anywhere\nimport also_missing\n\nX: int = \"x\"\n";
        let mut files: Vec<(String, String)> = vec![
            ("lib/__init__.py".into(), String::new()),
            ("lib/core.py".into(), core.into()),
            ("lib/a.py".into(), caller(1)),
            ("lib/b.py".into(), caller(2)),
            ("tests/test_old.py".into(), old.into()),
        ];
        // Enough other modules that the server's first pass is still going when the write
        // comes.
        for i in 0..60 {
            let body = format!("def f{i}(x: int) -> int:\n    return x + {i}\n");
            files.push((format!("other/m{i:02}.py"), body));
        }
        let all: Vec<(&str, &str)> = files.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
        let run = pyright_run(dir.path(), &all);
        let edit = json!({"path": "lib/core.py", "old_string": "height: int)", "new_string": "height: int, depth: int)"});
        let out = call(&run, "edit", edit).await;
        eprintln!("{out}");
        for caller in ["lib/a.py", "lib/b.py"] {
            let told = out.contains(&format!("{caller} (another file, not written): 1 new problem"));
            assert!(told || out.contains("other files: pending"), "{caller}: {out}");
        }
        assert!(!out.contains("test_old.py"), "{out}");
        run.settle(Duration::from_secs(60)).await;
        let (list, _) = run.runtime().notices().drain();
        let later = list.iter().map(|n| n.line()).collect::<Vec<_>>().join("\n");
        eprintln!("notices: {later}");
        assert!(!later.contains("test_old.py"), "{later}");
        if !out.contains("lib/a.py (another file") {
            assert!(later.contains("lib/a.py (another file, not written): 1 new problem"), "{later}");
        }
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// A caller in a tree of thousands of Python files is found among the written module's
/// importers, however far into the tree it lies: the write's own result reports it broke.
#[test]
fn a_broken_caller_among_thousands_of_files_is_in_the_writes_own_result() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let lib = "def area(width: int, height: int) -> int:\n    return width * height\n";
        let app = "from lib import area\n\nprint(area(2, 3))\n";
        // The server is told to leave the filler alone; tether's search for importers is not.
        let project = "[project]\nname = \"w\"\nversion = \"0.1\"\n\n[tool.pyright]\nexclude = [\"fill*\"]\n";
        let mut files: Vec<(String, String)> = vec![
            ("pyproject.toml".into(), project.into()),
            ("lib.py".into(), lib.into()),
            ("app.py".into(), app.into()),
        ];
        for d in 0..4 {
            for i in 0..1000 {
                files.push((format!("fill{d}/m{i:04}.py"), format!("X{i} = {i}\n")));
            }
        }
        let all: Vec<(&str, &str)> = files.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
        let run = pyright_run(dir.path(), &all);
        run.warm().await;
        let first = call(&run, "edit", json!({"path": "lib.py", "old_string": "return width * height", "new_string": "return height * width"})).await;
        assert!(!first.contains("new problem"), "{first}");
        let out = call(&run, "edit", json!({"path": "lib.py", "old_string": "width: int, height: int", "new_string": "width: int, height: int, depth: int"})).await;
        assert!(out.contains("app.py (another file, not written): 1 new problem"), "{out}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// A cold pyright in workspace mode publishes a file empty first, then with its import errors
/// alone, then whole, and its progress ends and begins again mid-pass; with short waits, a
/// write that comes while it is still at it must not take one of those early words for a
/// file's state and call the rest new.
#[test]
fn old_problems_a_cold_server_publishes_late_are_never_new_to_a_later_write() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let project = "[project]\nname = \"w\"\nversion = \"0.1\"\n";
        common::write(&ws, "pyproject.toml", project);
        common::write(&ws, "lib.py", "def area(w: int) -> int:\n    return w\n");
        // A chain of 1,500 modules, each calling the one before: a pass long enough that
        // pyright's progress ends and begins again while it runs (at 600 it did not).
        for i in 0..1500_usize {
            let prev = i.saturating_sub(1);
            let body = format!(
                "import missing_{i}\nfrom pkg{}.m{prev:03} import f{prev}\n\ndef f{i}(x: int) -> int:\n    return f{prev}(x)\n\nY{i}: int = \"y\"\n", prev % 10
            );
            common::write(&ws, &format!("pkg{}/m{i:03}.py", i % 10), &body);
        }
        let waits = "[lsp]\nrequest_timeout_s = 2\ninit_timeout_s = 120\n[lsp.diagnostics]\nwait_ms = 1000\n";
        let run = common::run_with_config(dir.path(), waits);
        let first = call(&run, "edit", json!({"path": "lib.py", "old_string": "return w", "new_string": "return w + 1"})).await;
        eprintln!("first: {first}");
        // The second write comes as soon as the server says it is ready.
        let status = notices_until(&run, ": ready,", 60).await;
        eprintln!("status: {status}");
        let second = call(&run, "edit", json!({"path": "lib.py", "old_string": "return w + 1", "new_string": "return w + 2"})).await;
        eprintln!("second: {second}");
        run.settle(Duration::from_secs(30)).await;
        let (list, _) = run.runtime().notices().drain();
        let later = list.iter().map(|n| n.line()).collect::<Vec<_>>().join("\n");
        eprintln!("notices: {later}");
        for said in [&first, &status, &second, &later] {
            assert!(!said.contains("new problem"), "{said}");
        }
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// The files that import a written module are asked about before a write only when something
/// on disk changed since the run last had pyright's final answer for them: writes in a row
/// ask each importer once, not twice, and an outside edit between writes has it asked again,
/// so that edit's problem is never taken for the write's. (A wrapper copies what tether sends
/// the real pyright into a log.)
#[test]
fn an_importer_is_asked_before_a_write_only_after_a_change() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let log = dir.path().join("sent.log");
        let lib = "def area(width: int) -> int:\n    return width\n";
        for (name, text) in [
            (
                "pyproject.toml",
                "[project]\nname = \"w\"\nversion = \"0.1\"\n",
            ),
            ("lib.py", lib),
            ("app.py", "from lib import area\n\nprint(area(2))\n"),
        ] {
            common::write(&ws, name, text);
        }
        let run = logged_pyright_run(dir.path(), &log);
        run.warm().await;
        let asked_of_app =
            || pulls_of(&std::fs::read_to_string(&log).unwrap_or_default(), "app.py");
        let write = |n: usize| {
            let text = format!("def area(width: int) -> int:\n    return width + {n}\n");
            call(&run, "write", json!({"path": "lib.py", "content": text}))
        };
        let first = write(0).await;
        assert!(block(&first).contains("lib.py: clean"), "{first}");
        // Three writes in a row: once each after the write, never before it (the watch's
        // event for a write the server holds is no change, and pyright publishing app.py
        // again with the same problems leaves the answer final).
        let began = asked_of_app();
        for n in 1..4 {
            let out = write(n).await;
            assert!(block(&out).contains("lib.py: clean"), "{out}");
        }
        let asked = asked_of_app() - began;
        assert_eq!(asked, 3, "app.py was asked {asked} times in three writes");
        // An outside edit breaks app.py: the next write asks before it again, and does not
        // report app.py's new problem as its own.
        std::fs::write(
            ws.join("app.py"),
            "from lib import area\n\nname: str = area(2)\n",
        )
        .unwrap();
        let seen = notices_until(&run, "after an outside change to app.py", 60).await;
        assert!(seen.contains("line 3 (new): error"), "{seen}");
        let began = asked_of_app();
        let out = write(9).await;
        assert!(
            asked_of_app() - began >= 2,
            "app.py was not asked before the write"
        );
        assert!(!out.contains("app.py (another file"), "{out}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// A written Python module's importers are the files whose imports may load it: one that
/// reaches it by a relative import is asked about and its breakage is the write's own news,
/// while a file that only mentions the module's name, or imports a module of the same name
/// from another package, is never asked (each ask costs pyright an analysis per write).
#[test]
fn only_files_whose_imports_may_load_a_written_module_are_asked_about() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let log = dir.path().join("sent.log");
        for (name, text) in [
            ("pyproject.toml", "[project]\nname = \"w\"\nversion = \"0.1\"\n"),
            ("app/__init__.py", ""),
            ("app/shortcuts.py", "def render(name: str) -> str:\n    return name\n"),
            ("app/sub/__init__.py", ""),
            ("app/sub/up.py", "from .. import shortcuts\n\nPAGE = shortcuts.render(\"x\")\n"),
            ("other/__init__.py", ""),
            ("other/shortcuts.py", "def render() -> int:\n    return 1\n"),
            ("other/same_name.py", "from other.shortcuts import render\n\nN = render()\n"),
            ("other/talk.py", "# shortcuts are handy\nshortcuts = \"app.shortcuts\"\n"),
        ] {
            common::write(&ws, name, text);
        }
        let run = logged_pyright_run(dir.path(), &log);
        run.warm().await;
        // Once pyright is ready, the files of its first pass are confirmed (each pulled
        // once); what is asked from then on is the write's own asking.
        let status = notices_until(&run, ": ready,", 60).await;
        assert!(status.contains(": ready,"), "{status}");
        // Ready says every file published so far is confirmed; under load pyright may publish
        // the last of its first pass later, and its confirmation is not the write's asking.
        let files = ["app/shortcuts.py", "app/sub/up.py", "other/shortcuts.py", "other/same_name.py", "other/talk.py"];
        let end = std::time::Instant::now() + Duration::from_secs(60);
        let confirmed = |sent: &str| files.iter().all(|f| pulls_of(sent, f) > 0);
        while !confirmed(&std::fs::read_to_string(&log).unwrap_or_default())
            && std::time::Instant::now() < end
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let before = std::fs::read_to_string(&log).unwrap_or_default().len();
        let edit = json!({"path": "app/shortcuts.py", "old_string": "name: str)", "new_string": "name: str, size: int)"});
        let out = call(&run, "edit", edit).await;
        assert!(out.contains("app/sub/up.py (another file, not written): 1 new problem"), "{out}");
        let sent = std::fs::read_to_string(&log).unwrap_or_default();
        let sent = &sent[before..];
        let asked = |file: &str| pulls_of(sent, file);
        assert!(asked("app/sub/up.py") > 0, "{sent}");
        assert_eq!(asked("other/talk.py"), 0, "a file that only names the module");
        assert_eq!(asked("other/same_name.py"), 0, "an importer of another package's module");
        run.shutdown(Duration::from_secs(5)).await;
    });
}
