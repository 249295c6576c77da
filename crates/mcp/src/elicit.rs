//! The question port of an MCP client that can show forms: a card becomes an
//! `elicitation/create` request whose schema has an enum for one choice, an array of enums for
//! several, and a string for a typed answer.

use std::time::Duration;

use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, RequestId, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tether_tool::{BoxFuture, Card, Outcome, QuestionPort};

/// The form's property names.
const CHOICE: &str = "choice";
const ANSWER: &str = "answer";

/// Asks the client behind `peer`.
pub(crate) struct ElicitPort {
    pub(crate) peer: Peer<RoleServer>,
}

/// The form for `card`: its schema as JSON.
fn form(card: &Card) -> Value {
    let titled: Vec<Value> = card
        .options
        .iter()
        .map(|o| {
            let title = match o.description.as_deref().filter(|d| !d.trim().is_empty()) {
                Some(d) => format!("{}: {}", o.label, d.trim()),
                None => o.label.clone(),
            };
            json!({"const": o.label, "title": title})
        })
        .collect();
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    if !card.options.is_empty() {
        let choice = match card.multi_select {
            true => json!({"type": "array", "title": "Choose one or more",
                           "items": {"anyOf": titled}}),
            false => json!({"type": "string", "title": "Choose one", "oneOf": titled}),
        };
        properties.insert(CHOICE.into(), choice);
        if !card.allow_free_text {
            required.push(CHOICE);
        }
    }
    if card.allow_free_text {
        let title = match card.options.is_empty() {
            true => "Your answer",
            false => "Or answer in words",
        };
        properties.insert(ANSWER.into(), json!({"type": "string", "title": title}));
        if card.options.is_empty() {
            required.push(ANSWER);
        }
    }
    json!({"type": "object", "properties": properties, "required": required})
}

/// The answer in an accepted form's content; `Invalid` when a choice is not one of the
/// card's options (a client that made up a value), which is no answer, not a skip.
fn read_answer(card: &Card, content: Option<Value>) -> Outcome {
    let content = content.unwrap_or(Value::Null);
    let index = |label: &Value| {
        let label = label.as_str()?;
        card.options.iter().position(|o| o.label == label)
    };
    let given: Vec<&Value> = match &content[CHOICE] {
        Value::Array(labels) => labels.iter().collect(),
        Value::Null => Vec::new(),
        one => vec![one],
    };
    let unknown: Vec<String> = given
        .iter()
        .filter(|v| index(v).is_none())
        .map(|v| v.to_string())
        .collect();
    if !unknown.is_empty() {
        return Outcome::Invalid(unknown.join(", "));
    }
    let chosen: Vec<usize> = given.into_iter().filter_map(index).collect();
    let text = content[ANSWER]
        .as_str()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    if chosen.is_empty() && text.is_none() && !card.multi_select {
        // An accepted form with nothing in it answers nothing.
        return Outcome::Skipped {
            cancelled: false,
            hasty: false,
        };
    }
    Outcome::Answered { chosen, text }
}

/// Faster than this, a decline cannot have come from a person who read the card.
const HASTY: Duration = Duration::from_millis(400);

/// The `elicitation/create` parameters that show `card` as a form.
pub(crate) fn form_params(card: &Card) -> Result<ElicitRequestParams, String> {
    let schema: ElicitationSchema = serde_json::from_value(form(card))
        .map_err(|e| format!("the card's form is invalid: {e}"))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: card.to_text(),
        requested_schema: schema,
    })
}

/// What the client's answer to `card`'s form means; `hasty` when it came back too soon for a
/// person to have read the card.
pub(crate) fn outcome_of(card: &Card, result: ElicitResult, hasty: bool) -> Outcome {
    match result.action {
        ElicitationAction::Accept => read_answer(card, result.content),
        ElicitationAction::Decline => Outcome::Skipped {
            cancelled: false,
            hasty,
        },
        _ => Outcome::Skipped {
            cancelled: true,
            hasty,
        },
    }
}

