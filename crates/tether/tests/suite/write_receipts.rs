//! The write hooks judge the bytes a write committed, carried by its receipt, not the file as
//! it is when they run: a tool that changes the file again right after its commit (here, with
//! a plain write behind the door's back) still gets the report on what it committed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::call_text as call;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tether::{RunBuilder, Tier, ToolError, ToolOutput};
use tether_fs::ChangeOp;
use tether_tool::{CallCx, Concurrency, Tool};

/// Commits `committed` to a new file through the door, then puts `after` there directly.
struct WriteThenTouch;

#[derive(Deserialize, JsonSchema)]
struct Args {
    path: String,
    committed: String,
    after: String,
}

impl Tool for WriteThenTouch {
    type Args = Args;
    fn name(&self) -> &'static str {
        "write_then_touch"
    }
    fn description(&self) -> String {
        "Commits a file, then changes it on disk behind the door.".into()
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn concurrency(&self, _: &Args) -> Concurrency {
        Concurrency::Workspace
    }
    async fn call(&self, cx: &CallCx, args: Args) -> Result<ToolOutput, ToolError> {
        let path = cx.workspace().resolve_write(&args.path)?;
        let op = ChangeOp::Create {
            path: path.clone(),
            content: args.committed.into_bytes(),
        };
        cx.fs().commit(vec![op]).await?;
        std::fs::write(path.abs(), args.after).unwrap();
        Ok(ToolOutput::text("written, then touched"))
    }
}

#[tokio::test]
async fn the_syntax_check_judges_the_committed_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunBuilder::new(dir.path())
        .user_config_dir(dir.path().join(".cfg-unused"))
        .tool(WriteThenTouch)
        .build()
        .unwrap();
    let args = json!({
        "path": "new.py",
        "committed": "def f(:\n    return 1\n",
        "after": "def f():\n    return 1\n",
    });
    let out = call(&run, "write_then_touch", args).await;
    assert!(out.contains("new.py: 1 new syntax error"), "{out}");
}

#[tokio::test]
async fn diagnostics_on_write_judge_the_committed_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let entry = common::documented_toy_project(dir.path(), "receipts-lsp");
    let cfg = dir.path().join("cfg");
    common::write(
        &cfg,
        "tether.toml",
        &format!("{}{entry}", common::LSP_BUDGETS),
    );
    let run = RunBuilder::new(&ws)
        .user_config_dir(&cfg)
        .state_dir(dir.path().join("state"))
        .tool(WriteThenTouch)
        .build()
        .unwrap();
    // The server runs before the write, so the new file's report has a baseline.
    let hover = json!({"action": "hover", "file": "src/hello.toy", "line": 1, "symbol": "hello"});
    let out = call(&run, "lsp", hover).await;
    assert!(out.contains("toy hover"), "{out}");
    let args = json!({
        "path": "src/new.toy",
        "committed": "hello\nBAD\n",
        "after": "hello\n",
    });
    let out = call(&run, "write_then_touch", args).await;
    assert!(out.contains("src/new.toy: 1 new problem"), "{out}");
    assert!(
        out.contains("line 2 (new): error toy: BAD is not allowed"),
        "{out}"
    );
    run.shutdown(Duration::from_secs(5)).await;
}
