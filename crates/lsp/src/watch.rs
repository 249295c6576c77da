//! One watch over a workspace's folders for every run that shares it (a host's runs): one
//! inotify instance however many runs, each run getting every change on a channel of its own.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};
use tether_proc::lock;
use tether_tool::{BoxFuture, Pooled};
use tokio::sync::mpsc;

/// Folders not watched that `status` names, at most.
const UNWATCHED_SHOWN: usize = 3;

/// A changed path and the LSP `FileChangeType` it amounts to (1 created, 2 changed, 3 deleted),
/// or [`DROPPED`] with no path.
pub type Change = (PathBuf, u8);

/// The system dropped change events (its queue overflowed, `fs.inotify.max_queued_events`):
/// what changed then is not known from the events.
pub const DROPPED: u8 = 0;

type Subscribers = Arc<Mutex<Vec<(u64, mpsc::UnboundedSender<Change>)>>>;

/// How much of the tree the watch covers: folders watched, and those it could not watch (with
/// why, and the first few), whose changes are not seen.
#[derive(Debug, Clone, Default)]
pub struct Coverage {
    pub watched: usize,
    pub unwatched: usize,
    pub why: Option<String>,
    pub examples: Vec<String>,
}

/// The watch of one workspace root, kept in the run's pool.
pub struct SharedWatch {
    root: PathBuf,
    max_folders: usize,
    started: OnceLock<Result<Coverage, String>>,
    /// Folders created since the start that could not be watched.
    later_unwatched: Mutex<Coverage>,
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    subscribers: Subscribers,
    next_id: AtomicU64,
}

impl SharedWatch {
    pub fn new(root: PathBuf, max_folders: usize) -> Self {
        SharedWatch {
            root,
            max_folders,
            started: OnceLock::new(),
            later_unwatched: Mutex::default(),
            watcher: Mutex::new(None),
            subscribers: Arc::default(),
            next_id: AtomicU64::new(0),
        }
    }

    /// Starts watching once: how much of the tree, or why none of it.
    pub fn start(&self) -> Result<Coverage, String> {
        self.started
            .get_or_init(|| {
                let subscribers = self.subscribers.clone();
                let mut watcher =
                    notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                        let subscribers = lock(&subscribers);
                        // An overflow, or an error reading events, loses changes: said, so the
                        // tree is looked at instead.
                        if event.as_ref().is_ok_and(|e| e.need_rescan()) || event.is_err() {
                            for (_, tx) in subscribers.iter() {
                                let _ = tx.send((PathBuf::new(), DROPPED));
                            }
                            return;
                        }
                        let Ok(event) = event else { return };
                        let Some(kind) = change_kind(&event.kind) else {
                            return;
                        };
                        for path in event.paths.iter().filter(|p| !is_ours(p)) {
                            for (_, tx) in subscribers.iter() {
                                let _ = tx.send((path.clone(), kind));
                            }
                        }
                    })
                    .map_err(|e| format!("cannot watch for outside edits: {e}"))?;
                let coverage = watch_tree(&mut watcher, &self.root, &self.root, self.max_folders);
                *lock(&self.watcher) = Some(watcher);
                coverage
            })
            .clone()
    }

    /// The folder watched.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A channel of every change from now on, and its id to give it back with.
    pub fn subscribe(&self) -> (u64, mpsc::UnboundedReceiver<Change>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.subscribers).push((id, tx));
        (id, rx)
    }

    /// Ends the channel `id` (its receiver sees the end).
    pub fn unsubscribe(&self, id: u64) {
        lock(&self.subscribers).retain(|(i, _)| *i != id);
    }

    /// Watches a folder created since the start, and the folders in it.
    pub fn watch_new_folder(&self, path: &Path) {
        let watched = self.coverage().map_or(0, |c| c.watched + c.unwatched);
        let room = self.max_folders.saturating_sub(watched);
        if let Some(w) = lock(&self.watcher).as_mut()
            && let Ok(added) = watch_tree(w, &self.root, path, room)
            && added.unwatched > 0
        {
            let mut later = lock(&self.later_unwatched);
            later.unwatched += added.unwatched;
            later.why = later.why.take().or(added.why);
            later.examples.extend(added.examples);
            later.examples.truncate(UNWATCHED_SHOWN);
        }
    }

    /// How much of the tree is watched now, once started.
    pub fn coverage(&self) -> Option<Coverage> {
        let mut all = self.started.get()?.as_ref().ok()?.clone();
        let later = lock(&self.later_unwatched);
        all.unwatched += later.unwatched;
        all.why = all.why.or(later.why.clone());
        all.examples.extend(later.examples.iter().cloned());
        all.examples.truncate(UNWATCHED_SHOWN);
        Some(all)
    }

    /// What `status` (and, once, the next result) says of the watch: all of it, or which
    /// folders it cannot see and what to do.
    pub fn describe(&self) -> Option<String> {
        if let Err(why) = self.started.get()? {
            return Some(format!("{why}: outside edits are not seen at all"));
        }
        let c = self.coverage()?;
        if c.unwatched == 0 {
            return Some(format!("outside edits: watching {} folders", c.watched));
        }
        Some(format!(
            "outside edits: watching {} of {} folders; {} are not watched ({}), so a change \
             in them (such as {}) is not seen until a tether call reads or writes that file. \
             Raise the limit, or work in the watched part",
            c.watched,
            c.watched + c.unwatched,
            c.unwatched,
            c.why.as_deref().unwrap_or("unknown reason"),
            c.examples.join(", ")
        ))
    }

    /// Stops watching and ends every channel.
    pub fn close(&self) {
        lock(&self.watcher).take();
        lock(&self.subscribers).clear();
    }
}

