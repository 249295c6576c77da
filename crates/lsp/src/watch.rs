//! One watch over a workspace's folders for every run that shares it (a host's runs): one
//! inotify instance however many runs, each run getting every change on a channel of its own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use crate::error::LspError;
use crate::inotify::{Heard, Inotify, Refused};
use tether_base::lock;
use tether_tool::{BoxFuture, Pooled};
use tokio::sync::mpsc;

/// Folders not watched that `status` names, at most.
const UNWATCHED_SHOWN: usize = 3;

/// What the watch tells each subscriber.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A changed path and the LSP `FileChangeType` it amounts to (1 created, 2 changed, 3
    /// deleted).
    Path(PathBuf, u8),
    /// The system dropped change events (its queue overflowed, `fs.inotify.max_queued_events`,
    /// or reading failed): a file modified since `since` may have changed unseen, and a
    /// folder created then is not watched yet.
    Dropped { since: SystemTime },
    /// Every change made before [`SharedWatch::mark`] returned this number came before it.
    Mark(u64),
}

/// A pause between two events at least this long means the watch had read everything.
const CALM: Duration = Duration::from_millis(100);

/// How far before the watch last had read everything a dropped change may still lie, for a
/// reader that was behind without a pause.
const LAG_MARGIN: Duration = Duration::from_secs(2);

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

/// Every folder the watch has taken up: one found again (a rescan) is neither watched nor
/// counted twice, and one deleted is dropped, so the same path made again is watched again.
type Folders = Mutex<HashMap<PathBuf, Folder>>;

/// A folder the watch took up: watched, or refused (past the limit).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Folder {
    watched: bool,
    /// Its inode when taken up: a deletion heard late (after the folder was made again and
    /// watched) is of an earlier folder at that path, and must not drop this one.
    ino: u64,
}

/// Paths deleted, as the watch's thread heard them, for [`SharedWatch::folders`] to drop. That
/// thread must never wait on the folder map: watching a new tree holds the map for its whole
/// walk, and a thread stalled that long lets the kernel's queue overflow.
type Deleted = Arc<Mutex<Vec<PathBuf>>>;

/// The watch of one workspace root, kept in the run's pool.
pub struct SharedWatch {
    root: PathBuf,
    max_folders: usize,
    /// Whether the watch could start, or why not.
    started: OnceLock<Result<(), LspError>>,
    /// Why the first folder refused was refused.
    refused_why: Mutex<Option<String>>,
    watcher: Mutex<Option<Inotify>>,
    /// Why the watch's thread ended for good, if it did: from then on no change is seen.
    ended: Arc<Mutex<Option<String>>>,
    known: Folders,
    deleted: Deleted,
    subscribers: Subscribers,
    next_id: AtomicU64,
    /// The number of the last mark asked for.
    marks: AtomicU64,
}

impl SharedWatch {
    pub fn new(root: PathBuf, max_folders: usize) -> Self {
        SharedWatch {
            root,
            max_folders,
            started: OnceLock::new(),
            refused_why: Mutex::default(),
            watcher: Mutex::new(None),
            ended: Arc::default(),
            known: Folders::default(),
            deleted: Deleted::default(),
            subscribers: Arc::default(),
            next_id: AtomicU64::new(0),
            marks: AtomicU64::new(0),
        }
    }

