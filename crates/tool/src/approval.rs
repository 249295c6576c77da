use std::time::Duration;

use crate::BoxFuture;

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

/// One option on a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardOption {
    /// The short label shown with its number.
    pub label: String,
    /// Optional longer text.
    pub description: Option<String>,
}

/// A numbered question card, shared by ask_user and the approval gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// What is asked.
    pub question: String,
    /// Why, and what depends on the answer.
    pub context: Option<String>,
    /// The choices.
    pub options: Vec<CardOption>,
    /// Whether a typed answer is accepted.
    pub allow_free_text: bool,
    /// Whether several options may be chosen.
    pub multi_select: bool,
}

/// What the human answered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CardAnswer {
    /// Indexes (0-based) of the chosen options.
    Selected(Vec<usize>),
    /// A typed answer.
    Text(String),
    /// The human skipped the question.
    Skipped,
}

/// Someone to show a card to: a terminal, an MCP client's elicitation, a test script.
pub trait QuestionPort: Send + Sync {
    /// Shows the card and waits at most `timeout` for an answer; `Err` carries why no answer came.
    fn ask(&self, card: Card, timeout: Duration) -> BoxFuture<'_, Result<CardAnswer, String>>;
}
