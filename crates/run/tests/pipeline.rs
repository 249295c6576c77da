//! The call pipeline against real files: surfaces, re-entry, permits, hooks, notices,
//! cancellation and the approval gate.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tether_fs::{ChangeOp, FileReceipt, WritePath};
use tether_run::Runtime;
use tether_tool::{
    ApprovalPolicy, Baseline, BoxFuture, CallCx, Concurrency, FileReport, Outcome, QuestionPort,
    ScriptedPort, Surface, Tier, Tool, ToolError, ToolOutput, WriteHook,
};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

mod common;
use common::{Nest, NoArgs, Parts, Put, PutArgs, Wait};

/// Is cancelled while it works (as a slow matcher would be), then tries to commit anyway.
struct LatePut;
impl Tool for LatePut {
    type Args = PutArgs;
    fn name(&self) -> &'static str {
        "late_put"
    }
    fn description(&self) -> String {
        "create a file after being cancelled".into()
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Workspace
    }
    async fn call(&self, cx: &CallCx, a: PutArgs) -> Result<ToolOutput, ToolError> {
        let path = cx.workspace().resolve_write(&a.path)?;
        cx.cancel_token().cancel();
        let op = ChangeOp::Create {
            path,
            content: a.text.into_bytes(),
        };
        cx.fs().commit(vec![op]).await?;
        Ok(ToolOutput::text("put"))
    }
}

/// On cancellation, takes a while to clean up (as a debugger's disconnect would), then says so;
/// says when it has started, so the test cancels a running handler and not a call still on its way.
struct Tidy {
    started: Arc<Notify>,
    cleaned: Arc<Mutex<bool>>,
}
impl Tool for Tidy {
    type Args = NoArgs;
    fn name(&self) -> &'static str {
        "tidy"
    }
    fn description(&self) -> String {
        "clean up on cancellation".into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, cx: &CallCx, _: NoArgs) -> Result<ToolOutput, ToolError> {
        self.started.notify_one();
        cx.cancel_token().cancelled().await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        *self.cleaned.lock().unwrap() = true;
        Err(ToolError::Cancelled)
    }
}

/// Declares itself `Free` (no permit) and tries to write anyway.
struct SneakyPut;
impl Tool for SneakyPut {
    type Args = PutArgs;
    fn name(&self) -> &'static str {
        "sneaky_put"
    }
    fn description(&self) -> String {
        "create a file without the write permit".into()
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, cx: &CallCx, a: PutArgs) -> Result<ToolOutput, ToolError> {
        Put.call(cx, a).await
    }
}

/// Records hook phases; its `after` makes a fresh root write, which deadlocks if the gate
/// is still held.
struct Recorder {
    log: Arc<Mutex<Vec<String>>>,
    registry: Arc<Mutex<Option<Runtime>>>,
}
impl WriteHook for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn before<'a>(&'a self, paths: &'a [WritePath]) -> BoxFuture<'a, Baseline> {
        Box::pin(async move {
            for p in paths {
                let exists = p.abs().exists();
                self.log
                    .lock()
                    .unwrap()
                    .push(format!("before {} exists={exists}", p.rel()));
            }
            let names: Vec<String> = paths.iter().map(|p| p.rel().to_string()).collect();
            Box::new(names) as Baseline
        })
    }
    fn after<'a>(
        &'a self,
        baseline: Option<Baseline>,
        receipts: &'a [FileReceipt],
    ) -> BoxFuture<'a, Vec<FileReport>> {
        Box::pin(async move {
            let names: Vec<&str> = receipts.iter().map(|r| r.path.rel()).collect();
            let before = *baseline.unwrap().downcast::<Vec<String>>().unwrap();
            assert_eq!(before, names, "an after got another write's baseline");
            self.log
                .lock()
                .unwrap()
                .push(format!("after {}", names.join(",")));
            if names.contains(&"first.txt") {
                let registry = self.registry.lock().unwrap().clone().unwrap();
                let second = registry.call(
                    Surface::Agent,
                    "put",
                    json!({"path": "from-hook.txt", "text": "x"}),
                    CancellationToken::new(),
                );
                tokio::time::timeout(Duration::from_secs(5), second)
                    .await
                    .expect("the gate was still held while after() ran")
                    .unwrap();
            }
            let saw = format!("recorder saw {}", names.join(","));
            vec![common::note("recorder", names[0], saw)]
        })
    }
}

struct Fixture {
    dir: tempfile::TempDir,
    registry: Runtime,
    log: Arc<Mutex<Vec<String>>>,
    waited: Arc<Mutex<Option<CancellationToken>>>,
}

