//! Operations beneath a root folder with the kernel's help.
//!
//! Every path is opened relative to a descriptor of the root and refuses `..`, absolute paths
//! and every symlink, so a folder swapped for a symlink after a check cannot send an operation
//! outside: `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` where the kernel has it (5.6+),
//! else a walk of `O_NOFOLLOW` folder descriptors, one component at a time.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Stat};

/// Whether `openat2` failed with ENOSYS once, so later calls go straight to the walk.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// How often `openat2` is retried when a concurrent rename makes it answer EAGAIN.
const OPENAT2_RETRIES: usize = 16;

/// An open descriptor of a confinement root.
#[derive(Debug)]
pub(crate) struct RootDir {
    fd: OwnedFd,
}

/// What a name beneath the root is, without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device: never read or written.
    Special(&'static str),
}

impl RootDir {
    /// Opens the folder at the absolute, canonical `path`.
    pub(crate) fn open(path: &Path) -> io::Result<RootDir> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(RootDir { fd })
    }

    /// Opens the folder `rel` (empty for the root itself).
    pub(crate) fn dir(&self, rel: &Path) -> io::Result<OwnedFd> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        if rel.as_os_str().is_empty() {
            return rustix::fs::openat(&self.fd, ".", flags, Mode::empty()).map_err(Into::into);
        }
        self.open_beneath(rel, flags, Mode::empty())
    }

    /// Opens the folder holding `rel` and returns it with `rel`'s last component, for the
    /// `*at` calls that act on a name without following it.
    pub(crate) fn parent(&self, rel: &Path) -> io::Result<(OwnedFd, OsString)> {
        let name = rel
            .file_name()
            .ok_or_else(|| invalid("a path beneath the root needs a file name"))?;
        let dir = self.dir(rel.parent().unwrap_or(Path::new("")))?;
        Ok((dir, name.to_owned()))
    }

    /// Opens the file `rel` with `flags` (`O_NOFOLLOW` and `O_CLOEXEC` are always added).
    pub(crate) fn open_file(&self, rel: &Path, flags: OFlags, mode: u32) -> io::Result<File> {
        let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY;
        let fd = self.open_beneath(rel, flags, Mode::from_raw_mode(mode))?;
        Ok(File::from(fd))
    }

    /// What `rel` is, without following a final symlink; `Ok(None)` when nothing is there.
    pub(crate) fn kind(&self, rel: &Path) -> io::Result<Option<Kind>> {
        match self.stat(rel) {
            Ok(st) => Ok(Some(kind_of(&st))),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `lstat` of `rel` beneath the root.
    pub(crate) fn stat(&self, rel: &Path) -> io::Result<Stat> {
        let (dir, name) = self.parent(rel)?;
        rustix::fs::statat(&dir, &name, AtFlags::SYMLINK_NOFOLLOW).map_err(Into::into)
    }

    /// Creates the folder `rel` (its parent must exist).
    pub(crate) fn mkdir(&self, rel: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(rel)?;
        rustix::fs::mkdirat(&dir, &name, Mode::from_raw_mode(0o777)).map_err(Into::into)
    }

    /// Removes the empty folder `rel`.
    pub(crate) fn rmdir(&self, rel: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(rel)?;
        rustix::fs::unlinkat(&dir, &name, AtFlags::REMOVEDIR).map_err(Into::into)
    }

    /// Removes the name `rel` (a symlink is removed, not followed).
    pub(crate) fn unlink(&self, rel: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(rel)?;
        rustix::fs::unlinkat(&dir, &name, AtFlags::empty()).map_err(Into::into)
    }

    /// Renames `from` to `to`, both beneath the root.
    pub(crate) fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let (from_dir, from_name) = self.parent(from)?;
        let (to_dir, to_name) = self.parent(to)?;
        rustix::fs::renameat(&from_dir, &from_name, &to_dir, &to_name).map_err(Into::into)
    }

    /// Renames `from` beneath this root to `to` beneath `other`.
    pub(crate) fn rename_into(&self, from: &Path, other: &RootDir, to: &Path) -> io::Result<()> {
        let (from_dir, from_name) = self.parent(from)?;
        let (to_dir, to_name) = other.parent(to)?;
        rustix::fs::renameat(&from_dir, &from_name, &to_dir, &to_name).map_err(Into::into)
    }

    /// The folder `rel` as a root of its own: later operations through it stay in that very
    /// folder, even if its path is swapped for something else meanwhile.
    pub(crate) fn pin(&self, rel: &Path) -> io::Result<RootDir> {
        Ok(RootDir { fd: self.dir(rel)? })
    }

    /// Makes `link` a second name of the file `target` (never of a symlink's target).
    pub(crate) fn hard_link(&self, target: &Path, link: &Path) -> io::Result<()> {
        let (t_dir, t_name) = self.parent(target)?;
        let (l_dir, l_name) = self.parent(link)?;
        rustix::fs::linkat(&t_dir, &t_name, &l_dir, &l_name, AtFlags::empty()).map_err(Into::into)
    }

    /// Flushes the folder `rel`'s entries to disk; best effort.
    pub(crate) fn sync_dir(&self, rel: &Path) {
        if let Ok(fd) = self.dir(rel) {
            let _ = rustix::fs::fsync(&fd);
        }
    }

    fn open_beneath(&self, rel: &Path, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        check_relative(rel)?;
        if !NO_OPENAT2.load(Ordering::Relaxed) {
            let how =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            for _ in 0..OPENAT2_RETRIES {
                match rustix::fs::openat2(&self.fd, rel, flags, mode, how) {
                    Ok(fd) => return Ok(fd),
                    Err(rustix::io::Errno::AGAIN) => continue,
                    Err(rustix::io::Errno::NOSYS) => {
                        NO_OPENAT2.store(true, Ordering::Relaxed);
                        break;
                    }
                    Err(e) => return Err(symlink_refused(e.into())),
                }
            }
            if !NO_OPENAT2.load(Ordering::Relaxed) {
                return Err(io::Error::new(
                    io::ErrorKind::ResourceBusy,
                    "the path kept changing while it was opened; retry",
                ));
            }
        }
        self.walk(rel, flags, mode)
    }

    /// The fallback for kernels without `openat2`: one `O_NOFOLLOW` descriptor per folder.
    fn walk(&self, rel: &Path, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        let parts: Vec<&OsStr> = rel.iter().collect();
        let Some((last, folders)) = parts.split_last() else {
            return Err(invalid("empty path"));
        };
        let step = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut dir: Option<OwnedFd> = None;
        for part in folders {
            let next = match &dir {
                Some(d) => rustix::fs::openat(d, *part, step, Mode::empty()),
                None => rustix::fs::openat(&self.fd, *part, step, Mode::empty()),
            }
            .map_err(|e| symlink_refused(e.into()))?;
            dir = Some(next);
        }
        let base = dir.as_ref().map_or(self.fd.as_fd(), |d| d.as_fd());
        rustix::fs::openat(base, *last, flags | OFlags::NOFOLLOW, mode)
            .map_err(|e| symlink_refused(e.into()))
    }
}

