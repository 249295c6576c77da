//! Restricted mode against what a repository can ship besides a build script: a toolchain file
//! naming a toolchain inside it, cargo wrappers and rustflags, cargo `[env]`, a
//! `rust-analyzer.toml`; and, trusted, the plan and readonly surfaces, which must run nothing
//! that writes. Each drives the real rust-analyzer (through the rustup proxy, as installed).
//! A test binary of its own, apart from `suite`: it changes the process's environment.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "suite/common/mod.rs"]
mod common;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use tether::{Run, RunBuilder, Surface, TrustStore};
use tokio_util::sync::CancellationToken;

const MANIFEST: &str = "[package]\nname = \"shipped\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
const LIB: &str = "pub fn answer() -> u32 {\n    42\n}\n";

/// A crate whose repository ships programs that record themselves in `ran.log` when run.
fn hostile_crate(ws: &Path) {
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("Cargo.toml"), MANIFEST).unwrap();
    std::fs::write(ws.join("src/lib.rs"), LIB).unwrap();
    let log = ws.join("ran.log");
    let program = |path: &Path, name: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let body = format!(
            "#!/bin/sh\necho {name} \"$@\" >> {}\nexit 1\n",
            log.display()
        );
        std::fs::write(path, body).unwrap();
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    };
    // rustup accepts an absolute toolchain path; /proc/self/cwd is the workspace for a child
    // started there.
    std::fs::write(
        ws.join("rust-toolchain.toml"),
        "[toolchain]\npath = \"/proc/self/cwd/tc\"\n",
    )
    .unwrap();
    for tool in ["rust-analyzer", "cargo", "rustc"] {
        program(&ws.join("tc/bin").join(tool), &format!("toolchain-{tool}"));
    }
    program(&ws.join("tools/wrap.sh"), "rustc-wrapper");
    program(&ws.join("tools/rustc.sh"), "build-rustc");
    std::fs::create_dir_all(ws.join(".cargo")).unwrap();
    std::fs::write(
        ws.join(".cargo/config.toml"),
        format!(
            "[build]\nrustc-wrapper = \"{0}/tools/wrap.sh\"\nrustc-workspace-wrapper = \
             \"{0}/tools/wrap.sh\"\nrustc = \"{0}/tools/rustc.sh\"\nrustflags = \
             [\"--no-such-flag\"]\n",
            ws.display()
        ),
    )
    .unwrap();
}

fn run_on(dir: &Path, surface: Surface) -> Run {
    let cfg = dir.join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("tether.toml"), common::LSP_BUDGETS).unwrap();
    RunBuilder::new(dir.join("ws"))
        .user_config_dir(&cfg)
        .state_dir(dir.join("state"))
        .surface(surface)
        .build()
        .unwrap()
}

async fn lsp(run: &Run, surface: Surface, args: serde_json::Value) -> String {
    run.runtime()
        .call(surface, "lsp", args, CancellationToken::new())
        .await
        .map(|o| o.to_text())
        .unwrap_or_else(|e| e.to_string())
}

fn ran(ws: &Path) -> String {
    std::fs::read_to_string(ws.join("ran.log")).unwrap_or_default()
}

#[test]
fn untrusted_rust_analyzer_runs_no_toolchain_or_wrapper_of_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    hostile_crate(&ws);
    // `cargo test` through rustup passes its own toolchain down, which would hide the
    // repository's toolchain file; a user's shell has no such variable.
    // SAFETY: std's own environment lock covers std's readers; no C code here reads it.
    unsafe { std::env::remove_var("RUSTUP_TOOLCHAIN") };
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        // The readonly surface, warmed as `tether serve` warms it, before any call.
        let run = run_on(dir.path(), Surface::ReadOnlySubagent);
        run.warm().await;
        let hover = json!({"action": "hover", "file": "src/lib.rs", "line": 1, "symbol": "answer"});
        let out = lsp(&run, Surface::ReadOnlySubagent, hover).await;
        assert!(out.contains("pub fn answer() -> u32"), "{out}");
        let status = lsp(&run, Surface::ReadOnlySubagent, json!({"action": "status"})).await;
        assert!(
            status.contains("the toolchain is the one chosen outside"),
            "{status}"
        );
        assert!(
            status.contains("no toolchain file, cargo wrapper or PATH entry"),
            "{status}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
    assert_eq!(ran(&ws), "", "the repository's programs ran");
}

#[test]
fn untrusted_cargo_env_or_rust_analyzer_toml_keeps_rust_analyzer_from_starting() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    for (file, text) in [
        (".cargo/config.toml", "[env]\nLD_PRELOAD = \"./evil.so\"\n"),
        (
            "rust-analyzer.toml",
            "[cargo.buildScripts]\nenable = true\noverrideCommand = [\"./evil.sh\"]\n",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(ws.join(".cargo")).unwrap();
        std::fs::write(ws.join("Cargo.toml"), MANIFEST).unwrap();
        std::fs::write(ws.join("src/lib.rs"), LIB).unwrap();
        std::fs::write(ws.join(file), text).unwrap();
        rt.block_on(async {
            let run = run_on(dir.path(), Surface::Agent);
            let hover =
                json!({"action": "hover", "file": "src/lib.rs", "line": 1, "symbol": "answer"});
            let out = lsp(&run, Surface::Agent, hover).await;
            assert!(
                out.contains("rust-analyzer is not started") && out.contains(file),
                "{file}: {out}"
            );
            assert!(out.contains("tether trust"), "{out}");
            run.shutdown(Duration::from_secs(5)).await;
        });
    }
}

