//! Which files name which module, kept current from the workspace's watch: a write asks for
//! the files that may import what it changed, and on a repository of thousands of files that
//! answer must cost what changed since the last write, not a read of the tree.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tether_base::lock;
use tether_fs::Workspace;
use tether_tool::{BoxFuture, Pooled};
use tokio::sync::mpsc;

use crate::python_imports::{Load, Module};
use crate::watch::{Change, SharedWatch};

/// The indexes of one workspace, one per server root and set of extensions, shared by every
/// run of the pool as the watch is.
pub struct Importers {
    watch: Arc<SharedWatch>,
    files: Arc<Workspace>,
    indexes: Mutex<HashMap<IndexKey, Arc<Mutex<Index>>>>,
}

/// A server's root and the extensions of its languages, sorted.
type IndexKey = (PathBuf, Vec<String>);

impl Importers {
    pub fn new(watch: Arc<SharedWatch>, files: Arc<Workspace>) -> Self {
        Importers {
            watch,
            files,
            indexes: Mutex::default(),
        }
    }

    /// The files under `root` with one of `extensions` that may depend on `touched`, sorted:
    /// Python files that import one of them, other files that name one's module as a whole
    /// word. The first ask for a root reads its files once; later asks read only the files
    /// changed since.
    pub async fn naming(
        &self,
        root: &Path,
        extensions: Vec<String>,
        touched: Vec<PathBuf>,
    ) -> Vec<PathBuf> {
        let index = self.index(root, extensions);
        let files = self.files.clone();
        let ask = move || lock(&index).naming(&files, &touched);
        tokio::task::spawn_blocking(ask).await.unwrap_or_default()
    }

    /// Whether each of `paths` may depend on `touched`, as far as the index of `root` knows
    /// without reading the tree again: `None` for a file it does not hold (another root or
    /// extension, an ignored folder), and for every file while a module was never asked for.
    pub async fn depend_on(
        &self,
        root: &Path,
        extensions: Vec<String>,
        touched: Vec<PathBuf>,
        paths: Vec<PathBuf>,
    ) -> Vec<Option<bool>> {
        let index = self.index(root, extensions);
        let files = self.files.clone();
        let count = paths.len();
        let ask = move || lock(&index).depend_on(&files, &touched, &paths);
        let known = tokio::task::spawn_blocking(ask).await.ok();
        known.unwrap_or_else(|| vec![None; count])
    }

    /// The index of `root` for `extensions`, made (and subscribed to the watch) on first use.
    fn index(&self, root: &Path, mut extensions: Vec<String>) -> Arc<Mutex<Index>> {
        extensions.sort();
        let mut indexes = lock(&self.indexes);
        indexes
            .entry((root.to_path_buf(), extensions.clone()))
            .or_insert_with(|| {
                // The watch starts before the tree is read, so no change falls between.
                let subscription = match self.watch.start() {
                    Ok(_) => {
                        let (id, rx) = self.watch.subscribe();
                        let pending = Arc::<Mutex<Pending>>::default();
                        gather(rx, pending.clone());
                        Some((id, pending))
                    }
                    Err(_) => None,
                };
                Arc::new(Mutex::new(Index::new(
                    root.to_path_buf(),
                    extensions,
                    subscription,
                )))
            })
            .clone()
    }
}

impl Pooled for Importers {
    fn stop(&self, _budget: Duration) -> BoxFuture<'_, ()> {
        for index in lock(&self.indexes).drain().map(|(_, i)| i) {
            if let Some((id, _)) = &lock(&index).subscription {
                self.watch.unsubscribe(*id);
            }
        }
        Box::pin(async {})
    }
}

/// Changed paths kept between asks, at most: past that, the next ask reads the tree again.
const PENDING_AT_MOST: usize = 50_000;

/// The paths the watch saw change since the last ask, gathered as they come so a host whose
/// index goes unasked for days holds each changed path once, and never more than
/// [`PENDING_AT_MOST`] of them.
#[derive(Default)]
struct Pending {
    paths: BTreeSet<PathBuf>,
    overflowed: bool,
    /// The channel ended: the watch stopped (or the index was let go), so no change is heard
    /// any more and every ask reads the tree again.
    ended: bool,
}

