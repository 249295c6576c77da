//! MCP round trip of `read` on a small file, driven by a minimal raw JSON-RPC client over the
//! pipe, next to `cat` of the same file in a loop. Prints medians, p99s and the ratio.
//!
//! `cargo bench -p tether-cli --bench mcp_read [-- CALLS]`

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;
use std::time::Instant;

use common::{McpPipe, report};
use serde_json::json;

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

    let mut pipe = McpPipe::start(dir.path(), &dir.path().join("cfg"));
    let args = json!({"path": "small.rs"});
    for _ in 0..20 {
        pipe.call("read", &args); // warm up
    }
    let mut mcp = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = Instant::now();
        let out = pipe.call("read", &args);
        mcp.push(start.elapsed());
        assert!(out.contains("fn f40"));
    }
    pipe.finish();

    let mut cat = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = Instant::now();
        let out = Command::new("cat").arg(&file).output().unwrap();
        assert!(out.status.success());
        cat.push(start.elapsed());
    }
    let m = report("tether MCP read round trip", mcp);
    let c = report("cat (a process per read)", cat);
    println!(
        "ratio: MCP read median / cat median = {:.2}",
        m.as_secs_f64() / c.as_secs_f64()
    );
}
