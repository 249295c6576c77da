//! Finding a compiled pattern in files: the walk (.gitignore, binary and size limits), the
//! fixed-text prefilter, the cached parse, and the parallel fan-out over all cores.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ast_grep_core::Matcher as _;
use ast_grep_core::matcher::MatcherExt as _;
use tether_fs::{ContentHash, hash_bytes};

use crate::cache::{Lookup, TreeCache};
use crate::lang::Lang;
use crate::pattern::Compiled;
use crate::template::Template;

/// Folders never searched: version control internals and tether's own state. Other hidden
/// folders (`.github`, `.config`) are searched unless .gitignore says otherwise.
const SKIPPED_DIRS: &[&str] = &[".git", ".hg", ".svn", ".tether"];

/// Files larger than this are skipped as generated or data.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
const SNIFF_BYTES: usize = 8192;

/// One match: where it is, its text, its captures, and (for ast_edit) its replacement.
#[derive(Debug, Clone)]
pub struct Match {
    /// Byte range in the file.
    pub range: std::ops::Range<usize>,
    /// 1-based line of the match start.
    pub line: usize,
    /// The matched text.
    pub text: String,
    /// Metavariable captures, sorted by name (`$$$` ones joined with ", ").
    pub captures: Vec<(String, String)>,
    /// The rewritten text, when a rewrite template was given.
    pub replacement: Option<String>,
}

/// The matches in one file, with the bytes' hash they were found in.
pub struct FileMatches {
    /// Path relative to the workspace root, `/`-separated.
    pub rel: String,
    /// Hash of the bytes searched.
    pub hash: ContentHash,
    /// The text that was searched, kept only when rewriting (the staged change is built on it).
    pub source: Option<String>,
    /// Matches in source order.
    pub matches: Vec<Match>,
}

/// What was looked at, so that an empty result is a trustworthy negative.
#[derive(Debug, Clone, Default)]
pub struct SearchStats {
    /// Files of the language that were searched (read; parsed unless the prefilter ruled them out).
    pub searched: usize,
    /// Of those, files ruled out by the pattern's fixed text without parsing.
    pub prefiltered: usize,
    /// Files parsed now (not served from the cache).
    pub parsed: usize,
    /// Files served from the cache.
    pub cached: usize,
    /// Files whose tree has syntax errors (searched anyway).
    pub syntax_errors: usize,
    /// Files that could not be searched: unreadable or not UTF-8.
    pub failed: usize,
    /// Skipped: over the size limit.
    pub too_large: usize,
    /// Skipped: binary content.
    pub binary: usize,
}

impl SearchStats {
    fn add(&mut self, o: &SearchStats) {
        self.searched += o.searched;
        self.prefiltered += o.prefiltered;
        self.parsed += o.parsed;
        self.cached += o.cached;
        self.syntax_errors += o.syntax_errors;
        self.failed += o.failed;
        self.too_large += o.too_large;
        self.binary += o.binary;
    }
}

/// Lists the files of `lang` under `target` (or `target` itself), honouring .gitignore even
/// outside a git repository; sorted for deterministic output.
pub fn files_for(target: &Path, lang: Lang) -> Vec<PathBuf> {
    if target.is_file() {
        return vec![target.to_path_buf()];
    }
    let mut files: Vec<PathBuf> = ignore::WalkBuilder::new(target)
        .require_git(false)
        .hidden(false)
        .filter_entry(|e| !SKIPPED_DIRS.iter().any(|d| e.file_name() == *d))
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(ignore::DirEntry::into_path)
        .filter(|p| Lang::from_path(p).is_some_and(|l| l.id() == lang.id()))
        .collect();
    files.sort();
    files
}

/// Searches `files` on all cores. `display` turns an absolute path into the shown one.
pub fn search(
    files: &[PathBuf],
    compiled: &Compiled,
    rewrite: Option<&Template>,
    cache: &TreeCache,
    display: &(dyn Fn(&Path) -> String + Sync),
    cancel: &AtomicBool,
) -> Result<(Vec<FileMatches>, SearchStats), SearchFailed> {
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(files.len().max(1));
    let results: Vec<std::thread::Result<(Vec<FileMatches>, SearchStats)>> =
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    scope.spawn(|| {
                        let mut found = Vec::new();
                        let mut stats = SearchStats::default();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= files.len() || cancel.load(Ordering::Relaxed) {
                                break;
                            }
                            let path = &files[i];
                            if let Some(f) = search_file(path, compiled, rewrite, cache, &mut stats)
                            {
                                found.push(FileMatches {
                                    rel: display(path),
                                    ..f
                                });
                            }
                        }
                        (found, stats)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join()).collect()
        });
    let results: Vec<(Vec<FileMatches>, SearchStats)> = match results.into_iter().collect() {
        Ok(r) => r,
        Err(_) => return Err(SearchFailed),
    };
    let mut all = Vec::new();
    let mut stats = SearchStats::default();
    for (found, s) in results {
        all.extend(found);
        stats.add(&s);
    }
    all.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok((all, stats))
}

/// A search worker panicked, so the results would be incomplete; none are given.
#[derive(Debug, Clone, Copy)]
pub struct SearchFailed;

