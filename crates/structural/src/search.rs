//! Finding a compiled pattern in files: the walk (.gitignore, binary, size and depth limits),
//! the fixed-text prefilter, the cached parse, and the parallel fan-out over all cores. Only
//! what a result can show is kept of each match, so nested matches (each a near-copy of the
//! file) cost a count, not a copy.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use ast_grep_core::NodeMatch;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_language::SupportLang;
use tether_fs::{ContentHash, hash_bytes};

use crate::budget::{Budget, CHECK_EVERY, MAX_TREE_DEPTH, STACK_BYTES, Stop};
use crate::cache::{Lookup, TreeCache};
use crate::excerpt::{CAPTURE_CHARS, excerpt, one_line_cut};
use crate::pattern::Compiled;
use crate::template::{LineStarts, RenderError, ShapeError, Template};
use crate::walk::SkippedFolders;

/// How many files that held the fixed text but did not match a hint names.
const NEAR_MISS_EXAMPLES: usize = 3;

/// Files larger than this are skipped as generated or data.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
const SNIFF_BYTES: usize = 8192;

/// What a search keeps of each match.
#[derive(Clone, Copy)]
pub enum Mode<'t> {
    /// ast_grep: count every match, and describe the first `keep` of each file (no more can
    /// be shown), so memory does not grow with matches that nest or repeat.
    Find {
        /// Matches described per file.
        keep: usize,
    },
    /// ast_edit: render the outermost matches with the template; inner ones are only counted,
    /// as they wait for a second pass.
    Rewrite(&'t Template),
}

/// One match: where it is, and what the result shows of it or puts in its place.
#[derive(Debug, Clone)]
pub struct Match {
    /// Byte range in the file.
    pub range: std::ops::Range<usize>,
    /// 1-based line of the match start.
    pub line: usize,
    /// The match as ast_grep shows it: its first lines, each cut.
    pub excerpt: String,
    /// Metavariable captures as shown, sorted by name: on one line, cut (`$$$` ones joined
    /// with ", ").
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
    /// Matches in source order: the first `keep` (find), or the outermost ones (rewrite).
    pub matches: Vec<Match>,
    /// Every match in the file, including those not in `matches`.
    pub total: usize,
}

/// Why a search gave no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchError {
    /// It met a bound of its budget.
    Stopped(Stop),
    /// A worker thread could not start or panicked, so the results would be incomplete.
    WorkerFailed,
    /// The rewrite cannot keep the shape of a capture at one site, so nothing is staged.
    Shape {
        /// The file, as shown.
        file: String,
        /// Which capture, and where.
        shape: ShapeError,
    },
}

/// What searching one file gave.
enum Outcome {
    /// At least one match.
    Matched(FileMatches),
    /// It held the pattern's fixed text (or was parsed for lack of any) and did not match.
    NearMiss,
    /// Ruled out before matching, or skipped.
    Nothing,
}

impl From<Stop> for SearchError {
    fn from(stop: Stop) -> Self {
        SearchError::Stopped(stop)
    }
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
    /// Skipped: a syntax tree nested deeper than [`MAX_TREE_DEPTH`].
    pub too_deep: usize,
    /// Files that held all of the pattern's fixed text (or were parsed when it has none) and
    /// still did not match: the pattern's structure, not its spelling, is what differs.
    pub near_misses: usize,
    /// The first [`NEAR_MISS_EXAMPLES`] near misses in path order, as shown.
    pub near_miss_examples: Vec<String>,
    /// Near misses whose fixed text is all inside one macro call's arguments (a token tree).
    pub in_macro_arguments: usize,
    /// The pattern's fixed texts, in the order of [`SearchStats::literal_seen`].
    pub literals: Vec<String>,
    /// Whether each fixed text occurs in any searched file.
    pub literal_seen: Vec<bool>,
    /// Folders the walk left out (set by the caller, which walks).
    pub skipped_folders: SkippedFolders,
    /// When ignore files excluded every file of the language: how many, and the rule (its
    /// text, file and line); set by the caller, which walks.
    pub all_ignored: Option<(usize, String, String, usize)>,
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
        self.too_deep += o.too_deep;
        self.near_misses += o.near_misses;
        self.in_macro_arguments += o.in_macro_arguments;
        self.near_miss_examples
            .extend(o.near_miss_examples.iter().cloned());
        self.near_miss_examples.sort();
        self.near_miss_examples.truncate(NEAR_MISS_EXAMPLES);
        if self.literal_seen.len() < o.literal_seen.len() {
            self.literal_seen.resize(o.literal_seen.len(), false);
        }
        for (mine, theirs) in self.literal_seen.iter_mut().zip(&o.literal_seen) {
            *mine |= *theirs;
        }
    }
}

