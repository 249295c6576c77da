//! The all-or-nothing commit.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::journal::{Entry, JournalFile, TxnState, finish, remove_quietly, rollback, sync_dir};
use crate::{
    ChangeKind, ChangeOp, CommitReceipt, ContentHash, FileReceipt, FsError, Journal, WritePath,
    hash_bytes, read_with_hash,
};

/// One planned step: put new bytes at a target, or (with `content == None`) remove it.
struct Step {
    rel: String,
    target: PathBuf,
    content: Option<Vec<u8>>,
    /// Permission bits for the new file; `None` uses the default for new files.
    mode: Option<u32>,
    /// The target exists now, so it gets a backup.
    existed: bool,
    /// The target's hash when planned (it existed).
    old_hash: Option<ContentHash>,
}

impl Journal {
    /// All-or-nothing commit: validates every op against the disk, then writes them all or none.
    ///
    /// Any stale expectation gives [`FsError::Conflict`] with nothing written; any later failure
    /// rolls back every file already changed. Receipts come back in op order.
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
        let mut next = self.next_txn.lock().unwrap_or_else(|e| e.into_inner());
        let txn_id = *next;
        *next += 1;
        let kept = self.journal_path(&self.run_id);
        if kept.exists() {
            return Err(FsError::Journal {
                path: kept,
                detail: "an earlier write of this run could not be rolled back, so no more \
                         writes are made in this run; restart it and the next run will recover \
                         or report that transaction"
                    .into(),
            });
        }
        let (steps, files) = plan(ops)?;
        if steps.is_empty() {
            return Ok(CommitReceipt { txn_id, files });
        }
        let journal = self.journal_for(txn_id, &steps);
        self.write_journal(&journal)?;
        let result = self.apply(&journal, &steps, fault).and_then(|()| {
            let mut done = journal.clone();
            done.state = TxnState::Committed;
            self.write_journal(&done)
        });
        let path = self.journal_path(&self.run_id);
        match result {
            Ok(()) => {
                finish(&journal.entries);
                remove_quietly(&path);
                Ok(CommitReceipt { txn_id, files })
            }
            Err(err) => {
                match rollback(&journal.entries, &journal.created_dirs) {
                    Ok(()) => remove_quietly(&path),
                    // Leave the journal: the next run recovers it once this one has ended.
                    Err(e) => tracing::error!(error = %e, "rollback incomplete; journal kept"),
                }
                Err(err)
            }
        }
    }

    /// Lays out temp, backup and folder paths for every step before anything touches the disk.
    fn journal_for(&self, txn_id: u64, steps: &[Step]) -> JournalFile {
        let tag = format!("{}-{txn_id}", self.run_id);
        let mut created_dirs: Vec<PathBuf> = Vec::new();
        let mut entries = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            let dir = s.target.parent().unwrap_or(Path::new("/"));
            let mut missing = Vec::new();
            let mut d = dir;
            while !d.exists() && !created_dirs.iter().any(|c| c == d) {
                missing.push(d.to_path_buf());
                match d.parent() {
                    Some(p) => d = p,
                    None => break,
                }
            }
            created_dirs.extend(missing.into_iter().rev());
            entries.push(Entry {
                target: s.target.clone(),
                temp: s
                    .content
                    .as_ref()
                    .map(|_| dir.join(format!(".tether-tmp-{tag}-{i}"))),
                backup: s
                    .existed
                    .then(|| self.state_dir.join(format!("backup-{tag}-{i}"))),
                new_hash: s.content.as_ref().map(|c| hash_bytes(c).to_string()),
                old_hash: s.old_hash.map(|h| h.to_string()),
            });
        }
        JournalFile {
            version: 1,
            run_id: self.run_id.clone(),
            txn_id,
            state: TxnState::Applying,
            entries,
            created_dirs,
        }
    }

    /// Prepares temps and backups, then performs the renames and removals in order.
    fn apply(
        &self,
        j: &JournalFile,
        steps: &[Step],
        fault: &dyn Fn(usize) -> std::io::Result<()>,
    ) -> Result<(), FsError> {
        for d in &j.created_dirs {
            match fs::create_dir(d) {
                Err(e) if e.kind() != ErrorKind::AlreadyExists => {
                    return Err(FsError::io("create folder", d.display(), e));
                }
                _ => {}
            }
        }
        for (e, s) in j.entries.iter().zip(steps) {
            if let (Some(temp), Some(content)) = (&e.temp, &s.content) {
                write_temp(temp, content, s.mode)
                    .map_err(|err| FsError::io("write", &s.rel, err))?;
            }
            if let Some(backup) = &e.backup {
                make_backup(&e.target, backup)
                    .map_err(|err| FsError::io("back up", &s.rel, err))?;
            }
        }
        let mut dirs = HashSet::new();
        for (n, (e, s)) in j.entries.iter().zip(steps).enumerate() {
            let op = if e.temp.is_some() { "rename" } else { "remove" };
            fault(n).map_err(|err| FsError::io(op, &s.rel, err))?;
            match &e.temp {
                Some(temp) => fs::rename(temp, &e.target),
                None => fs::remove_file(&e.target),
            }
            .map_err(|err| FsError::io(op, &s.rel, err))?;
            if let Some(d) = e.target.parent() {
                dirs.insert(d.to_path_buf());
            }
        }
        for d in dirs {
            sync_dir(&d);
        }
        Ok(())
    }
}

