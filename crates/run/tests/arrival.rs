//! Writes take the workspace permit in the order their calls arrived, whatever order their
//! tasks happen to start in; reads never wait in that line, and nothing waits forever.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tether_fs::{ChangeOp, Journal, StagedStore, Workspace};
use tether_run::{CallOptions, RunResources, Runtime, ToolTable};
use tether_tool::{
    ApprovalPolicy, CallCx, Concurrency, NoticeQueue, Surface, Tier, Tool, ToolError, ToolOutput,
    WriteHooks,
};
use tokio_util::sync::CancellationToken;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LinkArgs {
    n: u32,
}

/// Creates `n.txt`, and refuses unless `n-1.txt` is already there: a chain that only an
/// in-order run completes.
struct Link;
impl Tool for Link {
    type Args = LinkArgs;
    fn name(&self) -> &'static str {
        "link"
    }
    fn description(&self) -> String {
        "add the next link of a chain".into()
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Workspace
    }
    async fn call(&self, cx: &CallCx, a: LinkArgs) -> Result<ToolOutput, ToolError> {
        if a.n > 0
            && !cx
                .workspace()
                .root()
                .join(format!("{}.txt", a.n - 1))
                .exists()
        {
            return Err(ToolError::failed(format!(
                "link {} ran before link {}",
                a.n,
                a.n - 1
            )));
        }
        let path = cx.workspace().resolve_write(&format!("{}.txt", a.n))?;
        tokio::task::yield_now().await;
        cx.fs()
            .commit(vec![ChangeOp::Create {
                path,
                content: Vec::new(),
            }])
            .await?;
        Ok(ToolOutput::text("linked"))
    }
}

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// A read that answers at once.
struct Look;
impl Tool for Look {
    type Args = NoArgs;
    fn name(&self) -> &'static str {
        "look"
    }
    fn description(&self) -> String {
        "read nothing".into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, _cx: &CallCx, _a: NoArgs) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("looked"))
    }
}

/// A registry over a fresh workspace `dir/ws`, its journal kept under `dir/state`.
fn registry(dir: &std::path::Path) -> Runtime {
    std::fs::create_dir(dir.join("ws")).unwrap();
    let ws = Workspace::new(&dir.join("ws")).unwrap();
    let (journal, _) = Journal::open(&ws, &dir.join("state")).unwrap();
    let resources = RunResources {
        workspace: Arc::new(ws),
        journal: Arc::new(journal),
        staged: Arc::new(StagedStore::new()),
        hooks: WriteHooks::new(Vec::new()),
        notices: NoticeQueue::default(),
        approval: ApprovalPolicy::Never,
        questions: Default::default(),
        ask_timeout: std::time::Duration::from_secs(5),
        conversation: None,
    };
    let mut table = ToolTable::builder();
    table.register(Link).register(Look);
    Runtime::new(resources, table.build())
}

/// A root call that holds `arrival`'s place in line.
async fn call_in_order(
    reg: &Runtime,
    surface: Surface,
    tool: &str,
    args: serde_json::Value,
    cancel: CancellationToken,
    arrival: &tether_run::Arrival,
) -> Result<ToolOutput, ToolError> {
    let opts = CallOptions::default().cancel(cancel).in_order(arrival);
    reg.call_with(surface, tool, args, opts).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_take_the_permit_in_arrival_order_whatever_order_their_tasks_start() {
    let dir = tempfile::tempdir().unwrap();
    let reg = registry(dir.path());
    let arrivals: Vec<_> = (0..20).map(|_| reg.arrive()).collect();
    // Started last first, as a runtime may well poll them.
    let mut tasks = Vec::new();
    for (n, arrival) in arrivals.into_iter().enumerate().rev() {
        let reg = reg.clone();
        tasks.push(tokio::spawn(async move {
            let args = json!({ "n": n });
            let cancel = CancellationToken::new();
            call_in_order(&reg, Surface::Agent, "link", args, cancel, &arrival).await
        }));
    }
    for task in tasks {
        let result = tokio::time::timeout(Duration::from_secs(30), task)
            .await
            .expect("a write never got the permit")
            .unwrap();
        assert_eq!(result.unwrap().to_text(), "linked");
    }
}

#[tokio::test]
async fn a_read_never_waits_for_a_write_that_arrived_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let reg = registry(dir.path());
    let _stuck_write = reg.arrive();
    let read = reg.arrive();
    let cancel = CancellationToken::new();
    let out = tokio::time::timeout(
        Duration::from_secs(5),
        call_in_order(&reg, Surface::Agent, "look", json!({}), cancel, &read),
    )
    .await
    .expect("the read waited in the writers' line");
    assert_eq!(out.unwrap().to_text(), "looked");
}

#[tokio::test]
async fn calls_that_fail_early_or_never_start_leave_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let reg = registry(dir.path());
    let (unknown, bad_args, refused, dropped, write) = (
        reg.arrive(),
        reg.arrive(),
        reg.arrive(),
        reg.arrive(),
        reg.arrive(),
    );
    let call = |tool: &'static str, args, surface, arrival| {
        let reg = reg.clone();
        async move {
            call_in_order(
                &reg,
                surface,
                tool,
                args,
                CancellationToken::new(),
                &arrival,
            )
            .await
        }
    };
    assert!(
        call("nope", json!({}), Surface::Agent, unknown)
            .await
            .is_err()
    );
    let bad = call("link", json!({"n": "x"}), Surface::Agent, bad_args).await;
    assert!(bad.is_err());
    let plan = call("link", json!({"n": 0}), Surface::Plan, refused).await;
    assert!(plan.is_err());
    drop(dropped);
    let out = tokio::time::timeout(
        Duration::from_secs(5),
        call("link", json!({"n": 0}), Surface::Agent, write),
    )
    .await
    .expect("a place that failed early still held up the write");
    assert_eq!(out.unwrap().to_text(), "linked");
}

#[tokio::test]
async fn a_write_cancelled_while_in_line_leaves_it() {
    let dir = tempfile::tempdir().unwrap();
    let reg = registry(dir.path());
    let first = reg.arrive();
    let (second, third) = (reg.arrive(), reg.arrive());
    let cancel = CancellationToken::new();
    let waiting = {
        let (reg, cancel) = (reg.clone(), cancel.clone());
        tokio::spawn(async move {
            call_in_order(
                &reg,
                Surface::Agent,
                "link",
                json!({"n": 5}),
                cancel,
                &second,
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    cancel.cancel();
    assert!(matches!(waiting.await.unwrap(), Err(ToolError::Cancelled)));
    drop(first);
    let out = tokio::time::timeout(
        Duration::from_secs(5),
        call_in_order(
            &reg,
            Surface::Agent,
            "link",
            json!({"n": 0}),
            CancellationToken::new(),
            &third,
        ),
    )
    .await
    .expect("the cancelled write still held its place");
    assert!(out.is_ok());
}