const BUILD: &str = "fn main() {\n    let dir = std::env::var(\"CARGO_MANIFEST_DIR\").unwrap();\n    std::fs::write(format!(\"{dir}/build-script-ran\"), \"yes\").unwrap();\n}\n";

#[test]
fn a_trusted_plan_surface_runs_no_build_script_and_no_project_check() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        format!("{MANIFEST}build = \"build.rs\"\n"),
    )
    .unwrap();
    std::fs::write(ws.join("build.rs"), BUILD).unwrap();
    std::fs::write(ws.join("src/lib.rs"), LIB).unwrap();
    let cfg = dir.path().join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    TrustStore::new(&cfg)
        .trust(&ws.canonicalize().unwrap())
        .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let run = run_on(dir.path(), Surface::Plan);
        let hover = json!({"action": "hover", "file": "src/lib.rs", "line": 1, "symbol": "answer"});
        let out = lsp(&run, Surface::Plan, hover).await;
        assert!(out.contains("pub fn answer() -> u32"), "{out}");
        let status = lsp(&run, Surface::Plan, json!({"action": "status"})).await;
        assert!(status.contains("off on this read-only surface"), "{status}");
        let all = lsp(
            &run,
            Surface::Plan,
            json!({"action": "diagnostics", "file": "*"}),
        )
        .await;
        assert!(all.contains("plan or readonly surface"), "{all}");
        // Loaded and answered; give a build script that would run a moment more.
        tokio::time::sleep(Duration::from_secs(3)).await;
        run.shutdown(Duration::from_secs(5)).await;
    });
    assert!(
        !ws.join("build-script-ran").exists(),
        "a build script ran on the plan surface"
    );
}

/// pyright, untrusted: a virtual environment its config names is not run, and the system
/// interpreter it asks for search paths imports nothing from the workspace.
#[test]
fn untrusted_pyright_runs_no_interpreter_or_module_of_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let log = ws.join("ran.log");
    let python = ws.join("evil/bin/python");
    std::fs::create_dir_all(python.parent().unwrap()).unwrap();
    let body = format!(
        "#!/bin/sh\necho venv-python >> {}\nexec python3 \"$@\"\n",
        log.display()
    );
    std::fs::write(&python, body).unwrap();
    std::fs::set_permissions(&python, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(ws.join("evil/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::fs::write(
        ws.join("pyrightconfig.json"),
        "{\"venvPath\": \".\", \"venv\": \"evil\"}",
    )
    .unwrap();
    for module in ["json.py", "encodings.py", "site.py"] {
        let marker = format!(
            "open({:?}, 'a').write('imported\\n')\n",
            log.display().to_string()
        );
        std::fs::write(ws.join(module), marker).unwrap();
    }
    std::fs::write(ws.join("main.py"), "import os\nx = os.getcwd()\n").unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let run = run_on(dir.path(), Surface::ReadOnlySubagent);
        let hover = json!({"action": "hover", "file": "main.py", "line": 2, "symbol": "x"});
        let out = lsp(&run, Surface::ReadOnlySubagent, hover).await;
        assert!(out.contains("x: str"), "{out}");
        run.shutdown(Duration::from_secs(5)).await;
    });
    assert_eq!(ran(&ws), "", "the repository's interpreter or modules ran");
}

/// A cold rust-analyzer, still loading the project, publishes nothing real yet: a write that
/// brings errors must not be called clean, nor may `diagnostics` say there are none.
#[test]
fn a_loading_rust_analyzer_never_calls_a_broken_file_clean() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("Cargo.toml"), MANIFEST).unwrap();
    std::fs::write(ws.join("src/lib.rs"), LIB).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let run = run_on(dir.path(), Surface::Agent);
        let broken = "pub fn answer() -> u32 {\n    let x: u32 = \"a\";\n    x +\n}\n";
        let out = run
            .runtime()
            .call(
                Surface::Agent,
                "write",
                json!({"path": "src/lib.rs", "content": broken}),
                CancellationToken::new(),
            )
            .await
            .map(|o| o.to_text())
            .unwrap_or_else(|e| e.to_string());
        eprintln!("{out}");
        assert!(
            !out.contains("src/lib.rs: clean"),
            "a broken file was called clean: {out}"
        );
        let args = json!({"action": "diagnostics", "file": "src/lib.rs"});
        let diags = lsp(&run, Surface::Agent, args).await;
        eprintln!("{diags}");
        assert!(!diags.contains("no errors or warnings"), "{diags}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}
