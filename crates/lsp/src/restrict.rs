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
use crate::error::LspError;

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

/// `overlay`'s keys laid into `base`, table by table.
fn merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, o) => *b = o.clone(),
    }
}

/// Every `{program_dir}` in the strings of `init` replaced by the folder of the program run:
/// a package installed beside the server (Astro's TypeScript) is found from it.
pub fn place_program_dir(init: &mut Value, dir: &Path) {
    match init {
        Value::String(text) if text.contains("{program_dir}") => {
            *text = text.replace("{program_dir}", &dir.display().to_string());
        }
        Value::Array(items) => items.iter_mut().for_each(|v| place_program_dir(v, dir)),
        Value::Object(map) => map.values_mut().for_each(|v| place_program_dir(v, dir)),
        _ => {}
    }
}

/// The settings key `dotted` (`python.pythonPath`) set to `value`.
fn set_dotted(settings: &mut Value, dotted: &str, value: Value) {
    let mut at = settings;
    for part in dotted.split('.') {
        if !at.is_object() {
            *at = json!({});
        }
        at = &mut at[part];
    }
    *at = value;
}

/// The options for `entry` at `root`, from its behaviour flags.
pub fn options(entry: &ServerEntry, root: &Path, allowed: Allowed) -> Result<Options, LspError> {
    let trusted = allowed.trusted;
    let flags = &entry.behaviour;
    let mut init = object(&entry.init_options);
    let mut settings = object(&entry.settings);
    let mut restricted = None;
    if !flags.in_order_init.is_null() {
        merge(&mut init, &flags.in_order_init);
    }
    if let Some(what) = &flags.builds {
        if allowed.builds {
            merge(&mut init, &flags.builds_on_init);
        } else {
            merge(&mut init, &flags.builds_off_init);
            restricted = Some(if trusted {
                format!(
                    "{what} are off on this read-only surface (plan or readonly); `[lsp] \
                     read_surfaces_build = true` in the user config allows them"
                )
            } else if flags.toolchain_pins {
                format!(
                    "{what} are off, the toolchain is the one chosen outside the workspace, \
                     and cargo's wrappers and rustflags are pinned off, until `tether trust`"
                )
            } else {
                format!("{what} are off until `tether trust`")
            });
        }
    }
    if flags.global_tsserver && !trusted {
        let tsserver = global_tsserver(root).ok_or_else(|| {
            LspError::refused(
                "this workspace is not trusted, so its own node_modules/typescript is not \
                 loaded, and no global TypeScript was found: install it (`npm i -g \
                 typescript`) or run `tether trust`",
            )
        })?;
        init["tsserver"]["path"] = json!(tsserver.display().to_string());
        restricted = Some(format!(
            "TypeScript from {} (a global install), not the project's node_modules, until \
             `tether trust`",
            tsserver.display()
        ));
    }
    if let Some(key) = &flags.interpreter_setting {
        if trusted {
            if let Some(venv) = tether_toolchain::project_venv(root) {
                set_dotted(&mut settings, key, json!(venv.display().to_string()));
            }
        } else {
            if let Some(python) = outside(root, "python3") {
                set_dotted(&mut settings, key, json!(python.display().to_string()));
            }
            restricted = Some(
                "the system python3 is asked for search paths, never the project's .venv, \
                 until `tether trust`"
                    .into(),
            );
        }
    }
    Ok(Options {
        init,
        settings,
        restricted,
    })
}

/// The environment a server starts with: the project's virtual environment once trusted;
/// until then a PATH without the workspace's folders, the entry's `untrusted_env`, and for a
/// server with `toolchain_pins` a pinned toolchain, or a refusal when the repository
/// configures something the pins cannot reach.
pub async fn environment(
    entry: &ServerEntry,
    root: &Path,
    workspace: &Path,
    trusted: bool,
) -> Result<Vec<(String, String)>, LspError> {
    let mut env = Vec::new();
    if trusted {
        if let Some(python) = tether_toolchain::project_venv(root)
            && let Some(venv) = python.parent().and_then(Path::parent)
        {
            env.push(("VIRTUAL_ENV".into(), venv.display().to_string()));
        }
        return Ok(env);
    }
    let path = tether_toolchain::path_outside(workspace);
    env.push(("PATH".into(), path.to_string_lossy().into_owned()));
    if entry.behaviour.toolchain_pins {
        if let Some(why) = crate::repo_config::refusal(root, workspace) {
            return Err(LspError::Refused(why));
        }
        let sysroot = tether_toolchain::neutral_rust_sysroot(workspace)
            .await
            .ok_or_else(|| {
                LspError::refused(
                    "this workspace is not trusted, so rust-analyzer runs only on a toolchain \
                     chosen outside it, and no `rustc` outside the workspace answered \
                     `--print sysroot`: install one with rustup, or run `tether trust`",
                )
            })?;
        env.extend(tether_toolchain::rust_pins(&sysroot));
    }
    env.extend(entry.behaviour.untrusted_env.clone());
    Ok(env)
}

/// `program` on PATH, if it lies outside the workspace.
fn outside(root: &Path, program: &str) -> Option<PathBuf> {
    tether_toolchain::which_outside(program, root)
}

/// A global TypeScript's `tsserver.js`, found through the `tsserver` on PATH.
fn global_tsserver(root: &Path) -> Option<PathBuf> {
    let bin = outside(root, "tsserver")?;
    let real = std::fs::canonicalize(bin).ok()?;
    // `bin/tsserver` is a link to `<typescript>/bin/tsserver`; the server is in `lib/`.
    let lib = real.parent()?.parent()?.join("lib/tsserver.js");
    (lib.exists() && !lib.starts_with(root)).then_some(lib)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::catalog::{ServerData, apply, builtin};

    #[test]
    fn rust_analyzer_works_on_one_thread_whatever_its_options_say() {
        let ra = builtin()["rust-analyzer"].clone();
        let data: ServerData = toml::from_str("init_options = { numThreads = 8 }\n").unwrap();
        let changed = apply(ra, data).unwrap();
        let root = Path::new("/nonexistent");
        for builds in [false, true] {
            let allowed = Allowed {
                trusted: builds,
                builds,
            };
            let init = options(&changed, root, allowed).unwrap().init;
            assert_eq!(init["numThreads"], 1, "{init}");
        }
        // A server without the flag keeps its options as they are.
        let clangd = builtin()["clangd"].clone();
        let untrusted = Allowed {
            trusted: false,
            builds: false,
        };
        let init = options(&clangd, root, untrusted).unwrap().init;
        assert!(init.get("numThreads").is_none(), "{init}");
    }
}
