//! Background workers as a capability: coding agents run non-interactively on a brief, in
//! their own process groups, through the five vibe tools. Registered only in vibe mode, and
//! every worker's tree is killed when the run ends.

#![forbid(unsafe_code)]

mod config;
mod output;
mod pool;
mod tools;
mod transcript;
mod worktree;

use std::sync::Arc;
use std::time::Duration;

use tether_tool::{BoxFuture, Capability, DoctorSection, Install};

pub use config::{Format, SETTINGS, TierConfig, WorkersConfig};
pub use pool::State;

/// The workers capability.
#[derive(Default)]
pub struct Workers {
    config: WorkersConfig,
    pool: Option<Arc<pool::Pool>>,
}

impl Capability for Workers {
    fn settings(&self) -> &'static [tether_tool::Setting] {
        SETTINGS
    }

    fn name(&self) -> &'static str {
        "workers"
    }

    fn section(&self) -> Option<&'static str> {
        Some("workers")
    }

    fn configure(
        &mut self,
        section: Option<&toml::Value>,
    ) -> Result<bool, tether_tool::SettingError> {
        self.config = WorkersConfig::from_section(section)?;
        Ok(true)
    }

    fn programs(&self) -> Vec<String> {
        let tiers = self.config.tiers.values();
        tiers.filter_map(|t| t.command.first().cloned()).collect()
    }

    fn install(&mut self, run: &mut Install) {
        if !run.vibe {
            return;
        }
        // A backend command from the workspace's own file waits for `tether trust`.
        let held: Vec<(String, String)> = ["fast", "good"]
            .into_iter()
            .filter(|tier| {
                let key = format!("workers.{tier}");
                run.held_back.iter().any(|k| k.starts_with(&key))
            })
            .map(|tier| {
                (
                    tier.to_string(),
                    format!(
                        "the workspace's [workers.{tier}] names a command, so it is held back \
                         until the workspace is trusted (`tether trust`)"
                    ),
                )
            })
            .collect();
        let mut config = self.config.clone();
        for (tier, _) in &held {
            config.tiers.remove(tier);
        }
        let pool = Arc::new(pool::Pool::new(config, run.workspace.root(), run_id()));
        let shared = Arc::new(tools::Shared {
            pool: pool.clone(),
            held,
        });
        run.tool(tools::Spawn(shared.clone()))
            .tool(tools::Wait(shared.clone()))
            .tool(tools::Send(shared.clone()))
            .tool(tools::Kill(shared.clone()))
            .tool(tools::List(shared));
        self.pool = Some(pool);
    }

    fn doctor<'a>(
        &'a self,
        _root: &'a std::path::Path,
        _trusted: bool,
    ) -> BoxFuture<'a, Vec<DoctorSection>> {
        Box::pin(async move {
            vec![DoctorSection::new(
                "workers (vibe mode)",
                config::report(&self.config),
            )]
        })
    }

    fn shutdown(&self, _budget: Duration) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(pool) = &self.pool {
                pool.close();
            }
        })
    }
}

/// A short id for this run of tether (six of `0-9a-z`), in the names of its transcripts and
/// worktrees, so that no two runs on one workspace share one.
fn run_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static MADE: AtomicU64 = AtomicU64::new(0);
    // `RandomState` is seeded from the system's randomness; the rest tells apart runs anyway.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.write_u64(MADE.fetch_add(1, Ordering::Relaxed));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    hasher.write_u128(now.map(|d| d.as_nanos()).unwrap_or_default());
    let mut n = hasher.finish();
    (0..6)
        .map(|_| {
            let digit = (n % 36) as u32;
            n /= 36;
            char::from_digit(digit, 36).unwrap_or('0')
        })
        .collect()
}
