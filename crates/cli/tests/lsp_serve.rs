//! No language server outlives `tether serve`: not when the client closes its input, and not
//! when tether itself is SIGKILLed. Checked in the process table, with the real rust-analyzer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

mod common;
use common::{Mcp, exits_within};
use tether_proc::{children_named, gone_within, is_running};

const MANIFEST: &str = "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

/// Starts `tether serve` on a fresh one-file crate, with generous budgets.
fn serve(dir: &Path) -> Mcp {
    let ws = dir.join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("Cargo.toml"), MANIFEST).unwrap();
    std::fs::write(ws.join("src/lib.rs"), "pub fn one() -> u32 {\n    1\n}\n").unwrap();
    let cfg = dir.join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    let budgets = "[lsp]\nrequest_timeout_s = 120\ninit_timeout_s = 120\n";
    std::fs::write(cfg.join("tether.toml"), budgets).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tether"));
    cmd.args(["serve", "--root"])
        .arg(&ws)
        .env("TETHER_CONFIG_DIR", &cfg)
        .env("TETHER_STATE_DIR", dir.join("state"));
    Mcp::start(cmd)
}

/// Asks a hover, which starts rust-analyzer (if the warm-up has not), and returns its pid.
fn start_server(mcp: &mut Mcp) -> u32 {
    let args = json!({"action": "hover", "file": "src/lib.rs", "line": 1, "symbol": "one"});
    let text = mcp.call(2, "lsp", args);
    assert!(text.contains("pub fn one() -> u32"), "{text}");
    children_named(mcp.child.id(), "rust-analyzer")
        .first()
        .copied()
        .expect("no rust-analyzer under tether")
}

#[test]
fn the_server_ends_when_the_client_closes_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let mut serve = serve(dir.path());
    let pid = start_server(&mut serve);
    assert!(is_running(pid));
    serve.close();
    exits_within(&mut serve.child, Duration::from_secs(30));
    assert!(
        gone_within(pid, Duration::from_secs(30)),
        "rust-analyzer outlived serve"
    );
}

#[test]
fn the_server_ends_when_tether_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let mut serve = serve(dir.path());
    let pid = start_server(&mut serve);
    serve.child.kill().unwrap();
    serve.child.wait().unwrap();
    assert!(
        gone_within(pid, Duration::from_secs(10)),
        "rust-analyzer outlived a SIGKILL of tether"
    );
}

#[test]
fn serve_warms_the_server_after_the_handshake_and_call_never_starts_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut serve = serve(dir.path());
    // No tool call yet: the server of the language present starts on its own.
    let end = Instant::now() + Duration::from_secs(30);
    let pid = loop {
        if let Some(pid) = children_named(serve.child.id(), "rust-analyzer").first() {
            break *pid;
        }
        assert!(Instant::now() < end, "serve did not warm rust-analyzer");
        std::thread::sleep(Duration::from_millis(50));
    };
    serve.close();
    exits_within(&mut serve.child, Duration::from_secs(30));
    assert!(gone_within(pid, Duration::from_secs(30)));

    // `tether tools` (and call, doctor) never start a server.
    let ws = dir.path().join("ws");
    let child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["doctor", "--root"])
        .arg(&ws)
        .env("TETHER_CONFIG_DIR", dir.path().join("cfg"))
        .env("TETHER_STATE_DIR", dir.path().join("state"))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let parent = child.id();
    let mut child = child;
    let mut saw = false;
    while child.try_wait().unwrap().is_none() {
        saw |= !children_named(parent, "rust-analyzer").is_empty();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!saw, "doctor started a language server");
}
