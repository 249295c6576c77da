//! One request/response engine over framed streams, for every protocol tether speaks to a
//! child: our requests each carry a deadline and may be cancelled (the entry goes, and the
//! other side is told when its protocol can be), the other side's requests are answered, its
//! notifications or events are handed over in order, and when the stream ends every pending
//! request fails at once with the reason. What differs between JSON-RPC and the Debug Adapter
//! Protocol is only the [`Envelope`]: how a message is numbered, addressed and told apart.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tether_base::lock;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::frame::{FrameError, append_frame, read_frame_into};
use crate::payload::Payload;

#[cfg(test)]
mod tests;

/// A boxed, sendable future, for the object-safe [`Incoming`].
pub type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;

/// Our answer to the other side's request: its result or an error.
pub type Reply = Result<Value, ResponseError>;

/// What one of our requests came back with: its result, as read, or the error the other
/// side sent.
pub type Answer = Result<Payload, ResponseError>;

/// An error answer from the other side (JSON-RPC's `error` member; for DAP, a response with
/// `success: false`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} (code {code})")]
pub struct ResponseError {
    /// The JSON-RPC error code (see [`crate::codes`]); for DAP, its error message's id, else 0.
    pub code: i64,
    /// What went wrong, in the other side's words.
    pub message: String,
    /// Anything else it sent (for DAP, the response's body).
    pub data: Option<Value>,
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
    /// The message could not be written: the other side no longer reads.
    #[error("`{method}` got no answer: cannot write to it ({error})")]
    Write {
        /// The request's method.
        method: String,
        /// The write's error.
        error: String,
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

/// What the other side asks of us. Notifications (DAP: events) are handed over one at a time,
/// in the order they arrived and before any answer read after them, so a handler should be
/// quick; requests are answered on tasks of their own.
pub trait Incoming: Send + Sync + 'static {
    /// Answers a request from the other side.
    fn request(&self, method: &str, params: Value) -> BoxFuture<Reply>;
    /// Takes a notification (or event) from the other side.
    fn notification(&self, method: &str, params: Payload);
    /// The connection ended, after every pending request was failed; waiters may look again.
    fn closed(&self, _why: &str) {}
}

/// A message id as the other side sent it: JSON-RPC allows numbers and strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    /// A number (every id tether mints is one).
    Int(i64),
    /// A string.
    Str(String),
}

impl Id {
    /// Reads an id; `None` for anything but a number or a string.
    pub fn from_value(value: &Value) -> Option<Id> {
        match value {
            Value::Number(n) => n.as_i64().map(Id::Int),
            Value::String(s) => Some(Id::Str(s.clone())),
            _ => None,
        }
    }

