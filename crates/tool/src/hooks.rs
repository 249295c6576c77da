use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use tether_fs::{FileReceipt, WritePath};

use crate::BoxFuture;
use crate::report::{FileReport, FileStatus};

/// What a hook's `before` saw, handed back to the `after` of that same write.
pub type Baseline = Box<dyn Any + Send + Sync>;

/// What a hook holds for the length of one write, from just before its baseline until its
/// report is done; dropping it is the release, so a write that fails, changes nothing or
/// whose baseline timed out still lets go.
pub type Hold = Box<dyn Any + Send + Sync>;

/// How long a hook's two phases may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookBudgets {
    /// For the baseline, taken while the write waits.
    pub before: Duration,
    /// For the report, after the gate is released.
    pub after: Duration,
}

impl Default for HookBudgets {
    /// 2 s for a baseline, 30 s for a report.
    fn default() -> Self {
        HookBudgets {
            before: Duration::from_secs(2),
            after: Duration::from_secs(30),
        }
    }
}

/// One file as a change not yet written would leave it, for [`WriteHook::preview`].
#[derive(Debug, Clone)]
pub struct Proposed {
    /// The file.
    pub path: WritePath,
    /// Its whole new text; `None` when the change deletes it or its bytes are not UTF-8.
    pub text: Option<String>,
    /// Whether the change deletes it (a move deletes its old path).
    pub deleted: bool,
}

/// A two-phase observer of writes: diagnostics-on-write and the syntax check are such hooks.
/// `before` takes a baseline while the write waits; `after` gets that same baseline back with
/// the write's receipts, so two overlapping writes never share or overwrite one.
pub trait WriteHook: Send + Sync {
    /// A short name for logs and for the "timed out" line.
    fn name(&self) -> &str;
    /// This hook's budgets (a cold language server needs longer than the default).
    fn budgets(&self) -> HookBudgets {
        HookBudgets::default()
    }
    /// Claims `paths` for one write, at once, before any baseline (the outside-edit watch must
    /// not take the write for someone else's); released when the write's report is done or
    /// the write is given up.
    fn hold(&self, _paths: &[WritePath]) -> Option<Hold> {
        None
    }
    /// Takes a baseline of `paths` just before they are written. Bounded by `budgets().before`.
    fn before<'a>(&'a self, paths: &'a [WritePath]) -> BoxFuture<'a, Baseline>;
    /// Inspects what was written and reports on each file it has a word about (nothing for a
    /// file clean before and after). `baseline` is `None` when `before` missed its budget: the
    /// hook must then say it cannot tell new problems from old, never report old ones as new.
    fn after<'a>(
        &'a self,
        baseline: Option<Baseline>,
        receipts: &'a [FileReceipt],
    ) -> BoxFuture<'a, Vec<FileReport>>;
    /// [`WriteHook::after`] for the run's write number `number` (1 for its first committed
    /// write), for a hook whose later notices name the write as its result did.
    fn after_write<'a>(
        &'a self,
        number: u64,
        baseline: Option<Baseline>,
        receipts: &'a [FileReceipt],
    ) -> BoxFuture<'a, Vec<FileReport>> {
        let _ = number;
        self.after(baseline, receipts)
    }
    /// What `changes` would bring if they were written, judged as [`WriteHook::after`] judges
    /// a write but on the proposed texts, with nothing written and nothing recorded. A hook
    /// that cannot look at unwritten text says nothing (the default).
    fn preview<'a>(&'a self, changes: &'a [Proposed]) -> BoxFuture<'a, Vec<FileReport>> {
        let _ = changes;
        Box::pin(async { Vec::new() })
    }
}

/// Every hook's baseline for one write, in hook order, with what each holds for it.
pub struct Baselines(Vec<(Option<Baseline>, Option<Hold>)>);

/// The run's write hooks; cheap to clone.
#[derive(Clone, Default)]
pub struct WriteHooks {
    hooks: Arc<Vec<Arc<dyn WriteHook>>>,
    /// Committed writes so far: the numbers results and notices name them by.
    committed: Arc<std::sync::atomic::AtomicU64>,
}

