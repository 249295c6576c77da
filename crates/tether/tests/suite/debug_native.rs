//! The `debug` tool with the real lldb-dap on a small C program built with `cc -g`:
//! breakpoint, launch to the stop, locals (a long string cut, an 80-element array behind a
//! reference), evaluate, the three steps, continue to exit with the program's output, and
//! terminate leaving no adapter behind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::debug;

use std::process::Command;
use std::time::Duration;

use serde_json::json;

const PROG: &str = "#include <stdio.h>\n#include <string.h>\n\nstruct point { int x; int y; };\n\nint add(int a, int b) {\n    int sum = a + b;\n    return sum;\n}\n\nint main(void) {\n    char text[1000];\n    memset(text, 'y', sizeof text - 1);\n    text[sizeof text - 1] = 0;\n    int numbers[80];\n    for (int i = 0; i < 80; i++) numbers[i] = i;\n    struct point p = {3, 4};\n    printf(\"starting\\n\");\n    fflush(stdout);\n    int r = add(p.x, p.y);\n    printf(\"result %d\\n\", r);\n    return 0;\n}\n";

/// The cases run one at a time: each checks that no adapter of this process is left.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
fn lldb_debugs_a_c_program_built_with_debug_info() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let lldb = ["lldb-dap", "lldb-dap-20", "lldb-dap-19", "lldb-dap-18"];
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|d| lldb.iter().any(|b| d.join(b).is_file())),
        "lldb-dap is not on PATH: run scripts/test, which installs lldb-19"
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    common::write(&ws, "prog.c", PROG);
    common::write(
        &ws,
        "Makefile",
        "prog: prog.c\n\tcc -g -O0 -o prog prog.c\n",
    );
    let built = Command::new("cc")
        .args(["-g", "-O0", "-o", "prog", "prog.c"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(built.success());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let run = common::run_with_config(
            dir.path(),
            "[debug]\nstop_wait_s = 60\nrequest_timeout_s = 60\n",
        );
        let set = debug(
            &run,
            json!({"action": "breakpoints", "file": "prog.c", "lines": [20]}),
        )
        .await;
        assert!(set.contains("1 breakpoint set"), "{set}");
        let launched = debug(&run, json!({"action": "launch", "program": "prog"})).await;
        assert!(launched.contains("launched prog under lldb"), "{launched}");
        assert!(launched.contains("prog.c: line 20 verified"), "{launched}");
        assert!(launched.contains("stopped: breakpoint"), "{launched}");
        assert!(
            launched.contains("prog.c:20 main")
                && launched.contains("> 20: int r = add(p.x, p.y);"),
            "{launched}"
        );
        assert!(launched.contains(" chars]"), "{launched}");
        let numbers = reference_of(&launched, "numbers");
        let children = debug(&run, json!({"action": "variables", "reference": numbers})).await;
        assert!(children.contains("… 30 more, cut at 50"), "{children}");

        let sum = debug(
            &run,
            json!({"action": "evaluate", "expression": "p.x + p.y"}),
        )
        .await;
        assert!(sum.trim() == "7", "{sum}");

        let into = debug(&run, json!({"action": "step_in"})).await;
        assert!(into.contains("prog.c:7 add"), "{into}");
        let over = debug(&run, json!({"action": "step_over"})).await;
        assert!(over.contains("prog.c:8 add"), "{over}");
        let out = debug(&run, json!({"action": "step_out"})).await;
        assert!(out.contains("prog.c:20 main"), "{out}");

        let ended = debug(&run, json!({"action": "continue"})).await;
        assert!(ended.contains("the program exited with code 0"), "{ended}");
        let output = debug(&run, json!({"action": "output"})).await;
        assert!(
            output.contains("starting") && output.contains("result 7"),
            "{output}"
        );
        let gone = debug(&run, json!({"action": "terminate"})).await;
        assert!(gone.contains("terminated the session"), "{gone}");
        run.shutdown(Duration::from_secs(5)).await;
    });
    let left = tether_proc::children_named(std::process::id(), "lldb-dap-19");
    assert!(left.is_empty(), "lldb-dap left running: {left:?}");
}

