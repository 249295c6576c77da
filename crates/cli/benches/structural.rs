//! Structural search against the ast-grep CLI on the same corpus, side by side in one run:
//! (1) one cold search as whole processes, (2) ten patterns in one `tether serve` run with a
//! warm tree cache against ten CLI calls. Match counts are compared first, so a fast wrong
//! answer cannot pass for a win.
//!
//! `scripts/bench-structural` prepares the corpus and the CLI, then runs this.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{McpPipe, report};
use serde_json::json;

const PATTERNS: &[&str] = &[
    "print($A)",
    "isinstance($A, $B)",
    "raise $E($$$ARGS)",
    "$X.append($Y)",
    "len($X) == 0",
    "self.$A = $A",
    "return None",
    "assert $X",
    "open($F)",
    "import $M",
];
const COLD_ROUNDS: usize = 7;
const WARM_ROUNDS: usize = 5;

fn env_path(name: &str) -> PathBuf {
    match std::env::var_os(name) {
        Some(p) => PathBuf::from(p),
        None => {
            eprintln!(
                "{name} is not set: run scripts/bench-structural, which prepares the corpus and the ast-grep CLI"
            );
            std::process::exit(2);
        }
    }
}

fn cli_count(sg: &Path, corpus: &Path, pattern: &str) -> usize {
    let out = Command::new(sg)
        .args(["run", "-p", pattern, "-l", "python", "--json=stream"])
        .arg(corpus)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ast-grep failed on {pattern:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n = String::from_utf8_lossy(&out.stdout).lines().count();
    assert!(
        n > 0,
        "ast-grep found nothing for {pattern:?}: the corpus is wrong"
    );
    n
}

fn tether_count(reply: &str) -> usize {
    let first = reply.lines().next().unwrap_or("");
    first
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn args(pattern: &str) -> serde_json::Value {
    json!({"pattern": pattern, "language": "python"})
}

/// Times a whole process, which must succeed: a tool error is not a fast result.
/// Arguments that print every match, as the CLI does, so both sides do the same work.
fn all_results(pattern: &str) -> String {
    let mut a = args(pattern);
    a["max_results"] = json!(usize::MAX >> 1);
    a.to_string()
}

fn time_process(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let elapsed = start.elapsed();
    assert!(status.success(), "{cmd:?} failed: {status}");
    elapsed
}

fn main() {
    let corpus = env_path("TETHER_BENCH_CORPUS");
    let sg = env_path("TETHER_BENCH_ASTGREP");
    let cfg = tempfile::tempdir().unwrap();
    let tether = env!("CARGO_BIN_EXE_tether");

    println!("corpus: {}", corpus.display());
    let mut pipe = McpPipe::start(&corpus, cfg.path());
    println!("{:<22} {:>8} {:>8}", "pattern", "ast-grep", "tether");
    let mut mismatches = 0;
    for p in PATTERNS {
        let (a, b) = (
            cli_count(&sg, &corpus, p),
            tether_count(&pipe.call("ast_grep", &args(p))),
        );
        if a != b {
            mismatches += 1;
        }
        println!(
            "{p:<22} {a:>8} {b:>8}{}",
            if a == b { "" } else { "  MISMATCH" }
        );
    }

    println!(
        "\n(1) one cold search as whole processes, pattern {:?}, {COLD_ROUNDS} rounds",
        PATTERNS[0]
    );
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..COLD_ROUNDS {
        ours.push(time_process(
            Command::new(tether)
                .args(["call", "ast_grep", &all_results(PATTERNS[0]), "--root"])
                .arg(&corpus)
                .env("TETHER_CONFIG_DIR", cfg.path()),
        ));
        theirs.push(time_process(
            Command::new(&sg)
                .args(["run", "-p", PATTERNS[0], "-l", "python"])
                .arg(&corpus),
        ));
    }
    let t = report("tether call ast_grep (cold process)", ours);
    let c = report("ast-grep run (process)", theirs);
    println!(
        "cold ratio: ast-grep / tether = {:.2}x",
        c.as_secs_f64() / t.as_secs_f64()
    );

    println!("\n(2) ten patterns, warm cache in one tether serve run, {WARM_ROUNDS} rounds");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut each: Vec<Vec<Duration>> = vec![Vec::new(); PATTERNS.len()];
    for _ in 0..WARM_ROUNDS {
        let start = Instant::now();
        for (i, p) in PATTERNS.iter().enumerate() {
            let one = Instant::now();
            pipe.call("ast_grep", &args(p));
            each[i].push(one.elapsed());
        }
        ours.push(start.elapsed());
        let start = Instant::now();
        for p in PATTERNS {
            time_process(
                Command::new(&sg)
                    .args(["run", "-p", p, "-l", "python"])
                    .arg(&corpus),
            );
        }
        theirs.push(start.elapsed());
    }
    for (p, samples) in PATTERNS.iter().zip(each) {
        report(&format!("  warm {p}"), samples);
    }
    let rss = pipe.rss_kib();
    pipe.finish();
    let t = report("tether serve: 10 warm ast_grep calls", ours);
    let c = report("ast-grep run: 10 processes", theirs);
    println!(
        "warm ratio: ast-grep / tether = {:.2}x",
        c.as_secs_f64() / t.as_secs_f64()
    );
    println!(
        "tether serve resident memory after the rounds: {} MiB",
        rss / 1024
    );
    if mismatches > 0 {
        println!(
            "\n{mismatches} pattern(s) gave different match counts: the timings above do not count"
        );
        std::process::exit(1);
    }
}
