//! The Debug Adapter Protocol's envelope: every message numbered by `seq`, answers matched by
//! `request_seq`, events in place of notifications, and a `cancel` request for one we gave
//! up on, sent only to an adapter that said it takes one.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value, json};

use crate::rpc::{Envelope, Id, Inbound, Numbers, Reply, ResponseError};

/// The DAP envelope.
#[derive(Debug, Default)]
pub struct Dap {
    cancels: AtomicBool,
}

impl Dap {
    /// An envelope that sends no `cancel` until [`Dap::set_cancels`] says the adapter takes it.
    pub fn new() -> Self {
        Dap::default()
    }

    /// Whether the adapter takes `cancel` (its `supportsCancelRequest`).
    pub fn set_cancels(&self, yes: bool) {
        self.cancels.store(yes, Ordering::Relaxed);
    }
}

impl Envelope for Dap {
    fn request(&self, id: i64, method: &str, params: Value) -> Value {
        json!({"seq": id, "type": "request", "command": method, "arguments": params})
    }

    fn cancel(&self, id: i64, numbers: &Numbers) -> Option<Value> {
        if !self.cancels.load(Ordering::Relaxed) {
            return None;
        }
        let arguments = json!({"requestId": id});
        Some(self.request(numbers.next(), "cancel", arguments))
    }

    fn answer(&self, reply_to: Value, method: &str, reply: Reply, numbers: &Numbers) -> Value {
        let mut answer = Map::new();
        answer.insert("seq".into(), numbers.next().into());
        answer.insert("type".into(), "response".into());
        answer.insert("request_seq".into(), reply_to);
        answer.insert("command".into(), method.into());
        match reply {
            Ok(body) => {
                answer.insert("success".into(), true.into());
                if !body.is_null() {
                    answer.insert("body".into(), body);
                }
            }
            Err(e) => {
                answer.insert("success".into(), false.into());
                answer.insert("message".into(), e.message.into());
                if let Some(body) = e.data {
                    answer.insert("body".into(), body);
                }
            }
        }
        Value::Object(answer)
    }

    fn read(&self, body: &[u8]) -> Result<Inbound, serde_json::Error> {
        let mut message: Value = serde_json::from_slice(body)?;
        let take = |message: &mut Value, key: &str| {
            message.get_mut(key).map(Value::take).unwrap_or(Value::Null)
        };
        let text = |message: &Value, key: &str| {
            message.get(key).and_then(Value::as_str).map(str::to_string)
        };
        Ok(match message.get("type").and_then(Value::as_str) {
            Some("response") => {
                let Some(seq) = message.get("request_seq").and_then(Value::as_i64) else {
                    return Ok(Inbound::Ignored("a response without request_seq"));
                };
                let success = message.get("success").and_then(Value::as_bool) == Some(true);
                let body = take(&mut message, "body");
                let reply = match success {
                    true => Ok(body.into()),
                    false => Err(ResponseError {
                        code: body["error"]["id"].as_i64().unwrap_or(0),
                        message: text(&message, "message").unwrap_or_else(|| "failed".into()),
                        data: (!body.is_null()).then_some(body),
                    }),
                };
                Inbound::Response {
                    id: Id::Int(seq),
                    reply,
                }
            }
            Some("event") => match text(&message, "event") {
                Some(method) => Inbound::Notification {
                    method,
                    params: take(&mut message, "body").into(),
                },
                None => Inbound::Ignored("an event without a name"),
            },
            Some("request") => Inbound::Request {
                method: text(&message, "command").unwrap_or_default(),
                params: take(&mut message, "arguments"),
                reply_to: take(&mut message, "seq"),
            },
            _ => Inbound::Ignored("a message of no known type"),
        })
    }
}
