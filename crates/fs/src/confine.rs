//! Workspace confinement: which paths tools may write and read.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use crate::{FsError, STATE_DIR};

/// How many symlinks one resolution may follow before giving up (as the kernel does).
const MAX_LINKS: usize = 40;

/// The workspace root plus extra read-only roots; every path a tool touches is checked against it.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    read_roots: Vec<PathBuf>,
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
        Ok(Workspace {
            root,
            read_roots: Vec::new(),
        })
    }

    /// Adds read-only roots (e.g. dependency sources); missing ones are skipped with a warning.
    pub fn with_read_roots(mut self, roots: Vec<PathBuf>) -> Self {
        for r in roots {
            match std::fs::canonicalize(&r) {
                Ok(c) => {
                    if !self.read_roots.contains(&c) {
                        self.read_roots.push(c);
                    }
                }
                Err(e) => tracing::warn!(root = %r.display(), error = %e, "skipping read root"),
            }
        }
        self
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The canonical extra read-only roots.
    pub fn read_roots(&self) -> &[PathBuf] {
        &self.read_roots
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
        if rel.starts_with(STATE_DIR) {
            return Err(FsError::Reserved { path: path.into() });
        }
        let rel = slash_path(rel);
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
        let allowed = std::iter::once(&self.root).chain(&self.read_roots);
        if allowed.clone().any(|r| abs.starts_with(r)) {
            return Ok(abs);
        }
        Err(FsError::NotReadable {
            path: path.into(),
            roots: allowed.cloned().collect(),
        })
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
