//! A run ends what its capabilities started: on `Run::shutdown`, on drop, and when tether is
//! killed outright (the child's death signal). Checked in the process table.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tether::{RunBuilder, Surface};
use tether_proc::{ChildSpec, LongChild};
use tether_tool::{
    BoxFuture, CallCx, Capability, Concurrency, Install, Tier, Tool, ToolError, ToolOutput,
};
use tokio_util::sync::CancellationToken;

const CHILD_ENV: &str = "TETHER_SHUTDOWN_CHILD_ROOT";

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

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn gone_within(pid: u32, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
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
    assert!(alive(pid));
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

#[test]
fn a_killed_tether_takes_the_child_with_it() {
    if let Some(root) = std::env::var_os(CHILD_ENV) {
        // In the child: start the sleeper, say its pid, then wait to be killed.
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let run = run_over(Path::new(&root));
            let pid = start(&run).await;
            println!("PID {pid}");
            tokio::time::sleep(Duration::from_secs(120)).await;
        });
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut kid = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_killed_tether_takes_the_child_with_it",
            "--nocapture",
        ])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(kid.stdout.take().unwrap());
    let mut pid = None;
    let mut line = String::new();
    while std::io::BufRead::read_line(&mut out, &mut line).unwrap() > 0 {
        if let Some(p) = line.trim().strip_prefix("PID ") {
            pid = Some(p.parse::<u32>().unwrap());
            break;
        }
        line.clear();
    }
    let pid = pid.expect("the child never said its sleeper's pid");
    assert!(alive(pid));
    kid.kill().unwrap();
    kid.wait().unwrap();
    assert!(
        gone_within(pid, Duration::from_secs(5)),
        "the sleeper outlived a SIGKILL of tether"
    );
}
