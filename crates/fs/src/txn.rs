//! The all-or-nothing commit.

use std::collections::HashSet;
use std::fs::File;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::fs::{Mode, OFlags};

use crate::beneath::RootDir;
use crate::record::{Entry, JOURNAL_VERSION, JournalFile, TxnState, backup_path, temp_name};
use crate::rollback::{copy_exclusive, finish, read_with_stat, remove_quietly_abs, rollback};
use crate::{
    ChangeKind, ChangeOp, CommitReceipt, ContentHash, FileReceipt, FsError, Journal, WritePath,
    hash_bytes,
};

/// Set-user-id and set-group-id bits: never handed to new content owned by someone else.
const SET_ID_BITS: u32 = 0o6000;

/// One planned step: put new bytes at a target, or (with `content == None`) remove it.
struct Step {
    rel: String,
    target: PathBuf,
    /// Shared with the file's receipt, so the write hooks see these very bytes.
    content: Option<Arc<[u8]>>,
    /// The file being replaced: its mode and owner carry over to the new content.
    keep: Option<Keep>,
    /// The target exists now, so it gets a backup.
    existed: bool,
    /// The target's hash when planned (it existed).
    old_hash: Option<ContentHash>,
}

/// Mode and owner of a file being replaced.
#[derive(Clone, Copy)]
struct Keep {
    mode: u32,
    uid: u32,
    gid: u32,
}

impl Journal {
    /// All-or-nothing commit: validates every op against the disk, then writes them all or none.
    ///
    /// Any stale expectation gives [`FsError::Conflict`] with nothing written; any later failure
    /// rolls back every file already changed. Receipts come back in op order. The workspace's
    /// write lock is held from the check to the last rename, so other processes' commits
    /// never interleave with this one.
    pub fn commit(&self, ops: Vec<ChangeOp>) -> Result<CommitReceipt, FsError> {
        self.commit_with_fault(ops, &|_| Ok(()))
    }

    /// [`Journal::commit`] with a test hook: `fault(n)` runs just before the n-th apply step
    /// (rename or removal, 0-based) and an error aborts the commit like a failed rename.
    #[doc(hidden)]
    pub fn commit_with_fault(
        &self,
        ops: Vec<ChangeOp>,
        fault: &dyn Fn(usize) -> std::io::Result<()>,
    ) -> Result<CommitReceipt, FsError> {
        run_commit(self, ops, fault)
    }
}

/// The all-or-nothing commit behind [`Journal::commit`]; `fault(n)` runs just before the n-th
/// apply step (tests only).
pub(crate) fn run_commit(
    j: &Journal,
    ops: Vec<ChangeOp>,
    fault: &dyn Fn(usize) -> std::io::Result<()>,
) -> Result<CommitReceipt, FsError> {
    let mut next = crate::lock(&j.commit_lock);
    let txn_id = *next;
    *next += 1;
    let kept = j.journal_path(&j.run_id);
    if kept.exists() {
        return Err(FsError::Journal {
            path: kept,
            detail: "an earlier write of this run could not be rolled back, so no more \
                     writes are made in this run; restart it and the next run will recover \
                     or report that transaction"
                .into(),
        });
    }
    let _held = WriteLock::take(&j.write_lock, j.lock_wait)?;
    let dir = j.ws.beneath();
    let (steps, files) = plan(&j.ws, ops)?;
    if steps.is_empty() {
        return Ok(CommitReceipt { txn_id, files });
    }
    let journal = journal_for(j, txn_id, &steps);
    j.write_journal(&journal)?;
    let mut dirs_made = 0;
    // Once every rename is on disk the commit stands: a crash from here on is completed by
    // recovery, which finds every target holding its new content.
    let result = apply(j, &journal, &steps, fault, &mut dirs_made);
    let path = j.journal_path(&j.run_id);
    match result {
        Ok(()) => {
            finish(dir, &journal.entries);
            remove_quietly_abs(&path);
            Ok(CommitReceipt { txn_id, files })
        }
        Err(err) => {
            let unmade = &journal.created_dirs[dirs_made..];
            match rollback(dir, &journal.entries, &journal.created_dirs, Some(unmade)) {
                Ok(()) => remove_quietly_abs(&path),
                // Leave the journal: the next run recovers it once this one has ended.
                Err(e) => tracing::error!(error = %e, "rollback incomplete; journal kept"),
            }
            Err(err)
        }
    }
}