/// A run's resources over `dir` with `hook` installed, and an empty tool table to fill.
fn builder(
    dir: &std::path::Path,
    hook: Recorder,
    approval: ApprovalPolicy,
    questions: Option<Arc<dyn QuestionPort>>,
) -> Parts {
    let mut parts = common::parts(dir, vec![Arc::new(hook)]);
    parts.resources.approval = approval;
    if let Some(port) = questions {
        parts.resources.questions.attach(port);
    }
    parts.resources.conversation = Some("c1".into());
    parts
}

/// A recorder hook that makes no calls of its own, and its log.
fn recorder() -> (Recorder, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let hook = Recorder {
        log: log.clone(),
        registry: Arc::new(Mutex::new(None)),
    };
    (hook, log)
}

fn fixture(approval: ApprovalPolicy, questions: Option<Arc<dyn QuestionPort>>) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let slot = Arc::new(Mutex::new(None));
    let hook = Recorder {
        log: log.clone(),
        registry: slot.clone(),
    };
    let waited = Arc::new(Mutex::new(None));
    let mut b = builder(dir.path(), hook, approval, questions);
    b.register(Put)
        .register(LatePut)
        .register(SneakyPut)
        .register(Wait(waited.clone()));
    b.register(Nest {
        name: "peek",
        concurrency: Concurrency::Free,
        tier: Tier::Read,
    });
    b.register(Nest {
        name: "eval",
        concurrency: Concurrency::Session("kernel".into()),
        tier: Tier::Exec,
    });
    b.register(Nest {
        name: "batch",
        concurrency: Concurrency::Workspace,
        tier: Tier::Write,
    });
    let registry = b.build();
    *slot.lock().unwrap() = Some(registry.clone());
    Fixture {
        dir,
        registry,
        log,
        waited,
    }
}

async fn call(f: &Fixture, surface: Surface, tool: &str, args: Value) -> Result<String, ToolError> {
    f.registry
        .call(surface, tool, args, CancellationToken::new())
        .await
        .map(|o| o.to_text())
}

#[tokio::test]
async fn surfaces_list_and_refuse_by_tier() {
    let f = fixture(ApprovalPolicy::Never, None);
    let names = |s| {
        f.registry
            .tools(s)
            .into_iter()
            .map(|t| t.name)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(Surface::Agent),
        [
            "batch",
            "eval",
            "late_put",
            "peek",
            "put",
            "sneaky_put",
            "wait"
        ]
    );
    assert_eq!(names(Surface::Plan), ["peek", "wait"]);
    assert_eq!(names(Surface::ReadOnlySubagent), ["peek", "wait"]);
    let err = call(&f, Surface::Plan, "put", json!({"path": "a", "text": ""}))
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("`put`") && msg.contains("write-tier") && msg.contains("`plan`"),
        "{msg}"
    );
    assert!(!msg.contains("unknown"), "{msg}");
    assert!(err.is_usage());
    assert!(!f.dir.path().join("a").exists());
    let err = call(&f, Surface::Agent, "nope", json!({}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unknown tool `nope`"));
}

#[tokio::test]
async fn bad_arguments_quote_the_schema() {
    let f = fixture(ApprovalPolicy::Never, None);
    let err = call(&f, Surface::Agent, "put", json!({"path": "a"}))
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("missing field `text`"), "{msg}");
    assert!(msg.contains("\"text\": string (required)"), "{msg}");
}

#[tokio::test]
async fn nested_calls_share_permits_and_refuse_recursion() {
    let f = fixture(ApprovalPolicy::Never, None);
    // batch holds the workspace permit; its nested put must not wait for it again.
    let put = json!({"tool": "put", "args": {"path": "n.txt", "text": "hi"}});
    let out = tokio::time::timeout(
        Duration::from_secs(5),
        call(&f, Surface::Agent, "batch", put),
    )
    .await
    .expect("nested write deadlocked on the outer permit")
    .unwrap();
    assert!(out.starts_with("inner said: put"), "{out}");
    assert_eq!(
        std::fs::read_to_string(f.dir.path().join("n.txt")).unwrap(),
        "hi"
    );
    // A session tool calling a workspace tool takes the workspace permit normally.
    let put = json!({"tool": "put", "args": {"path": "m.txt", "text": "x"}});
    call(&f, Surface::Agent, "eval", put).await.unwrap();
    // eval -> batch -> eval is refused.
    let inner = json!({"tool": "eval", "args": {"tool": "wait", "args": {}}});
    let err = call(
        &f,
        Surface::Agent,
        "eval",
        json!({"tool": "batch", "args": inner}),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("eval > batch"), "{err}");
}

