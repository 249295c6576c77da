use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use serde_json::Value;
use tether_fs::{Journal, StagedStore, Workspace};
use tether_tool::{
    ApprovalPolicy, ClientFeature, DynTool, NoticeQueue, ProgressPort, QuestionPort, Surface, Tool,
    ToolError, ToolOutput, ToolSpec, WriteHooks,
};
use tokio_util::sync::CancellationToken;

use crate::arrival::{Arrival, Place};
use crate::gate::Gate;
use crate::wrap::{PathsOf, WrappedWrite};

/// The resources every run has, whatever tools it registers.
pub struct RunResources {
    /// The confined workspace.
    pub workspace: Arc<Workspace>,
    /// This run's transaction journal.
    pub journal: Arc<Journal>,
    /// This run's staged changes.
    pub staged: Arc<StagedStore>,
    /// The write hooks (diagnostics, syntax check).
    pub hooks: WriteHooks,
    /// The run's notice queue.
    pub notices: NoticeQueue,
    /// Whether write and exec calls ask first.
    pub approval: ApprovalPolicy,
    /// Someone to show cards to, if anyone is connected.
    pub questions: Option<Arc<dyn QuestionPort>>,
    /// The conversation this run serves.
    pub conversation: Option<String>,
}

/// Collects the tools of one run; tools whose resource is absent are simply never added.
pub struct RegistryBuilder {
    resources: RunResources,
    tools: BTreeMap<String, Registered>,
}

/// A tool with the spec computed once, when it was registered.
#[derive(Clone)]
pub(crate) struct Registered {
    pub(crate) spec: ToolSpec,
    pub(crate) tool: Arc<dyn DynTool>,
    /// Hidden until the front end says the client has this.
    pub(crate) needs: Option<ClientFeature>,
}

impl RegistryBuilder {
    /// Starts a registry over the run's resources.
    pub fn new(resources: RunResources) -> Self {
        RegistryBuilder {
            resources,
            tools: BTreeMap::new(),
        }
    }

    /// The resources, for tools that need the workspace or staged store at construction.
    pub fn resources(&self) -> &RunResources {
        &self.resources
    }

    /// Adds a tool; a later tool with the same name replaces the earlier one.
    pub fn register<T: Tool>(&mut self, tool: T) -> &mut Self {
        self.register_dyn(Arc::new(tool))
    }

    /// Adds an already type-erased tool.
    pub fn register_dyn(&mut self, tool: Arc<dyn DynTool>) -> &mut Self {
        self.register_needing(tool, None)
    }

    /// Adds a tool that is hidden (not listed, not callable) until the front end says the
    /// client has `needs` (see [`Registry::client_has`]).
    pub fn register_needing(
        &mut self,
        tool: Arc<dyn DynTool>,
        needs: Option<ClientFeature>,
    ) -> &mut Self {
        let spec = tool.spec();
        let entry = Registered { spec, tool, needs };
        self.tools.insert(entry.spec.name.clone(), entry);
        self
    }

    /// Registers a host's own write tool so its writes get the same before/after hooks;
    /// `paths_of` names the files a call's JSON arguments will write.
    pub fn wrap_write<T: Tool>(&mut self, tool: T, paths_of: PathsOf) -> &mut Self {
        self.register_dyn(Arc::new(WrappedWrite::new(Arc::new(tool), paths_of)))
    }

    /// Freezes the registry.
    pub fn build(self) -> Registry {
        Registry {
            inner: Arc::new(Inner {
                resources: self.resources,
                tools: self.tools,
                gate: Gate::default(),
                client: std::sync::RwLock::default(),
                next_call: AtomicU64::new(1),
            }),
        }
    }
}

pub(crate) struct Inner {
    pub(crate) resources: RunResources,
    pub(crate) tools: BTreeMap<String, Registered>,
    pub(crate) gate: Gate,
    /// What the front end learned the client can do, at its handshake.
    pub(crate) client: std::sync::RwLock<std::collections::BTreeSet<ClientFeature>>,
    pub(crate) next_call: AtomicU64,
}

