//! `tether hook claude|codex`, the front end: reads the agent's event, finds the project the
//! edit belongs to, and hands the event to that project's host. Whatever goes wrong, the
//! answer is in the agent's form and never blocks the agent on tether's account.

use std::path::PathBuf;

use tether::Surface;
use tether_host::{Hello, Place};

use crate::{Exit, finish};

/// The most of an event tether reads from stdin.
const MAX_EVENT: u64 = 16 << 20;

/// The event from stdin to the project's host, its answer to stdout.
pub(crate) async fn hook(
    agent: &str,
    block: bool,
    root: Option<PathBuf>,
    surface: Surface,
) -> Result<(), Exit> {
    if !matches!(agent, "claude" | "codex") {
        let why = format!("unknown agent {agent:?}: use claude or codex");
        return finish(tether_host::hook_not_read(why));
    }
    let event = match read_event().await {
        Ok(event) => event,
        Err(why) => return finish(tether_host::hook_not_read(why)),
    };
    let root = match root {
        Some(r) => r,
        None => match project_of(&event) {
            Ok(root) => root,
            Err(why) => return finish(tether_host::hook_unreachable(&event, &why)),
        },
    };
    let attach = async {
        let config =
            tether::Config::load(&root, &tether::Config::user_dir()).map_err(|e| e.to_string())?;
        if !config.host().map_err(|e| e.to_string())?.enabled {
            return Err(
                "the agent hooks need the warm host, which `[host] enabled = false` \
                        in tether.toml turns off"
                    .to_string(),
            );
        }
        let place = Place::for_root(&root)?;
        let hello = Hello::Hook {
            agent: agent.to_string(),
            event: event.clone(),
            block_on_new_errors: block,
            surface: surface.to_string(),
        };
        let at = tether_host::attach(&place, &hello).await?;
        tether_host::printed(&place, at).await
    };
    match attach.await {
        Ok(printed) => finish(printed),
        Err(why) => finish(tether_host::hook_unreachable(&event, &why)),
    }
}

/// The event on stdin: a JSON object of at most [`MAX_EVENT`] bytes, within 30 s.
async fn read_event() -> Result<serde_json::Value, String> {
    use tokio::io::AsyncReadExt as _;
    let mut bytes = Vec::new();
    let mut stdin = tokio::io::stdin().take(MAX_EVENT + 1);
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        stdin.read_to_end(&mut bytes),
    )
    .await
    .map_err(|_| "no hook event on stdin within 30 s; nothing was checked".to_string())?
    .map_err(|e| format!("cannot read the hook event: {e}; nothing was checked"))?;
    if bytes.len() as u64 > MAX_EVENT {
        return Err(format!(
            "the hook event is larger than {} MiB, more than tether reads; nothing was checked",
            MAX_EVENT >> 20
        ));
    }
    let event: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("the hook event on stdin is not JSON ({e}); nothing was checked"))?;
    if !event.is_object() {
        return Err("the hook event on stdin is not a JSON object; nothing was checked".into());
    }
    Ok(event)
}

/// The project the event's edit belongs to (else the project of its cwd): never `/` or the
/// home folder, whatever the agent's cwd.
fn project_of(event: &serde_json::Value) -> Result<PathBuf, String> {
    let cwd = match event["cwd"].as_str() {
        Some(cwd) => PathBuf::from(cwd),
        None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
    };
    let files = tether_host::edited_files(event, &cwd);
    let from = files.first().unwrap_or(&cwd);
    tether_host::project_root(from).ok_or_else(|| {
        format!(
            "{} is in no project (no version-control root or project marker such as \
             Cargo.toml or pyproject.toml encloses it below the home folder), so it was not \
             checked",
            from.display()
        )
    })
}
