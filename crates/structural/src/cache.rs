//! Parsed trees kept for the run, validated by a hash of the file's bytes on every use (files
//! change behind our back), bounded in memory and evicted least-recently-used first. A search
//! never evicts what it or the search before it used: on a tree larger than the cache, plain
//! LRU would evict each file just before the next search needs it (the walk is parallel, so
//! its order changes), and a warm search would be slower than a cold one (it parsed every
//! file again and indexed each for nothing).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tether_base::lock;

use tether_fs::ContentHash;

use crate::index::{KindIndex, depth_of};
use crate::lang::{Lang, Tree};

/// Bytes one tree-sitter node costs the process, used to bound the cache without allocator
/// hooks: the RSS a run grew by per node kept, beyond text and index, was 97 to 120 on Django,
/// cargo, effect, x/tools and Linux's fs/btrfs (40, the guess before, let a host take 2.2 to
/// 2.6 times its cap).
const BYTES_PER_NODE: usize = 120;

struct Entry {
    hash: ContentHash,
    lang: &'static str,
    tree: Arc<Tree>,
    index: Arc<KindIndex>,
    cost: usize,
    tick: u64,
}

#[derive(Default)]
struct Inner {
    map: HashMap<PathBuf, Entry>,
    by_age: BTreeMap<u64, PathBuf>,
    used: usize,
    tick: u64,
    /// The tick when the latest search began, and the bytes of the entries that search has
    /// used so far: only older entries may make room for a new one.
    search_began: u64,
    used_by_search: usize,
    /// The tick when the search before the latest began: entries used since are kept.
    previous_began: u64,
}

/// The run's tree cache. Cheap to share behind an `Arc`.
pub struct TreeCache {
    inner: Mutex<Inner>,
    budget: usize,
}

/// A tree as the search sees it: the parse, its depth, and its kind index when it is cached.
pub(crate) struct Cached {
    pub(crate) tree: Arc<Tree>,
    pub(crate) index: Option<Arc<KindIndex>>,
    /// The deepest level of the tree (the root is level 0).
    pub(crate) depth: usize,
    pub(crate) lookup: Lookup,
}

/// How a lookup went, for the search summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// The cached tree matched the file's current hash.
    Hit,
    /// Parsed now (absent, stale, or evicted).
    Parsed,
}

impl TreeCache {
    /// A cache holding at most about `budget_bytes` of trees and sources.
    pub fn new(budget_bytes: usize) -> Self {
        TreeCache {
            inner: Mutex::new(Inner::default()),
            budget: budget_bytes,
        }
    }

    /// Marks the start of a search: what it uses from now on is kept over what it does not.
    pub(crate) fn begin_search(&self) {
        let mut inner = self.lock();
        inner.previous_began = inner.search_began;
        inner.search_began = inner.tick;
        inner.used_by_search = 0;
    }

    /// The tree for `path` as it is now: the cached one if its hash still matches, else a
    /// fresh parse (cached if it fits the budget).
    pub(crate) fn tree(&self, path: &Path, text: &str, hash: ContentHash, lang: Lang) -> Cached {
        {
            let mut inner = self.lock();
            inner.tick += 1;
            let tick = inner.tick;
            let Inner {
                map,
                by_age,
                search_began,
                used_by_search,
                ..
            } = &mut *inner;
            if let Some(entry) = map.get_mut(path)
                && entry.hash == hash
                && entry.lang == lang.id()
            {
                if entry.tick <= *search_began {
                    *used_by_search += entry.cost;
                }
                by_age.remove(&entry.tick);
                by_age.insert(tick, path.to_path_buf());
                entry.tick = tick;
                return Cached {
                    tree: entry.tree.clone(),
                    depth: entry.index.depth(),
                    index: Some(entry.index.clone()),
                    lookup: Lookup::Hit,
                };
            }
        }
        let tree = Arc::new(lang.parse(text));
        let nodes = tree.root().get_inner_node().descendant_count();
        let cost = text.len() + nodes * BYTES_PER_NODE;
        let mut inner = self.lock();
        if let Some(old) = inner.map.remove(path) {
            inner.by_age.remove(&old.tick);
            inner.used -= old.cost;
        }
        let full = |inner: &Inner| {
            let oldest_kept = inner
                .by_age
                .first_key_value()
                .is_some_and(|(tick, _)| *tick > inner.previous_began);
            inner.used + cost > self.budget && oldest_kept
        };
        if inner.used_by_search + cost > self.budget || full(&inner) {
            // Not kept (a one-call run, a tree larger than the budget, or no room left but
            // what this search and the one before used): no index either.
            drop(inner);
            return Cached {
                depth: depth_of(&tree),
                tree,
                index: None,
                lookup: Lookup::Parsed,
            };
        }
        drop(inner);
        let index = Arc::new(KindIndex::build(&tree));
        let cost = cost + index.bytes();
        self.insert(path, hash, lang, tree.clone(), index.clone(), cost);
        Cached {
            tree,
            depth: index.depth(),
            index: Some(index),
            lookup: Lookup::Parsed,
        }
    }

