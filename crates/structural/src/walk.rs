//! Which files a structural search looks at. The walk honours .gitignore (without git) and, like
//! ripgrep, leaves out what a user rarely means by "the workspace": dot-folders, `node_modules`,
//! virtual environments and tagged cache folders. What it leaves out is counted, so the footer
//! can say so and how to get it back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tether_fs::GeneratedFolder;

use crate::budget::{Budget, Stop};
use crate::lang::Lang;

/// Folders never searched, not even with `hidden: true`: version control internals and
/// tether's own state.
const NEVER_SEARCHED: &[&str] = &[".git", ".hg", ".svn", ".tether"];

/// The first bytes of a `CACHEDIR.TAG` file, as the Cache Directory Tagging Specification
/// defines them; a file with another start tags nothing.
/// How many paths of one kind of skipped folder the footer names.
const EXAMPLES: usize = 3;

/// Why a folder was left out of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SkipReason {
    /// It holds a `pyvenv.cfg`: a Python virtual environment.
    VirtualEnv,
    /// It is named `node_modules`.
    NodeModules,
    /// It holds a `CACHEDIR.TAG`: a build or tool cache.
    Cache,
    /// Its name starts with `.` and `hidden` was not asked for.
    DotFolder,
}

/// One kind of skipped folder: how many, and the first few as the result shows them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkippedGroup {
    /// Folders of this kind left out (their contents were not walked).
    pub count: usize,
    /// The first [`EXAMPLES`] of them in path order, relative to the workspace.
    pub examples: Vec<String>,
}

/// Every folder a walk left out, by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkippedFolders(pub BTreeMap<SkipReason, SkippedGroup>);

impl SkippedFolders {
    /// Folders left out, of every kind.
    pub fn total(&self) -> usize {
        self.0.values().map(|g| g.count).sum()
    }
}

/// The files a search will read, and the folders it left out on the way.
pub struct Listing {
    /// Files of the language, sorted.
    pub files: Vec<PathBuf>,
    /// Folders not walked by default.
    pub skipped: SkippedFolders,
    /// When ignore files left no file of the language: how many they excluded, and the rule
    /// that excluded the first (its text, its file shown, its line).
    pub all_ignored: Option<(usize, String, String, usize)>,
}

/// Why `dir` (not the walk's own start) is left out, or None when it is walked. `None` is also
/// the answer for the never-searched folders' contents, which are dropped before this is asked.
fn skip_reason(dir: &Path, name: &str, hidden: bool) -> Option<SkipReason> {
    match tether_fs::generated_folder(dir) {
        Some(GeneratedFolder::NodeModules) => Some(SkipReason::NodeModules),
        Some(GeneratedFolder::VirtualEnv) => Some(SkipReason::VirtualEnv),
        Some(GeneratedFolder::Cache) => Some(SkipReason::Cache),
        None => (name.starts_with('.') && !hidden).then_some(SkipReason::DotFolder),
    }
}

/// Lists the files of `lang` under `target` (or `target` itself), honouring .gitignore even
/// outside a git repository, and leaving out the folders [`SkipReason`] names below `target`
/// (never `target` itself: a path the caller named is searched). `shown` turns a path into
/// the text the result shows.
pub fn files_for(
    target: &Path,
    lang: Lang,
    hidden: bool,
    shown: &dyn Fn(&Path) -> String,
    budget: &Budget<'_>,
) -> Result<Listing, Stop> {
    if target.is_file() {
        return Ok(Listing {
            files: vec![target.to_path_buf()],
            skipped: SkippedFolders::default(),
            all_ignored: None,
        });
    }
    let of_lang = |p: &Path| Lang::from_path(p).is_some_and(|l| l.id() == lang.id());
    let (files, left_out) = walk(target, hidden, true, budget, &of_lang)?;
    // Nothing to search: if ignore files are why, say which rule (an unpacked release's
    // .gitignore can exclude its whole tree, which would otherwise read as "no such code").
    let all_ignored = match files.is_empty() {
        true => {
            let (excluded, _) = walk(target, hidden, false, budget, &of_lang)?;
            excluded.first().and_then(|first| {
                let (rule, file, line) = ignoring_rule(first)?;
                Some((excluded.len(), rule, shown(&file), line))
            })
        }
        false => None,
    };
    let mut skipped = SkippedFolders::default();
    for (reason, path) in left_out {
        let group = skipped.0.entry(reason).or_default();
        group.count += 1;
        if group.examples.len() < EXAMPLES {
            group.examples.push(shown(&path));
        }
    }
    Ok(Listing {
        files,
        skipped,
        all_ignored,
    })
}

/// The ignore rule that excludes `file`: the nearest `.ignore` or `.gitignore` above it whose
/// rules ignore it (or a folder it is in), with that rule's text, the file and its line.
fn ignoring_rule(file: &Path) -> Option<(String, PathBuf, usize)> {
    for dir in file.ancestors().skip(1) {
        for name in [".ignore", ".gitignore"] {
            let rules = dir.join(name);
            if !rules.is_file() {
                continue;
            }
            let (matcher, _) = ignore::gitignore::Gitignore::new(&rules);
            if let ignore::Match::Ignore(glob) = matcher.matched_path_or_any_parents(file, false) {
                let text = std::fs::read_to_string(&rules).unwrap_or_default();
                let line = text
                    .lines()
                    .position(|l| l.trim() == glob.original())
                    .map_or(0, |n| n + 1);
                return Some((glob.original().to_string(), rules, line));
            }
        }
    }
    None
}

