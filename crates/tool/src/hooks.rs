use std::sync::Arc;
use std::time::Duration;

use tether_fs::{FileReceipt, WritePath};

use crate::BoxFuture;

/// A two-phase observer of writes: diagnostics-on-write and the syntax check are such hooks.
/// `before` takes a baseline while the write waits; `after` reports once the gate is released.
pub trait WriteHook: Send + Sync {
    /// A short name for logs and for the "timed out" line.
    fn name(&self) -> &str;
    /// Takes a baseline of `paths` just before they are written. Bounded by the caller.
    fn before<'a>(&'a self, paths: &'a [WritePath]) -> BoxFuture<'a, ()>;
    /// Inspects what was written; returns text to fold into the tool's result, if any.
    fn after<'a>(&'a self, receipts: &'a [FileReceipt]) -> BoxFuture<'a, Option<String>>;
}

/// The run's write hooks with their time budgets; cheap to clone.
#[derive(Clone)]
pub struct WriteHooks {
    hooks: Arc<Vec<Arc<dyn WriteHook>>>,
    before_budget: Duration,
    after_budget: Duration,
}

impl Default for WriteHooks {
    fn default() -> Self {
        WriteHooks::new(Vec::new())
    }
}

impl WriteHooks {
    /// Hooks with the default budgets: 2 s for each baseline, 30 s for each report.
    pub fn new(hooks: Vec<Arc<dyn WriteHook>>) -> Self {
        WriteHooks {
            hooks: Arc::new(hooks),
            before_budget: Duration::from_secs(2),
            after_budget: Duration::from_secs(30),
        }
    }

    /// Overrides the budgets.
    pub fn with_budgets(mut self, before: Duration, after: Duration) -> Self {
        self.before_budget = before;
        self.after_budget = after;
        self
    }

    /// Whether any hook is installed.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Runs every `before` concurrently, each cut off at the baseline budget.
    pub async fn run_before(&self, paths: &[WritePath]) {
        let budget = self.before_budget;
        let runs = self.hooks.iter().map(|hook| async move {
            if tokio::time::timeout(budget, hook.before(paths))
                .await
                .is_err()
            {
                tracing::warn!(hook = hook.name(), "write hook baseline timed out");
            }
        });
        futures::future::join_all(runs).await;
    }

    /// Runs every `after` concurrently and collects their reports, in hook order.
    pub async fn run_after(&self, receipts: &[FileReceipt]) -> Vec<String> {
        if receipts.is_empty() {
            return Vec::new();
        }
        let budget = self.after_budget;
        let runs = self.hooks.iter().map(|hook| async move {
            match tokio::time::timeout(budget, hook.after(receipts)).await {
                Ok(report) => report,
                Err(_) => Some(format!(
                    "{}: no report within {} s; the write itself succeeded",
                    hook.name(),
                    budget.as_secs()
                )),
            }
        });
        futures::future::join_all(runs)
            .await
            .into_iter()
            .flatten()
            .collect()
    }
}