/// Lays out temp, backup and folder paths for every step before anything touches the disk.
fn journal_for(j: &Journal, txn_id: u64, steps: &[Step]) -> JournalFile {
    let dir = j.ws.beneath();
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    let mut entries = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let parent = s.target.parent().unwrap_or(Path::new(""));
        let mut missing = Vec::new();
        let mut d = parent;
        while !d.as_os_str().is_empty()
            && !created_dirs.iter().any(|c| c == d)
            && dir.kind(d).ok().flatten().is_none()
        {
            missing.push(d.to_path_buf());
            d = d.parent().unwrap_or(Path::new(""));
        }
        created_dirs.extend(missing.into_iter().rev());
        entries.push(Entry {
            target: s.target.clone(),
            temp: s
                .content
                .as_ref()
                .map(|_| s.target.with_file_name(temp_name(&j.run_id, txn_id, i))),
            backup: s.existed.then(|| backup_path(&j.run_id, txn_id, i)),
            new_hash: s.content.as_ref().map(|c| hash_bytes(c).to_string()),
            old_hash: s.old_hash.map(|h| h.to_string()),
        });
    }
    JournalFile {
        version: JOURNAL_VERSION,
        root: j.ws.root().to_path_buf(),
        run_id: j.run_id.clone(),
        txn_id,
        state: TxnState::Applying,
        entries,
        created_dirs,
    }
}

/// Prepares temps and backups, then performs the renames and removals in order.
fn apply(
    journal: &Journal,
    j: &JournalFile,
    steps: &[Step],
    fault: &dyn Fn(usize) -> std::io::Result<()>,
    dirs_made: &mut usize,
) -> Result<(), FsError> {
    let dir = journal.ws.beneath();
    for d in &j.created_dirs {
        match dir.mkdir(d) {
            Err(e) if e.kind() != ErrorKind::AlreadyExists => {
                return Err(FsError::io("create folder", d.display(), e));
            }
            _ => *dirs_made += 1,
        }
    }
    for (e, s) in j.entries.iter().zip(steps) {
        if let (Some(temp), Some(content)) = (&e.temp, &s.content) {
            write_temp(dir, temp, content, s.keep)
                .map_err(|err| FsError::io("write", &s.rel, err))?;
        }
        if let Some(backup) = &e.backup {
            make_backup(dir, &e.target, backup)
                .map_err(|err| FsError::io("back up", &s.rel, err))?;
        }
    }
    let mut dirs = HashSet::new();
    for (n, (e, s)) in j.entries.iter().zip(steps).enumerate() {
        let op = if e.temp.is_some() { "rename" } else { "remove" };
        fault(n).map_err(|err| FsError::io(op, &s.rel, err))?;
        match &e.temp {
            Some(temp) => dir.rename(temp, &e.target),
            None => dir.unlink(&e.target),
        }
        .map_err(|err| FsError::io(op, &s.rel, err))?;
        dirs.insert(e.target.parent().unwrap_or(Path::new("")).to_path_buf());
    }
    for d in dirs {
        dir.sync_dir(&d);
    }
    Ok(())
}

/// The workspace-wide write lock (flock), released on drop.
struct WriteLock<'a>(&'a File);

impl<'a> WriteLock<'a> {
    /// Waits up to `wait` for the lock, polling, so a stuck process never blocks us forever.
    fn take(file: &'a File, wait: Duration) -> Result<Self, FsError> {
        let deadline = Instant::now() + wait;
        let mut pause = Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(WriteLock(file)),
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(FsError::Busy { waited: wait });
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(FsError::io("lock", ".tether/write.lock", e));
                }
            }
        }
    }
}

impl Drop for WriteLock<'_> {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// Checks every op against the disk right now and turns the ops into steps plus receipts.
fn plan(
    ws: &crate::Workspace,
    ops: Vec<ChangeOp>,
) -> Result<(Vec<Step>, Vec<FileReceipt>), FsError> {
    let mut seen = HashSet::new();
    for op in &ops {
        for p in op.paths() {
            if !seen.insert(p.abs().to_path_buf()) {
                return Err(FsError::DuplicatePath {
                    path: p.rel().into(),
                });
            }
        }
    }
    let mut steps = Vec::new();
    let mut files = Vec::new();
    for op in ops {
        match op {
            ChangeOp::Write {
                path,
                content,
                expect,
            } => {
                let (_, keep) = expect_hash(ws, &path, expect)?;
                let content = Arc::from(content);
                files.push(receipt(&path, ChangeKind::Modified, Some(&content)));
                steps.push(put(&path, content, Some(keep), Some(expect)));
            }
            ChangeOp::Create { path, content } => {
                expect_absent(ws, &path)?;
                let content = Arc::from(content);
                files.push(receipt(&path, ChangeKind::Created, Some(&content)));
                steps.push(put(&path, content, None, None));
            }
            ChangeOp::Delete { path, expect } => {
                expect_hash(ws, &path, expect)?;
                files.push(receipt(&path, ChangeKind::Deleted, None));
                steps.push(remove(&path, expect));
            }
            ChangeOp::Rename {
                from,
                to,
                expect,
                content,
            } => {
                let (old, keep) = expect_hash(ws, &from, expect)?;
                expect_absent(ws, &to)?;
                let content = Arc::from(content.unwrap_or(old));
                let kind = ChangeKind::Renamed { from: from.clone() };
                files.push(receipt(&to, kind, Some(&content)));
                steps.push(put(&to, content, Some(keep), None));
                steps.push(remove(&from, expect));
            }
        }
    }
    Ok((steps, files))
}

