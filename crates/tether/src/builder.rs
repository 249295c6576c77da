use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tether_fs::{Journal, RecoveryReport, StagedStore, Workspace};
use tether_run::{PathsOf, Registry, RegistryBuilder, RunResources};
use tether_tool::{
    NoticeQueue, QuestionPort, Surface, Tool, ToolError, ToolOutput, ToolSpec, WriteHook,
    WriteHooks,
};
use tokio_util::sync::CancellationToken;

use crate::config::Config;

/// Why a run could not be assembled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The workspace root is missing or not a folder.
    #[error("workspace root: {0}")]
    Root(String),
    /// A `tether.toml` is malformed.
    #[error("{0}")]
    Config(String),
    /// The state folder or journal could not be opened.
    #[error("cannot open the run's journal: {0}")]
    Journal(String),
}

type HostTool = Box<dyn FnOnce(&mut RegistryBuilder) + Send>;

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
    host_tools: Vec<HostTool>,
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
            host_tools: Vec::new(),
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

    /// Registers a host tool as it is.
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        self.host_tools.push(Box::new(move |r| {
            r.register(tool);
        }));
        self
    }

    /// Registers a host's own write tool with the run's write hooks around it.
    pub fn wrap_write<T: Tool>(
        mut self,
        tool: T,
        paths_of: impl Fn(&Value) -> Vec<String> + Send + Sync + 'static,
    ) -> Self {
        let paths_of: PathsOf = Arc::new(paths_of);
        self.host_tools.push(Box::new(move |r| {
            r.wrap_write(tool, paths_of);
        }));
        self
    }

    /// Opens the run. A transaction left half-done by a dead run is finished or rolled back
    /// first, and the first root result says so.
    pub fn build(self) -> Result<Run, BuildError> {
        let workspace = Workspace::new(&self.root).map_err(|e| BuildError::Root(e.to_string()))?;
        let user_dir = self.user_dir.unwrap_or_else(Config::user_dir);
        let config = Config::load(workspace.root(), &user_dir).map_err(BuildError::Config)?;
        let state_dir = self.state_dir.unwrap_or_else(Config::state_dir);
        let workspace = workspace
            .with_read_roots(config.read_roots().map_err(BuildError::Config)?)
            .protect(
                &user_dir,
                "the user's tether config folder (settings and trust list)",
            )
            .protect(
                &state_dir,
                "tether's state folder (journals of interrupted writes)",
            );
        let approval = config.approval().map_err(BuildError::Config)?;
        let (journal, recovered) = Journal::open(&workspace, &state_dir)
            .map_err(|e| BuildError::Journal(e.to_string()))?;
        let structural = tether_structural::StructuralConfig::from_section(
            config.get("structural"),
        )
        .map_err(|e| {
            BuildError::Config(format!("{}: {e}", config.source_of("structural").display()))
        })?;
        let notices = NoticeQueue::default();
        for report in &recovered {
            tracing::warn!("{report}");
            notices.push("fs", report.to_string());
        }
        let workspace = Arc::new(workspace);
        let mut hooks = self.hooks;
        if structural.syntax_check {
            hooks.push(Arc::new(tether_structural::SyntaxCheck::new(
                workspace.clone(),
            )));
        }
        let mut registry = RegistryBuilder::new(RunResources {
            workspace,
            journal: Arc::new(journal),
            staged: Arc::new(StagedStore::new()),
            hooks: WriteHooks::new(hooks),
            notices,
            approval,
            questions: self.questions,
            conversation: self.conversation,
        });
        if self.file_tools {
            registry
                .register(tether_files::ReadTool)
                .register(tether_files::WriteTool)
                .register(tether_files::EditTool)
                .register(tether_files::ApplyPatchTool);
        }
        // `resolve` belongs to the staged store, which every run has; the staging tools
        // (ast_edit, lsp_rename) register with their own resources.
        registry.register(tether_files::ResolveTool);
        // The grammars are bundled, so structural search is always available.
        // A one-call run keeps no trees: there is no later call to reuse them.
        let budget = match self.single_call {
            true => 0,
            false => structural.cache_bytes(),
        };
        let cache = Arc::new(tether_structural::TreeCache::new(budget));
        registry
            .register(tether_structural::AstGrepTool::new(cache.clone()))
            .register(tether_structural::AstEditTool::new(cache));
        for add in self.host_tools {
            add(&mut registry);
        }
        Ok(Run {
            registry: registry.build(),
            config,
            recovered,
        })
    }
}

/// One assembled run: its registry and what it was built from.
pub struct Run {
    registry: Registry,
    config: Config,
    recovered: Vec<RecoveryReport>,
}

impl Run {
    /// The run's registry and pipeline.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The specs `surface` may see.
    pub fn tools(&self, surface: Surface) -> Vec<ToolSpec> {
        self.registry.tools(surface)
    }

    /// A root call, as the model makes it.
    pub async fn call(
        &self,
        surface: Surface,
        tool: &str,
        args: Value,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        self.registry.call(surface, tool, args, cancel).await
    }

    /// The merged configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Transactions of dead runs this run finished or rolled back on start.
    pub fn recovered(&self) -> &[RecoveryReport] {
        &self.recovered
    }
}
