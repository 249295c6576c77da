//! The per-run journal: lock file, on-disk transaction record, and crash recovery.

use std::collections::BTreeSet;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::{FsError, STATE_DIR, Workspace, hash::read_with_hash};

/// Version of the on-disk journal format.
const JOURNAL_VERSION: u32 = 1;

/// The per-run journal through which every write goes.
///
/// Owns `<root>/.tether/run-<run_id>.lock` (flock held for the journal's life) and writes
/// `<root>/.tether/journal-<run_id>.json` while a transaction is in flight, so a crash can be
/// undone by the next run.
#[derive(Debug)]
pub struct Journal {
    pub(crate) ws: Workspace,
    pub(crate) state_dir: PathBuf,
    pub(crate) run_id: String,
    lock_path: PathBuf,
    _lock: File,
    /// Next transaction number; held for the whole of a commit so commits never interleave.
    pub(crate) next_txn: Mutex<u64>,
}

/// What recovery did with a dead run's journal.
#[derive(Debug, Clone)]
pub struct RecoveryReport {
    /// The run that died mid-transaction.
    pub run_id: String,
    /// Whether its transaction was undone or finished.
    pub action: RecoveryAction,
    /// The files involved, as shown to the model.
    pub files: Vec<String>,
}

/// Whether recovery undid or finished an interrupted transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecoveryAction {
    /// Not every file was written, so all were put back as before.
    RolledBack,
    /// Every file was written; only cleanup remained.
    Completed,
    /// Some file could not be put back (it changed after the crash, or the disk refused);
    /// the journal and backups stay for a human, and every later run reports it again.
    Incomplete {
        /// What stopped it.
        detail: String,
    },
}

impl fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.files.len();
        let s = if n == 1 { "" } else { "s" };
        let list = self.files.join(", ");
        match &self.action {
            RecoveryAction::RolledBack => write!(
                f,
                "recovered an interrupted transaction of run {}: rolled back {n} file{s} ({list})",
                self.run_id
            ),
            RecoveryAction::Completed => write!(
                f,
                "recovered an interrupted transaction of run {}: it had written all {n} file{s} ({list}), finished cleanup",
                self.run_id
            ),
            RecoveryAction::Incomplete { detail } => write!(
                f,
                "could not fully roll back an interrupted transaction of run {} ({list}): {detail}. \
                 Nothing was overwritten; the journal and the original copies stay under .tether/ \
                 for you to inspect",
                self.run_id
            ),
        }
    }
}

/// Where a transaction stands on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum TxnState {
    Applying,
    Committed,
}

/// The journal file's content.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct JournalFile {
    pub version: u32,
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

impl Journal {
    /// Creates `.tether/` (git-ignored), takes this run's lock, and recovers transactions left
    /// by dead runs; journals of live runs are never touched.
    pub fn open(ws: &Workspace) -> Result<(Journal, Vec<RecoveryReport>), FsError> {
        let state_dir = ws.root().join(STATE_DIR);
        fs::create_dir_all(&state_dir)
            .map_err(|e| FsError::io("create folder", state_dir.display(), e))?;
        let ignore = state_dir.join(".gitignore");
        if !ignore.exists() {
            fs::write(&ignore, "*\n").map_err(|e| FsError::io("write", ignore.display(), e))?;
        }
        let run_id = new_run_id();
        let lock_path = state_dir.join(format!("run-{run_id}.lock"));
        let lock = take_lock(&lock_path)?;
        let journal = Journal {
            ws: ws.clone(),
            state_dir,
            run_id,
            lock_path,
            _lock: lock,
            next_txn: Mutex::new(1),
        };
        let reports = journal.recover_dead()?;
        Ok((journal, reports))
    }

    /// This run's unique id (`r<pid>-<hex>`).
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Path of the journal file for `run_id`.
    pub(crate) fn journal_path(&self, run_id: &str) -> PathBuf {
        self.state_dir.join(format!("journal-{run_id}.json"))
    }

