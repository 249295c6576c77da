//! An agent runtime embedding tether without MCP: it opens a run over a workspace, shows the
//! tools plan mode sees, and calls `read` the way its model would.
//!
//! `cargo run -p tether --example host -- DIR FILE`

use std::process::ExitCode;

use serde_json::json;
use tether::{RunBuilder, Surface};
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(root), Some(file)) = (args.next(), args.next()) else {
        eprintln!("usage: host DIR FILE");
        return ExitCode::from(2);
    };
    let run = match RunBuilder::new(&root).conversation("example").build() {
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
    let cancel = CancellationToken::new();
    match run
        .runtime()
        .call(
            Surface::Plan,
            "read",
            json!({"path": file, "limit": 5}),
            cancel,
        )
        .await
    {
        Ok(out) => {
            println!("{}", out.to_text());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("read failed: {e}");
            ExitCode::from(1)
        }
    }
}
