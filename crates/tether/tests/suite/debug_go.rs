//! The `debug` tool with the real delve, which speaks DAP over TCP only (its port is read from
//! its own output): breakpoint, launch to the stop, locals (an 80-element slice cut at 50),
//! evaluate, a step in, continue to exit with the program's output, and terminate.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::debug;

use std::time::Duration;

use serde_json::json;

const MAIN: &str = "package main\n\nimport \"fmt\"\n\nfunc add(a, b int) int {\n\tsum := a + b\n\treturn sum\n}\n\nfunc main() {\n\tnums := make([]int, 80)\n\tfor i := range nums {\n\t\tnums[i] = i\n\t}\n\tfmt.Println(\"starting\")\n\tr := add(3, 4)\n\tfmt.Println(\"result\", r)\n}\n";

#[test]
fn delve_debugs_a_go_module() {
    let _serial = common::one_at_a_time();
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|d| d.join("dlv").is_file()),
        "dlv is not on PATH: run scripts/test, which installs delve"
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    common::write(&ws, "go.mod", "module example.com/hello\n\ngo 1.19\n");
    common::write(&ws, "main.go", MAIN);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let run = common::run_with_config(
            dir.path(),
            "[debug]\nstop_wait_s = 120\nrequest_timeout_s = 120\n",
        );
        debug(
            &run,
            json!({"action": "breakpoints", "file": "main.go", "lines": [16]}),
        )
        .await;
        let launched = debug(&run, json!({"action": "launch", "program": "main.go"})).await;
        assert!(
            launched.contains("launched main.go under delve"),
            "{launched}"
        );
        assert!(
            launched.contains("stopped: breakpoint") && launched.contains("main.go:16 main.main"),
            "{launched}"
        );
        assert!(launched.contains("> 16: r := add(3, 4)"), "{launched}");
        let line = launched
            .lines()
            .find(|l| l.trim_start().starts_with("nums"))
            .unwrap_or_else(|| panic!("{launched}"));
        let reference: i64 = line[line.find("[reference ").unwrap() + 11..]
            .trim_end_matches(']')
            .parse()
            .unwrap();
        let children = debug(&run, json!({"action": "variables", "reference": reference})).await;
        assert!(children.contains("more, cut at 50"), "{children}");
        let sum = debug(
            &run,
            json!({"action": "evaluate", "expression": "nums[3] + 4"}),
        )
        .await;
        assert_eq!(sum.trim(), "7", "{sum}");
        let into = debug(&run, json!({"action": "step_in"})).await;
        assert!(
            into.contains("main.go:6 main.add") || into.contains("main.go:5 main.add"),
            "{into}"
        );
        let ended = debug(&run, json!({"action": "continue"})).await;
        // delve ends the session without an `exited` event, so no code is claimed.
        assert!(ended.contains("the program exited"), "{ended}");
        let output = debug(&run, json!({"action": "output"})).await;
        assert!(
            output.contains("starting") && output.contains("result 7"),
            "{output}"
        );
        debug(&run, json!({"action": "terminate"})).await;
        run.shutdown(Duration::from_secs(5)).await;
    });
    let left = tether_proc::children_named(std::process::id(), "dlv");
    assert!(left.is_empty(), "dlv left running: {left:?}");
}

const TICKING: &str = "package main\n\nimport (\n\t\"fmt\"\n\t\"time\"\n)\n\nfunc work(i int) int {\n\treturn i * 2\n}\n\nfunc main() {\n\tfor i := 0; ; i++ {\n\t\tfmt.Println(\"tick\", work(i))\n\t\ttime.Sleep(50 * time.Millisecond)\n\t}\n}\n";

#[test]
fn delve_attaches_to_a_headless_server() {
    let _serial = common::one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    common::write(&ws, "go.mod", "module example.com/ticking\n\ngo 1.19\n");
    common::write(&ws, "main.go", TICKING);
    let port = common::free_port();
    // The server builds the program, starts it halted and waits for a client.
    let mut server = std::process::Command::new("dlv")
        .args(["debug", "--headless", &format!("--listen=127.0.0.1:{port}")])
        .current_dir(&ws)
        .env("GOFLAGS", "-mod=mod")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        common::until_listening(port, Duration::from_secs(180)).await;
        let run = common::run_with_config(
            dir.path(),
            "[debug]\nstop_wait_s = 120\nrequest_timeout_s = 120\n",
        );
        debug(
            &run,
            json!({"action": "breakpoints", "file": "main.go", "lines": [9]}),
        )
        .await;
        let wrong = debug(
            &run,
            json!({"action": "attach", "port": port, "adapter": "dart"}),
        )
        .await;
        assert!(
            wrong.contains("attach by port is built for debugpy, lldb and delve")
                && wrong.contains("dlv exec --headless"),
            "{wrong}"
        );
        let attached = debug(&run, json!({"action": "attach", "port": port})).await;
        assert!(
            attached.contains(&format!("attached to port {port} under delve")),
            "{attached}"
        );
        assert!(
            attached.contains("stopped: breakpoint") && attached.contains("main.go:9 main.work"),
            "{attached}"
        );
        let doubled = debug(&run, json!({"action": "evaluate", "expression": "i * 2"})).await;
        assert!(doubled.trim().parse::<i64>().is_ok(), "{doubled}");
        let gone = debug(&run, json!({"action": "terminate"})).await;
        assert!(gone.contains("detached"), "{gone}");
        run.shutdown(Duration::from_secs(5)).await;
    });
    let _ = server.kill();
    let _ = server.wait();
}
