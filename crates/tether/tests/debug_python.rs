//! The `debug` tool with the real debugpy, from a project whose `.venv` has it: breakpoint,
//! launch to the stop, stack, scopes and variables (a long value and a wide object capped),
//! evaluate, the three steps, stale ids refused, output, continue to exit, terminate; and a
//! second launch refused while a session runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use tether::Run;

const APP: &str = "import sys\n\n\ndef total(items):\n    acc = 0\n    for x in items:\n        acc += x\n    return acc\n\n\ndef main():\n    big = \"x\" * 1000\n    many = {f\"k{i}\": i for i in range(80)}\n    print(\"starting\", flush=True)\n    result = total([1, 2, 3])\n    print(\"result\", result, sys.executable, flush=True)\n    return 0\n\n\nif __name__ == \"__main__\":\n    sys.exit(main())\n";

async fn debug(run: &Run, args: serde_json::Value) -> String {
    common::call_text(run, "debug", args).await
}

/// The workspace: a Python project whose `.venv` is the test environment (it has debugpy).
fn project(dir: &Path) -> Run {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-venv");
    assert!(
        venv.join("bin/python").exists(),
        "target/test-venv is missing: run scripts/test, which makes it and installs debugpy"
    );
    let ws = dir.join("ws");
    common::write(
        &ws,
        "pyproject.toml",
        "[project]\nname = \"d\"\nversion = \"0.1\"\n",
    );
    common::write(&ws, "app.py", APP);
    std::os::unix::fs::symlink(venv.canonicalize().unwrap(), ws.join(".venv")).unwrap();
    common::run_with_config(dir, "[debug]\nstop_wait_s = 60\nrequest_timeout_s = 60\n")
}

/// The number after `[reference ` on the line naming `name`.
fn reference_of(text: &str, name: &str) -> i64 {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(name))
        .unwrap_or_else(|| panic!("{name} in {text}"));
    let at = line
        .find("[reference ")
        .unwrap_or_else(|| panic!("no reference: {line}"));
    line[at + 11..].trim_end_matches(']').parse().unwrap()
}

