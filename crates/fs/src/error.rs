//! The crate's one error type.

use std::fmt::Display;
use std::path::PathBuf;

/// Everything that can go wrong confining, reading or writing files; messages say what was wrong
/// and what to do instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    /// The path escapes the workspace (`..`, absolute outside, or a symlink leading out).
    #[error(
        "{path} is outside the workspace {}; use a path inside the workspace",
        .root.display()
    )]
    OutsideRoot {
        /// The path as given.
        path: String,
        /// The workspace root.
        root: PathBuf,
    },
    /// The path is neither in the workspace nor in any read root.
    #[error(
        "{path} is not readable here; only paths under these folders are: {}",
        list_paths(.roots)
    )]
    NotReadable {
        /// The path as given.
        path: String,
        /// The workspace root followed by the extra read roots.
        roots: Vec<PathBuf>,
    },
    /// A file changed since it was staged or read; the whole transaction was rejected.
    #[error(
        "{path} changed since it was read ({detail}); nothing was written, re-read it and retry"
    )]
    Conflict {
        /// The file that changed.
        path: String,
        /// What differs from the expectation.
        detail: String,
    },
    /// Content is not valid UTF-8, so text tools refuse to rewrite it lossily.
    #[error(
        "{path} is not valid UTF-8 (first bad byte at offset {offset}); it cannot be edited as text"
    )]
    NotUtf8 {
        /// The file.
        path: String,
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// An operating-system call failed; `source` names the operation.
    #[error("{path}: {source}")]
    Io {
        /// The path the operation was on.
        path: String,
        /// The underlying error, prefixed with the operation.
        source: std::io::Error,
    },
    /// The path is inside tether's own state folder, which tools must not write.
    #[error(
        "{path} is inside tether's state folder .tether/; write somewhere else in the workspace"
    )]
    Reserved {
        /// The path as given.
        path: String,
    },
    /// The path is unusable for another reason (empty, the root itself, not a folder, ...).
    #[error("{path}: {reason}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// Two changes of one transaction touch the same file.
    #[error("{path} is changed more than once in one transaction; combine those changes into one")]
    DuplicatePath {
        /// The file named twice.
        path: String,
    },
    /// A file that must exist does not.
    #[error("{path} does not exist; check the path")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// Recovery found a file that is neither its original nor the interrupted write's bytes:
    /// someone changed it since, so it is left alone.
    #[error(
        "{path} changed after the interrupted write, so it was left as it is; its original is \
         kept at {}",
        .backup.display()
    )]
    Diverged {
        /// The file.
        path: String,
        /// Where its original bytes are kept.
        backup: PathBuf,
    },
    /// The path is a protected file or folder inside the workspace (the user's tether config).
    #[error("{path} is {why}, which no tool may write; change it yourself outside the agent")]
    Protected {
        /// The path as given.
        path: String,
        /// What the protected path is.
        why: String,
    },
    /// The path is a folder, FIFO, socket or device, not a regular file.
    #[error("{path} is {what}, not a regular file; tools read and write regular files only")]
    NotRegular {
        /// The path as given.
        path: String,
        /// What it is instead.
        what: String,
    },
    /// Another process held the workspace's write lock for the whole wait.
    #[error(
        "another tether run held this workspace's write lock for {:.1} s, so nothing was \
         written; retry when it has finished its writes",
        .waited.as_secs_f64()
    )]
    Busy {
        /// How long this run waited.
        waited: std::time::Duration,
    },
    /// The transaction journal could not be written, read or recovered.
    #[error("journal {}: {detail}", .path.display())]
    Journal {
        /// The journal or lock file.
        path: PathBuf,
        /// What went wrong and what to do.
        detail: String,
    },
}

impl FsError {
    /// Wraps an io error with the operation that failed, giving "<path>: <op>: <err>".
    pub fn io(op: &str, path: impl Display, err: std::io::Error) -> Self {
        FsError::Io {
            path: path.to_string(),
            source: std::io::Error::new(err.kind(), format!("{op}: {err}")),
        }
    }
}

fn list_paths(paths: &[PathBuf]) -> String {
    let v: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    v.join(", ")
}