/// How a front end starts a root call: its cancellation, its place in arrival order (writes
/// then run in the order their requests arrived), and where its progress goes.
#[derive(Default)]
pub struct CallOptions {
    pub(crate) cancel: CancellationToken,
    pub(crate) place: Option<Place>,
    pub(crate) progress: Option<Arc<dyn ProgressPort>>,
}

impl CallOptions {
    /// Cancelled by `cancel`.
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Takes the place `arrival` holds in the run's arrival order.
    pub fn in_order(mut self, arrival: &Arrival) -> Self {
        self.place = arrival.take();
        self
    }

    /// Sends the call's progress reports to `port`.
    pub fn progress(mut self, port: Arc<dyn ProgressPort>) -> Self {
        self.progress = Some(port);
        self
    }
}

impl Inner {
    /// Whether a registered tool is offered to this client.
    pub(crate) fn offered(&self, t: &Registered) -> bool {
        match t.needs {
            None => true,
            Some(f) => self
                .client
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .contains(&f),
        }
    }
}

/// One run's tools and its call pipeline. Cheap to clone; clones share the run.
#[derive(Clone)]
pub struct Registry {
    pub(crate) inner: Arc<Inner>,
}

impl Registry {
    /// The specs of the tools `surface` may see, sorted by name.
    pub fn tools(&self, surface: Surface) -> Vec<ToolSpec> {
        self.inner
            .tools
            .values()
            .filter(|t| self.inner.offered(t))
            .map(|t| t.spec.clone())
            .filter(|spec| surface.admits(spec.tier))
            .collect()
    }

    /// Calls a tool as the model would: a root call on `surface`, cancelled by `cancel`.
    pub async fn call(
        &self,
        surface: Surface,
        tool: &str,
        args: Value,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let opts = CallOptions {
            cancel,
            ..CallOptions::default()
        };
        crate::pipeline::call_root(&self.inner, surface, tool, args, opts).await
    }

    /// A root call with everything a front end can add: its place in arrival order and a
    /// progress port.
    pub async fn call_with(
        &self,
        surface: Surface,
        tool: &str,
        args: Value,
        opts: CallOptions,
    ) -> Result<ToolOutput, ToolError> {
        crate::pipeline::call_root(&self.inner, surface, tool, args, opts).await
    }

    /// A place in this run's arrival order, for a front end to hand to the request that
    /// just arrived, before it starts the call on a task of its own.
    pub fn arrive(&self) -> Arrival {
        self.inner.gate.arrivals.arrive()
    }

    /// Like [`Registry::call`], for a call that took a place with [`Registry::arrive`]: a
    /// write takes the workspace permit only after every write that arrived before it has.
    pub async fn call_in_order(
        &self,
        surface: Surface,
        tool: &str,
        args: Value,
        cancel: CancellationToken,
        arrival: &Arrival,
    ) -> Result<ToolOutput, ToolError> {
        let opts = CallOptions::default().cancel(cancel).in_order(arrival);
        crate::pipeline::call_root(&self.inner, surface, tool, args, opts).await
    }

    /// Tells the run the client has `feature`, which shows the tools that need it; a front
    /// end calls this after its handshake, without rebuilding the run.
    pub fn client_has(&self, feature: ClientFeature) {
        let mut set = self.inner.client.write().unwrap_or_else(|p| p.into_inner());
        set.insert(feature);
    }

    /// The run's notice queue, for resources that learn of something outside any call.
    pub fn notices(&self) -> &NoticeQueue {
        &self.inner.resources.notices
    }

    /// Ids of staged changes not yet accepted or discarded.
    pub fn pending_staged(&self) -> Vec<String> {
        self.inner.resources.staged.pending()
    }

    /// The confined workspace of this run.
    pub fn workspace(&self) -> &Workspace {
        &self.inner.resources.workspace
    }
}
