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

/// What this run knows of each written file's problems: what it had before the run's first
/// write to it, and what the last complete answer said.
#[derive(Default)]
pub struct Ledger {
    files: Mutex<HashMap<PathBuf, Known>>,
}

/// A file's problems before the run's first write to it, and after the latest.
type Known = (Vec<Finding>, Vec<Finding>);

impl Ledger {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Known>> {
        self.files.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The last complete answer for `path`, if the run has one.
    fn latest(&self, path: &std::path::Path) -> Option<Vec<Finding>> {
        self.lock().get(path).map(|(_, latest)| latest.clone())
    }

    /// Records an answer; the first one recorded for a file is its baseline too.
    fn record(&self, path: PathBuf, baseline: Option<&Vec<Finding>>, now: Vec<Finding>) {
        let mut files = self.lock();
        let entry = files
            .entry(path)
            .or_insert_with(|| (baseline.cloned().unwrap_or_default(), Vec::new()));
        entry.1 = now;
    }

    /// The problems this run's writes introduced that are still there, per file.
    pub fn introduced(&self) -> Vec<(PathBuf, Vec<Finding>)> {
        let files = self.lock();
        let mut out: Vec<(PathBuf, Vec<Finding>)> = files
            .iter()
            .filter_map(|(path, (first, latest))| {
                match FileStatus::compare(first, latest.clone()) {
                    FileStatus::Compared { new, .. } if !new.is_empty() => {
                        Some((path.clone(), new))
                    }
                    _ => None,
                }
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

/// The write hook that reports the diagnostics a write introduced.
pub struct DiagnosticsOnWrite {
    pub(crate) servers: Arc<Supervisor>,
    pub(crate) ledger: Arc<Ledger>,
    /// How long a baseline may take, before the write.
    pub(crate) baseline: Duration,
    /// How long the answer after the write may take.
    pub(crate) wait: Duration,
    /// Languages already told that no server can give diagnostics, and why.
    pub(crate) told: Mutex<std::collections::HashSet<String>>,
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
    /// Why no server gives `lang` diagnostics, when a project marker says one should (a
    /// missing binary, an untrusted one): in full the first time in the run, then a short
    /// tag. Nothing when there is no marker, or a server could start.
    fn unavailable(&self, lang: &str, file: &std::path::Path) -> Option<String> {
        let s = &self.servers;
        let why = crate::avail::find(s.config(), lang, file, s.workspace(), s.trusted()).err()?;
        let with_marker: Vec<String> = why
            .into_iter()
            .filter(|w| w.contains(" found at "))
            .collect();
        if with_marker.is_empty() {
            return None;
        }
        let mut told = self.told.lock().unwrap_or_else(|p| p.into_inner());
        Some(if told.insert(lang.to_string()) {
            with_marker.join("; ")
        } else {
            "no server, as said above".to_string()
        })
    }
}

impl DiagnosticsOnWrite {
    /// One written file's report, if there is anything to say about it.
    async fn one(&self, before: &Before, receipt: &FileReceipt) -> Option<FileReport> {
        let abs = receipt.path.abs();
        let lang = language_of(abs)?;
        let Some(server) = self.servers.running_for(lang, abs).await else {
            if let Some(why) = self.unavailable(lang, abs) {
                return Some(FileReport {
                    path: receipt.path.rel().to_string(),
                    source: "diagnostics".into(),
                    noun: "problem".into(),
                    status: FileStatus::Unavailable {
                        why,
                        now: Vec::new(),
                    },
                });
            }
            return None;
        };
        let report = |status| FileReport {
            path: receipt.path.rel().to_string(),
            source: format!("diagnostics ({})", server.id),
            noun: "problem".into(),
            status,
        };
        let text = std::fs::read_to_string(abs).ok()?;
        let checks_before = server.checks_ended();
        if server.sync(abs, &text).await.is_err() || server.saved(abs).await.is_err() {
            let state = server.state().await;
            return Some(report(FileStatus::Unavailable {
                why: format!("{} is {state}", server.id),
                now: Vec::new(),
            }));
        }
        let Some(items) = server.diagnostics_within(abs, self.wait).await else {
            let why = format!(
                "{} gave no answer for this version within {} ms ({})",
                server.id,
                self.wait.as_millis(),
                server.state().await
            );
            return Some(report(FileStatus::Pending(why)));
        };
        // A server that checks separately on save (cargo check) has answered only
        // once that check is over; its results come as publications.
        let mut items = items;
        if server.separate_check {
            if !server.check_after(checks_before, self.wait).await {
                let why = format!(
                    "{}'s check of the saved files had not finished within {} ms",
                    server.id,
                    self.wait.as_millis()
                );
                return Some(report(FileStatus::Pending(why)));
            }
            items.extend(server.published_now(abs));
        }
        let now = findings(&items);
        let had = before.get(abs).and_then(Option::as_ref);
        self.ledger.record(abs.to_path_buf(), had, now.clone());
        let status = match before.get(abs) {
            Some(Some(old)) => match FileStatus::compare(old, now) {
                FileStatus::Compared {
                    new,
                    still,
                    fixed: 0,
                } if new.is_empty() && still.is_empty() => FileStatus::Clean,
                other => other,
            },
            _ if now.is_empty() => FileStatus::Clean,
            _ => FileStatus::Unavailable {
                why: "no baseline: the server was not ready before this write".into(),
                now,
            },
        };
        Some(report(status))
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
                if let Some(known) = self.ledger.latest(abs) {
                    before.insert(abs.to_path_buf(), Some(known));
                    continue;
                }
                let now = match std::fs::read_to_string(abs) {
                    // Before any separate check has run, its errors are unknown: no baseline.
                    Ok(_) if server.separate_check && server.checks_ended() == 0 => None,
                    Ok(text) if server.sync(abs, &text).await.is_ok() => {
                        let pulled = server.diagnostics_within(abs, self.baseline).await;
                        pulled.map(|mut d| {
                            if server.separate_check {
                                d.extend(server.published_now(abs));
                            }
                            findings(&d)
                        })
                    }
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
            // Files are asked about at once, so many files share one wait.
            let each = receipts.iter().map(|r| self.one(&before, r));
            futures::future::join_all(each)
                .await
                .into_iter()
                .flatten()
                .collect()
        })
    }
}