/// Classifies a stat result.
pub(crate) fn kind_of(st: &Stat) -> Kind {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Dir,
        FileType::Symlink => Kind::Symlink,
        FileType::Fifo => Kind::Special("a FIFO (named pipe)"),
        FileType::Socket => Kind::Special("a socket"),
        FileType::CharacterDevice => Kind::Special("a character device"),
        FileType::BlockDevice => Kind::Special("a block device"),
        FileType::Unknown => Kind::Special("not a regular file"),
    }
}

/// True for "nothing is there" errors, including a missing parent folder.
pub(crate) fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Only plain names may follow the root: no `..`, no `.`, no absolute path.
fn check_relative(rel: &Path) -> io::Result<()> {
    if rel.as_os_str().is_empty() {
        return Err(invalid("empty path"));
    }
    for c in rel.components() {
        if !matches!(c, Component::Normal(_)) {
            return Err(invalid(
                "a path beneath the root may hold only plain names (no '..', '.' or '/')",
            ));
        }
    }
    Ok(())
}

/// Explains the kernel's refusals in this module's terms.
fn symlink_refused(e: io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(libc::ELOOP) => io::Error::new(
            io::ErrorKind::InvalidInput,
            "a symlink appeared on the path while it was used (a folder or file was swapped \
             for a link); nothing was done through it, re-check the path and retry",
        ),
        Some(libc::EXDEV) => io::Error::new(
            io::ErrorKind::PermissionDenied,
            "the path leads outside its root",
        ),
        _ => e,
    }
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg.to_owned())
}
