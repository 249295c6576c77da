//! The session's connection to its adapter: tether-proc's request engine in the DAP envelope
//! (`seq`/`request_seq`, `cancel` for an adapter that takes it), with the adapter's events
//! handed to the session in order (each before any later answer) and its own requests refused
//! (tether runs no terminal for it). Errors become the sentences a session shows.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tether_rpc::{BoxFuture, Dap, Engine, Incoming, Reply, ResponseError, RpcError};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::error::DapError;
use crate::protocol::{self, Event, Request};

/// One end of a DAP connection; clones share it.
#[derive(Clone)]
pub struct DapPeer {
    engine: Engine<Dap>,
}

/// A request sent whose answer, read as `T`, is awaited later (`launch` is answered only
/// after `configurationDone` by some adapters).
pub struct Pending<T> {
    inner: tether_rpc::Pending<Dap>,
    command: &'static str,
    answer: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned + Default> Pending<T> {
    /// The answer's body, within `limit`.
    pub async fn within(self, limit: Duration) -> Result<T, DapError> {
        let command = self.command;
        self.inner
            .wait(limit, &CancellationToken::new())
            .await
            .map(protocol::read)
            .map_err(|cause| unanswered(command, cause))
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

    fn notification(&self, event: &str, body: tether_rpc::Payload) {
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

    /// Sends `R` and returns at once; its answer is awaited with [`Pending::within`].
    pub async fn send<R: Request>(
        &self,
        arguments: R::Arguments,
    ) -> Result<Pending<R::Response>, DapError> {
        let command = R::COMMAND;
        let arguments = serde_json::to_value(arguments)
            .map_err(|cause| DapError::Arguments { command, cause })?;
        match self.engine.send(command, arguments).await {
            Ok(inner) => Ok(Pending {
                inner,
                command,
                answer: PhantomData,
            }),
            Err(cause) => {
                // A write that fails means the adapter is gone, even before its output says so.
                if let RpcError::Write { error, .. } = &cause {
                    self.engine
                        .mark_closed(format!("it stopped reading its input: {error}"));
                }
                Err(match cause {
                    RpcError::Write { .. } | RpcError::Closed { .. } => {
                        DapError::NotSent { command, cause }
                    }
                    cause => unanswered(command, cause),
                })
            }
        }
    }

    /// Sends `R` and waits for its answer's body, within `limit`.
    pub async fn call<R: Request>(
        &self,
        arguments: R::Arguments,
        limit: Duration,
    ) -> Result<R::Response, DapError> {
        self.send::<R>(arguments).await?.within(limit).await
    }
}

/// The error for a request that got no answer's body: the adapter's own failure, with the
/// detail its body gave, or why none came.
fn unanswered(command: &'static str, cause: RpcError) -> DapError {
    match cause {
        RpcError::Remote { error, .. } => {
            let detail = error
                .data
                .as_ref()
                .and_then(|body| body["error"]["format"].as_str())
                .filter(|detail| *detail != error.message)
                .map(str::to_string);
            DapError::Failed {
                command,
                message: error.message,
                detail,
            }
        }
        cause => DapError::Request { command, cause },
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;
    use tether_rpc::{ResponseError, RpcError};

    use super::unanswered;

    fn remote(message: &str, data: Option<serde_json::Value>) -> RpcError {
        RpcError::Remote {
            method: "evaluate".into(),
            error: ResponseError {
                code: 0,
                message: message.into(),
                data,
            },
        }
    }

    #[test]
    fn a_request_without_an_answer_says_why_as_before() {
        let detail = Some(json!({"error": {"format": "name 'x' is not defined"}}));
        assert_eq!(
            unanswered("evaluate", remote("error", detail)).to_string(),
            "`evaluate` failed: error: name 'x' is not defined"
        );
        let same = Some(json!({"error": {"format": "boom"}}));
        assert_eq!(
            unanswered("evaluate", remote("boom", same)).to_string(),
            "`evaluate` failed: boom"
        );
        assert_eq!(
            unanswered("evaluate", remote("boom", None)).to_string(),
            "`evaluate` failed: boom"
        );
        let closed = RpcError::Closed {
            method: "threads".into(),
            why: "its output ended".into(),
        };
        assert_eq!(
            unanswered("threads", closed).to_string(),
            "the adapter went away: its output ended"
        );
        let late = RpcError::Timeout {
            method: "threads".into(),
            after: Duration::from_millis(1500),
        };
        assert_eq!(
            unanswered("threads", late).to_string(),
            "`threads` got no answer within 1500 ms"
        );
    }
}