/// Checks every op against the disk right now and turns the ops into steps plus receipts.
fn plan(ops: Vec<ChangeOp>) -> Result<(Vec<Step>, Vec<FileReceipt>), FsError> {
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
                let (_, mode) = expect_hash(&path, expect)?;
                files.push(receipt(&path, ChangeKind::Modified, Some(&content)));
                steps.push(put(&path, content, Some(mode), Some(expect)));
            }
            ChangeOp::Create { path, content } => {
                expect_absent(&path)?;
                files.push(receipt(&path, ChangeKind::Created, Some(&content)));
                steps.push(put(&path, content, None, None));
            }
            ChangeOp::Delete { path, expect } => {
                expect_hash(&path, expect)?;
                files.push(receipt(&path, ChangeKind::Deleted, None));
                steps.push(remove(&path, expect));
            }
            ChangeOp::Rename {
                from,
                to,
                expect,
                content,
            } => {
                let (old, mode) = expect_hash(&from, expect)?;
                expect_absent(&to)?;
                let content = content.unwrap_or(old);
                let kind = ChangeKind::Renamed { from: from.clone() };
                files.push(receipt(&to, kind, Some(&content)));
                steps.push(put(&to, content, Some(mode), None));
                steps.push(remove(&from, expect));
            }
        }
    }
    Ok((steps, files))
}

/// A step that puts `content` at `path`; `old` is the hash of what is there now, if anything.
fn put(path: &WritePath, content: Vec<u8>, mode: Option<u32>, old: Option<ContentHash>) -> Step {
    Step {
        rel: path.rel().into(),
        target: path.abs().to_path_buf(),
        content: Some(content),
        mode,
        existed: old.is_some(),
        old_hash: old,
    }
}

fn remove(path: &WritePath, old: ContentHash) -> Step {
    Step {
        rel: path.rel().into(),
        target: path.abs().to_path_buf(),
        content: None,
        mode: None,
        existed: true,
        old_hash: Some(old),
    }
}

fn receipt(path: &WritePath, kind: ChangeKind, content: Option<&[u8]>) -> FileReceipt {
    FileReceipt {
        path: path.clone(),
        kind,
        hash_after: content.map(hash_bytes),
    }
}

/// The file must exist with hash `expect`; returns its bytes and permission bits.
fn expect_hash(path: &WritePath, expect: ContentHash) -> Result<(Vec<u8>, u32), FsError> {
    let conflict = |detail: String| FsError::Conflict {
        path: path.rel().into(),
        detail,
    };
    let Some((bytes, hash)) = read_with_hash(path.abs())? else {
        return Err(conflict("it no longer exists".into()));
    };
    if hash != expect {
        return Err(conflict(format!(
            "expected content hash {expect}, found {hash}"
        )));
    }
    let meta = fs::metadata(path.abs()).map_err(|e| FsError::io("stat", path.rel(), e))?;
    Ok((bytes, meta.permissions().mode() & 0o7777))
}

/// The file must not exist (a dangling symlink counts as existing).
fn expect_absent(path: &WritePath) -> Result<(), FsError> {
    match fs::symlink_metadata(path.abs()) {
        Ok(_) => Err(FsError::Conflict {
            path: path.rel().into(),
            detail: "expected it not to exist, but it does".into(),
        }),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Ok(()),
        Err(e) => Err(FsError::io("stat", path.rel(), e)),
    }
}

/// Writes new content to a fresh temp file with the given mode and flushes it to disk.
fn write_temp(temp: &Path, content: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode.unwrap_or(0o666))
        .open(temp)?;
    f.write_all(content)?;
    if let Some(mode) = mode {
        // `open` applies the umask; set the exact original bits.
        f.set_permissions(fs::Permissions::from_mode(mode))?;
    }
    f.sync_all()
}

/// Keeps the original under `.tether/`: a hard link when possible, else a complete copy that
/// appears under its final name only once fully written.
fn make_backup(target: &Path, backup: &Path) -> std::io::Result<()> {
    if fs::hard_link(target, backup).is_ok() {
        return Ok(());
    }
    let tmp = backup.with_extension("tmp");
    fs::copy(target, &tmp)?;
    File::open(&tmp)?.sync_all()?;
    fs::rename(&tmp, backup)
}
