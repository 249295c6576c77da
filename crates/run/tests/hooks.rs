//! Write hooks in the pipeline: each write's baseline goes to its own report, and each
//! phase is cut off at the hook's own budget without losing the write.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tether_fs::{FileReceipt, WritePath};
use tether_tool::{Baseline, BoxFuture, FileReport, HookBudgets, Surface, WriteHook};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

mod common;
use common::Put;

/// Numbers each baseline and reports the number its `after` got back; the report for baseline
/// 0 waits until baseline 1 is taken, so the two writes overlap however they are scheduled.
#[derive(Default)]
struct Pairing {
    taken: AtomicUsize,
    took: [Notify; 2],
}
impl WriteHook for Pairing {
    fn name(&self) -> &str {
        "pairing"
    }
    fn before<'a>(&'a self, _: &'a [WritePath]) -> BoxFuture<'a, Baseline> {
        let n = self.taken.fetch_add(1, Ordering::SeqCst);
        if let Some(took) = self.took.get(n) {
            took.notify_one();
        }
        Box::pin(async move { Box::new(n) as Baseline })
    }
    fn after<'a>(
        &'a self,
        baseline: Option<Baseline>,
        receipts: &'a [FileReceipt],
    ) -> BoxFuture<'a, Vec<FileReport>> {
        Box::pin(async move {
            let n = baseline.map(|b| *b.downcast::<usize>().unwrap());
            // The gate is free now, so the next write takes its baseline meanwhile (a gate still
            // held would keep it out until this report's 30 s budget cut the report off).
            if n == Some(0) {
                self.took[1].notified().await;
            }
            vec![common::note(
                "pairing",
                receipts[0].path.rel(),
                format!("baseline {n:?}"),
            )]
        })
    }
}

#[tokio::test]
async fn overlapping_writes_each_get_their_own_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let pairing = Arc::new(Pairing::default());
    let mut parts = common::parts(dir.path(), vec![pairing.clone()]);
    parts.register(Put);
    let registry = parts.build();
    let put = |path: &'static str| {
        let registry = registry.clone();
        async move {
            let args = json!({"path": path, "text": "x"});
            let out = registry.call(Surface::Agent, "put", args, CancellationToken::new());
            out.await.unwrap().to_text()
        }
    };
    let first = tokio::spawn(put("one.txt"));
    pairing.took[0].notified().await;
    let second = tokio::spawn(put("two.txt"));
    let (first, second) = (first.await.unwrap(), second.await.unwrap());
    assert!(first.contains("baseline Some(0)"), "{first}");
    assert!(second.contains("baseline Some(1)"), "{second}");
}

/// A hook that takes `before_takes` for its baseline and `after_takes` for its report, with
/// budgets of 100 ms each; it says whether it got its baseline back.
struct Tardy {
    name: &'static str,
    before_takes: Duration,
    after_takes: Duration,
}
impl WriteHook for Tardy {
    fn name(&self) -> &str {
        self.name
    }
    fn budgets(&self) -> HookBudgets {
        HookBudgets {
            before: Duration::from_millis(100),
            after: Duration::from_millis(100),
        }
    }
    fn before<'a>(&'a self, _: &'a [WritePath]) -> BoxFuture<'a, Baseline> {
        Box::pin(async move {
            tokio::time::sleep(self.before_takes).await;
            Box::new(()) as Baseline
        })
    }
    fn after<'a>(
        &'a self,
        baseline: Option<Baseline>,
        receipts: &'a [FileReceipt],
    ) -> BoxFuture<'a, Vec<FileReport>> {
        Box::pin(async move {
            tokio::time::sleep(self.after_takes).await;
            let said = match baseline {
                Some(_) => "compared with its baseline",
                None => "no baseline, so nothing is called new",
            };
            vec![common::note(self.name, receipts[0].path.rel(), said.into())]
        })
    }
}

// Paused time: each hook's sleep meets its 100 ms budget exactly, however loaded the machine.
#[tokio::test(start_paused = true)]
async fn each_hook_phase_is_cut_off_at_that_hooks_own_budget() {
    let dir = tempfile::tempdir().unwrap();
    let (quick, slow) = (Duration::from_millis(10), Duration::from_secs(5));
    let hooks: Vec<Arc<dyn WriteHook>> = vec![
        Arc::new(Tardy {
            name: "prompt",
            before_takes: quick,
            after_takes: quick,
        }),
        Arc::new(Tardy {
            name: "late-baseline",
            before_takes: slow,
            after_takes: quick,
        }),
        Arc::new(Tardy {
            name: "late-report",
            before_takes: quick,
            after_takes: slow,
        }),
    ];
    let mut parts = common::parts(dir.path(), hooks);
    parts.register(Put);
    let runtime = parts.build();
    let started = tokio::time::Instant::now();
    let args = json!({"path": "a.txt", "text": "x"});
    let out = runtime
        .call(Surface::Agent, "put", args, CancellationToken::new())
        .await
        .unwrap()
        .to_text();
    // Virtual time: a call that waited for a 5 s hook would show those 5 s, load or no load.
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "a slow hook held the call"
    );
    assert!(
        out.contains("prompt after this write:\n  a.txt: pending (compared with its baseline)"),
        "{out}"
    );
    assert!(
        out.contains("a.txt: pending (no baseline, so nothing is called new)"),
        "{out}"
    );
    assert!(
        out.contains(
            "late-report after this write:\n  a.txt: unavailable (no report within 0.1 s; the \
             write itself succeeded)"
        ),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "x"
    );
}