const RUST_MAIN: &str = "fn area(w: u32, h: u32) -> u32 {\n    let a = w * h;\n    a\n}\n\nfn main() {\n    let items: Vec<u32> = (0..80).collect();\n    println!(\"starting {}\", items.len());\n    let r = area(3, 4);\n    println!(\"result {r}\");\n    if std::env::args().any(|a| a == \"panic\") {\n        panic!(\"boom at {r}\");\n    }\n}\n";

#[test]
fn lldb_debugs_a_rust_binary_and_stops_on_its_panic() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    common::write(
        &ws,
        "Cargo.toml",
        "[package]\nname = \"boom\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    common::write(&ws, "src/main.rs", RUST_MAIN);
    let built = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--offline"])
        .env("CARGO_TARGET_DIR", ws.join("target"))
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(built.success());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let run = common::run_with_config(
            dir.path(),
            "[debug]\nstop_wait_s = 60\nrequest_timeout_s = 60\n",
        );
        debug(
            &run,
            json!({"action": "breakpoints", "file": "src/main.rs", "lines": [9]}),
        )
        .await;
        let launched = debug(
            &run,
            json!({"action": "launch", "program": "target/debug/boom"}),
        )
        .await;
        assert!(
            launched.contains("stopped: breakpoint")
                && launched.contains("src/main.rs:9 boom::main"),
            "{launched}"
        );
        let items = reference_of(&launched, "items");
        let children = debug(&run, json!({"action": "variables", "reference": items})).await;
        assert!(children.contains("more, cut at 50"), "{children}");
        let into = debug(&run, json!({"action": "step_in"})).await;
        assert!(into.contains("src/main.rs:2 boom::area"), "{into}");
        let ended = debug(&run, json!({"action": "continue"})).await;
        assert!(ended.contains("the program exited with code 0"), "{ended}");
        debug(&run, json!({"action": "terminate"})).await;

        // A panic stops where it happens, with its message in the output.
        debug(
            &run,
            json!({"action": "breakpoints", "file": "src/main.rs", "lines": []}),
        )
        .await;
        let panicked = debug(
            &run,
            json!({"action": "launch", "program": "target/debug/boom", "args": ["panic"]}),
        )
        .await;
        assert!(
            panicked.contains("stopped: function breakpoint")
                || panicked.contains("stopped: breakpoint"),
            "{panicked}"
        );
        assert!(panicked.contains("rust_panic"), "{panicked}");
        let stack = debug(&run, json!({"action": "stack"})).await;
        assert!(stack.contains("src/main.rs:12 boom::main"), "{stack}");
        let output = debug(&run, json!({"action": "output"})).await;
        assert!(output.contains("boom at 12"), "{output}");
        debug(&run, json!({"action": "terminate"})).await;
        run.shutdown(Duration::from_secs(5)).await;
    });
    let left = tether_proc::children_named(std::process::id(), "lldb-dap-19");
    assert!(left.is_empty(), "lldb-dap left running: {left:?}");
}

const LOOP: &str = "#include <stdio.h>\n#include <unistd.h>\nint work(int i) { return i * 2; }\nint main(void) {\n    FILE *f = fopen(\"pid\", \"w\");\n    fprintf(f, \"%d\\n\", getpid());\n    fclose(f);\n    for (int i = 0;; i++) {\n        int v = work(i);\n        FILE *t = fopen(\"ticks\", \"a\");\n        fprintf(t, \"%d\\n\", v);\n        fclose(t);\n        usleep(50000);\n    }\n}\n";