/// Gathers the watch's changes into `pending` until the channel ends (unsubscribed).
fn gather(mut rx: mpsc::UnboundedReceiver<Change>, pending: Arc<Mutex<Pending>>) {
    tokio::spawn(async move {
        while let Some(change) = rx.recv().await {
            let mut pending = lock(&pending);
            match change {
                Change::Path(path, _) if pending.paths.len() < PENDING_AT_MOST => {
                    pending.paths.insert(path);
                }
                Change::Mark(_) => {}
                // Too many to keep, or the system dropped some: the next ask reads the tree.
                _ => pending.overflowed = true,
            }
        }
        lock(&pending).ended = true;
    });
}

/// What one file of an index names: the known module words, and for a Python file what its
/// imports may load (its words are then those of its imports alone).
struct Entry {
    words: Vec<String>,
    loads: Option<Vec<Load>>,
}

impl Entry {
    /// Whether this file may depend on one of `modules` (the touched Python files), given
    /// that it names one's module.
    fn depends_on(&self, modules: &[Module]) -> bool {
        match &self.loads {
            Some(loads) => crate::named::loads_any(loads, modules),
            None => true,
        }
    }
}

/// One root's files and the module words each names.
struct Index {
    root: PathBuf,
    extensions: Vec<String>,
    /// The watch's subscription and the changes since the last ask; `None` when the watch
    /// could not start, and then every ask reads the tree again.
    subscription: Option<(u64, Arc<Mutex<Pending>>)>,
    built: bool,
    /// Words whose files are all known: every file's module word when the tree was read,
    /// and each word asked for since.
    words: HashSet<String>,
    /// Every file of the root with one of the extensions, with the known words it names.
    by_file: BTreeMap<PathBuf, Entry>,
    by_word: HashMap<String, BTreeSet<PathBuf>>,
}

impl Index {
    fn new(
        root: PathBuf,
        extensions: Vec<String>,
        subscription: Option<(u64, Arc<Mutex<Pending>>)>,
    ) -> Self {
        Index {
            root,
            extensions,
            subscription,
            built: false,
            words: HashSet::new(),
            by_file: BTreeMap::new(),
            by_word: HashMap::new(),
        }
    }

    fn naming(&mut self, ws: &Workspace, touched: &[PathBuf]) -> Vec<PathBuf> {
        let words = crate::named::module_words(touched);
        self.refresh(ws);
        let unknown: Vec<&String> = words.iter().filter(|w| !self.words.contains(*w)).collect();
        if !unknown.is_empty() {
            self.learn(ws, &unknown);
        }
        let mut found = BTreeSet::new();
        for word in &words {
            if let Some(files) = self.by_word.get(word) {
                found.extend(files.iter());
            }
        }
        let modules = Module::all(touched);
        let depends = |file: &&PathBuf| {
            self.by_file
                .get(*file)
                .is_some_and(|e| e.depends_on(&modules))
        };
        found.into_iter().filter(depends).cloned().collect()
    }

    /// Brings the index up to date: the tree read at first (or when changes were lost),
    /// then only the files changed since.
    fn refresh(&mut self, ws: &Workspace) {
        match self.can_catch_up() {
            true => self.catch_up(ws),
            false => self.build(ws),
        }
    }

    /// Whether the tree was read and every change since is at hand (the watch runs and
    /// dropped none), so reading the changed files brings the index up to date.
    fn can_catch_up(&self) -> bool {
        self.built
            && self.subscription.as_ref().is_some_and(|(_, p)| {
                let pending = lock(p);
                !pending.overflowed && !pending.ended
            })
    }

    /// Whether each of `paths` may depend on `touched`, for the files held, once every
    /// module word is known and the changed files are all that need reading: learning a word
    /// or reading the tree again (no watch, or changes lost) is only a write's ask to make.
    fn depend_on(
        &mut self,
        ws: &Workspace,
        touched: &[PathBuf],
        paths: &[PathBuf],
    ) -> Vec<Option<bool>> {
        let words = crate::named::module_words(touched);
        if !self.can_catch_up() || words.iter().any(|w| !self.words.contains(w)) {
            return vec![None; paths.len()];
        }
        self.catch_up(ws);
        let modules = Module::all(touched);
        paths
            .iter()
            .map(|path| {
                let entry = self.by_file.get(path)?;
                let named = entry.words.iter().any(|w| words.contains(w));
                Some(named && entry.depends_on(&modules))
            })
            .collect()
    }

