//! The `eval` bridge with a host tool that takes longer than the cell's idle budget and
//! returns an image: the cell waits without being interrupted and gets the image as an object.
//! Also: a cancelled cell is interrupted with its kernel kept, a plan-surface caller cannot
//! reach the kernel (and so no tool through it), and a bridged write gets pyright's report.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tether::{Run, RunBuilder, Surface};
use tether_tool::{CallCx, Concurrency, Tier, Tool, ToolError, ToolOutput};
use tokio_util::sync::CancellationToken;

/// A PNG's first bytes, enough for the kernel to carry as an image.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\nnot a whole picture";

#[derive(Deserialize, JsonSchema)]
struct SlowArgs {
    /// Seconds to wait.
    seconds: u64,
}

/// A host tool that waits, then answers with text and an image.
struct SlowPicture;

impl Tool for SlowPicture {
    type Args = SlowArgs;

    fn name(&self) -> &'static str {
        "slow_picture"
    }

    fn description(&self) -> String {
        "Waits, then returns a picture.".into()
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn concurrency(&self, _: &SlowArgs) -> Concurrency {
        Concurrency::Free
    }

    async fn call(&self, _cx: &CallCx, args: SlowArgs) -> Result<ToolOutput, ToolError> {
        tokio::time::sleep(Duration::from_secs(args.seconds)).await;
        let mut out = ToolOutput::text("a picture");
        out.push_png(PNG.to_vec());
        Ok(out)
    }
}

fn run(dir: &Path) -> Run {
    let cfg = dir.join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("tether.toml"), "[eval]\nidle_timeout_s = 1\n").unwrap();
    std::fs::create_dir_all(dir.join("ws")).unwrap();
    RunBuilder::new(dir.join("ws"))
        .user_config_dir(&cfg)
        .state_dir(dir.join("state"))
        .tool(SlowPicture)
        .build()
        .unwrap()
}

async fn eval_on(run: &Run, surface: Surface, code: &str, cancel: CancellationToken) -> String {
    run.runtime()
        .call(
            surface,
            "eval",
            json!({"code": code, "description": "a cell of the tool bridge tests"}),
            cancel,
        )
        .await
        .map(|o| o.to_text())
        .unwrap_or_else(|e| format!("ERROR {e}"))
}

#[test]
fn a_bridged_call_longer_than_the_budget_is_waited_for_and_its_image_arrives() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = run(dir.path());
        let code = "got = tool('slow_picture', {'seconds': 3})\n\
                    print(got, got.images)\ndisplay(got.images[0])\nlen(got.images[0].png)";
        let out = eval_on(&run, Surface::Agent, code, CancellationToken::new()).await;
        assert!(
            out.contains("a picture [<image: PNG, 27 bytes>]")
                && out.contains("[image: PNG, 27 bytes]")
                && out.ends_with("Out: 27")
                && !out.contains("interrupted"),
            "{out}"
        );

        // A cancelled cell is interrupted at once and its kernel kept.
        eval_on(&run, Surface::Agent, "kept = 7", CancellationToken::new()).await;
        // Cancelled once the cell has begun its loop: earlier, it would never reach the kernel.
        let began = dir.path().join("began");
        let cancel = CancellationToken::new();
        let (later, marker) = (cancel.clone(), began.clone());
        tokio::spawn(async move {
            while !marker.exists() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            later.cancel();
        });
        let code = format!(
            "import time\nopen({:?}, 'w').close()\nwhile True:\n    print('.', end='', flush=True)\n    \
             time.sleep(0.1)",
            began.display().to_string()
        );
        let cancelled = eval_on(&run, Surface::Agent, &code, cancel).await;
        assert!(cancelled.contains("cancelled"), "{cancelled}");
        let kept = eval_on(&run, Surface::Agent, "kept", CancellationToken::new()).await;
        assert_eq!(kept, "Out: 7");

        // Plan mode never reaches the kernel, so no tool through it either.
        let plan = eval_on(
            &run,
            Surface::Plan,
            "tool('write', {'path': 'x.txt', 'content': 'x'})",
            CancellationToken::new(),
        )
        .await;
        assert!(
            plan.contains("exec-tier") || plan.contains("unknown tool"),
            "{plan}"
        );
        assert!(!dir.path().join("ws/x.txt").exists());
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// A write a JavaScript cell makes through the bridge is checked by the real pyright like any
/// other write: the cell reads the new type error in the tool's text.
#[test]
fn a_bridged_write_gets_the_language_servers_diagnostics() {
    let _serial = common::one_at_a_time();
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|d| d.join("pyright-langserver").is_file()),
        "pyright-langserver is not on PATH: run scripts/test, which installs it"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        common::write(
            &ws,
            "pyproject.toml",
            "[project]\nname = \"w\"\nversion = \"0.1\"\n",
        );
        common::write(&ws, "m.py", "def g() -> int:\n    return 1\n");
        let config = format!(
            "{}[lsp.diagnostics]\nwait_ms = 30000\nbaseline_ms = 30000\n",
            common::LSP_BUDGETS
        );
        let run = common::run_with_config(dir.path(), &config);
        // The server is up before the write, as `tether serve`'s warm-up makes it.
        common::call_text(
            &run,
            "lsp",
            json!({"action": "diagnostics", "file": "m.py"}),
        )
        .await;
        let cell = "const said = await tool('edit', {path: 'm.py', old_string: 'return 1', \
                    new_string: 'return \"one\"'});\nconsole.log(String(said))";
        let out = common::call_text(
            &run,
            "eval",
            json!({"code": cell, "description": "break a return type through the bridge", "language": "javascript"}),
        )
        .await;
        assert!(
            out.contains("diagnostics (pyright) after this write:")
                && out.contains("m.py: 1 new problem")
                && out.contains("\"int\""),
            "{out}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}
