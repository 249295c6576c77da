//! JSON-RPC 2.0 as language servers speak it: numbered requests, ids of the other side's own
//! requests echoed whatever their kind, and a notification (`$/cancelRequest`) that asks the
//! other side to drop a request we gave up on.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};

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

    fn read(&self, mut message: Value) -> Inbound {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string);
        let params = message
            .get_mut("params")
            .map(Value::take)
            .unwrap_or(Value::Null);
        match (method, message.get_mut("id").map(Value::take)) {
            // The id goes back as it came, whatever its kind.
            (Some(method), Some(reply_to)) => Inbound::Request {
                method,
                params,
                reply_to,
            },
            (Some(method), None) => Inbound::Notification { method, params },
            (None, Some(id)) => {
                let Some(id) = Id::from_value(&id) else {
                    return Inbound::Ignored("an answer whose id is neither a number nor a string");
                };
                let reply = match message.get_mut("error").map(Value::take) {
                    Some(error) => Err(ResponseError {
                        code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                        message: error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("no message")
                            .to_string(),
                        data: error.get("data").cloned(),
                    }),
                    None => Ok(message
                        .get_mut("result")
                        .map(Value::take)
                        .unwrap_or(Value::Null)),
                };
                Inbound::Response { id, reply }
            }
            (None, None) => Inbound::Ignored("a message with neither method nor id"),
        }
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