/// How a search shows and opens files: the tools open them beneath the workspace's
/// descriptors, so a folder swapped for a symlink mid-search leaks nothing from outside.
pub struct Io<'a> {
    /// Turns an absolute path into the shown one.
    pub display: &'a (dyn Fn(&Path) -> String + Sync),
    /// Opens a listed file for reading.
    pub open: &'a (dyn Fn(&Path) -> std::io::Result<std::fs::File> + Sync),
}

/// Searches `files` on all cores, on threads with a large stack, within `budget`.
pub fn search(
    files: &[PathBuf],
    compiled: &Compiled,
    mode: Mode<'_>,
    cache: &TreeCache,
    io: &Io<'_>,
    budget: &Budget<'_>,
) -> Result<(Vec<FileMatches>, SearchStats), SearchError> {
    cache.begin_search();
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(files.len().max(1));
    let mut vars: Vec<&str> = compiled.pattern.defined_vars().into_iter().collect();
    vars.sort_unstable();
    let vars = &vars;
    type Found = Result<(Vec<FileMatches>, SearchStats), SearchError>;
    let results: Vec<Found> = std::thread::scope(|scope| {
        let worker = || -> Found {
            let mut found = Vec::new();
            let mut stats = SearchStats {
                literal_seen: vec![false; compiled.literals.len()],
                ..SearchStats::default()
            };
            loop {
                budget.check()?;
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = files.get(i) else { break };
                let file = File {
                    path,
                    compiled,
                    mode,
                    vars,
                };
                let outcome =
                    search_file(&file, io, cache, &mut stats, budget).map_err(|e| match e {
                        SearchError::Shape { shape, .. } => SearchError::Shape {
                            file: (io.display)(path),
                            shape,
                        },
                        other => other,
                    })?;
                match outcome {
                    Outcome::Matched(f) => found.push(FileMatches {
                        rel: (io.display)(path),
                        ..f
                    }),
                    Outcome::NearMiss => {
                        stats.near_misses += 1;
                        // Files are taken in path order, so a worker's first ones are its
                        // smallest; merging keeps the smallest overall.
                        if stats.near_miss_examples.len() < NEAR_MISS_EXAMPLES {
                            stats.near_miss_examples.push((io.display)(path));
                        }
                    }
                    Outcome::Nothing => {}
                }
            }
            Ok((found, stats))
        };
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                std::thread::Builder::new()
                    .name("tether-search".into())
                    .stack_size(STACK_BYTES)
                    .spawn_scoped(scope, worker)
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or(Err(SearchError::WorkerFailed)),
                Err(_) => Err(SearchError::WorkerFailed),
            })
            .collect()
    });
    let mut all = Vec::new();
    let mut stats = SearchStats {
        literals: compiled.literals.clone(),
        ..SearchStats::default()
    };
    for r in results {
        let (found, s) = r?;
        all.extend(found);
        stats.add(&s);
    }
    all.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok((all, stats))
}

/// A counter of `pattern`'s sites in a text, for a staged rewrite accepted onto a file that
/// changed since. It parses and matches on a thread with a big stack, as searches do, and
/// counts nothing in a text nested deeper than [`MAX_TREE_DEPTH`].
pub(crate) fn recount(pattern: &str, lang: crate::Lang) -> tether_fs::Recount {
    let pattern = pattern.to_string();
    std::sync::Arc::new(move |text: &str| {
        std::thread::scope(|s| {
            let count = std::thread::Builder::new()
                .stack_size(crate::STACK_BYTES)
                .spawn_scoped(s, || {
                    let Ok(compiled) = crate::pattern::compile(&pattern, lang) else {
                        return 0;
                    };
                    let tree = lang.parse(text);
                    if crate::index::depth_of(&tree) > MAX_TREE_DEPTH {
                        return 0;
                    }
                    let root = tree.root();
                    root.dfs()
                        .filter(|n| compiled.match_node(n.clone()).is_some())
                        .count()
                });
            count.ok().and_then(|h| h.join().ok()).unwrap_or(0)
        })
    })
}

