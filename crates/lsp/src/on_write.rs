//! Diagnostics on write: after each write, the servers that already run for the written files
//! are given the new text and asked for that text's diagnostics, and the result names what
//! this write broke, against a per-run ledger keyed without positions (a problem that only
//! moved is not new). Waits are bounded; a write is never delayed past its budget or undone.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tether_fs::{FileReceipt, WritePath};
use tether_tool::{Baseline, BoxFuture, FileReport, FileStatus, Finding, HookBudgets, WriteHook};

use crate::catalog::language_of;
use crate::render::cut;
use crate::supervisor::Supervisor;

/// The write hook that reports the diagnostics a write introduced.
pub struct DiagnosticsOnWrite {
    pub(crate) servers: Arc<Supervisor>,
    /// Each file's findings after the last complete answer for it, this run.
    pub(crate) ledger: Mutex<HashMap<PathBuf, Vec<Finding>>>,
    /// How long a baseline may take, before the write.
    pub(crate) baseline: Duration,
    /// How long the answer after the write may take.
    pub(crate) wait: Duration,
}

/// Per written file, what its server said before the write (`None`: it could not say).
type Before = HashMap<PathBuf, Option<Vec<Finding>>>;

/// Errors and warnings as findings keyed by (severity, code, message); the same problem at
/// the same place from two sources counts once.
fn findings(items: &[Value]) -> Vec<Finding> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for d in items {
        let severity = match d["severity"].as_u64().unwrap_or(1) {
            1 => "error",
            2 => "warning",
            _ => continue,
        };
        let start = &d["range"]["start"];
        let place = (
            start["line"].as_u64(),
            start["character"].as_u64(),
            severity,
        );
        if !seen.insert(place) {
            continue;
        }
        let code = match &d["code"] {
            Value::String(c) => format!(" [{c}]"),
            Value::Number(n) => format!(" [{n}]"),
            _ => String::new(),
        };
        let message = d["message"].as_str().unwrap_or("").replace('\n', " ");
        let text = format!("{severity}{code} {}", cut(message.trim(), 300));
        out.push(Finding {
            line: start["line"].as_u64().unwrap_or(0) as usize + 1,
            key: text.clone(),
            text,
        });
    }
    out.sort_by_key(|f| f.line);
    out
}

impl DiagnosticsOnWrite {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Vec<Finding>>> {
        self.ledger.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl WriteHook for DiagnosticsOnWrite {
    fn name(&self) -> &str {
        "diagnostics"
    }

    fn budgets(&self) -> HookBudgets {
        // Each phase bounds its own waits; these are the outer guards.
        HookBudgets {
            before: self.baseline + Duration::from_millis(500),
            after: self.wait + Duration::from_secs(1),
        }
    }

    fn before<'a>(&'a self, paths: &'a [WritePath]) -> BoxFuture<'a, Baseline> {
        Box::pin(async move {
            let mut before = Before::new();
            for path in paths {
                let abs = path.abs();
                let Some(lang) = language_of(abs) else {
                    continue;
                };
                let Some(server) = self.servers.running_for(lang, abs).await else {
                    continue;
                };
                // The run's own ledger already knows this file; otherwise ask the server now.
                if let Some(known) = self.lock().get(abs).cloned() {
                    before.insert(abs.to_path_buf(), Some(known));
                    continue;
                }
                let now = match std::fs::read_to_string(abs) {
                    Ok(text) if server.sync(abs, &text).await.is_ok() => server
                        .diagnostics_within(abs, self.baseline)
                        .await
                        .map(|d| findings(&d)),
                    // A file the write creates had nothing.
                    Err(_) => Some(Vec::new()),
                    Ok(_) => None,
                };
                before.insert(abs.to_path_buf(), now);
            }
            Box::new(before) as Baseline
        })
    }

    fn after<'a>(
        &'a self,
        baseline: Option<Baseline>,
        receipts: &'a [FileReceipt],
    ) -> BoxFuture<'a, Vec<FileReport>> {
        Box::pin(async move {
            let before = baseline
                .and_then(|b| b.downcast::<Before>().ok())
                .map(|b| *b)
                .unwrap_or_default();
            let mut reports = Vec::new();
            for receipt in receipts {
                let abs = receipt.path.abs();
                let Some(lang) = language_of(abs) else {
                    continue;
                };
                let Some(server) = self.servers.running_for(lang, abs).await else {
                    continue;
                };
                let report = |status| FileReport {
                    path: receipt.path.rel().to_string(),
                    source: format!("diagnostics ({})", server.id),
                    noun: "problem".into(),
                    status,
                };
                let Ok(text) = std::fs::read_to_string(abs) else {
                    continue;
                };
                if server.sync(abs, &text).await.is_err() || server.saved(abs).await.is_err() {
                    let state = server.state().await;
                    reports.push(report(FileStatus::Unavailable {
                        why: format!("{} is {state}", server.id),
                        now: Vec::new(),
                    }));
                    continue;
                }
                let Some(items) = server.diagnostics_within(abs, self.wait).await else {
                    let why = format!(
                        "{} gave no answer for this version within {} ms ({})",
                        server.id,
                        self.wait.as_millis(),
                        server.state().await
                    );
                    reports.push(report(FileStatus::Pending(why)));
                    continue;
                };
                let now = findings(&items);
                self.lock().insert(abs.to_path_buf(), now.clone());
                let status = match before.get(abs) {
                    Some(Some(old)) => match FileStatus::compare(old, now) {
                        FileStatus::Compared {
                            new,
                            still,
                            fixed: 0,
                        } if new.is_empty() && still.is_empty() => FileStatus::Clean,
                        other => other,
                    },
                    _ if now.is_empty() => continue,
                    _ => FileStatus::Unavailable {
                        why: "no baseline: the server was not ready before this write".into(),
                        now,
                    },
                };
                reports.push(report(status));
            }
            reports
        })
    }
}
