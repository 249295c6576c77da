//! The session's connection to its adapter: tether-proc's request engine in the DAP envelope
//! (`seq`/`request_seq`, `cancel` for an adapter that takes it), with the adapter's events
//! handed to the session in order (each before any later answer) and its own requests refused
//! (tether runs no terminal for it). Errors become the sentences a session shows.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tether_proc::{BoxFuture, Dap, Engine, Incoming, Reply, ResponseError, RpcError};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::protocol::{self, Event};

/// One end of a DAP connection; clones share it.
#[derive(Clone)]
pub struct DapPeer {
    engine: Engine<Dap>,
}

/// A request sent whose answer is awaited later (`launch` is answered only after
/// `configurationDone` by some adapters).
pub struct Pending {
    inner: tether_proc::Pending<Dap>,
}

impl Pending {
    /// The answer's body, within `limit`.
    pub async fn within(self, limit: Duration) -> Result<Value, String> {
        self.inner
            .wait(limit, &CancellationToken::new())
            .await
            .map_err(said)
    }
}

/// Takes the adapter's events as they are read, so what they say is known before any answer
/// read after them is handed out, and no waiter has to hold a queue to learn of them.
pub trait Listener: Send + Sync + 'static {
    /// One event, in the order the adapter sent it.
    fn event(&self, event: &Event);
    /// The connection ended; waiters should look again.
    fn closed(&self);
}

/// The engine's view of the session: events to the listener, the adapter's requests refused.
struct Adapter {
    listener: Arc<dyn Listener>,
}

impl Incoming for Adapter {
    fn request(&self, _command: &str, _arguments: Value) -> BoxFuture<Reply> {
        // runInTerminal, startDebugging: tether has no terminal to offer.
        let refusal = ResponseError {
            code: 0,
            message: "tether does not run a terminal or child sessions for the adapter".into(),
            data: None,
        };
        Box::pin(async move { Err(refusal) })
    }

    fn notification(&self, event: &str, body: tether_proc::Payload) {
        self.listener.event(&Event::read(event, body.into_value()));
    }

    fn closed(&self, _why: &str) {
        self.listener.closed();
    }
}

impl DapPeer {
    /// Starts reading `input`; events go to `listener` in the order they came.
    pub fn start<R, W>(input: R, output: W, listener: Arc<dyn Listener>) -> DapPeer
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let adapter = Arc::new(Adapter { listener });
        DapPeer {
            engine: Engine::connect(Dap::new(), input, output, adapter),
        }
    }

    /// Why the connection ended, if it has.
    pub fn closed(&self) -> Option<String> {
        self.engine.closed()
    }

    /// Takes what the adapter announced: a request given up on is then cancelled, if it can be.
    pub fn negotiated(&self, capabilities: &protocol::Capabilities) {
        self.engine
            .envelope()
            .set_cancels(capabilities.supports_cancel_request);
    }

    /// Sends a request and returns at once; its answer is awaited with [`Pending::within`].
    pub async fn send(&self, command: &str, arguments: impl Serialize) -> Result<Pending, String> {
        let arguments = serde_json::to_value(arguments)
            .map_err(|e| format!("`{command}` not sent: its arguments are not JSON ({e})"))?;
        match self.engine.send(command, arguments).await {
            Ok(inner) => Ok(Pending { inner }),
            Err(RpcError::Write { error, .. }) => {
                // A write that fails means the adapter is gone, even before its output says so.
                self.engine
                    .mark_closed(format!("it stopped reading its input: {error}"));
                Err(format!("`{command}` not sent: {error}"))
            }
            Err(RpcError::Closed { why, .. }) => Err(format!("`{command}` not sent: {why}")),
            Err(e) => Err(said(e)),
        }
    }

    /// Sends a request and waits for its answer's body, within `limit`.
    pub async fn request(
        &self,
        command: &str,
        arguments: impl Serialize,
        limit: Duration,
    ) -> Result<Value, String> {
        self.send(command, arguments).await?.within(limit).await
    }

    /// Like [`DapPeer::request`], the body read as `T`.
    pub async fn ask<T: DeserializeOwned + Default>(
        &self,
        command: &str,
        arguments: impl Serialize,
        limit: Duration,
    ) -> Result<T, String> {
        self.request(command, arguments, limit)
            .await
            .map(protocol::read)
    }
}

/// The sentence a session shows for a request that got no answer's body.
fn said(error: RpcError) -> String {
    match error {
        RpcError::Remote { method, error } => {
            let short = error.message;
            let detail = error
                .data
                .as_ref()
                .and_then(|body| body["error"]["format"].as_str());
            match detail {
                Some(detail) if detail != short => format!("`{method}` failed: {short}: {detail}"),
                _ => format!("`{method}` failed: {short}"),
            }
        }
        RpcError::Closed { why, .. } => format!("the adapter went away: {why}"),
        other => other.to_string(),
    }
}
