//! The debugger as a capability: a catalog of debug adapters decided at call time, one
//! session per conversation spoken to over the Debug Adapter Protocol, and the `debug` tool.
//! Every session ends with the run, or by a timer at its time to live: the adapter and the
//! program are killed.

#![forbid(unsafe_code)]

mod catalog;
mod error;
mod locate;
mod op;
mod ops;
mod peer;
mod protocol;
mod render;
mod session;
mod sessions;
mod settings;
mod template;
mod tool;

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tether_tool::{BoxFuture, Capability, DoctorSection, Install, SettingError};

pub use catalog::{AdapterOverride, Catalog, Overrides, TransportKind};
pub use settings::SETTINGS;
pub use tool::{Action, DebugArgs, DebugTool};

/// The `[debug]` section of `tether.toml`.
#[derive(Debug, Clone)]
pub struct DebugConfig {
    /// A session's hard time to live.
    pub ttl: Duration,
    /// How long launch, continue and the steps wait for the next stop.
    pub stop_wait: Duration,
    /// One request's deadline.
    pub request: Duration,
    /// `[debug.adapters.ID]`: entries merged over the built-in catalog's, or new adapters.
    pub adapters: catalog::Overrides,
}

impl Default for DebugConfig {
    fn default() -> Self {
        DebugConfig {
            ttl: Duration::from_secs(settings::TTL.default_number()),
            stop_wait: Duration::from_secs(settings::STOP_WAIT.default_number()),
            request: Duration::from_secs(settings::REQUEST_TIMEOUT.default_number()),
            adapters: catalog::Overrides::new(),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Section {
    ttl_s: Option<u64>,
    stop_wait_s: Option<u64>,
    request_timeout_s: Option<u64>,
    #[serde(default)]
    adapters: catalog::Overrides,
}

impl DebugConfig {
    /// Reads `[debug]`; a wrong key or value says which and what is allowed.
    pub fn from_section(section: Option<&toml::Value>) -> Result<Self, SettingError> {
        let mut config = DebugConfig::default();
        let Some(section) = section else {
            return Ok(config);
        };
        let s: Section = tether_tool::parse_section("debug", section)?;
        config.ttl = settings::TTL.duration(s.ttl_s)?;
        config.stop_wait = settings::STOP_WAIT.duration(s.stop_wait_s)?;
        config.request = settings::REQUEST_TIMEOUT.duration(s.request_timeout_s)?;
        // A wrong key, type or placeholder in an adapter's entry is said now, not at launch.
        catalog::Catalog::merged(&s.adapters)?;
        config.adapters = s.adapters;
        Ok(config)
    }
}

/// What `adapters` says for `root`: per adapter of the merged catalog, whether it can be used
/// there and why (not).
pub async fn adapters_report(root: &std::path::Path, overrides: &Overrides) -> String {
    match Catalog::merged(overrides) {
        Ok(catalog) => locate::report(&catalog, root).await,
        Err(why) => why.to_string(),
    }
}

/// The debugger capability.
#[derive(Default)]
pub struct Debug {
    config: DebugConfig,
    sessions: Option<Arc<sessions::Sessions>>,
}

impl Capability for Debug {
    fn settings(&self) -> &'static [tether_tool::Setting] {
        SETTINGS
    }

    fn name(&self) -> &'static str {
        "debug"
    }

    fn section(&self) -> Option<&'static str> {
        Some("debug")
    }

    fn configure(&mut self, section: Option<&toml::Value>) -> Result<bool, SettingError> {
        self.config = DebugConfig::from_section(section)?;
        Ok(true)
    }

    fn programs(&self) -> Vec<String> {
        let Ok(catalog) = catalog::Catalog::merged(&self.config.adapters) else {
            return Vec::new();
        };
        let mut names = Vec::new();
        for adapter in catalog.iter() {
            names.extend(adapter.binaries.iter().cloned());
            // `{binary}` is one of the binaries; `{python}` the project's or PATH's python3.
            let first = adapter.command.first().filter(|c| !c.starts_with('{'));
            names.extend(first.cloned());
            if adapter.uses_python() {
                names.push("python3".into());
            }
        }
        names
    }

    fn install(&mut self, run: &mut Install) {
        let sessions = Arc::new(sessions::Sessions {
            live: tokio::sync::Mutex::default(),
            expired: std::sync::Mutex::default(),
            breakpoints: std::sync::Mutex::default(),
            limits: session::Limits {
                request: self.config.request,
                stop_wait: self.config.stop_wait,
            },
            ttl: self.config.ttl,
            catalog: catalog::Catalog::merged(&self.config.adapters).unwrap_or_else(|why| {
                tracing::error!("debug adapters: {why}");
                catalog::Catalog::default()
            }),
            fallback: format!("run-{}", std::process::id()),
            notices: run.notices.clone(),
        });
        run.tool(DebugTool {
            sessions: sessions.clone(),
        });
        self.sessions = Some(sessions);
    }

    fn doctor<'a>(
        &'a self,
        root: &'a std::path::Path,
        _trusted: bool,
    ) -> BoxFuture<'a, Vec<DoctorSection>> {
        Box::pin(async move {
            let report = adapters_report(root, &self.config.adapters).await;
            vec![DoctorSection::new(
                "debug adapters (for the workspace root)",
                report.lines().map(str::to_string).collect(),
            )]
        })
    }

    fn shutdown(&self, _budget: Duration) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(sessions) = &self.sessions {
                let live: Vec<_> = sessions.live.lock().await.drain().collect();
                for (_, session) in live {
                    session.end().await;
                }
            }
        })
    }
}
