//! JSON-RPC 2.0 as language servers speak it: numbered requests, ids of the other side's own
//! requests echoed whatever their kind, and a notification (`$/cancelRequest`) that asks the
//! other side to drop a request we gave up on.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::payload::Payload;
use crate::rpc::{
    Engine, Envelope, Id, Inbound, Incoming, Numbers, Reply, ResponseError, RpcError,
};

/// The error codes tether reads or sends, named (JSON-RPC 2.0 and the LSP's own).
pub mod codes {
    /// The message is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The message is not a valid request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The other side has no such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The parameters do not fit the method.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The other side failed inside.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// LSP: the client cancelled the request.
    pub const REQUEST_CANCELLED: i64 = -32800;
    /// LSP: the document or project changed under the request; asking again may succeed.
    pub const CONTENT_MODIFIED: i64 = -32801;
    /// LSP: the server dropped the request itself; asking again may succeed.
    pub const SERVER_CANCELLED: i64 = -32802;
}

/// The JSON-RPC 2.0 envelope; `cancel` is the notification sent (with `{"id": n}`) when a
/// request times out or is cancelled, if the protocol has one.
#[derive(Debug, Clone, Copy)]
pub struct JsonRpc {
    cancel: Option<&'static str>,
}

/// One end of a JSON-RPC connection.
pub type Peer = Engine<JsonRpc>;

impl ResponseError {
    /// The standard "method not found" answer, for requests we do not serve.
    pub fn method_not_found(method: &str) -> Self {
        ResponseError {
            code: codes::METHOD_NOT_FOUND,
            message: format!("`{method}` is not handled by this client"),
            data: None,
        }
    }
}

