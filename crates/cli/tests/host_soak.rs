//! The warm host under load: 1,000 mixed calls (`TETHER_SOAK_CALLS`) from 4 MCP runs on one
//! host with a real pyright, which is killed every 100 calls. Every call must be answered,
//! no write that brought an error may be reported clean, nothing may outlive the host, and the
//! host's own memory must stay bounded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::Mcp;
use serde_json::{Value, json};

const RUNS: usize = 4;
const KILL_EVERY: usize = 100;

fn tether(ws: &Path, dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tether"));
    c.args(args)
        .current_dir(ws)
        .env("TETHER_CONFIG_DIR", dir.join("cfg"))
        .env("TETHER_STATE_DIR", dir.join("state"))
        .env("XDG_RUNTIME_DIR", dir.join("run"))
        .env_remove("TETHER_HOST");
    c
}

/// (pid, parent pid, RSS in KiB, command line) of every process.
fn processes() -> Vec<(u32, u32, u64, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let Some(after) = stat.rsplit(')').next() else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        let ppid = fields.get(1).and_then(|p| p.parse().ok()).unwrap_or(0);
        let rss = tether_proc::resident_kib(pid).unwrap_or(0);
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        out.push((
            pid,
            ppid,
            rss,
            String::from_utf8_lossy(&cmd).replace('\0', " "),
        ));
    }
    out
}

/// Every descendant of `pid`.
fn descendants(pid: u32) -> Vec<(u32, String)> {
    let all = processes();
    let mut found = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for (child, ppid, _, cmd) in &all {
            if *ppid == p {
                found.push((*child, cmd.clone()));
                todo.push(*child);
            }
        }
    }
    found
}

fn rss_mib(pid: u32) -> u64 {
    processes()
        .into_iter()
        .find(|p| p.0 == pid)
        .map_or(0, |p| p.2 / 1024)
}

/// Every text block of a result, and whether it is an error.
fn call(mcp: &mut Mcp, id: u64, tool: &str, args: Value) -> (String, bool) {
    let reply = mcp.request(id, "tools/call", json!({"name": tool, "arguments": args}));
    let result = &reply["result"];
    assert!(result.is_object(), "call {id} got no result: {reply}");
    let texts: Vec<String> = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str().map(str::to_string))
        .collect();
    (texts.join("\n"), result["isError"] == true)
}

