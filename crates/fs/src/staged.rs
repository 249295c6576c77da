//! Proposed change sets waiting to be accepted or discarded.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::{ChangeOp, WritePath};

/// Counts the sites a staged change's pattern matches in a file's text, so an accept onto a
/// file that changed since can say how many sites the change does not cover.
pub type Recount = Arc<dyn Fn(&str) -> usize + Send + Sync>;

/// A proposed change set held until accepted or discarded.
#[derive(Clone)]
pub struct StagedChange {
    /// Its id, `edit_<n>`.
    pub id: String,
    /// The tool that proposed it.
    pub origin: String,
    /// One line saying what it does.
    pub summary: String,
    /// A diff or other preview shown to the model.
    pub preview: String,
    /// The changes to commit on acceptance.
    pub ops: Vec<ChangeOp>,
    /// The text each rewritten file had when the change was made, so the change can be
    /// rebased if the file changes before it is accepted. A file without one cannot be.
    pub bases: HashMap<WritePath, String>,
    /// Counts the staging pattern's sites in a text, when the change came from a pattern.
    pub recount: Option<Recount>,
    /// The headline of what its preview said it would bring, when it was judged: an accept
    /// onto files changed since says that verdict is stale.
    pub verdict: Option<String>,
}

impl fmt::Debug for StagedChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StagedChange")
            .field("id", &self.id)
            .field("origin", &self.origin)
            .field("summary", &self.summary)
            .field("ops", &self.ops.len())
            .finish_non_exhaustive()
    }
}

/// What a staging tool proposes: [`StagedStore::stage_change`] gives it an id.
pub struct Proposal {
    /// The tool that proposes it.
    pub origin: String,
    /// One line saying what it does.
    pub summary: String,
    /// A diff or other preview shown to the model.
    pub preview: String,
    /// The changes to commit on acceptance.
    pub ops: Vec<ChangeOp>,
    /// Each rewritten file's text as the change saw it (see [`StagedChange::bases`]).
    pub bases: HashMap<WritePath, String>,
    /// Counts the pattern's sites in a text (see [`StagedChange::recount`]).
    pub recount: Option<Recount>,
    /// What its preview said it would bring (see [`StagedChange::verdict`]).
    pub verdict: Option<String>,
}

/// How a staged change was resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// It was committed (or an attempt was made).
    Accepted,
    /// It was dropped.
    Discarded,
}

impl fmt::Display for Resolution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Resolution::Accepted => "accepted",
            Resolution::Discarded => "discarded",
        })
    }
}

/// Why a staged change could not be taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StagedError {
    /// No change was ever staged under this id.
    #[error("unknown edit_id \"{id}\"; {}", pending_list(.pending))]
    Unknown {
        /// The id asked for.
        id: String,
        /// Ids still pending.
        pending: Vec<String>,
    },
    /// The change was already accepted or discarded.
    #[error("edit_id \"{id}\" was already {how}; {}", pending_list(.pending))]
    AlreadyResolved {
        /// The id asked for.
        id: String,
        /// How it was resolved.
        how: Resolution,
        /// Ids still pending.
        pending: Vec<String>,
    },
}

fn pending_list(pending: &[String]) -> String {
    if pending.is_empty() {
        "no staged edits are pending".into()
    } else {
        format!("pending: {}", pending.join(", "))
    }
}

/// Holds staged changes under ids `edit_1`, `edit_2`, ... until they are resolved.
#[derive(Debug, Default)]
pub struct StagedStore {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    last: u64,
    pending: BTreeMap<u64, StagedChange>,
    resolved: HashMap<String, Resolution>,
    /// Who last wrote each file (relative path), for "changed by ..." in a conflict.
    last_writer: HashMap<String, String>,
}

impl Inner {
    fn pending_ids(&self) -> Vec<String> {
        self.pending.values().map(|c| c.id.clone()).collect()
    }
}

fn number(id: &str) -> Option<u64> {
    id.strip_prefix("edit_")?.parse().ok()
}

impl StagedStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        crate::lock(&self.inner)
    }

    /// Holds a proposed change that cannot be rebased and returns its new id.
    pub fn stage(
        &self,
        origin: &str,
        summary: String,
        preview: String,
        ops: Vec<ChangeOp>,
    ) -> String {
        self.stage_change(Proposal {
            origin: origin.into(),
            summary,
            preview,
            ops,
            bases: HashMap::new(),
            recount: None,
            verdict: None,
        })
    }

    /// Holds a proposed change and returns its new id.
    pub fn stage_change(&self, p: Proposal) -> String {
        let mut inner = self.lock();
        inner.last += 1;
        let n = inner.last;
        let id = format!("edit_{n}");
        let change = StagedChange {
            id: id.clone(),
            origin: p.origin,
            summary: p.summary,
            preview: p.preview,
            ops: p.ops,
            bases: p.bases,
            recount: p.recount,
            verdict: p.verdict,
        };
        inner.pending.insert(n, change);
        id
    }

    /// Remembers that `by` (a tool, or an accepted edit) last wrote these files.
    pub fn note_writes<'a>(&self, rels: impl IntoIterator<Item = &'a str>, by: &str) {
        let mut inner = self.lock();
        for rel in rels {
            inner.last_writer.insert(rel.to_string(), by.to_string());
        }
    }

    /// Who last wrote `rel` in this run, if anyone did.
    pub fn last_writer(&self, rel: &str) -> Option<String> {
        self.lock().last_writer.get(rel).cloned()
    }

    /// The pending changes that would write any of `rels`, as (id, file) pairs.
    pub fn pending_on(&self, rels: &[&str]) -> Vec<(String, String)> {
        let inner = self.lock();
        let mut out = Vec::new();
        for change in inner.pending.values() {
            for path in change.ops.iter().flat_map(|op| op.paths()) {
                if rels.contains(&path.rel()) {
                    out.push((change.id.clone(), path.rel().to_string()));
                }
            }
        }
        out.dedup();
        out
    }

    /// Removes and returns the change, remembering it was resolved `how` (so a second resolve says so).
    pub fn take(&self, id: &str, how: Resolution) -> Result<StagedChange, StagedError> {
        let mut inner = self.lock();
        if let Some(change) = number(id).and_then(|n| inner.pending.remove(&n)) {
            inner.resolved.insert(change.id.clone(), how);
            return Ok(change);
        }
        let pending = inner.pending_ids();
        match inner.resolved.get(id) {
            Some(how) => Err(StagedError::AlreadyResolved {
                id: id.into(),
                how: how.clone(),
                pending,
            }),
            None => Err(StagedError::Unknown {
                id: id.into(),
                pending,
            }),
        }
    }

    /// Puts a change back under its id (e.g. after an accept failed with a conflict).
    pub fn restore(&self, change: StagedChange) {
        let mut inner = self.lock();
        let Some(n) = number(&change.id) else {
            tracing::warn!(id = %change.id, "not restoring a change with a foreign id");
            return;
        };
        inner.resolved.remove(&change.id);
        inner.last = inner.last.max(n);
        inner.pending.insert(n, change);
    }

    /// Ids of the changes still pending, in staging order.
    pub fn pending(&self) -> Vec<String> {
        self.lock().pending_ids()
    }
}
