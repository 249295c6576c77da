//! A debug adapter added purely as a catalog entry: the `[debug.adapters.fake]` example of
//! docs/architecture.md ("How to add a debug adapter"), read from that page, drives
//! test-support's `fake-dap` through the `debug` tool from launch to exit. The fake is an
//! adapter no catalog has seen, which is the point; real adapters have their own tests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::{Duration, Instant};

use serde_json::json;

async fn debug(run: &tether::Run, args: serde_json::Value) -> String {
    match common::call(run, "debug", args).await {
        Ok(text) => text,
        Err(e) => format!("error: {e}"),
    }
}

/// Waits until no `fake-dap` child of this process runs.
async fn no_fake_left() {
    let end = Instant::now() + Duration::from_secs(30);
    while !tether_proc::children_named(std::process::id(), "fake-dap").is_empty() {
        assert!(Instant::now() < end, "fake-dap was left running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_entry_adds_an_adapter_driven_end_to_end() {
    let fake = common::test_support_bin("fake-dap");
    let entry = common::documented_example("How to add a debug adapter", "toml");
    let config = entry.replace(
        "command = [\"fake-dap\"]",
        &format!("command = [{:?}]", fake.display().to_string()),
    );
    assert_ne!(config, entry, "the example's command is `[\"fake-dap\"]`");
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    common::write(&ws, "fake.marker", "");
    common::write(
        &ws,
        "src/prog.fake",
        "print hello\nstep\nprint at three\nprint bye\n",
    );
    let run = common::run_with_config(dir.path(), &config);

    let adapters = debug(&run, json!({"action": "adapters"})).await;
    assert!(
        adapters.contains(&format!(
            "fake: ready ({}; from [debug.adapters.fake])",
            fake.display()
        )),
        "{adapters}"
    );
    assert!(
        adapters.starts_with("debugpy"),
        "built-ins come first: {adapters}"
    );

    debug(
        &run,
        json!({"action": "breakpoints", "file": "src/prog.fake", "lines": [3]}),
    )
    .await;
    // No `adapter`: the extension picks the new entry.
    let launched = debug(
        &run,
        json!({"action": "launch", "program": "src/prog.fake", "args": ["one", "two words"]}),
    )
    .await;
    assert!(
        launched.contains("launched src/prog.fake under fake"),
        "{launched}"
    );
    assert!(
        launched.contains("src/prog.fake: line 3 verified"),
        "{launched}"
    );
    assert!(
        launched.contains("stopped: breakpoint (thread 1)")
            && launched.contains("src/prog.fake:3 main")
            && launched.contains("> 3: print at three"),
        "{launched}"
    );
    assert!(launched.contains("line = 3"), "the locals: {launched}");

    let stack = debug(&run, json!({"action": "stack"})).await;
    assert!(stack.contains("src/prog.fake:3 main"), "{stack}");
    let line = debug(&run, json!({"action": "evaluate", "expression": "line"})).await;
    assert_eq!(line.trim(), "3");

    // The template's placeholders arrived typed, and the catalog's filter was offered and sent.
    let output = debug(&run, json!({"action": "output"})).await;
    let said = output.lines().find(|l| l.starts_with("fake-dap: args"));
    assert!(
        said.is_some_and(
            |l| l.starts_with("fake-dap: args [\"one\",\"two words\"] in /") && l.ends_with("/ws")
        ),
        "{output}"
    );
    assert!(
        output.contains("fake-dap: exception filters [\"uncaught\"]"),
        "{output}"
    );
    assert!(
        output.contains("hello") && !output.contains("at three"),
        "{output}"
    );

    let ended = debug(&run, json!({"action": "continue"})).await;
    assert!(ended.contains("the program exited with code 0"), "{ended}");
    assert!(
        ended.contains("at three") && ended.contains("bye"),
        "{ended}"
    );
    let gone = debug(&run, json!({"action": "terminate"})).await;
    assert!(
        gone.contains("terminated the session on src/prog.fake"),
        "{gone}"
    );
    no_fake_left().await;
    run.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_added_adapter_without_a_launch_table_is_refused_by_name() {
    let fake = common::test_support_bin("fake-dap");
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    common::write(&ws, "fake.marker", "");
    common::write(&ws, "prog.fake", "print hello\n");
    let config = format!(
        "[debug.adapters.bare]\ncommand = [{:?}]\nmarkers = [\"fake.marker\"]\n",
        fake.display().to_string()
    );
    let run = common::run_with_config(dir.path(), &config);
    let adapters = debug(&run, json!({"action": "adapters"})).await;
    assert!(
        adapters.contains("bare: ready (") && adapters.contains("launching is refused"),
        "{adapters}"
    );
    let refused = debug(
        &run,
        json!({"action": "launch", "program": "prog.fake", "adapter": "bare"}),
    )
    .await;
    assert!(
        refused.contains("bare: no launch template")
            && refused.contains("`[debug.adapters.bare]` needs a `launch` table"),
        "{refused}"
    );
    assert!(!refused.contains("initCommands"), "{refused}");
    no_fake_left().await;
    let status = debug(&run, json!({"action": "status"})).await;
    assert_eq!(status, "no debug session runs");

    // A placeholder the template cannot fill is refused when the configuration is read.
    let typo = format!("{config}[debug.adapters.bare.launch]\nprogram = \"{{prog}}\"\n");
    let cfg = dir.path().join("cfg");
    std::fs::write(cfg.join("tether.toml"), typo).unwrap();
    let err = tether::RunBuilder::new(&ws)
        .user_config_dir(&cfg)
        .state_dir(dir.path().join("state2"))
        .build()
        .err()
        .expect("a bad placeholder is refused")
        .to_string();
    assert!(
        err.contains("[debug.adapters.bare] launch: unknown placeholder {prog}"),
        "{err}"
    );
    run.shutdown(Duration::from_secs(5)).await;
}
