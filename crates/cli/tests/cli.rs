//! The `tether` binary as a script sees it: exit codes, `call --stdin` in one run, `tools
//! --json`, and the trust rule for commands and read roots a workspace file defines.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

struct Env {
    _outer: tempfile::TempDir,
    ws: std::path::PathBuf,
    cfg: std::path::PathBuf,
}

fn env() -> Env {
    let outer = tempfile::tempdir().unwrap();
    let ws = outer.path().join("ws");
    let cfg = outer.path().join("cfg");
    std::fs::create_dir(&ws).unwrap();
    Env {
        ws,
        cfg,
        _outer: outer,
    }
}

fn tether(env: &Env, args: &[&str], stdin: Option<&str>) -> Output {
    tether_with(env, args, stdin, &[])
}

/// [`tether`] with `vars` set (an empty value unsets the variable).
fn tether_with(env: &Env, args: &[&str], stdin: Option<&str>, vars: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tether"));
    for (k, v) in vars {
        match v.is_empty() {
            true => command.env_remove(k),
            false => command.env(k, v),
        };
    }
    let mut child = command
        .args(args)
        .current_dir(&env.ws)
        .env("TETHER_CONFIG_DIR", &env.cfg)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn exit_codes_separate_success_tool_errors_and_usage_errors() {
    let e = env();
    let ok = tether(
        &e,
        &["call", "write", r#"{"path": "a.txt", "content": "hi\n"}"#],
        None,
    );
    assert_eq!(ok.status.code(), Some(0), "{}", err(&ok));
    assert_eq!(
        out(&ok).trim(),
        "created a.txt (1 line)\n\nwrite #1: nothing to report"
    );

    let tool_err = tether(&e, &["call", "read", r#"{"path": "missing.txt"}"#], None);
    assert_eq!(tool_err.status.code(), Some(1));
    assert!(out(&tool_err).starts_with("error: "), "{}", out(&tool_err));

    let bad_json = tether(&e, &["call", "read", "{path:"], None);
    assert_eq!(bad_json.status.code(), Some(2));
    assert!(
        err(&bad_json).contains("not valid JSON"),
        "{}",
        err(&bad_json)
    );
    assert!(err(&bad_json).contains("\"path\""), "{}", err(&bad_json));

    let bad_args = tether(&e, &["call", "read", r#"{"file": "a.txt"}"#], None);
    assert_eq!(bad_args.status.code(), Some(2));
    assert!(
        err(&bad_args).contains("\"path\": string (required)"),
        "{}",
        err(&bad_args)
    );
    // Broken JSON gets the same compact form as any other bad argument.
    let head = "tether: invalid arguments for `read`: ";
    let tail = err(&bad_args)
        .split(". Expected ")
        .nth(1)
        .unwrap()
        .to_string();
    assert!(err(&bad_json).starts_with(head), "{}", err(&bad_json));
    assert!(err(&bad_json).ends_with(&tail), "{}", err(&bad_json));
    assert_eq!(err(&bad_json).lines().count(), 1, "{}", err(&bad_json));
    let not_object = tether(&e, &["call", "read", "[1]"], None);
    assert_eq!(not_object.status.code(), Some(2));
    insta::assert_snapshot!(err(&not_object));

    let unknown = tether(&e, &["call", "nope", "{}"], None);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(err(&unknown).contains("unknown tool `nope`"));

    let refused = tether(
        &e,
        &[
            "call",
            "--surface",
            "plan",
            "write",
            r#"{"path": "b", "content": ""}"#,
        ],
        None,
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(err(&refused).contains("write-tier"), "{}", err(&refused));
    assert!(!e.ws.join("b").exists());
}

#[test]
fn call_stdin_runs_every_line_in_one_run() {
    let e = env();
    let script = [
        r#"{"tool": "write", "args": {"path": "s.txt", "content": "one\n"}}"#,
        r#"{"tool": "edit", "args": {"path": "s.txt", "old_string": "one", "new_string": "two"}}"#,
        r#"{"tool": "read", "args": {"path": "s.txt"}}"#,
        "",
    ]
    .join("\n");
    let o = tether(&e, &["call", "--stdin"], Some(&script));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let lines: Vec<Value> = out(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert!(lines.iter().all(|l| l["ok"] == true));
    assert!(lines[2]["text"].as_str().unwrap().contains("     1\ttwo"));

    let o = tether(
        &e,
        &["call", "--stdin"],
        Some("{\"tool\": \"read\", \"args\": {\"path\": \"nope\"}}\nnot json\n"),
    );
    assert_eq!(o.status.code(), Some(2));
    let lines: Vec<Value> = out(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["ok"], false);
    assert_eq!(lines[1]["usage_error"], true);
}

#[test]
fn stdin_stages_and_resolves_in_one_run_and_one_call_warns() {
    let e = env();
    write(&e.ws.join("a.py"), "old(1)\n");
    let script = [
        r#"{"tool": "ast_edit", "args": {"pattern": "old($A)", "rewrite": "new($A)", "path": "a.py"}}"#,
        r#"{"tool": "resolve", "args": {"edit_id": "edit_1", "action": "accept"}}"#,
        "",
    ]
    .join("\n");
    let o = tether(&e, &["call", "--stdin"], Some(&script));
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert_eq!(
        std::fs::read_to_string(e.ws.join("a.py")).unwrap(),
        "new(1)\n"
    );

    let unresolved = r#"{"tool": "ast_edit", "args": {"pattern": "new($A)", "rewrite": "old($A)", "path": "a.py"}}"#;
    let o = tether(&e, &["call", "--stdin"], Some(unresolved));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        err(&o).contains("staged edit edit_1 was never resolved and is dropped"),
        "{}",
        err(&o)
    );
    let o = tether(&e, &["call", "--stdin"], Some(&script));
    assert!(!err(&o).contains("never resolved"), "{}", err(&o));

    let one = r#"{"pattern": "new($A)", "rewrite": "old($A)", "path": "a.py"}"#;
    let o = tether(&e, &["call", "ast_edit", one], None);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        out(&o).starts_with("(proposed) 1 replacement in 1 file"),
        "{}",
        out(&o)
    );
    assert!(
        err(&o).contains("staged edit edit_1 is dropped"),
        "{}",
        err(&o)
    );
    assert_eq!(
        std::fs::read_to_string(e.ws.join("a.py")).unwrap(),
        "new(1)\n"
    );
}

#[test]
fn tools_json_spells_tiers() {
    let e = env();
    let o = tether(&e, &["tools", "--json"], None);
    let list: Vec<Value> = serde_json::from_str(&out(&o)).unwrap();
    let tier = |n: &str| list.iter().find(|t| t["name"] == n).unwrap()["tier"].clone();
    assert_eq!(tier("read"), "read");
    assert_eq!(tier("apply_patch"), "write");
    assert!(list.iter().all(|t| t["input_schema"]["type"] == "object"));
    let o = tether(&e, &["tools", "--json", "--surface", "readonly"], None);
    let list: Vec<Value> = serde_json::from_str(&out(&o)).unwrap();
    assert!(list.iter().all(|t| t["tier"] == "read"), "{list:?}");
    assert!(list.iter().any(|t| t["name"] == "ast_grep"));
    assert!(!list.iter().any(|t| t["name"] == "ast_edit"));
}

#[test]
fn plan_and_readonly_say_how_they_differ() {
    let e = env();
    let help = out(&tether(&e, &["tools", "--help"], None));
    assert!(
        help.contains("plan (the main agent in") && help.contains("readonly (a read-only"),
        "{help}"
    );
    let plan = out(&tether(&e, &["tools", "--surface", "plan"], None));
    let readonly = out(&tether(&e, &["tools", "--surface", "readonly"], None));
    let (plan_head, plan_tools) = plan.split_once('\n').unwrap();
    let (ro_head, ro_tools) = readonly.split_once('\n').unwrap();
    insta::assert_snapshot!("plan_header", plan_head);
    insta::assert_snapshot!("readonly_header", ro_head);
    assert_eq!(plan_tools, ro_tools);
    assert!(
        plan_tools.lines().all(|l| l.contains(" read ")),
        "{plan_tools}"
    );
}

#[test]
fn trust_can_be_revoked() {
    let e = env();
    write(
        &e.ws.join("tether.toml"),
        "[lsp.servers.rust]\ncommand = [\"./x.sh\"]\n",
    );
    let o = tether(&e, &["trust", "--revoke"], None);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        out(&o).contains("was not trusted; nothing changed"),
        "{}",
        out(&o)
    );
    assert!(out(&tether(&e, &["trust"], None)).contains("now trusted"));
    assert!(out(&tether(&e, &["doctor"], None)).contains("workspace trusted: yes"));
    let o = tether(&e, &["trust", "--revoke"], None);
    assert!(
        out(&o).contains("is no longer trusted (removed from"),
        "{}",
        out(&o)
    );
    assert!(out(&tether(&e, &["doctor"], None)).contains("workspace trusted: no"));
    let o = tether(&e, &["trust", "--revoke"], None);
    assert!(out(&o).contains("was not trusted"), "{}", out(&o));
}

fn write(p: &Path, text: &str) {
    std::fs::write(p, text).unwrap();
}

#[test]
fn workspace_commands_and_read_roots_wait_for_trust() {
    let e = env();
    let lib = e.ws.parent().unwrap().join("lib");
    std::fs::create_dir(&lib).unwrap();
    write(&lib.join("x.rs"), "fn x() {}\n");
    let toml = format!(
        "[lsp.servers.rust]\ncommand = [\"./evil.sh\"]\n[files]\nread_roots = [\"{}\"]\n",
        lib.display()
    );
    write(&e.ws.join("tether.toml"), &toml);
    let lib_file = lib.join("x.rs").display().to_string();
    let read = format!(r#"{{"path": "{lib_file}"}}"#);

    let doctor = out(&tether(&e, &["doctor"], None));
    assert!(doctor.contains("workspace trusted: no"), "{doctor}");
    assert!(
        doctor.contains("lsp.servers.rust.command = [\"./evil.sh\"] (UNTRUSTED"),
        "{doctor}"
    );
    assert_eq!(
        tether(&e, &["call", "read", &read], None).status.code(),
        Some(1)
    );

    let trusted = tether(&e, &["trust"], None);
    assert!(out(&trusted).contains("now trusted"), "{}", out(&trusted));
    let doctor = out(&tether(&e, &["doctor"], None));
    assert!(doctor.contains("workspace trusted: yes"), "{doctor}");
    assert!(doctor.contains("(used)"), "{doctor}");
    let o = tether(&e, &["call", "read", &read], None);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(out(&tether(&e, &["trust"], None)).contains("already trusted"));
}

#[test]
fn a_damaged_trust_list_is_never_overwritten_and_doctor_explains_bad_config() {
    let e = env();
    std::fs::create_dir_all(&e.cfg).unwrap();
    write(&e.cfg.join("trusted.toml"), "roots = [");
    let o = tether(&e, &["trust"], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err(&o).contains("does not parse") && err(&o).contains("fix or delete it"),
        "{}",
        err(&o)
    );
    assert_eq!(
        std::fs::read_to_string(e.cfg.join("trusted.toml")).unwrap(),
        "roots = ["
    );

    write(&e.ws.join("tether.toml"), "approval = \"Ask\"\n");
    let o = tether(&e, &["doctor"], None);
    assert_eq!(o.status.code(), Some(1));
    let text = out(&o);
    assert!(text.contains("the run cannot start"), "{text}");
    assert!(
        text.contains(&e.ws.join("tether.toml").display().to_string()),
        "{text}"
    );
}

#[test]
fn a_tether_surface_that_names_no_surface_is_refused_never_widened() {
    let e = env();
    for value in ["PLAN", "plan ", "garbage", "readonly,agent"] {
        let o = tether_with(&e, &["tools"], None, &[("TETHER_SURFACE", value)]);
        assert_eq!(o.status.code(), Some(2), "{value:?}: {}", out(&o));
        assert!(err(&o).contains("TETHER_SURFACE"), "{value:?}: {}", err(&o));
        assert!(
            !out(&o).contains("write"),
            "{value:?} served tools: {}",
            out(&o)
        );
    }
    let plan = tether_with(&e, &["tools"], None, &[("TETHER_SURFACE", "plan")]);
    assert!(plan.status.success(), "{}", err(&plan));
    assert!(out(&plan).contains("read") && !out(&plan).contains("apply_patch"));
}

/// A program the workspace ships that records, in `ran.log`, that it ran.
fn shipped(path: &Path, log: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!("#!/bin/sh\necho {} >> {}\n", path.display(), log.display()),
    )
    .unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

#[test]
fn doctor_runs_nothing_the_workspace_ships() {
    let e = env();
    let log = e.ws.parent().unwrap().join("ran.log");
    shipped(&e.ws.join(".venv/bin/python"), &log);
    for tool in ["rustc", "cargo", "node"] {
        shipped(&e.ws.join("tc/bin").join(tool), &log);
    }
    write(
        &e.ws.join("rust-toolchain.toml"),
        "[toolchain]\npath = \"/proc/self/cwd/tc\"\n",
    );
    write(
        &e.ws.join("Cargo.toml"),
        "[package]\nname = \"d\"\nversion = \"0.1.0\"\n",
    );
    let import_marker = format!("open('{}', 'a').write('imported\\n')\n", log.display());
    for module in ["platform.py", "debugpy.py", "importlib.py"] {
        write(&e.ws.join(module), &import_marker);
    }
    shipped(&e.ws.join("bin/node"), &log);
    let path = format!("bin:{}", std::env::var("PATH").unwrap_or_default());
    // `cargo test` through rustup passes its toolchain down; a user's shell does not.
    let o = tether_with(
        &e,
        &["doctor"],
        None,
        &[("RUSTUP_TOOLCHAIN", ""), ("PATH", &path)],
    );
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    let report = out(&o);
    assert!(
        report.contains("inside the workspace, which is not trusted, so doctor does not run it"),
        "{report}"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap_or_default(),
        "",
        "doctor ran what the workspace ships; it said:\n{report}"
    );
}