/// One file to search, and what to search it for.
struct File<'a> {
    path: &'a Path,
    compiled: &'a Compiled,
    mode: Mode<'a>,
    /// The pattern's metavariables, sorted.
    vars: &'a [&'a str],
}

fn search_file(
    file: &File<'_>,
    io: &Io<'_>,
    cache: &TreeCache,
    stats: &mut SearchStats,
    budget: &Budget<'_>,
) -> Result<Outcome, SearchError> {
    let File {
        path,
        compiled,
        mode,
        vars,
    } = *file;
    let Ok(mut opened) = (io.open)(path) else {
        stats.failed += 1;
        return Ok(Outcome::Nothing);
    };
    let size = opened.metadata().map(|m| m.len()).unwrap_or(0);
    if size > MAX_FILE_BYTES {
        stats.too_large += 1;
        return Ok(Outcome::Nothing);
    }
    let mut bytes = Vec::with_capacity(size as usize);
    if std::io::Read::read_to_end(&mut opened, &mut bytes).is_err() {
        stats.failed += 1;
        return Ok(Outcome::Nothing);
    }
    if bytes[..bytes.len().min(SNIFF_BYTES)].contains(&0) {
        stats.binary += 1;
        return Ok(Outcome::Nothing);
    }
    let Ok(text) = std::str::from_utf8(&bytes) else {
        stats.failed += 1;
        return Ok(Outcome::Nothing);
    };
    stats.searched += 1;
    // Once one fixed text is missing the file is out; the rest are looked for only while no
    // file has shown them yet, so a no-match hint can name the text found nowhere.
    let mut holds_all = true;
    for (lit, seen) in compiled.literals.iter().zip(stats.literal_seen.iter_mut()) {
        if !holds_all && *seen {
            continue;
        }
        if memchr::memmem::find(&bytes, lit.as_bytes()).is_some() {
            *seen = true;
        } else {
            holds_all = false;
        }
    }
    if !holds_all {
        stats.prefiltered += 1;
        return Ok(Outcome::Nothing);
    }
    let hash = hash_bytes(&bytes);
    let cached = cache.tree(path, text, hash, compiled.lang);
    if cached.depth > MAX_TREE_DEPTH {
        // Skipped, not searched: matching may recurse over any subtree of it.
        stats.searched -= 1;
        stats.too_deep += 1;
        return Ok(Outcome::Nothing);
    }
    let tree = &cached.tree;
    match cached.lookup {
        Lookup::Hit => stats.cached += 1,
        Lookup::Parsed => stats.parsed += 1,
    }
    let root = tree.root();
    if root.get_inner_node().has_error() {
        stats.syntax_errors += 1;
    }
    let kinds = compiled.kinds();
    let indexed = match (&cached.index, kinds.as_deref()) {
        (Some(index), Some(&[kind])) => index.nodes(tree, kind),
        _ => None,
    };
    let mut sink = Sink {
        mode,
        vars,
        text,
        budget,
        lines: None,
        matches: Vec::new(),
        total: 0,
        cursor: 0,
    };
    // The same candidates in the same order as `find_all`, with a look at the budget between.
    match indexed {
        Some(nodes) => {
            for (i, node) in nodes.into_iter().enumerate() {
                if i % CHECK_EVERY == 0 {
                    budget.check()?;
                }
                if let Some(nm) = compiled.match_node(node) {
                    sink.take(nm)?;
                }
            }
        }
        None => {
            for (i, node) in root.dfs().enumerate() {
                if i % CHECK_EVERY == 0 {
                    budget.check()?;
                }
                if let Some(k) = &kinds
                    && k.binary_search(&node.kind_id()).is_err()
                {
                    continue;
                }
                if let Some(nm) = compiled.match_node(node) {
                    sink.take(nm)?;
                }
            }
        }
    }
    if sink.total == 0 {
        // A macro's arguments are a token tree the grammar does not parse into code, so a
        // pattern never matches there: a near miss whose fixed text sits in one says why.
        if !compiled.literals.is_empty()
            && root.dfs().any(|node| {
                node.kind() == "token_tree" && {
                    let inside = node.text();
                    compiled
                        .literals
                        .iter()
                        .all(|l| inside.contains(l.as_str()))
                }
            })
        {
            stats.in_macro_arguments += 1;
        }
        return Ok(Outcome::NearMiss);
    }
    Ok(Outcome::Matched(FileMatches {
        rel: String::new(),
        hash,
        source: matches!(mode, Mode::Rewrite(_)).then(|| text.to_string()),
        matches: sink.matches,
        total: sink.total,
    }))
}

