use std::sync::Arc;

use tether_fs::{Journal, StagedStore, Workspace};
use tether_tool::{ApprovalPolicy, NoticeQueue, QuestionPort, WriteHooks};

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
    /// Someone to show cards to, if anyone is connected.
    pub questions: Option<Arc<dyn QuestionPort>>,
    /// The conversation this run serves.
    pub conversation: Option<String>,
}
