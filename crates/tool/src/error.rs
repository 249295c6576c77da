use crate::{Surface, Tier};

/// Why a call failed. Usage errors (the caller asked for something impossible) are told apart
/// from tool errors (the tool ran and could not do it) so a CLI can pick its exit code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The input was wrong; the message says what to do instead.
    #[error("{0}")]
    Invalid(String),
    /// The tool ran into a failure outside the caller's control.
    #[error("{0}")]
    Failed(String),
    /// A tool not registered in this run.
    #[error("unknown tool `{name}`; this surface has: {}", available.join(", "))]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// What the surface offers instead.
        available: Vec<String>,
    },
    /// A registered tool whose tier the surface does not admit.
    #[error(
        "tool `{tool}` is {tier}-tier and the `{surface}` surface admits only read-tier tools; \
         ask the user to switch to the agent surface to use it"
    )]
    Refused {
        /// The tool that was refused.
        tool: String,
        /// Its tier.
        tier: Tier,
        /// The surface that refused it.
        surface: Surface,
    },
    /// Arguments that do not fit the tool's schema.
    #[error("invalid arguments for `{tool}`: {detail}. Expected {expected}")]
    BadArgs {
        /// The tool called.
        tool: String,
        /// What serde said was wrong.
        detail: String,
        /// The schema's fields, quoted for the caller.
        expected: String,
    },
    /// A tool re-entered from inside its own call.
    #[error("tool `{tool}` is already running in this call ({stack}); a tool cannot call itself")]
    Reentrant {
        /// The tool that was already on the stack.
        tool: String,
        /// The call stack, outermost first.
        stack: String,
    },
    /// The approval gate said no, or could not ask.
    #[error("{0}")]
    NotApproved(String),
    /// The client cancelled the call.
    #[error("the call was cancelled")]
    Cancelled,
    /// The call needs the human's answer to a card, which this client collects only between
    /// calls (MCP input-required results): the front end asks, and the client calls again.
    #[error(
        "this call needs the human's answer to \"{}\" first, and this client collects answers \
         only between calls; a call made from inside another call (a cell's `tool()`) cannot \
         wait for one: make it directly, or have the tool allowed for the run first",
        .0.question
    )]
    NeedsInput(Box<crate::Card>),
}

impl ToolError {
    /// Whether the caller misused the interface (a CLI exits 2) rather than the tool failing (exit 1).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ToolError::UnknownTool { .. } | ToolError::Refused { .. } | ToolError::BadArgs { .. }
        )
    }

    /// Shorthand for [`ToolError::Invalid`].
    pub fn invalid(msg: impl Into<String>) -> Self {
        ToolError::Invalid(msg.into())
    }

    /// Shorthand for [`ToolError::Failed`].
    pub fn failed(msg: impl Into<String>) -> Self {
        ToolError::Failed(msg.into())
    }
}

impl From<tether_fs::FsError> for ToolError {
    fn from(e: tether_fs::FsError) -> Self {
        match e {
            tether_fs::FsError::Io { .. } => ToolError::Failed(e.to_string()),
            other => ToolError::Invalid(other.to_string()),
        }
    }
}

impl From<tether_fs::StagedError> for ToolError {
    fn from(e: tether_fs::StagedError) -> Self {
        ToolError::Invalid(e.to_string())
    }
}