    fn insert(
        &self,
        path: &Path,
        hash: ContentHash,
        lang: Lang,
        tree: Arc<Tree>,
        index: Arc<KindIndex>,
        cost: usize,
    ) {
        let mut inner = self.lock();
        if let Some(old) = inner.map.remove(path) {
            inner.by_age.remove(&old.tick);
            inner.used -= old.cost;
        }
        if inner.used_by_search + cost > self.budget {
            return;
        }
        while inner.used + cost > self.budget {
            match inner.by_age.first_key_value() {
                Some((tick, _)) if *tick <= inner.previous_began => {}
                // All that is left was used by this search or the one before.
                Some(_) => return,
                None => break,
            }
            let Some((_, oldest)) = inner.by_age.pop_first() else {
                break;
            };
            if let Some(old) = inner.map.remove(&oldest) {
                inner.used -= old.cost;
            }
        }
        inner.used_by_search += cost;
        inner.tick += 1;
        let tick = inner.tick;
        inner.by_age.insert(tick, path.to_path_buf());
        inner.used += cost;
        inner.map.insert(
            path.to_path_buf(),
            Entry {
                hash,
                lang: lang.id(),
                tree,
                index,
                cost,
                tick,
            },
        );
    }

    /// Entries held and their estimated bytes.
    pub fn usage(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.map.len(), inner.used)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        lock(&self.inner)
    }
}

/// A host's runs share one cache; it holds only memory, which goes with the pool.
impl tether_tool::Pooled for TreeCache {
    fn stop(&self, _budget: std::time::Duration) -> tether_tool::BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_fs::hash_bytes;

    #[test]
    fn stale_entries_are_never_served() {
        let cache = TreeCache::new(1 << 20);
        let lang = Lang::by_id("python").unwrap();
        let p = Path::new("/x/a.py");
        let c = cache.tree(p, "a = 1\n", hash_bytes(b"a = 1\n"), lang);
        assert_eq!(c.lookup, Lookup::Parsed);
        let c = cache.tree(p, "a = 1\n", hash_bytes(b"a = 1\n"), lang);
        assert_eq!(c.lookup, Lookup::Hit);
        let c = cache.tree(p, "b = 2\n", hash_bytes(b"b = 2\n"), lang);
        assert_eq!(c.lookup, Lookup::Parsed);
        assert_eq!(c.tree.root().text(), "b = 2\n");
        assert_eq!(cache.usage().0, 1);
    }

    /// A small tree's language, text and hash, and what one costs the cache.
    fn one_tree() -> (Lang, &'static str, ContentHash, usize) {
        let lang = Lang::by_id("python").unwrap();
        let text = "x = [1, 2, 3]\n";
        let h = hash_bytes(text.as_bytes());
        let probe = TreeCache::new(1 << 20);
        probe.tree(Path::new("/probe"), text, h, lang);
        (lang, text, h, probe.usage().1)
    }

    #[test]
    fn a_search_larger_than_the_cache_keeps_what_it_cached_for_the_next() {
        let (lang, text, h, one) = one_tree();
        let cache = TreeCache::new(one * 3 + one / 2);
        let files: Vec<PathBuf> = (0..10).map(|i| PathBuf::from(format!("/f{i}"))).collect();
        let hits = |cache: &TreeCache| {
            cache.begin_search();
            files
                .iter()
                .filter(|f| cache.tree(f, text, h, lang).lookup == Lookup::Hit)
                .count()
        };
        assert_eq!(hits(&cache), 0);
        // The same walk again finds the three files the first one kept (plain LRU: none).
        assert_eq!(hits(&cache), 3);
        assert_eq!(hits(&cache), 3);
    }

    /// A parallel walk visits files in another order each time: the files a search misses
    /// must not evict, one by one, the cached ones it is about to ask for.
    #[test]
    fn a_walk_in_another_order_still_finds_what_the_last_one_cached() {
        let (lang, text, h, one) = one_tree();
        let cache = TreeCache::new(one * 3 + one / 2);
        let files: Vec<PathBuf> = (0..10).map(|i| PathBuf::from(format!("/f{i}"))).collect();
        let hits = |cache: &TreeCache, order: &mut dyn Iterator<Item = &PathBuf>| {
            cache.begin_search();
            order
                .filter(|f| cache.tree(f, text, h, lang).lookup == Lookup::Hit)
                .count()
        };
        assert_eq!(hits(&cache, &mut files.iter()), 0);
        assert_eq!(hits(&cache, &mut files.iter().rev()), 3);
        assert_eq!(hits(&cache, &mut files.iter()), 3);
    }

    #[test]
    fn the_budget_evicts_least_recently_used() {
        let (lang, text, h, one) = one_tree();
        let cache = TreeCache::new(one * 2 + one / 2);
        // Each lookup is a search of its own.
        let look = |path: &str| {
            cache.begin_search();
            cache.tree(Path::new(path), text, h, lang).lookup
        };
        look("/a");
        look("/b");
        look("/a"); // a is now the most recent
        look("/c"); // evicts b
        assert_eq!(cache.usage().0, 2);
        assert_eq!(look("/a"), Lookup::Hit);
        assert_eq!(look("/b"), Lookup::Parsed);
    }
}
