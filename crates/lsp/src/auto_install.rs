//! Servers installed on first need (`[lsp] auto_install`, the user's file only): one
//! background install per server and run, from the built-in catalog's recipe alone (a
//! workspace's catalog never names what gets installed), awaited by whoever needs the server
//! within their own deadline.

use std::collections::HashMap;
use std::path::Path;

use tether_base::lock;
use tokio::sync::watch;

use crate::config::LspConfig;

/// How an install ended: `None` while it runs, then why it failed, if it did.
type Outcome = Option<Result<(), String>>;

/// The run's installs on first need.
pub(crate) struct AutoInstall {
    on: bool,
    installs: std::sync::Mutex<HashMap<String, watch::Receiver<Outcome>>>,
}

impl AutoInstall {
    pub(crate) fn new(on: bool) -> Self {
        AutoInstall {
            on,
            installs: std::sync::Mutex::default(),
        }
    }

    /// The server installed for `file` of `lang`, begun now or earlier in the run: the first
    /// of the language's servers whose built-in recipe is not system-wide and whose project
    /// root is found; `None` when auto-install is off or none can help.
    pub(crate) fn begin(
        &self,
        config: &LspConfig,
        lang: &str,
        file: &Path,
        workspace: &Path,
    ) -> Option<(String, watch::Receiver<Outcome>)> {
        if !self.on {
            return None;
        }
        let builtin = crate::catalog::builtin();
        let language = config.languages.get(lang)?;
        let (id, recipe, program) = language.servers.iter().find_map(|id| {
            let entry = builtin.get(id)?;
            let recipe = entry.install.clone()?;
            let found = crate::avail::find_root(entry, file, workspace).is_some();
            let program = entry.command.first()?.clone();
            (found && !recipe.from.system_wide()).then(|| (id.clone(), recipe, program))
        })?;
        let mut installs = lock(&self.installs);
        if let Some(running) = installs.get(&id) {
            return Some((id, running.clone()));
        }
        let (tx, rx) = watch::channel(None);
        installs.insert(id.clone(), rx.clone());
        let name = id.clone();
        tracing::info!("installing {name} on first need (`[lsp] auto_install`)");
        tokio::spawn(async move {
            let dir = tether_toolchain::servers_dir();
            let progress = |line: &str| tracing::info!("auto-install: {line}");
            let programs = [program];
            let done =
                tether_toolchain::install(&dir, &name, &recipe, None, &programs, &progress).await;
            let _ = tx.send(Some(done.map(|_| ()).map_err(|e| e.to_string())));
        });
        Some((id, rx))
    }

    /// The server being installed for `lang` now, if one is.
    pub(crate) fn running_for(&self, config: &LspConfig, lang: &str) -> Option<String> {
        let language = config.languages.get(lang)?;
        let installs = lock(&self.installs);
        language
            .servers
            .iter()
            .find(|id| installs.get(*id).is_some_and(|rx| rx.borrow().is_none()))
            .cloned()
    }
}

/// Waits for an install begun by [`AutoInstall::begin`] to end; why it failed, if it did.
pub(crate) async fn ended(mut done: watch::Receiver<Outcome>) -> Result<(), String> {
    let outcome = done.wait_for(Option::is_some).await.map(|o| o.clone());
    match outcome {
        Ok(Some(result)) => result,
        _ => Err("the install ended without a word".into()),
    }
}
