//! The journal file's on-disk format, which the commit writes and rollback and recovery read.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::STATE_DIR;

/// Version of the on-disk journal format; version 1 kept absolute paths inside the workspace.
pub(crate) const JOURNAL_VERSION: u32 = 2;

/// Where a transaction stands on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum TxnState {
    Applying,
    /// Written by tethers before the commit was read from the disk itself; still recovered.
    Committed,
}

/// The journal file's content. Every path is relative to the workspace root.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct JournalFile {
    pub version: u32,
    /// The canonical workspace root the transaction ran in.
    pub root: PathBuf,
    pub run_id: String,
    pub txn_id: u64,
    pub state: TxnState,
    pub entries: Vec<Entry>,
    /// Folders the transaction created, shallowest first.
    pub created_dirs: Vec<PathBuf>,
}

/// One step: a put (temp renamed over target) or, without `temp`, a removal of target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub target: PathBuf,
    /// Temp file next to the target holding the new content (puts only).
    pub temp: Option<PathBuf>,
    /// Copy of the original under `.tether/` (when the target existed).
    pub backup: Option<PathBuf>,
    /// Hash of the new content (puts only), so recovery only removes files it created.
    pub new_hash: Option<String>,
    /// Hash of the original (when the target existed), so a rollback never overwrites bytes
    /// that are neither the original nor ours: someone changed the file after the crash.
    #[serde(default)]
    pub old_hash: Option<String>,
}

/// The name of entry `i`'s temp file, next to its target.
pub(crate) fn temp_name(run_id: &str, txn_id: u64, i: usize) -> String {
    format!(".tether-tmp-{run_id}-{txn_id}-{i}")
}

/// Entry `i`'s backup, relative to the root.
pub(crate) fn backup_path(run_id: &str, txn_id: u64, i: usize) -> PathBuf {
    Path::new(STATE_DIR).join(format!("backup-{run_id}-{txn_id}-{i}"))
}
