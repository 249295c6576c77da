//! Change operations and commit receipts.

use std::sync::Arc;

use crate::{ContentHash, NAMED_MAX_BYTES, Unshown, WritePath};

/// One change in a transaction; each carries the expected prior state so stale writes are caught.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ChangeOp {
    /// Replace an existing file, which must still hash to `expect`.
    Write {
        /// The file to replace.
        path: WritePath,
        /// Its new bytes.
        content: Vec<u8>,
        /// Hash of the bytes the caller last saw.
        expect: ContentHash,
    },
    /// Create a file that must not exist yet (missing parent folders are created).
    Create {
        /// The new file.
        path: WritePath,
        /// Its bytes.
        content: Vec<u8>,
    },
    /// Delete a file, which must still hash to `expect`.
    Delete {
        /// The file to delete.
        path: WritePath,
        /// Hash of the bytes the caller last saw.
        expect: ContentHash,
    },
    /// Move a file to a path that must be absent, optionally with new content.
    Rename {
        /// The existing file.
        from: WritePath,
        /// The new location, which must not exist.
        to: WritePath,
        /// Hash of the bytes the caller last saw at `from`.
        expect: ContentHash,
        /// New bytes for `to`; `None` keeps the old content.
        content: Option<Vec<u8>>,
    },
}

impl ChangeOp {
    /// Every file this change touches (both ends of a rename).
    pub fn paths(&self) -> Vec<&WritePath> {
        match self {
            ChangeOp::Write { path, .. }
            | ChangeOp::Create { path, .. }
            | ChangeOp::Delete { path, .. } => vec![path],
            ChangeOp::Rename { from, to, .. } => vec![from, to],
        }
    }
}

/// The kind of change a receipt records.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeKind {
    /// A new file.
    Created,
    /// An existing file got new content.
    Modified,
    /// A file was removed.
    Deleted,
    /// A file moved here from `from`.
    Renamed {
        /// Where it was before.
        from: WritePath,
    },
}

/// What a commit did to one file, so tools can report it.
#[derive(Clone)]
pub struct FileReceipt {
    /// The file as it is now (the destination of a rename).
    pub path: WritePath,
    /// What happened to it.
    pub kind: ChangeKind,
    /// Hash of its new content; `None` when deleted.
    pub hash_after: Option<ContentHash>,
    /// The bytes the write left in the file, shared by every write hook so none reads the
    /// file again (it may have changed since); `None` when deleted.
    pub content: Option<Arc<[u8]>>,
}

impl FileReceipt {
    /// The written bytes as text to hand a language server, by the rules of
    /// [`crate::Workspace::read_named`]: at most [`NAMED_MAX_BYTES`], UTF-8 only.
    pub fn text(&self) -> Result<&str, Unshown> {
        let bytes = self.content.as_deref().ok_or(Unshown::Missing)?;
        if bytes.len() as u64 > NAMED_MAX_BYTES {
            return Err(Unshown::TooLarge);
        }
        std::str::from_utf8(bytes).map_err(|_| Unshown::NotText)
    }
}

impl std::fmt::Debug for FileReceipt {
    /// The content shows as its length: a receipt in a log must not dump a whole file.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileReceipt")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("hash_after", &self.hash_after)
            .field("content_len", &self.content.as_ref().map(|c| c.len()))
            .finish()
    }
}

/// What a whole commit did, one receipt per op in op order.
#[derive(Debug, Clone, Default)]
pub struct CommitReceipt {
    /// The transaction number within this run.
    pub txn_id: u64,
    /// Per-file receipts in op order.
    pub files: Vec<FileReceipt>,
}
