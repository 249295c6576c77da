/// Whether write and exec calls ask a human first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ApprovalPolicy {
    /// The host decides (MCP clients run their own prompts): nothing is asked here.
    #[default]
    Never,
    /// Write and exec calls go through a question card; with no one to ask, they are refused.
    Ask,
}
