//! The `eval` tool with the real node: declarations kept between cells (a `const` bound by a
//! top-level `await` included, and one declared again), the echo, prints and `display` in order
//! with a child's output, images, errors with their place, a reset, a kernel that exits and
//! the fresh one after it, the idle budget (a busy loop and a promise that never settles are
//! interrupted with their state kept; a chatty cell is not), the `await tool()` bridge, and no
//! node left after the run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use tether::{Run, Surface};
use tether_tool::Block;
use tokio_util::sync::CancellationToken;

/// A 1×1 PNG, as base64.
const DOT_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

async fn js_output(run: &Run, code: &str) -> Result<tether_tool::ToolOutput, String> {
    run.runtime()
        .call(
            Surface::Agent,
            "eval",
            json!({"code": code, "description": "a cell of the JavaScript kernel tests", "language": "javascript"}),
            CancellationToken::new(),
        )
        .await
        .map_err(|e| format!("ERROR {e}"))
}

async fn js(run: &Run, code: &str) -> String {
    js_output(run, code)
        .await
        .map(|o| o.to_text())
        .unwrap_or_else(|e| e)
}

/// The process id of the run's JavaScript kernel, from inside it.
async fn kernel_pid(run: &Run) -> u32 {
    let out = js(run, "process.pid").await;
    out.rsplit("Out: ")
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in {out:?}"))
}

/// A run with an idle budget of 2 s and a file to read.
fn project(dir: &Path) -> Run {
    let ws = dir.join("ws");
    common::write(&ws, "notes.txt", "first line\nsecond line\n");
    common::run_with_config(dir, "[eval]\nidle_timeout_s = 2\n")
}

#[test]
fn javascript_cells_keep_their_declarations_and_show_output_in_order() {
    // Each checks the process table for kernels of this process.
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let kernels = rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());

        let first = js(&run, "const answer = await Promise.resolve(41)\nanswer + 1").await;
        assert!(
            first.contains("started Node.js v") && first.contains("(node on PATH)"),
            "{first}"
        );
        assert!(first.ends_with("Out: 42"), "{first}");
        // The `const` bound by an await is there in the next cell, and may be declared again.
        assert_eq!(js(&run, "answer * 2").await, "Out: 82");
        assert_eq!(js(&run, "const answer = 7; answer").await, "Out: 7");
        let class = js(&run, "class Box { size() { return 3 } }\nlet b = new Box()").await;
        assert_eq!(class, "", "a declaration echoes nothing");
        assert_eq!(
            js(
                &run,
                "class Box { size() { return 4 } }\nb.size() + new Box().size()"
            )
            .await,
            "Out: 7"
        );

        // Prints, a child's own output and displays, in the order they happened.
        let mixed = js(
            &run,
            "console.log('one')\ndisplay({two: 2})\n\
             require('child_process').spawnSync('echo', ['three'], {stdio: 'inherit'})\n\
             console.error('four')\ndisplay('five')\nundefined",
        )
        .await;
        assert_eq!(mixed, "one\n{ two: 2 }\nthree\nfour\nfive", "{mixed}");

        // An image from base64 comes back as a PNG block, between the prints.
        let shown = js_output(
            &run,
            &format!("console.log('before')\ndisplay(image('{DOT_PNG}'))\nconsole.log('after')"),
        )
        .await
        .unwrap();
        let blocks = shown.blocks();
        assert!(
            matches!(&blocks[0], Block::Text(t) if t == "before")
                && matches!(&blocks[1], Block::Png(png) if png.starts_with(b"\x89PNG\r\n\x1a\n"))
                && matches!(&blocks[2], Block::Text(t) if t == "after"),
            "{blocks:?}"
        );
        let not_png = js(&run, "image(Buffer.from('GIF89a'))").await;
        assert!(
            not_png.contains("do not start with the PNG signature"),
            "{not_png}"
        );

        // Errors name their place in the cell; a syntax error runs nothing of the cell.
        let thrown = js(&run, "const before = 1\nconsole.log('printed')\nnull.field").await;
        assert!(
            thrown.starts_with(
                "ERROR the cell raised TypeError: Cannot read properties of null (reading \
                 'field')\noutput before the error:\nprinted\nthe error:\nTypeError"
            ) && thrown.contains("cell "),
            "{thrown}"
        );
        let not_an_error = js(&run, "throw 42").await;
        assert!(
            not_an_error.starts_with("ERROR the cell raised 42\nthe error:\nUncaught 42"),
            "{not_an_error}"
        );
        let syntax = js(&run, "let never = 1\nawait 1; foo(").await;
        assert!(
            syntax.contains("SyntaxError") && syntax.contains("foo("),
            "{syntax}"
        );
        assert!(js(&run, "never").await.contains("never is not defined"));

        // A cell in the other language's words gets a hint naming the right `language`.
        let python_words = js(&run, "print(len([1, 2]))").await;
        assert!(
            python_words.contains("for Python, call eval with `language: \"python\"`"),
            "{python_words}"
        );
        let js_words = common::call_text(
            &run,
            "eval",
            json!({"code": "console.log(1)", "description": "print one in the wrong kernel"}),
        )
        .await;
        assert!(
            js_words.contains("for JavaScript, call eval with `language: \"javascript\"`"),
            "{js_words}"
        );
        // `js` is taken for `javascript`, as models often write it.
        let alias = common::call_text(
            &run,
            "eval",
            json!({"code": "typeof never", "description": "name the language by its short name", "language": "js"}),
        )
        .await;
        assert_eq!(alias, "Out: 'undefined'");

        let first = kernel_pid(&run).await;
        let reset = run
            .runtime()
            .call(
                Surface::Agent,
                "eval",
                json!({"code": "typeof answer", "description": "check what a reset leaves behind",
                       "language": "javascript", "reset": true}),
                CancellationToken::new(),
            )
            .await
            .unwrap()
            .to_text();
        assert!(
            reset.contains("reset: the old kernel and its variables are gone")
                && reset.ends_with("Out: 'undefined'"),
            "{reset}"
        );

        // A kernel that exits is reported once; the next cell runs in a fresh one.
        js(&run, "var kept = 1").await;
        let died = js(&run, "console.log('bye'); process.exit(3)").await;
        assert!(
            died.contains("bye")
                && died.contains("the kernel died during the cell (exit code 3)")
                && died.contains("its state is gone"),
            "{died}"
        );
        let fresh = js(&run, "typeof kept").await;
        assert!(
            fresh.contains("started Node.js") && fresh.ends_with("Out: 'undefined'"),
            "{fresh}"
        );
        let last = kernel_pid(&run).await;
        run.shutdown(Duration::from_secs(5)).await;
        [first, last]
    });
    // The kernels' own ids: other tests of this binary may run node programs meanwhile.
    for pid in kernels {
        assert!(
            tether_proc::gone_within(pid, Duration::from_secs(5)),
            "the kernel {pid} was left running"
        );
    }
}

