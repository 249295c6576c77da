//! No language server outlives `tether serve`: not when the client closes its input, and not
//! when tether itself is SIGKILLed. Checked in the process table, with the real rust-analyzer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether_proc::{gone_within, is_running};

const MANIFEST: &str = "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

struct Serve {
    child: Child,
    input: Option<std::process::ChildStdin>,
    output: BufReader<std::process::ChildStdout>,
}

impl Serve {
    fn start(dir: &Path) -> Serve {
        let ws = dir.join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join("Cargo.toml"), MANIFEST).unwrap();
        std::fs::write(ws.join("src/lib.rs"), "pub fn one() -> u32 {\n    1\n}\n").unwrap();
        let cfg = dir.join("cfg");
        std::fs::create_dir_all(&cfg).unwrap();
        let budgets = "[lsp]\nrequest_timeout_s = 120\ninit_timeout_s = 120\n";
        std::fs::write(cfg.join("tether.toml"), budgets).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
            .args(["serve", "--root"])
            .arg(&ws)
            .env("TETHER_CONFIG_DIR", &cfg)
            .env("TETHER_STATE_DIR", dir.join("state"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut serve = Serve {
            child,
            input,
            output,
        };
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "lsp-lifecycle", "version": "1"}});
        serve.request(1, "initialize", init);
        serve.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        serve
    }
    fn send(&mut self, message: Value) {
        let input = self.input.as_mut().unwrap();
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
    }
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "serve closed"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }
    /// Asks a hover, which starts rust-analyzer, and returns the server's pid.
    fn start_server(&mut self) -> u32 {
        let args = json!({"action": "hover", "file": "src/lib.rs", "line": 1, "symbol": "one"});
        let reply = self.request(2, "tools/call", json!({"name": "lsp", "arguments": args}));
        let text = reply["result"]["content"][0]["text"].as_str().unwrap_or("");
        assert!(text.contains("pub fn one() -> u32"), "{reply}");
        children_named(self.child.id(), "rust-analyzer")
            .first()
            .copied()
            .expect("no rust-analyzer under tether")
    }
}

/// Pids of `parent`'s direct children whose command name is `name`.
fn children_named(parent: u32, name: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // "pid (comm) state ppid ...": the name may hold anything, so split at the parens.
            let comm = &stat[stat.find('(')? + 1..stat.rfind(')')?];
            let after = &stat[stat.rfind(')')? + 1..];
            let ppid: u32 = after.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == parent && comm == name).then_some(pid)
        })
        .collect()
}

fn exits_within(child: &mut Child, limit: Duration) {
    let end = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < end, "serve did not exit within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_server_ends_when_the_client_closes_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let mut serve = Serve::start(dir.path());
    let pid = serve.start_server();
    assert!(is_running(pid));
    drop(serve.input.take());
    exits_within(&mut serve.child, Duration::from_secs(30));
    assert!(
        gone_within(pid, Duration::from_secs(5)),
        "rust-analyzer outlived serve"
    );
}

#[test]
fn the_server_ends_when_tether_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let mut serve = Serve::start(dir.path());
    let pid = serve.start_server();
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
    let mut serve = Serve::start(dir.path());
    // No tool call yet: the server of the language present starts on its own.
    let end = Instant::now() + Duration::from_secs(30);
    let pid = loop {
        if let Some(pid) = children_named(serve.child.id(), "rust-analyzer").first() {
            break *pid;
        }
        assert!(Instant::now() < end, "serve did not warm rust-analyzer");
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(serve.input.take());
    exits_within(&mut serve.child, Duration::from_secs(30));
    assert!(gone_within(pid, Duration::from_secs(5)));

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
