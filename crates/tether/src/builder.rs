use std::path::{Path, PathBuf};
use std::sync::Arc;

use tether_fs::{Journal, RecoveryReport, StagedStore, Workspace};
use tether_run::{AskUser, RunResources, Runtime, ToolTable, ToolTableBuilder};
use tether_tool::{
    Capability, ClientFeature, Install, NoticeQueue, Pool, QuestionPort, Questions, Surface, Tool,
    WriteHook, WriteHooks,
};
use tokio_util::sync::CancellationToken;

use crate::config::{Config, ConfigError};

/// Why a run could not be assembled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The workspace root is missing or not a folder.
    #[error("workspace root: {0}")]
    Root(#[source] tether_fs::FsError),
    /// A `tether.toml` is malformed.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// The state folder or journal could not be opened.
    #[error("cannot open the run's journal: {0}")]
    Journal(#[source] tether_fs::FsError),
}

type HostTool = Box<dyn FnOnce(&mut ToolTableBuilder) + Send>;

/// Assembles one run: config, file resources, hooks and the tools the resources allow.
pub struct RunBuilder {
    root: PathBuf,
    user_dir: Option<PathBuf>,
    state_dir: Option<PathBuf>,
    conversation: Option<String>,
    questions: Option<Arc<dyn QuestionPort>>,
    hooks: Vec<Arc<dyn WriteHook>>,
    file_tools: bool,
    single_call: bool,
    vibe: bool,
    surface: Surface,
    host_tools: Vec<HostTool>,
    capabilities: Vec<Box<dyn Capability>>,
    pool: Option<Arc<Pool>>,
    prompt_reports: bool,
}

impl RunBuilder {
    /// A run over the workspace at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        RunBuilder {
            root: root.into(),
            user_dir: None,
            state_dir: None,
            conversation: None,
            questions: None,
            hooks: Vec::new(),
            file_tools: true,
            single_call: false,
            vibe: false,
            surface: Surface::Agent,
            host_tools: Vec::new(),
            capabilities: Vec::new(),
            pool: None,
            prompt_reports: false,
        }
    }

    /// Reads the user's `tether.toml` and trust list from `dir` instead of the default.
    pub fn user_config_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.user_dir = Some(dir.into());
        self
    }

    /// Keeps journals and run locks under `dir` instead of the user's state folder.
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// The conversation this run serves.
    pub fn conversation(mut self, id: impl Into<String>) -> Self {
        self.conversation = Some(id.into());
        self
    }

    /// Someone to show question and approval cards to.
    pub fn question_port(mut self, port: Arc<dyn QuestionPort>) -> Self {
        self.questions = Some(port);
        self
    }

    /// Adds a write hook, run around every write of every tool.
    pub fn write_hook(mut self, hook: Arc<dyn WriteHook>) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Whether to register the harness tools read, write, edit and apply_patch (default on);
    /// a host with its own may turn them off and wrap its own with [`RunBuilder::wrap_write`].
    pub fn harness_file_tools(mut self, on: bool) -> Self {
        self.file_tools = on;
        self
    }

    /// Declares that this run serves exactly one call (`tether call`), so nothing is kept for
    /// later calls: parsed trees are dropped as soon as they are searched.
    pub fn single_call(mut self) -> Self {
        self.single_call = true;
        self
    }

    /// The widest surface this run will serve; on the plan and readonly surfaces nothing runs
    /// that could write (rust-analyzer's build scripts, say), even in a trusted workspace.
    pub fn surface(mut self, surface: Surface) -> Self {
        self.surface = surface;
        self
    }

    /// Turns vibe mode on: the background-worker tools are registered (`tether serve --vibe`;
    /// `vibe = true` in tether.toml does the same).
    pub fn vibe(mut self, on: bool) -> Self {
        self.vibe = on;
        self
    }

    /// Shares `pool` with the other runs a warm host serves, so they share its language
    /// servers; without it the run keeps its resources to itself.
    pub fn pool(mut self, pool: Arc<Pool>) -> Self {
        self.pool = Some(pool);
        self
    }

    /// Write reports say at once what the written files got; what other files a server
    /// re-checks follows as notices (for an agent's hook, which the agent waits on).
    pub fn prompt_reports(mut self, on: bool) -> Self {
        self.prompt_reports = on;
        self
    }

    /// Adds a capability after the built-in ones (files, structural).
    pub fn capability(mut self, capability: impl Capability) -> Self {
        self.capabilities.push(Box::new(capability));
        self
    }

    /// Registers a host tool as it is.
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        self.host_tools.push(Box::new(move |r| {
            r.register(tool);
        }));
        self
    }

    /// Registers a host's own write tool with the run's write hooks around it: the files a
    /// call writes are the ones the tool's `preview` names for it.
    pub fn wrap_write<T: Tool>(mut self, tool: T) -> Self {
        self.host_tools.push(Box::new(move |r| {
            r.wrap_write(tool);
        }));
        self
    }

    /// Opens the run. A transaction left half-done by a dead run is finished or rolled back
    /// first, and the first root result says so.
    pub fn build(self) -> Result<Run, BuildError> {
        let workspace = Workspace::new(&self.root).map_err(BuildError::Root)?;
        let user_dir = self.user_dir.unwrap_or_else(Config::user_dir);
        let own: Vec<&'static tether_tool::Setting> = self
            .capabilities
            .iter()
            .flat_map(|c| c.settings())
            .collect();
        let config = Config::load_with(workspace.root(), &user_dir, &own)?;
        let state_dir = self.state_dir.unwrap_or_else(Config::state_dir);
        let workspace = workspace
            .with_read_roots(config.read_roots()?)
            .protect(
                &user_dir,
                "the user's tether config folder (settings and trust list)",
            )
            .protect(
                &state_dir,
                "tether's state folder (journals of interrupted writes)",
            );
        let approval = config.approval()?;
        let ask_timeout = config.ask_timeout()?;
        let (journal, recovered) =
            Journal::open(&workspace, &state_dir).map_err(BuildError::Journal)?;
        let notices = NoticeQueue::default();
        for report in &recovered {
            tracing::warn!("{report}");
            notices.push("fs", report.to_string());
        }
        let workspace = Arc::new(workspace);
        let cancel = CancellationToken::new();
        let mut install = Install::new(
            workspace.clone(),
            notices.clone(),
            cancel.clone(),
            self.single_call,
        );
        install.trusted = config.workspace_trusted();
        install.surface = self.surface;
        install.prompt_reports = self.prompt_reports;
        if let Some(pool) = self.pool {
            install.pool = pool;
        }
        // What waits for `tether trust`; a key only the user's file may set never comes.
        install.held_back = config
            .guarded()
            .into_iter()
            .filter(|l| !l.honoured && !l.user_only)
            .map(|l| l.key)
            .collect();
        // A workspace file turns vibe mode on only once trusted: the merged config leaves an
        // untrusted file's `vibe` out.
        install.vibe = self.vibe || config.vibe()?;
        let mut capabilities = builtin_capabilities(self.file_tools);
        capabilities.extend(self.capabilities);
        let mut installed = configured(capabilities, &config)?;
        for cap in &mut installed {
            cap.install(&mut install);
        }
        let (tools, mut hooks) = (install.take_tools(), install.take_hooks());
        hooks.extend(self.hooks);
        let mut table = ToolTable::builder();
        for (tool, needs) in tools {
            table.register_needing(tool, needs);
        }
        for add in self.host_tools {
            add(&mut table);
        }
        let questions = Arc::new(Questions::default());
        table.register_needing(
            Arc::new(AskUser {
                questions: questions.clone(),
                timeout: ask_timeout,
            }),
            Some(ClientFeature::Questions),
        );
        let resources = RunResources {
            workspace,
            journal: Arc::new(journal),
            staged: Arc::new(StagedStore::new()),
            hooks: WriteHooks::new(hooks),
            notices,
            approval,
            questions,
            ask_timeout,
            conversation: self.conversation,
        };
        let runtime = Runtime::new(resources, table.build());
        if let Some(port) = self.questions {
            runtime.attach_question_port(port);
        }
        Ok(Run {
            runtime,
            config,
            recovered,
            capabilities: installed,
            cancel,
        })
    }
}

