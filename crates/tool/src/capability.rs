//! The one shape every capability has: configure from its own config section, install its
//! tools and hooks with the run's handles, and shut down what it started.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tether_fs::Workspace;
use tokio_util::sync::CancellationToken;

use crate::{BoxFuture, DynTool, NoticeQueue, Tool, WriteHook};

/// A family of tools over one kind of resource (files, structural search, a language server).
/// Resources are made on first use, never at install, and end at [`Capability::shutdown`] or
/// when the capability is dropped.
pub trait Capability: Send + Sync + 'static {
    /// The name for logs and doctor, such as `structural`.
    fn name(&self) -> &'static str;
    /// The `tether.toml` section it reads, if any.
    fn section(&self) -> Option<&'static str> {
        None
    }
    /// The `tether.toml` keys it reads, each defined once: the settings table, the keys a
    /// workspace may set before it is trusted and the ones only the user may set come from
    /// these.
    fn settings(&self) -> &'static [crate::Setting] {
        &[]
    }
    /// Configures from that section (`None` when absent). `Ok(false)` declines: the capability
    /// stays off and installs nothing. An error names the key and what is allowed.
    fn configure(&mut self, _section: Option<&toml::Value>) -> Result<bool, crate::SettingError> {
        Ok(true)
    }
    /// Every program a run of it may start, as configured (a bare name is looked up on PATH,
    /// one with a `/` is a path): the warm host's key covers where each is found, so a front
    /// end that would start another program gets a host of its own.
    fn programs(&self) -> Vec<String> {
        Vec::new()
    }
    /// Registers tools and hooks, keeping whichever run handles it needs.
    fn install(&mut self, run: &mut Install);
    /// Starts, in the background, what a session will soon want (a language server for the
    /// languages present). A front end serving many calls calls it after its handshake; a
    /// one-call run never does.
    fn warm(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
    /// Waits, at most `budget`, for the follow-ups it still owes (a late answer about a write),
    /// so a front end about to end the run can show them instead of a promise left unkept.
    fn settle(&self, _budget: Duration) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
    /// Asks what it started to stop, within `budget`; what is left is killed on drop.
    fn shutdown(&self, _budget: Duration) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
    /// What `tether doctor` says of it for the workspace at `root`, so doctor need not know
    /// each capability. It may probe the machine, but runs nothing the workspace ships unless
    /// `trusted`, and starts nothing that outlives the call.
    fn doctor<'a>(&'a self, _root: &'a Path, _trusted: bool) -> BoxFuture<'a, Vec<DoctorSection>> {
        Box::pin(async { Vec::new() })
    }
}

/// One part of `tether doctor`'s report: a heading and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoctorSection {
    /// Such as `language servers (started on first use)`.
    pub heading: String,
    /// One fact a line.
    pub lines: Vec<String>,
}

impl DoctorSection {
    /// A section of `lines` under `heading`.
    pub fn new(heading: impl Into<String>, lines: Vec<String>) -> Self {
        DoctorSection {
            heading: heading.into(),
            lines,
        }
    }
}

/// Something only some clients can do; a tool that needs it stays hidden until the front end
/// learns, at its handshake, that the client can.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ClientFeature {
    /// The client can put a question to the user (MCP elicitation).
    Elicitation,
    /// Someone can answer question cards: a client that elicits, a terminal, or a host's port.
    Questions,
}

/// What a capability installs into, and the run's handles it may keep.
pub struct Install {
    /// The confined workspace.
    pub workspace: Arc<Workspace>,
    /// The run's notice queue.
    pub notices: NoticeQueue,
    /// Cancelled when the run shuts down.
    pub cancel: CancellationToken,
    /// True when the run serves one call only, so nothing is worth keeping for later.
    pub single_call: bool,
    /// True once the user trusted this workspace (`tether trust`); until then nothing that
    /// came with the repository may run (a language server's build scripts, say).
    pub trusted: bool,
    /// Settings the workspace's `tether.toml` gave that are held back until it is trusted
    /// (dotted keys), so a capability can say what it is not using and why.
    pub held_back: Vec<String>,
    /// True in vibe mode (`tether serve --vibe`, or `vibe = true`): background workers may run.
    pub vibe: bool,
    /// The widest surface the run serves: a plan or readonly run must run nothing that writes.
    pub surface: crate::Surface,
    /// True when write reports should say at once what the written files got and leave slower
    /// findings (other files a server re-checks) to later notices: an agent's hook waits on it.
    pub prompt_reports: bool,
    /// Where a capability keeps what several runs may share (a language server); the run's
    /// own pool unless a warm host serves the run.
    pub pool: Arc<crate::Pool>,
    tools: Vec<(Arc<dyn DynTool>, Option<ClientFeature>)>,
    hooks: Vec<Arc<dyn WriteHook>>,
}

impl Install {
    /// An empty installation over the run's handles.
    pub fn new(
        workspace: Arc<Workspace>,
        notices: NoticeQueue,
        cancel: CancellationToken,
        single_call: bool,
    ) -> Self {
        Install {
            workspace,
            notices,
            cancel,
            single_call,
            trusted: false,
            held_back: Vec::new(),
            vibe: false,
            surface: crate::Surface::Agent,
            prompt_reports: false,
            pool: Arc::default(),
            tools: Vec::new(),
            hooks: Vec::new(),
        }
    }

    /// Adds a tool.
    pub fn tool<T: Tool>(&mut self, tool: T) -> &mut Self {
        self.tools.push((Arc::new(tool), None));
        self
    }

    /// Adds a tool that stays hidden until the front end says the client has `feature`.
    pub fn tool_needing<T: Tool>(&mut self, tool: T, feature: ClientFeature) -> &mut Self {
        self.tools.push((Arc::new(tool), Some(feature)));
        self
    }

    /// Adds a write hook, run around every write of every tool.
    pub fn hook(&mut self, hook: Arc<dyn WriteHook>) -> &mut Self {
        self.hooks.push(hook);
        self
    }

    /// The tools installed so far, taken out for the tool table.
    pub fn take_tools(&mut self) -> Vec<(Arc<dyn DynTool>, Option<ClientFeature>)> {
        std::mem::take(&mut self.tools)
    }

    /// The write hooks installed so far, taken out for the run's resources.
    pub fn take_hooks(&mut self) -> Vec<Arc<dyn WriteHook>> {
        std::mem::take(&mut self.hooks)
    }
}
