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

/// An `lsp` call on the agent surface: its text, or the error's.
pub async fn lsp(run: &Run, args: Value) -> Result<String, String> {
    call(run, "lsp", args).await.map_err(|e| e.to_string())
}

/// A `debug` call on the agent surface: its text, or the error's after `ERROR`.
pub async fn debug(run: &Run, args: Value) -> String {
    call_text(run, "debug", args).await
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

/// A TCP port free on 127.0.0.1 a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something listens on 127.0.0.1:`port`, read from the kernel's socket table:
/// a probe connection would be taken for the debugger by a program waiting for one.
pub async fn until_listening(port: u16, limit: std::time::Duration) {
    let end = std::time::Instant::now() + limit;
    loop {
        let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
        let local = format!(":{port:04X}");
        let listens = table.lines().skip(1).any(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            cols.len() > 3 && cols[1].ends_with(&local) && cols[3] == "0A"
        });
        if listens {
            return;
        }
        assert!(
            std::time::Instant::now() < end,
            "nothing listened on {port} within {limit:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Held by tests that start debug adapters or choose ports: an adapter listens on ports of its
/// own, which could take the one another test chose a moment before.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// The names of the tools the agent surface lists now.
pub fn agent_tools(run: &Run) -> Vec<String> {
    run.runtime()
        .tools(Surface::Agent)
        .into_iter()
        .map(|s| s.name)
        .collect()
}

/// A root call on the agent surface as text, an error as `ERROR <message>`, for asserting on
/// either.
pub async fn call_text(run: &Run, tool: &str, args: Value) -> String {
    call(run, tool, args)
        .await
        .unwrap_or_else(|e| format!("ERROR {e}"))
}

/// Reads `path` every half second, for at most `tries` reads, until the result (with the
/// notices it carries) holds what `holds` looks for; the last result either way.
pub async fn read_until(
    run: &Run,
    path: &str,
    tries: usize,
    holds: impl Fn(&str) -> bool,
) -> String {
    let mut out = String::new();
    for _ in 0..tries {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        out = call_text(run, "read", serde_json::json!({"path": path})).await;
        if holds(&out) {
            break;
        }
    }
    out
}

/// Builds test support's fake servers (`fake-lsp`, `fake-dap`) once and returns the path of
/// the one named.
pub fn test_support_bin(name: &str) -> std::path::PathBuf {
    static BUILT: std::sync::Once = std::sync::Once::new();
    BUILT.call_once(|| {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", "tether-fake-lsp", "--bins"])
            .status()
            .unwrap();
        assert!(status.success());
    });
    let target = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| format!("{}/../../target", env!("CARGO_MANIFEST_DIR")));
    std::path::PathBuf::from(format!("{target}/debug/{name}"))
}

/// The fake language server (test support).
pub fn fake_lsp() -> std::path::PathBuf {
    test_support_bin("fake-lsp")
}

/// The fake language server under another name, linked in `dir`: the tests of this binary
/// that count their `fake-lsp` children then never count another test's.
pub fn fake_lsp_as(dir: &Path, name: &str) -> std::path::PathBuf {
    let link = dir.join(name);
    std::os::unix::fs::symlink(fake_lsp(), &link).unwrap();
    link
}

/// A toy project under `dir/ws` (`toy.project`, `src/hello.toy`), and docs/architecture.md's
/// catalog entry for it with the fake server, run under `name`, as its command.
pub fn documented_toy_project(dir: &Path, name: &str) -> String {
    let ws = dir.join("ws");
    write(&ws, "toy.project", "");
    write(&ws, "src/hello.toy", "hello\n");
    let fake = format!("{:?}", fake_lsp_as(dir, name).display().to_string());
    let entry =
        documented_example("How to add a language server", "toml").replace("\"fake-lsp\"", &fake);
    assert!(
        entry.contains(&fake),
        "the documented entry names fake-lsp:\n{entry}"
    );
    entry
}

/// The first `lang` code block of docs/architecture.md's section `heading`: a worked example
/// a test drives, so the page stays true.
pub fn documented_example(heading: &str, lang: &str) -> String {
    let doc = include_str!("../../../../../docs/architecture.md");
    let (_, section) = doc
        .split_once(&format!("## {heading}\n"))
        .unwrap_or_else(|| panic!("docs/architecture.md has no section '{heading}'"));
    let (_, block) = section
        .split_once(&format!("```{lang}\n"))
        .unwrap_or_else(|| panic!("section '{heading}' has no {lang} example"));
    block.split_once("```").unwrap().0.to_string()
}
