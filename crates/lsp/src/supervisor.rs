//! One server per (server id, project root), started on first use and kept until the run
//! ends; a server that crashed is started again on the next call.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tether_base::lock;

use tokio::sync::{Mutex, OnceCell};

use crate::avail::{Found, find};
use crate::config::LspConfig;
use crate::error::LspError;
use crate::server::{Server, State};

type Slot = Arc<OnceCell<Result<Arc<Server>, LspError>>>;

/// The first wait before a crashed server is started again; it doubles with each crash.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait between restarts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A server that ran this long since its last crash was healthy: its next crash starts the
/// back-off afresh, so a crash a day does not keep it down for the longest wait.
const HEALTHY_FOR: Duration = Duration::from_secs(120);

/// The crash count after one more crash, `since` the last one.
fn crashes_after(count: u32, since: Duration) -> u32 {
    match since >= HEALTHY_FOR {
        true => 1,
        false => count + 1,
    }
}

/// A server's crashes: how many, and when the last one was seen.
struct Crashes {
    count: u32,
    last: tokio::time::Instant,
    why: String,
}

/// The run's language servers.
pub struct Supervisor {
    /// Whether several runs share its servers (a host's pool), so each keeps what a server had
    /// published before every text another run sent it.
    shared: bool,
    config: LspConfig,
    workspace: PathBuf,
    allowed: crate::restrict::Allowed,
    /// `[lsp]` keys of the workspace file not used until it is trusted.
    held_back: Vec<String>,
    servers: Mutex<HashMap<(String, PathBuf), Slot>>,
    crashes: std::sync::Mutex<HashMap<(String, PathBuf), Crashes>>,
    /// Missing servers installed on first need.
    auto_install: crate::auto_install::AutoInstall,
}

impl Supervisor {
    /// A supervisor that has started nothing yet; `writes` says whether the run's surface may
    /// write, without which build scripts stay off unless the user opted in.
    pub fn new(
        config: LspConfig,
        workspace: PathBuf,
        trusted: bool,
        writes: bool,
        held_back: Vec<String>,
        shared: bool,
    ) -> Self {
        let builds = trusted && (writes || config.read_surfaces_build);
        Supervisor {
            shared,
            auto_install: crate::auto_install::AutoInstall::new(config.auto_install),
            config,
            workspace,
            allowed: crate::restrict::Allowed { trusted, builds },
            held_back,
            servers: Mutex::default(),
            crashes: std::sync::Mutex::default(),
        }
    }

    /// The configuration it starts servers with.
    pub fn config(&self) -> &LspConfig {
        &self.config
    }

    /// The workspace file's `[lsp]` keys held back until it is trusted.
    pub fn held_back(&self) -> &[String] {
        &self.held_back
    }

    /// Whether the workspace is trusted.
    pub fn trusted(&self) -> bool {
        self.allowed.trusted
    }

    /// Whether build scripts, proc macros and project checks may run in this run.
    pub fn builds(&self) -> bool {
        self.allowed.builds
    }

    /// The server that would serve `file` of `lang` under this run's trust, or why none would.
    fn find(&self, file: &Path, lang: &str) -> Result<Found, Vec<String>> {
        find(
            &self.config,
            lang,
            file,
            &self.workspace,
            self.allowed.trusted,
        )
    }

    /// The workspace root.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The server for `file` of `lang`, started if need be (a crashed one is started again);
    /// or why none can serve it.
    pub async fn server_for(&self, lang: &str, file: &Path) -> Result<Arc<Server>, LspError> {
        let unavailable = |reasons| LspError::Unavailable {
            lang: lang.to_string(),
            reasons,
        };
        let found = match self.find(file, lang) {
            Ok(found) => found,
            // With `[lsp] auto_install`, a missing server is installed and then started:
            // whoever waits bounds the wait.
            Err(mut reasons) => {
                let begun = self
                    .auto_install
                    .begin(&self.config, lang, file, &self.workspace);
                let Some((id, done)) = begun else {
                    return Err(unavailable(reasons));
                };
                if let Err(why) = crate::auto_install::ended(done).await {
                    reasons.push(format!(
                        "{id}: installing it on first need (`[lsp] auto_install`) failed, and \
                         is not tried again in this run: {why}"
                    ));
                    return Err(unavailable(reasons));
                }
                self.find(file, lang).map_err(unavailable)?
            }
        };
        let key = (found.id.clone(), found.root.clone());
        self.backoff(&key)?;
        loop {
            let slot = {
                let mut map = self.servers.lock().await;
                map.entry(key.clone()).or_default().clone()
            };
            let started = slot.get_or_init(|| self.start(&found)).await.clone();
            match started {
                Ok(server) if matches!(server.state().await, State::Crashed(_)) => {
                    let why = server.state().await.to_string();
                    tracing::warn!(id = %server.id, "a language server crashed: {why}");
                    self.forget(&key, &slot).await;
                    server.stop(Duration::from_millis(200)).await;
                    self.note_crash(&key, why);
                    self.backoff(&key)?;
                }
                Ok(server) => return Ok(server),
                Err(why) => {
                    // Not kept: the next call tries again, perhaps after an install.
                    self.forget(&key, &slot).await;
                    return Err(why);
                }
            }
        }
    }

    /// The server being installed on first need for `lang` now, if one is.
    pub fn installing(&self, lang: &str) -> Option<String> {
        self.auto_install.running_for(&self.config, lang)
    }

