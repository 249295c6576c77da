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

/// Folders watched at most; a larger tree is watched in part, and `status` says so.
const MAX_FOLDERS: usize = 20_000;

/// A changed path and the LSP `FileChangeType` it amounts to (1 created, 2 changed, 3 deleted).
pub type Change = (PathBuf, u8);

type Subscribers = Arc<Mutex<Vec<(u64, mpsc::UnboundedSender<Change>)>>>;

/// The watch of one workspace root, kept in the run's pool.
pub struct SharedWatch {
    root: PathBuf,
    started: OnceLock<Result<usize, String>>,
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    subscribers: Subscribers,
    next_id: AtomicU64,
}

impl SharedWatch {
    pub fn new(root: PathBuf) -> Self {
        SharedWatch {
            root,
            started: OnceLock::new(),
            watcher: Mutex::new(None),
            subscribers: Arc::default(),
            next_id: AtomicU64::new(0),
        }
    }

    /// Starts watching once: how many folders, or why none.
    pub fn start(&self) -> Result<usize, String> {
        self.started
            .get_or_init(|| {
                let subscribers = self.subscribers.clone();
                let mut watcher =
                    notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                        let Ok(event) = event else { return };
                        let Some(kind) = change_kind(&event.kind) else {
                            return;
                        };
                        let subscribers = lock(&subscribers);
                        for path in event.paths.iter().filter(|p| !is_ours(p)) {
                            for (_, tx) in subscribers.iter() {
                                let _ = tx.send((path.clone(), kind));
                            }
                        }
                    })
                    .map_err(|e| format!("cannot watch for outside edits: {e}"))?;
                let folders = watch_tree(&mut watcher, &self.root);
                *lock(&self.watcher) = Some(watcher);
                folders
            })
            .clone()
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
        if let Some(w) = lock(&self.watcher).as_mut() {
            let _ = watch_tree(w, path);
        }
    }

    /// What `status` says of the watch, once it was started.
    pub fn describe(&self) -> Option<String> {
        Some(match self.started.get()? {
            Ok(n) if *n >= MAX_FOLDERS => format!(
                "outside edits: watching the first {n} folders only; changes deeper are not seen"
            ),
            Ok(n) => format!("outside edits: watching {n} folders"),
            Err(why) => why.clone(),
        })
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

/// Watches every folder under `root` that git would not ignore, each on its own, and says how
/// many (or why none).
fn watch_tree(watcher: &mut notify::RecommendedWatcher, root: &Path) -> Result<usize, String> {
    let mut count = 0;
    let walk = ignore::WalkBuilder::new(root)
        .filter_entry(|e| e.file_name() != ".tether")
        .build();
    for entry in walk.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        if count == MAX_FOLDERS {
            break;
        }
        match watcher.watch(entry.path(), RecursiveMode::NonRecursive) {
            Ok(()) => count += 1,
            Err(e) if count == 0 => return Err(format!("cannot watch for outside edits: {e}")),
            Err(_) => break,
        }
    }
    Ok(count)
}
