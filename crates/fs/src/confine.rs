//! Workspace confinement: which paths tools may write and read.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::OFlags;

use crate::beneath::{Kind, RootDir, is_missing, kind_of};
use crate::{ContentHash, FsError, STATE_DIR, hash_bytes};

/// How many symlinks one resolution may follow before giving up (as the kernel does).
const MAX_LINKS: usize = 40;

/// The workspace root plus extra read-only roots; every path a tool touches is checked against it.
///
/// Each root is held open as a descriptor, and every read and write is made relative to it
/// with symlinks refused by the kernel (see `beneath.rs`), so confinement holds at the moment
/// of the operation, not only when the path was checked.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    root_dir: Arc<RootDir>,
    read_roots: Vec<(PathBuf, Arc<RootDir>)>,
    /// Absolute folders or files inside the root that no tool may write, with the reason.
    protected: Vec<(PathBuf, String)>,
}

/// A write target that passed confinement; only [`Workspace::resolve_write`] makes one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WritePath {
    abs: PathBuf,
    rel: String,
}

impl WritePath {
    /// The real (symlink-resolved) absolute path, where bytes actually land.
    pub fn abs(&self) -> &Path {
        &self.abs
    }

    /// The path relative to the workspace root with '/' separators, as shown to the model.
    pub fn rel(&self) -> &str {
        &self.rel
    }

    /// The path relative to the workspace root, for operations beneath its descriptor.
    pub(crate) fn rel_path(&self) -> &Path {
        Path::new(&self.rel)
    }
}

impl Workspace {
    /// Opens a workspace at `root`, which must be an existing folder; it is canonicalized.
    pub fn new(root: &Path) -> Result<Self, FsError> {
        let root = std::fs::canonicalize(root)
            .map_err(|e| FsError::io("open workspace", root.display(), e))?;
        if !root.is_dir() {
            return Err(FsError::InvalidPath {
                path: root.display().to_string(),
                reason: "the workspace root must be a folder".into(),
            });
        }
        let root_dir =
            RootDir::open(&root).map_err(|e| FsError::io("open workspace", root.display(), e))?;
        Ok(Workspace {
            root,
            root_dir: Arc::new(root_dir),
            read_roots: Vec::new(),
            protected: Vec::new(),
        })
    }

    /// Adds read-only roots (e.g. dependency sources); missing ones are skipped with a warning.
    pub fn with_read_roots(mut self, roots: Vec<PathBuf>) -> Self {
        for r in roots {
            let opened = std::fs::canonicalize(&r).and_then(|c| Ok((RootDir::open(&c)?, c)));
            match opened {
                Ok((dir, c)) => {
                    if !self.read_roots.iter().any(|(p, _)| *p == c) {
                        self.read_roots.push((c, Arc::new(dir)));
                    }
                }
                Err(e) => tracing::warn!(root = %r.display(), error = %e, "skipping read root"),
            }
        }
        self
    }

    /// Forbids writes to `path` and everything under it, as for `.tether/`; `why` names it in
    /// the refusal. A path outside the root needs no protection and is ignored.
    pub fn protect(mut self, path: &Path, why: &str) -> Self {
        let abs = resolve_physical(path).unwrap_or_else(|_| path.to_path_buf());
        if abs.starts_with(&self.root) {
            self.protected.push((abs, why.to_owned()));
        }
        self
    }

