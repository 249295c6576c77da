//! The per-run journal: lock files, the on-disk transaction record, and crash recovery.
//!
//! Journals live in the user's state folder, keyed by the canonical workspace root, never in
//! the workspace: a journal that came with a repository must not be able to act on the disk.

use std::collections::BTreeSet;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::OFlags;

use crate::beneath::Kind;
use crate::record::{JOURNAL_VERSION, JournalFile, TxnState};
use crate::rollback::{all_applied, finish, remove_quietly_abs, rollback, slash, validate_entries};
use crate::{FsError, STATE_DIR, Workspace, hash_bytes};

/// How long a commit waits for another process's write lock on the same workspace by default,
/// as long as a call waits for the run's own write permit.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(120);

/// The per-run journal through which every write goes.
///
/// Owns `<state>/run-<run_id>.lock` (flock held for the journal's life) and writes
/// `<state>/journal-<run_id>.json` while a transaction is in flight, so a crash can be undone
/// by the next run. `<state>` is this workspace's folder under the user's state folder.
#[derive(Debug)]
pub struct Journal {
    pub(crate) ws: Workspace,
    pub(crate) state_dir: PathBuf,
    pub(crate) run_id: String,
    lock_path: PathBuf,
    _lock: File,
    /// `<root>/.tether/write.lock`, shared by every process writing this workspace.
    pub(crate) write_lock: File,
    pub(crate) lock_wait: Duration,
    /// Held for the whole of a commit so this run's commits never interleave; it guards the
    /// next transaction number.
    pub(crate) commit_lock: Mutex<u64>,
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
    /// The journal failed a check (it came with the workspace, or names a path or temp that
    /// tether would not have made), so nothing in it was acted on; it was moved aside.
    Refused {
        /// Which check failed.
        detail: String,
        /// Where the journal now is.
        moved_to: PathBuf,
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
                 Nothing was overwritten; the journal and the original copies stay (originals \
                 under .tether/) for you to inspect",
                self.run_id
            ),
            RecoveryAction::Refused { detail, moved_to } => write!(
                f,
                "did not act on the journal of run {}: {detail}. Nothing in it was done; it was \
                 moved aside to {}",
                self.run_id,
                moved_to.display()
            ),
        }
    }
}

/// The state folder for the workspace at canonical `root`: `<state_root>/<hash of root>`.
pub fn workspace_state_dir(state_root: &Path, root: &Path) -> PathBuf {
    let key = hash_bytes(root.as_os_str().as_encoded_bytes());
    state_root.join(format!("{key}"))
}

