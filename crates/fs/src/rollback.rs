//! Undoing and finishing transactions: rollback through folder descriptors, cleanup, and the
//! checks a journal must pass before recovery acts on it.

use std::fs::{self, File};
use std::io::{ErrorKind, Read};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use rustix::fs::{OFlags, Stat};

use crate::beneath::{Kind, RootDir};
use crate::confine::open_regular;
use crate::record::{Entry, JournalFile, backup_path, temp_name};
use crate::{ContentHash, FsError, STATE_DIR, hash_bytes};

/// Checks that every path is a plain path inside the root, outside `.tether/`, and that temps
/// and backups have exactly the names this run id and transaction would have given them.
pub(crate) fn validate_entries(j: &JournalFile) -> Result<(), String> {
    let plain = |p: &Path| {
        !p.as_os_str().is_empty()
            && p.components().all(|c| matches!(c, Component::Normal(_)))
            && !p.starts_with(STATE_DIR)
    };
    for (i, e) in j.entries.iter().enumerate() {
        if !plain(&e.target) {
            return Err(format!(
                "entry {i} names {}, which is not a plain path inside the workspace",
                e.target.display()
            ));
        }
        if let Some(temp) = &e.temp {
            let want = e.target.with_file_name(temp_name(&j.run_id, j.txn_id, i));
            if *temp != want {
                return Err(format!(
                    "entry {i}'s temp {} is not the name tether gives ({})",
                    temp.display(),
                    want.display()
                ));
            }
        }
        if let Some(backup) = &e.backup
            && *backup != backup_path(&j.run_id, j.txn_id, i)
        {
            return Err(format!(
                "entry {i}'s backup {} is not the name tether gives",
                backup.display()
            ));
        }
    }
    for d in &j.created_dirs {
        if !plain(d) || !j.entries.iter().any(|e| e.target.starts_with(d)) {
            return Err(format!(
                "created folder {} is not a folder of any of its files",
                d.display()
            ));
        }
    }
    Ok(())
}

/// Puts every file of an unfinished transaction back as it was. Idempotent: steps that never ran
/// are harmless to undo. `unmade` lists the folders the transaction never got to create, when
/// the caller knows (the run that failed); recovery after a crash looks at the disk instead.
pub(crate) fn rollback(
    dir: &RootDir,
    entries: &[Entry],
    created_dirs: &[PathBuf],
    unmade: Option<&[PathBuf]>,
) -> Result<(), FsError> {
    let mut first_err = None;
    for e in entries.iter().rev() {
        let folder = e.target.parent().unwrap_or(Path::new(""));
        let skip = match unmade {
            Some(unmade) => unmade.iter().any(|u| folder.starts_with(u)),
            None => false,
        };
        if skip {
            continue;
        }
        let gone = |rel: &Path| unmade.is_none() && never_made(dir, rel, created_dirs);
        if let Err(err) = rollback_entry_patiently(dir, e, &gone) {
            tracing::error!(target = %e.target.display(), error = %err, "rollback step failed");
            first_err.get_or_insert(err);
        }
    }
    for d in created_dirs.iter().rev() {
        let _ = dir.rmdir(d);
    }
    first_err.map_or(Ok(()), Err)
}

/// Rolls back one entry, retrying for a moment when the path is in flux (a folder swapped for
/// a symlink and back): a transient swap must not strand a temp or stop the run's writes.
/// A file someone changed is never retried: that is a decision, not a race.
fn rollback_entry_patiently(
    dir: &RootDir,
    e: &Entry,
    never_made: &dyn Fn(&Path) -> bool,
) -> Result<(), FsError> {
    let mut tries = 0;
    loop {
        match rollback_entry(dir, e, never_made) {
            Err(err) if !matches!(err, FsError::Diverged { .. }) && tries < ROLLBACK_TRIES => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            done => return done,
        }
    }
}

/// How often a failed rollback step is tried again, 10 ms apart.
const ROLLBACK_TRIES: usize = 50;

/// Undoes one entry through a descriptor of its folder, opened once, so "not there" always
/// means not in that folder, never "the folder was moved away for a moment".
fn rollback_entry(
    dir: &RootDir,
    e: &Entry,
    never_made: &dyn Fn(&Path) -> bool,
) -> Result<(), FsError> {
    let folder_rel = e.target.parent().unwrap_or(Path::new(""));
    let folder = match dir.pin(folder_rel) {
        Ok(f) => f,
        Err(err) if err.kind() == ErrorKind::NotFound && never_made(folder_rel) => return Ok(()),
        Err(err) => return Err(FsError::io("roll back", slash(&e.target), err)),
    };
    let name = Path::new(e.target.file_name().unwrap_or_default());
    if let Some(temp) = &e.temp {
        let temp_name = Path::new(temp.file_name().unwrap_or_default());
        match folder.unlink(temp_name) {
            Err(err) if err.kind() != ErrorKind::NotFound => {
                return Err(FsError::io("remove temp", slash(temp), err));
            }
            _ => {}
        }
    }
    let now = read_hash(&folder, name)?.map(|h| h.to_string());
    match &e.backup {
        Some(backup) => {
            let ours = match &now {
                None => true,
                Some(h) => Some(h) == e.new_hash.as_ref() || Some(h) == e.old_hash.as_ref(),
            };
            if !ours {
                return Err(FsError::Diverged {
                    path: slash(&e.target),
                    backup: backup.clone(),
                });
            }
            restore_backup(dir, backup, &folder, name, &e.target)
        }
        None => {
            if now.is_some() && now == e.new_hash {
                folder
                    .unlink(name)
                    .map_err(|err| FsError::io("remove", slash(&e.target), err))?;
            }
            Ok(())
        }
    }
}