impl Pooled for SharedWatch {
    fn stop(&self, _budget: Duration) -> BoxFuture<'_, ()> {
        self.close();
        Box::pin(async {})
    }
}

/// The LSP `FileChangeType` an event amounts to (1 created, 2 changed, 3 deleted), if any.
fn change_kind(kind: &EventKind) -> Option<u8> {
    use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
    match kind {
        EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(RenameMode::To)) => Some(1),
        EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(RenameMode::From)) => Some(3),
        EventKind::Modify(_) | EventKind::Access(AccessKind::Close(AccessMode::Write)) => Some(2),
        _ => None,
    }
}

/// Whether `path` is one of the write door's own temporary files, which no server needs.
fn is_ours(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(".tether-"))
}

/// What the watch covers under `from`: what git would not ignore, less generated folders
/// (dependencies, virtual environments, tagged caches such as `target/`) and tether's own.
fn walk(from: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(from)
        .filter_entry(|e| {
            let generated = e.file_type().is_some_and(|t| t.is_dir())
                && tether_fs::generated_folder(e.path()).is_some();
            e.file_name() != ".tether" && !generated
        })
        .build()
}

/// The files under `root` the watch covers that were modified at or after `since` (all of
/// them without): what a burst changed, when the system dropped its events, or what a new
/// folder held before it was watched.
pub fn modified_since(root: &Path, since: Option<std::time::SystemTime>) -> Vec<PathBuf> {
    walk(root)
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter(|e| {
            since.is_none_or(|since| {
                e.metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .is_some_and(|at| at >= since)
            })
        })
        .map(ignore::DirEntry::into_path)
        .collect()
}

/// Watches every folder under `from` that git would not ignore, leaving out generated ones
/// (dependencies, virtual environments, tagged caches such as `target/`), each folder on its
/// own, at most `room` of them: how many it watched, and the rest it could not, with why.
fn watch_tree(
    watcher: &mut notify::RecommendedWatcher,
    root: &Path,
    from: &Path,
    room: usize,
) -> Result<Coverage, String> {
    let mut coverage = Coverage::default();
    for entry in walk(from).flatten() {
        if !entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        let refused = match coverage.why.is_some() || coverage.watched >= room {
            true => Some(None),
            false => match watcher.watch(entry.path(), RecursiveMode::NonRecursive) {
                Ok(()) => None,
                Err(e) => Some(Some(e)),
            },
        };
        match refused {
            None => coverage.watched += 1,
            Some(error) => {
                if coverage.watched == 0
                    && from == root
                    && let Some(e) = error
                {
                    return Err(format!("cannot watch for outside edits: {e}"));
                }
                coverage.why = coverage.why.or_else(|| {
                    Some(match error {
                        Some(e) => format!(
                            "the system refused more watches: {e}; on Linux raise \
                             fs.inotify.max_user_watches (it is shared with every program of \
                             the user)"
                        ),
                        None => {
                            format!("`[lsp] watch_folders_max` is {room}; raise it in tether.toml")
                        }
                    })
                });
                coverage.unwatched += 1;
                if coverage.examples.len() < UNWATCHED_SHOWN {
                    let shown = entry.path().strip_prefix(root).unwrap_or(entry.path());
                    coverage.examples.push(shown.display().to_string());
                }
            }
        }
    }
    Ok(coverage)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn files_modified_since_a_moment_are_found_and_generated_folders_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.py");
        std::fs::write(&old, "x = 1\n").unwrap();
        let past = std::time::SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(past)
            .unwrap();
        let since = std::time::SystemTime::now() - Duration::from_secs(1);
        std::fs::create_dir_all(dir.path().join("pkg/node_modules/dep")).unwrap();
        std::fs::write(dir.path().join("pkg/new.py"), "y = 2\n").unwrap();
        std::fs::write(dir.path().join("pkg/node_modules/dep/i.js"), "").unwrap();
        let found = modified_since(dir.path(), Some(since));
        assert_eq!(modified_since(dir.path(), None).len(), 2);
        assert_eq!(found, vec![dir.path().join("pkg/new.py")]);
    }
}
