use std::sync::Arc;

use tether_fs::{Journal, StagedStore, Workspace};
use tether_tool::{ApprovalPolicy, NoticeQueue, Questions, WriteHooks};

/// The resources every run has, whatever tools it registers.
pub struct RunResources {
    /// The confined workspace.
    pub workspace: Arc<Workspace>,
    /// This run's transaction journal.
    pub journal: Arc<Journal>,
    /// This run's staged changes.
    pub staged: Arc<StagedStore>,
    /// The write hooks (diagnostics, syntax check).
    pub hooks: WriteHooks,
    /// The run's notice queue.
    pub notices: NoticeQueue,
    /// Whether write and exec calls ask first.
    pub approval: ApprovalPolicy,
    /// The run's question port, attached now or by a front end later.
    pub questions: Arc<Questions>,
    /// How long a question or approval card waits for the human (`[ask] timeout_s`).
    pub ask_timeout: std::time::Duration,
    /// The conversation this run serves.
    pub conversation: Option<String>,
}
