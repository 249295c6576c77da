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
