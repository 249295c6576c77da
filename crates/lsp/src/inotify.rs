//! The kernel's inotify, read on a thread of its own, asking only for the events that change
//! a file: a watch that also heard every open (as a general watcher library does) woke for
//! each file a compiler or language server reads, thousands per write on a large project.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rustix::event::{PollFd, PollFlags, poll};
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;
use tether_base::lock;

use crate::error::LspError;

/// What the thread hears.
#[derive(Debug, Clone, PartialEq)]
pub enum Heard {
    /// A path in a watched folder and the LSP `FileChangeType` it amounts to (1 created,
    /// 2 changed, 3 deleted).
    Path(PathBuf, u8),
    /// Events were lost: the kernel's queue overflowed.
    Lost,
    /// Waiting for events or reading them failed: the thread has ended, and nothing more is
    /// heard.
    Ended(String),
    /// The mark asked for with [`Inotify::mark`]: every event of a change made before it was
    /// asked for has been heard.
    Mark(u64),
}

/// Why a folder is not watched.
#[derive(Debug, Clone, PartialEq)]
pub enum Refused {
    /// It is gone, or no longer a folder: nothing to watch, nothing missed.
    Gone,
    /// The system's limit on watches is reached.
    Limit,
    /// Anything else the system said.
    Other(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Gone => f.write_str("the folder is gone"),
            Refused::Limit => f.write_str("the limit on inotify watches is reached"),
            Refused::Other(why) => f.write_str(why),
        }
    }
}

/// Each watch's folder, to name the paths its events carry only as file names.
type Folders = Arc<Mutex<HashMap<i32, PathBuf>>>;

/// One inotify instance and the thread that reads it; dropping it stops and joins the thread.
pub struct Inotify {
    fd: Arc<OwnedFd>,
    folders: Folders,
    /// Dropping the pipe's write end wakes the thread to end.
    stop: Option<OwnedFd>,
    /// The write end of the pipe that asks the thread for a mark.
    marks: OwnedFd,
    thread: Option<JoinHandle<()>>,
}

/// Changes to a folder's entries, and nothing that only reads them.
const MASK: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MODIFY)
    .union(WatchFlags::CLOSE_WRITE)
    .union(WatchFlags::ATTRIB)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::ONLYDIR)
    .union(WatchFlags::EXCL_UNLINK);

/// Bytes read at once: room for hundreds of events.
const BUFFER: usize = 64 * 1024;

/// The OS's refusal of what the watch needs.
fn watch_error(what: &'static str, cause: std::io::Error) -> LspError {
    LspError::Watch {
        what,
        cause: Arc::new(cause),
    }
}

impl Inotify {
    /// Starts the thread, which gives `heard` every event, in order.
    pub fn start(mut heard: impl FnMut(Heard) + Send + 'static) -> Result<Self, LspError> {
        let flags = CreateFlags::CLOEXEC | CreateFlags::NONBLOCK;
        let fd = Arc::new(inotify::init(flags).map_err(|e| watch_error("inotify", e.into()))?);
        // Close-on-exec, or a child started since (a language server) would hold the write
        // end open and the thread would never hear the stop.
        let (wake, stop) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
            .map_err(|e| watch_error("a pipe", e.into()))?;
        let (asked, marks) = rustix::pipe::pipe_with(
            rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
        )
        .map_err(|e| watch_error("a pipe", e.into()))?;
        let folders = Folders::default();
        let (reading, named) = (fd.clone(), folders.clone());
        let thread = std::thread::Builder::new()
            .name("tether-watch".into())
            .spawn(move || read_events(&reading, [&wake, &asked], &named, &mut heard))
            .map_err(|e| watch_error("a thread", e))?;
        Ok(Inotify {
            fd,
            folders,
            stop: Some(stop),
            marks,
            thread: Some(thread),
        })
    }