/// Collects one file's matches as they are found, in pre-order.
struct Sink<'a> {
    mode: Mode<'a>,
    vars: &'a [&'a str],
    text: &'a str,
    budget: &'a Budget<'a>,
    /// Line starts of `text`, built at the first rewrite.
    lines: Option<LineStarts>,
    matches: Vec<Match>,
    total: usize,
    /// Where the last replaced match ends: a match starting before it is inner.
    cursor: usize,
}

impl Sink<'_> {
    fn take(&mut self, nm: NodeMatch<'_, StrDoc<SupportLang>>) -> Result<(), SearchError> {
        self.total += 1;
        let range = nm.range();
        let line = nm.start_pos().line() + 1;
        match self.mode {
            Mode::Find { keep } => {
                if self.matches.len() < keep {
                    self.matches.push(Match {
                        range,
                        line,
                        excerpt: excerpt(&nm.text()),
                        captures: shown_captures(&nm, self.vars),
                        replacement: None,
                    });
                }
            }
            Mode::Rewrite(template) => {
                // Pre-order puts an outer match before the ones inside it; those are left for
                // a second pass and never rendered.
                if range.start < self.cursor {
                    return Ok(());
                }
                if self.matches.is_empty() {
                    self.budget.add_output(self.text.len())?;
                }
                let lines = self.lines.get_or_insert_with(|| LineStarts::new(self.text));
                let limit = self.budget.output_left() + range.len();
                let replacement =
                    template
                        .render(&nm, self.text, lines, limit)
                        .map_err(|e| match e {
                            RenderError::TooLarge => {
                                SearchError::Stopped(self.budget.stop(Stop::TooMuchOutput))
                            }
                            RenderError::Shape(shape) => SearchError::Shape {
                                file: String::new(),
                                shape,
                            },
                        })?;
                self.budget.replace_output(range.len(), replacement.len())?;
                self.cursor = range.end;
                self.matches.push(Match {
                    range,
                    line,
                    excerpt: String::new(),
                    captures: Vec::new(),
                    replacement: Some(replacement),
                });
            }
        }
        Ok(())
    }
}

