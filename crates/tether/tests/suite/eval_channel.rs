//! The kernel's message channel and display limits with the real python3 and node: a cell that
//! forges a `done` or writes garbage on descriptor 4, or on the channel itself, does not shift
//! a later cell's output, and displays are capped like printed output (text, images, count).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;

use serde_json::json;
use tether::{Run, Surface};
use tether_tool::Block;
use tokio_util::sync::CancellationToken;

async fn cell(run: &Run, language: &str, code: &str) -> Result<tether_tool::ToolOutput, String> {
    run.runtime()
        .call(
            Surface::Agent,
            "eval",
            json!({"code": code, "description": "a cell of the kernel channel tests", "language": language}),
            CancellationToken::new(),
        )
        .await
        .map_err(|e| format!("ERROR {e}"))
}

async fn py(run: &Run, code: &str) -> String {
    cell(run, "python", code)
        .await
        .map(|o| o.to_text())
        .unwrap_or_else(|e| e)
}

async fn js(run: &Run, code: &str) -> String {
    cell(run, "javascript", code)
        .await
        .map(|o| o.to_text())
        .unwrap_or_else(|e| e)
}

/// A run whose `.venv` is the test environment, with a 10 s idle budget.
fn project(dir: &Path) -> Run {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-venv");
    assert!(
        venv.join("bin/python").exists(),
        "target/test-venv is missing: run scripts/test, which makes it"
    );
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::os::unix::fs::symlink(venv.canonicalize().unwrap(), ws.join(".venv")).unwrap();
    common::run_with_config(dir, "[eval]\nidle_timeout_s = 10\n")
}

/// The lines after the first cell's "started …" line.
fn after_start(text: &str) -> &str {
    text.split_once('\n').map_or("", |(_, rest)| rest)
}

#[test]
fn a_python_cell_writing_on_the_kernels_channel_cannot_shift_later_cells() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        assert_eq!(after_start(&py(&run, "x = 1\nx").await), "Out: 1");

        // What the issue saw: a forged `done` on descriptor 4 made the next cell return this
        // one's output. Descriptor 4 now reaches nothing.
        let forged = py(
            &run,
            "import os\nprint('forging')\nbody = b'{\"type\": \"done\", \"error\": null}'\n\
             os.write(4, b'Content-Length: %d\\r\\n\\r\\n' % len(body) + body)\nprint('forged')",
        )
        .await;
        assert_eq!(forged, "forging\nforged");
        assert_eq!(py(&run, "print('mine')\nx + 1").await, "mine\nOut: 2");

        // Garbage on descriptor 4 neither kills the kernel nor shifts the next cell.
        let garbage = py(
            &run,
            "import os\nos.write(4, b'garbage\\r\\n\\r\\n')\nprint('still here')",
        )
        .await;
        assert_eq!(garbage, "still here");
        assert_eq!(py(&run, "x + 2").await, "Out: 3");

        // A cell that finds the channel itself: its garbage and a frame over the size limit are
        // said and skipped, and the kernel and its state live on.
        let garbage = py(
            &run,
            "import sys\nkernel = sys.modules['__main__']\n\
             kernel._OUT.write(b'Content-Length: 999\\r\\n\\r\\n garbage')\n\
             big = b'Content-Length: 20000000\\r\\n\\r\\n' + b'x' * 20_000_000\n\
             kernel._OUT.write(kernel._MARK + big)\nprint('still here')",
        )
        .await;
        assert!(
            garbage.starts_with("still here\n[tether: ")
                && garbage.contains("bytes on the kernel's message channel that are not messages")
                && garbage.contains("over the limit of 16 MiB"),
            "{garbage}"
        );
        assert_eq!(py(&run, "x + 3").await, "Out: 4");

        // One that reads the running cell's token and sends a `done` with it ends itself early,
        // but not the next cell: its late output and displays are not shown there.
        let early = py(
            &run,
            "import sys, time\nkernel = sys.modules['__main__']\nprint('before')\n\
             kernel._send({'type': 'done', 'error': None})\ntime.sleep(0.5)\n\
             print('after')\ndisplay('shown late')",
        )
        .await;
        assert_eq!(early, "before");
        let next = py(&run, "print('mine')\ndisplay('mine too')\nx + 4").await;
        assert!(
            next.starts_with("[tether: the previous cell's end was signalled early")
                && next.ends_with("]\nmine\n'mine too'\nOut: 5"),
            "{next}"
        );
        assert_eq!(py(&run, "x + 5").await, "Out: 6");
    });
}

