//! The facts about files and the one door for writes.
//!
//! Paths are confined to a workspace ([`Workspace`]), file contents are identified by
//! [`ContentHash`], text keeps its shape across rewrites ([`TextShape`]), and every write goes
//! through an all-or-nothing, crash-recoverable transaction ([`Journal::commit`]). Proposed but
//! not yet accepted change sets wait in a [`StagedStore`].

#![forbid(unsafe_code)]

mod beneath;
mod confine;
mod error;
mod hash;
mod journal;
mod kinds;
mod merge;
mod ops;
mod rebase;
mod record;
mod rollback;
mod staged;
pub mod suggest;
mod text;
mod txn;

pub use confine::{NAMED_MAX_BYTES, Unshown, Workspace, WritePath};
pub use error::FsError;
pub use hash::{ContentHash, hash_bytes};
pub use journal::{
    DEFAULT_LOCK_WAIT, Journal, RecoveryAction, RecoveryReport, workspace_state_dir,
};
pub use kinds::{GeneratedFolder, generated_folder, is_config_file};
pub use merge::{Overlap, merge3};
pub use ops::{ChangeKind, ChangeOp, CommitReceipt, FileReceipt};
pub use rebase::{RebaseError, Rebased};
pub use staged::{Proposal, Recount, Resolution, StagedChange, StagedError, StagedStore};
pub use text::{TextShape, decode_text, encode_text};

/// Name of tether's state folder inside the workspace root.
pub const STATE_DIR: &str = ".tether";

pub(crate) use tether_base::lock;