#[tokio::test]
async fn nested_calls_keep_the_root_surface() {
    let f = fixture(ApprovalPolicy::Never, None);
    // A read tool runs on plan, and the write it nests is refused: the root's surface holds.
    let args = json!({"tool": "put", "args": {"path": "p.txt", "text": "x"}});
    let err = call(&f, Surface::Plan, "peek", args.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Refused { .. }), "{err}");
    assert!(err.to_string().contains("put"), "{err}");
    assert!(!f.dir.path().join("p.txt").exists());
    // The same nesting from the agent surface writes.
    call(&f, Surface::Agent, "peek", args).await.unwrap();
    assert!(f.dir.path().join("p.txt").exists());
}

#[tokio::test]
async fn hooks_bracket_writes_and_notices_reach_only_the_root() {
    let f = fixture(ApprovalPolicy::Never, None);
    let args = json!({"tool": "put", "args": {"path": "first.txt", "text": "1"}});
    let out = call(&f, Surface::Agent, "eval", args).await.unwrap();
    let log = f.log.lock().unwrap().clone();
    assert_eq!(
        log,
        [
            "before first.txt exists=false",
            "after first.txt",
            "before from-hook.txt exists=false",
            "after from-hook.txt",
        ]
    );
    // The nested put's report is in the inner result, which eval echoed.
    assert!(out.contains("inner said: put"), "{out}");
    assert!(out.contains("recorder saw first.txt"), "{out}");
    // The notice raised inside a call is attached once, to the root result, not the inner one.
    let args = json!({"tool": "put", "args": {"path": "second.txt", "text": "2"}});
    let out = call(&f, Surface::Agent, "eval", args).await.unwrap();
    assert_eq!(out.matches("nested call from eval").count(), 1, "{out}");
    assert!(out.contains("Notices:"), "{out}");
    assert_eq!(out.matches("Notices:").count(), 1, "{out}");
    assert!(
        !out.contains("INNER-NOTICES"),
        "a notice went to the inner result: {out}"
    );
    let again = call(&f, Surface::Agent, "put", json!({"path": "z", "text": ""}))
        .await
        .unwrap();
    assert!(!again.contains("Notices:"), "{again}");
}

#[tokio::test]
async fn client_cancellation_reaches_the_tool() {
    let f = fixture(ApprovalPolicy::Never, None);
    let cancel = CancellationToken::new();
    let (c2, waited) = (cancel.clone(), f.waited.clone());
    // Cancelled once the tool runs: earlier, the call would end before its handler ever started.
    tokio::spawn(async move {
        while waited.lock().unwrap().is_none() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        c2.cancel();
    });
    let r = tokio::time::timeout(
        Duration::from_secs(5),
        f.registry.call(Surface::Agent, "wait", json!({}), cancel),
    )
    .await
    .expect("cancellation did not end the call");
    assert!(matches!(r, Err(ToolError::Cancelled)));
    let token = f
        .waited
        .lock()
        .unwrap()
        .clone()
        .expect("the tool never ran");
    assert!(
        token.is_cancelled(),
        "the tool's own token was not cancelled"
    );
}

#[tokio::test]
async fn a_call_cancelled_before_its_commit_writes_nothing() {
    let f = fixture(ApprovalPolicy::Never, None);
    let r = call(
        &f,
        Surface::Agent,
        "late_put",
        json!({"path": "late.txt", "text": "x"}),
    )
    .await;
    assert!(matches!(r, Err(ToolError::Cancelled)), "{r:?}");
    assert!(!f.dir.path().join("late.txt").exists());
}

#[tokio::test]
async fn a_commit_without_the_workspace_permit_is_refused() {
    let f = fixture(ApprovalPolicy::Never, None);
    let args = json!({"path": "sneak.txt", "text": "x"});
    let err = call(&f, Surface::Agent, "sneaky_put", args.clone())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("write permit"), "{err}");
    assert!(!f.dir.path().join("sneak.txt").exists());
    // Nested inside a call that holds the permit, the same tool may write.
    let nested = json!({"tool": "sneaky_put", "args": args});
    call(&f, Surface::Agent, "batch", nested).await.unwrap();
    assert!(f.dir.path().join("sneak.txt").exists());
}