#[test]
fn lldb_attaches_to_a_program_under_lldb_server_and_leaves_it_running() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let server = [
        "lldb-server",
        "lldb-server-20",
        "lldb-server-19",
        "lldb-server-18",
    ]
    .into_iter()
    .find(|b| which::which(b).is_ok())
    .expect("lldb-server is not on PATH: run scripts/test, which installs lldb-19");
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    common::write(&ws, "loop.c", LOOP);
    common::write(
        &ws,
        "Makefile",
        "loop: loop.c\n\tcc -g -O0 -o loop loop.c\n",
    );
    let built = Command::new("cc")
        .args(["-g", "-O0", "-o", "loop", "loop.c"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(built.success());
    let port = common::free_port();
    // Both sides keep a log, shown if the attach fails. Under load, lldb-dap once refused an
    // attach made through `attachCommands` ("process unloaded"); tether now has it connect
    // itself, and a refusal is reported at once.
    let server_log = dir.path().join("lldb-server.log");
    let dap_log = dir.path().join("lldb-dap.log");
    let mut gdbserver = Command::new(server)
        .args(["gdbserver", "--log-file", &server_log.display().to_string()])
        .args(["--log-channels", "gdb-remote packets"])
        .args([&format!("127.0.0.1:{port}"), "./loop"])
        .current_dir(&ws)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let dap = ["lldb-dap", "lldb-dap-20", "lldb-dap-19", "lldb-dap-18"]
        .into_iter()
        .find(|b| which::which(b).is_ok())
        .expect("lldb-dap is not on PATH: run scripts/test, which installs lldb-19");
    let logs = || {
        let tail = |p: &std::path::Path| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(40)..].join("\n")
        };
        format!(
            "\n--- lldb-dap log ---\n{}\n--- lldb-server log ---\n{}",
            tail(&dap_log),
            tail(&server_log)
        )
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        common::until_listening(port, Duration::from_secs(30)).await;
        // The catalog's own lldb, started through `env` to give it a log file.
        let config = format!(
            "[debug]\nstop_wait_s = 120\nrequest_timeout_s = 120\n\
             [debug.adapters.lldb]\ncommand = [\"env\", \"LLDBDAP_LOG={}\", \"{dap}\"]\n\
             markers = [\"Makefile\"]\n",
            dap_log.display()
        );
        let run = common::run_with_config(dir.path(), &config);
        debug(
            &run,
            json!({"action": "breakpoints", "file": "loop.c", "lines": [3]}),
        )
        .await;
        // Nothing waits on this port: lldb-dap refuses the attach and sends no `initialized`;
        // the refusal is the answer, not a wait for an event that never comes.
        let closed = common::free_port();
        let refused = debug(&run, json!({"action": "attach", "port": closed})).await;
        assert!(
            refused.contains("`attach` failed")
                && refused.contains("lldb-server gdbserver 127.0.0.1:PORT")
                && !refused.contains("initialized"),
            "{refused}"
        );
        // No `adapter`: the Makefile says lldb.
        let attached = debug(&run, json!({"action": "attach", "port": port})).await;
        assert!(
            attached.contains(&format!("attached to port {port} under lldb")),
            "{attached}{}",
            logs()
        );
        assert!(
            attached.contains("stopped: breakpoint") && attached.contains("loop.c:3 work"),
            "{attached}{}",
            logs()
        );
        let doubled = debug(&run, json!({"action": "evaluate", "expression": "i * 10"})).await;
        assert!(doubled.trim().parse::<i64>().is_ok(), "{doubled}");
        let gone = debug(&run, json!({"action": "terminate"})).await;
        assert!(
            gone.contains("detached: the program attached to was left running"),
            "{gone}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
    // The program ticks on after the detach; then it is ended here.
    let ticks = || std::fs::read_to_string(ws.join("ticks")).map_or(0, |t| t.lines().count());
    let before = ticks();
    let end = std::time::Instant::now() + Duration::from_secs(20);
    while ticks() <= before + 2 {
        assert!(
            std::time::Instant::now() < end,
            "the program stopped ticking after the detach"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let pid = std::fs::read_to_string(ws.join("pid")).unwrap();
    Command::new("kill")
        .args(["-9", pid.trim()])
        .status()
        .unwrap();
    let _ = gdbserver.kill();
    let _ = gdbserver.wait();
    let left = tether_proc::children_named(std::process::id(), "lldb-dap-19");
    assert!(left.is_empty(), "lldb-dap left running: {left:?}");
}
