//! Helpers shared by the library's integration tests: a run over a temp workspace with no
//! user config, a root call on the agent surface, and writing fixture files.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;
use tether::{Run, RunBuilder, Surface, ToolError};
use tokio_util::sync::CancellationToken;

/// A run over `root` that ignores the user's own config folder.
pub fn open(root: &Path) -> Run {
    RunBuilder::new(root)
        .user_config_dir(root.join(".cfg-unused"))
        .build()
        .unwrap()
}

/// A root call on the agent surface, as text.
pub async fn call(run: &Run, tool: &str, args: Value) -> Result<String, ToolError> {
    run.runtime()
        .call(Surface::Agent, tool, args, CancellationToken::new())
        .await
        .map(|o| o.to_text())
}

/// Writes a fixture file, creating its folders.
pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Generous language-server deadlines for 2 loaded cores, set in the user's config as a user
/// would.
pub const LSP_BUDGETS: &str = "[lsp]\nrequest_timeout_s = 120\ninit_timeout_s = 120\n";

/// A run over `dir/ws` whose user config folder `dir/cfg` holds `config`, with its state in
/// `dir/state`.
pub fn run_with_config(dir: &Path, config: &str) -> Run {
    let cfg = dir.join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("tether.toml"), config).unwrap();
    RunBuilder::new(dir.join("ws"))
        .user_config_dir(&cfg)
        .state_dir(dir.join("state"))
        .build()
        .unwrap()
}