// Paused time: the 300 ms cleanup and the 2 s grace are compared exactly, whatever the load.
#[tokio::test(start_paused = true)]
async fn a_cancelled_handler_finishes_its_cleanup_within_the_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    let (hook, _) = recorder();
    let mut b = builder(dir.path(), hook, ApprovalPolicy::Never, None);
    let (started, cleaned) = (Arc::new(Notify::new()), Arc::new(Mutex::new(false)));
    b.register(Tidy {
        started: started.clone(),
        cleaned: cleaned.clone(),
    });
    let registry = b.build();
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        started.notified().await;
        c2.cancel();
    });
    let r = registry
        .call(Surface::Agent, "tidy", json!({}), cancel)
        .await;
    assert!(matches!(r, Err(ToolError::Cancelled)), "{r:?}");
    assert!(
        *cleaned.lock().unwrap(),
        "the handler was dropped before its cleanup"
    );
}

/// Collects progress reports.
struct Reports(Mutex<Vec<(u64, String)>>);
impl tether_tool::ProgressPort for Reports {
    fn report(&self, done: u64, message: &str) {
        self.0.lock().unwrap().push((done, message.to_string()));
    }
}

/// Reports progress twice from inside a nested call.
struct Busy;
impl Tool for Busy {
    type Args = NoArgs;
    fn name(&self) -> &'static str {
        "busy"
    }
    fn description(&self) -> String {
        "report progress".into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, _: &NoArgs) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, cx: &CallCx, _: NoArgs) -> Result<ToolOutput, ToolError> {
        cx.progress("warming up");
        cx.progress("still waiting");
        Ok(ToolOutput::text("done"))
    }
}

#[tokio::test]
async fn progress_reaches_the_front_ends_port_from_nested_calls_too() {
    let dir = tempfile::tempdir().unwrap();
    let (hook, _) = recorder();
    let mut b = builder(dir.path(), hook, ApprovalPolicy::Never, None);
    b.register(Busy).register(Nest {
        name: "peek",
        concurrency: Concurrency::Free,
        tier: Tier::Read,
    });
    let registry = b.build();
    let port = Arc::new(Reports(Mutex::new(Vec::new())));
    let opts = tether_run::CallOptions::default().progress(port.clone());
    let args = json!({"tool": "busy", "args": {}});
    registry
        .call_with(Surface::Agent, "peek", args, opts)
        .await
        .unwrap();
    let got = port.0.lock().unwrap().clone();
    assert_eq!(
        got,
        [
            (1, "warming up".to_string()),
            (2, "still waiting".to_string())
        ]
    );
}

#[tokio::test]
async fn a_tool_needing_a_client_feature_appears_once_the_front_end_enables_it() {
    let dir = tempfile::tempdir().unwrap();
    let (hook, _) = recorder();
    let mut b = builder(dir.path(), hook, ApprovalPolicy::Never, None);
    b.table.register_needing(
        Arc::new(Busy),
        Some(tether_tool::ClientFeature::Elicitation),
    );
    let registry = b.build();
    let names = |r: &Runtime| -> Vec<String> {
        r.tools(Surface::Agent)
            .into_iter()
            .map(|t| t.name)
            .collect()
    };
    assert!(!names(&registry).contains(&"busy".to_string()));
    let err = registry
        .call(Surface::Agent, "busy", json!({}), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::UnknownTool { .. }), "{err}");
    registry.client_has(tether_tool::ClientFeature::Elicitation);
    assert!(names(&registry).contains(&"busy".to_string()));
    registry
        .call(Surface::Agent, "busy", json!({}), CancellationToken::new())
        .await
        .unwrap();
}

fn chose(n: usize) -> Outcome {
    Outcome::Answered {
        chosen: vec![n],
        text: None,
    }
}

#[tokio::test]
async fn ask_policy_fails_closed_without_a_port_and_asks_with_one() {
    let put = |f: &Fixture, path: &str| {
        let args = json!({"path": path, "text": "x"});
        let f = f.registry.clone();
        async move {
            f.call(Surface::Agent, "put", args, CancellationToken::new())
                .await
        }
    };
    let f = fixture(ApprovalPolicy::Ask, None);
    let err = put(&f, "a").await.unwrap_err().to_string();
    assert!(
        err.contains("no one is connected") && err.contains("nothing was changed"),
        "{err}"
    );
    assert!(!f.dir.path().join("a").exists());

    // Deny, a declined card and a cancelled one are refusals; nothing is written.
    let skipped = |cancelled| Outcome::Skipped {
        cancelled,
        hasty: false,
    };
    let port = Arc::new(ScriptedPort::new([chose(2), skipped(false), skipped(true)]));
    let f = fixture(ApprovalPolicy::Ask, Some(port.clone()));
    let denied = put(&f, "a").await.unwrap_err().to_string();
    assert!(denied.contains("the user denied `put`"), "{denied}");
    let declined = put(&f, "a").await.unwrap_err().to_string();
    assert!(
        declined.contains("declined the approval card"),
        "{declined}"
    );
    let cancelled = put(&f, "a").await.unwrap_err().to_string();
    assert!(
        cancelled.contains("cancelled the approval card"),
        "{cancelled}"
    );
    assert!(!f.dir.path().join("a").exists());
    let card = &port.shown()[0];
    assert_eq!(card.question, "Allow `put`?");
    assert!(
        card.context.as_deref().unwrap().contains("files: a"),
        "{card:?}"
    );
    let labels: Vec<&str> = card.options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels, ["Allow once", "Allow put for this run", "Deny"]);

    // Allow once asks again next time; allow for the run does not.
    let port = Arc::new(ScriptedPort::new([chose(0), chose(1)]));
    let f = fixture(ApprovalPolicy::Ask, Some(port.clone()));
    put(&f, "a").await.unwrap();
    put(&f, "b").await.unwrap();
    put(&f, "c").await.unwrap();
    assert_eq!(port.shown().len(), 2, "the third write asked again");
    assert!(f.dir.path().join("c").exists());
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HostWriteArgs {
    file: String,
}