    /// The number of one of our requests this id names: a server that echoes `7` as `"7"`
    /// still answers request 7.
    pub fn number(&self) -> Option<i64> {
        match self {
            Id::Int(n) => Some(*n),
            Id::Str(s) => s.trim().parse().ok(),
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Int(n) => write!(f, "{n}"),
            Id::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// One message read, as its envelope tells it.
#[derive(Debug)]
pub enum Inbound {
    /// An answer to one of our requests.
    Response {
        /// Which request it answers.
        id: Id,
        /// What it says.
        reply: Answer,
    },
    /// A request from the other side; `reply_to` is what its answer must carry back.
    Request {
        /// Its method (DAP: command).
        method: String,
        /// Its parameters (DAP: arguments).
        params: Value,
        /// The envelope's own address for the answer (the JSON-RPC id, the DAP seq).
        reply_to: Value,
    },
    /// A notification (DAP: an event, by name, with its body).
    Notification {
        /// Its method or event name.
        method: String,
        /// Its parameters or body.
        params: Payload,
    },
    /// Nothing to act on, and why.
    Ignored(&'static str),
}

/// The sequence numbers of one connection's outgoing messages.
#[derive(Debug)]
pub struct Numbers(AtomicI64);

impl Numbers {
    /// The next number, never given before on this connection.
    pub fn next(&self) -> i64 {
        self.0.fetch_add(1, Ordering::Relaxed)
    }
}

/// How one protocol wraps its messages; the engine does the rest.
pub trait Envelope: Send + Sync + 'static {
    /// Our request numbered `id`.
    fn request(&self, id: i64, method: &str, params: Value) -> Value;
    /// The message asking the other side to drop our request `id`, if it can be asked.
    fn cancel(&self, id: i64, numbers: &Numbers) -> Option<Value>;
    /// Our answer to the other side's request.
    fn answer(&self, reply_to: Value, method: &str, reply: Reply, numbers: &Numbers) -> Value;
    /// Tells what a message read is; an error for one that is not JSON.
    fn read(&self, body: &[u8]) -> Result<Inbound, serde_json::Error>;
}

/// A frame for the writer task, and where to say how its write went.
type Outgoing = (Vec<u8>, oneshot::Sender<std::io::Result<()>>);

struct Shared<E> {
    envelope: E,
    /// Frames go out through one task, whole: a caller that gives up while its message is
    /// being written (a pipe full while the other side is busy) must not leave half a frame,
    /// which would garble every message after it.
    outbox: tokio::sync::mpsc::UnboundedSender<Outgoing>,
    pending: Mutex<HashMap<i64, oneshot::Sender<Answer>>>,
    numbers: Numbers,
    /// Why the connection ended, once it has.
    closed: Mutex<Option<String>>,
}

/// One end of a connection spoken in envelope `E`. Cheap to clone; clones share it.
pub struct Engine<E> {
    shared: Arc<Shared<E>>,
}

impl<E> Clone for Engine<E> {
    fn clone(&self) -> Self {
        Engine {
            shared: self.shared.clone(),
        }
    }
}

/// A request sent whose answer is awaited later (DAP's `launch` is answered only after
/// `configurationDone` by some adapters). Dropped unawaited, it leaves nothing pending.
pub struct Pending<E: Envelope> {
    engine: Engine<E>,
    id: i64,
    method: String,
    answer: Option<oneshot::Receiver<Answer>>,
}

impl<E: Envelope> Engine<E> {
    /// Starts reading `input` on a task of its own, speaking `envelope`; what the other side
    /// sends of its own goes to `incoming`.
    pub fn connect<R, W>(envelope: E, input: R, output: W, incoming: Arc<dyn Incoming>) -> Self
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (outbox, frames) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(write_loop(output, frames));
        let shared = Arc::new(Shared {
            envelope,
            outbox,
            pending: Mutex::default(),
            numbers: Numbers(AtomicI64::new(1)),
            closed: Mutex::default(),
        });
        // A server's messages run to tens of kilobytes (a file's diagnostics), and each read
        // of a smaller buffer is another system call.
        let input = BufReader::with_capacity(READ_BUFFER, input);
        tokio::spawn(read_loop(input, shared.clone(), incoming));
        Engine { shared }
    }

    /// The envelope, for the settings a protocol negotiates later.
    pub fn envelope(&self) -> &E {
        &self.shared.envelope
    }

    /// Why the connection ended, if it has.
    pub fn closed(&self) -> Option<String> {
        lock(&self.shared.closed).clone()
    }

    /// Records why the connection is unusable, unless a reason is known already (a failed
    /// write says the other side is gone before its output ends).
    pub fn mark_closed(&self, why: String) {
        lock(&self.shared.closed).get_or_insert(why);
    }

    /// Sends a request and returns at once; its answer is awaited with [`Pending::wait`].
    pub async fn send(&self, method: &str, params: Value) -> Result<Pending<E>, RpcError> {
        let id = self.shared.numbers.next();
        let (tx, rx) = oneshot::channel();
        // Listed before the check, so a close that comes between fails it rather than loses it.
        lock(&self.shared.pending).insert(id, tx);
        let mut pending = Pending {
            engine: self.clone(),
            id,
            method: method.to_string(),
            answer: Some(rx),
        };
        if let Some(why) = self.closed() {
            pending.forget();
            return Err(closed(method, why));
        }
        let message = self.shared.envelope.request(id, method, params);
        if let Err(e) = send(&self.shared, &message).await {
            pending.forget();
            return Err(RpcError::Write {
                method: method.into(),
                error: e.to_string(),
            });
        }
        Ok(pending)
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

    /// Like [`Engine::request`], its result as read: for an answer its reader parses itself.
    pub async fn request_payload(
        &self,
        method: &str,
        params: Value,
        deadline: Duration,
    ) -> Result<Payload, RpcError> {
        self.send(method, params)
            .await?
            .wait_payload(deadline, &CancellationToken::new())
            .await
    }

    /// Like [`Engine::request`], also ended by `cancel`.
    pub async fn request_until(
        &self,
        method: &str,
        params: Value,
        deadline: Duration,
        cancel: &CancellationToken,
    ) -> Result<Value, RpcError> {
        self.send(method, params)
            .await?
            .wait(deadline, cancel)
            .await
    }

    /// Writes one message as it is.
    pub(crate) async fn send_raw(&self, message: &Value) -> std::io::Result<()> {
        send(&self.shared, message).await
    }

    /// How many of our requests await an answer.
    #[cfg(test)]
    fn pending_count(&self) -> usize {
        lock(&self.shared.pending).len()
    }
}

impl<E: Envelope> Pending<E> {
    /// The answer, within `deadline` and until `cancel`; a request given up on is dropped
    /// from the pending list and the other side told, when its protocol can be.
    pub async fn wait(
        self,
        deadline: Duration,
        cancel: &CancellationToken,
    ) -> Result<Value, RpcError> {
        self.wait_payload(deadline, cancel)
            .await
            .map(Payload::into_value)
    }

    /// Like [`Pending::wait`], the result as read.
    pub async fn wait_payload(
        mut self,
        deadline: Duration,
        cancel: &CancellationToken,
    ) -> Result<Payload, RpcError> {
        let Some(answer) = self.answer.take() else {
            return Err(closed(&self.method, "it was already awaited".into()));
        };
        let method = self.method.clone();
        let gave_up = tokio::select! {
            reply = answer => return match reply {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(error)) => Err(RpcError::Remote { method, error }),
                Err(_) => {
                    let why = self.engine.closed().unwrap_or_else(|| "it ended".into());
                    Err(closed(&method, why))
                }
            },
            _ = tokio::time::sleep(deadline) => RpcError::Timeout { method, after: deadline },
            _ = cancel.cancelled() => RpcError::Cancelled { method },
        };
        self.forget();
        let shared = &self.engine.shared;
        if let Some(message) = shared.envelope.cancel(self.id, &shared.numbers) {
            // Best effort: the other side may already be gone.
            if self.engine.closed().is_none() {
                let _ = send(shared, &message).await;
            }
        }
        Err(gave_up)
    }

    /// Drops the pending entry: a late answer is then ignored.
    fn forget(&mut self) {
        lock(&self.engine.shared.pending).remove(&self.id);
        self.answer = None;
    }
}

impl<E: Envelope> Drop for Pending<E> {
    fn drop(&mut self) {
        if self.answer.is_some() {
            self.forget();
        }
    }
}

fn closed(method: &str, why: String) -> RpcError {
    RpcError::Closed {
        method: method.into(),
        why,
    }
}

/// Queues `message` for the writer task and waits until it is written. It is queued before
/// the first wait, so a caller dropped at any await still has it go out whole.
async fn send<E>(shared: &Shared<E>, message: &Value) -> std::io::Result<()> {
    let written = enqueue(shared, message)?;
    written.await.unwrap_or_else(|_| Err(writer_ended()))
}

/// Puts `message` in the writer's queue; the receiver says how its write went.
fn enqueue<E>(
    shared: &Shared<E>,
    message: &Value,
) -> std::io::Result<oneshot::Receiver<std::io::Result<()>>> {
    let body = serde_json::to_vec(message)?;
    let (done, written) = oneshot::channel();
    shared
        .outbox
        .send((body, done))
        .map_err(|_| writer_ended())?;
    Ok(written)
}

fn writer_ended() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the writer has ended")
}

/// Queues the answer `reply` to the request `reply_to` (of `method`); the receiver says how
/// its write went, `None` when it could not be queued (said in the log: an answer has no one
/// else to tell).
fn answer_request<E: Envelope>(
    shared: &Shared<E>,
    reply_to: Value,
    method: &str,
    reply: Reply,
) -> Option<oneshot::Receiver<std::io::Result<()>>> {
    let message = shared
        .envelope
        .answer(reply_to, method, reply, &shared.numbers);
    enqueue(shared, &message)
        .inspect_err(|e| tracing::debug!("cannot answer `{method}`: {e}"))
        .ok()
}

/// Writes each queued frame in order until every sender is gone, then drops `output`, which
/// closes the other side's input.
async fn write_loop<W>(mut output: W, mut frames: tokio::sync::mpsc::UnboundedReceiver<Outgoing>)
where
    W: AsyncWrite + Unpin,
{
    while let Some(first) = frames.recv().await {
        // Frames queued meanwhile (a write's pulls, sent at once) go out in the same write.
        let mut bytes = first.0.len();
        let mut batch = vec![first];
        while bytes < BATCH_BYTES {
            let Ok(next) = frames.try_recv() else {
                break;
            };
            bytes += next.0.len();
            batch.push(next);
        }
        let mut out = Vec::with_capacity(bytes + 32 * batch.len());
        for (body, _) in &batch {
            append_frame(&mut out, body);
        }
        let written = match output.write_all(&out).await {
            Ok(()) => output.flush().await,
            Err(e) => Err(e),
        };
        for (_, done) in batch {
            let each = match &written {
                Ok(()) => Ok(()),
                Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
            };
            let _ = done.send(each);
        }
    }
}

/// How many bytes of queued frames one write takes at most.
const BATCH_BYTES: usize = 256 * 1024;

/// The largest message body whose room the reader keeps for the next message.
const KEPT_BODY: usize = 1 << 20;

/// How much of the other side's output one read takes at most.
const READ_BUFFER: usize = 64 * 1024;

/// Reads messages until the stream ends or turns to garbage, then fails what is pending.
async fn read_loop<R, E>(
    mut input: BufReader<R>,
    shared: Arc<Shared<E>>,
    incoming: Arc<dyn Incoming>,
) where
    R: AsyncRead + Unpin + Send,
    E: Envelope,
{
    let mut body = Vec::new();
    let why = loop {
        match read_frame_into(&mut input, &mut body).await {
            Ok(()) => {}
            Err(FrameError::Closed) => break "the other side closed the connection".to_string(),
            Err(e) => break e.to_string(),
        };
        match shared.envelope.read(&body) {
            Ok(message) => dispatch(&shared, &incoming, message),
            Err(e) => break format!("garbage on the wire: a message that is not JSON ({e})"),
        }
        // One huge message does not keep its room for the rest of the connection.
        if body.capacity() > KEPT_BODY {
            body = Vec::new();
        }
    };
    tracing::debug!("connection ended: {why}");
    // The reason is set first, so every woken waiter finds it; it replaces a guess made when
    // a write failed, as the end of the output says what happened.
    *lock(&shared.closed) = Some(why.clone());
    // Dropping the senders wakes every waiting request.
    lock(&shared.pending).clear();
    incoming.closed(&why);
}

fn dispatch<E: Envelope>(shared: &Arc<Shared<E>>, incoming: &Arc<dyn Incoming>, message: Inbound) {
    match message {
        Inbound::Response { id, reply } => {
            let waiter = id.number().and_then(|n| lock(&shared.pending).remove(&n));
            match waiter {
                Some(waiter) => {
                    let _ = waiter.send(reply);
                }
                // A late answer to a request we gave up on, or to none of ours.
                None => tracing::debug!("ignored an answer to {id}, which nothing awaits"),
            }
        }
        Inbound::Request {
            method,
            params,
            reply_to,
        } => {
            let mut answer = incoming.request(&method, params);
            // Most answers are ready at once (a progress token accepted, a setting read): those
            // are queued here rather than through a task of their own.
            let mut at_once = std::task::Context::from_waker(std::task::Waker::noop());
            if let std::task::Poll::Ready(reply) =
                std::future::Future::poll(answer.as_mut(), &mut at_once)
            {
                answer_request(shared, reply_to, &method, reply);
                return;
            }
            let shared = shared.clone();
            tokio::spawn(async move {
                let reply = answer.await;
                let Some(written) = answer_request(&shared, reply_to, &method, reply) else {
                    return;
                };
                if let Err(e) = written.await.unwrap_or_else(|_| Err(writer_ended())) {
                    tracing::debug!("cannot answer `{method}`: {e}");
                }
            });
        }
        Inbound::Notification { method, params } => incoming.notification(&method, params),
        Inbound::Ignored(why) => tracing::debug!("ignored a message: {why}"),
    }
}