impl WriteHooks {
    /// The run's hooks, each with its own budgets.
    pub fn new(hooks: Vec<Arc<dyn WriteHook>>) -> Self {
        WriteHooks {
            hooks: Arc::new(hooks),
            committed: Arc::default(),
        }
    }

    /// Numbers one committed write: only writes that landed are counted, so the numbers a
    /// model sees run without gaps.
    pub fn next_number(&self) -> u64 {
        self.committed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1
    }

    /// Whether any hook is installed.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Baselines that know nothing from before (an edit whose start went unseen), so each
    /// hook labels what it finds as having no baseline, never as new or as old.
    pub fn unknown(&self) -> Baselines {
        Baselines(self.hooks.iter().map(|_| (None, None)).collect())
    }

    /// Runs every `before` concurrently, each cut off at its own budget.
    pub async fn run_before(&self, paths: &[WritePath]) -> Baselines {
        let holds: Vec<Option<Hold>> = self.hooks.iter().map(|h| h.hold(paths)).collect();
        let runs = self.hooks.iter().map(|hook| async move {
            let budget = hook.budgets().before;
            match tokio::time::timeout(budget, hook.before(paths)).await {
                Ok(b) => Some(b),
                Err(_) => {
                    tracing::warn!(hook = hook.name(), "write hook baseline timed out");
                    None
                }
            }
        });
        let baselines = futures::future::join_all(runs).await;
        Baselines(baselines.into_iter().zip(holds).collect())
    }

    /// Runs every hook's [`WriteHook::preview`] concurrently, each cut off at its report
    /// budget, and collects their reports in hook order.
    pub async fn run_preview(&self, changes: &[Proposed]) -> Vec<FileReport> {
        if changes.is_empty() {
            return Vec::new();
        }
        let runs = self.hooks.iter().map(|hook| async move {
            // A preview waits for its server, looks before and after, and gives the server
            // its text back.
            let budget = hook.budgets().before + hook.budgets().after * 2;
            match tokio::time::timeout(budget, hook.preview(changes)).await {
                Ok(reports) => reports,
                Err(_) => {
                    let why = format!("no preview within {} s", budget.as_secs_f64());
                    let paths = changes.iter().map(|c| &c.path);
                    unanswered(hook.as_ref(), paths, &why)
                }
            }
        });
        futures::future::join_all(runs)
            .await
            .into_iter()
            .flatten()
            .collect()
    }

    /// Runs every `after` concurrently with its own baseline and collects their reports, in
    /// hook order; a hook past its budget is reported unavailable for every file.
    pub async fn run_after(
        &self,
        number: u64,
        baselines: Baselines,
        receipts: &[FileReceipt],
    ) -> Vec<FileReport> {
        if receipts.is_empty() {
            return Vec::new();
        }
        let mut baselines = baselines.0.into_iter();
        let runs = self.hooks.iter().map(|hook| {
            let (baseline, hold) = baselines.next().unwrap_or((None, None));
            async move {
                let budget = hook.budgets().after;
                let report =
                    tokio::time::timeout(budget, hook.after_write(number, baseline, receipts))
                        .await;
                drop(hold);
                match report {
                    Ok(reports) => reports,
                    Err(_) => {
                        let why = format!(
                            "no report within {} s; the write itself succeeded",
                            budget.as_secs_f64()
                        );
                        unanswered(hook.as_ref(), receipts.iter().map(|r| &r.path), &why)
                    }
                }
            }
        });
        futures::future::join_all(runs)
            .await
            .into_iter()
            .flatten()
            .collect()
    }
}

/// A report per file saying `hook` gave none in time, and `why`.
fn unanswered<'a>(
    hook: &dyn WriteHook,
    paths: impl Iterator<Item = &'a WritePath>,
    why: &str,
) -> Vec<FileReport> {
    paths
        .map(|path| FileReport {
            path: path.rel().to_string(),
            scope: crate::ReportScope::Changed,
            source: crate::ReportSource::hook(hook.name()),
            noun: "problem".into(),
            status: FileStatus::Unavailable {
                why: why.to_string(),
                now: Vec::new(),
            },
        })
        .collect()
}