    /// Asks the thread for [`Heard::Mark`]`(seq)` once it has heard every event queued now:
    /// the kernel queues a change's event during the call that makes it, so every change
    /// made before this call is heard before the mark. False when the thread cannot be asked.
    pub fn mark(&self, seq: u64) -> bool {
        rustix::io::write(&self.marks, &seq.to_le_bytes()).is_ok_and(|n| n == 8)
    }

    /// Watches one folder (not what is under it). The folder map is held across the call, so
    /// the thread never reads an event of a watch it cannot name.
    pub fn watch(&self, folder: &Path) -> Result<(), Refused> {
        let mut folders = lock(&self.folders);
        match inotify::add_watch(&*self.fd, folder, MASK) {
            Ok(wd) => {
                // A folder moved and watched again keeps its watch: the newest path names it.
                folders.insert(wd, folder.to_path_buf());
                Ok(())
            }
            Err(Errno::NOENT | Errno::NOTDIR) => Err(Refused::Gone),
            Err(Errno::NOSPC) => Err(Refused::Limit),
            Err(e) => Err(Refused::Other(e.to_string())),
        }
    }
}

impl Drop for Inotify {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread: waits for events, the stop or a mark asked for, and gives each event on; a
/// mark after every event queued when it was asked.
fn read_events(
    fd: &OwnedFd,
    [wake, asked]: [&OwnedFd; 2],
    folders: &Folders,
    heard: &mut dyn FnMut(Heard),
) {
    let mut buffer = vec![MaybeUninit::<u8>::uninit(); BUFFER];
    let mut reader = inotify::Reader::new(fd, &mut buffer);
    let mut marks = [0u8; 8 * 64];
    loop {
        let mut fds = [
            PollFd::new(fd, PollFlags::IN),
            PollFd::new(wake, PollFlags::IN),
            PollFd::new(asked, PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(e) => return heard(Heard::Ended(format!("waiting for its events failed: {e}"))),
        }
        if !fds[1].revents().is_empty() {
            return;
        }
        // Marks asked for before the events below are read: each is given after them.
        let mut due = Vec::new();
        if !fds[2].revents().is_empty() {
            while let Ok(n) = rustix::io::read(asked, &mut marks) {
                if n == 0 {
                    break;
                }
                due.extend(
                    marks[..n]
                        .chunks_exact(8)
                        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default())),
                );
            }
        }
        loop {
            let event = match reader.next() {
                Ok(event) => event,
                Err(Errno::AGAIN) => break,
                Err(Errno::INTR) => continue,
                Err(e) => return heard(Heard::Ended(format!("reading its events failed: {e}"))),
            };
            let flags = event.events();
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                heard(Heard::Lost);
                continue;
            }
            if flags.contains(ReadFlags::IGNORED) {
                lock(folders).remove(&event.wd());
                continue;
            }
            let (Some(name), Some(kind)) = (event.file_name(), change_kind(flags)) else {
                continue;
            };
            let folder = lock(folders).get(&event.wd()).cloned();
            if let Some(folder) = folder {
                heard(Heard::Path(
                    folder.join(OsStr::from_bytes(name.to_bytes())),
                    kind,
                ));
            }
        }
        for seq in due {
            heard(Heard::Mark(seq));
        }
    }
}