/// The capabilities every run has, in order.
pub(crate) fn builtin_capabilities(file_tools: bool) -> Vec<Box<dyn Capability>> {
    vec![
        Box::new(tether_files::FileTools {
            harness: file_tools,
        }),
        Box::new(tether_structural::Structural::default()),
        Box::new(tether_lsp::Lsp::default()),
        Box::new(tether_dap::Debug::default()),
        Box::new(tether_kernel::Kernel::default()),
        Box::new(tether_workers::Workers::default()),
    ]
}

/// Configures each capability from its section of `config`: those that stay on.
fn configured(
    capabilities: Vec<Box<dyn Capability>>,
    config: &Config,
) -> Result<Vec<Box<dyn Capability>>, ConfigError> {
    let mut on = Vec::new();
    for mut cap in capabilities {
        let section = cap.section();
        let keep = cap
            .configure(section.and_then(|s| config.get(s)))
            .map_err(|reason| {
                let file = section
                    .map_or_else(|| config.dir().join("tether.toml"), |s| config.source_of(s));
                ConfigError::new(&file, section, reason)
            })?;
        if keep {
            on.push(cap);
        }
    }
    Ok(on)
}

/// Every program a run for `root` may start, by name or path, sorted, from the capabilities as
/// the user's and the workspace's `tether.toml` configure them (`user_dir` is the user's
/// config folder): what the warm host's key covers.
pub fn programs(root: &Path, user_dir: &Path) -> Result<Vec<String>, ConfigError> {
    let config = Config::load(root, user_dir)?;
    let mut names: Vec<String> = configured(builtin_capabilities(false), &config)?
        .iter()
        .flat_map(|c| c.programs())
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// One assembled run: its runtime, its capabilities and what it was built from. Dropping it
/// drops the capabilities, which kills whatever they still run.
pub struct Run {
    runtime: Runtime,
    config: Config,
    recovered: Vec<RecoveryReport>,
    capabilities: Vec<Box<dyn Capability>>,
    cancel: CancellationToken,
}

impl Run {
    /// The run at work: its tools and the call pipeline (`run.runtime().call(..)`).
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The merged configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Ends the run deliberately: cancels the run-wide token (calls still running see it),
    /// asks every capability to stop within `budget`, kills the descendants no capability
    /// owns, then leaves the rest to drop, which kills what did not stop.
    pub async fn shutdown(&self, budget: std::time::Duration) {
        self.cancel.cancel();
        let stops = self.capabilities.iter().map(|c| async move {
            if tokio::time::timeout(budget, c.shutdown(budget))
                .await
                .is_err()
            {
                tracing::warn!(capability = c.name(), "did not stop within its budget");
            }
        });
        futures::future::join_all(stops).await;
        // What no capability owns any more (a daemon that scrubbed its environment and lost
        // its parents before tether's census saw it) goes too; the walk blocks, so off-thread.
        let _ = tokio::task::spawn_blocking(tether_proc::sweep_strays).await;
    }

    /// Waits, at most `budget`, for every capability's owed follow-ups (late diagnostics about
    /// a write), so a front end ending the run can print them as notices.
    pub async fn settle(&self, budget: std::time::Duration) {
        let settles = self.capabilities.iter().map(|c| c.settle(budget));
        let _ = tokio::time::timeout(budget, futures::future::join_all(settles)).await;
    }

    /// Lets every capability start what the session will soon want; for a front end to run in
    /// the background after its handshake. It ends early when the run shuts down.
    pub async fn warm(&self) {
        let warm = futures::future::join_all(self.capabilities.iter().map(|c| c.warm()));
        tokio::select! {
            _ = warm => {}
            _ = self.cancel.cancelled() => {}
        }
    }

    /// The names of the capabilities that configured themselves on.
    pub fn capabilities(&self) -> Vec<&'static str> {
        self.capabilities.iter().map(|c| c.name()).collect()
    }

    /// The capabilities that configured themselves on, for doctor.
    pub(crate) fn installed(&self) -> &[Box<dyn Capability>] {
        &self.capabilities
    }

    /// Transactions of dead runs this run finished or rolled back on start.
    pub fn recovered(&self) -> &[RecoveryReport] {
        &self.recovered
    }
}
