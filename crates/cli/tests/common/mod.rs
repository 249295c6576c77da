//! A line-by-line MCP client over a `serve` process's stdio, for the front-end tests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub mod host_env;

/// A started `serve` after the MCP handshake.
pub struct Mcp {
    pub child: Child,
    pub input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl Mcp {
    /// Spawns `cmd` (a `serve` command) with piped stdio and completes the handshake.
    pub fn start(mut cmd: Command) -> Mcp {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp {
            child,
            input,
            output,
        };
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "front-end-test", "version": "1"}});
        mcp.request(1, "initialize", init);
        mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    /// Writes one message.
    pub fn send(&mut self, message: Value) {
        let input = self.input.as_mut().unwrap();
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
    }

    /// Sends a request and returns its response, skipping notifications.
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.read_until(|m| m["id"] == json!(id))
    }

    /// Calls a tool as request `id` and returns the text of its result.
    pub fn call(&mut self, id: u64, tool: &str, arguments: Value) -> String {
        let reply = self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    /// Reads messages until one satisfies `wanted`, and returns it.
    pub fn read_until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let mut line = String::new();
            let read = self.output.read_line(&mut line).unwrap();
            if read == 0 {
                // How it ended (an exit code, or the signal that killed it) says where to look;
                // its stderr is the test's own.
                let end = Instant::now() + Duration::from_secs(5);
                let status = loop {
                    match self.child.try_wait().unwrap() {
                        Some(status) => break format!("{status}"),
                        None if Instant::now() > end => break "still running".into(),
                        None => std::thread::sleep(Duration::from_millis(20)),
                    }
                };
                panic!("serve closed its output ({status})");
            }
            let message: Value = serde_json::from_str(&line).unwrap();
            if wanted(&message) {
                return message;
            }
        }
    }

    /// Closes stdin, as a client that goes away does.
    pub fn close(&mut self) {
        drop(self.input.take());
    }
}

/// Waits for `child` to exit, failing the test after `limit`.
pub fn exits_within(child: &mut Child, limit: Duration) -> ExitStatus {
    let end = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < end,
            "the process did not exit within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
