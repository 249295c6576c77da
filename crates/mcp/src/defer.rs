//! The question port of a client on MCP 2026-07-28, which has no server-to-client requests: a
//! card that has no answer yet ends the call with an input-required result carrying its form,
//! and the client calls again with the human's answer, which the card then finds by its key.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tether_base::lock;

use rmcp::model::{
    ElicitRequest, ElicitResult, InputRequest, InputRequests, InputRequiredResult, InputResponses,
};
use tether_tool::{BoxFuture, Card, Outcome, QuestionPort};

use crate::elicit::{form_params, outcome_of};

/// Cards waiting for their answers, and answers waiting for their cards, by card key.
#[derive(Default)]
pub(crate) struct DeferPort {
    pending: Mutex<HashMap<String, Card>>,
    answers: Mutex<HashMap<String, Outcome>>,
}

impl DeferPort {
    /// Takes the answers a retried call carries, for the cards they answer.
    pub(crate) fn receive(&self, responses: &InputResponses) {
        let pending = lock(&self.pending);
        let mut answers = lock(&self.answers);
        for (key, value) in responses {
            let Some(card) = pending.get(key) else {
                continue; // An answer to no card of ours: the card is asked again.
            };
            let outcome = match serde_json::from_value::<ElicitResult>(value.clone()) {
                Ok(result) => outcome_of(card, result, false),
                Err(e) => Outcome::Unavailable(format!("the client's answer was unreadable: {e}")),
            };
            answers.insert(key.clone(), outcome);
        }
    }

    /// The input-required result that asks the client for `card`'s answer.
    pub(crate) fn request(card: &Card) -> Result<InputRequiredResult, String> {
        let key = card.key();
        let elicit = ElicitRequest::new(form_params(card)?);
        let mut requests = InputRequests::new();
        requests.insert(key.clone(), InputRequest::Elicitation(elicit));
        Ok(InputRequiredResult::new(Some(requests), Some(key)))
    }
}

impl QuestionPort for DeferPort {
    fn ask(&self, card: Card, _timeout: Duration) -> BoxFuture<'_, Outcome> {
        let key = card.key();
        let answer = lock(&self.answers).remove(&key);
        let outcome = match answer {
            Some(outcome) => {
                lock(&self.pending).remove(&key);
                outcome
            }
            None => {
                lock(&self.pending).insert(key, card);
                Outcome::Deferred
            }
        };
        Box::pin(async move { outcome })
    }
}