    /// Starts watching once: how much of the tree, or why none of it.
    pub fn start(&self) -> Result<Coverage, LspError> {
        let started = self.started.get_or_init(|| {
            let mut hearing = self.hearing();
            let watcher = Inotify::start(move |heard| hearing.hear(heard))
                .map_err(|e| LspError::Unwatched(Box::new(e)))?;
            let why = watch_tree(
                &watcher,
                &mut self.folders(),
                (&self.root, &self.root),
                (self.max_folders, self.max_folders),
                None,
            )?;
            *lock(&self.refused_why) = why;
            *lock(&self.watcher) = Some(watcher);
            Ok(())
        });
        match started {
            Ok(()) => self
                .coverage()
                .ok_or_else(|| LspError::refused("the watch has ended")),
            Err(why) => Err(why.clone()),
        }
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

    /// Watches a folder created since the start, and the folders in it: the files it holds,
    /// found on the same walk (what was put in it before it was watched raised no event).
    pub fn watch_new_folder(&self, path: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        // A walk never filters the folder it starts from: one the first walk would have left
        // out (`npm install` making node_modules, a build writing a git-ignored `build/`) is
        // left out here too.
        if !walk_reaches(&self.root, path) {
            return files;
        }
        let watcher = lock(&self.watcher);
        let Some(w) = watcher.as_ref() else {
            return files;
        };
        let known = &mut self.folders();
        // Everything under a new folder is new: what the map holds there is of a folder
        // deleted before (its deletion maybe not heard yet), and is taken up again.
        known.retain(|folder, _| !folder.starts_with(path));
        let watched = known.values().filter(|f| f.watched).count();
        let room = self.max_folders.saturating_sub(watched);
        if let Ok(Some(why)) = watch_tree(
            w,
            known,
            (&self.root, path),
            (room, self.max_folders),
            Some(&mut files),
        ) {
            lock(&self.refused_why).get_or_insert(why);
        }
        files
    }

    /// After dropped events: watches every folder not watched yet (one whose creation was
    /// among them) and gives the files modified at or after `since`.
    pub fn rescan(&self, since: SystemTime) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for entry in walk(&self.root).flatten() {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            if is_dir && !self.folders().contains_key(entry.path()) {
                tracing::debug!("watching {} after dropped events", entry.path().display());
                // Its files are taken below, by their modification time.
                self.watch_new_folder(entry.path());
            } else if !is_dir && modified_at_or_after(&entry, since) {
                files.push(entry.into_path());
            }
        }
        files
    }

