//! A host's own command line: tether's front ends (serve, call, call --stdin) with one more
//! capability: `start_sleeper` starts a long-lived child the way a language server would,
//! `wait` blocks and reports progress the way a cold server would, and `conversation` says
//! which conversation the run serves. The front-end tests drive it to see each way a run or a
//! call ends reach what it started. Marks go to files in `$HOST_MARKS`, when set.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use tether_proc::{ChildSpec, LongChild};
use tether_tool::{
    BoxFuture, CallCx, Capability, Concurrency, Install, Tier, Tool, ToolError, ToolOutput,
};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::Mutex;

fn main() -> ExitCode {
    tether_cli::main_with(|run| run.capability(Sleeper::default()))
}

/// Owns one shell child, started on first use and kept until the run ends.
#[derive(Default, Clone)]
struct Sleeper {
    child: Arc<Mutex<Option<LongChild>>>,
}

impl Capability for Sleeper {
    fn name(&self) -> &'static str {
        "sleeper"
    }
    fn install(&mut self, run: &mut Install) {
        run.tool(StartSleeper(self.clone()))
            .tool(Wait)
            .tool(Conversation);
    }
    fn shutdown(&self, budget: Duration) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let child = self.child.lock().await.take();
            if let Some(mut child) = child {
                child.shutdown(budget).await;
            }
        })
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// Starts the child if it is not running, and answers with its pid.
struct StartSleeper(Sleeper);

impl Tool for StartSleeper {
    type Args = NoArgs;
    fn name(&self) -> &'static str {
        "start_sleeper"
    }
    fn description(&self) -> String {
        "Starts the long-lived child (once) and returns its pid.".into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, _: &NoArgs) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, _: &CallCx, _: NoArgs) -> Result<ToolOutput, ToolError> {
        let mut slot = self.0.child.lock().await;
        if slot.is_none() {
            // On a polite stop (SIGTERM) it leaves a mark, so a test can tell a deliberate
            // shutdown from a kill. It says `ready` once the trap is set, as a server answers
            // its handshake.
            let script = r#"trap '[ -n "$HOST_MARKS" ] && echo polite > "$HOST_MARKS/child"; exit 0' TERM
                            echo ready
                            while :; do sleep 1; done"#;
            let spec = ChildSpec {
                argv: vec!["sh".into(), "-c".into(), script.into()],
                ..ChildSpec::default()
            };
            let mut child =
                LongChild::spawn(&spec).map_err(|e| ToolError::failed(e.to_string()))?;
            let stdout = child
                .take_stdout()
                .ok_or_else(|| ToolError::failed("no stdout"))?;
            let mut ready = String::new();
            let mut stdout = BufReader::new(stdout);
            let read = stdout.read_line(&mut ready);
            match tokio::time::timeout(Duration::from_secs(10), read).await {
                Ok(Ok(_)) if ready.trim() == "ready" => {}
                _ => return Err(ToolError::failed("the child never said it was ready")),
            }
            *slot = Some(child);
        }
        let pid = slot.as_ref().and_then(LongChild::pid).unwrap_or(0);
        Ok(ToolOutput::text(pid.to_string()))
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WaitArgs {
    /// How many times to wait 200 ms, reporting progress each time.
    steps: u32,
}

/// Blocks for `steps` × 200 ms and reports progress at each step, as a cold server would.
struct Wait;

impl Tool for Wait {
    type Args = WaitArgs;
    fn name(&self) -> &'static str {
        "wait"
    }
    fn description(&self) -> String {
        "Waits steps × 200 ms, reporting progress at each step.".into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, _: &WaitArgs) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, cx: &CallCx, args: WaitArgs) -> Result<ToolOutput, ToolError> {
        for step in 1..=args.steps {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                _ = cx.cancel_token().cancelled() => {
                    mark("wait", &format!("cancelled at step {step}"));
                    return Err(ToolError::Cancelled);
                }
            }
            cx.progress(&format!("step {step} of {}", args.steps));
        }
        Ok(ToolOutput::text(format!("waited {} steps", args.steps)))
    }
}

/// Says which conversation the run serves (`serve --conversation`).
struct Conversation;

impl Tool for Conversation {
    type Args = NoArgs;
    fn name(&self) -> &'static str {
        "conversation"
    }
    fn description(&self) -> String {
        "Says which conversation this run serves.".into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, _: &NoArgs) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, cx: &CallCx, _: NoArgs) -> Result<ToolOutput, ToolError> {
        let id = cx.conversation().unwrap_or("(none)");
        Ok(ToolOutput::text(format!("conversation: {id}")))
    }
}

/// Leaves `text` in `$HOST_MARKS/name`, when the test set that folder.
fn mark(name: &str, text: &str) {
    if let Some(dir) = std::env::var_os("HOST_MARKS") {
        // Written whole, then renamed into place: a reader never sees it half-written.
        let dir = std::path::Path::new(&dir);
        let partial = dir.join(format!(".{name}.partial"));
        if std::fs::write(&partial, text).is_ok() {
            let _ = std::fs::rename(&partial, dir.join(name));
        }
    }
}