    /// Recovers the journal of every run whose lock is free (its owner is dead).
    fn recover_dead(&self) -> Result<Vec<RecoveryReport>, FsError> {
        let dir = &self.state_dir;
        let read = fs::read_dir(dir).map_err(|e| FsError::io("list", dir.display(), e))?;
        let mut ids = BTreeSet::new();
        for item in read.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            let id = name
                .strip_prefix("run-")
                .and_then(|n| n.strip_suffix(".lock"))
                .or_else(|| {
                    let n = name.strip_prefix("journal-")?;
                    n.strip_suffix(".json")
                        .or_else(|| n.strip_suffix(".json.tmp"))
                });
            if let Some(id) = id
                && id != self.run_id
            {
                ids.insert(id.to_owned());
            }
        }
        let mut reports = Vec::new();
        for id in ids {
            if let Some(r) = self.recover_run(&id)? {
                reports.push(r);
            }
        }
        Ok(reports)
    }

    /// Recovers one run if its lock can be taken; `Ok(None)` when it is alive or left nothing.
    fn recover_run(&self, id: &str) -> Result<Option<RecoveryReport>, FsError> {
        let lock_path = self.state_dir.join(format!("run-{id}.lock"));
        let lock = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| FsError::io("open lock", lock_path.display(), e))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Ok(None),
            Err(fs::TryLockError::Error(e)) => {
                return Err(FsError::io("lock", lock_path.display(), e));
            }
        }
        let path = self.journal_path(id);
        let report = match fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<JournalFile>(&bytes) {
                Ok(j) if j.version == JOURNAL_VERSION => Some(self.recover_file(&path, &j)?),
                Ok(j) => {
                    tracing::warn!(journal = %path.display(), version = j.version, "unknown journal version; left in place");
                    return Ok(None);
                }
                Err(e) => {
                    tracing::warn!(journal = %path.display(), error = %e, "unreadable journal; left in place");
                    return Ok(None);
                }
            },
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(FsError::io("read", path.display(), e)),
        };
        remove_quietly(&path.with_extension("json.tmp"));
        remove_quietly(&lock_path);
        Ok(report)
    }

    /// Rolls back or finishes the transaction in `j`, then deletes its journal file.
    fn recover_file(&self, path: &Path, j: &JournalFile) -> Result<RecoveryReport, FsError> {
        let action = match j.state {
            TxnState::Committed => {
                finish(&j.entries);
                RecoveryAction::Completed
            }
            TxnState::Applying => match rollback(&j.entries, &j.created_dirs) {
                Ok(()) => RecoveryAction::RolledBack,
                Err(e) => RecoveryAction::Incomplete {
                    detail: e.to_string(),
                },
            },
        };
        if !matches!(action, RecoveryAction::Incomplete { .. }) {
            fs::remove_file(path).map_err(|e| FsError::io("remove", path.display(), e))?;
        }
        let mut files: Vec<String> = Vec::new();
        for e in &j.entries {
            let shown = self.ws.display(&e.target);
            if !files.contains(&shown) {
                files.push(shown);
            }
        }
        let report = RecoveryReport {
            run_id: j.run_id.clone(),
            action,
            files,
        };
        tracing::warn!("{report}");
        Ok(report)
    }

    /// Writes the journal atomically (temp file, fsync, rename, fsync folder).
    pub(crate) fn write_journal(&self, j: &JournalFile) -> Result<(), FsError> {
        let path = self.journal_path(&self.run_id);
        let tmp = path.with_extension("json.tmp");
        let bytes = serde_json::to_vec_pretty(j).map_err(|e| FsError::Journal {
            path: path.clone(),
            detail: format!("cannot encode: {e}"),
        })?;
        let shown = &path;
        let io = |op: &'static str| move |e| FsError::io(op, shown.display(), e);
        let mut f = File::create(&tmp).map_err(io("create"))?;
        f.write_all(&bytes).map_err(io("write"))?;
        f.sync_all().map_err(io("fsync"))?;
        fs::rename(&tmp, &path).map_err(io("rename"))?;
        sync_dir(&self.state_dir);
        Ok(())
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        remove_quietly(&self.lock_path);
    }
}