    /// Reads the whole tree: its files, their module words, and which files name which.
    fn build(&mut self, ws: &Workspace) {
        // Changes gathered before this read are in it.
        if let Some((_, pending)) = &self.subscription {
            let mut pending = lock(pending);
            let ended = pending.ended;
            *pending = Pending {
                ended,
                ..Pending::default()
            };
        }
        let files = self.walk(&self.root);
        self.words = crate::named::module_words(&files).into_iter().collect();
        self.by_file.clear();
        self.by_word.clear();
        for file in files {
            self.index_file(ws, file);
        }
        self.built = true;
    }

    /// Takes in the changes the watch saw since the last ask.
    fn catch_up(&mut self, ws: &Workspace) {
        let changed = match &self.subscription {
            Some((_, pending)) => std::mem::take(&mut lock(pending).paths),
            None => BTreeSet::new(),
        };
        for path in changed {
            if !path.starts_with(&self.root) {
                continue;
            }
            // A folder created, moved in, removed or moved away changes every file under it.
            let after = (Bound::Excluded(&path), Bound::Unbounded);
            let under: Vec<PathBuf> = self
                .by_file
                .range::<PathBuf, _>(after)
                .map(|(f, _)| f)
                .take_while(|f| f.starts_with(&path))
                .cloned()
                .collect();
            for file in under {
                self.forget(&file);
            }
            if path.is_dir() {
                for file in self.walk(&path) {
                    self.forget(&file);
                    self.index_file(ws, file);
                }
            } else {
                self.forget(&path);
                if path.is_file() && self.wanted(&path) {
                    self.index_file(ws, path);
                }
            }
        }
    }

    /// Reads every file once more for words not asked before, which from now on are kept.
    fn learn(&mut self, ws: &Workspace, words: &[&String]) {
        let files: Vec<PathBuf> = self.by_file.keys().cloned().collect();
        for word in words {
            self.words.insert((*word).clone());
            self.by_word.entry((*word).clone()).or_default();
        }
        for file in files {
            // A Python file's words are its imports', which are kept whole.
            let entry = self.by_file.get(&file);
            let named: HashSet<String> = match entry.and_then(|e| e.loads.as_ref()) {
                Some(loads) => loads
                    .iter()
                    .flat_map(|l| l.words(&self.root))
                    .map(str::to_string)
                    .collect(),
                None => match ws.read_named(&file) {
                    Ok(text) => identifiers(&text).into_iter().map(str::to_string).collect(),
                    Err(_) => continue,
                },
            };
            for word in words {
                if named.contains(word.as_str()) {
                    self.add(&file, word);
                }
            }
        }
    }

    fn index_file(&mut self, ws: &Workspace, file: PathBuf) {
        let text = ws.read_named(&file).unwrap_or_default();
        let loads = crate::python_imports::is_python(&file)
            .then(|| crate::python_imports::loads(&file, &text));
        let mut named: Vec<String> = match &loads {
            Some(loads) => loads
                .iter()
                .flat_map(|l| l.words(&self.root))
                .filter(|w| self.words.contains(*w))
                .map(str::to_string)
                .collect(),
            None => identifiers(&text)
                .into_iter()
                .filter(|w| self.words.contains(*w))
                .map(str::to_string)
                .collect(),
        };
        named.sort();
        named.dedup();
        for word in &named {
            self.by_word
                .entry(word.clone())
                .or_default()
                .insert(file.clone());
        }
        self.by_file.insert(
            file,
            Entry {
                words: named,
                loads,
            },
        );
    }

    fn add(&mut self, file: &Path, word: &str) {
        if let Some(entry) = self.by_file.get_mut(file) {
            entry.words.push(word.to_string());
        }
        if let Some(files) = self.by_word.get_mut(word) {
            files.insert(file.to_path_buf());
        }
    }

