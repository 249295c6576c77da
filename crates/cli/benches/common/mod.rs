//! A minimal raw JSON-RPC client for `tether serve`, so a heavy client's own cost does not
//! hide ours, and the timing helpers the benchmarks share.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

/// One `tether serve` process and its pipes.
pub struct McpPipe {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl McpPipe {
    /// Starts this build's `tether serve --root ROOT` and completes the MCP handshake.
    pub fn start(root: &Path, config_dir: &Path) -> Self {
        Self::start_binary(Path::new(env!("CARGO_BIN_EXE_tether")), root, config_dir)
    }

    /// Like [`McpPipe::start`] with another tether binary (an older build, for before/after).
    pub fn start_binary(binary: &Path, root: &Path, config_dir: &Path) -> Self {
        let mut child = Command::new(binary)
            .args(["serve", "--root"])
            .arg(root)
            .env("TETHER_CONFIG_DIR", config_dir)
            .env("TETHER_STATE_DIR", config_dir.join("state"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut pipe = McpPipe {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        pipe.request(
            "initialize",
            r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}"#,
        );
        pipe.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        pipe
    }

    fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns the raw reply line.
    pub fn request(&mut self, method: &str, params: &str) -> String {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        ));
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(line.contains("\"result\""), "unexpected reply: {line}");
        line
    }

    /// Calls a tool; panics on a tool error, returns the reply's first text.
    pub fn call(&mut self, tool: &str, args: &serde_json::Value) -> String {
        let params = serde_json::json!({"name": tool, "arguments": args}).to_string();
        let line = self.request("tools/call", &params);
        let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_ne!(reply["result"]["isError"], true, "tool error: {line}");
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    /// The server's resident memory in KiB, from /proc.
    pub fn rss_kib(&self) -> u64 {
        tether_proc::resident_kib(self.child.id()).unwrap_or(0)
    }

    /// Closes stdin and waits for the server to exit.
    pub fn finish(mut self) {
        drop(self.stdin);
        self.child.wait().unwrap();
    }
}

/// The value at quantile `p` of sorted samples.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

/// Prints min / median / p99 / max of the samples and returns the median.
pub fn report(name: &str, mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let median = percentile(&samples, 0.5);
    println!(
        "{name:<40} n={:<5} min {:>9.3} ms  median {:>9.3} ms  p99 {:>9.3} ms  max {:>9.3} ms",
        samples.len(),
        ms(samples[0]),
        ms(median),
        ms(percentile(&samples, 0.99)),
        ms(samples[samples.len() - 1]),
    );
    median
}
