//! Repository files that would make an untrusted rust-analyzer run repository code although
//! its own options say no: a `rust-analyzer.toml` (rust-analyzer lets it outrank the client on
//! build scripts and override commands) and cargo configuration that no environment variable
//! outranks (`[env]` is applied to every rustc that cargo starts, `include` pulls in more).
//! Such a workspace gets no rust-analyzer until it is trusted, and the refusal says why.

use std::path::{Path, PathBuf};

/// Cargo configuration keys that the pinned environment cannot neutralise, by top-level table.
const REFUSED_TABLES: &[(&str, &str)] = &[
    (
        "env",
        "sets environment variables for every rustc cargo starts (LD_PRELOAD, say)",
    ),
    ("include", "pulls in more configuration files"),
    ("unstable", "turns on unstable cargo behaviour"),
    (
        "credential-provider",
        "names a program cargo runs for credentials",
    ),
];

/// Why rust-analyzer may not start for the project at `root`, or `None` when nothing the
/// repository ships would outrank the restrictions.
pub fn refusal(root: &Path, workspace: &Path) -> Option<String> {
    for dir in between(root, workspace) {
        let file = dir.join("rust-analyzer.toml");
        if file.exists() {
            return Some(format!(
                "rust-analyzer is not started: this untrusted workspace ships {}, whose settings \
                 rust-analyzer puts above tether's (it can turn build scripts back on or name \
                 commands to run); review it and run `tether trust`",
                shown(&file, workspace)
            ));
        }
    }
    for file in cargo_configs(root) {
        if let Some(why) = refused_cargo_keys(&file) {
            return Some(format!(
                "rust-analyzer is not started: {} {why}, which cargo obeys while rust-analyzer \
                 loads the project even with build scripts off; review it and run `tether \
                 trust`",
                shown(&file, workspace)
            ));
        }
    }
    None
}

/// The folders from `root` up to the workspace root, both included.
fn between(root: &Path, workspace: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut dir = Some(root);
    while let Some(d) = dir {
        dirs.push(d.to_path_buf());
        if d == workspace || !d.starts_with(workspace) {
            break;
        }
        dir = d.parent();
    }
    dirs
}

/// The cargo configuration files cargo reads when started in `root`: `.cargo/config.toml` and
/// `.cargo/config` in it and every folder above, except cargo's home (the user's own).
fn cargo_configs(root: &Path) -> Vec<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    root.ancestors()
        .map(|d| d.join(".cargo"))
        .filter(|d| home.as_deref() != Some(d.as_path()))
        .flat_map(|d| [d.join("config.toml"), d.join("config")])
        .filter(|f| f.is_file())
        .collect()
}

/// What in one cargo configuration file is refused, if anything.
fn refused_cargo_keys(file: &Path) -> Option<String> {
    let text = match read_small(file) {
        Ok(text) => text,
        Err(e) => return Some(format!("cannot be read ({e})")),
    };
    let table: toml::Table = match text.parse() {
        Ok(t) => t,
        Err(e) => return Some(format!("is not valid TOML ({})", e.message())),
    };
    for (key, why) in REFUSED_TABLES {
        if table.contains_key(*key) {
            return Some(format!("has `{key}`, which {why}"));
        }
    }
    let providers = |t: Option<&toml::Value>| {
        t.and_then(toml::Value::as_table).is_some_and(|t| {
            t.contains_key("credential-provider") || t.contains_key("global-credential-providers")
        })
    };
    let registries = table.get("registries").and_then(toml::Value::as_table);
    if providers(table.get("registry"))
        || registries.is_some_and(|r| r.values().any(|v| providers(Some(v))))
    {
        return Some("names a credential provider, a program cargo may run".into());
    }
    None
}

/// A configuration file's text: opened without blocking, a regular file only, at most 1 MiB
/// (a FIFO or a huge file put there must not stall or swell the server's start).
fn read_small(file: &Path) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    const LIMIT: u64 = 1 << 20;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(file)?;
    let meta = f.metadata()?;
    if !meta.is_file() || meta.len() > LIMIT {
        return Err(std::io::Error::other("not a regular file of at most 1 MiB"));
    }
    let mut text = String::new();
    f.take(LIMIT).read_to_string(&mut text)?;
    Ok(text)
}

fn shown(path: &Path, workspace: &Path) -> String {
    path.strip_prefix(workspace)
        .map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn workspace(config: &str) -> tempfile::TempDir {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join(".cargo")).unwrap();
        std::fs::write(ws.path().join(".cargo/config.toml"), config).unwrap();
        ws
    }

    #[test]
    fn wrappers_and_aliases_are_left_to_the_pins() {
        let ws = workspace("[build]\nrustc-wrapper = \"./w.sh\"\n[alias]\nb = \"build\"\n");
        assert_eq!(refusal(ws.path(), ws.path()), None);
    }

    #[test]
    fn env_include_and_credential_providers_are_refused() {
        for config in [
            "[env]\nLD_PRELOAD = \"./x.so\"\n",
            "include = [\"more.toml\"]\n",
            "[registries.mine]\ncredential-provider = [\"./cred\"]\n",
            "[registry]\nglobal-credential-providers = [\"./cred\"]\n",
            "this is = not toml [",
        ] {
            let ws = workspace(config);
            let why = refusal(ws.path(), ws.path()).unwrap_or_default();
            assert!(why.contains(".cargo/config.toml"), "{config}: {why}");
        }
    }

    #[test]
    fn a_rust_analyzer_toml_at_the_root_is_refused() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("rust-analyzer.toml"), "").unwrap();
        let why = refusal(ws.path(), ws.path()).unwrap_or_default();
        assert!(why.contains("rust-analyzer.toml"), "{why}");
    }
}
