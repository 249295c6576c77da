//! Where a workspace's host listens: one socket per user, workspace root, binary, config and
//! search path, in the user's runtime folder, which only that user may enter.

use std::hash::{Hash, Hasher};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The files of one host: its socket, the lock only a living host holds, and its log.
#[derive(Debug, Clone)]
pub struct Place {
    /// The workspace root the host serves.
    pub root: PathBuf,
    /// The Unix socket front ends attach to.
    pub socket: PathBuf,
    /// Held (flock) for the host's whole life, so two hosts never serve one key.
    pub lock: PathBuf,
    /// Where an auto-started host writes its log.
    pub log: PathBuf,
}

impl Place {
    /// The place of the host for `root` as this binary, with this user's config and state
    /// folders: a rebuilt binary or another config gets a host of its own, never a stale one.
    pub fn for_root(root: &Path) -> Result<Place, String> {
        let root = root
            .canonicalize()
            .map_err(|e| format!("workspace root {}: {e}", root.display()))?;
        let exe = std::env::current_exe().map_err(|e| format!("cannot find tether itself: {e}"))?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        root.hash(&mut hasher);
        exe.hash(&mut hasher);
        if let Ok(meta) = exe.metadata() {
            (meta.mtime(), meta.mtime_nsec(), meta.size()).hash(&mut hasher);
        }
        tether::Config::user_dir().hash(&mut hasher);
        tether::Config::state_dir().hash(&mut hasher);
        // Which servers a run finds comes from these, so a front end with another PATH or
        // another active environment gets a host that finds what it would find itself.
        for var in FINDING_VARS {
            std::env::var_os(var).hash(&mut hasher);
        }
        let dir = runtime_dir()?;
        let name = format!("host-{:016x}", hasher.finish());
        Ok(Place {
            socket: dir.join(format!("{name}.sock")),
            lock: dir.join(format!("{name}.lock")),
            log: dir.join(format!("{name}.log")),
            root,
        })
    }
}

/// The environment that decides which language servers and interpreters a run finds.
const FINDING_VARS: &[&str] = &["PATH", "VIRTUAL_ENV", "CONDA_PREFIX"];

/// `$XDG_RUNTIME_DIR/tether`, else `/tmp/tether-UID`; made mode 0700, and refused when it
/// belongs to another user or others may enter it.
pub fn runtime_dir() -> Result<PathBuf, String> {
    let uid = tether_proc::current_uid();
    let dir = match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("tether"),
        _ => std::env::temp_dir().join(format!("tether-{uid}")),
    };
    match std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
    {
        Ok(()) => {}
        Err(e) => return Err(format!("cannot make {}: {e}", dir.display())),
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() || meta.uid() != uid {
        return Err(format!(
            "{} is not a folder of this user's; remove it or set XDG_RUNTIME_DIR",
            dir.display()
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot make {} private: {e}", dir.display()))?;
    }
    Ok(dir)
}
