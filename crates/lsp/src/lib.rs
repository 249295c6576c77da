//! Language servers as a capability: the catalog and its `[lsp]` overrides, availability
//! decided at call time, a supervisor that starts one server per project on first use and
//! stops them all when the run ends, and the `lsp` tool.

#![forbid(unsafe_code)]

mod answers;
mod asks;
mod auto_install;
mod avail;
mod catalog;
mod checker;
mod client;
mod config;
mod documents;
mod edits;
mod error;
mod file_events;
mod fix;
mod follow;
mod gate;
mod heard;
mod importers;
mod inotify;
mod lax;
mod ledger;
mod leftovers;
mod moves;
mod named;
mod navigate;
mod on_write;
mod outside;
mod position;
mod preview;
mod protocol;
mod python_imports;
mod rename;
mod render;
mod repo_config;
mod restrict;
mod server;
mod settings;
mod stamp;
mod status;
mod store;
mod supervisor;
mod survey;
mod tool;
mod tsserver_pull;
mod watch;

use std::sync::Arc;
use std::time::Duration;

use tether_tool::{BoxFuture, Capability, DoctorSection, Install};

pub use avail::{catalog_report, languages_table};
pub use catalog::{Behaviour, Language, ServerEntry, builtin, builtin_languages};
pub use config::LspConfig;
pub use error::LspError;
pub use fix::{FixArgs, LspFixTool, Pick};
pub use position::{Encoding, locate};
pub use rename::{LspRenameTool, RenameArgs};
pub use settings::SETTINGS;
pub use supervisor::Supervisor;
pub use tool::{Action, LspArgs, LspTool};

/// The language-server capability.
#[derive(Default)]
pub struct Lsp {
    config: LspConfig,
    /// The `[lsp]` section as given, so runs with the same settings share one supervisor.
    section: String,
    /// Whether the supervisors belong to a host's pool, which stops them, not this run.
    pooled: bool,
    /// The chosen servers, then those run beside them (when a language names any): each
    /// with its own watch of outside edits and what it reports to.
    lanes: Vec<Lane>,
}

/// One set of servers of a run: its supervisor, its part of the watch for outside edits, and
/// what it reports to.
struct Lane {
    servers: Arc<Supervisor>,
    outside: Arc<outside::Outside>,
    follow: follow::Follow,
}

impl Lsp {
    /// One lane of servers for `config`: its supervisor (shared by runs with the same key,
    /// `tag` telling a lane of servers run beside the chosen ones apart), its part of the
    /// workspace's watch, and its write hooks.
    fn lane(&self, run: &mut Install, config: LspConfig, tag: &'static str, beside: bool) -> Lane {
        let writes = run.surface == tether_tool::Surface::Agent;
        let held_back: Vec<String> = run
            .held_back
            .iter()
            .filter(|k| k.starts_with("lsp."))
            .cloned()
            .collect();
        // Runs share a supervisor only when everything that shapes its servers is the same.
        let key = format!(
            "{tag}{}|trusted={}|writes={writes}|held={held_back:?}|{}",
            run.workspace.root().display(),
            run.trusted,
            self.section
        );
        let (wait, baseline) = (config.write_wait, config.write_baseline);
        let (budget, counted) = (config.request_timeout, config.write_severities.clone());
        let servers = run.pool.get_or_insert(&key, || {
            Supervisor::new(
                config,
                run.workspace.root().to_path_buf(),
                run.trusted,
                writes,
                held_back,
                run.pool.outlives_runs(),
            )
        });
        // One watch per workspace for every run and lane of the pool: a host's runs share one
        // inotify instance however many there are.
        let root = run.workspace.root().to_path_buf();
        let watch = run
            .pool
            .get_or_insert(&format!("watch|{}", root.display()), || {
                watch::SharedWatch::new(root.clone(), self.config.watch_folders_max)
            });
        let importers = run
            .pool
            .get_or_insert(&format!("importers|{}", root.display()), || {
                importers::Importers::new(watch.clone(), run.workspace.clone())
            });
        let outside = Arc::new(outside::Outside::new(watch));
        run.hook(Arc::new(documents::Documents {
            servers: servers.clone(),
        }));
        let follow = follow::Follow {
            ledger: Arc::new(ledger::Ledger::default()),
            notices: run.notices.clone(),
            cancel: run.cancel.clone(),
            budget,
            counted,
            workspace: run.workspace.root().to_path_buf(),
            files: run.workspace.clone(),
            importers,
            enabled: !run.single_call,
            tasks: tokio_util::task::TaskTracker::new(),
            writes: Arc::default(),
            wait,
            lane: tag,
        };
        run.hook(Arc::new(on_write::DiagnosticsOnWrite {
            servers: servers.clone(),
            told: std::sync::Mutex::default(),
            baseline,
            follow: follow.clone(),
            outside: outside.clone(),
            prompt: run.prompt_reports,
            beside,
        }));
        Lane {
            servers,
            outside,
            follow,
        }
    }
}

