//! What the warm host leaves behind: a one-shot call of a tool that starts no server starts
//! no host, and hosts that ended leave no lock or log files in the runtime folder.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, SystemTime};

use common::host_env::{HostEnv, text};

/// The host files (sockets, locks, logs) in the runtime folder.
fn host_files(env: &HostEnv) -> Vec<String> {
    let dir = env.runtime.join("tether");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("host-"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_structural_search_starts_no_host_unless_asked() {
    let env = HostEnv::new();
    let search = r#"{"pattern": "def $F($$$P): $$$B", "language": "python", "path": "."}"#;
    let out = env.run_with(&["call", "ast_grep", search], "", &[("TETHER_HOST", "on")]);
    assert!(text(&out).contains("a.py"), "{out:?}");
    assert!(
        text(&env.run(&["host", "--status"], "")).contains("no tether host runs"),
        "a search started a host"
    );
    // With a host running, the search uses it; `--host` starts one all the same.
    let out = env.run(&["call", "--host", "ast_grep", search], "");
    assert!(text(&out).contains("a.py"), "{out:?}");
    assert!(env.status()["pid"].is_u64());
}

#[test]
fn hosts_that_ended_leave_no_files_behind() {
    let env = HostEnv::new();
    // What a host killed long ago left: a lock no one holds and a day-old log.
    let dir = env.runtime.join("tether");
    std::fs::create_dir_all(&dir).unwrap();
    let stale = dir.join("host-0000000000000000-1111111111111111");
    for ext in ["lock", "log"] {
        let file = std::fs::File::create(stale.with_extension(ext)).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(3 * 24 * 3600))
            .unwrap();
    }
    let out = env.run(&["call", "--host", "read", r#"{"path": "a.py"}"#], "");
    assert!(text(&out).contains("def f"), "{out:?}");
    let running = host_files(&env);
    assert!(
        !running
            .iter()
            .any(|n| n.starts_with("host-0000000000000000")),
        "the stale files stayed: {running:?}"
    );
    let stopped = env.run(&["host", "--stop"], "");
    assert!(text(&stopped).contains("stopped"), "{stopped:?}");
    assert_eq!(host_files(&env), Vec::<String>::new());
}
