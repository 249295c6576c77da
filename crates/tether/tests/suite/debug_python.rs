//! The `debug` tool with the real debugpy, the copy `tether install debugpy` put in tether's
//! folder, for a project whose `.venv` lacks it: breakpoint,
//! launch to the stop, stack (numbers kept within a stop), scopes and variables (a long value
//! and a wide object capped), evaluate (a statement says it has no value), the three steps,
//! stale ids refused, output, continue to exit, terminate; a second launch refused while a
//! session runs; the time to live ending a running program with no call; and a pause that
//! reaches a program a continue waits on.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::debug;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use tether::Run;

const APP: &str = "import sys\n\n\ndef total(items):\n    acc = 0\n    for x in items:\n        acc += x\n    return acc\n\n\ndef main():\n    big = \"x\" * 1000\n    many = {f\"k{i}\": i for i in range(80)}\n    print(\"starting\", flush=True)\n    result = total([1, 2, 3])\n    print(\"result\", result, sys.executable, flush=True)\n    return 0\n\n\nif __name__ == \"__main__\":\n    sys.exit(main())\n";

/// The workspace: a Python project whose `.venv` is the test environment, which has no
/// debugpy of its own.
fn project(dir: &Path) -> Run {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-venv");
    assert!(
        venv.join("bin/python").exists(),
        "target/test-venv is missing: run scripts/test, which makes it"
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

/// The adapter `tether install debugpy` installed (scripts/test runs it).
fn own_adapter() -> std::path::PathBuf {
    tether_toolchain::installed_program(&["debugpy-adapter"]).expect(
        "tether's debugpy is not installed: run `tether install debugpy` (scripts/test does)",
    )
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
        let own = own_adapter();
        assert!(
            launched.contains(&format!(
                "it has no debugpy, so tether's own adapter runs: {}",
                own.display()
            )),
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
        assert!(launched.contains(" chars]"), "{launched}");
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
        // A statement has no value, and says so rather than answering empty.
        let statement = debug(&run, json!({"action": "evaluate", "expression": "zz = 5"})).await;
        assert_eq!(statement.trim(), "(no value)");
        let read = debug(&run, json!({"action": "evaluate", "expression": "zz + 1"})).await;
        assert_eq!(read.trim(), "6");
        // Within one stop a frame keeps its number: asking again renumbers nothing.
        let again = debug(&run, json!({"action": "stack"})).await;
        assert_eq!(again, stack, "the same stop's frames were renumbered");

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
fn a_program_that_exits_at_once_and_a_dead_adapter_are_each_said() {
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
        // tether's adapter runs as its console script, named for it.
        let adapters = tether_proc::children_named(std::process::id(), "debugpy-adapter");
        assert!(!adapters.is_empty(), "no adapter runs");
        for pid in adapters {
            unsafe_free_kill(pid);
        }
        let after = debug(&run, json!({"action": "step_over"})).await;
        assert!(
            after.contains("ERROR") && after.contains("adapter ended"),
            "{after}"
        );
        debug(&run, json!({"action": "terminate"})).await;
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
        // The program waits on the interpreter tether installed debugpy into.
        let python = own_adapter().with_file_name("python");
        let mut waiting = std::process::Command::new(python)
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

/// A program that never ends, with a line to stop on before its loop.
const LOOP: &str = "import time\n\n\ndef main():\n    n = 0\n    while True:\n        n += 1\n        time.sleep(0.01)\n\n\nmain()\n";

/// The processes a session runs for the workspace `ws` (the adapter, debugpy's launcher and
/// the debuggee), as (pid, command line): those whose command line names the workspace or
/// whose working directory is in it.
fn session_processes(ws: &Path) -> Vec<(u32, String)> {
    let ws = ws.canonicalize().unwrap();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || !tether_proc::is_running(pid) {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let cwd = std::fs::read_link(entry.path().join("cwd")).unwrap_or_default();
        if cmdline.contains(ws.to_str().unwrap()) || cwd.starts_with(&ws) {
            found.push((pid, cmdline));
        }
    }
    found
}

#[test]
fn the_time_to_live_ends_the_adapter_and_a_running_program_without_another_call() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-venv");
        let ws = dir.path().join("ws");
        common::write(
            &ws,
            "pyproject.toml",
            "[project]\nname = \"d\"\nversion = \"0.1\"\n",
        );
        common::write(&ws, "spin.py", LOOP);
        std::os::unix::fs::symlink(venv.canonicalize().unwrap(), ws.join(".venv")).unwrap();
        let ttl = Duration::from_secs(6);
        let run = common::run_with_config(
            dir.path(),
            "[debug]\nttl_s = 6\nstop_wait_s = 1\nrequest_timeout_s = 60\n",
        );
        let launched = std::time::Instant::now();
        let said = debug(&run, json!({"action": "launch", "program": "spin.py"})).await;
        assert!(said.contains("still running after 1 s"), "{said}");
        let running = session_processes(&ws);
        let own = own_adapter().display().to_string();
        let adapter = running.iter().any(|(_, c)| c.contains(&own));
        let debuggee = running
            .iter()
            .any(|(_, c)| c.contains("spin.py") && c.contains("--connect"));
        assert!(adapter && debuggee, "the session should run: {running:?}");

        // No call is made: the deadline alone ends them, the program still running.
        let end = launched + ttl + Duration::from_secs(20);
        loop {
            let left = session_processes(&ws);
            if left.is_empty() {
                break;
            }
            assert!(
                std::time::Instant::now() < end,
                "still running 20 s past the time to live: {left:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let expired = debug(&run, json!({"action": "stack"})).await;
        assert!(
            expired.contains("reached its time limit (6 s, `[debug] ttl_s`) and was terminated"),
            "{expired}"
        );
        let status = debug(&run, json!({"action": "status"})).await;
        assert!(status.starts_with("no debug session runs"), "{status}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn pause_reaches_a_program_a_continue_waits_on_at_once() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        common::write(&dir.path().join("ws"), "spin.py", LOOP);
        debug(
            &run,
            json!({"action": "breakpoints", "file": "spin.py", "lines": [5]}),
        )
        .await;
        let launched = debug(&run, json!({"action": "launch", "program": "spin.py"})).await;
        assert!(launched.contains("stopped: breakpoint"), "{launched}");
        debug(
            &run,
            json!({"action": "breakpoints", "file": "spin.py", "lines": []}),
        )
        .await;

        // The continue waits up to stop_wait_s (60 s); the pause must not wait behind it,
        // whether it comes as the program starts to run or once it has run a while.
        for delay in [Duration::ZERO, Duration::from_secs(1)] {
            let started = std::time::Instant::now();
            let resumed = async {
                let said = debug(&run, json!({"action": "continue"})).await;
                (said, started.elapsed())
            };
            let paused = async {
                tokio::time::sleep(delay).await;
                let end = started + Duration::from_secs(30);
                loop {
                    // Until the continue has let the program run, it is still stopped.
                    let asked = std::time::Instant::now();
                    let said = debug(&run, json!({"action": "pause"})).await;
                    if said != "already stopped" {
                        return (said, asked.elapsed());
                    }
                    assert!(std::time::Instant::now() < end, "never running");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            };
            let ((resumed, waited), (paused, took)) = tokio::join!(resumed, paused);
            assert!(
                waited < Duration::from_secs(30),
                "the continue waited {waited:?}, as if the pause had not reached it: {resumed}"
            );
            assert!(resumed.contains("paused at spin.py:"), "{resumed}");
            assert!(paused.contains("paused at spin.py:"), "{paused}");
            assert!(
                took < Duration::from_secs(20),
                "the pause took {took:?}: {paused}"
            );
            // Both show the one stop, with the same frame numbers.
            let first = |t: &str| t.lines().nth(1).unwrap_or_default().to_string();
            assert_eq!(first(&resumed), first(&paused));
        }
        debug(&run, json!({"action": "terminate"})).await;
        run.shutdown(Duration::from_secs(5)).await;
    });
}