#[test]
fn a_thousand_mixed_calls_while_the_server_is_killed() {
    let total: usize = std::env::var("TETHER_SOAK_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    for d in ["ws", "cfg", "state", "run"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    std::fs::write(ws.join("pyproject.toml"), "[project]\nname = \"soak\"\n").unwrap();
    for i in 0..RUNS {
        std::fs::write(
            ws.join(format!("f{i}.py")),
            "def f(x: int) -> int:\n    return x\n",
        )
        .unwrap();
    }
    let started = tether(
        &ws,
        dir.path(),
        &["call", "--host", "read", r#"{"path": "f0.py"}"#],
    )
    .output()
    .unwrap();
    assert!(started.status.success(), "{started:?}");
    let status = tether(&ws, dir.path(), &["host", "--status"])
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    let host = status["pid"].as_u64().unwrap() as u32;

    let done = Arc::new(AtomicUsize::new(0));
    let kills = Arc::new(AtomicUsize::new(0));
    // Writes that brought an error: reported with it, and reported as not (yet) checked.
    let caught = Arc::new(AtomicUsize::new(0));
    let unchecked = Arc::new(AtomicUsize::new(0));
    let servers_seen = Arc::new(std::sync::Mutex::new(Vec::<u32>::new()));
    let mut warm_rss = 0;
    let start = Instant::now();
    std::thread::scope(|scope| {
        let mut workers = Vec::new();
        for run in 0..RUNS {
            let (done, kills, seen) = (done.clone(), kills.clone(), servers_seen.clone());
            let (caught, unchecked) = (caught.clone(), unchecked.clone());
            let (ws, dirp): (PathBuf, PathBuf) = (ws.clone(), dir.path().to_path_buf());
            workers.push(scope.spawn(move || {
                let mut mcp = Mcp::start(tether(&ws, &dirp, &["serve", "--host"]));
                let file = format!("f{run}.py");
                let mut id = 10;
                let mut bad = false;
                loop {
                    let n = done.fetch_add(1, Ordering::SeqCst);
                    if n >= total {
                        break;
                    }
                    if n > 0 && n % KILL_EVERY == 0 {
                        let servers: Vec<u32> = descendants(host)
                            .into_iter()
                            .filter(|(_, cmd)| cmd.contains("pyright") || cmd.contains("node"))
                            .map(|(p, _)| p)
                            .collect();
                        lock_push(&seen, &servers);
                        for p in &servers {
                            let _ = Command::new("kill").args(["-9", &p.to_string()]).status();
                        }
                        kills.fetch_add(1, Ordering::SeqCst);
                    }
                    id += 1;
                    match n % 10 {
                        0..=3 => {
                            let (text, err) = call(&mut mcp, id, "read", json!({"path": file}));
                            assert!(!err && text.contains("def f"), "read {n}: {text}");
                        }
                        4..=6 => {
                            let args =
                                json!({"action": "hover", "file": file, "line": 1, "symbol": "f"});
                            let (text, err) = call(&mut mcp, id, "lsp", args);
                            // Right after a kill the answer may be the crash; it is still an answer.
                            assert!(err || text.contains("def f"), "hover {n}: {text}");
                        }
                        _ => {
                            bad = !bad;
                            let body = if bad {
                                format!("def f(x: int) -> int:\n    return x\n\ny: str = f({n})\n")
                            } else {
                                "def f(x: int) -> int:\n    return x\n".to_string()
                            };
                            let (text, err) = call(
                                &mut mcp,
                                id,
                                "write",
                                json!({"path": file, "content": body}),
                            );
                            assert!(!err, "write {n}: {text}");
                            if bad {
                                let line = text
                                    .lines()
                                    .find(|l| l.trim_start().starts_with(&format!("{file}:")))
                                    .unwrap_or("");
                                assert!(
                                    !line.contains("clean") && !text.contains("nothing to report"),
                                    "a write that brought an error was reported clean ({n}): {text}"
                                );
                                match text.contains("new problem") {
                                    true => caught.fetch_add(1, Ordering::SeqCst),
                                    false => unchecked.fetch_add(1, Ordering::SeqCst),
                                };
                            }
                        }
                    }
                }
                mcp.close();
                common::exits_within(&mut mcp.child, Duration::from_secs(30));
            }));
        }
        // The host's own memory once warm, then watched until the runs end.
        std::thread::sleep(Duration::from_secs(3));
        warm_rss = rss_mib(host);
        for w in workers {
            w.join().unwrap();
        }
    });
    let end_rss = rss_mib(host);
    let left = descendants(host);
    eprintln!(
        "soak: {total} calls from {RUNS} runs in {:.1} s, {} kills, host RSS {warm_rss} MiB warm, \
         {end_rss} MiB at the end, {} processes under the host; writes bringing an error: {} \
         reported with it, {} said to be unchecked or pending",
        start.elapsed().as_secs_f64(),
        kills.load(Ordering::SeqCst),
        left.len(),
        caught.load(Ordering::SeqCst),
        unchecked.load(Ordering::SeqCst)
    );
    assert!(
        caught.load(Ordering::SeqCst) > 0,
        "no write was ever checked"
    );
    assert!(kills.load(Ordering::SeqCst) >= (total / KILL_EVERY).saturating_sub(1));
    assert!(
        end_rss <= warm_rss * 2 + 32,
        "host RSS grew from {warm_rss} to {end_rss} MiB"
    );
    let servers_now = left
        .iter()
        .filter(|(_, c)| c.contains("pyright") || c.contains("node"))
        .count();
    assert!(
        servers_now <= 3,
        "servers piled up under the host: {left:?}"
    );
    let stopped = tether(&ws, dir.path(), &["host", "--stop"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&stopped.stdout).contains("stopped"));
    let all: Vec<u32> = servers_seen
        .lock()
        .unwrap()
        .iter()
        .copied()
        .chain(left.iter().map(|(p, _)| *p))
        .collect();
    // Each has until a deadline to finish dying: one still going then was left running.
    let end = Instant::now() + Duration::from_secs(15);
    let alive = loop {
        let alive: Vec<_> = processes()
            .into_iter()
            .filter(|p| all.contains(&p.0) || p.0 == host)
            .collect();
        if alive.is_empty() || Instant::now() >= end {
            break alive;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        alive.is_empty(),
        "left running after the host stopped: {alive:?}"
    );
}

fn lock_push(seen: &std::sync::Mutex<Vec<u32>>, pids: &[u32]) {
    seen.lock().unwrap().extend_from_slice(pids);
}
