//! Debug adapter faults a real adapter will not produce on demand, from `fake-lsp` (test
//! support; it never answers a DAP request): an adapter configured in `[debug.adapters]` that
//! hangs on initialize ends within its deadline, says so, and leaves no process behind, not
//! even a daemon that left its group.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::{Duration, Instant};

use serde_json::json;
use tether::Surface;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adapter_that_never_answers_initialize_ends_within_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    common::write(&ws, "fake.marker", "");
    common::write(&ws, "prog.fake", "");
    let config = format!(
        "[debug]\nrequest_timeout_s = 2\n[debug.adapters.stuck]\ncommand = [{:?}, \"hang\"]\nmarkers = [\"fake.marker\"]\n",
        common::fake_lsp_as(dir.path(), "stuck-adapter")
            .display()
            .to_string()
    );
    let run = common::run_with_config(dir.path(), &config);
    let adapters = run
        .runtime()
        .call(
            Surface::Agent,
            "debug",
            json!({"action": "adapters"}),
            CancellationToken::new(),
        )
        .await
        .unwrap()
        .to_text();
    assert!(
        adapters.contains("stuck: ready") && adapters.contains("from [debug.adapters.stuck]"),
        "{adapters}"
    );

    let started = Instant::now();
    let err = run
        .runtime()
        .call(
            Surface::Agent,
            "debug",
            json!({"action": "launch", "program": "prog.fake", "adapter": "stuck"}),
            CancellationToken::new(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(started.elapsed() < Duration::from_secs(20), "liveness");
    assert!(
        err.contains("stuck: `initialize` got no answer within 2000 ms"),
        "{err}"
    );
    assert!(
        err.contains("fake-lsp starting in mode `hang`"),
        "the adapter's stderr is quoted: {err}"
    );
    let end = Instant::now() + Duration::from_secs(30);
    while !tether_proc::children_named(std::process::id(), "stuck-adapter").is_empty() {
        assert!(Instant::now() < end, "the adapter was left running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status = run
        .runtime()
        .call(
            Surface::Agent,
            "debug",
            json!({"action": "status"}),
            CancellationToken::new(),
        )
        .await
        .unwrap()
        .to_text();
    assert_eq!(status, "no debug session runs");
    run.shutdown(Duration::from_secs(2)).await;
}

/// An adapter whose daemon left its group and session (a double fork and `setsid`) does not
/// leave it behind when the adapter is let go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adapter_daemon_ends_with_its_adapter() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    common::write(&ws, "fake.marker", "");
    common::write(&ws, "prog.fake", "");
    let pidfile = dir.path().join("daemon.pid");
    let script = format!(
        "setsid sh -c 'sleep 300 >/dev/null 2>&1 & echo $! > {}'; exec {} hang",
        pidfile.display(),
        common::fake_lsp_as(dir.path(), "forking-adapter").display()
    );
    let config = format!(
        "[debug]\nrequest_timeout_s = 2\n[debug.adapters.forks]\ncommand = [\"sh\", \"-c\", {script:?}]\nmarkers = [\"fake.marker\"]\n"
    );
    let run = common::run_with_config(dir.path(), &config);
    let err = run
        .runtime()
        .call(
            Surface::Agent,
            "debug",
            json!({"action": "launch", "program": "prog.fake", "adapter": "forks"}),
            CancellationToken::new(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("got no answer within 2000 ms"), "{err}");
    let daemon: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(30);
    while tether_proc::is_running(daemon) {
        assert!(Instant::now() < end, "the adapter's daemon outlived it");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    run.shutdown(Duration::from_secs(2)).await;
}

/// No Dart SDK can be installed here, so dart is checked as a user without one meets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dart_without_its_sdk_says_why() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        !std::env::split_paths(&path).any(|d| d.join("dart").is_file()),
        "dart is on PATH: test it like the other adapters"
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    common::write(&ws, "pubspec.yaml", "name: hello\n");
    common::write(&ws, "bin/main.dart", "void main() => print('hi');\n");
    let run = common::run_with_config(dir.path(), "");
    let adapters = common::call(&run, "debug", json!({"action": "adapters"}))
        .await
        .unwrap();
    assert!(
        adapters.contains("dart: a project marker is there, but none of dart is on PATH"),
        "{adapters}"
    );
    let launched = common::call(
        &run,
        "debug",
        json!({"action": "launch", "program": "bin/main.dart"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        launched.contains("dart: a project marker is there, but none of dart is on PATH"),
        "{launched}"
    );
    run.shutdown(Duration::from_secs(5)).await;
}
