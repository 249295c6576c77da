//! Files a server names, and files tether sends to a server, are read only through
//! tether-fs's confined read and on the blocking pool: a symlink out of the workspace, a FIFO,
//! a device or a huge file must neither be shown nor stall or grow tether.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use tether_fs::{Unshown, Workspace};

/// One file's text, read through the door on the blocking pool.
pub(crate) async fn read(ws: &Workspace, path: &Path) -> Result<String, Unshown> {
    let (ws, path) = (ws.clone(), path.to_path_buf());
    tokio::task::spawn_blocking(move || ws.read_named(&path))
        .await
        .unwrap_or_else(|e| Err(Unshown::Unreadable(e.to_string())))
}

/// Some lines of each file, or why the file is not shown.
pub(crate) type Wanted = HashMap<PathBuf, Result<HashMap<usize, String>, Unshown>>;

/// The 0-based `lines` of each file, read in one trip to the blocking pool; only those lines
/// are kept, so an answer naming many large files holds one of them at a time.
pub(crate) async fn lines(ws: &Workspace, wanted: HashMap<PathBuf, BTreeSet<usize>>) -> Wanted {
    let ws = ws.clone();
    let keep = move || {
        wanted
            .into_iter()
            .map(|(path, numbers)| {
                let text = ws.read_named(&path).map(|text| {
                    let all: Vec<&str> = text.lines().collect();
                    numbers
                        .iter()
                        .filter_map(|n| Some((*n, all.get(*n)?.to_string())))
                        .collect()
                });
                (path, text)
            })
            .collect()
    };
    tokio::task::spawn_blocking(keep).await.unwrap_or_default()
}

/// Whether `path`, as the server named it, lies under the workspace or a read root before
/// symlinks are followed: such a file that the door refuses was reached through the workspace.
pub(crate) fn named_inside(ws: &Workspace, path: &Path) -> bool {
    path.starts_with(ws.root()) || ws.read_roots().iter().any(|r| path.starts_with(r))
}

/// Files checked at most for a mention of a written module.
const MENTION_FILES: usize = 1_000;

/// Those of `files` (at most [`MENTION_FILES`] read) that mention any of `words`, read in one
/// trip to the blocking pool: the files a server of the whole workspace will likely re-check.
pub(crate) async fn mentioning(
    ws: &Workspace,
    files: Vec<PathBuf>,
    words: Vec<String>,
) -> Vec<PathBuf> {
    let ws = ws.clone();
    let look = move || {
        files
            .into_iter()
            .take(MENTION_FILES)
            .filter(|path| {
                ws.read_named(path)
                    .is_ok_and(|text| words.iter().any(|w| text.contains(w.as_str())))
            })
            .collect()
    };
    tokio::task::spawn_blocking(look).await.unwrap_or_default()
}
