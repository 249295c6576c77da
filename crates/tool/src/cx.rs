use std::sync::{Arc, Mutex};
use tether_base::lock;

use serde_json::Value;
use tether_fs::{ChangeOp, CommitReceipt, FileReceipt, Journal, StagedStore, Workspace};
use tokio_util::sync::CancellationToken;

use crate::{
    Baselines, BoxFuture, NoticeQueue, Proposed, Surface, ToolError, ToolOutput, WriteHooks,
};

/// A permit a call can hold; nested calls never take one their scope already holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PermitKey {
    /// The single workspace-writer permit.
    Workspace,
    /// The permit of one stateful session.
    Session(String),
}

/// Where a call sits: its root call, the surface, the permits held, and the tools on the stack.
#[derive(Debug, Clone)]
pub struct CallScope {
    /// This call's id.
    pub call_id: u64,
    /// The id of the outermost call; equal to `call_id` for a root call.
    pub root_call_id: u64,
    /// The surface of the root call, inherited by every nested call.
    pub surface: Surface,
    /// Tool names from the root call inwards, this call last.
    pub stack: Vec<String>,
    /// Permits held by this call and its ancestors.
    pub held: Vec<PermitKey>,
}

impl CallScope {
    /// Whether this is the call the model made (not one made from inside another call).
    pub fn is_root(&self) -> bool {
        self.call_id == self.root_call_id
    }
}

/// Re-enters the run's call pipeline from inside a call.
pub trait Dispatcher: Send + Sync {
    /// Calls `tool` as part of `parent`'s call: same surface and approvals, no double permits.
    fn dispatch<'a>(
        &'a self,
        parent: &'a CallCx,
        tool: &'a str,
        args: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// The one door for writes: every commit runs the write hooks' baselines first and leaves a
/// receipt that the pipeline hands to the hooks' reports after the gate is released.
pub struct FsDoor {
    workspace: Arc<Workspace>,
    journal: Arc<Journal>,
    staged: Arc<StagedStore>,
    hooks: WriteHooks,
    writes: Arc<Mutex<Vec<Write>>>,
    /// Held (shared) by every commit in flight, so [`FsDoor::settle`] can wait for them.
    in_flight: Arc<tokio::sync::RwLock<()>>,
    /// The call's cancellation: a cancelled call never starts a commit.
    cancel: CancellationToken,
    /// Whether the call holds the workspace permit; only then may it commit.
    writer: bool,
    /// Who the call's writes are credited to, for "changed by ..." in a later conflict.
    label: Arc<Mutex<String>>,
}

impl FsDoor {
    /// A door for one call over the run's shared file resources.
    pub fn new(
        workspace: Arc<Workspace>,
        journal: Arc<Journal>,
        staged: Arc<StagedStore>,
        hooks: WriteHooks,
        cancel: CancellationToken,
    ) -> Self {
        FsDoor {
            workspace,
            journal,
            staged,
            hooks,
            writes: Arc::default(),
            in_flight: Arc::default(),
            cancel,
            writer: false,
            label: Arc::default(),
        }
    }

    /// Credits this call's writes to `label` (the tool's name, say).
    pub fn labelled(self, label: &str) -> Self {
        self.label_writes(label);
        self
    }

    /// Credits this call's next writes to `label`, e.g. "edit_2 (accepted)".
    pub fn label_writes(&self, label: &str) {
        *lock(&self.label) = label.to_string();
    }

    /// Declares that the call holds the workspace permit, so it may commit.
    pub fn holding_workspace(mut self, writer: bool) -> Self {
        self.writer = writer;
        self
    }

    /// The confined workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The run's staged-change store.
    pub fn staged(&self) -> &StagedStore {
        &self.staged
    }

    /// The run's write hooks, for a wrapped host tool that writes on its own.
    pub fn hooks(&self) -> &WriteHooks {
        &self.hooks
    }

