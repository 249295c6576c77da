//! Where a workspace's host listens: one socket per user, workspace root, binary, config, the
//! programs PATH finds and environment, in the user's runtime folder, which only that user
//! may enter.

use std::os::unix::ffi::OsStrExt as _;
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
        let mut key = Key::default();
        key.add(exe.as_os_str().as_bytes());
        if let Ok(meta) = exe.metadata() {
            let stamp = [meta.mtime(), meta.mtime_nsec(), meta.size() as i64];
            key.add(&stamp.map(i64::to_le_bytes).concat());
        }
        key.add(tether::Config::user_dir().as_os_str().as_bytes());
        key.add(tether::Config::state_dir().as_os_str().as_bytes());
        // A front end that would find other servers or interpreters gets a host that finds
        // what it would find itself; one whose PATH differs only where none of them lies (an
        // agent putting its own tools first) shares the host.
        for (name, found) in found_programs(&root) {
            key.add(name.as_bytes());
            key.add(found.as_ref().map_or(&[][..], |f| f.as_os_str().as_bytes()));
        }
        // The host's children (kernels, workers, debuggees, checkers) get the host's
        // environment, so a front end with another one gets a host of its own.
        let mut environment: Vec<_> = std::env::vars_os()
            .filter(|(name, _)| !name.to_str().is_some_and(volatile))
            .collect();
        environment.sort();
        for (name, value) in &environment {
            key.add(name.as_bytes());
            key.add(value.as_bytes());
        }
        let dir = runtime_dir()?;
        let name = format!("{}{:016x}", root_prefix(&root), key.finish());
        Ok(Place {
            socket: dir.join(format!("{name}.sock")),
            lock: dir.join(format!("{name}.lock")),
            log: dir.join(format!("{name}.log")),
            root,
        })
    }

    /// Removes the socket a host that died left behind, when no host holds the lock (one
    /// starting holds it before it listens) and the socket is this user's; says whether there
    /// was such a socket. The lock file stays: a host starting now may have it open.
    pub fn clear_if_dead(&self) -> bool {
        if !owned_by_me(&self.socket) {
            return false;
        }
        let Ok(lock_file) = std::fs::OpenOptions::new().write(true).open(&self.lock) else {
            return std::fs::remove_file(&self.socket).is_ok();
        };
        if lock_file.try_lock().is_err() {
            return false;
        }
        std::fs::remove_file(&self.socket).is_ok()
    }
}

/// How old the log of a host that is gone may grow before a starting host removes it.
const OLD_LOG: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Removes what hosts that ended left in the runtime folder (a host that was killed cannot
/// clean up): lock files no host holds, and their logs once a day old.
pub(crate) fn sweep_ended_hosts(mine: &Place) {
    let Some(dir) = mine.lock.parent() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for lock in entries.flatten().map(|e| e.path()) {
        let is_lock = lock.extension().is_some_and(|x| x == "lock");
        let is_host = lock
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("host-"));
        if !is_lock || !is_host || lock == mine.lock || !owned_by_me(&lock) {
            continue;
        }
        let Ok(file) = std::fs::OpenOptions::new().write(true).open(&lock) else {
            continue;
        };
        if file.try_lock().is_err() {
            continue;
        }
        let log = lock.with_extension("log");
        let old = std::fs::metadata(&log)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > OLD_LOG));
        if old || !log.exists() {
            let _ = std::fs::remove_file(&log);
            let _ = std::fs::remove_file(&lock);
        }
    }
}

/// Whether `path` itself (not a link's target) belongs to this user.
pub(crate) fn owned_by_me(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.uid() == tether_proc::current_uid())
}

/// The start of the file names of every host of `root`, whatever its binary or environment:
/// a hash of the path's bytes that every build computes alike (std's `DefaultHasher` may
/// change between Rust releases), so a newer tether still finds an older one's hosts.
fn root_prefix(root: &Path) -> String {
    let hash = xxhash_rust::xxh3::xxh3_64(root.as_os_str().as_bytes());
    format!("host-{hash:016x}-")
}

