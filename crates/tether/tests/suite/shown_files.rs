//! Every file tether shows goes through the door: a location the real pyright names outside
//! what `read` may read (here a workspace `*.py` symlink to a secret elsewhere) is printed as
//! `path:line` with a reason, never with its text; and on the read-only surface of an
//! untrusted workspace a hover declared there is withheld too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use serde_json::{Value, json};
use tether::{Run, Surface};
use tokio_util::sync::CancellationToken;

/// A string no answer may contain: it is only in the file outside the workspace.
const CANARY: &str = "CANARY_7f3a9e";

async fn plan(run: &Run, args: Value) -> String {
    run.runtime()
        .call(Surface::Plan, "lsp", args, CancellationToken::new())
        .await
        .map(|o| o.to_text())
        .unwrap_or_else(|e| format!("ERROR {e}"))
}

fn at(action: &str, line: usize, symbol: &str) -> Value {
    json!({"action": action, "file": "main.py", "line": line, "symbol": symbol})
}

#[test]
fn pyright_never_shows_a_file_outside_the_workspace_through_a_symlink() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|d| d.join("pyright-langserver").is_file()),
        "pyright-langserver is not on PATH: run scripts/test, which installs it"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let (ws, outside) = (dir.path().join("ws"), dir.path().join("outside"));
        let secret = format!(
            "\"\"\"{CANARY} module\"\"\"\n{CANARY}_TOKEN = \"{CANARY}\"\n\n\ndef leak() -> str:\n    \"\"\"{CANARY} doc\"\"\"\n    return {CANARY}_TOKEN\n"
        );
        common::write(&outside, "credentials.py", &secret);
        let main = format!("import secret\n\nprint(secret.{CANARY}_TOKEN)\nsecret.leak()\n");
        common::write(&ws, "main.py", &main);
        common::write(&ws, "pyproject.toml", "[project]\nname = \"m\"\nversion = \"0.1\"\n");
        std::os::unix::fs::symlink(outside.join("credentials.py"), ws.join("secret.py")).unwrap();
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);

        let def = plan(&run, at("definition", 3, "_TOKEN")).await;
        assert!(!def.contains(&format!("= \"{CANARY}")), "{def}");
        assert!(def.contains(":2  (outside the workspace: not shown)"), "{def}");
        let refs = plan(&run, at("references", 3, "_TOKEN")).await;
        assert!(!refs.contains(&format!("= \"{CANARY}")), "{refs}");
        assert!(refs.contains(":2  (outside the workspace: not shown)"), "{refs}");
        assert!(refs.contains(&format!("main.py:3  {CANARY}_TOKEN  | print(")), "{refs}");
        let leak = plan(&run, at("definition", 4, "leak")).await;
        assert!(leak.contains(":5  (outside the workspace: not shown)"), "{leak}");
        let query = json!({"action": "symbols", "query": "leak", "file": "main.py"});
        let symbols = plan(&run, query).await;
        assert!(symbols.contains(":5  (outside the workspace: not shown)"), "{symbols}");
        for (line, symbol) in [(4, "leak"), (3, "_TOKEN"), (1, "secret")] {
            let hover = plan(&run, at("hover", line, symbol)).await;
            assert!(!hover.contains(CANARY), "hover of {symbol}: {hover}");
            assert!(hover.contains("outside the workspace: not shown"), "{hover}");
        }
        // A hover on what the workspace itself declares is still shown.
        let own = plan(&run, at("hover", 3, "print")).await;
        assert!(own.contains("def print("), "{own}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// The program traps (`int3`) in lines that a `#line` directive attributes to `{named}`, so
/// the adapter names that file as the top frame's source.
const NAMED_PROG: &str = "#include <stdio.h>\nint main(void) {\n    int x = 1;\n    printf(\"%d\\n\", x);\n#line 1 \"{named}\"\n    __asm__ volatile(\"int3\");\n    x = x + 41;\n    printf(\"%d\\n\", x);\n    return 0;\n}\n";

#[test]
fn lldb_never_shows_a_frame_source_outside_the_workspace() {
    let _one_at_a_time = common::one_at_a_time();
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|d| d.join("lldb-dap-19").is_file()),
        "lldb-dap-19 is not on PATH: run scripts/test, which installs lldb-19"
    );
    let dir = tempfile::tempdir().unwrap();
    let (ws, outside) = (dir.path().join("ws"), dir.path().join("outside"));
    common::write(
        &outside,
        "creds.txt",
        &format!("[default]\ntoken = {CANARY}\n"),
    );
    common::write(
        &ws,
        "Makefile",
        "prog: prog.c\n\tcc -g -O0 -o prog prog.c\n",
    );
    let named = ws.join("secret.c");
    common::write(
        &ws,
        "prog.c",
        &NAMED_PROG.replace("{named}", &named.display().to_string()),
    );
    let built = std::process::Command::new("cc")
        .args(["-g", "-O0", "-o", "prog", "prog.c"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(built.success());
    std::os::unix::fs::symlink(outside.join("creds.txt"), &named).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let config = "[debug]\nstop_wait_s = 60\nrequest_timeout_s = 60\n";
        let run = common::run_with_config(dir.path(), config);
        let launch = json!({"action": "launch", "program": "prog"});
        let out = common::call_text(&run, "debug", launch).await;
        assert!(!out.contains(CANARY), "{out}");
        assert!(out.contains("secret.c:2 main"), "{out}");
        assert!(
            out.contains("> 2: (outside the workspace: not shown)"),
            "{out}"
        );
        let gone = common::call_text(&run, "debug", json!({"action": "terminate"})).await;
        assert!(gone.contains("terminated the session"), "{gone}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}