/// The toolchains the catalog's servers start themselves: rust-analyzer runs cargo and rustc,
/// gopls runs go, and pyright's and TypeScript's servers are node scripts.
const SERVERS_RUN: &[&str] = &["cargo", "rustc", "go", "node"];

impl Capability for Lsp {
    fn settings(&self) -> &'static [tether_tool::Setting] {
        SETTINGS
    }

    fn name(&self) -> &'static str {
        "lsp"
    }

    fn section(&self) -> Option<&'static str> {
        Some("lsp")
    }

    fn configure(
        &mut self,
        section: Option<&toml::Value>,
    ) -> Result<bool, tether_tool::SettingError> {
        self.config = LspConfig::from_section(section)?;
        self.section = section.map(|s| s.to_string()).unwrap_or_default();
        Ok(true)
    }

    fn programs(&self) -> Vec<String> {
        let servers = self.config.servers.values();
        let mut names: Vec<String> = servers
            .flat_map(|s| s.command.iter().take(1).chain(&s.binaries).cloned())
            .collect();
        names.extend(catalog::checker_programs());
        names.extend(SERVERS_RUN.iter().map(|n| n.to_string()));
        names
    }

    fn install(&mut self, run: &mut Install) {
        self.pooled = run.pool.outlives_runs();
        let main = self.lane(run, self.config.clone(), "", false);
        let beside = (self.config.beside()).map(|config| self.lane(run, config, "beside ", true));
        let listings = Arc::new(fix::Listings::default());
        run.tool(LspTool {
            servers: main.servers.clone(),
            ledger: main.follow.ledger.clone(),
            outside: main.outside.clone(),
            beside: beside.as_ref().map(|lane| lane.servers.clone()),
            listings: listings.clone(),
        })
        .tool(rename::LspRenameTool {
            servers: main.servers.clone(),
        })
        .tool(fix::LspFixTool {
            servers: main.servers.clone(),
            beside: beside.as_ref().map(|lane| lane.servers.clone()),
            listings,
        });
        self.lanes = std::iter::once(main).chain(beside).collect();
    }

    fn warm(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            for lane in &self.lanes {
                // The watch first: a server slow to start must not keep changes unseen.
                lane.outside.start(&lane.servers, &lane.follow);
            }
            for lane in &self.lanes {
                lane.servers.warm().await;
            }
        })
    }

    fn settle(&self, budget: Duration) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let start = tokio::time::Instant::now();
            for lane in &self.lanes {
                // A change made on disk just before is owed too: read and told first.
                let left = budget.saturating_sub(start.elapsed());
                lane.outside.caught_up(left).await;
                lane.follow
                    .settle(budget.saturating_sub(start.elapsed()))
                    .await;
            }
        })
    }

    fn doctor<'a>(
        &'a self,
        _root: &'a std::path::Path,
        _trusted: bool,
    ) -> BoxFuture<'a, Vec<DoctorSection>> {
        Box::pin(async move {
            let lines = catalog_report(&self.config);
            vec![DoctorSection::new(
                "language servers (started on first use)",
                lines,
            )]
        })
    }

    fn shutdown(&self, budget: Duration) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            for lane in &self.lanes {
                lane.outside.stop(!self.pooled);
                if !self.pooled {
                    lane.servers.stop(None, budget).await;
                }
            }
        })
    }
}