/// A host's own write tool: it writes with std::fs, not through `cx.fs()`.
struct HostWrite;
impl Tool for HostWrite {
    type Args = HostWriteArgs;
    fn name(&self) -> &'static str {
        "host_write"
    }
    fn description(&self) -> String {
        "the host's own writer".into()
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Workspace
    }
    fn preview(&self, a: &HostWriteArgs) -> tether_tool::Preview {
        tether_tool::Preview::new("write a file", vec![a.file.clone()])
    }
    async fn call(&self, cx: &CallCx, a: HostWriteArgs) -> Result<ToolOutput, ToolError> {
        std::fs::write(cx.workspace().root().join(&a.file), "host\n").unwrap();
        Ok(ToolOutput::text("host wrote"))
    }
}

#[tokio::test]
async fn wrapped_host_writes_get_the_same_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let (hook, log) = recorder();
    let mut b = builder(dir.path(), hook, ApprovalPolicy::Never, None);
    b.table.wrap_write(HostWrite);
    let registry = b.build();
    let out = registry
        .call(
            Surface::Agent,
            "host_write",
            json!({"file": "h.txt"}),
            CancellationToken::new(),
        )
        .await
        .unwrap()
        .to_text();
    assert_eq!(
        out,
        "host wrote\n\nwrite #1:\nrecorder after this write:\n  h.txt: pending (recorder saw h.txt)"
    );
    assert_eq!(
        log.lock().unwrap().clone(),
        ["before h.txt exists=false", "after h.txt"]
    );
    let err = registry
        .call(
            Surface::Agent,
            "host_write",
            json!({"file": "../x"}),
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("outside the workspace"), "{err}");
}

/// Writes a file, says so, then waits to be cancelled.
struct PutThenWait(Arc<Notify>);
impl Tool for PutThenWait {
    type Args = PutArgs;
    fn name(&self) -> &'static str {
        "put_then_wait"
    }
    fn description(&self) -> String {
        "write, then hang".into()
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Workspace
    }
    async fn call(&self, cx: &CallCx, a: PutArgs) -> Result<ToolOutput, ToolError> {
        Put.call(cx, a).await?;
        self.0.notify_one();
        cx.cancel_token().cancelled().await;
        Err(ToolError::Cancelled)
    }
}

#[tokio::test]
async fn a_call_cancelled_after_writing_says_so_on_the_next_result() {
    let dir = tempfile::tempdir().unwrap();
    let (hook, log) = recorder();
    let mut b = builder(dir.path(), hook, ApprovalPolicy::Never, None);
    let wrote = Arc::new(Notify::new());
    b.register(PutThenWait(wrote.clone())).register(Put);
    let registry = b.build();
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    // Cancelled once the write is done: earlier, the call would be one that never wrote.
    tokio::spawn(async move {
        wrote.notified().await;
        c2.cancel();
    });
    let args = json!({"path": "w.txt", "text": "x"});
    let r = registry
        .call(Surface::Agent, "put_then_wait", args, cancel)
        .await;
    assert!(matches!(r, Err(ToolError::Cancelled)));
    assert!(dir.path().join("w.txt").exists());
    assert_eq!(log.lock().unwrap().last().unwrap(), "after w.txt");
    let next = registry
        .call(
            Surface::Agent,
            "put",
            json!({"path": "v.txt", "text": "y"}),
            CancellationToken::new(),
        )
        .await
        .unwrap()
        .to_text();
    assert!(
        next.contains("`put_then_wait` was cancelled after it had already written w.txt"),
        "{next}"
    );
    assert!(next.contains("recorder saw w.txt"), "{next}");
}