fn search_file(
    path: &Path,
    compiled: &Compiled,
    rewrite: Option<&Template>,
    cache: &TreeCache,
    stats: &mut SearchStats,
) -> Option<FileMatches> {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if size > MAX_FILE_BYTES {
        stats.too_large += 1;
        return None;
    }
    let Ok(bytes) = std::fs::read(path) else {
        stats.failed += 1;
        return None;
    };
    if bytes[..bytes.len().min(SNIFF_BYTES)].contains(&0) {
        stats.binary += 1;
        return None;
    }
    let Ok(text) = std::str::from_utf8(&bytes) else {
        stats.failed += 1;
        return None;
    };
    stats.searched += 1;
    if !compiled
        .literals
        .iter()
        .all(|lit| memchr::memmem::find(&bytes, lit.as_bytes()).is_some())
    {
        stats.prefiltered += 1;
        return None;
    }
    let hash = hash_bytes(&bytes);
    let cached = cache.tree(path, text, hash, compiled.lang);
    let tree = &cached.tree;
    match cached.lookup {
        Lookup::Hit => stats.cached += 1,
        Lookup::Parsed => stats.parsed += 1,
    }
    let root = tree.root();
    if root.get_inner_node().has_error() {
        stats.syntax_errors += 1;
    }
    let mut vars: Vec<&str> = compiled.pattern.defined_vars().into_iter().collect();
    vars.sort_unstable();
    let indexed = match (&cached.index, compiled.pattern.potential_kinds()) {
        (Some(index), Some(kinds)) => match kinds.iter().collect::<Vec<_>>().as_slice() {
            [kind] => index.nodes(tree, *kind as u16),
            _ => None,
        },
        _ => None,
    };
    let found: Vec<_> = match indexed {
        Some(nodes) => nodes
            .into_iter()
            .filter_map(|n| compiled.pattern.match_node(n))
            .collect(),
        None => root.find_all(&compiled.pattern).collect(),
    };
    let matches: Vec<Match> = found
        .into_iter()
        .map(|nm| {
            let env = nm.get_env();
            let captures = vars
                .iter()
                .map(|v| {
                    if let Some(node) = env.get_match(v) {
                        return (format!("${v}"), node.text().into_owned());
                    }
                    let many: Vec<String> = env
                        .get_multiple_matches(v)
                        .iter()
                        .filter(|n| n.is_named())
                        .map(|n| n.text().into_owned())
                        .collect();
                    (format!("$$${v}"), many.join(", "))
                })
                .collect();
            let replacement = rewrite.map(|template| template.render(&nm, text));
            Match {
                range: nm.range(),
                line: nm.start_pos().line() + 1,
                text: nm.text().into_owned(),
                captures,
                replacement,
            }
        })
        .collect();
    if matches.is_empty() {
        return None;
    }
    Some(FileMatches {
        rel: String::new(),
        hash,
        source: rewrite.map(|_| text.to_string()),
        matches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::compile;

    fn listing(found: &[FileMatches]) -> Vec<String> {
        found
            .iter()
            .flat_map(|f| {
                f.matches
                    .iter()
                    .map(|m| format!("{}:{} {} {:?}", f.rel, m.line, m.text, m.captures))
            })
            .collect()
    }

    /// The prefilter and the kind index are shortcuts: on real code they must find exactly
    /// what a plain walk of every tree finds.
    fn assert_shortcuts_agree(dir: &Path, lang: &str, patterns: &[&str]) {
        let lang = Lang::by_id(lang).unwrap();
        let files = files_for(dir, lang);
        assert!(files.len() > 5, "too small a corpus in {}", dir.display());
        let display = |p: &Path| p.display().to_string();
        let stop = AtomicBool::new(false);
        let warm = TreeCache::new(1 << 30);
        for p in patterns {
            let plain = compile(p, lang).unwrap().without_prefilter();
            let (reference, _) =
                search(&files, &plain, None, &TreeCache::new(0), &display, &stop).unwrap();
            let fast = compile(p, lang).unwrap();
            let (cold, _) = search(&files, &fast, None, &warm, &display, &stop).unwrap();
            let (hot, stats) = search(&files, &fast, None, &warm, &display, &stop).unwrap();
            assert!(!reference.is_empty(), "{p}: the corpus should have matches");
            assert_eq!(listing(&cold), listing(&reference), "{p} cold");
            assert_eq!(listing(&hot), listing(&reference), "{p} warm");
            assert_eq!(
                stats.parsed, 0,
                "{p}: the second search should be served from cache"
            );
        }
    }

    #[test]
    fn shortcuts_agree_with_a_full_walk_on_this_repository() {
        let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        assert_shortcuts_agree(
            &crates,
            "rust",
            &[
                "$X.unwrap_or($Y)",
                "format!($$$A)",
                "if let Some($X) = $Y { $$$B }",
                "Some($X)",
                "pub fn $F($$$A) -> $R { $$$B }",
            ],
        );
    }

    #[test]
    fn shortcuts_agree_with_a_full_walk_on_the_python_stdlib() {
        let out = std::process::Command::new("python3")
            .args([
                "-c",
                "import json, os; print(os.path.dirname(os.path.dirname(json.__file__)))",
            ])
            .output()
            .unwrap();
        let stdlib = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        assert_shortcuts_agree(
            &stdlib.join("email"),
            "python",
            &[
                "raise $E($$$A)",
                "isinstance($A, $B)",
                "self.$A = $A",
                "return None",
                "if $C: $$$B",
            ],
        );
    }
}