/// A step that puts `content` at `path`; `old` is the hash of what is there now, if anything.
fn put(path: &WritePath, content: Arc<[u8]>, keep: Option<Keep>, old: Option<ContentHash>) -> Step {
    Step {
        rel: path.rel().into(),
        target: path.rel_path().to_path_buf(),
        content: Some(content),
        keep,
        existed: old.is_some(),
        old_hash: old,
    }
}

fn remove(path: &WritePath, old: ContentHash) -> Step {
    Step {
        rel: path.rel().into(),
        target: path.rel_path().to_path_buf(),
        content: None,
        keep: None,
        existed: true,
        old_hash: Some(old),
    }
}

fn receipt(path: &WritePath, kind: ChangeKind, content: Option<&Arc<[u8]>>) -> FileReceipt {
    FileReceipt {
        path: path.clone(),
        kind,
        hash_after: content.map(|c| hash_bytes(c)),
        content: content.cloned(),
    }
}

/// The file must be a regular file with hash `expect`; returns its bytes, mode and owner.
fn expect_hash(
    ws: &crate::Workspace,
    path: &WritePath,
    expect: ContentHash,
) -> Result<(Vec<u8>, Keep), FsError> {
    let conflict = |detail: String| FsError::Conflict {
        path: path.rel().into(),
        detail,
    };
    let Some((bytes, hash, st)) = read_with_stat(ws.beneath(), path.rel_path(), path.rel())? else {
        return Err(conflict("it no longer exists".into()));
    };
    if hash != expect {
        return Err(conflict("its content differs".into()));
    }
    let keep = Keep {
        mode: st.st_mode & 0o7777,
        uid: st.st_uid,
        gid: st.st_gid,
    };
    Ok((bytes, keep))
}

/// The file must not exist (a dangling symlink counts as existing).
fn expect_absent(ws: &crate::Workspace, path: &WritePath) -> Result<(), FsError> {
    match ws.beneath().kind(path.rel_path()) {
        Ok(None) => Ok(()),
        Ok(Some(_)) => Err(FsError::Conflict {
            path: path.rel().into(),
            detail: "expected it not to exist, but it does".into(),
        }),
        Err(e) => Err(FsError::io("stat", path.rel(), e)),
    }
}

/// Writes new content to a fresh temp file and flushes it to disk. A replaced file's mode and
/// owner carry over; when the owner cannot be kept, set-id bits are dropped instead.
fn write_temp(
    dir: &RootDir,
    temp: &Path,
    content: &[u8],
    keep: Option<Keep>,
) -> std::io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
    let mode = keep.map_or(0o666, |k| k.mode & !SET_ID_BITS & 0o777);
    let mut f = dir.open_file(temp, flags, mode)?;
    f.write_all(content)?;
    if let Some(k) = keep {
        let st = rustix::fs::fstat(&f)?;
        let mut mode = k.mode;
        if (st.st_uid, st.st_gid) != (k.uid, k.gid) {
            let owner = rustix::fs::Uid::from_raw(k.uid);
            let group = rustix::fs::Gid::from_raw(k.gid);
            if rustix::fs::fchown(&f, Some(owner), Some(group)).is_err() {
                mode &= !SET_ID_BITS;
            }
        }
        // `open` applies the umask, and a chown clears set-id bits: set the exact bits last.
        rustix::fs::fchmod(&f, Mode::from_raw_mode(mode))?;
    }
    f.sync_all()
}

/// Keeps the original under `.tether/`: a hard link when possible, else a complete copy that
/// appears under its final name only once fully written.
fn make_backup(dir: &RootDir, target: &Path, backup: &Path) -> std::io::Result<()> {
    if dir.hard_link(target, backup).is_ok() {
        return Ok(());
    }
    let tmp = backup.with_extension("tmp");
    let src = dir.open_file(target, OFlags::RDONLY | OFlags::NONBLOCK, 0)?;
    copy_exclusive(src, dir, &tmp)?;
    dir.rename(&tmp, backup)
}
