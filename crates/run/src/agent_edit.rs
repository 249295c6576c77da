//! Edits an agent made with its own tools (Claude Code's Edit, Codex's apply_patch), reported
//! like a tether write: the write hooks' baselines just before, their reports just after.

use tether_fs::{ContentHash, WritePath};
use tether_tool::{Baselines, FileStatus, format_reports_after};

use crate::runtime::Runtime;
use crate::wrap::{hashes, receipts_since};

/// What was known of the files before an agent's edit.
pub struct AgentEdit {
    paths: Vec<WritePath>,
    before: Vec<Option<ContentHash>>,
    baselines: Baselines,
    /// The files named that are not this workspace's, with why: told after the edit too.
    skipped: Vec<String>,
}

/// What an agent's edit changed, as the model reads it.
#[derive(Debug, Default)]
pub struct EditReport {
    /// The report, when any file changed.
    pub text: Option<String>,
    /// How many error-level problems the edit brought.
    pub new_errors: usize,
    /// The files that are not this workspace's, with why, left unchecked.
    pub skipped: Vec<String>,
}

impl Runtime {
    /// Takes every write hook's baseline for the files an agent's tool is about to edit.
    pub async fn agent_edit_begin(&self, names: &[String]) -> (AgentEdit, Vec<String>) {
        let (paths, skipped) = self.resolve_all(names);
        let before = hashes(self.workspace(), &paths);
        let baselines = self.hooks().run_before(&paths).await;
        let edit = AgentEdit {
            paths,
            before,
            baselines,
            skipped: skipped.clone(),
        };
        (edit, skipped)
    }

    /// Reports what the edit changed, against `begun` when its start was seen; without it,
    /// nothing is known from before, and every finding says it has no baseline.
    pub async fn agent_edit_end(&self, names: &[String], begun: Option<AgentEdit>) -> EditReport {
        let (edit, skipped) = match begun {
            Some(mut edit) => {
                let skipped = std::mem::take(&mut edit.skipped);
                (edit, skipped)
            }
            None => {
                let (paths, skipped) = self.resolve_all(names);
                let before = vec![None; paths.len()];
                let baselines = self.hooks().unknown();
                (
                    AgentEdit {
                        paths,
                        before,
                        baselines,
                        skipped: Vec::new(),
                    },
                    skipped,
                )
            }
        };
        let receipts = receipts_since(self.workspace(), edit.paths, edit.before);
        if receipts.is_empty() {
            return EditReport {
                skipped,
                ..EditReport::default()
            };
        }
        let number = self.hooks().next_number();
        let reports = self
            .hooks()
            .run_after(number, edit.baselines, &receipts)
            .await;
        let new_errors = reports
            .iter()
            .map(|r| match &r.status {
                FileStatus::Compared { new, .. } => {
                    new.iter().filter(|f| f.text.starts_with("error")).count()
                }
                _ => 0,
            })
            .sum();
        let text = match format_reports_after(&reports, "this edit") {
            Some(block) => format!("edit #{number}:\n{block}"),
            None => format!("edit #{number}: nothing to report"),
        };
        EditReport {
            text: Some(text),
            new_errors,
            skipped,
        }
    }

    /// The workspace files among `names`, and the others with why they are left out.
    fn resolve_all(&self, names: &[String]) -> (Vec<WritePath>, Vec<String>) {
        let mut paths = Vec::new();
        let mut skipped = Vec::new();
        for name in names {
            match self.workspace().resolve_write(name) {
                Ok(p) if !paths.iter().any(|q: &WritePath| q.abs() == p.abs()) => paths.push(p),
                Ok(_) => {}
                Err(e) => skipped.push(format!("{name}: {e}")),
            }
        }
        (paths, skipped)
    }
}
