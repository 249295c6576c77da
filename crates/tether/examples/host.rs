//! An agent runtime embedding tether without MCP: it opens a run over a workspace, shows the
//! tools plan mode sees, and calls `read` the way its model would. Given a text too, it saves
//! that text with its own writer, which it wrapped with `RunBuilder::wrap_write`, so the save
//! comes back with the problems it introduced, like any tether write.
//!
//! `cargo run -p tether --example host -- DIR FILE [TEXT]`

use std::process::ExitCode;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tether::{RunBuilder, Surface, Tier, ToolError, ToolOutput};
use tether_tool::{CallCx, Concurrency, Preview, Tool};
use tokio_util::sync::CancellationToken;

/// The host's own writer: it writes with std::fs, as a host's editor would.
struct Save;

#[derive(Deserialize, JsonSchema)]
struct SaveArgs {
    /// The file, relative to the workspace.
    path: String,
    /// Its whole new text.
    text: String,
}

impl Tool for Save {
    type Args = SaveArgs;
    fn name(&self) -> &'static str {
        "save"
    }
    fn description(&self) -> String {
        "Saves a whole file with the host's own writer.".into()
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn concurrency(&self, _: &SaveArgs) -> Concurrency {
        Concurrency::Workspace
    }
    /// The file a save writes: the run's write hooks look at it before and after.
    fn preview(&self, args: &SaveArgs) -> Preview {
        Preview::new(format!("save {}", args.path), vec![args.path.clone()])
    }
    async fn call(&self, cx: &CallCx, args: SaveArgs) -> Result<ToolOutput, ToolError> {
        let path = cx.workspace().root().join(&args.path);
        std::fs::write(&path, &args.text)
            .map_err(|e| ToolError::invalid(format!("cannot save {}: {e}", args.path)))?;
        Ok(ToolOutput::text(format!("saved {}", args.path)))
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(root), Some(file)) = (args.next(), args.next()) else {
        eprintln!("usage: host DIR FILE [TEXT]");
        return ExitCode::from(2);
    };
    let text = args.next();
    let built = RunBuilder::new(&root)
        .conversation("example")
        .wrap_write(Save)
        .build();
    let run = match built {
        Ok(run) => run,
        Err(e) => {
            eprintln!("cannot open a run over {root}: {e}");
            return ExitCode::from(1);
        }
    };
    let plan: Vec<String> = run
        .runtime()
        .tools(Surface::Plan)
        .into_iter()
        .map(|t| t.name)
        .collect();
    println!("plan mode sees: {}", plan.join(", "));
    let read = json!({"path": file, "limit": 5});
    let mut calls = vec![(Surface::Plan, "read", read)];
    if let Some(text) = text {
        // As `tether serve` does: language servers start before the first write, so what the
        // file had before is known and never blamed on the save.
        run.warm().await;
        calls.push((Surface::Agent, "save", json!({"path": file, "text": text})));
    }
    let mut code = ExitCode::SUCCESS;
    for (surface, tool, args) in calls {
        match run
            .runtime()
            .call(surface, tool, args, CancellationToken::new())
            .await
        {
            Ok(out) => println!("{}", out.to_text()),
            Err(e) => {
                eprintln!("{tool} failed: {e}");
                code = ExitCode::from(1);
            }
        }
    }
    run.shutdown(std::time::Duration::from_secs(5)).await;
    code
}