    pub(crate) fn beneath(&self) -> &RootDir {
        &self.root_dir
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The canonical extra read-only roots.
    pub fn read_roots(&self) -> Vec<PathBuf> {
        self.read_roots.iter().map(|(p, _)| p.clone()).collect()
    }

    /// Confines a model-given path (relative to root, or absolute) for writing.
    ///
    /// Symlinks are followed physically, so anything that ends up outside the root (or inside
    /// `.tether/`) is refused; a symlink to a file inside the root resolves to that file.
    pub fn resolve_write(&self, path: &str) -> Result<WritePath, FsError> {
        if path.is_empty() {
            return Err(FsError::InvalidPath {
                path: path.into(),
                reason: "empty path; give a file path relative to the workspace root".into(),
            });
        }
        let abs =
            resolve_physical(&self.root.join(path)).map_err(|e| FsError::io("resolve", path, e))?;
        let Ok(rel) = abs.strip_prefix(&self.root) else {
            return Err(FsError::OutsideRoot {
                path: path.into(),
                root: self.root.clone(),
            });
        };
        if rel.as_os_str().is_empty() {
            return Err(FsError::InvalidPath {
                path: path.into(),
                reason: "this is the workspace root itself, not a file".into(),
            });
        }
        // From here on the path is inside the root, so errors show it relative, as results do.
        let rel = slash_path(rel);
        if rel == STATE_DIR || rel.starts_with(&format!("{STATE_DIR}/")) {
            return Err(FsError::Reserved { path: rel });
        }
        if let Some((_, why)) = self.protected.iter().find(|(p, _)| abs.starts_with(p)) {
            return Err(FsError::Protected {
                path: rel,
                why: why.clone(),
            });
        }
        Ok(WritePath { abs, rel })
    }

    /// Confines a path for reading: it must resolve inside the root or one of the read roots.
    pub fn resolve_read(&self, path: &str) -> Result<PathBuf, FsError> {
        if path.is_empty() {
            return Err(FsError::InvalidPath {
                path: path.into(),
                reason: "empty path; give a path relative to the workspace root".into(),
            });
        }
        let abs =
            resolve_physical(&self.root.join(path)).map_err(|e| FsError::io("resolve", path, e))?;
        if self.root_of(&abs).is_some() {
            return Ok(abs);
        }
        let mut roots = vec![self.root.clone()];
        roots.extend(self.read_roots());
        Err(FsError::NotReadable {
            path: path.into(),
            roots,
        })
    }

    /// The root holding `abs` (the workspace first) and `abs` relative to it.
    fn root_of<'a>(&'a self, abs: &'a Path) -> Option<(&'a RootDir, &'a Path)> {
        let ws = std::iter::once((&self.root, &self.root_dir));
        let reads = self.read_roots.iter().map(|(p, d)| (p, d));
        ws.chain(reads)
            .find_map(|(p, d)| Some((&**d, abs.strip_prefix(p).ok()?)))
    }

    /// Opens a regular file for reading beneath the root or read root holding the resolved
    /// `abs`, refusing symlinks swapped in since and, without blocking, FIFOs and devices.
    pub fn open_read(&self, abs: &Path) -> Result<File, FsError> {
        let shown = self.display(abs);
        let Some((dir, rel)) = self.root_of(abs) else {
            return Err(FsError::OutsideRoot {
                path: shown,
                root: self.root.clone(),
            });
        };
        open_regular(dir, rel, &shown)?.ok_or(FsError::NotFound { path: shown })
    }

    /// Reads, for display or to hand to a server, a file that a child (a language server, a
    /// debug adapter) named: the same confinement as `read`, regular files only, opened without
    /// blocking and read at most [`NAMED_MAX_BYTES`]. It does blocking I/O: from async code,
    /// call it on the blocking pool (`tokio::task::spawn_blocking`).
    pub fn read_named(&self, path: &Path) -> Result<String, Unshown> {
        let abs = resolve_physical(&self.root.join(path))
            .map_err(|e| Unshown::Unreadable(e.kind().to_string()))?;
        let Some((dir, rel)) = self.root_of(&abs) else {
            return Err(Unshown::Outside);
        };
        if rel.as_os_str().is_empty() {
            return Err(Unshown::NotRegular("a folder".into()));
        }
        let shown = self.display(&abs);
        let file = match open_regular(dir, rel, &shown) {
            Ok(Some(file)) => file,
            Ok(None) => return Err(Unshown::Missing),
            Err(FsError::NotRegular { what, .. }) => return Err(Unshown::NotRegular(what)),
            Err(e) => return Err(Unshown::Unreadable(io_kind(&e))),
        };
        if file.metadata().is_ok_and(|m| m.len() > NAMED_MAX_BYTES) {
            return Err(Unshown::TooLarge);
        }
        // The size can grow after the stat: the read itself stops one byte past the cap.
        let mut bytes = Vec::new();
        file.take(NAMED_MAX_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Unshown::Unreadable(e.kind().to_string()))?;
        if bytes.len() as u64 > NAMED_MAX_BYTES {
            return Err(Unshown::TooLarge);
        }
        String::from_utf8(bytes).map_err(|_| Unshown::NotText)
    }

    /// The bytes and hash of a write target now; `Ok(None)` when it does not exist. Anything
    /// but a regular file (a folder, FIFO, device) is refused without blocking.
    pub fn read_hashed(&self, path: &WritePath) -> Result<Option<(Vec<u8>, ContentHash)>, FsError> {
        let Some(mut file) = open_regular(&self.root_dir, path.rel_path(), path.rel())? else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| FsError::io("read", path.rel(), e))?;
        let hash = hash_bytes(&bytes);
        Ok(Some((bytes, hash)))
    }

    /// How a path is shown to the model: relative to root with '/' separators, else absolute.
    pub fn display(&self, abs: &Path) -> String {
        match abs.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
            Ok(rel) => slash_path(rel),
            Err(_) => abs.display().to_string(),
        }
    }
}