/// Creates and locks a lock file, publishing it under its final name only once locked, so a
/// scanning run never mistakes a starting run for a dead one.
fn take_lock(lock_path: &Path) -> Result<File, FsError> {
    let staging = lock_path.with_extension("lock.new");
    let file = File::create(&staging).map_err(|e| FsError::io("create", staging.display(), e))?;
    file.try_lock().map_err(|e| FsError::Journal {
        path: lock_path.to_path_buf(),
        detail: format!("cannot lock this run's lock file: {e}"),
    })?;
    fs::rename(&staging, lock_path).map_err(|e| FsError::io("rename", lock_path.display(), e))?;
    Ok(file)
}

/// A run id unique across processes and within one: `r<pid>-<hex of nanos + counter>`.
fn new_run_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let n = nanos.wrapping_add(COUNTER.fetch_add(1, Ordering::Relaxed));
    format!("r{}-{n:x}", std::process::id())
}

/// Puts every file of an unfinished transaction back as it was. Idempotent: steps that never ran
/// are harmless to undo.
pub(crate) fn rollback(entries: &[Entry], created_dirs: &[PathBuf]) -> Result<(), FsError> {
    let mut first_err = None;
    for e in entries.iter().rev() {
        if let Err(err) = rollback_entry(e) {
            tracing::error!(target = %e.target.display(), error = %err, "rollback step failed");
            first_err.get_or_insert(err);
        }
    }
    for d in created_dirs.iter().rev() {
        let _ = fs::remove_dir(d);
    }
    first_err.map_or(Ok(()), Err)
}

fn rollback_entry(e: &Entry) -> Result<(), FsError> {
    if let Some(temp) = &e.temp {
        remove_quietly(temp);
    }
    match &e.backup {
        Some(backup) => {
            let now = read_with_hash(&e.target)?.map(|(_, h)| h.to_string());
            let ours = match &now {
                None => true,
                Some(h) => Some(h) == e.new_hash.as_ref() || Some(h) == e.old_hash.as_ref(),
            };
            if !ours {
                return Err(FsError::Diverged {
                    path: e.target.display().to_string(),
                    backup: backup.clone(),
                });
            }
            restore_backup(backup, &e.target)
        }
        None => {
            let created = match (read_with_hash(&e.target)?, &e.new_hash) {
                (Some((_, h)), Some(want)) => h.to_string() == *want,
                _ => false,
            };
            if created {
                fs::remove_file(&e.target)
                    .map_err(|err| FsError::io("remove", e.target.display(), err))?;
            }
            Ok(())
        }
    }
}

/// Moves a backup back over its target; a missing backup means there is nothing to restore.
fn restore_backup(backup: &Path, target: &Path) -> Result<(), FsError> {
    match fs::rename(backup, target) {
        Ok(()) => {
            // When backup and target were hard links to one file, rename did nothing.
            remove_quietly(backup);
            Ok(())
        }
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
            let tmp = target.with_file_name(".tether-restore.tmp");
            let io = |op: &'static str| move |e| FsError::io(op, target.display(), e);
            fs::copy(backup, &tmp).map_err(io("copy backup"))?;
            fs::rename(&tmp, target).map_err(io("restore"))?;
            remove_quietly(backup);
            Ok(())
        }
        Err(e) => Err(FsError::io("restore backup", target.display(), e)),
    }
}

/// Cleans up after a transaction whose renames all happened: drops backups and stray temps.
pub(crate) fn finish(entries: &[Entry]) {
    for e in entries {
        for p in e.backup.iter().chain(&e.temp) {
            remove_quietly(p);
        }
    }
}

/// Removes a file, logging anything but "already gone".
pub(crate) fn remove_quietly(path: &Path) {
    if let Err(e) = fs::remove_file(path)
        && e.kind() != ErrorKind::NotFound
    {
        tracing::warn!(path = %path.display(), error = %e, "cannot remove");
    }
}

/// Flushes a folder's entries (new names) to disk; best effort.
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(f) = File::open(dir) {
        let _ = f.sync_all();
    }
}
