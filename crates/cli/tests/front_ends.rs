//! The front ends through a host command line (`examples/host_cli.rs`) that adds a capability
//! with a child to tether's own: each way a front end ends its run takes the run's long-lived
//! children with it (the MCP client closing stdin, `call` and `call --stdin` exiting, all
//! politely through `Run::shutdown`, and tether being SIGKILLed, through the child's death
//! signal), checked in the process table; a client's `notifications/cancelled` and the end of
//! its input reach a running call; `--conversation` reaches the calls.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
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

/// Waits for `child` to exit, failing the test after `limit`.
fn exits_within(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let end = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < end,
            "the host did not exit within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A line-by-line MCP client over the host's stdio.
struct Mcp {
    child: Child,
    input: Option<std::process::ChildStdin>,
    output: BufReader<std::process::ChildStdout>,
}

impl Mcp {
    fn start(env: &Env) -> Mcp {
        Mcp::start_with(env, &[])
    }
    fn start_with(env: &Env, extra: &[&str]) -> Mcp {
        let args: Vec<&str> = ["serve"].iter().chain(extra).copied().collect();
        let mut child = env.command(&args).spawn().unwrap();
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp {
            child,
            input,
            output,
        };
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "shutdown-test", "version": "1"}});
        mcp.request(1, "initialize", init);
        mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }
    fn send(&mut self, message: Value) {
        let input = self.input.as_mut().unwrap();
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
    }
    /// Sends a request and returns its response, skipping notifications.
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.read_until(|m| m["id"] == json!(id))
    }
    /// Reads messages until one satisfies `wanted`, and returns it.
    fn read_until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let mut line = String::new();
            let read = self.output.read_line(&mut line).unwrap();
            assert!(read > 0, "serve closed");
            let message: Value = serde_json::from_str(&line).unwrap();
            if wanted(&message) {
                return message;
            }
        }
    }
    /// Starts a 10 s `wait` as request `id` and returns once its first progress arrived.
    fn start_long_wait(&mut self, id: u64) {
        let params = json!({"name": "wait", "arguments": {"steps": 50},
                            "_meta": {"progressToken": "long"}});
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
        self.read_until(|m| {
            m["method"] == "notifications/progress" && m["params"]["progressToken"] == "long"
        });
    }
    /// Starts the capability's child and returns its pid.
    fn start_sleeper(&mut self) -> u32 {
        let params = json!({"name": "start_sleeper", "arguments": {}});
        let response = self.request(2, "tools/call", params);
        let text = response["result"]["content"][0]["text"].as_str().unwrap();
        text.parse().unwrap()
    }
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
    let mut mcp = Mcp::start(&env);
    let pid = mcp.start_sleeper();
    assert!(is_running(pid));
    drop(mcp.input.take());
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
    let mut mcp = Mcp::start(&env);
    let pid = mcp.start_sleeper();
    assert!(is_running(pid));
    mcp.child.kill().unwrap();
    mcp.child.wait().unwrap();
    assert!(
        gone_within(pid, Duration::from_secs(5)),
        "the child outlived a SIGKILL of serve"
    );
}

#[test]
fn a_clients_cancellation_reaches_the_running_call() {
    let env = Env::new();
    let mut mcp = Mcp::start(&env);
    mcp.start_long_wait(3);
    let cancel = json!({"requestId": 3, "reason": "the user moved on"});
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}));
    let mark = env.mark_within("wait", Duration::from_secs(5));
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
    let mut mcp = Mcp::start(&env);
    mcp.start_long_wait(3);
    drop(mcp.input.take());
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
    let mut mcp = Mcp::start_with(&env, &["--conversation", "c-42"]);
    let params = json!({"name": "conversation", "arguments": {}});
    let reply = mcp.request(2, "tools/call", params);
    assert_eq!(reply["result"]["content"][0]["text"], "conversation: c-42");
    let env = Env::new();
    let mut mcp = Mcp::start(&env);
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
