//! Resources that several runs may share. A run alone gets a pool of its own; a warm host
//! hands one pool to every run it serves, so its runs share one language server per project.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::BoxFuture;
use tether_base::lock;

/// A resource a pool keeps until the pool ends; `stop` is how it ends politely.
pub trait Pooled: Send + Sync + 'static {
    /// Stops what the resource started, within `budget`.
    fn stop(&self, budget: Duration) -> BoxFuture<'_, ()>;
    /// One line for a host's status, such as `rust-analyzer for . (running)`.
    fn describe(&self) -> BoxFuture<'_, Vec<String>> {
        Box::pin(async { Vec::new() })
    }
}

type Entry = (Arc<dyn Any + Send + Sync>, Arc<dyn Pooled>);

/// Shared resources by kind and key.
#[derive(Default)]
pub struct Pool {
    outlives_runs: bool,
    entries: Mutex<HashMap<(TypeId, String), Entry>>,
}

impl Pool {
    /// A pool for a host: it outlives each run, so a run's end must not stop what it holds.
    pub fn for_host() -> Self {
        Pool {
            outlives_runs: true,
            entries: Mutex::default(),
        }
    }

    /// Whether the pool outlives the runs that use it (then only the pool's owner stops its
    /// resources, never one run's shutdown).
    pub fn outlives_runs(&self) -> bool {
        self.outlives_runs
    }

    /// The resource of kind `T` under `key`, made by `make` the first time it is asked for.
    pub fn get_or_insert<T: Pooled>(&self, key: &str, make: impl FnOnce() -> T) -> Arc<T> {
        let mut entries = lock(&self.entries);
        let slot = (TypeId::of::<T>(), key.to_string());
        if let Some((any, _)) = entries.get(&slot)
            && let Ok(found) = any.clone().downcast::<T>()
        {
            return found;
        }
        let made = Arc::new(make());
        entries.insert(slot, (made.clone(), made.clone()));
        made
    }

    /// How many resources it holds.
    pub fn len(&self) -> usize {
        lock(&self.entries).len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What each resource says of itself, for a host's status.
    pub async fn describe(&self) -> Vec<String> {
        let all: Vec<Arc<dyn Pooled>> = lock(&self.entries)
            .values()
            .map(|(_, p)| p.clone())
            .collect();
        let mut lines = Vec::new();
        for p in all {
            lines.extend(p.describe().await);
        }
        lines
    }

    /// Stops every resource it holds, all at once, each within `budget`, and forgets them.
    pub async fn stop(&self, budget: Duration) {
        let all: Vec<Arc<dyn Pooled>> = lock(&self.entries).drain().map(|(_, (_, p))| p).collect();
        let stops = all.iter().map(|p| async move {
            let _ = tokio::time::timeout(budget, p.stop(budget)).await;
        });
        futures::future::join_all(stops).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Counter(std::sync::atomic::AtomicUsize);

    impl Pooled for Counter {
        fn stop(&self, _budget: Duration) -> BoxFuture<'_, ()> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async {})
        }
    }

    #[tokio::test]
    async fn one_resource_per_kind_and_key_until_stopped() {
        let pool = Pool::for_host();
        let made = std::sync::atomic::AtomicUsize::new(0);
        let make = || {
            made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Counter(Default::default())
        };
        let a = pool.get_or_insert("root", make);
        let b = pool.get_or_insert("root", || Counter(Default::default()));
        assert!(Arc::ptr_eq(&a, &b), "the same key gives the same resource");
        let c = pool.get_or_insert("other", || Counter(Default::default()));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(made.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(pool.len(), 2);
        pool.stop(Duration::from_secs(1)).await;
        assert_eq!(a.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(pool.is_empty());
    }
}