/// The most of a file [`Workspace::read_named`] reads: a source file is far smaller, and a
/// server or adapter that names a huge or endless one (a log, `/dev/zero`) must not grow tether.
pub const NAMED_MAX_BYTES: u64 = 8 << 20;

/// Why a file a child named is not shown; its `Display` is the short reason printed next to
/// the location, as in `main.py:3  (outside the workspace: not shown)`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unshown {
    /// Not under the workspace root or a read root, as `read` would refuse.
    Outside,
    /// Nothing is there.
    Missing,
    /// A folder, FIFO, socket or device, named as it is.
    NotRegular(String),
    /// Larger than [`NAMED_MAX_BYTES`].
    TooLarge,
    /// Not UTF-8 text.
    NotText,
    /// The operating system refused it; the kind of error.
    Unreadable(String),
}

impl std::fmt::Display for Unshown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unshown::Outside => f.write_str("outside the workspace"),
            Unshown::Missing => f.write_str("no such file"),
            Unshown::NotRegular(what) => write!(f, "not a regular file but {what}"),
            Unshown::TooLarge => write!(f, "too large, over {} MiB", NAMED_MAX_BYTES >> 20),
            Unshown::NotText => f.write_str("not UTF-8 text"),
            Unshown::Unreadable(kind) => write!(f, "unreadable: {kind}"),
        }
    }
}

/// The kind of an io error inside `e`, for a short reason.
fn io_kind(e: &FsError) -> String {
    match e {
        FsError::Io { source, .. } => source.kind().to_string(),
        other => other.to_string(),
    }
}

/// Opens `rel` beneath `dir` if it is a regular file; `Ok(None)` when nothing is there.
pub(crate) fn open_regular(
    dir: &RootDir,
    rel: &Path,
    shown: &str,
) -> Result<Option<File>, FsError> {
    let refuse = |what: &str| FsError::NotRegular {
        path: shown.to_owned(),
        what: what.to_owned(),
    };
    // Check before opening, so a FIFO is never opened at all; check the open file again, so
    // nothing swapped in between is read.
    match dir.kind(rel).map_err(|e| FsError::io("stat", shown, e))? {
        None => return Ok(None),
        Some(Kind::Dir) => return Err(refuse("a folder")),
        Some(Kind::Special(what)) => return Err(refuse(what)),
        Some(Kind::File | Kind::Symlink) => {}
    }
    let flags = OFlags::RDONLY | OFlags::NONBLOCK;
    let file = match dir.open_file(rel, flags, 0) {
        Ok(f) => f,
        Err(e) if is_missing(&e) => return Ok(None),
        Err(e) => return Err(FsError::io("open", shown, e)),
    };
    let st = rustix::fs::fstat(&file).map_err(|e| FsError::io("stat", shown, e.into()))?;
    match kind_of(&st) {
        Kind::File => Ok(Some(file)),
        Kind::Dir => Err(refuse("a folder")),
        Kind::Special(what) => Err(refuse(what)),
        Kind::Symlink => Err(refuse("a symlink")),
    }
}

fn slash_path(rel: &Path) -> String {
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// Resolves an absolute path like `realpath`, following every existing symlink (including the
/// last component) but tolerating a missing tail, which is then normalized lexically.
fn resolve_physical(path: &Path) -> std::io::Result<PathBuf> {
    let mut queue: VecDeque<OsString> = VecDeque::new();
    push_front(&mut queue, path);
    let mut resolved = PathBuf::from("/");
    let mut links = 0;
    let mut missing = false;
    while let Some(part) = queue.pop_front() {
        if part == ".." {
            resolved.pop();
            // Back out of a missing tail into folders that exist: resolve symlinks again.
            if missing && std::fs::symlink_metadata(&resolved).is_ok() {
                missing = false;
            }
            continue;
        }
        let next = resolved.join(&part);
        if missing {
            resolved = next;
            continue;
        }
        match std::fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(std::io::Error::new(
                        ErrorKind::InvalidInput,
                        "too many levels of symbolic links",
                    ));
                }
                let target = std::fs::read_link(&next)?;
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                push_front(&mut queue, &target);
            }
            Ok(_) => resolved = next,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                missing = true;
                resolved = next;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(resolved)
}

/// Puts the components of `path` in front of the queue, dropping `.` and the root marker.
fn push_front(queue: &mut VecDeque<OsString>, path: &Path) {
    for c in path.components().rev() {
        match c {
            Component::Normal(n) => queue.push_front(n.to_owned()),
            Component::ParentDir => queue.push_front("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
}
