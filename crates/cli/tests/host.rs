//! The warm host with real front ends and a real pyright: `call`, `call --stdin` and `serve`
//! attach to one host per workspace, share its servers but not a ledger, hear of its death,
//! and leave nothing running once it stops or idles out.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::Mcp;
use common::host_env::{
    HostEnv, alive, call, claude_event, context_after_shell, context_of, gone_within,
    pyright_children, text,
};
use serde_json::{Value, json};

/// The programs a run may start are the capabilities' own, from the merged catalogs: a front
/// end whose PATH finds a debug adapter (one of lldb's versioned names) or a language server
/// the user's tether.toml adds in another folder gets a host of its own, and one whose PATH
/// finds them where the host's did attaches to it.
#[test]
fn a_program_a_run_may_start_found_elsewhere_on_path_parts_hosts() {
    use std::os::unix::fs::PermissionsExt;
    let env = HostEnv::new();
    let config = "[lsp.servers.mine]\ncommand = [\"my-lsp\", \"--stdio\"]\n";
    std::fs::write(env.cfg.join("tether.toml"), config).unwrap();
    let base = std::env::var("PATH").unwrap();
    let folder = |name: &str, program: &str| {
        let dir = env.ws.parent().unwrap().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(program), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(dir.join(program), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        dir.display().to_string()
    };
    let first = format!("{}:{base}", folder("first", "lldb-dap-18"));
    let (adapter, server) = (folder("adapter", "lldb-dap-18"), folder("server", "my-lsp"));
    let hosts_after_a_call_with = |path: &str| {
        let read = ["call", "--host", "read", r#"{"path": "a.py"}"#];
        let out = env.command(&read).env("PATH", path).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        text(&env.run(&["host", "--status"], "")).lines().count()
    };
    assert_eq!(hosts_after_a_call_with(&first), 1);
    assert_eq!(
        hosts_after_a_call_with(&first),
        1,
        "the same PATH shares the host"
    );
    // Each put before the first folder: only where that one program is found differs.
    assert_eq!(hosts_after_a_call_with(&format!("{adapter}:{first}")), 2);
    assert_eq!(hosts_after_a_call_with(&format!("{server}:{first}")), 3);
}

#[test]
fn a_call_through_the_host_answers_as_a_local_call_and_the_host_is_reused() {
    let env = HostEnv::new();
    let args = r#"{"path": "a.py"}"#;
    let local = env.run(&["call", "--no-host", "read", args], "");
    let first = env.run(&["call", "--host", "read", args], "");
    let pid = env.host_pid();
    let second = env.run(&["call", "--host", "read", args], "");
    assert!(local.status.success(), "{local:?}");
    assert_eq!(text(&first), text(&local));
    assert_eq!(text(&second), text(&local));
    assert_eq!(env.host_pid(), pid, "the second call used the same host");
    // One-call runs on the host share its tree cache: the second search parses nothing.
    let search = r#"{"pattern": "return $X", "language": "python"}"#;
    let cold = env.run(&["call", "--host", "ast_grep", search], "");
    assert!(text(&cold).contains("1 parsed, 0 from cache"), "{cold:?}");
    let warm = env.run(&["call", "--host", "ast_grep", search], "");
    assert!(text(&warm).contains("0 parsed, 1 from cache"), "{warm:?}");
    // A PATH that differs only by a folder of other tools (Codex puts its own first for its
    // hooks) finds the same servers, so it attaches to the same host.
    let tools = env.ws.parent().unwrap().join("agent-tools");
    std::fs::create_dir(&tools).unwrap();
    std::fs::write(tools.join("rg"), "#!/bin/sh\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(tools.join("rg"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", tools.display(), std::env::var("PATH").unwrap());
    let mut other = env.command(&["host", "--status"]);
    let other = other.env("PATH", &path).output().unwrap();
    let other: Value = serde_json::from_slice(&other.stdout).unwrap();
    assert_eq!(other["pid"], pid, "{other}");
    // A front end capped to read-only stays capped through the host.
    let mut capped = env.command(&[
        "call",
        "--host",
        "write",
        r#"{"path": "c.txt", "content": "x"}"#,
    ]);
    let capped = capped.env("TETHER_SURFACE", "readonly").output().unwrap();
    assert_eq!(capped.status.code(), Some(2), "{capped:?}");
    assert!(!env.ws.join("c.txt").exists());
    // A usage error keeps its exit code and its message through the host.
    let bad = env.run(&["call", "--host", "read", "{not json"], "");
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    let local_bad = env.run(&["call", "--no-host", "read", "{not json"], "");
    assert_eq!(bad.stderr, local_bad.stderr);
    // `call --stdin` is one run through the host, as it is here.
    let lines = "{\"tool\": \"write\", \"args\": {\"path\": \"b.txt\", \"content\": \"hi\\n\"}}\n\
                 {\"tool\": \"read\", \"args\": {\"path\": \"b.txt\"}}\n{\"oops\": 1}\n";
    let through = env.run(&["call", "--host", "--stdin"], lines);
    assert_eq!(through.status.code(), Some(2), "{through:?}");
    let records: Vec<Value> = text(&through)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3, "{records:?}");
    assert_eq!(records[0]["ok"], true);
    assert!(
        records[1]["text"].as_str().unwrap().contains("hi"),
        "{records:?}"
    );
    assert_eq!(records[2]["usage_error"], true);
}

#[test]
fn runs_share_the_hosts_server_and_each_is_told_of_the_others_write() {
    let env = HostEnv::new();
    let hover = r#"{"action": "hover", "file": "a.py", "line": 1, "symbol": "f"}"#;
    let cold = env.run(&["call", "--host", "lsp", hover], "");
    assert!(text(&cold).contains("def f(x: int) -> int"), "{cold:?}");
    let pid = env.host_pid();
    let servers = pyright_children(pid);
    assert_eq!(servers.len(), 1, "one pyright under the host: {servers:?}");
    let warm = env.run(&["call", "--host", "lsp", hover], "");
    assert_eq!(text(&warm), text(&cold));
    // Two MCP runs on the same host: still the one pyright.
    let mut a = env.serve();
    let mut b = env.serve();
    assert!(call(&mut a, 2, "lsp", serde_json::from_str(hover).unwrap()).contains("def f"));
    assert!(call(&mut b, 2, "lsp", serde_json::from_str(hover).unwrap()).contains("def f"));
    assert_eq!(pyright_children(pid), servers, "the runs share the server");
    // Run a's write breaks the file: a is told in its result, b as an outside change.
    let broken = "def f(x: int) -> int:\n    return x\n\ny: str = f(1)\n";
    let wrote = call(
        &mut a,
        3,
        "write",
        json!({"path": "a.py", "content": broken}),
    );
    assert!(wrote.contains("1 new problem"), "{wrote}");
    let end = Instant::now() + Duration::from_secs(30);
    let mut told = String::new();
    while Instant::now() < end && !told.contains("outside change to a.py") {
        std::thread::sleep(Duration::from_millis(300));
        told = call(
            &mut b,
            4,
            "read",
            json!({"path": "a.py", "offset": 1, "limit": 1}),
        );
    }
    assert!(
        told.contains("outside change to a.py"),
        "b was not told: {told}"
    );
    assert!(
        told.contains("reportAssignmentType") || told.contains("str"),
        "{told}"
    );
    // And a, whose write it was, hears nothing more about it.
    let again = call(
        &mut a,
        5,
        "read",
        json!({"path": "a.py", "offset": 1, "limit": 1}),
    );
    assert!(!again.contains("outside change"), "{again}");
    a.close();
    b.close();
}

/// The program a process runs, by file name.
fn program(pid: u32) -> String {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    exe.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn a_run_is_told_what_another_runs_write_broke_in_a_third_file() {
    // Run a's write to a.py breaks b.py. The shared server has a's text and has published
    // b.py's new problem by the time run b's watch looks: b must still be told of it.
    let env = HostEnv::new();
    // Enough code in b.py that pyright publishes it well after a.py.
    let mut b = String::from("from a import f\n\ny: int = f(1)\n");
    for i in 0..1500 {
        b.push_str(&format!(
            "\n\ndef g{i}(xs: list[int], k: int) -> dict[str, list[int]]:\n    \
             out = {{str(x): [x * k, x + {i}] for x in xs if x % 3 != k}}\n    return out\n"
        ));
    }
    std::fs::write(env.ws.join("b.py"), b).unwrap();
    let mut a = env.serve();
    let mut b = env.serve();
    let hover = json!({"action": "hover", "file": "a.py", "line": 1, "symbol": "f"});
    assert!(call(&mut a, 2, "lsp", hover.clone()).contains("def f"));
    assert!(call(&mut b, 2, "lsp", hover).contains("def f"));
    let broken = "def f(x: int) -> str:\n    return str(x)\n";
    let wrote = call(
        &mut a,
        3,
        "write",
        json!({"path": "a.py", "content": broken}),
    );
    assert!(wrote.contains("wrote"), "{wrote}");
    let end = Instant::now() + Duration::from_secs(30);
    let mut told = String::new();
    let mut id = 4;
    while Instant::now() < end && !told.contains("b.py") {
        std::thread::sleep(Duration::from_millis(300));
        told.push_str(&call(
            &mut b,
            id,
            "read",
            json!({"path": "a.py", "limit": 1}),
        ));
        id += 1;
    }
    assert!(
        told.contains("outside change to a.py") && told.contains("b.py (another file"),
        "b was not told of b.py: {told}"
    );
    assert!(told.contains("1 new problem"), "{told}");
    a.close();
    b.close();
}

#[test]
fn a_dead_host_is_told_to_the_attached_run_and_the_next_front_end_starts_a_fresh_one() {
    a_dead_host_is_told(HostEnv::new(), "tether-relay");
}

#[test]
fn without_the_relay_binary_serve_relays_itself_and_still_tells_of_a_dead_host() {
    a_dead_host_is_told(HostEnv::without_relay_binary(), "tether");
}

/// Kills the host under an attached `serve`, whose process by then runs `relay`.
fn a_dead_host_is_told(env: HostEnv, relay: &str) {
    let mut mcp = env.serve();
    assert!(
        mcp.call(2, "read", json!({"path": "a.py"}))
            .contains("def f")
    );
    assert_eq!(program(mcp.child.id()), relay);
    let pid = env.host_pid();
    Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(gone_within(pid, Duration::from_secs(5)));
    let reply = mcp.request(
        3,
        "tools/call",
        json!({"name": "read", "arguments": {"path": "a.py"}}),
    );
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let said = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("stopped answering"), "{said}");
    let listed = mcp.request(4, "tools/list", json!({}));
    assert!(listed["error"]["message"].as_str().is_some(), "{listed}");
    mcp.close();
    assert!(common::exits_within(&mut mcp.child, Duration::from_secs(15)).success());
    let next = env.run(&["call", "--host", "read", r#"{"path": "a.py"}"#], "");
    assert!(text(&next).contains("def f"), "{next:?}");
    let fresh = env.host_pid();
    assert_ne!(fresh, pid);
    // `--all` finds every host of the user, here the fresh one, and stops it; the socket of
    // a host that died elsewhere is removed and said so.
    let stale = env.runtime.join("tether").join("host-gone.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    let listed = text(&env.run(&["host", "--status", "--all"], ""));
    assert!(listed.contains(&format!("\"pid\":{fresh}")), "{listed}");
    let stopped = text(&env.run(&["host", "--stop", "--all"], ""));
    assert!(stopped.contains(&format!("(pid {fresh})")), "{stopped}");
    assert!(
        stopped.contains(&format!("removed {}, which a tether host", stale.display())),
        "{stopped}"
    );
    assert!(!stale.exists());
    assert!(!alive(fresh));
}

#[test]
fn a_file_the_shared_server_was_told_exists_is_not_told_again_by_each_run() {
    // pyright behind a shim that keeps what it is sent: each telling of a created file makes
    // it resolve every import again, which with ten runs grew its heap by a quarter.
    let mut env = HostEnv::new();
    let shim = env._dir.path().join("shim");
    std::fs::create_dir(&shim).unwrap();
    let heard = env._dir.path().join("heard.log");
    let real = which("pyright-langserver");
    let script = format!(
        "#!/bin/sh\ntee -a '{}' | '{}' \"$@\"\n",
        heard.display(),
        real.display()
    );
    std::fs::write(shim.join("pyright-langserver"), script).unwrap();
    std::fs::set_permissions(
        shim.join("pyright-langserver"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    env.path = Some(format!(
        "{}:{}",
        shim.display(),
        std::env::var("PATH").unwrap_or_default()
    ));
    let mut runs: Vec<Mcp> = (0..3).map(|_| env.serve()).collect();
    for (i, run) in runs.iter_mut().enumerate() {
        let content = format!("def f(x: int) -> int:\n    return x\n\n# run {i}\n");
        let wrote = call(run, 2, "write", json!({"path": "a.py", "content": content}));
        assert!(wrote.contains("wrote"), "{wrote}");
    }
    // Every run's watch sees each write; `status` says whether its run has told the server
    // what it would of every change made before it and diagnosed them (each call waits up to
    // 2 s for that, and a loaded machine's pyright may take longer).
    for run in runs.iter_mut() {
        let mut id = 3;
        loop {
            let status = call(run, id, "lsp", json!({"action": "status"}));
            if !status.contains("were still being diagnosed after") {
                break;
            }
            id += 1;
            assert!(id < 33, "the run's watch did not catch up: {status}");
        }
    }
    let log = std::fs::read_to_string(&heard).unwrap();
    let told = log
        .split("workspace/didChangeWatchedFiles")
        .skip(1)
        .filter(|after| after.contains("\"type\":1"))
        .count();
    assert_eq!(told, 1, "a.py told created {told} times:\n{log}");
    for run in &mut runs {
        run.close();
    }
}

/// Where PATH finds `program`.
fn which(program: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} is not on PATH"))
}

#[test]
fn a_front_end_with_another_environment_gets_a_host_of_its_own() {
    // A kernel started by a host has the host's environment: a caller whose environment
    // differs must not be answered from one started for someone else.
    let env = HostEnv::new();
    let cell =
        json!({"language": "python", "description": "print the FOO variable of the environment",
                      "code": "import os; print(repr(os.environ.get('FOO')))"})
        .to_string();
    let args = ["call", "--host", "eval", cell.as_str()];
    let with = env.run_with(&args, "", &[("FOO", "bar")]);
    assert!(text(&with).contains("'bar'"), "{with:?}");
    let without = env.run(&args, "");
    assert!(text(&without).contains("None"), "{without:?}");
    // Where the caller runs (its terminal, its agent session) parts no hosts.
    let session = env.run_with(
        &args,
        "",
        &[("CLAUDE_CODE_SESSION_ID", "s2"), ("TERM_SESSION_ID", "t2")],
    );
    assert!(text(&session).contains("None"), "{session:?}");
    let status = text(&env.run(&["host", "--status"], ""));
    assert_eq!(
        status.lines().count(),
        2,
        "two hosts of this root: {status}"
    );
    let stopped = text(&env.run(&["host", "--stop"], ""));
    assert_eq!(
        stopped.matches("stopped the tether host for").count(),
        2,
        "{stopped}"
    );
}

#[test]
fn the_host_idles_out_and_takes_its_servers_with_it() {
    let env = HostEnv::new();
    std::fs::write(env.cfg.join("tether.toml"), "[host]\nidle_exit_s = 2\n").unwrap();
    let hover = r#"{"action": "hover", "file": "a.py", "line": 1, "symbol": "f"}"#;
    let out = env.run(&["call", "--host", "lsp", hover], "");
    assert!(text(&out).contains("def f"), "{out:?}");
    let pid = env.host_pid();
    let servers = pyright_children(pid);
    assert_eq!(servers.len(), 1);
    assert!(
        gone_within(pid, Duration::from_secs(15)),
        "the host idled on"
    );
    for server in servers {
        assert!(
            gone_within(server, Duration::from_secs(5)),
            "pyright outlived the host"
        );
    }
    // The socket is private to this user, in a folder only this user may enter.
    use std::os::unix::fs::PermissionsExt;
    let dir = env.runtime.join("tether");
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

#[test]
fn stop_ends_the_host_and_its_servers() {
    let env = HostEnv::new();
    let hover = r#"{"action": "hover", "file": "a.py", "line": 1, "symbol": "f"}"#;
    assert!(text(&env.run(&["call", "--host", "lsp", hover], "")).contains("def f"));
    let pid = env.host_pid();
    let servers = pyright_children(pid);
    let socket = env.status()["socket"].as_str().unwrap().to_string();
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let stopped = env.run(&["host", "--stop"], "");
    assert!(text(&stopped).contains("stopped"), "{stopped:?}");
    assert!(!alive(pid));
    for server in servers {
        assert!(
            gone_within(server, Duration::from_secs(5)),
            "pyright outlived the host"
        );
    }
    assert!(text(&env.run(&["host", "--status"], "")).contains("no tether host runs"));
}

#[test]
fn claude_hooks_report_what_the_agents_own_edit_brought() {
    let env = HostEnv::new();
    let file = env.ws.join("a.py");
    let edit = json!({"file_path": file, "old_string": "return x", "new_string": "return x\n\ny: str = f(1)"});
    let pre = env.run(
        &["hook", "claude"],
        &claude_event(&env, "PreToolUse", "Edit", "t1", edit.clone()),
    );
    assert_eq!(
        context_of(&pre),
        Value::Null,
        "nothing to say before the edit"
    );
    std::fs::write(
        &file,
        "def f(x: int) -> int:\n    return x\n\ny: str = f(1)\n",
    )
    .unwrap();
    let post = env.run(
        &["hook", "claude"],
        &claude_event(&env, "PostToolUse", "Edit", "t1", edit),
    );
    let said = context_of(&post);
    assert_eq!(said["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    let context = said["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    // A cold host may not have its server's answer before the edit within the baseline
    // budget: then the problem is said with no baseline, never new, and never clean.
    let cold = "a.py: unavailable (no baseline: the server was not ready before this write); 1 problem now";
    assert!(
        context.contains("a.py: 1 new problem") || context.contains(cold),
        "{context}"
    );
    assert!(context.contains("reportAssignmentType"), "{context}");
    assert!(
        said.get("decision").is_none(),
        "never blocks unless asked: {said}"
    );

    // With --block-on-new-errors, an edit bringing an error blocks; the old one is not new.
    let edit2 =
        json!({"file_path": file, "old_string": "f(1)", "new_string": "f(1)\nz: int = 's'"});
    let pre = claude_event(&env, "PreToolUse", "Edit", "t2", edit2.clone());
    assert_eq!(context_of(&env.run(&["hook", "claude"], &pre)), Value::Null);
    std::fs::write(
        &file,
        "def f(x: int) -> int:\n    return x\n\ny: str = f(1)\nz: int = 's'\n",
    )
    .unwrap();
    let post = claude_event(&env, "PostToolUse", "Edit", "t2", edit2);
    let said = context_of(&env.run(&["hook", "claude", "--block-on-new-errors"], &post));
    assert_eq!(said["decision"], "block", "{said}");
    let reason = said["reason"].as_str().unwrap();
    assert!(reason.contains("1 new problem; still 1 more"), "{reason}");
    // The report is said once, as the reason, not again as context beside it.
    assert!(said.get("hookSpecificOutput").is_none(), "{said}");

    // A shell command's edit is seen by the watch and told on the next event.
    std::fs::write(&file, "def f(x: int) -> int:\n    return x\n").unwrap();
    let context = context_after_shell(&env, 30);
    assert!(context.contains("outside change to a.py"), "{context}");

    // An edit whose PreToolUse was never seen is reported without a baseline, never as clean.
    let write = json!({"file_path": env.ws.join("b.py"), "content": "q: int = 'no'\n"});
    std::fs::write(env.ws.join("b.py"), "q: int = 'no'\n").unwrap();
    let post = claude_event(&env, "PostToolUse", "Write", "t3", write);
    let said = context_of(&env.run(&["hook", "claude"], &post));
    let context = said["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("b.py") && context.contains("baseline"),
        "{context}"
    );
    assert_eq!(env.status()["hook_sessions"], 1);
    let end = json!({"session_id": "session-1", "hook_event_name": "SessionEnd", "cwd": env.ws});
    assert_eq!(
        context_of(&env.run(&["hook", "claude"], &end.to_string())),
        Value::Null
    );
    assert_eq!(env.status()["hook_sessions"], 0);
}

/// Break, fix, break again through the hooks, on a warm host: each answer for the caller the
/// edit broke is that edit's, never a late answer for the one before (pyright publishes the
/// fix's state after the next break sometimes).
#[test]
fn break_fix_break_through_the_hooks_is_each_answered_for_itself() {
    let env = HostEnv::new();
    let file = env.ws.join("a.py");
    let good = "def f(x: int) -> int:\n    return x\n";
    let bad = "def f(x: int, y: int) -> int:\n    return x\n";
    std::fs::write(
        env.ws.join("caller.py"),
        "from a import f\n\nv: int = f(1)\n",
    )
    .unwrap();
    // Warm: the host runs, and its pyright has answered once.
    let args = json!({"action": "diagnostics", "file": "caller.py"}).to_string();
    let warm = text(&env.run(&["call", "--host", "lsp", &args], ""));
    assert!(warm.contains("no errors"), "{warm}");
    let mut told = Vec::new();
    for (n, (from, to)) in [(good, bad), (bad, good), (good, bad)]
        .into_iter()
        .enumerate()
    {
        let edit = json!({"file_path": file, "old_string": from, "new_string": to});
        let id = format!("t{n}");
        let pre = claude_event(&env, "PreToolUse", "Edit", &id, edit.clone());
        let _ = context_of(&env.run(&["hook", "claude"], &pre));
        std::fs::write(&file, to).unwrap();
        let post = claude_event(&env, "PostToolUse", "Edit", &id, edit);
        let said = context_of(&env.run(&["hook", "claude"], &post));
        let mut step = said["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or("")
            .to_string();
        // A hook answers at once; what the server says of the caller comes on a later event.
        for m in 0..75 {
            if step.contains("caller.py") {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
            let bash = claude_event(
                &env,
                "PostToolUse",
                "Bash",
                &format!("b{n}-{m}"),
                json!({"command": "true"}),
            );
            let said = context_of(&env.run(&["hook", "claude"], &bash));
            step.push_str(
                said["hookSpecificOutput"]["additionalContext"]
                    .as_str()
                    .unwrap_or(""),
            );
        }
        told.push(step);
    }
    let all = told.join("\n---\n");
    let caller = "caller.py (another file, not written)";
    assert!(
        told[0].contains(&format!("{caller}: 1 new problem")),
        "{all}"
    );
    assert!(
        told[1].contains(&format!("{caller}: fixed 1 problem")),
        "{all}"
    );
    assert!(
        told[2].contains(&format!("{caller}: 1 new problem")),
        "{all}"
    );
    assert!(!told[2].contains("fixed"), "{all}");
    // Nothing later takes it back: a shell command's event waits for every answer still owed.
    let bash = claude_event(
        &env,
        "PostToolUse",
        "Bash",
        "last",
        json!({"command": "true"}),
    );
    let later = context_of(&env.run(&["hook", "claude"], &bash));
    assert!(!later.to_string().contains("fixed"), "{all}\n---\n{later}");
}

#[test]
fn a_codex_patch_is_reported_and_a_hook_that_cannot_reach_a_host_says_so() {
    let env = HostEnv::new();
    let patch =
        "*** Begin Patch\n*** Update File: a.py\n@@\n return x\n+\n+y: str = f(1)\n*** End Patch\n";
    let event = |name: &str| {
        json!({"session_id": "c-1", "turn_id": "t", "cwd": env.ws, "hook_event_name": name,
               "model": "gpt-5.5", "permission_mode": "bypassPermissions",
               "tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_use_id": "call_1"})
        .to_string()
    };
    assert_eq!(
        context_of(&env.run(&["hook", "codex"], &event("PreToolUse"))),
        Value::Null
    );
    std::fs::write(
        env.ws.join("a.py"),
        "def f(x: int) -> int:\n    return x\n\ny: str = f(1)\n",
    )
    .unwrap();
    let said = context_of(&env.run(&["hook", "codex"], &event("PostToolUse")));
    let context = said["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    // A cold host may not have its server's answer before the edit within the baseline
    // budget: then the problem is said with no baseline, never new, and never clean.
    let cold = "a.py: unavailable (no baseline: the server was not ready before this write); 1 problem now";
    assert!(
        context.contains("a.py: 1 new problem") || context.contains(cold),
        "{context}"
    );
    // Codex refuses unknown fields in a hook's answer: only these two keys.
    let keys: Vec<&String> = said["hookSpecificOutput"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["additionalContext", "hookEventName"]);
    // With the host turned off, the model is told the edit went unchecked.
    std::fs::write(env.cfg.join("tether.toml"), "[host]\nenabled = false\n").unwrap();
    let said = context_of(&env.run(&["hook", "codex"], &event("PostToolUse")));
    let context = said["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("could not check this edit"), "{context}");
    // Never exit 2, which the agents take as blocking: tether's mistake is not the model's.
    let bad = env.run(&["hook", "gemini"], &event("PostToolUse"));
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown agent \"gemini\""));
}
