//! What a server may run depends on trust. Until the user trusts the workspace, nothing that
//! came with the repository runs: rust-analyzer without build scripts, proc macros or cargo
//! check; TypeScript from a global install, never the project's node_modules; Python servers
//! ask the system interpreter, never the project's `.venv`. Trusted, the project's own
//! environment is used.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::catalog::ServerEntry;

/// The options a server starts with, and what was held back.
pub struct Options {
    /// `initializationOptions`.
    pub init: Value,
    /// What `workspace/configuration` is answered with.
    pub settings: Value,
    /// What restricted mode turned off, for `status`.
    pub restricted: Option<String>,
}

fn object(v: &Value) -> Value {
    if v.is_object() { v.clone() } else { json!({}) }
}

/// The options for `entry` at `root`.
pub fn options(entry: &ServerEntry, root: &Path, trusted: bool) -> Result<Options, String> {
    let mut init = object(&entry.init_options);
    let mut settings = object(&entry.settings);
    let mut restricted = None;
    match (entry.id.as_str(), trusted) {
        ("rust-analyzer", false) => {
            init["cargo"]["buildScripts"]["enable"] = json!(false);
            init["procMacro"]["enable"] = json!(false);
            init["checkOnSave"] = json!(false);
            restricted = Some(
                "build scripts, proc macros and cargo check are off until `tether trust`".into(),
            );
        }
        // cargo check gets a target folder of its own, never the agent's lock on target/.
        ("rust-analyzer", true) => init["cargo"]["targetDir"] = json!(true),
        ("typescript-language-server", false) => {
            let tsserver = global_tsserver(root).ok_or(
                "this workspace is not trusted, so its own node_modules/typescript is not \
                 loaded, and no global TypeScript was found: install it (`npm i -g \
                 typescript`) or run `tether trust`",
            )?;
            init["tsserver"]["path"] = json!(tsserver.display().to_string());
            restricted = Some(format!(
                "TypeScript from {} (a global install), not the project's node_modules, until \
                 `tether trust`",
                tsserver.display()
            ));
        }
        ("pyright" | "basedpyright", false) => {
            if let Some(python) = outside(root, "python3") {
                settings["python"]["pythonPath"] = json!(python.display().to_string());
            }
            restricted = Some(
                "the system python3 is asked for search paths, never the project's .venv, \
                 until `tether trust`"
                    .into(),
            );
        }
        ("pyright" | "basedpyright", true) => {
            if let Some(venv) = project_venv(root) {
                settings["python"]["pythonPath"] = json!(venv.display().to_string());
            }
        }
        _ => {}
    }
    Ok(Options {
        init,
        settings,
        restricted,
    })
}

/// The project's own interpreter, `.venv` or `venv`, when one exists.
pub fn project_venv(root: &Path) -> Option<PathBuf> {
    [".venv", "venv"]
        .iter()
        .map(|v| root.join(v).join("bin/python"))
        .find(|p| p.exists())
}

/// `program` on PATH, if it lies outside the workspace.
fn outside(root: &Path, program: &str) -> Option<PathBuf> {
    let found = which::which(program).ok()?;
    (!found.starts_with(root)).then_some(found)
}

/// A global TypeScript's `tsserver.js`, found through the `tsserver` on PATH.
fn global_tsserver(root: &Path) -> Option<PathBuf> {
    let bin = outside(root, "tsserver")?;
    let real = std::fs::canonicalize(bin).ok()?;
    // `bin/tsserver` is a link to `<typescript>/bin/tsserver`; the server is in `lib/`.
    let lib = real.parent()?.parent()?.join("lib/tsserver.js");
    (lib.exists() && !lib.starts_with(root)).then_some(lib)
}