#[test]
fn a_javascript_cell_writing_on_descriptor_4_cannot_shift_later_cells() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        assert_eq!(after_start(&js(&run, "var x = 1; x").await), "Out: 1");

        let forged = js(
            &run,
            "const fs = require('fs');\nconsole.log('forging');\n\
             const body = '{\"type\": \"done\", \"error\": null}';\n\
             fs.writeSync(4, `Content-Length: ${body.length}\\r\\n\\r\\n${body}`);\n\
             console.log('forged');",
        )
        .await;
        assert_eq!(forged, "forging\nforged");
        assert_eq!(js(&run, "console.log('mine'); x + 1").await, "mine\nOut: 2");

        let garbage = js(
            &run,
            "require('fs').writeSync(4, 'garbage\\r\\n\\r\\n'); console.log('still here')",
        )
        .await;
        assert_eq!(garbage, "still here");
        assert_eq!(js(&run, "x + 2").await, "Out: 3");

        // A command the cell starts does not inherit the channel either.
        let child = js(
            &run,
            "require('child_process').execSync('printf garbage 2>/dev/null >&4; echo from the child', \
             {stdio: 'inherit'}); x + 3",
        )
        .await;
        assert_eq!(child, "from the child\nOut: 4");
        assert_eq!(js(&run, "x + 4").await, "Out: 5");
    });
}

/// A PNG signature and `size` bytes after it.
const BIG_PNG_PY: &str = "Image(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(5 << 20))";
const BIG_PNG_JS: &str = "image(Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, \
                          0x0a, 0x1a, 0x0a]), Buffer.alloc(5 << 20)]))";

/// Checks one language's capped displays: a long markdown repr, a 5 MiB image, 10,000 calls.
fn assert_capped(long: &str, big: &tether_tool::ToolOutput, many: &str) {
    assert!(
        long.len() < 26 << 10
            && long.starts_with("aaaa")
            && long.ends_with("bbbb\nOut: 1")
            && long
                .contains("bytes of output cut; the first 16 KiB and the last 8 KiB are kept …]"),
        "{} bytes: {}",
        long.len(),
        &long[..long.len().min(300)]
    );
    assert!(
        !big.blocks().iter().any(|b| matches!(b, Block::Png(_))),
        "the 5 MiB image was shown"
    );
    let said = big.to_text();
    assert!(
        said.contains("was not shown: over tether's limit of 4 MiB for one image"),
        "{said}"
    );
    let lines: Vec<&str> = many.lines().collect();
    assert!(
        lines.len() < 300
            && lines[0] == "0"
            && many.contains("more displays")
            && many.contains("not shown: a cell shows at most 200 displays"),
        "{} lines: {}",
        lines.len(),
        &many[..many.len().min(300)]
    );
}

#[test]
fn python_displays_are_capped_like_printed_output() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        py(&run, "None").await;
        let long = py(
            &run,
            "class Md:\n    def _repr_markdown_(self): return 'a' * (1 << 20) + 'b' * (1 << 20)\n\
             display(Md())\n1",
        )
        .await;
        let big = cell(&run, "python", &format!("display({BIG_PNG_PY})"))
            .await
            .unwrap();
        let many = py(&run, "for i in range(10_000): display(i)").await;
        assert_capped(&long, &big, &many);
        // The echo is capped too.
        let echo = py(&run, "Md()").await;
        assert!(
            echo.len() < 26 << 10 && echo.contains("bytes of output cut"),
            "{}",
            echo.len()
        );
    });
}

#[test]
fn javascript_displays_are_capped_like_printed_output() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        js(&run, "undefined").await;
        let long = js(
            &run,
            "const md = { _repr_markdown_: () => 'a'.repeat(1 << 20) + 'b'.repeat(1 << 20) };\n\
             display(md); 1",
        )
        .await;
        let big = cell(&run, "javascript", &format!("display({BIG_PNG_JS})"))
            .await
            .unwrap();
        let many = js(&run, "for (let i = 0; i < 10000; i++) display(String(i))").await;
        assert_capped(&long, &big, &many);
        let echo = js(&run, "md").await;
        assert!(
            echo.len() < 26 << 10 && echo.contains("bytes of output cut"),
            "{}",
            echo.len()
        );
    });
}
