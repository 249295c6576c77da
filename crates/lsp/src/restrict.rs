//! What a server may run depends on trust. Until the user trusts the workspace, nothing that
//! came with the repository runs: rust-analyzer without build scripts, proc macros or cargo
//! check, on a toolchain chosen outside the workspace and with cargo's wrappers pinned off;
//! TypeScript from a global install, never the project's node_modules; Python servers ask the
//! system interpreter, never the project's `.venv`; no server finds a program through a PATH
//! entry inside the workspace. Trusted, the project's own environment is used, but the plan
//! and readonly surfaces still run no build scripts unless `[lsp] read_surfaces_build` says so.

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

/// What a run lets its servers run: the repository's own environment once trusted, and build
/// scripts (which may write anywhere) only where the surface may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowed {
    /// The workspace is trusted.
    pub trusted: bool,
    /// Build scripts, proc macros and cargo check may run (trusted, and a writing surface or
    /// the user's opt-in).
    pub builds: bool,
}

/// The options for `entry` at `root`.
pub fn options(entry: &ServerEntry, root: &Path, allowed: Allowed) -> Result<Options, String> {
    let trusted = allowed.trusted;
    let mut init = object(&entry.init_options);
    let mut settings = object(&entry.settings);
    let mut restricted = None;
    match (entry.id.as_str(), trusted) {
        ("rust-analyzer", _) if !allowed.builds => {
            init["cargo"]["buildScripts"]["enable"] = json!(false);
            init["procMacro"]["enable"] = json!(false);
            init["checkOnSave"] = json!(false);
            restricted = Some(if trusted {
                "build scripts, proc macros and cargo check are off on this read-only surface \
                 (plan or readonly); `[lsp] read_surfaces_build = true` in the user config \
                 allows them"
                    .into()
            } else {
                "build scripts, proc macros and cargo check are off, the toolchain is the one \
                 chosen outside the workspace, and cargo's wrappers and rustflags are pinned \
                 off, until `tether trust`"
                    .into()
            });
        }
        // cargo check gets a target folder of its own, never the agent's lock on target/.
        ("rust-analyzer", _) => init["cargo"]["targetDir"] = json!(true),
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

/// The environment a server starts with: the project's virtual environment once trusted;
/// until then a PATH without the workspace's folders, and for rust-analyzer a pinned
/// toolchain, or a refusal when the repository configures something the pins cannot reach.
pub async fn environment(
    entry: &ServerEntry,
    root: &Path,
    workspace: &Path,
    trusted: bool,
) -> Result<Vec<(String, String)>, String> {
    let mut env = Vec::new();
    if trusted {
        if let Some(python) = project_venv(root)
            && let Some(venv) = python.parent().and_then(Path::parent)
        {
            env.push(("VIRTUAL_ENV".into(), venv.display().to_string()));
        }
        return Ok(env);
    }
    let path = tether_proc::path_outside(workspace);
    env.push(("PATH".into(), path.to_string_lossy().into_owned()));
    match entry.id.as_str() {
        "rust-analyzer" => {
            if let Some(why) = crate::repo_config::refusal(root, workspace) {
                return Err(why);
            }
            let sysroot = tether_proc::neutral_rust_sysroot(workspace).await.ok_or(
                "this workspace is not trusted, so rust-analyzer runs only on a toolchain \
                 chosen outside it, and no `rustc` outside the workspace answered \
                 `--print sysroot`: install one with rustup, or run `tether trust`",
            )?;
            env.extend(tether_proc::rust_pins(&sysroot));
        }
        // A `toolchain` line in go.mod must not fetch and run another Go.
        "gopls" => env.push(("GOTOOLCHAIN".into(), "local".into())),
        _ => {}
    }
    Ok(env)
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
    tether_proc::which_outside(program, root)
}

/// A global TypeScript's `tsserver.js`, found through the `tsserver` on PATH.
fn global_tsserver(root: &Path) -> Option<PathBuf> {
    let bin = outside(root, "tsserver")?;
    let real = std::fs::canonicalize(bin).ok()?;
    // `bin/tsserver` is a link to `<typescript>/bin/tsserver`; the server is in `lib/`.
    let lib = real.parent()?.parent()?.join("lib/tsserver.js");
    (lib.exists() && !lib.starts_with(root)).then_some(lib)
}