/// The places of the hosts of this user whose sockets are in the runtime folder; the root of
/// each is what its status says, so here it is left empty.
pub fn running_places() -> Result<Vec<Place>, String> {
    places_named("host-", PathBuf::new())
}

/// The places of every host of `root`: one per binary, config and environment that served it.
pub fn places_of_root(root: &Path) -> Result<Vec<Place>, String> {
    let root = root
        .canonicalize()
        .map_err(|e| format!("workspace root {}: {e}", root.display()))?;
    places_named(&root_prefix(&root), root)
}

fn places_named(prefix: &str, root: PathBuf) -> Result<Vec<Place>, String> {
    let dir = runtime_dir()?;
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut places: Vec<Place> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sock"))
        .filter(|p| owned_by_me(p))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .map(|socket| Place {
            root: root.clone(),
            lock: socket.with_extension("lock"),
            log: socket.with_extension("log"),
            socket,
        })
        .collect();
    places.sort_by(|a, b| a.socket.cmp(&b.socket));
    Ok(places)
}

/// Whether a variable says only where this one process runs (its terminal, shell, login or
/// agent session), not what a run's tools would do: it does not part hosts. An allow list of
/// names known to be harmless, never a pattern, and nothing named like a credential or a
/// socket: a front end with another token must not get a kernel holding the first one's.
/// PATH is keyed by the programs it finds, and tether's own folders by name.
fn volatile(name: &str) -> bool {
    const HARMLESS: &[&str] = &[
        "_",
        "PATH",
        "PWD",
        "OLDPWD",
        "SHLVL",
        "COLUMNS",
        "LINES",
        "PS1",
        "PS2",
        "PS4",
        "PROMPT_COMMAND",
        "HISTFILE",
        "HISTSIZE",
        "HISTFILESIZE",
        "HISTCONTROL",
        "LS_COLORS",
        "LSCOLORS",
        "TERM",
        "TERM_PROGRAM",
        "TERM_PROGRAM_VERSION",
        "TERM_SESSION_ID",
        "COLORTERM",
        "TMUX_PANE",
        "WINDOWID",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "XAUTHORITY",
        "XDG_SESSION_ID",
        "XDG_SEAT",
        "XDG_VTNR",
        "INVOCATION_ID",
        "JOURNAL_STREAM",
        "MANAGERPID",
        "SYSTEMD_EXEC_PID",
        "STY",
        "WINDOW",
        "SSH_CLIENT",
        "SSH_CONNECTION",
        "SSH_TTY",
        "VTE_VERSION",
        "KONSOLE_VERSION",
        "GNOME_TERMINAL_SCREEN",
        "GNOME_TERMINAL_SERVICE",
        "ITERM_SESSION_ID",
        "ITERM_PROFILE",
        "KITTY_WINDOW_ID",
        "KITTY_PID",
        "ALACRITTY_WINDOW_ID",
        "WEZTERM_PANE",
        "WT_SESSION",
        "WT_PROFILE_ID",
        "CLAUDE_CODE_SESSION_ID",
        "TETHER_HOST",
        "TETHER_SURFACE",
        "TETHER_LOG",
        "TETHER_PROC_OWNER",
        "TETHER_WORKER_ID",
        "TETHER_CONFIG_DIR",
        "TETHER_STATE_DIR",
        "TETHER_DATA_DIR",
    ];
    const CREDENTIAL_WORDS: &[&str] = &[
        "TOKEN",
        "KEY",
        "SECRET",
        "SOCK",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
        "COOKIE",
    ];
    let upper = name.to_ascii_uppercase();
    HARMLESS.contains(&name) && !CREDENTIAL_WORDS.iter().any(|w| upper.contains(w))
}

