//! A run ends what its capabilities started: on `Run::shutdown` and on drop. Checked in the
//! process table. The front ends' own endings, and a SIGKILL of tether, are tested through
//! the binary in `crates/cli/tests/front_end_shutdown.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tether::{RunBuilder, Surface};
use tether_proc::{ChildSpec, LongChild, gone_within, is_running};
use tether_tool::{
    BoxFuture, CallCx, Capability, Concurrency, Install, Tier, Tool, ToolError, ToolOutput,
};
use tokio_util::sync::CancellationToken;

/// A capability whose one tool starts a long-lived child on first use, as a language server
/// would, and keeps it until the run ends.
#[derive(Default, Clone)]
struct Sleeper {
    child: Arc<Mutex<Option<LongChild>>>,
}

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

struct StartTool(Sleeper);

impl Tool for StartTool {
    type Args = NoArgs;
    fn name(&self) -> &'static str {
        "start_sleeper"
    }
    fn description(&self) -> String {
        "start the long-lived child".into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, _: &NoArgs) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, _: &CallCx, _: NoArgs) -> Result<ToolOutput, ToolError> {
        let mut slot = self.0.child.lock().unwrap();
        if slot.is_none() {
            let spec = ChildSpec {
                argv: vec!["sleep".into(), "300".into()],
                ..ChildSpec::default()
            };
            *slot = Some(LongChild::spawn(&spec).map_err(|e| ToolError::failed(e.to_string()))?);
        }
        let pid = slot.as_ref().and_then(|c| c.pid()).unwrap_or(0);
        Ok(ToolOutput::text(format!("{pid}")))
    }
}

impl Capability for Sleeper {
    fn name(&self) -> &'static str {
        "sleeper"
    }
    fn install(&mut self, run: &mut Install) {
        run.tool(StartTool(self.clone()));
    }
    fn shutdown(&self, budget: Duration) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let child = self.child.lock().unwrap().take();
            if let Some(mut child) = child {
                child.shutdown(budget).await;
            }
        })
    }
}

fn run_over(dir: &Path) -> tether::Run {
    RunBuilder::new(dir)
        .user_config_dir(dir.join("cfg"))
        .state_dir(dir.join("state"))
        .capability(Sleeper::default())
        .build()
        .unwrap()
}

async fn start(run: &tether::Run) -> u32 {
    let out = run
        .runtime()
        .call(
            Surface::Agent,
            "start_sleeper",
            json!({}),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let pid: u32 = out.to_text().trim().parse().unwrap();
    assert!(is_running(pid));
    pid
}

#[tokio::test]
async fn shutdown_ends_the_child() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_over(dir.path());
    assert!(run.capabilities().contains(&"sleeper"));
    let pid = start(&run).await;
    run.shutdown(Duration::from_secs(2)).await;
    assert!(
        gone_within(pid, Duration::from_secs(5)),
        "still running after shutdown"
    );
}

#[tokio::test]
async fn dropping_the_run_ends_the_child() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_over(dir.path());
    let pid = start(&run).await;
    drop(run);
    assert!(
        gone_within(pid, Duration::from_secs(5)),
        "still running after drop"
    );
}
