//! A JSON-RPC 2.0 peer over framed streams, as a language server speaks it: our requests each
//! carry a deadline and may be cancelled, the other side's requests are answered, its
//! notifications are handed over in order, and when the stream ends every pending request
//! fails at once with the reason.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::frame::{FrameError, read_frame, write_frame};

/// A boxed, sendable future, for the object-safe [`Incoming`].
pub type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;

/// What a request came back with: its result or the error object the other side sent.
pub type Reply = Result<Value, ResponseError>;

/// The `error` member of a JSON-RPC response.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} (code {code})")]
pub struct ResponseError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// What went wrong, in the other side's words.
    pub message: String,
    /// Anything else it sent.
    pub data: Option<Value>,
}

impl ResponseError {
    /// The standard "method not found" answer, for requests we do not serve.
    pub fn method_not_found(method: &str) -> Self {
        ResponseError {
            code: -32601,
            message: format!("`{method}` is not handled by this client"),
            data: None,
        }
    }
}

/// Why one of our requests has no result.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RpcError {
    /// No answer came before the deadline; the other side was told to cancel, if it can be.
    #[error("`{method}` got no answer within {} ms", after.as_millis())]
    Timeout {
        /// The request's method.
        method: String,
        /// The deadline that passed.
        after: Duration,
    },
    /// The caller gave up; the other side was told to cancel, if it can be.
    #[error("`{method}` was cancelled")]
    Cancelled {
        /// The request's method.
        method: String,
    },
    /// The other side answered with an error.
    #[error("`{method}` failed: {error}")]
    Remote {
        /// The request's method.
        method: String,
        /// What it sent.
        error: ResponseError,
    },
    /// The connection ended (or was never usable) before an answer came.
    #[error("`{method}` got no answer: {why}")]
    Closed {
        /// The request's method.
        method: String,
        /// Why the connection ended.
        why: String,
    },
}

/// What the other side asks of us. Notifications are handed over one at a time, in the order
/// they arrived, so a handler should be quick; requests are answered on tasks of their own.
pub trait Incoming: Send + Sync + 'static {
    /// Answers a request from the other side.
    fn request(&self, method: &str, params: Value) -> BoxFuture<Reply>;
    /// Takes a notification from the other side.
    fn notification(&self, method: &str, params: Value);
}

type Writer = Box<dyn AsyncWrite + Unpin + Send>;

struct Shared {
    writer: tokio::sync::Mutex<Writer>,
    pending: Mutex<HashMap<i64, oneshot::Sender<Reply>>>,
    next_id: AtomicI64,
    /// Why the connection ended, once it has.
    closed: Mutex<Option<String>>,
    /// The notification that asks the other side to drop a request (`$/cancelRequest`).
    cancel_method: Option<&'static str>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One end of a JSON-RPC connection. Cheap to clone; clones share the connection.
#[derive(Clone)]
pub struct Peer {
    shared: Arc<Shared>,
}

impl Peer {
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
        let shared = Arc::new(Shared {
            writer: tokio::sync::Mutex::new(Box::new(output)),
            pending: Mutex::default(),
            next_id: AtomicI64::new(1),
            closed: Mutex::default(),
            cancel_method,
        });
        tokio::spawn(read_loop(BufReader::new(input), shared.clone(), incoming));
        Peer { shared }
    }

    /// Why the connection ended, if it has.
    pub fn closed(&self) -> Option<String> {
        lock(&self.shared.closed).clone()
    }

    /// Sends a request and waits for its answer, at most `deadline`.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        deadline: Duration,
    ) -> Result<Value, RpcError> {
        self.request_until(method, params, deadline, &CancellationToken::new())
            .await
    }

    /// Like [`Peer::request`], also ended by `cancel`.
    pub async fn request_until(
        &self,
        method: &str,
        params: Value,
        deadline: Duration,
        cancel: &CancellationToken,
    ) -> Result<Value, RpcError> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id, tx);
        if let Some(why) = self.closed() {
            lock(&self.shared.pending).remove(&id);
            return Err(closed(method, why));
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if let Err(e) = self.send(&message).await {
            lock(&self.shared.pending).remove(&id);
            return Err(closed(method, format!("cannot write to it ({e})")));
        }
        let gave_up = tokio::select! {
            reply = rx => return match reply {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(error)) => Err(RpcError::Remote { method: method.into(), error }),
                Err(_) => Err(closed(method, self.closed().unwrap_or_else(|| "it ended".into()))),
            },
            _ = tokio::time::sleep(deadline) => RpcError::Timeout { method: method.into(), after: deadline },
            _ = cancel.cancelled() => RpcError::Cancelled { method: method.into() },
        };
        lock(&self.shared.pending).remove(&id);
        if let Some(cancel_method) = self.shared.cancel_method {
            // Best effort: the other side may already be gone.
            let _ = self.notify(cancel_method, json!({"id": id})).await;
        }
        Err(gave_up)
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), RpcError> {
        if let Some(why) = self.closed() {
            return Err(closed(method, why));
        }
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send(&message)
            .await
            .map_err(|e| closed(method, format!("cannot write to it ({e})")))
    }

    async fn send(&self, message: &Value) -> std::io::Result<()> {
        send(&self.shared, message).await
    }
}

fn closed(method: &str, why: String) -> RpcError {
    RpcError::Closed {
        method: method.into(),
        why,
    }
}

async fn send(shared: &Shared, message: &Value) -> std::io::Result<()> {
    let body = serde_json::to_vec(message)?;
    let mut writer = shared.writer.lock().await;
    write_frame(&mut *writer, &body).await
}

/// Reads messages until the stream ends or turns to garbage, then fails what is pending.
async fn read_loop<R>(mut input: BufReader<R>, shared: Arc<Shared>, incoming: Arc<dyn Incoming>)
where
    R: AsyncRead + Unpin + Send,
{
    let why = loop {
        let body = match read_frame(&mut input).await {
            Ok(body) => body,
            Err(FrameError::Closed) => break "the other side closed the connection".to_string(),
            Err(e) => break e.to_string(),
        };
        match serde_json::from_slice::<Value>(&body) {
            Ok(message) => dispatch(&shared, &incoming, message),
            Err(e) => break format!("garbage on the wire: a message that is not JSON ({e})"),
        }
    };
    tracing::debug!("JSON-RPC connection ended: {why}");
    *lock(&shared.closed) = Some(why);
    // Dropping the senders wakes every waiting request with the reason.
    lock(&shared.pending).clear();
}

fn dispatch(shared: &Arc<Shared>, incoming: &Arc<dyn Incoming>, mut message: Value) {
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let params = message
        .get_mut("params")
        .map(Value::take)
        .unwrap_or(Value::Null);
    match (method, message.get("id").cloned()) {
        (Some(method), Some(id)) => {
            let answer = incoming.request(&method, params);
            let shared = shared.clone();
            tokio::spawn(async move {
                let reply = match answer.await {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": e.code, "message": e.message, "data": e.data}}),
                };
                if let Err(e) = send(&shared, &reply).await {
                    tracing::debug!("cannot answer `{method}`: {e}");
                }
            });
        }
        (Some(method), None) => incoming.notification(&method, params),
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else { return };
            let Some(waiter) = lock(&shared.pending).remove(&id) else {
                return; // a late answer to a request we gave up on
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
            let _ = waiter.send(reply);
        }
        (None, None) => tracing::debug!("ignored a message with neither method nor id"),
    }
}
