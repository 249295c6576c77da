//! The question card shared by `ask_user` and the approval gate, and the port that shows it to
//! a human: a terminal, an MCP client's elicitation form, or a script. Each card has an id, so a
//! port that cannot wait on one connection (MCP's input-required results) can suspend it and
//! take the answer up again by id.

use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tether_base::lock;

use crate::BoxFuture;

/// At most this many options on a card.
pub const MAX_OPTIONS: usize = 6;
/// At most this many characters in an option's label.
pub const MAX_LABEL: usize = 60;

/// One option on a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardOption {
    /// The short label shown with its number.
    pub label: String,
    /// Optional longer text.
    pub description: Option<String>,
}

/// A numbered question card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// Unique within the run, for a port that suspends the card and resumes it by id.
    pub id: String,
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

impl Card {
    /// Checks the card's shape; the error says what to change.
    pub fn validate(&self) -> Result<(), String> {
        if self.question.trim().is_empty() {
            return Err("`question` is empty: say what you need the human to decide".into());
        }
        if self.options.len() > MAX_OPTIONS {
            return Err(format!(
                "{} options given; a card holds at most {MAX_OPTIONS}: merge or drop some, or \
                 ask in two steps",
                self.options.len()
            ));
        }
        if self.options.is_empty() && !self.allow_free_text {
            return Err(
                "no options and `allow_free_text` is false, so there is nothing to answer: give \
                 options, or set `allow_free_text: true`"
                    .into(),
            );
        }
        if self.multi_select && self.options.is_empty() {
            return Err("`multi_select` needs options to choose from".into());
        }
        let mut seen = std::collections::HashSet::new();
        for (n, option) in self.options.iter().enumerate() {
            let label = option.label.trim();
            if label.is_empty() {
                return Err(format!("option {} has an empty label", n + 1));
            }
            let chars = label.chars().count();
            if chars > MAX_LABEL {
                return Err(format!(
                    "option {}'s label is {chars} characters; keep labels to {MAX_LABEL} and put \
                     the rest in its `description`",
                    n + 1
                ));
            }
            if !seen.insert(label.to_lowercase()) {
                return Err(format!(
                    "two options are labelled \"{label}\"; labels must differ"
                ));
            }
        }
        Ok(())
    }

    /// A key that is the same for the same card asked again (ids are not), so an answer
    /// collected between calls finds the card it answers when the call is made again.
    pub fn key(&self) -> String {
        // FNV-1a over the card's content, each field ended by a separator.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |text: &str| {
            for byte in text.bytes().chain([0xff]) {
                hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
            }
        };
        eat(&self.question);
        eat(self.context.as_deref().unwrap_or(""));
        for option in &self.options {
            eat(&option.label);
            eat(option.description.as_deref().unwrap_or(""));
        }
        eat(&format!("{}{}", self.allow_free_text, self.multi_select));
        format!("card-{hash:016x}")
    }

    /// The card as plain numbered text, for a terminal or for a model to ask in its own words.
    pub fn to_text(&self) -> String {
        let mut out = self.question.trim().to_string();
        if let Some(context) = self.context.as_deref().filter(|c| !c.trim().is_empty()) {
            out.push_str(&format!("\n{}", context.trim()));
        }
        for (n, option) in self.options.iter().enumerate() {
            out.push_str(&format!("\n  {}. {}", n + 1, option.label.trim()));
            if let Some(d) = option
                .description
                .as_deref()
                .filter(|d| !d.trim().is_empty())
            {
                out.push_str(&format!(": {}", d.trim()));
            }
        }
        let how = match (
            self.options.is_empty(),
            self.multi_select,
            self.allow_free_text,
        ) {
            (true, _, _) => "(answer in words)",
            (false, true, true) => "(choose one or more, or answer in words)",
            (false, true, false) => "(choose one or more)",
            (false, false, true) => "(choose one, or answer in words)",
            (false, false, false) => "(choose one)",
        };
        out.push_str(&format!("\n{how}"));
        out
    }
}

