//! The warm host under many sessions and hostile front ends: hook sessions are bounded (the
//! oldest ended first, and told so), a host out of descriptors refuses one front end with a
//! reason and neither spins nor floods its log, and no line from a front end grows it without
//! bound.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use common::host_env::{HostEnv, claude_event, context_of, text};
use serde_json::json;

/// Starts the workspace's host with at most `limit` descriptors (soft and hard, so it cannot
/// raise them), through a first call.
fn host_with_descriptors(env: &HostEnv, limit: u32) -> u32 {
    host_with_limits(env, limit, limit)
}

/// The same with a soft limit below the hard one.
fn host_with_limits(env: &HostEnv, soft: u32, hard: u32) -> u32 {
    let like_the_front_ends = env.command(&[]);
    // `prlimit`, not a shell's `ulimit`: a shell drops variables whose names it cannot hold
    // (cargo's `CARGO_BIN_EXE_tether-relay`), and the host would be keyed apart.
    let out = std::process::Command::new("prlimit")
        .arg(format!("--nofile={soft}:{hard}"))
        .arg(&env.binary)
        .args(["call", "--host", "read", r#"{"path": "a.py"}"#])
        .envs(
            like_the_front_ends
                .get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
        )
        .env_remove("TETHER_HOST")
        .current_dir(&env.ws)
        .output()
        .unwrap();
    assert!(text(&out).contains("def f"), "{out:?}");
    env.host_pid()
}

/// Descriptors `pid` has open.
fn descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// CPU time (user + system) `pid` has used, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = stat.rsplit(')').next().unwrap();
    let fields: Vec<&str> = after.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn rss_kib(pid: u32) -> u64 {
    tether_proc::resident_kib(pid).unwrap()
}

#[test]
fn hundreds_of_hook_sessions_stay_within_the_hosts_descriptors() {
    let env = HostEnv::new();
    let host = host_with_descriptors(&env, 256);
    let file = env.ws.join("a.py");
    let input = json!({"file_path": file, "old_string": "x", "new_string": "x"});
    let event = |session: usize| {
        let mut e: serde_json::Value = serde_json::from_str(&claude_event(
            &env,
            "PreToolUse",
            "Edit",
            "t",
            input.clone(),
        ))
        .unwrap();
        e["session_id"] = json!(format!("session-{session}"));
        e.to_string()
    };
    let mut most = 0;
    for session in 0..300 {
        let out = env.run(&["hook", "claude"], &event(session));
        assert!(out.status.success(), "session {session}: {out:?}");
        most = most.max(descriptors(host));
    }
    let status = env.status();
    assert!(
        status["hook_sessions"].as_u64().is_some_and(|n| n <= 64),
        "{status}"
    );
    assert!(most < 256, "the host reached its descriptor limit: {most}");
    // The host still serves, and the first session, ended for room, is told so.
    let out = env.run(&["call", "--host", "read", r#"{"path": "a.py"}"#], "");
    assert!(text(&out).contains("def f"), "{out:?}");
    let said = context_of(&env.run(&["hook", "claude"], &event(0)));
    let context = said["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("");
    assert!(context.contains("ended to make room"), "{said}");
}

#[test]
fn a_host_out_of_descriptors_refuses_with_a_reason_and_does_not_spin() {
    let env = HostEnv::new();
    let host = host_with_descriptors(&env, 64);
    let socket = env.status()["socket"].as_str().unwrap().to_string();
    // Connections that never say hello hold the host's descriptors until they time out.
    let mut held = Vec::new();
    for _ in 0..120 {
        if let Ok(s) = UnixStream::connect(&socket) {
            held.push(s);
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let cpu_before = cpu_ticks(host);
    std::thread::sleep(Duration::from_secs(2));
    let spent = cpu_ticks(host) - cpu_before;
    // 100 ticks a second: a spinning accept loop would use about 200 here.
    assert!(spent < 50, "the host spun: {spent} ticks in 2 s");
    let log =
        std::fs::read_to_string(env.status()["log"].as_str().unwrap_or("")).unwrap_or_default();
    assert!(log.len() < 100_000, "the log grew to {} bytes", log.len());
    // A front end now is refused with the reason, or served once the idle ones are dropped:
    // never left hanging.
    let out = env.run(&["call", "--host", "read", r#"{"path": "a.py"}"#], "");
    let said = format!("{}{}", text(&out), String::from_utf8_lossy(&out.stderr));
    assert!(
        said.contains("def f") || said.contains("no file descriptor left"),
        "{said}"
    );
    drop(held);
    assert!(common::host_env::alive(host), "the host died");
}

#[test]
fn an_overlong_hello_is_refused_and_does_not_grow_the_host() {
    let env = HostEnv::new();
    let out = env.run(&["call", "--host", "read", r#"{"path": "a.py"}"#], "");
    assert!(text(&out).contains("def f"), "{out:?}");
    let host = env.host_pid();
    let socket = env.status()["socket"].as_str().unwrap().to_string();
    let before = rss_kib(host);
    let mut stream = UnixStream::connect(&socket).unwrap();
    let chunk = vec![b'a'; 1 << 20];
    let started = Instant::now();
    for _ in 0..256 {
        if stream.write_all(&chunk).is_err() || started.elapsed() > Duration::from_secs(30) {
            break;
        }
    }
    let grown = rss_kib(host).saturating_sub(before);
    assert!(
        grown < 64 << 10,
        "the host grew by {grown} KiB for one line"
    );
    let out = env.run(&["call", "--host", "read", r#"{"path": "a.py"}"#], "");
    assert!(text(&out).contains("def f"), "{out:?}");
}

#[test]
fn an_overlong_call_stdin_line_is_refused_and_does_not_grow_the_host() {
    let env = HostEnv::new();
    let out = env.run(&["call", "--host", "read", r#"{"path": "a.py"}"#], "");
    assert!(text(&out).contains("def f"), "{out:?}");
    let host = env.host_pid();
    let before = rss_kib(host);
    let line = format!(
        "{{\"tool\": \"read\", \"args\": {{\"path\": \"{}\"}}}}\n",
        "a".repeat(200 << 20)
    );
    let out = env.run(&["call", "--host", "--stdin"], &line);
    let said = text(&out);
    assert!(
        said.contains("longer than 17 MiB"),
        "{}",
        &said[..said.len().min(500)]
    );
    let grown = rss_kib(host).saturating_sub(before);
    assert!(
        grown < 64 << 10,
        "the host grew by {grown} KiB for one line"
    );
}

#[test]
fn the_host_raises_its_soft_descriptor_limit_to_the_hard_one() {
    let env = HostEnv::new();
    let host = host_with_limits(&env, 256, 4096);
    let limits = std::fs::read_to_string(format!("/proc/{host}/limits")).unwrap();
    let open_files = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let soft: Vec<&str> = open_files.split_whitespace().skip(3).take(2).collect();
    assert_eq!(soft, ["4096", "4096"], "{open_files}");
}
