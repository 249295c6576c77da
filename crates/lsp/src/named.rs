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

/// The module names `paths` are imported by: a file's stem, a package's folder name.
pub(crate) fn module_words<'a>(paths: impl IntoIterator<Item = &'a PathBuf>) -> Vec<String> {
    paths
        .into_iter()
        .filter_map(|path| {
            let module = match path.file_stem().and_then(|s| s.to_str()) {
                Some("__init__") => path.parent().and_then(|d| d.file_name()),
                _ => path.file_stem(),
            };
            module.and_then(|m| m.to_str()).map(str::to_string)
        })
        .collect()
}

/// Whether the file at `path` with `text` may depend on any of `touched`: a Python file if
/// one of its imports may load one of them, any other file if it names one's module as a
/// whole word.
pub(crate) fn depends_on_any(path: &Path, text: &str, touched: &[PathBuf]) -> bool {
    use crate::python_imports::{Module, is_python, loads};
    match is_python(path) {
        true => loads_any(&loads(path, text), &Module::all(touched)),
        false => names_any(text, &module_words(touched)),
    }
}

/// Whether any of a Python file's `loads` may load one of `modules` (a Python checker reads
/// no other kind of file through an import).
pub(crate) fn loads_any(
    loads: &[crate::python_imports::Load],
    modules: &[crate::python_imports::Module],
) -> bool {
    modules
        .iter()
        .any(|module| loads.iter().any(|load| load.may_load(module)))
}

/// Whether `text` has any of `words` as a whole identifier.
pub(crate) fn names_any(text: &str, words: &[String]) -> bool {
    words.iter().any(|w| names_word(text, w))
}

/// Whether `text` has `word` as a whole identifier, not inside a longer one.
pub(crate) fn names_word(text: &str, word: &str) -> bool {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(word).any(|(at, _)| {
        !ident(text[..at].chars().next_back()) && !ident(text[at + word.len()..].chars().next())
    })
}

#[cfg(test)]
mod tests {
    use super::names_word;

    #[test]
    fn a_module_is_named_only_as_a_whole_word() {
        assert!(names_word("from m import g\n", "m"));
        assert!(names_word("import pkg.m as x", "m"));
        assert!(!names_word("import mm\nprint(sum)", "m"));
    }
}