#[test]
fn debugpy_runs_a_python_program_to_its_breakpoints_and_out() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());

        // A typo in a name is refused with the file meant, not kept as a breakpoint that
        // never binds.
        let typo = debug(
            &run,
            json!({"action": "breakpoints", "file": "ap.py", "lines": [15]}),
        )
        .await;
        assert!(
            typo.contains("ap.py is not a file of the workspace (did you mean app.py?)"),
            "{typo}"
        );
        let typo = debug(&run, json!({"action": "launch", "program": "ap.py"})).await;
        assert!(typo.contains("(did you mean app.py?)"), "{typo}");
        let set = debug(
            &run,
            json!({"action": "breakpoints", "file": "app.py", "lines": [15]}),
        )
        .await;
        assert!(set.contains("app.py: 1 breakpoint set"), "{set}");
        let launched = debug(&run, json!({"action": "launch", "program": "app.py"})).await;
        assert!(
            launched.contains("under debugpy with")
                && launched.contains(".venv/bin/python (the project's .venv)"),
            "{launched}"
        );
        assert!(launched.contains("app.py: line 15 verified"), "{launched}");
        assert!(launched.contains("stopped: breakpoint"), "{launched}");
        assert!(
            launched.contains("app.py:15 main")
                && launched.contains("> 15: result = total([1, 2, 3])"),
            "{launched}"
        );
        // The locals, with a long value cut and a wide dict behind a reference.
        assert!(launched.contains("characters, cut at 400)"), "{launched}");
        let many = reference_of(&launched, "many");

        let again = debug(&run, json!({"action": "launch", "program": "app.py"})).await;
        assert!(
            again.contains("ERROR a debug session already runs")
                && again.contains("stopped (breakpoint)"),
            "{again}"
        );

        let children = debug(&run, json!({"action": "variables", "reference": many})).await;
        assert!(
            children.contains("… 30 more, cut at 50") || children.contains("more, cut at 50"),
            "{children}"
        );

        // The interpreter is the project's: the debuggee says so itself.
        let exe = debug(
            &run,
            json!({"action": "evaluate", "expression": "sys.executable"}),
        )
        .await;
        assert!(exe.contains(".venv/bin/python"), "{exe}");
        let sum = debug(
            &run,
            json!({"action": "evaluate", "expression": "len(big) + 1"}),
        )
        .await;
        assert_eq!(sum.trim(), "1001");

        let stack = debug(&run, json!({"action": "stack"})).await;
        let top: i64 = stack
            .lines()
            .next()
            .unwrap()
            .trim_start_matches('#')
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let scopes = debug(&run, json!({"action": "scopes", "frame_id": top})).await;
        assert!(scopes.contains("Locals"), "{scopes}");

        let into = debug(&run, json!({"action": "step_in"})).await;
        assert!(into.contains("app.py:5 total"), "{into}");
        // An id never handed out since this stop is refused, not passed on.
        let stale = debug(&run, json!({"action": "variables", "reference": 999_999})).await;
        assert!(stale.contains("is stale or unknown"), "{stale}");
        // The frame id from the last stop is refused too, even where the adapter reuses its
        // own ids: each stop's ids are new.
        let old = debug(&run, json!({"action": "scopes", "frame_id": top})).await;
        assert!(
            old.contains(&format!("frame id {top} is stale or unknown")),
            "{old}"
        );
        let old = debug(&run, json!({"action": "variables", "reference": many})).await;
        assert!(old.contains("is stale or unknown"), "{old}");
        let over = debug(&run, json!({"action": "step_over"})).await;
        assert!(over.contains("app.py:6 total"), "{over}");
        let out = debug(&run, json!({"action": "step_out"})).await;
        assert!(
            out.contains("app.py:15 main") || out.contains("app.py:16 main"),
            "{out}"
        );

        let ended = debug(&run, json!({"action": "continue"})).await;
        assert!(ended.contains("the program exited with code 0"), "{ended}");
        let output = debug(&run, json!({"action": "output"})).await;
        assert!(
            output.contains("starting") && output.contains("result 6"),
            "{output}"
        );

        let gone = debug(&run, json!({"action": "terminate"})).await;
        assert!(gone.contains("terminated the session"), "{gone}");
        let status = debug(&run, json!({"action": "status"})).await;
        assert_eq!(status, "no debug session runs");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn a_program_that_exits_at_once_a_dead_adapter_and_the_time_limit_are_each_said() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        let ws = dir.path().join("ws");

        // Exits before any stop: its code and output, never a hang.
        common::write(
            &ws,
            "quick.py",
            "import os, sys\nprint('bye', file=sys.stderr, flush=True)\nos._exit(3)\n",
        );
        let quick = debug(&run, json!({"action": "launch", "program": "quick.py"})).await;
        assert!(
            quick.contains("the program exited with code 3") && quick.contains("bye"),
            "{quick}"
        );
        debug(&run, json!({"action": "terminate"})).await;

        // An uncaught exception stops where it was raised, with its type.
        common::write(
            &ws,
            "crash.py",
            "def f():\n    raise ValueError('bad input')\n\nf()\n",
        );
        let crash = debug(&run, json!({"action": "launch", "program": "crash.py"})).await;
        assert!(
            crash.contains("stopped: exception") && crash.contains("crash.py:2 f"),
            "{crash}"
        );
        debug(&run, json!({"action": "terminate"})).await;

        // The adapter dies while the program is stopped: the next call says so.
        debug(
            &run,
            json!({"action": "breakpoints", "file": "app.py", "lines": [15]}),
        )
        .await;
        let launched = debug(&run, json!({"action": "launch", "program": "app.py"})).await;
        assert!(launched.contains("stopped: breakpoint"), "{launched}");
        for pid in tether_proc::children_named(std::process::id(), "python") {
            unsafe_free_kill(pid);
        }
        let after = debug(&run, json!({"action": "step_over"})).await;
        assert!(
            after.contains("ERROR") && after.contains("adapter ended"),
            "{after}"
        );
        debug(&run, json!({"action": "terminate"})).await;
        run.shutdown(Duration::from_secs(5)).await;

        // A session past its time to live is ended, and the next call says why.
        let short = tempfile::tempdir().unwrap();
        let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-venv");
        let ws = short.path().join("ws");
        common::write(
            &ws,
            "pyproject.toml",
            "[project]\nname = \"d\"\nversion = \"0.1\"\n",
        );
        common::write(&ws, "app.py", APP);
        std::os::unix::fs::symlink(venv.canonicalize().unwrap(), ws.join(".venv")).unwrap();
        let run = common::run_with_config(
            short.path(),
            "[debug]\nttl_s = 1\nstop_wait_s = 60\nrequest_timeout_s = 60\n",
        );
        debug(
            &run,
            json!({"action": "breakpoints", "file": "app.py", "lines": [15]}),
        )
        .await;
        let launched = debug(&run, json!({"action": "launch", "program": "app.py"})).await;
        assert!(launched.contains("stopped: breakpoint"), "{launched}");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let expired = debug(&run, json!({"action": "stack"})).await;
        assert!(
            expired.contains("reached its time limit (1 s, `[debug] ttl_s`) and was terminated"),
            "{expired}"
        );
        let status = debug(&run, json!({"action": "status"})).await;
        assert_eq!(status, "no debug session runs");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// Kills `pid` with SIGKILL, as a crash would.
fn unsafe_free_kill(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status();
}

#[test]
fn debugpy_attaches_to_a_program_waiting_on_a_port() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        let ws = dir.path().join("ws");
        // Nothing waits on port 1: said, with how to make a program wait.
        let early = debug(&run, json!({"action": "attach", "port": 1})).await;
        assert!(
            early.contains("nothing to attach to at 127.0.0.1:1")
                && early.contains("--wait-for-client"),
            "{early}"
        );
        let port = common::free_port();
        let mut waiting = std::process::Command::new(ws.join(".venv/bin/python"))
            .args([
                "-m",
                "debugpy",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--wait-for-client",
                "app.py",
            ])
            .current_dir(&ws)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        common::until_listening(port, Duration::from_secs(30)).await;
        debug(
            &run,
            json!({"action": "breakpoints", "file": "app.py", "lines": [15]}),
        )
        .await;
        let attached = debug(&run, json!({"action": "attach", "port": port})).await;
        assert!(
            attached.contains(&format!("attached to port {port} under debugpy")),
            "{attached}"
        );
        assert!(
            attached.contains("stopped: breakpoint") && attached.contains("app.py:15 main"),
            "{attached}"
        );
        let wrong = debug(&run, json!({"action": "attach", "port": port})).await;
        assert!(wrong.contains("a debug session already runs"), "{wrong}");
        // Detaching leaves the program, which someone else started, running on.
        let gone = debug(&run, json!({"action": "terminate"})).await;
        assert!(
            gone.contains("detached: the program attached to was left running"),
            "{gone}"
        );
        assert!(
            waiting.try_wait().unwrap().is_none(),
            "the attached program was killed"
        );
        let _ = waiting.kill();
        let _ = waiting.wait();
        run.shutdown(Duration::from_secs(5)).await;
    });
}