    /// Commits `ops` all-or-nothing, after every hook has taken its baseline. A call cancelled
    /// before this point writes nothing: long work ahead of a commit cannot sneak it through.
    pub async fn commit(&self, ops: Vec<ChangeOp>) -> Result<CommitReceipt, ToolError> {
        if !self.writer {
            return Err(ToolError::failed(
                "this tool does not hold the workspace write permit, so it may not write; a \
                 tool that writes declares Concurrency::Workspace (this is a bug in the tool)",
            ));
        }
        let paths: Vec<_> = ops.iter().flat_map(|op| op.paths()).cloned().collect();
        let baselines = self.hooks.run_before(&paths).await;
        let journal = self.journal.clone();
        let writes = self.writes.clone();
        let hooks = self.hooks.clone();
        let guard = self.in_flight.clone().read_owned().await;
        if self.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        // The commit runs to completion even if the call is cancelled (all files or none), and
        // records its receipt itself, so a cancelled call's writes still reach the hooks.
        let receipt = tokio::task::spawn_blocking(move || {
            let receipt = journal.commit(ops)?;
            lock(&writes).push(Write {
                number: hooks.next_number(),
                baselines,
                receipts: receipt.files.clone(),
            });
            drop(guard);
            Ok::<_, tether_fs::FsError>(receipt)
        })
        .await
        .map_err(|e| {
            ToolError::failed(format!(
                "the write stopped before it ended ({e}); its journal is finished or rolled back \
                 when tether next starts; read the files again before writing them"
            ))
        })??;
        let label = lock(&self.label).clone();
        let rels = receipt.files.iter().map(|f| f.path.rel());
        self.staged.note_writes(rels, &label);
        Ok(receipt)
    }

    /// What `ops` would bring if committed, as every hook's preview judges the proposed
    /// texts; nothing is written. See [`crate::verdict`] for the words.
    pub async fn preview(&self, ops: &[ChangeOp]) -> Vec<crate::FileReport> {
        let mut changes = Vec::new();
        let text = |bytes: &[u8]| std::str::from_utf8(bytes).ok().map(str::to_string);
        for op in ops {
            match op {
                ChangeOp::Write { path, content, .. } | ChangeOp::Create { path, content } => {
                    changes.push(Proposed {
                        path: path.clone(),
                        text: text(content),
                        deleted: false,
                    })
                }
                ChangeOp::Delete { path, .. } => changes.push(Proposed {
                    path: path.clone(),
                    text: None,
                    deleted: true,
                }),
                ChangeOp::Rename {
                    from, to, content, ..
                } => {
                    let moved = match content {
                        Some(bytes) => text(bytes),
                        None => match self.workspace.read_hashed(from) {
                            Ok(Some((bytes, _))) => text(&bytes),
                            _ => None,
                        },
                    };
                    changes.push(Proposed {
                        path: from.clone(),
                        text: None,
                        deleted: true,
                    });
                    changes.push(Proposed {
                        path: to.clone(),
                        text: moved,
                        deleted: false,
                    });
                }
                // A kind of change this door does not know yet is judged by no hook.
                _ => {}
            }
        }
        self.hooks.run_preview(&changes).await
    }

    /// Stages `proposal` with what its preview says it would bring, and returns its id and
    /// that verdict in full, for the result under the change's own preview.
    pub async fn stage_judged(&self, mut proposal: tether_fs::Proposal) -> (String, String) {
        let verdict = crate::verdict(&self.preview(&proposal.ops).await);
        let headline = verdict.lines().next().unwrap_or_default().to_string();
        proposal.verdict = Some(headline);
        (self.staged.stage_change(proposal), verdict)
    }

    /// Waits (at most 120 s) until no commit of this call is still running; false if one
    /// still is, so the caller can say so.
    pub async fn settle(&self) -> bool {
        let wait = self.in_flight.write();
        tokio::time::timeout(std::time::Duration::from_secs(120), wait)
            .await
            .is_ok()
    }

    /// Records a write made outside [`FsDoor::commit`] (a host's wrapped tool) for the hooks,
    /// with the baselines taken before it.
    pub fn record(&self, baselines: Baselines, files: Vec<FileReceipt>) {
        lock(&self.writes).push(Write {
            number: self.hooks.next_number(),
            baselines,
            receipts: files,
        });
    }

