//! Fails on a forbidden dependency edge between the workspace's crates.
//! Layers: base -> fs, proc, rpc -> toolchain -> tool, relay -> {run, capability crates} ->
//! tether -> mcp -> host -> cli.
//! Crates of one layer never depend on one another, so capability crates meet only through
//! `tether-tool` seams and `tether-fs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use serde_json::Value;

fn rank(name: &str) -> Option<u8> {
    Some(match name {
        "tether-base" => 0,
        "tether-fs" | "tether-proc" | "tether-rpc" | "tether-fake-lsp" => 1,
        "tether-toolchain" => 2,
        "tether-tool" | "tether-relay" => 3,
        "tether-run" | "tether-files" | "tether-structural" | "tether-lsp" | "tether-dap"
        | "tether-kernel" | "tether-workers" => 4,
        "tether" => 5,
        "tether-mcp" => 6,
        "tether-host" => 7,
        "tether-cli" => 8,
        _ => return None,
    })
}

#[test]
fn no_forbidden_dependency_edges() {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut bad = Vec::new();
    let mut seen = 0;
    for pkg in meta["packages"].as_array().unwrap() {
        let from = pkg["name"].as_str().unwrap();
        let from_rank = rank(from).unwrap_or_else(|| panic!("crate {from} has no layer: add it"));
        seen += 1;
        for dep in pkg["dependencies"].as_array().unwrap() {
            let to = dep["name"].as_str().unwrap();
            if dep["kind"].as_str() == Some("dev") {
                continue;
            }
            let Some(to_rank) = rank(to) else { continue };
            if to_rank >= from_rank {
                bad.push(format!("{from} -> {to}"));
            }
        }
    }
    assert!(seen >= 8, "expected the whole workspace, saw {seen} crates");
    assert!(bad.is_empty(), "forbidden dependency edges: {bad:?}");
}
