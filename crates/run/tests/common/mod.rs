//! Tools and resources the pipeline tests share.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tether_fs::{ChangeOp, Journal, StagedStore, Workspace};
use tether_run::{RunResources, Runtime, ToolTable, ToolTableBuilder};
use tether_tool::{
    ApprovalPolicy, CallCx, Concurrency, NoticeQueue, Tier, Tool, ToolError, ToolOutput, WriteHook,
    WriteHooks,
};
use tokio_util::sync::CancellationToken;

/// A run's resources over `dir` with `hooks`, writes never asked about, and an empty table.
pub fn parts(dir: &std::path::Path, hooks: Vec<Arc<dyn WriteHook>>) -> Parts {
    let ws = Workspace::new(dir).unwrap();
    let (journal, _) =
        Journal::open(&ws, &std::env::temp_dir().join("tether-run-test-state")).unwrap();
    let resources = RunResources {
        workspace: Arc::new(ws),
        journal: Arc::new(journal),
        staged: Arc::new(StagedStore::new()),
        hooks: WriteHooks::new(hooks),
        notices: NoticeQueue::default(),
        approval: ApprovalPolicy::Never,
        questions: Default::default(),
        ask_timeout: std::time::Duration::from_secs(5),
        conversation: None,
    };
    Parts {
        resources,
        table: ToolTable::builder(),
    }
}

/// What a runtime is made of, before it starts.
pub struct Parts {
    pub resources: RunResources,
    pub table: ToolTableBuilder,
}

impl Parts {
    pub fn register<T: Tool>(&mut self, tool: T) -> &mut ToolTableBuilder {
        self.table.register(tool)
    }
    pub fn build(self) -> Runtime {
        Runtime::new(self.resources, self.table.build())
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct NoArgs {}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NestArgs {
    pub tool: String,
    pub args: Value,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PutArgs {
    pub path: String,
    pub text: String,
}

/// Writes a new file through `cx.fs()`.
pub struct Put;
impl Tool for Put {
    type Args = PutArgs;
    fn name(&self) -> &'static str {
        "put"
    }
    fn description(&self) -> String {
        "create a file".into()
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Workspace
    }
    fn preview(&self, a: &PutArgs) -> tether_tool::Preview {
        tether_tool::Preview::new("create a file", vec![a.path.clone()])
    }
    async fn call(&self, cx: &CallCx, a: PutArgs) -> Result<ToolOutput, ToolError> {
        let path = cx.workspace().resolve_write(&a.path)?;
        cx.fs()
            .commit(vec![ChangeOp::Create {
                path,
                content: a.text.into_bytes(),
            }])
            .await?;
        Ok(ToolOutput::text("put"))
    }
}

/// Calls another tool from inside its call, holding `concurrency`.
pub struct Nest {
    pub name: &'static str,
    pub concurrency: Concurrency,
    pub tier: Tier,
}
impl Tool for Nest {
    type Args = NestArgs;
    fn name(&self) -> &'static str {
        self.name
    }
    fn description(&self) -> String {
        "call another tool".into()
    }
    fn tier(&self) -> Tier {
        self.tier
    }
    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        self.concurrency.clone()
    }
    async fn call(&self, cx: &CallCx, a: NestArgs) -> Result<ToolOutput, ToolError> {
        cx.notify("nest", format!("nested call from {}", self.name));
        let inner = cx.dispatch(&a.tool, a.args).await?;
        // Mark a notices block in the inner result, so a test can tell where it was attached.
        let inner = inner.to_text().replace("Notices:", "INNER-NOTICES:");
        Ok(ToolOutput::text(format!("inner said: {inner}")))
    }
}

/// Waits until cancelled; keeps its own token so a test can see that it was cancelled.
pub struct Wait(pub Arc<Mutex<Option<CancellationToken>>>);
impl Tool for Wait {
    type Args = NoArgs;
    fn name(&self) -> &'static str {
        "wait"
    }
    fn description(&self) -> String {
        "wait for cancellation".into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, cx: &CallCx, _: NoArgs) -> Result<ToolOutput, ToolError> {
        *self.0.lock().unwrap() = Some(cx.cancel_token().clone());
        cx.cancel_token().cancelled().await;
        Err(ToolError::Cancelled)
    }
}

/// A hook's free-form word on `path`, as the one report shape carries it (a pending status).
pub fn note(hook: &str, path: &str, text: String) -> tether_tool::FileReport {
    tether_tool::FileReport {
        path: path.to_string(),
        scope: tether_tool::ReportScope::Changed,
        source: tether_tool::ReportSource::hook(hook),
        noun: "note".into(),
        status: tether_tool::FileStatus::Pending(text),
    }
}