/// How a card ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The human answered.
    Answered {
        /// Indexes (0-based) of the chosen options.
        chosen: Vec<usize>,
        /// What they typed, if anything.
        text: Option<String>,
    },
    /// The card was put aside without an answer.
    Skipped {
        /// The human (or client) cancelled rather than declined.
        cancelled: bool,
        /// It came back faster than a person could read the card: the client may have
        /// refused it without showing it.
        hasty: bool,
    },
    /// The client answered with something the card did not offer (a label not among its
    /// options), even when asked again: what it sent.
    Invalid(String),
    /// Nobody answered in time.
    TimedOut,
    /// There is no one to show the card to, and why.
    Unavailable(String),
    /// The port collects the answer between calls: this call ends asking for it, and the
    /// client makes it again with the answer (MCP input-required results).
    Deferred,
}

/// Someone to show a card to: a terminal, an MCP client's elicitation, a test script.
pub trait QuestionPort: Send + Sync {
    /// Shows the card and waits at most `timeout`. Dropping the future withdraws the card.
    fn ask(&self, card: Card, timeout: Duration) -> BoxFuture<'_, Outcome>;
}

/// The run's port, which a front end may attach after the run is built (an MCP client says
/// at its handshake whether it can show forms), and the numbering of its cards.
#[derive(Default)]
pub struct Questions {
    port: RwLock<Option<Arc<dyn QuestionPort>>>,
    next: std::sync::atomic::AtomicU64,
}

impl Questions {
    /// Attaches the port cards go to from now on.
    pub fn attach(&self, port: Arc<dyn QuestionPort>) {
        *self.port.write().unwrap_or_else(|p| p.into_inner()) = Some(port);
    }

    /// The port, when one is attached.
    pub fn port(&self) -> Option<Arc<dyn QuestionPort>> {
        self.port.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A fresh card id (`q1`, `q2`, …).
    pub fn next_id(&self) -> String {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        format!("q{n}")
    }

    /// Shows `card` through the port, or says at once that there is none.
    pub async fn ask(&self, card: Card, timeout: Duration) -> Outcome {
        match self.port() {
            Some(port) => port.ask(card, timeout).await,
            None => Outcome::Unavailable(
                "no terminal or client that can show a question is \
                                          connected to this run"
                    .into(),
            ),
        }
    }
}

/// A port that answers from a script, in order, and keeps the cards it was shown: for tests
/// and for hosts that decide in code.
#[derive(Default)]
pub struct ScriptedPort {
    answers: Mutex<std::collections::VecDeque<Outcome>>,
    shown: Mutex<Vec<Card>>,
}

impl ScriptedPort {
    /// A port that gives `answers` in order, then `Unavailable`.
    pub fn new(answers: impl IntoIterator<Item = Outcome>) -> Self {
        ScriptedPort {
            answers: Mutex::new(answers.into_iter().collect()),
            shown: Mutex::default(),
        }
    }

    /// The cards shown so far.
    pub fn shown(&self) -> Vec<Card> {
        lock(&self.shown).clone()
    }
}

impl QuestionPort for ScriptedPort {
    fn ask(&self, card: Card, _timeout: Duration) -> BoxFuture<'_, Outcome> {
        lock(&self.shown).push(card);
        let next = lock(&self.answers).pop_front();
        Box::pin(async move {
            next.unwrap_or_else(|| Outcome::Unavailable("the script has no more answers".into()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(options: &[&str], free: bool) -> Card {
        Card {
            id: "q1".into(),
            question: "Which database?".into(),
            context: None,
            options: options
                .iter()
                .map(|l| CardOption {
                    label: l.to_string(),
                    description: None,
                })
                .collect(),
            allow_free_text: free,
            multi_select: false,
        }
    }

    #[test]
    fn validation_says_what_to_change() {
        assert!(card(&["a", "b"], false).validate().is_ok());
        let seven = card(&["1", "2", "3", "4", "5", "6", "7"], false);
        assert!(seven.validate().unwrap_err().contains("at most 6"));
        assert!(
            card(&[], false)
                .validate()
                .unwrap_err()
                .contains("allow_free_text")
        );
        assert!(card(&[], true).validate().is_ok());
        let long = "x".repeat(61);
        assert!(
            card(&[&long], false)
                .validate()
                .unwrap_err()
                .contains("description")
        );
        assert!(
            card(&["Same", "same"], false)
                .validate()
                .unwrap_err()
                .contains("must differ")
        );
    }

    #[test]
    fn a_card_reads_as_numbered_text() {
        let mut c = card(&["Postgres", "SQLite"], true);
        c.options[1].description = Some("one file".into());
        assert_eq!(
            c.to_text(),
            "Which database?\n  1. Postgres\n  2. SQLite: one file\n(choose one, or answer in words)"
        );
    }
}
