//! MCP round trip of `read` on a small file, driven by a minimal raw JSON-RPC client over the
//! pipe. Peers in the same run: a long-lived python3 process serving the same reads over a
//! pipe (JSON line in, JSON line out), and `cat` started once per read. With
//! `TETHER_BEFORE_BIN` set to an older tether binary, that build is timed too, for before/after.
//! Prints medians, p99s and the ratios.
//!
//! `cargo bench -p tether-cli --bench mcp_read [-- CALLS]`

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{McpPipe, report};
use serde_json::json;

/// A long-lived peer: reads one JSON request per line, answers with the file's text as JSON.
const PYTHON_READER: &str = r#"
import json, sys
for line in sys.stdin:
    path = json.loads(line)["path"]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    sys.stdout.write(json.dumps({"text": text}) + "\n")
    sys.stdout.flush()
"#;

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

    let this = Path::new(env!("CARGO_BIN_EXE_tether")).to_path_buf();
    let before = std::env::var_os("TETHER_BEFORE_BIN").map(std::path::PathBuf::from);
    let mut binaries = vec![this.as_path()];
    binaries.extend(before.as_deref());
    let mut timed = mcp_reads(&binaries, dir.path(), calls).into_iter();
    let (now, before) = (timed.next().unwrap(), timed.next());
    let python = python_reads(&file, calls);
    let cat = cat_reads(&file, calls);

    let m = report("tether MCP read round trip", now);
    let b = before.map(|b| report("the same, TETHER_BEFORE_BIN", b));
    let p = report("python3 reader, long-lived, same pipe", python);
    let c = report("cat (a process per read)", cat);
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    if let Some(b) = b {
        println!("ratio: now / before = {:.2}", ratio(m, b));
    }
    println!(
        "ratio: MCP read / long-lived python3 reader = {:.2}",
        ratio(m, p)
    );
    println!("ratio: MCP read / cat = {:.2}", ratio(m, c));
}

/// Times `calls` MCP `read` round trips against each binary's serve, after a warm-up. The
/// binaries take turns call by call, so a busy moment of the machine hits them alike.
fn mcp_reads(binaries: &[&Path], root: &Path, calls: usize) -> Vec<Vec<Duration>> {
    let cfg = tempfile::tempdir().unwrap();
    let mut pipes: Vec<McpPipe> = binaries
        .iter()
        .enumerate()
        .map(|(n, bin)| McpPipe::start_binary(bin, root, &cfg.path().join(n.to_string())))
        .collect();
    let args = json!({"path": "small.rs"});
    for pipe in &mut pipes {
        for _ in 0..20 {
            pipe.call("read", &args);
        }
    }
    let mut samples = vec![Vec::with_capacity(calls); pipes.len()];
    for _ in 0..calls {
        for (pipe, times) in pipes.iter_mut().zip(&mut samples) {
            let start = Instant::now();
            let out = pipe.call("read", &args);
            times.push(start.elapsed());
            assert!(out.contains("fn f40"));
        }
    }
    for pipe in pipes {
        pipe.finish();
    }
    samples
}

/// Times `calls` reads of `file` by one python3 process over a pipe, after a warm-up.
fn python_reads(file: &Path, calls: usize) -> Vec<Duration> {
    let mut child = Command::new("python3")
        .args(["-c", PYTHON_READER])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let request = format!("{}\n", json!({"path": file}));
    let mut one = || {
        input.write_all(request.as_bytes()).unwrap();
        input.flush().unwrap();
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        assert!(line.contains("fn f40"));
    };
    for _ in 0..20 {
        one();
    }
    let samples = (0..calls)
        .map(|_| {
            let start = Instant::now();
            one();
            start.elapsed()
        })
        .collect();
    drop(input);
    child.wait().unwrap();
    samples
}

/// Times `calls` runs of `cat file`, a process each.
fn cat_reads(file: &Path, calls: usize) -> Vec<Duration> {
    (0..calls)
        .map(|_| {
            let start = Instant::now();
            let out = Command::new("cat").arg(file).output().unwrap();
            assert!(out.status.success());
            start.elapsed()
        })
        .collect()
}