    /// Refuses a restart that comes too soon after a crash (1 s, doubling up to 30 s).
    fn backoff(&self, key: &(String, PathBuf)) -> Result<(), LspError> {
        let crashes = lock(&self.crashes);
        let Some(c) = crashes.get(key) else {
            return Ok(());
        };
        let wait =
            (FIRST_BACKOFF * 2u32.saturating_pow(c.count.saturating_sub(1))).min(MAX_BACKOFF);
        let since = c.last.elapsed();
        if since >= wait {
            return Ok(());
        }
        Err(LspError::refused(format!(
            "{} {} ({}); it starts again in {:.1} s, on the next call after that",
            key.0,
            match c.count {
                1 => "crashed".to_string(),
                n => format!("crashed {n} times"),
            },
            c.why,
            (wait - since).as_secs_f64()
        )))
    }

    fn note_crash(&self, key: &(String, PathBuf), why: String) {
        let mut crashes = lock(&self.crashes);
        let entry = crashes.entry(key.clone()).or_insert(Crashes {
            count: 0,
            last: tokio::time::Instant::now(),
            why: String::new(),
        });
        entry.count = crashes_after(entry.count, entry.last.elapsed());
        entry.last = tokio::time::Instant::now();
        entry.why = why;
    }

    async fn forget(&self, key: &(String, PathBuf), slot: &Slot) {
        let mut map = self.servers.lock().await;
        if map.get(key).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            map.remove(key);
        }
    }

    async fn start(&self, found: &Found) -> Result<Arc<Server>, LspError> {
        let entry = self
            .config
            .servers
            .get(&found.id)
            .ok_or_else(|| LspError::refused(format!("{} is not in the catalog", found.id)))?;
        let c = &self.config;
        let languages = c
            .languages
            .values()
            .filter(|l| l.servers.contains(&found.id))
            .cloned()
            .collect();
        Server::start(
            entry,
            languages,
            found,
            self.allowed,
            &self.workspace,
            c.init_timeout,
            c.request_timeout,
        )
        .await
        .map(|server| {
            if self.shared {
                server.share();
            }
            let server = Arc::new(server);
            crate::survey::start(&server);
            server
        })
    }

    /// Starts the server of every language whose project marker sits at the workspace root,
    /// one after the other; a language that cannot start is left for its first call to
    /// explain. A language with no project file (YAML, Perl) says nothing of the workspace:
    /// its server starts on its first call.
    pub async fn warm(&self) {
        let probe = self.workspace.join("warm-up");
        let langs: Vec<&'static str> = self.config.languages.values().map(|l| l.id).collect();
        for lang in langs {
            let marked = self
                .find(&probe, lang)
                .ok()
                .and_then(|found| self.config.servers.get(&found.id))
                .is_some_and(|entry| !entry.root_markers.is_empty());
            if marked && let Err(why) = self.server_for(lang, &probe).await {
                tracing::info!("warming the {lang} server: {why}");
            }
        }
    }

    /// Every server started so far.
    pub async fn running(&self) -> Vec<Arc<Server>> {
        let map = self.servers.lock().await;
        map.values()
            .filter_map(|slot| slot.get().and_then(|r| r.as_ref().ok()).cloned())
            .collect()
    }

    /// The running server for `file` of `lang`, if one is up; never starts one.
    pub async fn running_for(&self, lang: &str, file: &Path) -> Option<Arc<Server>> {
        let found = self.find(file, lang).ok()?;
        let map = self.servers.lock().await;
        let slot = map.get(&(found.id, found.root))?;
        slot.get().and_then(|r| r.as_ref().ok()).cloned()
    }

    /// Servers still starting (their initialize not yet answered), as (id, root).
    pub async fn starting(&self) -> Vec<(String, PathBuf)> {
        let map = self.servers.lock().await;
        map.iter()
            .filter(|(_, slot)| slot.get().is_none())
            .map(|(key, _)| key.clone())
            .collect()
    }

    /// Stops the servers for `root`'s project (all when `None`), so the next call starts
    /// them afresh.
    pub async fn stop(&self, only: Option<&Path>, budget: Duration) -> Vec<String> {
        let slots: Vec<Slot> = {
            let mut map = self.servers.lock().await;
            let keys: Vec<_> = map
                .keys()
                .filter(|(_, root)| only.is_none_or(|r| r == root))
                .cloned()
                .collect();
            keys.iter().filter_map(|k| map.remove(k)).collect()
        };
        let mut stopped = Vec::new();
        for slot in slots {
            if let Some(Ok(server)) = slot.get() {
                server.stop(budget).await;
                stopped.push(server.id.clone());
            }
        }
        stopped
    }
}

/// A host keeps one supervisor per configuration and trust for all the runs it serves.
impl tether_tool::Pooled for Supervisor {
    fn stop(&self, budget: Duration) -> tether_tool::BoxFuture<'_, ()> {
        Box::pin(async move {
            Supervisor::stop(self, None, budget).await;
        })
    }

    fn describe(&self) -> tether_tool::BoxFuture<'_, Vec<String>> {
        Box::pin(async move {
            let mut lines = Vec::new();
            for server in self.running().await {
                lines.push(format!("{} ({})", server.id, server.state().await));
            }
            lines
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_after_a_healthy_stretch_starts_the_back_off_afresh() {
        assert_eq!(crashes_after(0, Duration::ZERO), 1);
        assert_eq!(crashes_after(4, Duration::from_secs(3)), 5);
        assert_eq!(crashes_after(4, HEALTHY_FOR), 1);
    }
}
