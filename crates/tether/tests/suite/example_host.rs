//! The embedding example builds and runs against a real workspace: it reads, and its own
//! writer, wrapped with `wrap_write`, reports what its save broke (real pyright).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

/// Builds the example once and runs it over `dir` with `args`, with generous budgets in the
/// user config.
fn host(dir: &Path, args: &[&str]) -> Output {
    static BUILT: std::sync::Once = std::sync::Once::new();
    BUILT.call_once(|| {
        let status = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "--example", "host", "-p", "tether"])
            .status()
            .unwrap();
        assert!(status.success());
    });
    let cfg = dir.join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    let budgets = "[lsp]\nrequest_timeout_s = 120\ninit_timeout_s = 120\n\
                   [lsp.diagnostics]\nwait_ms = 30000\nbaseline_ms = 30000\n";
    std::fs::write(cfg.join("tether.toml"), budgets).unwrap();
    let target = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| format!("{}/../../target", env!("CARGO_MANIFEST_DIR")));
    Command::new(format!("{target}/debug/examples/host"))
        .arg(dir.join("ws"))
        .args(args)
        .env("TETHER_CONFIG_DIR", &cfg)
        .env("TETHER_STATE_DIR", dir.join("state"))
        .output()
        .unwrap()
}

fn stdout_of(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn example_host_lists_plan_tools_and_reads() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    std::fs::write(dir.path().join("ws/hello.txt"), "one\ntwo\n").unwrap();
    let text = stdout_of(&host(dir.path(), &["hello.txt"]));
    assert!(
        text.contains("plan mode sees: ast_grep, lsp, read\n"),
        "{text}"
    );
    assert!(text.contains("     2\ttwo"), "{text}");
}

#[test]
fn example_hosts_own_writer_reports_what_its_save_broke() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        ws.join("pyproject.toml"),
        "[project]\nname = \"w\"\nversion = \"0.1\"\n",
    )
    .unwrap();
    std::fs::write(ws.join("m.py"), "def f() -> int:\n    return 1\n").unwrap();
    let broken = "def f() -> int:\n    return \"one\"\n";
    let text = stdout_of(&host(dir.path(), &["m.py", broken]));
    assert!(text.contains("saved m.py"), "{text}");
    assert!(
        text.contains("diagnostics (pyright) after this write:\n  m.py: 1 new problem\n    line 2 (new): error"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(ws.join("m.py")).unwrap(), broken);
}

/// docs/architecture.md ("How to add a tool") quotes the example's tool as it is.
#[test]
fn the_architecture_page_quotes_the_example_tool_as_it_is() {
    let quoted = common::documented_example("How to add a tool", "rust");
    let example = include_str!("../../examples/host.rs");
    assert!(
        example.contains(&quoted),
        "the page's quote is not in examples/host.rs:\n{quoted}"
    );
}