/// The languages of the files a folder search would walk, so a folder of one language needs
/// no `language` argument.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// Per language id: how many files, and their extensions.
    pub langs: BTreeMap<&'static str, (usize, std::collections::BTreeSet<String>)>,
    /// Files in no bundled language (a README, a Cargo.toml).
    pub others: usize,
}

/// Counts the languages of the files under `target`, walked as [`files_for`] walks.
pub fn languages_under(target: &Path, hidden: bool, budget: &Budget<'_>) -> Result<Census, Stop> {
    let (files, _) = walk(target, hidden, true, budget, &|_| true)?;
    let mut census = Census::default();
    for file in files {
        match Lang::from_path(&file) {
            Some(lang) => {
                let entry = census.langs.entry(lang.id()).or_default();
                entry.0 += 1;
                let ext = file
                    .extension()
                    .map_or(String::new(), |e| format!(".{}", e.to_string_lossy()));
                entry.1.insert(ext);
            }
            None => census.others += 1,
        }
    }
    Ok(census)
}

/// The folders a walk left out, and why.
type LeftOut = Vec<(SkipReason, PathBuf)>;

/// The files under `target` that `keep` accepts, sorted, and the folders left out, sorted.
fn walk(
    target: &Path,
    hidden: bool,
    ignore_files: bool,
    budget: &Budget<'_>,
    keep: &dyn Fn(&Path) -> bool,
) -> Result<(Vec<PathBuf>, LeftOut), Stop> {
    let left_out: Arc<Mutex<LeftOut>> = Arc::default();
    let record = left_out.clone();
    let walk = ignore::WalkBuilder::new(target)
        .require_git(false)
        .git_ignore(ignore_files)
        .git_exclude(ignore_files)
        .git_global(ignore_files)
        .ignore(ignore_files)
        .parents(ignore_files)
        .hidden(false)
        .filter_entry(move |e| {
            let name = e.file_name().to_string_lossy();
            if NEVER_SEARCHED.contains(&name.as_ref()) {
                return false;
            }
            if !e.file_type().is_some_and(|t| t.is_dir()) {
                return true;
            }
            match skip_reason(e.path(), &name, hidden) {
                Some(reason) => {
                    if let Ok(mut list) = record.lock() {
                        list.push((reason, e.path().to_path_buf()));
                    }
                    false
                }
                None => true,
            }
        })
        .build();
    let mut files = Vec::new();
    for entry in walk {
        budget.check()?;
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_some_and(|t| t.is_file()) && keep(entry.path()) {
            files.push(entry.into_path());
        }
    }
    files.sort();
    let mut left_out = left_out.lock().map(|l| l.clone()).unwrap_or_default();
    left_out.sort();
    Ok((files, left_out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Limits;
    use std::sync::atomic::AtomicBool;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn list(root: &Path, target: &str, hidden: bool) -> (Vec<String>, SkippedFolders) {
        let stop = AtomicBool::new(false);
        let budget = Budget::new(Limits::default(), &stop);
        let shown = |p: &Path| {
            p.strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        };
        let python = Lang::by_id("python").unwrap();
        let listing = files_for(&root.join(target), python, hidden, &shown, &budget).unwrap();
        let files = listing.files.iter().map(|p| shown(p)).collect();
        (files, listing.skipped)
    }

    fn group(count: usize, examples: &[&str]) -> SkippedGroup {
        SkippedGroup {
            count,
            examples: examples.iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn vendored_and_hidden_folders_are_left_out_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "src/a.py", "");
        write(root, ".venv/pyvenv.cfg", "home = /usr/bin\n");
        write(root, ".venv/lib/site.py", "");
        write(root, "env2/pyvenv.cfg", "");
        write(root, "env2/x.py", "");
        write(root, "web/node_modules/pkg/index.py", "");
        write(
            root,
            "build/CACHEDIR.TAG",
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        );
        write(root, "build/gen.py", "");
        write(root, "fake/CACHEDIR.TAG", "not a signature\n");
        write(root, "fake/kept.py", "");
        write(root, ".github/ci.py", "");
        write(root, ".git/hooks/h.py", "");
        write(root, ".tether/s.py", "");
        let (files, skipped) = list(root, ".", false);
        assert_eq!(files, ["fake/kept.py", "src/a.py"]);
        let expected = [
            (SkipReason::VirtualEnv, group(2, &[".venv", "env2"])),
            (SkipReason::NodeModules, group(1, &["web/node_modules"])),
            (SkipReason::Cache, group(1, &["build"])),
            (SkipReason::DotFolder, group(1, &[".github"])),
        ];
        assert_eq!(skipped, SkippedFolders(expected.into_iter().collect()));

        // `hidden` lifts the dot-folder rule only; a virtual environment stays out.
        let (files, skipped) = list(root, ".", true);
        assert_eq!(files, [".github/ci.py", "fake/kept.py", "src/a.py"]);
        assert_eq!(skipped.total(), 4);
        assert!(!skipped.0.contains_key(&SkipReason::DotFolder));

        // A folder the caller names is walked, even one that would be left out.
        let (files, skipped) = list(root, ".venv", false);
        assert_eq!(files, [".venv/lib/site.py"]);
        assert_eq!(skipped.total(), 0);
    }
}