impl Journal {
    /// Checks that `<root>/.tether` is a real folder (creating it), takes this run's lock in
    /// the workspace's state folder under `state_root`, and recovers transactions left by dead
    /// runs; journals of live runs are never touched, and journals found inside the workspace
    /// are never acted on.
    pub fn open(
        ws: &Workspace,
        state_root: &Path,
    ) -> Result<(Journal, Vec<RecoveryReport>), FsError> {
        let shipped = prepare_tether_dir(ws)?;
        let state_dir = workspace_state_dir(state_root, ws.root());
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&state_dir)
            .map_err(|e| FsError::io("create folder", state_dir.display(), e))?;
        let root_note = state_dir.join("root");
        if !root_note.exists() {
            let _ = fs::write(&root_note, ws.root().as_os_str().as_encoded_bytes());
        }
        let write_lock = ws
            .beneath()
            .open_file(
                &Path::new(STATE_DIR).join("write.lock"),
                OFlags::RDWR | OFlags::CREATE,
                0o644,
            )
            .map_err(|e| FsError::io("open", ".tether/write.lock", e))?;
        let run_id = new_run_id();
        let lock_path = state_dir.join(format!("run-{run_id}.lock"));
        let lock = take_lock(&lock_path)?;
        let journal = Journal {
            ws: ws.clone(),
            state_dir,
            run_id,
            lock_path,
            _lock: lock,
            write_lock,
            lock_wait: DEFAULT_LOCK_WAIT,
            commit_lock: Mutex::new(1),
        };
        let mut reports = journal.refuse_shipped(shipped);
        reports.extend(journal.recover_dead()?);
        Ok((journal, reports))
    }

    /// Sets how long a commit waits for another process's write lock on this workspace.
    pub fn with_lock_wait(mut self, wait: Duration) -> Self {
        self.lock_wait = wait;
        self
    }

    /// This run's unique id (`r<pid>-<hex>`).
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The folder holding this workspace's journals and run locks.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// Path of the journal file for `run_id`.
    pub(crate) fn journal_path(&self, run_id: &str) -> PathBuf {
        self.state_dir.join(format!("journal-{run_id}.json"))
    }

    /// Renames journals found inside the workspace's `.tether/` so they can never be acted on,
    /// and says so.
    fn refuse_shipped(&self, names: Vec<String>) -> Vec<RecoveryReport> {
        let mut reports = Vec::new();
        for name in names {
            let from = Path::new(STATE_DIR).join(&name);
            let to = Path::new(STATE_DIR).join(format!("{name}.ignored"));
            let moved = self.ws.beneath().rename(&from, &to);
            let detail = match moved {
                Ok(()) => "it was found inside the workspace (.tether/), where tether never keeps \
                           journals, so it came with the files and is not trusted"
                    .to_owned(),
                Err(e) => format!(
                    "it was found inside the workspace (.tether/), where tether never keeps \
                     journals; it could not be renamed ({e})"
                ),
            };
            let report = RecoveryReport {
                run_id: name,
                action: RecoveryAction::Refused {
                    detail,
                    moved_to: self.ws.root().join(to),
                },
                files: Vec::new(),
            };
            tracing::warn!("{report}");
            reports.push(report);
        }
        reports
    }

    /// Recovers the journal of every run whose lock is free (its owner is dead).
    fn recover_dead(&self) -> Result<Vec<RecoveryReport>, FsError> {
        let dir = &self.state_dir;
        let read = fs::read_dir(dir).map_err(|e| FsError::io("list", dir.display(), e))?;
        let mut ids = BTreeSet::new();
        for item in read.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            if let Some(id) = run_id_of(&name)
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
            .mode(0o600)
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
            Ok(bytes) => Some(match self.checked(id, &bytes) {
                Ok(j) => self.recover_file(&path, &j)?,
                Err(detail) => self.set_aside(id, &path, detail),
            }),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(FsError::io("read", path.display(), e)),
        };
        remove_quietly_abs(&path.with_extension("json.tmp"));
        remove_quietly_abs(&lock_path);
        Ok(report)
    }

    /// Parses a dead run's journal and checks that it is one this run could have written.
    fn checked(&self, id: &str, bytes: &[u8]) -> Result<JournalFile, String> {
        let j: JournalFile = serde_json::from_slice(bytes)
            .map_err(|e| format!("it does not parse as a journal ({e})"))?;
        if j.version != JOURNAL_VERSION {
            return Err(format!(
                "it is a version {} journal and this tether reads version {JOURNAL_VERSION}; \
                 the tether that wrote it can recover it, or check the files it names by hand",
                j.version
            ));
        }
        if j.run_id != id {
            return Err(format!(
                "it names run {} but its file is run {id}'s",
                j.run_id
            ));
        }
        if j.root != self.ws.root() {
            return Err(format!("it is for another workspace, {}", j.root.display()));
        }
        validate_entries(&j)?;
        Ok(j)
    }

    /// Moves a journal that failed a check out of the way, so no later run acts on it either.
    fn set_aside(&self, id: &str, path: &Path, detail: String) -> RecoveryReport {
        let moved_to = path.with_extension("json.refused");
        if let Err(e) = fs::rename(path, &moved_to) {
            tracing::error!(journal = %path.display(), error = %e, "cannot move a refused journal aside");
        }
        let report = RecoveryReport {
            run_id: id.to_owned(),
            action: RecoveryAction::Refused { detail, moved_to },
            files: Vec::new(),
        };
        tracing::warn!("{report}");
        report
    }

    /// Rolls back or finishes the transaction in `j`, then deletes its journal file.
    fn recover_file(&self, path: &Path, j: &JournalFile) -> Result<RecoveryReport, FsError> {
        let dir = self.ws.beneath();
        let action = match j.state {
            // Every rename happened (the disk says so): the run died cleaning up.
            TxnState::Committed => {
                finish(dir, &j.entries);
                RecoveryAction::Completed
            }
            TxnState::Applying if all_applied(dir, &j.entries) => {
                finish(dir, &j.entries);
                RecoveryAction::Completed
            }
            TxnState::Applying => match rollback(dir, &j.entries, &j.created_dirs, None) {
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
            let shown = slash(&e.target);
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
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io("create"))?;
        f.write_all(&bytes).map_err(io("write"))?;
        f.sync_all().map_err(io("fsync"))?;
        fs::rename(&tmp, &path).map_err(io("rename"))?;
        if let Ok(d) = File::open(&self.state_dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        remove_quietly_abs(&self.lock_path);
    }
}

/// The run id in a state-folder file name (`run-<id>.lock`, `journal-<id>.json[.tmp]`).
fn run_id_of(name: &str) -> Option<&str> {
    name.strip_prefix("run-")
        .and_then(|n| n.strip_suffix(".lock"))
        .or_else(|| {
            let n = name.strip_prefix("journal-")?;
            n.strip_suffix(".json")
                .or_else(|| n.strip_suffix(".json.tmp"))
        })
}

/// Makes sure `<root>/.tether` is a real folder (never a symlink or file) and lists journals
/// someone put there, which are never acted on.
fn prepare_tether_dir(ws: &Workspace) -> Result<Vec<String>, FsError> {
    let dir = ws.beneath();
    let state = Path::new(STATE_DIR);
    let shown = ws.root().join(STATE_DIR);
    let refuse = |what: &str| FsError::Journal {
        path: shown.clone(),
        detail: format!(
            "it is {what}, but tether keeps its backups in a real folder there and will not \
             follow it; remove or rename it, then start again"
        ),
    };
    match dir
        .kind(state)
        .map_err(|e| FsError::io("stat", shown.display(), e))?
    {
        Some(Kind::Dir) => {}
        None => match dir.mkdir(state) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                if dir.kind(state).ok().flatten() != Some(Kind::Dir) {
                    return Err(refuse("not a folder"));
                }
            }
            Err(e) => return Err(FsError::io("create folder", shown.display(), e)),
        },
        Some(Kind::Symlink) => return Err(refuse("a symlink")),
        Some(Kind::File) => return Err(refuse("a file")),
        Some(Kind::Special(what)) => return Err(refuse(what)),
    }
    let ignore = state.join(".gitignore");
    if dir.kind(&ignore).ok().flatten().is_none() {
        let made = dir.open_file(
            &ignore,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
            0o644,
        );
        if let Ok(mut f) = made {
            let _ = f.write_all(b"*\n");
        }
    }
    let fd = dir
        .dir(state)
        .map_err(|e| FsError::io("open", shown.display(), e))?;
    let listing = fs::read_dir(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&fd)
    ))
    .or_else(|_| fs::read_dir(&shown))
    .map_err(|e| FsError::io("list", shown.display(), e))?;
    let mut shipped: Vec<String> = listing
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("journal-") && n.ends_with(".json"))
        .collect();
    shipped.sort();
    Ok(shipped)
}

/// Creates and locks a lock file, publishing it under its final name only once locked, so a
/// scanning run never mistakes a starting run for a dead one.
fn take_lock(lock_path: &Path) -> Result<File, FsError> {
    let staging = lock_path.with_extension("lock.new");
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&staging)
        .map_err(|e| FsError::io("create", staging.display(), e))?;
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
