//! A workspace whose warm host is its own (config, state and runtime folders of its own), and
//! what the host tests ask of processes.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Mcp;

/// A workspace with its own config, state and runtime folders, so its host is its own; the
/// host is stopped when the test ends.
pub struct HostEnv {
    pub _dir: tempfile::TempDir,
    pub ws: PathBuf,
    pub cfg: PathBuf,
    pub state: PathBuf,
    pub runtime: PathBuf,
    /// The tether binary the front ends run.
    pub binary: PathBuf,
    /// PATH for the front ends (and so the host), when not this process's.
    pub path: Option<String>,
}

impl HostEnv {
    pub fn new() -> HostEnv {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let (cfg, state, runtime) = (
            dir.path().join("cfg"),
            dir.path().join("state"),
            dir.path().join("run"),
        );
        for d in [&ws, &cfg, &state, &runtime] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(ws.join("pyproject.toml"), "[project]\nname = \"w\"\n").unwrap();
        std::fs::write(ws.join("a.py"), "def f(x: int) -> int:\n    return x\n").unwrap();
        HostEnv {
            _dir: dir,
            ws,
            cfg,
            state,
            runtime,
            binary: PathBuf::from(env!("CARGO_BIN_EXE_tether")),
            path: None,
        }
    }

    /// The same, with a copy of tether alone in a folder, without the relay binary beside it.
    pub fn without_relay_binary() -> HostEnv {
        let mut env = HostEnv::new();
        let alone = env._dir.path().join("alone");
        std::fs::create_dir(&alone).unwrap();
        env.binary = alone.join("tether");
        std::fs::copy(env!("CARGO_BIN_EXE_tether"), &env.binary).unwrap();
        env
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            .current_dir(&self.ws)
            .env("TETHER_CONFIG_DIR", &self.cfg)
            .env("TETHER_STATE_DIR", &self.state)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .env_remove("TETHER_HOST");
        if let Some(path) = &self.path {
            command.env("PATH", path);
        }
        command
    }

    pub fn run(&self, args: &[&str], stdin: &str) -> Output {
        self.run_with(args, stdin, &[])
    }

    /// Runs tether with `vars` added to its environment.
    pub fn run_with(&self, args: &[&str], stdin: &str, vars: &[(&str, &str)]) -> Output {
        let mut child = self
            .command(args)
            .envs(vars.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        // A front end may stop reading early (an event larger than it reads): not an error.
        let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
        child.wait_with_output().unwrap()
    }

    pub fn status(&self) -> Value {
        let out = self.run(&["host", "--status"], "");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    }

    pub fn host_pid(&self) -> u32 {
        let status = self.status();
        status["pid"]
            .as_u64()
            .unwrap_or_else(|| panic!("no host runs: {status}")) as u32
    }

    pub fn serve(&self) -> Mcp {
        Mcp::start(self.command(&["serve", "--host"]))
    }
}

impl Drop for HostEnv {
    fn drop(&mut self) {
        let _ = self.run(&["host", "--stop"], "");
    }
}

/// Every text block of a tool call's result, as the model reads them.
pub fn call(mcp: &mut Mcp, id: u64, tool: &str, arguments: Value) -> String {
    let reply = mcp.request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    let blocks = reply["result"]["content"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let texts: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    texts.join("\n")
}

pub fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

pub fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

pub fn gone_within(pid: u32, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// The pyright processes whose parent is `pid`.
pub fn pyright_children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
        let cmdline = std::fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
        let after = stat.rsplit(')').next().unwrap_or("");
        let ppid: u32 = after
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if ppid == pid && String::from_utf8_lossy(&cmdline).contains("pyright") {
            found.push(child);
        }
    }
    found
}

/// One hook event as Claude Code sends it, for an Edit of `file` (or any other tool).
pub fn claude_event(env: &HostEnv, name: &str, tool: &str, id: &str, input: Value) -> String {
    json!({
        "session_id": "session-1", "transcript_path": "/dev/null", "cwd": env.ws,
        "permission_mode": "acceptEdits", "hook_event_name": name, "tool_name": tool,
        "tool_input": input, "tool_use_id": id,
    })
    .to_string()
}

pub fn context_of(out: &Output) -> Value {
    assert!(out.status.success(), "{out:?}");
    let text = text(out);
    if text.trim().is_empty() {
        return Value::Null;
    }
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Sends the session's Bash PostToolUse events (as after a shell command) every 250 ms, at
/// most `tries` of them, until one is answered with context; that context (empty if none).
pub fn context_after_shell(env: &HostEnv, tries: usize) -> String {
    for n in 0..tries {
        std::thread::sleep(Duration::from_millis(250));
        let bash = json!({"command": "sed -i ..."});
        let event = claude_event(env, "PostToolUse", "Bash", &format!("shell-{n}"), bash);
        let told = context_of(&env.run(&["hook", "claude"], &event));
        if let Some(text) = told["hookSpecificOutput"]["additionalContext"].as_str() {
            return text.to_string();
        }
    }
    String::new()
}
