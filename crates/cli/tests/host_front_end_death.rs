//! A front end that dies takes its work with it: a one-shot `call` or `call --stdin` killed
//! mid-cell leaves no kernel in the host and no attachment counted, so the host can idle out;
//! and a hook session does not wait again for a server known to be stuck starting.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::host_env::{HostEnv, claude_event, gone_within};
use serde_json::json;

/// The python kernels (children running a tether kernel) of `host`.
fn kernels(host: u32) -> Vec<u32> {
    tether_proc::children_named(host, "python3")
        .into_iter()
        .chain(tether_proc::children_named(host, "python"))
        .collect()
}

/// Waits up to `limit` for `cond`, looking every 100 ms.
fn within(limit: Duration, cond: impl Fn() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    cond()
}

#[test]
fn front_ends_killed_mid_cell_leave_no_kernel_and_no_attachment() {
    let env = HostEnv::new();
    // Start the host first, so its pid is known.
    let out = env.run(&["call", "--host", "read", r#"{"path": "a.py"}"#], "");
    assert!(out.status.success(), "{out:?}");
    let host = env.host_pid();
    let cell = r#"{"code": "import time; time.sleep(600)", "description": "sleep until the front end dies"}"#;
    let stdin_cell = format!("{{\"tool\": \"eval\", \"args\": {cell}}}\n");
    let mut killed = Vec::new();
    for n in 0..4 {
        let mut command = match n % 2 {
            0 => env.command(&["call", "--host", "eval", cell]),
            _ => env.command(&["call", "--host", "--stdin"]),
        };
        let mut front = command
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut input = front.stdin.take().unwrap();
        if n % 2 == 1 {
            use std::io::Write;
            input.write_all(stdin_cell.as_bytes()).unwrap();
        }
        let before = kernels(host);
        assert!(
            within(Duration::from_secs(30), || kernels(host)
                .iter()
                .any(|k| !before.contains(k))),
            "no kernel started for front end {n}"
        );
        front.kill().unwrap();
        front.wait().unwrap();
        drop(input);
        killed.push(front.id());
    }
    assert!(
        within(Duration::from_secs(20), || kernels(host).is_empty()),
        "kernels left after their front ends died: {:?}",
        kernels(host)
    );
    assert!(
        within(Duration::from_secs(10), || env.status()["attached"] == 0),
        "the host still counts dead front ends: {}",
        env.status()
    );
}

#[test]
fn a_hook_session_waits_once_for_a_server_stuck_starting() {
    let env = HostEnv::new();
    let fake = std::path::Path::new(env!("CARGO_BIN_EXE_tether"))
        .with_file_name("fake-lsp")
        .display()
        .to_string();
    std::fs::write(
        env.cfg.join("tether.toml"),
        format!(
            "[lsp.servers.stuck]\ncommand = [{fake:?}, \"hang-init\"]\n\
             root_markers = [\"pyproject.toml\"]\n[lsp.languages.python]\nservers = [\"stuck\"]\n"
        ),
    )
    .unwrap();
    let file = env.ws.join("a.py");
    let mut took = Vec::new();
    for id in ["t1", "t2", "t3"] {
        let input = json!({"file_path": file, "old_string": "x", "new_string": "x"});
        let pre = claude_event(&env, "PreToolUse", "Edit", id, input.clone());
        let started = Instant::now();
        let out = env.run(&["hook", "claude"], &pre);
        assert!(out.status.success(), "{out:?}");
        took.push(started.elapsed());
        let post = claude_event(&env, "PostToolUse", "Edit", id, input);
        assert!(env.run(&["hook", "claude"], &post).status.success());
    }
    // The first event waits out the warm-up (10 s); the later ones do not wait for it again.
    assert!(took[0] >= Duration::from_secs(9), "{took:?}");
    assert!(
        took[1] < Duration::from_secs(5) && took[2] < Duration::from_secs(5),
        "a later event waited again for the stuck server: {took:?}"
    );
    let host = env.host_pid();
    drop(env);
    assert!(
        gone_within(host, Duration::from_secs(15)),
        "the host stayed"
    );
}
