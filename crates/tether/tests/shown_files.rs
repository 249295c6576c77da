//! Every file tether shows goes through the door: a location the real pyright names outside
//! what `read` may read (here a workspace `*.py` symlink to a secret elsewhere) is printed as
//! `path:line` with a reason, never with its text; and on the read-only surface of an
//! untrusted workspace a hover declared there is withheld too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

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