/// The LSP `FileChangeType` an event amounts to (1 created, 2 changed, 3 deleted), if any.
fn change_kind(flags: ReadFlags) -> Option<u8> {
    if flags.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO) {
        Some(1)
    } else if flags.intersects(ReadFlags::DELETE | ReadFlags::MOVED_FROM) {
        Some(3)
    } else if flags.intersects(ReadFlags::MODIFY | ReadFlags::CLOSE_WRITE | ReadFlags::ATTRIB) {
        Some(2)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::time::Duration;

    /// Collects what the thread hears until `done` says it has what it waits for.
    fn heard_until(
        rx: &std::sync::mpsc::Receiver<Heard>,
        done: impl Fn(&[Heard]) -> bool,
    ) -> Vec<Heard> {
        let mut all = Vec::new();
        while !done(&all) {
            match rx.recv_timeout(Duration::from_secs(10)) {
                Ok(h) => all.push(h),
                Err(_) => panic!("the watch went quiet after {all:?}"),
            }
        }
        all
    }

    /// A mark asked for after changes is heard after every one of them, however many.
    #[test]
    fn a_mark_comes_after_every_change_made_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        let watch = Inotify::start(move |h| tx.send(h).unwrap()).unwrap();
        watch.watch(&root).unwrap();
        for n in 0..300 {
            std::fs::write(root.join(format!("f{n}.py")), "x = 1\n").unwrap();
        }
        assert!(watch.mark(7));
        let all = heard_until(&rx, |all| all.contains(&Heard::Mark(7)));
        let created = all
            .iter()
            .filter(|h| matches!(h, Heard::Path(_, 1)))
            .count();
        assert_eq!(created, 300, "{all:?}");
        assert_eq!(all.last(), Some(&Heard::Mark(7)));
    }

    /// Writes, renames and deletions are heard as the changes they are; reading a file, which
    /// every server and compiler does by the thousand, is not heard at all (the first thing
    /// heard is the write after fifty reads).
    #[test]
    fn changes_are_heard_and_reads_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let watch = Inotify::start(move |h| tx.send(h).unwrap()).unwrap();
        watch.watch(&root).unwrap();
        for _ in 0..50 {
            std::fs::read(root.join("a.py")).unwrap();
        }
        std::fs::write(root.join("b.py"), "y = 2\n").unwrap();
        std::fs::rename(root.join("b.py"), root.join("c.py")).unwrap();
        std::fs::remove_file(root.join("a.py")).unwrap();
        let all = heard_until(&rx, |all| all.contains(&Heard::Path(root.join("a.py"), 3)));
        let first = all.first().cloned();
        assert_eq!(first, Some(Heard::Path(root.join("b.py"), 1)), "{all:?}");
        assert!(all.contains(&Heard::Path(root.join("b.py"), 2)), "{all:?}");
        assert!(all.contains(&Heard::Path(root.join("b.py"), 3)), "{all:?}");
        assert!(all.contains(&Heard::Path(root.join("c.py"), 1)), "{all:?}");
    }

    /// Dropping the watch ends its thread though a child started meanwhile inherited the
    /// process's descriptors (a language server is started after the watch).
    #[test]
    fn the_watch_stops_while_a_child_started_after_it_runs() {
        let watch = Inotify::start(|_| {}).unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let (done, stopped) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            drop(watch);
            let _ = done.send(());
        });
        let within = stopped.recv_timeout(Duration::from_secs(10));
        let _ = child.kill();
        let _ = child.wait();
        assert!(within.is_ok(), "the watch's thread outlived its stop");
    }

    /// A folder gone before its watch is added is said to be gone, not refused by a limit.
    #[test]
    fn a_folder_gone_before_it_is_watched_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let watch = Inotify::start(|_| {}).unwrap();
        let gone = dir.path().join("gone");
        assert_eq!(watch.watch(&gone), Err(Refused::Gone));
        std::fs::write(&gone, "").unwrap();
        assert_eq!(watch.watch(&gone), Err(Refused::Gone));
    }

    /// A folder moved inside the tree and watched again under its new path names its events
    /// by that path.
    #[test]
    fn a_folder_moved_and_watched_again_is_named_by_its_new_path() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new) = (dir.path().join("old"), dir.path().join("new"));
        std::fs::create_dir(&old).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let watch = Inotify::start(move |h| tx.send(h).unwrap()).unwrap();
        watch.watch(&old).unwrap();
        std::fs::rename(&old, &new).unwrap();
        watch.watch(&new).unwrap();
        std::fs::write(new.join("m.py"), "").unwrap();
        let all = heard_until(&rx, |all| !all.is_empty());
        assert_eq!(all, vec![Heard::Path(new.join("m.py"), 1)]);
    }
}