/// Whether the missing folder `rel` is one this transaction would have created and never did:
/// it and every missing folder above it, up to the first present one, are in `created`.
fn never_made(dir: &RootDir, rel: &Path, created: &[PathBuf]) -> bool {
    let mut folder = rel;
    loop {
        if !created.iter().any(|c| c == folder) {
            return false;
        }
        folder = folder.parent().unwrap_or(Path::new(""));
        if folder.as_os_str().is_empty() || dir.kind(folder).ok().flatten() == Some(Kind::Dir) {
            return true;
        }
    }
}

/// Moves a backup back over its target (`name` in `folder`); a missing backup means there is
/// nothing to restore.
fn restore_backup(
    dir: &RootDir,
    backup: &Path,
    folder: &RootDir,
    name: &Path,
    target: &Path,
) -> Result<(), FsError> {
    match dir.rename_into(backup, folder, name) {
        Ok(()) => {
            // When backup and target were hard links to one file, rename did nothing.
            remove_quietly(dir, backup);
            Ok(())
        }
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
            // The target is on another file system: copy to a fresh name that no one else can
            // have (created exclusively), then rename; only that copy is ever removed.
            let backup_name = backup.file_name().map(|n| n.to_string_lossy().into_owned());
            let tmp = format!(".tether-restore-{}", backup_name.unwrap_or_default());
            let tmp = Path::new(&tmp);
            let shown = slash(target);
            let io = |op: &'static str| |e| FsError::io(op, &shown, e);
            let src = dir
                .open_file(
                    backup,
                    rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NONBLOCK,
                    0,
                )
                .map_err(io("open backup"))?;
            copy_exclusive(src, folder, tmp).map_err(io("copy backup"))?;
            if let Err(e) = folder.rename(tmp, name) {
                remove_quietly(folder, tmp);
                return Err(io("restore")(e));
            }
            remove_quietly(dir, backup);
            Ok(())
        }
        Err(e) => Err(FsError::io("restore backup", slash(target), e)),
    }
}

/// Whether every step of a transaction is on disk: each put's target holds its new content
/// and each removed target is gone. Then the commit had finished its renames and only its
/// cleanup is left; a step not on disk, or one that cannot be read, says it had not.
pub(crate) fn all_applied(dir: &RootDir, entries: &[Entry]) -> bool {
    entries.iter().all(|e| match read_hash(dir, &e.target) {
        Ok(now) => now.map(|h| h.to_string()) == e.new_hash,
        Err(_) => false,
    })
}

/// Cleans up after a transaction whose renames all happened: drops backups and stray temps.
pub(crate) fn finish(dir: &RootDir, entries: &[Entry]) {
    for e in entries {
        for p in e.backup.iter().chain(&e.temp) {
            remove_quietly(dir, p);
        }
    }
}

/// Removes a name beneath the root, logging anything but "already gone".
pub(crate) fn remove_quietly(dir: &RootDir, rel: &Path) {
    if let Err(e) = dir.unlink(rel)
        && e.kind() != ErrorKind::NotFound
    {
        tracing::warn!(path = %rel.display(), error = %e, "cannot remove");
    }
}

/// Removes a file of the state folder, logging anything but "already gone".
pub(crate) fn remove_quietly_abs(path: &Path) {
    if let Err(e) = fs::remove_file(path)
        && e.kind() != ErrorKind::NotFound
    {
        tracing::warn!(path = %path.display(), error = %e, "cannot remove");
    }
}

/// A root-relative path as shown to the model.
pub(crate) fn slash(rel: &Path) -> String {
    rel.to_string_lossy().into_owned()
}

/// Reads a regular file beneath the root with its stat; `Ok(None)` when it does not exist.
pub(crate) fn read_with_stat(
    dir: &RootDir,
    rel: &Path,
    shown: &str,
) -> Result<Option<(Vec<u8>, ContentHash, Stat)>, FsError> {
    let Some(mut file) = open_regular(dir, rel, shown)? else {
        return Ok(None);
    };
    let st = rustix::fs::fstat(&file).map_err(|e| FsError::io("stat", shown, e.into()))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| FsError::io("read", shown, e))?;
    let hash = hash_bytes(&bytes);
    Ok(Some((bytes, hash, st)))
}

/// The hash of what is at `rel` now, for rollback's "is this still ours?" check.
fn read_hash(dir: &RootDir, rel: &Path) -> Result<Option<ContentHash>, FsError> {
    let shown = rel.to_string_lossy();
    Ok(read_with_stat(dir, rel, &shown)?.map(|(_, h, _)| h))
}

/// Copies `src` to the new name `to` (never overwriting anything), flushed to disk.
pub(crate) fn copy_exclusive(mut src: File, dir: &RootDir, to: &Path) -> std::io::Result<()> {
    let mut dst = dir.open_file(to, OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL, 0o600)?;
    if let Err(e) = std::io::copy(&mut src, &mut dst).and_then(|_| dst.sync_all()) {
        drop(dst);
        remove_quietly(dir, to);
        return Err(e);
    }
    Ok(())
}