/// Withdraws a card still on the client's screen when its call ends first (the call was
/// cancelled): the client is told its form request is cancelled.
struct Withdraw {
    peer: Peer<RoleServer>,
    id: Option<RequestId>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        let notice = CancelledNotificationParam::new(
            Some(id),
            Some("the call that asked was cancelled".into()),
        );
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                let _ = peer.notify_cancelled(notice).await;
            });
        }
    }
}

impl ElicitPort {
    async fn elicit(&self, card: &Card, timeout: Duration) -> Outcome {
        let params = match form_params(card) {
            Ok(params) => params,
            Err(why) => return Outcome::Unavailable(why),
        };
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        let options = PeerRequestOptions::with_timeout(timeout);
        let asked = std::time::Instant::now();
        let handle = match self.peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(e) => {
                return Outcome::Unavailable(format!("the client did not take the card: {e}"));
            }
        };
        let mut withdraw = Withdraw {
            peer: self.peer.clone(),
            id: Some(handle.id.clone()),
        };
        let answer = handle.await_response().await;
        withdraw.id = None;
        match answer {
            Ok(ClientResult::ElicitResult(result)) => {
                outcome_of(card, result, asked.elapsed() < HASTY)
            }
            Ok(_) => {
                Outcome::Unavailable("the client answered the card with something else".into())
            }
            Err(ServiceError::Timeout { .. }) => Outcome::TimedOut,
            Err(e) => Outcome::Unavailable(format!("the client did not take the card: {e}")),
        }
    }
}

impl QuestionPort for ElicitPort {
    fn ask(&self, card: Card, timeout: Duration) -> BoxFuture<'_, Outcome> {
        Box::pin(async move {
            let end = std::time::Instant::now() + timeout;
            let first = self.elicit(&card, timeout).await;
            let Outcome::Invalid(sent) = &first else {
                return first;
            };
            // Asked again once, saying what was wrong; a second invalid answer is final.
            let mut again = card.clone();
            let note = format!("The answer {sent} is not one of the options; choose one of them.");
            again.context = Some(match &card.context {
                Some(context) => format!("{note}\n{context}"),
                None => note,
            });
            self.elicit(
                &again,
                end.saturating_duration_since(std::time::Instant::now()),
            )
            .await
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tether_tool::CardOption;

    fn card(multi: bool, free: bool, described: bool) -> Card {
        Card {
            id: "q1".into(),
            question: "Which?".into(),
            context: None,
            options: ["a", "b"]
                .iter()
                .map(|l| CardOption {
                    label: l.to_string(),
                    description: described.then(|| format!("about {l}")),
                })
                .collect(),
            allow_free_text: free,
            multi_select: multi,
        }
    }

    #[test]
    fn every_kind_of_card_makes_a_form_rmcp_accepts() {
        for multi in [false, true] {
            for free in [false, true] {
                for described in [false, true] {
                    let form = form(&card(multi, free, described));
                    let parsed: Result<ElicitationSchema, _> = serde_json::from_value(form.clone());
                    assert!(parsed.is_ok(), "{form}: {parsed:?}");
                }
            }
        }
        let mut text_only = card(false, true, false);
        text_only.options.clear();
        assert!(serde_json::from_value::<ElicitationSchema>(form(&text_only)).is_ok());
    }

    #[test]
    fn answers_are_read_back_by_label() {
        let c = card(true, true, false);
        let got = read_answer(&c, Some(json!({"choice": ["b", "a"], "answer": " more "})));
        assert_eq!(
            got,
            Outcome::Answered {
                chosen: vec![1, 0],
                text: Some("more".into())
            }
        );
        let one = read_answer(&card(false, false, false), Some(json!({"choice": "b"})));
        assert_eq!(
            one,
            Outcome::Answered {
                chosen: vec![1],
                text: None
            }
        );
    }
}
