//! `ask_user`: the model puts one question card to the human through the run's port. It is
//! listed only while a port can reach someone, never blocks without one, and never invents an
//! answer.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use tether_tool::{
    CallCx, Card, CardOption, Concurrency, Outcome, Questions, Tier, Tool, ToolError, ToolOutput,
};

/// An option the model offers: a label alone, or a label with a description.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
pub enum OptionArg {
    /// Just the label, at most 60 characters.
    Label(String),
    /// A label and what choosing it means.
    Described {
        /// A short label, at most 60 characters.
        label: String,
        /// What choosing it means, if the label does not say.
        #[serde(default)]
        description: Option<String>,
    },
}

/// `ask_user`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskArgs {
    /// The question, on its own line.
    pub question: String,
    /// Why you ask and what depends on the answer, and the assumption you will make if the
    /// human skips it.
    #[serde(default)]
    pub context: Option<String>,
    /// Up to 6 choices.
    #[serde(default)]
    pub options: Vec<OptionArg>,
    /// Whether a typed answer is accepted; must be true when there are no options (the
    /// default then).
    #[serde(default)]
    pub allow_free_text: Option<bool>,
    /// Whether several options may be chosen; the answer is then a list.
    #[serde(default)]
    pub multi_select: bool,
}

impl AskArgs {
    /// The card these arguments describe, checked; the error says what to change.
    pub fn into_card(self, id: String) -> Result<Card, String> {
        let allow_free_text = self.allow_free_text.unwrap_or(self.options.is_empty());
        let card = Card {
            id,
            question: self.question,
            context: self.context,
            options: self
                .options
                .into_iter()
                .map(|o| match o {
                    OptionArg::Label(label) => CardOption {
                        label: label.trim().to_string(),
                        description: None,
                    },
                    OptionArg::Described { label, description } => CardOption {
                        label: label.trim().to_string(),
                        description,
                    },
                })
                .collect(),
            allow_free_text,
            multi_select: self.multi_select,
        };
        card.validate()?;
        Ok(card)
    }
}

/// The `ask_user` tool.
pub struct AskUser {
    /// The run's port.
    pub questions: Arc<Questions>,
    /// How long a card waits (`[ask] timeout_s`).
    pub timeout: Duration,
}

/// What the model should do when no answer comes.
const GO_ON: &str = "go on with your stated assumption and do not ask it again";

impl Tool for AskUser {
    type Args = AskArgs;

    fn name(&self) -> &'static str {
        "ask_user"
    }

    fn description(&self) -> String {
        "Ask the human one question and wait for the answer: a decision only they can make, \
         not something you can find out. Give up to 6 short options (label, optional \
         description), or allow a typed answer. Say in `context` what you will assume if they \
         skip it. Use this tool, never a question in your chat message: a message ends your \
         turn, while this waits for the answer and you go on."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn concurrency(&self, _: &AskArgs) -> Concurrency {
        // One card at a time: a person answers questions in turn.
        Concurrency::Session("ask_user".into())
    }

    async fn call(&self, _cx: &CallCx, args: AskArgs) -> Result<ToolOutput, ToolError> {
        let card = args
            .into_card(self.questions.next_id())
            .map_err(ToolError::invalid)?;
        match self.questions.ask(card.clone(), self.timeout).await {
            Outcome::Answered { chosen, text } => {
                Ok(ToolOutput::text(answered(&card, &chosen, text)))
            }
            Outcome::Skipped { cancelled, hasty } => {
                let mut said = format!("the human skipped this question: {GO_ON}");
                if cancelled {
                    said.push_str(" (the card was cancelled, not declined)");
                }
                if hasty {
                    said.push_str(
                        ". Note: it came back faster than a person reads, so the client rather \
                         than a person may have declined it without showing it; if the answer \
                         matters, ask in your own reply",
                    );
                }
                Ok(ToolOutput::text(said))
            }
            Outcome::Invalid(sent) => Err(ToolError::failed(format!(
                "the client answered {sent}, which is not one of the options, twice (it was \
                 asked again once); this is no answer from the human. Put the question in your \
                 own reply, and do not assume an answer"
            ))),
            Outcome::TimedOut => Err(ToolError::failed(format!(
                "no answer came within {} s: {GO_ON}",
                self.timeout.as_secs()
            ))),
            Outcome::Deferred => Err(ToolError::NeedsInput(Box::new(card))),
            Outcome::Unavailable(why) => Err(ToolError::failed(format!(
                "no one can be asked here ({why}). Put this question to the user in your own \
                 reply, and do not assume an answer:\n\n{}",
                card.to_text()
            ))),
            _ => Err(ToolError::failed(format!("no answer came: {GO_ON}"))),
        }
    }
}

/// An answer as the model reads it: each chosen option quoted with its number and label.
fn answered(card: &Card, chosen: &[usize], text: Option<String>) -> String {
    let mut out = format!("the human answered \"{}\":", card.question.trim());
    let quoted: Vec<String> = chosen
        .iter()
        .filter_map(|&i| card.options.get(i).map(|o| (i, o)))
        .map(|(i, o)| format!("{}. \"{}\"", i + 1, o.label))
        .collect();
    match (card.multi_select, quoted.len()) {
        (_, 0) => {}
        (true, _) => out.push_str(&format!("\nchose [{}]", quoted.join(", "))),
        (false, _) => out.push_str(&format!("\nchose {}", quoted[0])),
    }
    if card.multi_select && quoted.is_empty() && text.is_none() {
        out.push_str("\nchose [] (none of the options)");
    }
    if let Some(text) = text.filter(|t| !t.trim().is_empty()) {
        out.push_str(&format!("\nwrote: \"{}\"", text.trim()));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn options_may_be_labels_or_objects_but_not_misspelled_objects() {
        let args: AskArgs = serde_json::from_str(
            r#"{"question": "Which?", "options": ["a", {"label": "b", "description": "bee"}]}"#,
        )
        .unwrap();
        let card = args.into_card("q1".into()).unwrap();
        assert_eq!(card.options[0].label, "a");
        assert_eq!(card.options[1].description.as_deref(), Some("bee"));
        let typo = serde_json::from_str::<AskArgs>(
            r#"{"question": "Which?", "options": [{"label": "b", "desc": "bee"}]}"#,
        );
        assert!(typo.is_err(), "a misspelled field was dropped silently");
    }
}
