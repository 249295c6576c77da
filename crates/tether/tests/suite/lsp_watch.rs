//! The watch for outside edits with the real pyright: generated folders cost no watches, and a
//! tree larger than the watch may take is said to be watched in part (in `status` and once on
//! the next result), naming folders whose changes are not seen, never silently.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use serde_json::json;

/// `status` once the server says it is ready (through its first pass, so every module's
/// state is known), or as it last was after a minute.
async fn ready(run: &tether::Run) -> String {
    let mut status = String::new();
    for _ in 0..240 {
        status = common::call_text(run, "lsp", json!({"action": "status"})).await;
        if status.contains(": ready,") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    status
}

/// The first cheap call's result that carries an outside-change notice, or the last after a
/// minute.
async fn outside_notice(run: &tether::Run) -> String {
    common::read_until(run, "core.py", 120, |out| out.contains("outside change")).await
}

/// A pyright project under `ws` whose `core.py` defines `target(x: int) -> int`.
fn core_project(ws: &std::path::Path) {
    common::write(ws, "pyproject.toml", "[project]\nname = \"w\"\n");
    common::write(ws, "core.py", "def target(x: int) -> int:\n    return x\n");
}

/// Module `n`, which calls `core.target` with `arg`.
fn module(n: usize, arg: &str) -> String {
    format!("from core import target\n\n\ndef use_{n}(a: int) -> int:\n    return target({arg})\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tree_past_the_watch_limit_is_said_to_be_watched_in_part() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    common::write(&ws, "pyproject.toml", "[project]\nname = \"w\"\n");
    common::write(&ws, "a.py", "def f(x: int) -> int:\n    return x\n");
    for n in 0..6 {
        common::write(&ws, &format!("pkg{n}/m.py"), "y = 1\n");
    }
    // Generated folders: none of them costs a watch.
    common::write(&ws, "node_modules/dep/index.js", "x\n");
    common::write(&ws, ".venv/pyvenv.cfg", "home = /usr\n");
    common::write(
        &ws,
        "target/CACHEDIR.TAG",
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    );
    common::write(&ws, "target/debug/x.py", "z = 1\n");
    // The budgets' `[lsp]` table, with the watch's limit added to it.
    let config = format!("{}watch_folders_max = 4\n", common::LSP_BUDGETS);
    let run = common::run_with_config(dir.path(), &config);
    let wrote = common::call_text(
        &run,
        "write",
        json!({"path": "a.py", "content": "def f(x: int) -> int:\n    return x + 1\n"}),
    )
    .await;
    // The watch starts with the write; what it cannot see is told on the next result.
    let mut told = String::new();
    for _ in 0..50 {
        let status = common::call_text(&run, "lsp", json!({"action": "status"})).await;
        told.push_str(&status);
        if status.contains("outside edits:") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let all = format!("{wrote}\n{told}");
    // The workspace root and six packages: seven folders, four watched.
    assert!(
        all.contains("outside edits: watching 4 of 7 folders; 3 are not watched"),
        "{all}"
    );
    assert!(all.contains("`[lsp] watch_folders_max` is 4"), "{all}");
    let line = all
        .lines()
        .find(|l| l.starts_with("outside edits: watching"))
        .unwrap();
    for generated in ["node_modules", "target", ".venv"] {
        assert!(!line.contains(generated), "{line}");
    }
    run.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_switch_of_1500_files_is_told_whole_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    core_project(&ws);
    for n in 0..1500 {
        common::write(&ws, &format!("pkg{}/m{n}.py", n / 100), &module(n, "a"));
    }
    // Every file is asked about: this test is of a switch told whole.
    let config = format!("{}outside_files_max = 2000\n", common::LSP_BUDGETS);
    let run = common::run_with_config(dir.path(), &config);
    // A write starts the server and the watch.
    common::call_text(
        &run,
        "write",
        json!({"path": "core.py", "content": "def target(x: int) -> int:\n    return x + 1\n"}),
    )
    .await;
    // Once the server is through its first pass, every module's state is known: a change
    // before that would have no baseline.
    let status = ready(&run).await;
    assert!(status.contains(": ready,"), "{status}");
    // Every module breaks, as a checkout of another branch would do it, in two spurts: the
    // second comes while the first is being diagnosed.
    let break_modules = |range: std::ops::Range<usize>| {
        for n in range {
            let path = ws.join(format!("pkg{}/m{n}.py", n / 100));
            std::fs::write(path, module(n, "str(a)")).unwrap();
        }
    };
    break_modules(0..1200);
    tokio::time::sleep(Duration::from_secs(1)).await;
    break_modules(1200..1500);
    let brief = |told: &str| {
        told.lines()
            .filter(|l| !l.starts_with("    line") && !l.starts_with("  pkg"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let told = outside_notice(&run).await;
    // The server was told of all 1200 (a thousand a message), so each file's answer is for
    // its new text, and the cut notice still counts them all; it says it is not all yet.
    assert!(
        told.contains("in all, 1200 files: 1200 new problems in 1200 files"),
        "{}",
        brief(&told)
    );
    assert!(
        told.contains("more outside changes came"),
        "{}",
        brief(&told)
    );
    let later = common::read_until(&run, "core.py", 120, |out| {
        out.contains("in all, 300 files")
    })
    .await;
    assert!(
        later.contains("in all, 300 files: 300 new problems in 300 files"),
        "{}",
        brief(&later)
    );
    run.shutdown(Duration::from_secs(5)).await;
}

/// A folder created with files already in it (a checkout, an unpacked archive): the files
/// raised their events before the folder was watched, and are still each diagnosed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_put_in_a_new_folder_before_it_is_watched_are_seen() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    core_project(&ws);
    let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
    common::call_text(
        &run,
        "write",
        json!({"path": "core.py", "content": "def target(x: int) -> int:\n    return x + 1\n"}),
    )
    .await;
    let status = ready(&run).await;
    assert!(status.contains(": ready,"), "{status}");
    // The folder and its files at once, before any watch on it can exist.
    let fresh = ws.join("fresh/inner");
    std::fs::create_dir_all(&fresh).unwrap();
    for n in 0..5 {
        let text = format!("from core import target\n\nV{n}: str = target({n})\n");
        std::fs::write(fresh.join(format!("m{n}.py")), text).unwrap();
    }
    let told = outside_notice(&run).await;
    assert!(
        told.contains(
            "after an outside change to fresh/inner/m0.py, fresh/inner/m1.py, fresh/inner/m2.py, 2 more"
        ),
        "{told}"
    );
    // Deleted and made again (a branch switch and back): the new folders are watched too,
    // so an edit in them later is seen.
    std::fs::remove_dir_all(ws.join("fresh")).unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    std::fs::create_dir_all(&fresh).unwrap();
    let again = fresh.join("again.py");
    std::fs::write(&again, "from core import target\n\nA: str = target(1)\n").unwrap();
    let told = notice_naming(&run, "fresh/inner/again.py").await;
    assert!(told.contains("\"str\""), "{told}");
    std::fs::write(
        &again,
        "from core import target\n\nA: str = target(1)\nB: bytes = target(2)\n",
    )
    .unwrap();
    let told = notice_naming(&run, "fresh/inner/again.py").await;
    assert!(told.contains("\"bytes\""), "{told}");
    run.shutdown(Duration::from_secs(5)).await;
}

/// The first cheap call's result whose outside-change notice names `file`, or the last after
/// a minute.
async fn notice_naming(run: &tether::Run, file: &str) -> String {
    let names = |out: &str| out.contains("outside change") && out.contains(file);
    common::read_until(run, "core.py", 120, names).await
}

/// A burst larger than `[lsp] outside_files_max` is not all asked about: the files the run
/// wrote come first, then changed files before new ones (which have nothing to compare with),
/// and the notice counts those left out rather than letting the model take the ones told for
/// the whole switch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_past_the_bound_asks_about_the_runs_files_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    core_project(&ws);
    for n in 0..30 {
        common::write(&ws, &format!("pkg/m{n:02}.py"), &module(n, "a"));
    }
    let config = format!("{}outside_files_max = 3\n", common::LSP_BUDGETS);
    let run = common::run_with_config(dir.path(), &config);
    // The run writes one module late in the burst's order: it is asked about first.
    common::call_text(
        &run,
        "write",
        json!({"path": "pkg/m27.py", "content": module(27, "a + 1")}),
    )
    .await;
    let status = ready(&run).await;
    assert!(status.contains(": ready,"), "{status}");
    // New files, in a folder whose name comes first, and every module changed.
    for n in 0..10 {
        common::write(&ws, &format!("a_new/n{n}.py"), &module(n, "str(a)"));
    }
    for n in 0..30 {
        std::fs::write(ws.join(format!("pkg/m{n:02}.py")), module(n, "str(a)")).unwrap();
    }
    let told = common::read_until(&run, "core.py", 120, |out| out.contains("not diagnosed")).await;
    assert!(
        told.contains("37 of the 40 files a language server covers that changed outside"),
        "{told}"
    );
    // The diagnosis comes in the same result or a later one.
    let mut told = told;
    if !told.contains("after an outside change to") {
        told = outside_notice(&run).await;
    }
    let event = told
        .lines()
        .find(|l| l.contains("after an outside change to"))
        .unwrap_or_default();
    assert!(
        event.contains("pkg/m27.py") && event.contains("pkg/m00.py") && !event.contains("a_new"),
        "{told}"
    );
    // A write that breaks nothing is not blamed for what the switch did to the files it
    // left undiagnosed, whenever pyright gets to publish them.
    let out = common::call_text(
        &run,
        "write",
        json!({"path": "core.py", "content": "def target(x: int) -> int:\n    return x + 2\n"}),
    )
    .await;
    let later =
        common::read_until(&run, "core.py", 20, |out| out.contains("write #2, found")).await;
    for seen in [&out, &later] {
        assert!(
            !seen.contains("(another file, not written): 1 new"),
            "{seen}"
        );
    }
    run.shutdown(Duration::from_secs(5)).await;
}
