//! Language servers as a capability: the catalog and its `[lsp]` overrides, availability
//! decided at call time, a supervisor that starts one server per project on first use and
//! stops them all when the run ends, and the `lsp` tool.

mod avail;
mod catalog;
mod checker;
mod config;
mod documents;
mod on_write;
mod position;
mod rename;
mod render;
mod restrict;
mod server;
mod supervisor;
mod tool;

use std::sync::Arc;
use std::time::Duration;

use tether_tool::{BoxFuture, Capability, Install};

pub use avail::catalog_report;
pub use catalog::{LANGUAGES, ServerEntry, builtin, language_of};
pub use config::LspConfig;
pub use position::{Encoding, locate};
pub use rename::{LspRenameTool, RenameArgs};
pub use supervisor::Supervisor;
pub use tool::{Action, LspArgs, LspTool};

/// The language-server capability.
#[derive(Default)]
pub struct Lsp {
    config: LspConfig,
    servers: Option<Arc<Supervisor>>,
}

impl Capability for Lsp {
    fn name(&self) -> &'static str {
        "lsp"
    }

    fn section(&self) -> Option<&'static str> {
        Some("lsp")
    }

    fn configure(&mut self, section: Option<&toml::Value>) -> Result<bool, String> {
        self.config = LspConfig::from_section(section)?;
        Ok(true)
    }

    fn install(&mut self, run: &mut Install) {
        let servers = Arc::new(Supervisor::new(
            self.config.clone(),
            run.workspace.root().to_path_buf(),
            run.trusted,
            run.held_back
                .iter()
                .filter(|k| k.starts_with("lsp."))
                .cloned()
                .collect(),
        ));
        let ledger = Arc::new(on_write::Ledger::default());
        run.tool(LspTool {
            servers: servers.clone(),
            ledger: ledger.clone(),
        })
        .tool(rename::LspRenameTool {
            servers: servers.clone(),
        });
        run.hook(Arc::new(documents::Documents {
            servers: servers.clone(),
        }));
        run.hook(Arc::new(on_write::DiagnosticsOnWrite {
            servers: servers.clone(),
            ledger,
            told: std::sync::Mutex::default(),
            baseline: self.config.write_baseline,
            wait: self.config.write_wait,
        }));
        self.servers = Some(servers);
    }

    fn warm(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(servers) = &self.servers {
                servers.warm().await;
            }
        })
    }

    fn shutdown(&self, budget: Duration) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(servers) = &self.servers {
                servers.stop(None, budget).await;
            }
        })
    }
}