    /// Takes this call's writes, each with its own baselines.
    pub fn take_writes(&self) -> Vec<Write> {
        std::mem::take(&mut *lock(&self.writes))
    }
}

/// One write of a call: what it changed, and the hooks' baselines from just before it.
pub struct Write {
    /// The run's number for it, counting committed writes from 1.
    pub number: u64,
    /// The hooks' baselines, in hook order.
    pub baselines: Baselines,
    /// The files it changed.
    pub receipts: Vec<FileReceipt>,
}

/// How often [`CallCx::progress_while`] reports: clients commonly reset a 5 s or longer
/// timeout on progress, and 2 s keeps a report inside that even on a loaded machine.
pub const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Where a call's progress goes: a front end that can show it (MCP progress notifications).
pub trait ProgressPort: Send + Sync {
    /// Reports that the call is alive: `done` grows with every report, `message` says what
    /// it waits for.
    fn report(&self, done: u64, message: &str);
}

/// Everything a [`CallCx`] is made of; the run's pipeline fills it in.
pub struct CallCxParts {
    /// Scope of the call.
    pub scope: CallScope,
    /// Cancelled when the client cancels (a child token for nested calls).
    pub cancel: CancellationToken,
    /// The write door for this call.
    pub fs: FsDoor,
    /// The run's notice queue.
    pub notices: NoticeQueue,
    /// Re-entry into the pipeline.
    pub dispatcher: Arc<dyn Dispatcher>,
    /// The conversation this run serves, if the host gave one.
    pub conversation: Option<String>,
    /// Where progress reports go, when the front end asked for them.
    pub progress: Option<Arc<dyn ProgressPort>>,
}

/// What a handler gets: the workspace, the write door, cancellation, notices and re-entry.
pub struct CallCx {
    parts: CallCxParts,
    progressed: std::sync::atomic::AtomicU64,
}

impl CallCx {
    /// Builds a context; only the run's pipeline should need this.
    pub fn from_parts(parts: CallCxParts) -> Self {
        CallCx {
            parts,
            progressed: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Says the call is still alive and what it waits for (a cold server, a debuggee), so a
    /// client with a short tool timeout sees progress; a no-op when no one asked for it.
    pub fn progress(&self, message: &str) {
        if let Some(port) = &self.parts.progress {
            let done = self
                .progressed
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            port.report(done + 1, message);
        }
    }

    /// Awaits `work`, reporting `say(elapsed)` every [`PROGRESS_EVERY`] until it ends: the
    /// ticker lives inside this future, so it stops with the work and never holds its result.
    pub async fn progress_while<F: std::future::Future>(
        &self,
        work: F,
        say: impl Fn(std::time::Duration) -> String,
    ) -> F::Output {
        if self.parts.progress.is_none() {
            return work.await;
        }
        let start = tokio::time::Instant::now();
        let mut tick = tokio::time::interval_at(start + PROGRESS_EVERY, PROGRESS_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut work = std::pin::pin!(work);
        loop {
            tokio::select! {
                // The result first: a report due at the same moment is not sent.
                biased;
                out = &mut work => return out,
                _ = tick.tick() => self.progress(&say(start.elapsed())),
            }
        }
    }

    /// The progress port, for nested calls to inherit.
    pub fn progress_port(&self) -> Option<Arc<dyn ProgressPort>> {
        self.parts.progress.clone()
    }

    /// The workspace root and read roots.
    pub fn workspace(&self) -> &Workspace {
        self.parts.fs.workspace()
    }

    /// Workspace files like `wanted` (best first, never in a virtual environment or vendored
    /// folder), found on the blocking pool since it walks the disk: for a path that is not there.
    pub async fn similar_files(&self, wanted: &str) -> Vec<String> {
        use tether_fs::suggest::{Kind, similar_paths};
        let (ws, wanted) = (self.workspace().clone(), wanted.to_owned());
        tokio::task::spawn_blocking(move || similar_paths(&ws, &wanted, Kind::File))
            .await
            .unwrap_or_default()
    }

    /// The write door: the only way a tool changes files.
    pub fn fs(&self) -> &FsDoor {
        &self.parts.fs
    }

    /// The call's scope.
    pub fn scope(&self) -> &CallScope {
        &self.parts.scope
    }

    /// The surface the root call came from.
    pub fn surface(&self) -> Surface {
        self.parts.scope.surface
    }

    /// The conversation id, if any.
    pub fn conversation(&self) -> Option<&str> {
        self.parts.conversation.as_deref()
    }

    /// The call's cancellation token; long work should select on `cancelled()`.
    pub fn cancel_token(&self) -> &CancellationToken {
        &self.parts.cancel
    }

    /// Queues a notice for the next root result.
    pub fn notify(&self, source: &str, text: impl Into<String>) {
        self.parts.notices.push(source, text);
    }

    /// The run's notice queue.
    pub fn notices(&self) -> &NoticeQueue {
        &self.parts.notices
    }

    /// Calls another tool as part of this call.
    pub async fn dispatch(&self, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
        let dispatcher = self.parts.dispatcher.clone();
        dispatcher.dispatch(self, tool, args).await
    }
}