/// Where on PATH each program a run may start is found (or that it is not), sorted by name:
/// what the capabilities, as the user's and the workspace's tether.toml configure them, say
/// they start. A config that does not read gives none; the run then says what is wrong.
fn found_programs(root: &Path) -> Vec<(String, Option<PathBuf>)> {
    let names = tether::programs(root, &tether::Config::user_dir()).unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let runnable = |f: &Path| {
        f.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    names
        .into_iter()
        .map(|name| {
            // A server tether installed runs before one on PATH, as a run resolves it.
            let found = match name.contains('/') {
                true => Some(PathBuf::from(&name)).filter(|f| runnable(f)),
                false => tether_toolchain::installed_program(&[&name])
                    .or_else(|| dirs.iter().map(|d| d.join(&name)).find(|f| runnable(f))),
            };
            (name, found)
        })
        .collect()
}

/// A host's key: each part fed with its length, so no two lists of parts run together, into a
/// hash that is the same in every build (a socket name must outlive a compiler upgrade).
#[derive(Default)]
struct Key(xxhash_rust::xxh3::Xxh3);

impl Key {
    fn add(&mut self, bytes: &[u8]) {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        self.0.digest()
    }
}

/// `$XDG_RUNTIME_DIR/tether`, else `/tmp/tether-UID`; made mode 0700, and refused when it
/// belongs to another user. A relative XDG_RUNTIME_DIR is invalid by the XDG rules and is
/// taken as unset (it would put sockets inside the workspace).
pub fn runtime_dir() -> Result<PathBuf, String> {
    let uid = tether_proc::current_uid();
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(d) if d.is_absolute() => d.join("tether"),
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
        // While others could enter, they could plant files here: none is kept.
        for planted in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if !owned_by_me(&planted.path()) {
                tracing::warn!(
                    "removed {}, which another user put in the runtime folder while it was open",
                    planted.path().display()
                );
                let _ = std::fs::remove_file(planted.path());
            }
        }
    }
    Ok(dir)
}

/// Folders that mark a version-control checkout.
const VCS_MARKERS: &[&str] = &[".git", ".hg", ".jj", ".svn"];
/// Files that mark a project's root when no checkout encloses it.
const PROJECT_MARKERS: &[&str] = &[
    "tether.toml",
    "Cargo.toml",
    "pyproject.toml",
    "setup.py",
    "package.json",
    "tsconfig.json",
    "go.mod",
    "compile_commands.json",
    "CMakeLists.txt",
];

/// The project a file (or folder) belongs to: the version-control root that encloses it, else
/// the nearest folder with a project marker; never `/` or the home folder, which would make
/// a host of everything below them.
pub fn project_root(path: &Path) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let too_wide = |dir: &Path| dir.parent().is_none() || home.as_deref() == Some(dir);
    let start = match path.is_dir() {
        true => path,
        false => path.parent()?,
    };
    let mut nearest_marker = None;
    for dir in start.ancestors() {
        if too_wide(dir) {
            break;
        }
        if VCS_MARKERS.iter().any(|m| dir.join(m).exists()) {
            return Some(dir.to_path_buf());
        }
        if nearest_marker.is_none() && PROJECT_MARKERS.iter().any(|m| dir.join(m).is_file()) {
            nearest_marker = Some(dir.to_path_buf());
        }
    }
    nearest_marker
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The names of a root's hosts are the same from every build of tether: a fixed value.
    #[test]
    fn a_roots_host_names_begin_alike_in_every_build() {
        assert_eq!(
            root_prefix(Path::new("/work/project")),
            "host-d7ac24a5f2e50972-"
        );
    }

    #[test]
    fn a_project_is_its_checkout_else_its_nearest_marker_never_the_filesystem() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("crates/a/src")).unwrap();
        std::fs::write(repo.join("crates/a/Cargo.toml"), "").unwrap();
        let file = repo.join("crates/a/src/lib.rs");
        assert_eq!(project_root(&file), Some(repo.clone()));
        let loose = dir.path().join("loose/pkg/sub");
        std::fs::create_dir_all(&loose).unwrap();
        std::fs::write(dir.path().join("loose/pkg/pyproject.toml"), "").unwrap();
        assert_eq!(
            project_root(&loose.join("m.py")),
            Some(dir.path().join("loose/pkg"))
        );
        assert_eq!(project_root(Path::new("/etc/hosts")), None);
        assert_eq!(project_root(Path::new("/")), None);
    }
}
