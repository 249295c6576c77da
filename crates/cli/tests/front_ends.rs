//! The front ends through a host command line (`examples/host_cli.rs`) that adds a capability
//! with a child to tether's own: each way a front end ends its run takes the run's long-lived
//! children with it (the MCP client closing stdin, `call` and `call --stdin` exiting, all
//! politely through `Run::shutdown`, and tether being SIGKILLed, through the child's death
//! signal), checked in the process table; a client's `notifications/cancelled` and the end of
//! its input reach a running call; `--conversation` reaches the calls.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

mod common;
use common::{Mcp, exits_within};
use tether_proc::{gone_within, is_running};

/// Builds the host command line once per test binary and returns its path.
fn host_cli() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let status = Command::new(env!("CARGO"))
                .args([
                    "build",
                    "--quiet",
                    "--example",
                    "host_cli",
                    "-p",
                    "tether-cli",
                ])
                .status()
                .unwrap();
            assert!(status.success());
            let target = std::env::var("CARGO_TARGET_DIR")
                .unwrap_or_else(|_| format!("{}/../../target", env!("CARGO_MANIFEST_DIR")));
            PathBuf::from(format!("{target}/debug/examples/host_cli"))
        })
        .clone()
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        std::fs::create_dir(dir.path().join("marks")).unwrap();
        Env { dir }
    }
    /// What the host's tools left in `$HOST_MARKS/name`, if anything.
    fn mark(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.path().join("marks").join(name)).ok()
    }
    /// Waits up to `limit` for the mark `name`.
    fn mark_within(&self, name: &str, limit: Duration) -> Option<String> {
        let end = Instant::now() + limit;
        loop {
            let mark = self.mark(name);
            if mark.is_some() || Instant::now() > end {
                return mark;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(host_cli());
        cmd.args(args)
            .arg("--root")
            .arg(self.dir.path().join("ws"))
            .env("TETHER_CONFIG_DIR", self.dir.path().join("cfg"))
            .env("TETHER_STATE_DIR", self.dir.path().join("state"))
            .env("HOST_MARKS", self.dir.path().join("marks"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        cmd
    }
    /// Whether the child was stopped politely (SIGTERM from `Run::shutdown`), not killed.
    fn stopped_politely(&self) -> bool {
        self.mark("child").is_some_and(|m| m.trim() == "polite")
    }
}

/// Starts the host's `serve` (with `extra` arguments) and completes the handshake.
fn serve(env: &Env, extra: &[&str]) -> Mcp {
    let args: Vec<&str> = ["serve"].iter().chain(extra).copied().collect();
    Mcp::start(env.command(&args))
}

/// Starts a 10 s `wait` as request `id` and returns once its first progress arrived.
fn start_long_wait(mcp: &mut Mcp, id: u64) {
    let params = json!({"name": "wait", "arguments": {"steps": 50},
                        "_meta": {"progressToken": "long"}});
    mcp.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
    mcp.read_until(|m| {
        m["method"] == "notifications/progress" && m["params"]["progressToken"] == "long"
    });
}

/// Starts the capability's child and returns its pid.
fn start_sleeper(mcp: &mut Mcp) -> u32 {
    mcp.call(2, "start_sleeper", json!({})).parse().unwrap()
}

/// Runs `host_cli call ...` to the end and returns the pid it printed.
fn call_and_exit(env: &Env, args: &[&str], stdin: &str) -> u32 {
    let mut child = env.command(args).spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    digits.parse().unwrap()
}

#[test]
fn serve_stops_the_child_when_the_client_closes_stdin() {
    let env = Env::new();
    let mut mcp = serve(&env, &[]);
    let pid = start_sleeper(&mut mcp);
    assert!(is_running(pid));
    mcp.close();
    let status = exits_within(&mut mcp.child, Duration::from_secs(15));
    assert!(status.success(), "{status:?}");
    assert!(!is_running(pid), "the child outlived serve");
    assert!(env.stopped_politely(), "serve exited without Run::shutdown");
}

#[test]
fn call_stops_the_child_before_it_exits() {
    let env = Env::new();
    let pid = call_and_exit(&env, &["call", "start_sleeper", "{}"], "");
    assert!(!is_running(pid), "the child outlived `call`");
    assert!(
        env.stopped_politely(),
        "`call` exited without Run::shutdown"
    );
}

#[test]
fn call_stdin_stops_the_child_before_it_exits() {
    let env = Env::new();
    let lines = "{\"tool\": \"start_sleeper\"}\n";
    let pid = call_and_exit(&env, &["call", "--stdin"], lines);
    assert!(!is_running(pid), "the child outlived `call --stdin`");
    assert!(
        env.stopped_politely(),
        "`call --stdin` exited without Run::shutdown"
    );
}

#[test]
fn a_killed_serve_takes_the_child_with_it() {
    let env = Env::new();
    let mut mcp = serve(&env, &[]);
    let pid = start_sleeper(&mut mcp);
    assert!(is_running(pid));
    mcp.child.kill().unwrap();
    mcp.child.wait().unwrap();
    assert!(
        gone_within(pid, Duration::from_secs(30)),
        "the child outlived a SIGKILL of serve"
    );
}

#[test]
fn a_clients_cancellation_reaches_the_running_call() {
    let env = Env::new();
    let mut mcp = serve(&env, &[]);
    start_long_wait(&mut mcp, 3);
    let cancel = json!({"requestId": 3, "reason": "the user moved on"});
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}));
    let mark = env.mark_within("wait", Duration::from_secs(30));
    assert!(
        mark.as_deref()
            .is_some_and(|m| m.starts_with("cancelled at step")),
        "the call never saw the cancellation: {mark:?}"
    );
    // The server carries on.
    let pong = mcp.request(4, "ping", json!({}));
    assert!(pong.get("result").is_some(), "{pong}");
}

#[test]
fn the_end_of_the_clients_input_cancels_a_running_call() {
    let env = Env::new();
    let mut mcp = serve(&env, &[]);
    start_long_wait(&mut mcp, 3);
    mcp.close();
    exits_within(&mut mcp.child, Duration::from_secs(15));
    let mark = env.mark("wait");
    assert!(
        mark.as_deref()
            .is_some_and(|m| m.starts_with("cancelled at step")),
        "the call was not cancelled when the client left: {mark:?}"
    );
}

#[test]
fn serve_hands_its_conversation_to_every_call() {
    let env = Env::new();
    let mut mcp = serve(&env, &["--conversation", "c-42"]);
    let params = json!({"name": "conversation", "arguments": {}});
    let reply = mcp.request(2, "tools/call", params);
    assert_eq!(reply["result"]["content"][0]["text"], "conversation: c-42");
    let env = Env::new();
    let mut mcp = serve(&env, &[]);
    let reply = mcp.request(
        2,
        "tools/call",
        json!({"name": "conversation", "arguments": {}}),
    );
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "conversation: (none)"
    );
}
