use std::sync::Arc;

use serde_json::Value;
use tether_fs::Workspace;
use tether_tool::{
    ClientFeature, NoticeQueue, QuestionPort, Surface, ToolError, ToolOutput, ToolSpec,
};
use tokio_util::sync::CancellationToken;

use crate::arrival::Arrival;
use crate::options::CallOptions;
use crate::pipeline::Pipeline;
use crate::resources::RunResources;
use crate::table::ToolTable;

/// One run at work: its resources, its frozen tool table, the gate and the call pipeline.
/// Cheap to clone; clones share the run.
#[derive(Clone)]
pub struct Runtime {
    pipeline: Arc<Pipeline>,
}

impl Runtime {
    /// Puts `table`'s tools to work over `resources`.
    pub fn new(resources: RunResources, table: ToolTable) -> Self {
        Runtime {
            pipeline: Arc::new(Pipeline::new(resources, table)),
        }
    }

    /// The specs of the tools `surface` may see, sorted by name.
    pub fn tools(&self, surface: Surface) -> Vec<ToolSpec> {
        self.pipeline.table.specs(surface)
    }

    /// Calls a tool as the model would: a root call on `surface`, cancelled by `cancel`.
    pub async fn call(
        &self,
        surface: Surface,
        tool: &str,
        args: Value,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let opts = CallOptions::default().cancel(cancel);
        self.call_with(surface, tool, args, opts).await
    }

    /// A root call with everything a front end can add: its cancellation, its place in
    /// arrival order and a progress port.
    pub async fn call_with(
        &self,
        surface: Surface,
        tool: &str,
        args: Value,
        opts: CallOptions,
    ) -> Result<ToolOutput, ToolError> {
        self.pipeline.call_root(surface, tool, args, opts).await
    }

    /// A place in this run's arrival order, for a front end to hand to the request that
    /// just arrived, before it starts the call on a task of its own (then pass it with
    /// [`CallOptions::in_order`]).
    pub fn arrive(&self) -> Arrival {
        self.pipeline.gate.arrivals.arrive()
    }

    /// Tells the run the client has `feature`, which shows the tools that need it; a front
    /// end calls this after its handshake, without rebuilding the run.
    pub fn client_has(&self, feature: ClientFeature) {
        self.pipeline.table.client_has(feature);
    }

    /// Attaches the port question and approval cards go to (a client that can show forms, a
    /// terminal), which also shows `ask_user`.
    pub fn attach_question_port(&self, port: Arc<dyn QuestionPort>) {
        self.pipeline.resources.questions.attach(port);
        self.pipeline.table.client_has(ClientFeature::Questions);
    }

    /// The run's notice queue, for resources that learn of something outside any call.
    pub fn notices(&self) -> &NoticeQueue {
        &self.pipeline.resources.notices
    }

    /// Ids of staged changes not yet accepted or discarded.
    pub fn pending_staged(&self) -> Vec<String> {
        self.pipeline.resources.staged.pending()
    }

    /// The run's write hooks.
    pub(crate) fn hooks(&self) -> &tether_tool::WriteHooks {
        &self.pipeline.resources.hooks
    }

    /// The confined workspace of this run.
    pub fn workspace(&self) -> &Workspace {
        &self.pipeline.resources.workspace
    }
}