#[test]
fn the_idle_budget_interrupts_a_stuck_javascript_cell_and_keeps_its_state() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        js(&run, "const kept = 'still here'").await;
        let busy = js(&run, "console.log('looping')\nwhile (true) {}").await;
        assert!(
            busy.contains("looping")
                && busy.contains("interrupted")
                && busy.contains("the kernel and its variables are kept"),
            "{busy}"
        );
        assert_eq!(js(&run, "kept").await, "Out: 'still here'");
        let waiting = js(&run, "await new Promise(() => {})").await;
        assert!(
            waiting.contains("Interrupted: the cell was stopped")
                && waiting.contains("interrupted after 2 s without output"),
            "{waiting}"
        );
        assert_eq!(js(&run, "kept.length").await, "Out: 10");

        // Output every half second for 4 s: never silent for the 2 s budget.
        let chatty = js(
            &run,
            "for (let i = 0; i < 8; i++) { console.log(i); await new Promise(r => setTimeout(r, 500)) }\n'done'",
        )
        .await;
        assert!(chatty.ends_with("7\nOut: 'done'"), "{chatty}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn a_javascript_cell_awaits_the_runs_own_tools() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        let read = js(
            &run,
            "const text = await tool('read', {path: 'notes.txt'})\nconsole.log(String(text))\ntext.includes('second line')",
        )
        .await;
        assert!(read.contains("first line") && read.ends_with("Out: true"), "{read}");
        let wrote = js(
            &run,
            "await tool('write', {path: 'made.js', content: 'export const a = 1;\\n'})",
        )
        .await;
        assert!(wrote.contains("made.js"), "{wrote}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("ws/made.js")).unwrap(),
            "export const a = 1;\n"
        );
        // Two calls in flight at once get their own answers.
        let both = js(
            &run,
            "const [x, y] = await Promise.all([tool('read', {path: 'notes.txt'}), tool('read', {path: 'made.js'})]);\n\
             [x.includes('first line'), y.includes('export const')]",
        )
        .await;
        assert_eq!(both, "Out: [ true, true ]");
        let missing = js(
            &run,
            "try { await tool('read', {path: 'nope.txt'}) } catch (e) { console.log(e.name, e.message.slice(0, 8)) }",
        )
        .await;
        assert!(missing.contains("ToolError nope.txt"), "{missing}");
        let nested = js(&run, "await tool('eval', {code: '1', description: 'again'})").await;
        assert!(
            nested.contains("ToolError") && nested.contains("a tool cannot call itself"),
            "{nested}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}
