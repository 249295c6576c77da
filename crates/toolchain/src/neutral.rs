//! What a child of an untrusted workspace may inherit: a PATH without the workspace's folders,
//! and, for the Rust tools, a toolchain chosen outside the workspace. rustup picks a toolchain
//! from a `rust-toolchain.toml` in the child's folder (which may name a folder of the
//! repository), and cargo obeys `.cargo/config.toml` wrappers; the pins here outrank both.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the toolchain query may take.
const SYSROOT_DEADLINE: Duration = Duration::from_secs(10);

/// The parent's PATH without relative entries (resolved against the child's folder, which is
/// in the workspace) and without entries inside `workspace`.
pub fn path_outside(workspace: &Path) -> OsString {
    path_without(&std::env::var_os("PATH").unwrap_or_default(), workspace)
}

fn path_without(path: &std::ffi::OsStr, workspace: &Path) -> OsString {
    let kept: Vec<PathBuf> = std::env::split_paths(path)
        .filter(|p| p.is_absolute() && !inside(p, workspace))
        .collect();
    std::env::join_paths(kept).unwrap_or_default()
}

/// `program` found on PATH outside `workspace`, as [`path_outside`] would find it.
pub fn which_outside(program: &str, workspace: &Path) -> Option<PathBuf> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let found = which::which_in(program, Some(path_outside(workspace)), cwd).ok()?;
    (!inside(&found, workspace)).then_some(found)
}

/// True when `path` lies in `workspace`, also through symlinks on either side.
pub fn inside(path: &Path, workspace: &Path) -> bool {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    path.starts_with(workspace) || real(path).starts_with(real(workspace))
}

/// The sysroot of the toolchain `rustc` picks from the filesystem root, where no repository's
/// toolchain file applies; `None` when there is no `rustc` outside the workspace.
pub async fn neutral_rust_sysroot(workspace: &Path) -> Option<PathBuf> {
    let rustc = which_outside("rustc", workspace)?;
    let spec = tether_proc::ChildSpec {
        argv: vec![
            rustc.display().to_string(),
            "--print".into(),
            "sysroot".into(),
        ],
        cwd: Some(PathBuf::from("/")),
        env: vec![(
            "PATH".into(),
            path_outside(workspace).to_string_lossy().into(),
        )],
    };
    let out = tether_proc::run_with_deadline(&spec, SYSROOT_DEADLINE)
        .await
        .ok()?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && sysroot.is_absolute() && !inside(&sysroot, workspace))
        .then_some(sysroot)
}

/// The environment that pins Rust tools to `sysroot` and turns off what a workspace's cargo
/// configuration could add: rustup's toolchain file, `build.rustc`, its wrappers and rustflags
/// (each of these variables outranks the file, as cargo documents), and network access.
pub fn rust_pins(sysroot: &Path) -> Vec<(String, String)> {
    let rustc = sysroot.join("bin/rustc").display().to_string();
    let cargo = sysroot.join("bin/cargo").display().to_string();
    [
        ("RUSTUP_TOOLCHAIN", sysroot.display().to_string()),
        ("RUSTUP_AUTO_INSTALL", "0".into()),
        ("RUSTC", rustc.clone()),
        ("CARGO_BUILD_RUSTC", rustc),
        ("CARGO", cargo),
        ("RUSTC_WRAPPER", String::new()),
        ("RUSTC_WORKSPACE_WRAPPER", String::new()),
        ("CARGO_BUILD_RUSTC_WRAPPER", String::new()),
        ("CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER", String::new()),
        ("CARGO_ENCODED_RUSTFLAGS", String::new()),
        ("CARGO_NET_OFFLINE", "true".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn path_outside_drops_relative_entries_and_the_workspace() {
        let ws = tempfile::tempdir().unwrap();
        let bin = ws.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let given = format!("{}:bin:.:/usr/bin:", bin.display());
        let kept = path_without(given.as_ref(), ws.path());
        assert_eq!(kept, OsString::from("/usr/bin"));
    }

    #[tokio::test]
    async fn the_sysroot_ignores_a_toolchain_file_in_the_workspace() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(
            ws.path().join("rust-toolchain.toml"),
            "[toolchain]\npath = \"/proc/self/cwd/tc\"\n",
        )
        .unwrap();
        let sysroot = neutral_rust_sysroot(ws.path()).await.unwrap();
        assert!(sysroot.join("bin/rustc").exists(), "{}", sysroot.display());
        assert!(!sysroot.starts_with(ws.path()));
    }
}