/// The captures of a match as the result shows them: whitespace runs made one space, cut.
fn shown_captures(nm: &NodeMatch<'_, StrDoc<SupportLang>>, vars: &[&str]) -> Vec<(String, String)> {
    let env = nm.get_env();
    vars.iter()
        .map(|v| {
            if let Some(node) = env.get_match(v) {
                return (
                    format!("${v}"),
                    one_line_cut(&[&node.text()], CAPTURE_CHARS),
                );
            }
            let nodes: Vec<_> = env
                .get_multiple_matches(v)
                .into_iter()
                .filter(|n| n.is_named())
                .collect();
            let texts: Vec<_> = nodes.iter().map(|n| n.text()).collect();
            let mut pieces: Vec<&str> = Vec::with_capacity(texts.len() * 2);
            for (i, t) in texts.iter().enumerate() {
                if i > 0 {
                    pieces.push(", ");
                }
                pieces.push(t);
            }
            (format!("$$${v}"), one_line_cut(&pieces, CAPTURE_CHARS))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Limits;
    use crate::lang::Lang;
    use crate::pattern::compile;
    use crate::walk::files_for;
    use std::sync::atomic::AtomicBool;

    const FIND: Mode<'static> = Mode::Find { keep: usize::MAX };

    fn listing(found: &[FileMatches]) -> Vec<String> {
        found
            .iter()
            .flat_map(|f| {
                f.matches.iter().map(|m| {
                    format!(
                        "{}:{} {:?} {} {:?}",
                        f.rel, m.line, m.range, m.excerpt, m.captures
                    )
                })
            })
            .collect()
    }

    /// The prefilter and the kind index are shortcuts: on real code they must find exactly
    /// what a plain walk of every tree finds.
    fn assert_shortcuts_agree(dir: &Path, lang: &str, patterns: &[&str]) {
        let lang = Lang::by_id(lang).unwrap();
        let stop = AtomicBool::new(false);
        let budget = Budget::new(Limits::default(), &stop);
        let display = |p: &Path| p.display().to_string();
        let files = files_for(dir, lang, false, &display, &budget)
            .unwrap()
            .files;
        assert!(files.len() > 5, "too small a corpus in {}", dir.display());
        let open = |p: &Path| std::fs::File::open(p);
        let io = Io {
            display: &display,
            open: &open,
        };
        let warm = TreeCache::new(1 << 30);
        for p in patterns {
            let plain = compile(p, lang).unwrap().without_prefilter();
            let (reference, _) =
                search(&files, &plain, FIND, &TreeCache::new(0), &io, &budget).unwrap();
            let fast = compile(p, lang).unwrap();
            let (cold, _) = search(&files, &fast, FIND, &warm, &io, &budget).unwrap();
            let (hot, stats) = search(&files, &fast, FIND, &warm, &io, &budget).unwrap();
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
    fn shortcuts_agree_with_a_full_walk_on_this_repositorys_python() {
        let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
        assert_shortcuts_agree(
            &tests,
            "python",
            &[
                "raise $E($$$A)",
                "assert $A",
                "$X.append($Y)",
                "with $A as $B: $$$C",
                "if $C: $$$B",
                "for $A in $B: $$$C",
            ],
        );
    }

    /// A workspace with one file, searched with fresh (uncached) trees.
    fn search_one(
        name: &str,
        text: &str,
        pattern: &str,
        mode: Mode<'_>,
        limits: Limits,
    ) -> Result<(Vec<FileMatches>, SearchStats), SearchError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let lang = Lang::from_path(&path).unwrap();
        let compiled = std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(STACK_BYTES)
                .spawn_scoped(s, || compile(pattern, lang).unwrap())
                .unwrap()
                .join()
                .unwrap()
        });
        let stop = AtomicBool::new(false);
        let budget = Budget::new(limits, &stop);
        let display = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
        let open = |p: &Path| std::fs::File::open(p);
        let io = Io {
            display: &display,
            open: &open,
        };
        search(
            &[path],
            &compiled,
            mode,
            &TreeCache::new(1 << 30),
            &io,
            &budget,
        )
    }

    fn nested(n: usize, inner: &str) -> String {
        format!("{}{inner}{}", "(".repeat(n), ")".repeat(n))
    }

    #[test]
    fn files_nested_deeper_than_the_limit_are_skipped_and_counted() {
        // Comparing the two sides of `$A + $A` recursed once per level: on a 2 MiB stack this
        // file aborted the process.
        let side = nested(MAX_TREE_DEPTH + 10_000, "a");
        let text = format!("x = {side} + {side};\n");
        let (found, stats) =
            search_one("deep.js", &text, "$A + $A", FIND, Limits::default()).unwrap();
        assert!(found.is_empty());
        assert_eq!((stats.searched, stats.too_deep), (0, 1));
        // Just under the limit it is searched, on the workers' large stacks.
        let side = nested(MAX_TREE_DEPTH / 2 - 10, "a");
        let text = format!("x = {side} + {side};\n");
        let (found, stats) =
            search_one("deep.js", &text, "$A + $A", FIND, Limits::default()).unwrap();
        assert_eq!((found[0].total, stats.too_deep), (1, 0));
    }

    #[test]
    fn a_pattern_at_the_depth_limit_matches() {
        let code = nested(crate::budget::MAX_PATTERN_DEPTH, "x");
        let text = format!("y = {code};\n");
        let (found, _) = search_one("a.js", &text, &code, FIND, Limits::default()).unwrap();
        assert_eq!(found[0].total, 1);
    }

    #[test]
    fn nested_matches_cost_a_count_not_a_copy() {
        // Every `($X)` here contains the next: the texts of all matches add up to the square
        // of the file. Only what can be shown is kept, each part cut.
        let text = format!("x = {};\n", nested(3_000, "a"));
        let keep = Mode::Find { keep: 50 };
        let (found, _) = search_one("n.js", &text, "($X)", keep, Limits::default()).unwrap();
        let file = &found[0];
        assert_eq!((file.total, file.matches.len()), (3_000, 50));
        assert_eq!(file.matches[0].range, 4..text.len() - 2);
        for m in &file.matches {
            assert!(m.excerpt.chars().count() < 340, "{}", m.excerpt);
            assert!(m.captures[0].1.chars().count() < 150, "{:?}", m.captures);
        }
    }

    #[test]
    fn a_rewrite_renders_only_outer_matches_within_its_output_budget() {
        let text = format!("x = {};\ny = (b);\n", nested(2_000, "a"));
        let template = Template::parse("[$X]", &["X"].into_iter().collect()).unwrap();
        let mode = Mode::Rewrite(&template);
        let (found, _) = search_one("n.js", &text, "($X)", mode, Limits::default()).unwrap();
        let file = &found[0];
        assert_eq!((file.total, file.matches.len()), (2_001, 2));
        let replaced: Vec<_> = file.matches.iter().map(|m| m.replacement.clone()).collect();
        let outer = format!("[{}]", nested(1_999, "a"));
        assert_eq!(replaced, [Some(outer), Some("[b]".to_string())]);
        let doubled = Template::parse("[$X, $X]", &["X"].into_iter().collect()).unwrap();
        let small = Limits {
            rewrite_bytes: text.len() + 10,
            ..Limits::default()
        };
        let too_much = search_one("n.js", &text, "($X)", Mode::Rewrite(&doubled), small).err();
        assert_eq!(too_much, Some(SearchError::Stopped(Stop::TooMuchOutput)));
    }

    #[test]
    fn a_spent_budget_stops_the_search_with_no_partial_result() {
        let text = "f(1);\n".repeat(1000);
        let none = Limits {
            time: std::time::Duration::ZERO,
            ..Limits::default()
        };
        let r = search_one("a.js", &text, "f($A)", FIND, none).err();
        assert_eq!(r, Some(SearchError::Stopped(Stop::OutOfTime)));
        let stop = AtomicBool::new(true);
        let budget = Budget::new(Limits::default(), &stop);
        let dir = tempfile::tempdir().unwrap();
        let lang = Lang::by_id("javascript").unwrap();
        let display = |p: &Path| p.display().to_string();
        let listed = files_for(dir.path(), lang, false, &display, &budget);
        assert_eq!(listed.err(), Some(Stop::Cancelled));
    }

    #[test]
    fn a_near_miss_whose_text_sits_in_a_macro_call_is_counted() {
        let text = "fn t() {\n    assert!(a.len() == 3);\n}\n";
        let (found, stats) =
            search_one("m.rs", text, "$X.len() == 3", FIND, Limits::default()).unwrap();
        assert!(found.is_empty());
        assert_eq!((stats.near_misses, stats.in_macro_arguments), (1, 1));
        let hint = crate::footer::no_match_hint(&stats).unwrap();
        assert!(hint.contains("inside a macro call's arguments"), "{hint}");
        // Outside a macro, the same text is code and matches.
        let (found, _) = search_one(
            "m.rs",
            "fn t() { let ok = a.len() == 3; }\n",
            "$X.len() == 3",
            FIND,
            Limits::default(),
        )
        .unwrap();
        assert_eq!(found[0].total, 1);
    }
}