    /// The folder map, with the deletions heard since it was last looked at taken out.
    fn folders(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Folder>> {
        let mut known = lock(&self.known);
        let deleted = std::mem::take(&mut *lock(&self.deleted));
        forget_folders(&mut known, deleted);
        known
    }

    /// How much of the tree is watched now, once started.
    pub fn coverage(&self) -> Option<Coverage> {
        self.started.get()?.as_ref().ok()?;
        let known = self.folders();
        let mut refused: Vec<&PathBuf> = known
            .iter()
            .filter(|(_, f)| !f.watched)
            .map(|(p, _)| p)
            .collect();
        refused.sort();
        let shown = |p: &&PathBuf| {
            p.strip_prefix(&self.root)
                .unwrap_or(p)
                .display()
                .to_string()
        };
        Some(Coverage {
            watched: known.len() - refused.len(),
            unwatched: refused.len(),
            why: lock(&self.refused_why).clone(),
            examples: refused.iter().take(UNWATCHED_SHOWN).map(shown).collect(),
        })
    }

    /// What `status` (and, once, the next result) says of the watch: all of it, or which
    /// folders it cannot see and what to do.
    pub fn describe(&self) -> Option<String> {
        if let Err(why) = self.started.get()? {
            return Some(format!("{why}: outside edits are not seen at all"));
        }
        if let Some(why) = self.ended() {
            return Some(format!(
                "outside edits: the watch stopped ({why}), so a change made outside tether from \
                 now on is not seen until a tether call reads or writes that file. Start a new \
                 session to watch again"
            ));
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

    /// What the watch's thread gives each event to.
    fn hearing(&self) -> Hearing {
        Hearing {
            calm: Calm::new(SystemTime::now()),
            subscribers: self.subscribers.clone(),
            deleted: self.deleted.clone(),
            ended: self.ended.clone(),
        }
    }

    /// Asks for a [`Change::Mark`] behind every change made on disk before this call, and
    /// returns its number; `None` when the watch is not running.
    pub fn mark(&self) -> Option<u64> {
        let seq = self.marks.fetch_add(1, Ordering::Relaxed) + 1;
        lock(&self.watcher)
            .as_ref()
            .is_some_and(|w| w.mark(seq))
            .then_some(seq)
    }

    /// Why the watch stopped seeing changes for good, if it did.
    pub fn ended(&self) -> Option<String> {
        lock(&self.ended).clone()
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

/// Whether `path` is one of the write door's own temporary files, which no server needs.
fn is_ours(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(".tether-"))
}

/// What the watch covers under `from`: what git would not ignore, less generated folders
/// (dependencies, virtual environments, tagged caches such as `target/`) and tether's own.
fn walk(from: &Path) -> ignore::Walk {
    walker(from).build()
}

fn walker(from: &Path) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(from);
    builder.filter_entry(|e| !(e.file_type().is_some_and(|t| t.is_dir()) && left_out(e.path())));
    builder
}

/// Whether the walk from `root` reaches the folder `path`: no folder on the way is generated,
/// and its parent's listing, read with every ignore rule that applies there, keeps it.
fn walk_reaches(root: &Path, path: &Path) -> bool {
    let Ok(below) = path.strip_prefix(root) else {
        return false;
    };
    if below
        .ancestors()
        .any(|rel| rel != Path::new("") && left_out(&root.join(rel)))
    {
        return false;
    }
    let Some(parent) = path.parent().filter(|_| below != Path::new("")) else {
        return true;
    };
    walker(parent)
        .max_depth(Some(1))
        .build()
        .flatten()
        .any(|entry| entry.path() == path)
}

/// A folder the watch leaves out: a generated one, or tether's own.
fn left_out(dir: &Path) -> bool {
    dir.file_name() == Some(".tether".as_ref()) || tether_fs::generated_folder(dir).is_some()
}

fn modified_at_or_after(entry: &ignore::DirEntry, since: SystemTime) -> bool {
    let modified = entry.metadata().ok().and_then(|m| m.modified().ok());
    modified.is_some_and(|at| at >= since)
}

/// When the watch last had read every event: a change the system drops later was made after
/// that moment, or at most [`LAG_MARGIN`] before it if the reader was behind without a pause.
/// Gives what the watch's thread hears to the subscribers, on that thread.
struct Hearing {
    calm: Calm,
    subscribers: Subscribers,
    deleted: Deleted,
    ended: Arc<Mutex<Option<String>>>,
}

impl Hearing {
    /// Tells every subscriber changes may have been lost, since when the watch says.
    fn dropped(&self, subscribers: &[(u64, mpsc::UnboundedSender<Change>)]) {
        let dropped = Change::Dropped {
            since: self.calm.lost_since(),
        };
        for (_, tx) in subscribers {
            let _ = tx.send(dropped.clone());
        }
    }

    fn hear(&mut self, heard: Heard) {
        self.calm.heard(SystemTime::now());
        let mut subscribers = lock(&self.subscribers);
        let (path, kind) = match heard {
            // The thread has stopped: what changed since it last heard is looked for once,
            // then every subscriber's channel ends, so none goes on trusting a watch that no
            // longer sees.
            Heard::Ended(why) => {
                tracing::error!("the watch of outside edits stopped: {why}");
                *lock(&self.ended) = Some(why);
                self.dropped(&subscribers);
                subscribers.clear();
                return;
            }
            // Lost events lose changes: said, with the moment since which they may be lost,
            // so the tree is looked at.
            Heard::Lost => return self.dropped(&subscribers),
            Heard::Mark(seq) => {
                for (_, tx) in subscribers.iter() {
                    let _ = tx.send(Change::Mark(seq));
                }
                return;
            }
            Heard::Path(path, kind) => (path, kind),
        };
        if kind == 3 {
            lock(&self.deleted).push(path.clone());
        }
        if !is_ours(&path) {
            for (_, tx) in subscribers.iter() {
                let _ = tx.send(Change::Path(path.clone(), kind));
            }
        }
    }
}

struct Calm {
    last_event: SystemTime,
    read_all_at: SystemTime,
}

impl Calm {
    fn new(now: SystemTime) -> Self {
        Calm {
            last_event: now,
            read_all_at: now,
        }
    }

    /// Notes an event read at `now`: after a pause, everything before it had been read.
    fn heard(&mut self, now: SystemTime) {
        if now.duration_since(self.last_event).unwrap_or_default() >= CALM {
            self.read_all_at = self.last_event;
        }
        self.last_event = now;
    }

    /// The moment since which dropped changes may lie.
    fn lost_since(&self) -> SystemTime {
        self.read_all_at - LAG_MARGIN
    }
}

/// Watches every folder under `from` that git would not ignore, leaving out generated ones
/// (dependencies, virtual environments, tagged caches such as `target/`), each folder on its
/// own, at most `room` more of them, each noted in `known` as watched or refused; gives why
/// the first refused was. With `files`, the files it passes are put there.
fn watch_tree(
    watcher: &Inotify,
    known: &mut HashMap<PathBuf, Folder>,
    (root, from): (&Path, &Path),
    (room, max): (usize, usize),
    mut files: Option<&mut Vec<PathBuf>>,
) -> Result<Option<String>, LspError> {
    let mut watched = 0;
    let mut why: Option<String> = None;
    for entry in walk(from).flatten() {
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if !is_dir && let Some(files) = files.as_deref_mut() {
            files.push(entry.into_path());
            continue;
        }
        if !is_dir || known.contains_key(entry.path()) {
            continue;
        }
        let refused = match why.is_some() || watched >= room {
            true => Some(None),
            false => match watcher.watch(entry.path()) {
                Ok(()) => None,
                // Gone since the walk listed it: nothing there to miss.
                Err(Refused::Gone) => continue,
                Err(e) => Some(Some(e)),
            },
        };
        let ino = entry.ino().unwrap_or_default();
        let folder = Folder {
            watched: refused.is_none(),
            ino,
        };
        known.insert(entry.path().to_path_buf(), folder);
        let Some(error) = refused else {
            watched += 1;
            continue;
        };
        if watched == 0
            && from == root
            && let Some(e) = error
        {
            return Err(LspError::Unwatched(Box::new(LspError::Folder(e))));
        }
        why = why.or_else(|| {
            Some(match error {
                Some(e) => format!(
                    "the system refused more watches: {e}; on Linux raise \
                     fs.inotify.max_user_watches (it is shared with every program of the user)"
                ),
                None => format!("`[lsp] watch_folders_max` is {max}; raise it in tether.toml"),
            })
        });
    }
    Ok(why)
}

/// Drops deleted folders, and every folder under them, from `known`: inotify ends a deleted
/// folder's watch, and a folder made again at the same path must be watched again. One that
/// is there now with the inode it was taken up with was made again and watched already.
fn forget_folders(known: &mut HashMap<PathBuf, Folder>, deleted: Vec<PathBuf>) {
    use std::os::unix::fs::MetadataExt as _;
    for path in deleted {
        if known.contains_key(&path) {
            known.retain(|folder, f| {
                !folder.starts_with(&path)
                    || std::fs::metadata(folder).is_ok_and(|m| m.is_dir() && m.ino() == f.ino)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The watch's thread ending on a read error (a fault the kernel gives only rarely, so
    /// it is given to the watch here) is never silence: each subscriber is told changes may be
    /// lost and its channel ends, and `status` says the watch stopped and what to do.
    #[test]
    fn a_watch_whose_thread_ended_says_so_and_ends_its_channels() {
        let dir = tempfile::tempdir().unwrap();
        let watch = SharedWatch::new(dir.path().to_path_buf(), 100);
        watch.start().unwrap();
        let (_, mut rx) = watch.subscribe();
        assert!(watch.describe().unwrap().contains("watching 1 folders"));
        let why = "reading its events failed: Input/output error".to_string();
        watch.hearing().hear(Heard::Ended(why));
        assert!(matches!(rx.try_recv(), Ok(Change::Dropped { .. })));
        assert!(matches!(
            rx.try_recv(),
            Err(tokio::sync::mpsc::error::TryRecvError::Disconnected)
        ));
        assert!(watch.ended().is_some());
        let said = watch.describe().unwrap();
        assert!(
            said.contains("the watch stopped (reading its events failed")
                && said.contains("Start a new session"),
            "{said}"
        );
        watch.close();
    }

    /// A generated folder made after the watch began is neither watched nor read, as one
    /// there from the start is not.
    #[test]
    fn a_node_modules_made_after_the_start_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        let watch = SharedWatch::new(dir.path().to_path_buf(), 100);
        assert_eq!(watch.start().unwrap().watched, 1);
        let made = dir.path().join("node_modules/x");
        std::fs::create_dir_all(&made).unwrap();
        std::fs::write(made.join("area.py"), "y = 2\n").unwrap();
        let top = dir.path().join("node_modules");
        assert_eq!(watch.watch_new_folder(&top), Vec::<PathBuf>::new());
        assert_eq!(watch.watch_new_folder(&made), Vec::<PathBuf>::new());
        assert!(!watch.folders().contains_key(&top));
        // An ordinary new folder is still watched and gives its files.
        let pkg = dir.path().join("pkg");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(pkg.join("m.py"), "z = 3\n").unwrap();
        assert_eq!(watch.watch_new_folder(&pkg), vec![pkg.join("m.py")]);
    }

    /// A folder git ignores, or a hidden one, made after the watch began is neither watched
    /// nor read, as one there from the start is not.
    #[test]
    fn an_ignored_folder_made_after_the_start_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        let watch = SharedWatch::new(dir.path().to_path_buf(), 100);
        assert_eq!(watch.start().unwrap().watched, 1);
        for name in ["build", "pkg/build", ".cache"] {
            let made = dir.path().join(name).join("sub");
            std::fs::create_dir_all(&made).unwrap();
            std::fs::write(made.join("m.py"), "y = 2\n").unwrap();
            let top = dir.path().join(name);
            assert_eq!(
                watch.watch_new_folder(&top),
                Vec::<PathBuf>::new(),
                "{name}"
            );
            assert!(!watch.folders().contains_key(&top), "{name}");
        }
        // Its sibling, and a folder the rules keep, are watched and give their files.
        let kept = dir.path().join("pkg/src");
        std::fs::create_dir_all(&kept).unwrap();
        std::fs::write(kept.join("m.py"), "z = 3\n").unwrap();
        assert_eq!(
            watch.watch_new_folder(&dir.path().join("pkg")),
            vec![kept.join("m.py")]
        );
        assert_eq!(watch.folders().get(&dir.path().join("pkg/build")), None);
        watch.close();
    }

    #[test]
    fn a_rescan_finds_files_modified_since_a_moment_and_a_new_folder_gives_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.py");
        std::fs::write(&old, "x = 1\n").unwrap();
        crate::stamp::backdate(&old);
        let watch = SharedWatch::new(dir.path().to_path_buf(), 100);
        assert_eq!(watch.start().unwrap().watched, 1);
        let since = std::time::SystemTime::now() - Duration::from_secs(1);
        std::fs::create_dir_all(dir.path().join("pkg/node_modules/dep")).unwrap();
        std::fs::write(dir.path().join("pkg/new.py"), "y = 2\n").unwrap();
        std::fs::write(dir.path().join("pkg/node_modules/dep/i.js"), "").unwrap();
        // The rescan watches the folder it had not seen, and leaves generated ones out.
        assert_eq!(watch.rescan(since), vec![dir.path().join("pkg/new.py")]);
        assert_eq!(watched(&watch, &dir.path().join("pkg")), Some(true));
        // A new folder gives every file in it, old or new, and is watched once.
        std::fs::create_dir_all(dir.path().join("fresh")).unwrap();
        std::fs::write(dir.path().join("fresh/a.py"), "").unwrap();
        let folder = dir.path().join("fresh");
        assert_eq!(watch.watch_new_folder(&folder), vec![folder.join("a.py")]);
        assert_eq!(watch.watch_new_folder(&folder), vec![folder.join("a.py")]);
        assert_eq!(watch.folders().len(), 3);
        watch.close();
    }

    /// Whether the watch took `folder` up as watched (or refused).
    fn watched(watch: &SharedWatch, folder: &Path) -> Option<bool> {
        watch.folders().get(folder).map(|f| f.watched)
    }

    #[test]
    fn a_folder_deleted_and_made_again_is_watched_again_and_counted_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg/inner")).unwrap();
        let watch = SharedWatch::new(dir.path().to_path_buf(), 100);
        assert_eq!(watch.start().unwrap().watched, 3);
        std::fs::remove_dir_all(dir.path().join("pkg")).unwrap();
        // The deletion's events come on the watch's own thread.
        let end = std::time::Instant::now() + Duration::from_secs(10);
        while watch.folders().len() > 1 && std::time::Instant::now() < end {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(watch.coverage().unwrap().watched, 1);
        std::fs::create_dir_all(dir.path().join("pkg/inner")).unwrap();
        watch.watch_new_folder(&dir.path().join("pkg"));
        assert_eq!(watched(&watch, &dir.path().join("pkg/inner")), Some(true));
        assert_eq!(watch.coverage().unwrap().watched, 3);
        // The old folder's deletion heard only now (its own watch's event, queued behind the
        // parent's) is of the folder gone, not of the one made again.
        lock(&watch.deleted).push(dir.path().join("pkg"));
        assert_eq!(watch.coverage().unwrap().watched, 3);
        watch.close();
    }

    /// The watch's thread hears deletions while a new folder is being watched (which holds
    /// the folder map for its walk): the thread never waits on the map.
    #[test]
    fn folders_deleted_while_new_ones_are_watched_do_not_stall_the_watch() {
        let dir = tempfile::tempdir().unwrap();
        let watch = Arc::new(SharedWatch::new(dir.path().to_path_buf(), 100_000));
        watch.start().unwrap();
        let root = dir.path().to_path_buf();
        let flipping = root.join("flip");
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let flipper = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                let _ = std::fs::create_dir_all(flipping.join("inner"));
                let _ = std::fs::remove_dir_all(&flipping);
            }
        });
        let (done, finished) = std::sync::mpsc::channel();
        let watching = watch.clone();
        std::thread::spawn(move || {
            for n in 0..2_000 {
                let folder = root.join(format!("new{n}"));
                let _ = std::fs::create_dir_all(folder.join("inner"));
                watching.watch_new_folder(&folder);
            }
            let _ = done.send(());
        });
        let within = finished.recv_timeout(Duration::from_secs(60));
        assert!(within.is_ok(), "the watch stalled");
        stop.store(true, Ordering::Relaxed);
        flipper.join().unwrap();
        watch.close();
    }

    #[test]
    fn dropped_changes_are_looked_for_from_the_last_pause_before_them() {
        let t0 = SystemTime::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut calm = Calm::new(t0);
        // A pause, then a flood read without one: whatever the flood lost came after the
        // last event before the pause, however long the flood went on.
        calm.heard(at(10));
        calm.heard(at(500));
        for ms in (510..60_000).step_by(10) {
            calm.heard(at(ms));
        }
        assert_eq!(calm.lost_since(), at(10) - LAG_MARGIN);
        // Another pause moves it on.
        calm.heard(at(61_000));
        assert_eq!(calm.lost_since(), at(59_990) - LAG_MARGIN);
    }
}
