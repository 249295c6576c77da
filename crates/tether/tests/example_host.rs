//! The embedding example builds and runs against a real workspace.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

#[test]
fn example_host_lists_plan_tools_and_reads() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "one\ntwo\n").unwrap();
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--example", "host", "-p", "tether"])
        .status()
        .unwrap();
    assert!(status.success());
    let target = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| format!("{}/../../target", env!("CARGO_MANIFEST_DIR")));
    let out = Command::new(format!("{target}/debug/examples/host"))
        .args([dir.path().to_str().unwrap(), "hello.txt"])
        .env("TETHER_CONFIG_DIR", dir.path().join("cfg"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("plan mode sees: ast_grep, lsp, read\n"),
        "{text}"
    );
    assert!(text.contains("     2\ttwo"), "{text}");
}
