//! Session permits: keyed by what the call names, overlapping across keys, queued on one,
//! and a wait that gives up at its deadline.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tether_tool::{CallCx, Concurrency, Surface, Tier, Tool, ToolError, ToolOutput};
use tokio_util::sync::CancellationToken;

mod common;
use common::{Nest, Wait};

#[derive(Deserialize, JsonSchema)]
struct SessionArgs {
    session: String,
}

/// Holds its session for 300 ms, logging when it starts and ends; the session key comes from
/// the arguments, as a debugger's or kernel's would.
struct InSession(Arc<Mutex<Vec<String>>>);
impl Tool for InSession {
    type Args = SessionArgs;
    fn name(&self) -> &'static str {
        "in_session"
    }
    fn description(&self) -> String {
        "hold a session for a while".into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, a: &SessionArgs) -> Concurrency {
        Concurrency::Session(a.session.clone())
    }
    async fn call(&self, _: &CallCx, a: SessionArgs) -> Result<ToolOutput, ToolError> {
        self.0.lock().unwrap().push(format!("start {}", a.session));
        tokio::time::sleep(Duration::from_millis(300)).await;
        self.0.lock().unwrap().push(format!("end {}", a.session));
        Ok(ToolOutput::text("ok"))
    }
}

/// Runs two `in_session` calls at once and returns the log of starts and ends.
async fn two_sessions(first: &str, second: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut b = common::parts(dir.path(), Vec::new());
    let log = Arc::new(Mutex::new(Vec::new()));
    b.register(InSession(log.clone()));
    let registry = b.build();
    let call = |s: &str| {
        registry.call(
            Surface::Agent,
            "in_session",
            json!({"session": s}),
            CancellationToken::new(),
        )
    };
    let (a, b) = tokio::join!(call(first), call(second));
    a.unwrap();
    b.unwrap();
    log.lock().unwrap().clone()
}

#[tokio::test]
async fn calls_on_different_sessions_overlap_and_on_one_session_queue() {
    let apart = two_sessions("dbg-1", "dbg-2").await;
    assert_eq!(&apart[..2], ["start dbg-1", "start dbg-2"], "{apart:?}");
    let same = two_sessions("dbg-1", "dbg-1").await;
    assert_eq!(
        same,
        ["start dbg-1", "end dbg-1", "start dbg-1", "end dbg-1"],
        "{same:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_permit_wait_gives_up_after_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = common::parts(dir.path(), Vec::new());
    let waited = Arc::new(Mutex::new(None));
    b.register(Wait(waited.clone()))
        .register(InSession(Arc::default()));
    b.register(Nest {
        name: "hold",
        concurrency: Concurrency::Session("k".into()),
        tier: Tier::Read,
    });
    let registry = b.build();
    // `hold` keeps session k while its nested `wait` waits forever.
    let holding = registry.clone();
    let holder = tokio::spawn(async move {
        let args = json!({"tool": "wait", "args": {}});
        let _ = holding
            .call(Surface::Agent, "hold", args, CancellationToken::new())
            .await;
    });
    while waited.lock().unwrap().is_none() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let err = registry
        .call(
            Surface::Agent,
            "in_session",
            json!({"session": "k"}),
            CancellationToken::new(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("waited 120 s") && err.contains("session `k`"),
        "{err}"
    );
    assert!(!holder.is_finished(), "the holder should never finish");
    holder.abort();
}