    fn forget(&mut self, file: &Path) {
        let words = self
            .by_file
            .remove(file)
            .map(|e| e.words)
            .unwrap_or_default();
        for word in words {
            if let Some(files) = self.by_word.get_mut(&word) {
                files.remove(file);
            }
        }
    }

    fn wanted(&self, path: &Path) -> bool {
        let extension = path.extension().and_then(|e| e.to_str());
        extension.is_some_and(|e| self.extensions.iter().any(|x| x == e))
            && !path
                .ancestors()
                .take_while(|a| a.starts_with(&self.root))
                .any(|a| a.file_name().is_some_and(|n| n == ".tether"))
    }

    /// The files under `dir` with one of the extensions that git would not ignore.
    fn walk(&self, dir: &Path) -> Vec<PathBuf> {
        ignore::WalkBuilder::new(dir)
            .filter_entry(|e| e.file_name() != ".tether")
            .build()
            .flatten()
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(ignore::DirEntry::into_path)
            .filter(|p| self.wanted(p))
            .collect()
    }
}

/// The whole identifiers of `text`: its longest runs of letters, digits and `_`, as
/// [`crate::named::names_word`] reads a whole word.
fn identifiers(text: &str) -> HashSet<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn workspace(dir: &Path) -> Workspace {
        Workspace::new(dir).unwrap()
    }

    #[test]
    fn identifiers_are_whole_words() {
        let words = identifiers("from pkg.m import g\nprint(sum_m)");
        assert!(words.contains("m") && words.contains("pkg") && words.contains("sum_m"));
        assert!(!words.contains("sum"));
    }

    #[test]
    fn a_new_module_and_changed_files_are_seen_without_reading_the_tree_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("core.py"), "def f(): pass\n").unwrap();
        std::fs::write(root.join("a.py"), "import core\n").unwrap();
        std::fs::write(root.join("b.py"), "x = 1\n").unwrap();
        let ws = workspace(&root);
        let pending = Arc::<Mutex<Pending>>::default();
        let tx = |path: PathBuf| lock(&pending).paths.insert(path);
        let mut index = Index::new(root.clone(), vec!["py".into()], Some((0, pending.clone())));
        let words = |w: &str| vec![root.join(format!("{w}.py"))];
        assert_eq!(index.naming(&ws, &words("core")), [root.join("a.py")]);
        // b starts importing core; a stops.
        std::fs::write(root.join("b.py"), "from core import f\n").unwrap();
        std::fs::write(root.join("a.py"), "x = 2\n").unwrap();
        tx(root.join("b.py"));
        tx(root.join("a.py"));
        assert_eq!(index.naming(&ws, &words("core")), [root.join("b.py")]);
        // A module that did not exist when the tree was read is learnt on its first ask.
        std::fs::write(root.join("c.py"), "import fresh\n").unwrap();
        tx(root.join("c.py"));
        assert_eq!(index.naming(&ws, &words("fresh")), [root.join("c.py")]);
        // A folder moved in brings its files.
        let pkg = root.join("pkg");
        std::fs::create_dir(&pkg).unwrap();
        std::fs::write(pkg.join("d.py"), "import fresh\n").unwrap();
        tx(pkg.clone());
        assert_eq!(
            index.naming(&ws, &words("fresh")),
            [root.join("c.py"), pkg.join("d.py")]
        );
        std::fs::remove_dir_all(&pkg).unwrap();
        tx(pkg);
        assert_eq!(index.naming(&ws, &words("fresh")), [root.join("c.py")]);
        // Past the changes kept between asks, the next ask reads the tree again.
        std::fs::write(root.join("e.py"), "import fresh\n").unwrap();
        lock(&pending).overflowed = true;
        assert_eq!(
            index.naming(&ws, &words("fresh")),
            [root.join("c.py"), root.join("e.py")]
        );
        // Once the watch stopped, no change is heard: every ask reads the tree again.
        lock(&pending).ended = true;
        std::fs::write(root.join("f.py"), "import fresh\n").unwrap();
        assert_eq!(index.naming(&ws, &words("fresh")).len(), 3);
        std::fs::write(root.join("g.py"), "import fresh\n").unwrap();
        assert_eq!(index.naming(&ws, &words("fresh")).len(), 4);
    }

    /// A Python file depends on a module only through an import that may load it: the
    /// module's name in a comment, a string or a variable, or a module of the same name in
    /// another package, is not an import of it. Other languages keep the whole-word match.
    #[test]
    fn python_importers_are_the_files_whose_imports_may_load_the_module() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for folder in ["app", "app/sites", "other"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        let files = [
            ("app/__init__.py", ""),
            ("app/shortcuts.py", "def render(): pass\n"),
            ("app/sites/shortcuts.py", "def site(): pass\n"),
            ("app/views.py", "from app.shortcuts import render\n"),
            ("app/sites/views.py", "from .shortcuts import site\n"),
            ("app/sites/up.py", "from .. import shortcuts\n"),
            ("app/sites/star.py", "from app.sites.shortcuts import *\n"),
            (
                "other/talk.py",
                "# shortcuts are handy\nshortcuts = 'app.shortcuts'\n",
            ),
            (
                "other/lazy.py",
                "def f():\n    import app.shortcuts as s\n    return s\n",
            ),
            ("other/page.ts", "// shortcuts\n"),
        ];
        for (name, text) in files {
            std::fs::write(root.join(name), text).unwrap();
        }
        let ws = workspace(&root);
        let mut index = Index::new(root.clone(), vec!["py".into()], None);
        let found = index.naming(&ws, &[root.join("app/shortcuts.py")]);
        let want = ["app/sites/up.py", "app/views.py", "other/lazy.py"].map(|f| root.join(f));
        assert_eq!(found, want);
        let found = index.naming(&ws, &[root.join("app/sites/shortcuts.py")]);
        let want = ["app/sites/star.py", "app/sites/views.py"].map(|f| root.join(f));
        assert_eq!(found, want);
        // The package's __init__ is loaded by every import below it.
        let found = index.naming(&ws, &[root.join("app/__init__.py")]);
        assert_eq!(found.len(), 5, "{found:?}");
        // Another language's files are matched by the module's name as a word.
        let mut index = Index::new(root.clone(), vec!["ts".into()], None);
        let found = index.naming(&ws, &[root.join("app/shortcuts.py")]);
        assert_eq!(found, [root.join("other/page.ts")]);
    }

    /// A publication's file is judged by the index only when the index holds it and knows
    /// every word, and a change since is taken in first.
    #[test]
    fn whether_a_file_names_a_module_is_answered_only_from_what_the_index_knows() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("core.py"), "def f(): pass\n").unwrap();
        std::fs::write(root.join("a.py"), "import core\n").unwrap();
        std::fs::write(root.join("b.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("c.txt"), "core\n").unwrap();
        let ws = workspace(&root);
        let pending = Arc::<Mutex<Pending>>::default();
        let mut index = Index::new(root.clone(), vec!["py".into()], Some((0, pending.clone())));
        let words = |w: &str| vec![root.join(format!("{w}.py"))];
        let files = [root.join("a.py"), root.join("b.py"), root.join("c.txt")];
        // Before a write's ask read the tree, nothing is known.
        assert_eq!(index.depend_on(&ws, &words("core"), &files), [None; 3]);
        index.naming(&ws, &words("core"));
        let known = index.depend_on(&ws, &words("core"), &files);
        assert_eq!(known, [Some(true), Some(false), None]);
        // A word never asked for would need the tree read again: not answered.
        assert_eq!(index.depend_on(&ws, &words("f"), &files), [None; 3]);
        // A change the watch saw is read before answering.
        std::fs::write(root.join("b.py"), "from core import f\n").unwrap();
        lock(&pending).paths.insert(root.join("b.py"));
        let known = index.depend_on(&ws, &words("core"), &files[..2]);
        assert_eq!(known, [Some(true), Some(true)]);
        // Changes lost: only reading the tree again would tell, which is not done here.
        std::fs::write(root.join("e.py"), "import core\n").unwrap();
        lock(&pending).overflowed = true;
        assert_eq!(index.depend_on(&ws, &words("core"), &files), [None; 3]);
        assert!(
            !index.by_file.contains_key(&root.join("e.py")),
            "the tree was read"
        );
    }
}
