//! MCP round trip of `read` on a small file, driven by a minimal raw JSON-RPC client over the
//! pipe, next to `cat` of the same file in a loop. Prints medians, p99s and the ratio.
//!
//! `cargo bench -p tether-cli --bench mcp_read [-- CALLS]`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

fn report(name: &str, mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    let median = percentile(&samples, 0.5);
    println!(
        "{name:<28} n={:<5} median {:>8.1} µs   p99 {:>8.1} µs   max {:>8.1} µs",
        samples.len(),
        median.as_secs_f64() * 1e6,
        percentile(&samples, 0.99).as_secs_f64() * 1e6,
        samples[samples.len() - 1].as_secs_f64() * 1e6,
    );
    median
}

fn main() {
    let calls: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1000);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("small.rs");
    let text: String = (1..=40)
        .map(|i| format!("fn f{i}() -> u32 {{ {i} }}\n"))
        .collect();
    std::fs::write(&file, text).unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["serve", "--root"])
        .arg(dir.path())
        .env("TETHER_CONFIG_DIR", dir.path().join("cfg"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut send = |msg: String, expect_reply: bool| {
        stdin.write_all(msg.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        if expect_reply {
            line.clear();
            stdout.read_line(&mut line).unwrap();
            assert!(line.contains("\"result\""), "unexpected reply: {line}");
            assert!(!line.contains("\"isError\":true"), "tool error: {line}");
        }
    };
    send(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#.into(),
        true,
    );
    send(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
        false,
    );
    for id in 1..=20 {
        send(read_call(id), true); // warm up
    }
    let mut mcp = Vec::with_capacity(calls);
    for id in 0..calls {
        let start = Instant::now();
        send(read_call(1000 + id), true);
        mcp.push(start.elapsed());
    }
    drop(stdin);
    child.wait().unwrap();

    let mut cat = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = Instant::now();
        let out = Command::new("cat").arg(&file).output().unwrap();
        assert!(out.status.success());
        cat.push(start.elapsed());
    }
    let m = report("tether MCP read round trip", mcp);
    let c = report("cat (process per read)", cat);
    println!(
        "ratio: MCP read median / cat median = {:.2}",
        m.as_secs_f64() / c.as_secs_f64()
    );
}

fn read_call(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"read","arguments":{{"path":"small.rs"}}}}}}"#
    )
}