impl Envelope for JsonRpc {
    fn request(&self, id: i64, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    fn cancel(&self, id: i64, _numbers: &Numbers) -> Option<Value> {
        let method = self.cancel?;
        Some(json!({"jsonrpc": "2.0", "method": method, "params": {"id": id}}))
    }

    fn answer(&self, reply_to: Value, _method: &str, reply: Reply, _numbers: &Numbers) -> Value {
        match reply {
            Ok(result) => json!({"jsonrpc": "2.0", "id": reply_to, "result": result}),
            Err(e) => json!({"jsonrpc": "2.0", "id": reply_to, "error": {
                "code": e.code, "message": e.message, "data": e.data}}),
        }
    }

    fn read(&self, body: &[u8]) -> Result<Inbound, serde_json::Error> {
        // Its params or result stay text for their reader; a message of another shape (a
        // method that is no string, a key given twice) is read as a value instead.
        let Ok(message) = serde_json::from_slice::<Message>(body) else {
            return Ok(read_value(serde_json::from_slice(body)?));
        };
        let payload = |raw: Option<Box<RawValue>>| match raw {
            Some(raw) => Payload::Raw(raw),
            None => Payload::Value(Value::Null),
        };
        Ok(match (message.method, message.id) {
            // The id goes back as it came, whatever its kind.
            (Some(method), Some(reply_to)) => Inbound::Request {
                method: method.into_owned(),
                params: payload(message.params).into_value(),
                reply_to,
            },
            (Some(method), None) => Inbound::Notification {
                method: method.into_owned(),
                params: payload(message.params),
            },
            (None, Some(id)) => answer(&id, message.error, || payload(message.result)),
            (None, None) => Inbound::Ignored("a message with neither method nor id"),
        })
    }
}

/// The members of a JSON-RPC message tether reads, each kept when present even as `null`.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Box<RawValue>>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Box<RawValue>>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// An answer to the request `id`: the error it carries, else its result.
fn answer(id: &Value, error: Option<Value>, result: impl FnOnce() -> Payload) -> Inbound {
    let Some(id) = Id::from_value(id) else {
        return Inbound::Ignored("an answer whose id is neither a number nor a string");
    };
    let reply = match error {
        Some(error) => Err(ResponseError {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("no message")
                .to_string(),
            data: error.get("data").cloned(),
        }),
        None => Ok(result()),
    };
    Inbound::Response { id, reply }
}

/// Reads a message of a shape [`Message`] does not take, as a value.
fn read_value(mut message: Value) -> Inbound {
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut take = |key: &str| message.get_mut(key).map(Value::take);
    let params = take("params").unwrap_or(Value::Null);
    match (method, take("id")) {
        (Some(method), Some(reply_to)) => Inbound::Request {
            method,
            params,
            reply_to,
        },
        (Some(method), None) => Inbound::Notification {
            method,
            params: params.into(),
        },
        (None, Some(id)) => {
            let error = take("error");
            let result = take("result").unwrap_or(Value::Null);
            answer(&id, error, || result.into())
        }
        (None, None) => Inbound::Ignored("a message with neither method nor id"),
    }
}

impl Engine<JsonRpc> {
    /// Starts reading `input` on a task of its own. `cancel_method` is the notification sent
    /// (with `{"id": n}`) when a request times out or is cancelled.
    pub fn start<R, W>(
        input: R,
        output: W,
        incoming: Arc<dyn Incoming>,
        cancel_method: Option<&'static str>,
    ) -> Peer
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let envelope = JsonRpc {
            cancel: cancel_method,
        };
        Engine::connect(envelope, input, output, incoming)
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), RpcError> {
        if let Some(why) = self.closed() {
            return Err(RpcError::Closed {
                method: method.into(),
                why,
            });
        }
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_raw(&message).await.map_err(|e| RpcError::Write {
            method: method.into(),
            error: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn read(text: &str) -> Inbound {
        JsonRpc { cancel: None }.read(text.as_bytes()).unwrap()
    }

    /// Every shape of message reads as it did when the whole message was first parsed as a
    /// value: the members are kept as text only where that changes nothing.
    #[test]
    fn messages_read_alike_as_text_and_as_value() {
        let cases = [
            r#"{"jsonrpc":"2.0","id":3,"result":{"items":[{"message":"a\"b"}]}}"#,
            r#"{"jsonrpc":"2.0","id":"4","result":null}"#,
            r#"{"jsonrpc":"2.0","id":5}"#,
            r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32801,"message":"modified","data":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":1}"#,
            r#"{"jsonrpc":"2.0","method":"$/progress","params":{"token":"t"}}"#,
            r#"{"jsonrpc":"2.0","method":"exit"}"#,
            r#"{"jsonrpc":"2.0","method":"ask\u0021","id":null,"params":[1,2]}"#,
            r#"{"jsonrpc":"2.0","method":7,"id":8,"result":2}"#,
            r#"{"jsonrpc":"2.0","id":9,"result":1,"result":2}"#,
            r#"[1, 2]"#,
            r#"{}"#,
        ];
        for text in cases {
            let fast = format!("{:?}", flatten(read(text)));
            let slow = format!(
                "{:?}",
                flatten(read_value(serde_json::from_str(text).unwrap()))
            );
            assert_eq!(fast, slow, "{text}");
        }
        // A response's result stays text for its reader.
        let Inbound::Response {
            reply: Ok(Payload::Raw(raw)),
            ..
        } = read(cases[0])
        else {
            panic!("not kept as text");
        };
        assert_eq!(raw.get(), r#"{"items":[{"message":"a\"b"}]}"#);
        assert!(JsonRpc { cancel: None }.read(b"{\"id\": ").is_err());
    }

    /// The message with its payloads as values, to compare.
    fn flatten(message: Inbound) -> Inbound {
        match message {
            Inbound::Response { id, reply } => Inbound::Response {
                id,
                reply: reply.map(|p| Payload::Value(p.into_value())),
            },
            Inbound::Notification { method, params } => Inbound::Notification {
                method,
                params: Payload::Value(params.into_value()),
            },
            other => other,
        }
    }
}
