//! The `eval` tool with the real python3 from the project's `.venv`: state kept between cells,
//! the echo, output from Python and from a shell command in order with `display`, errors, a
//! reset, a kernel that exits and the fresh one after it, the idle budget (a silent loop is
//! interrupted with its state kept, a chatty cell is not), the `tool()` bridge, and no kernel
//! left after the run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use tether::{Run, Surface};
use tokio_util::sync::CancellationToken;

async fn eval(run: &Run, code: &str) -> String {
    run.runtime()
        .call(
            Surface::Agent,
            "eval",
            json!({"code": code, "description": "a test cell"}),
            CancellationToken::new(),
        )
        .await
        .map(|o| o.to_text())
        .unwrap_or_else(|e| format!("ERROR {e}"))
}

/// A run over a project whose `.venv` is the test environment, with a 2 s idle budget.
fn project(dir: &Path) -> Run {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-venv");
    assert!(
        venv.join("bin/python").exists(),
        "target/test-venv is missing: run scripts/test, which makes it"
    );
    let ws = dir.join("ws");
    common::write(&ws, "notes.txt", "first line\nsecond line\n");
    std::os::unix::fs::symlink(venv.canonicalize().unwrap(), ws.join(".venv")).unwrap();
    common::run_with_config(dir, "[eval]\nidle_timeout_s = 2\n")
}

#[test]
fn python_cells_keep_their_state_and_show_output_in_order() {
    // Each checks the process table for kernels of this process.
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());

        let first = eval(&run, "x = 41\nx + 1").await;
        assert!(
            first.contains("started Python 3.")
                && first.contains("ws/.venv/bin/python) (the project's .venv)"),
            "{first}"
        );
        assert!(first.ends_with("Out: 42"), "{first}");
        let again = eval(&run, "x * 2").await;
        assert_eq!(again, "Out: 82", "the state or the echo was lost");

        // Python's prints, a shell command's output and displays, in the order they happened.
        let mixed = eval(
            &run,
            "import os, sys\nprint('one')\ndisplay({'two': 2})\nos.system('echo three')\n\
             print('four', file=sys.stderr)\ndisplay('five')\nNone",
        )
        .await;
        assert_eq!(mixed, "one\n{'two': 2}\nthree\nfour\n'five'", "{mixed}");

        // Rich forms: markdown before repr, HTML as text.
        let rich = eval(
            &run,
            "class Md:\n    def _repr_markdown_(self): return '**bold**'\n\
             class Html:\n    def _repr_html_(self): return '<p>a &amp; b</p>'\n\
             display(Md())\nHtml()",
        )
        .await;
        assert_eq!(rich, "**bold**\nOut: a & b", "{rich}");

        // An error is an error, with the printed output and the traceback of the cell.
        let failed = eval(&run, "print('before')\n{}['missing']").await;
        assert!(
            failed.starts_with("ERROR before\nTraceback")
                && failed.contains("File \"<cell 5>\", line 2, in <module>")
                && failed.contains("KeyError: 'missing'")
                && !failed.contains("<string>"),
            "{failed}"
        );

        // Reset: the old variables are gone.
        let reset = run
            .runtime()
            .call(
                Surface::Agent,
                "eval",
                json!({"code": "'x' in globals()", "description": "check a reset", "reset": true}),
                CancellationToken::new(),
            )
            .await
            .unwrap()
            .to_text();
        assert!(
            reset.contains("reset: the old kernel and its variables are gone")
                && reset.ends_with("Out: False"),
            "{reset}"
        );

        // A kernel that exits is reported once; the next cell runs in a fresh one.
        eval(&run, "y = 1").await;
        let died = eval(&run, "import os\nprint('bye', flush=True)\nos._exit(1)").await;
        assert!(
            died.contains("bye")
                && died.contains("the kernel died during the cell (exit code 1)")
                && died.contains("its state is gone"),
            "{died}"
        );
        let fresh = eval(&run, "'y' in globals()").await;
        assert!(
            fresh.contains("started Python") && fresh.ends_with("Out: False"),
            "{fresh}"
        );

        let bad = run
            .runtime()
            .call(
                Surface::Agent,
                "eval",
                json!({"code": "1", "description": " "}),
                CancellationToken::new(),
            )
            .await
            .unwrap_err()
            .to_string();
        assert!(bad.contains("`description` is empty"), "{bad}");
        let js = run
            .runtime()
            .call(
                Surface::Agent,
                "eval",
                json!({"code": "1", "description": "js", "language": "javascript"}),
                CancellationToken::new(),
            )
            .await
            .unwrap_err()
            .to_string();
        assert!(js.contains("not built yet"), "{js}");

        run.shutdown(Duration::from_secs(5)).await;
    });
    let left = tether_proc::children_named(std::process::id(), "python");
    assert!(left.is_empty(), "a kernel was left running: {left:?}");
}

#[test]
fn the_idle_budget_interrupts_a_silent_cell_and_spares_a_chatty_one() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        eval(&run, "kept = 'still here'").await;
        let stuck = eval(&run, "print('looping')\nwhile True:\n    pass").await;
        assert!(
            stuck.contains("looping")
                && stuck.contains("KeyboardInterrupt")
                && stuck.contains("interrupted after 2 s without output")
                && stuck.contains("the kernel and its variables are kept"),
            "{stuck}"
        );
        assert_eq!(eval(&run, "kept").await, "Out: 'still here'");

        // Output every half second for 4 s: never silent for the 2 s budget.
        let chatty = eval(
            &run,
            "import time\nfor i in range(8):\n    print(i, flush=True)\n    time.sleep(0.5)\n'done'",
        )
        .await;
        assert!(chatty.ends_with("7\nOut: 'done'"), "{chatty}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn a_cell_calls_the_runs_own_tools() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        let read = eval(
            &run,
            "text = tool('read', {'path': 'notes.txt'})\nprint(text)\n'second line' in text",
        )
        .await;
        assert!(
            read.contains("first line") && read.ends_with("Out: True"),
            "{read}"
        );
        // A write through the bridge goes through the same door.
        let wrote = eval(
            &run,
            "tool('write', {'path': 'made.txt', 'content': 'made in a cell\\n'})",
        )
        .await;
        assert!(wrote.contains("made.txt"), "{wrote}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("ws/made.txt")).unwrap(),
            "made in a cell\n"
        );
        // A tool's failure raises in the cell with its message; eval cannot call eval.
        let missing = eval(
            &run,
            "try:\n    tool('read', {'path': 'nope.txt'})\nexcept ToolError as e:\n    print('raised:', e)",
        )
        .await;
        assert!(missing.contains("raised: nope.txt"), "{missing}");
        let nested = eval(&run, "tool('eval', {'code': '1', 'description': 'again'})").await;
        assert!(
            nested.contains("ToolError") && nested.contains("a tool cannot call itself"),
            "{nested}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}
