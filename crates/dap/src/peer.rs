//! The Debug Adapter Protocol's own envelope over the shared `Content-Length` framing:
//! requests numbered by `seq` and answered by `request_seq`, events handed to the session in
//! order (each before any later answer), and the adapter's own requests refused (tether runs
//! no terminal for it).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::oneshot;

type Answer = Result<Value, String>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

struct Shared {
    writer: tokio::sync::Mutex<Box<dyn AsyncWrite + Unpin + Send>>,
    pending: Mutex<HashMap<i64, oneshot::Sender<Answer>>>,
    seq: AtomicI64,
    closed: Mutex<Option<String>>,
}

/// One end of a DAP connection; clones share it.
#[derive(Clone)]
pub struct DapPeer {
    shared: Arc<Shared>,
}

/// A request sent whose answer is awaited later (`launch` is answered only after
/// `configurationDone` by some adapters).
pub struct Pending {
    command: String,
    answer: oneshot::Receiver<Answer>,
}

impl Pending {
    /// The answer's body, within `limit`.
    pub async fn within(self, limit: Duration) -> Result<Value, String> {
        match tokio::time::timeout(limit, self.answer).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(format!(
                "`{}` got no answer: the adapter went away",
                self.command
            )),
            Err(_) => Err(format!(
                "`{}` got no answer within {} ms",
                self.command,
                limit.as_millis()
            )),
        }
    }
}

/// Takes the adapter's events as they are read, so what they say is known before any answer
/// read after them is handed out, and no waiter has to hold a queue to learn of them.
pub trait Listener: Send + Sync + 'static {
    /// One event, in the order the adapter sent it.
    fn event(&self, event: &Value);
    /// The connection ended; waiters should look again.
    fn closed(&self);
}

impl DapPeer {
    /// Starts reading `input`; events go to `listener` in the order they came.
    pub fn start<R, W>(input: R, output: W, listener: Arc<dyn Listener>) -> DapPeer
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let shared = Arc::new(Shared {
            writer: tokio::sync::Mutex::new(Box::new(output)),
            pending: Mutex::default(),
            seq: AtomicI64::new(1),
            closed: Mutex::default(),
        });
        let peer = DapPeer { shared };
        let peer_for_loop = peer.clone();
        tokio::spawn(async move {
            read_loop(BufReader::new(input), &peer_for_loop, &*listener).await;
            listener.closed();
        });
        peer
    }

    /// Why the connection ended, if it has.
    pub fn closed(&self) -> Option<String> {
        lock(&self.shared.closed).clone()
    }

    /// Sends a request and returns at once; its answer is awaited with [`Pending::within`].
    pub async fn send(&self, command: &str, arguments: Value) -> Result<Pending, String> {
        if let Some(why) = self.closed() {
            return Err(format!("`{command}` not sent: {why}"));
        }
        let seq = self.shared.seq.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        lock(&self.shared.pending).insert(seq, tx);
        let message =
            json!({"seq": seq, "type": "request", "command": command, "arguments": arguments});
        if let Err(e) = self.write(&message).await {
            lock(&self.shared.pending).remove(&seq);
            // A write that fails means the adapter is gone, even before its output says so.
            lock(&self.shared.closed)
                .get_or_insert_with(|| format!("it stopped reading its input: {e}"));
            return Err(format!("`{command}` not sent: {e}"));
        }
        Ok(Pending {
            command: command.to_string(),
            answer: rx,
        })
    }

    /// Sends a request and waits for its answer's body, within `limit`.
    pub async fn request(&self, command: &str, arguments: Value, limit: Duration) -> Answer {
        self.send(command, arguments).await?.within(limit).await
    }

    async fn write(&self, message: &Value) -> std::io::Result<()> {
        let body = message.to_string();
        let mut writer = self.shared.writer.lock().await;
        tether_proc::write_frame(&mut *writer, body.as_bytes()).await
    }

    fn close(&self, why: String) {
        *lock(&self.shared.closed) = Some(why.clone());
        for (_, waiter) in lock(&self.shared.pending).drain() {
            let _ = waiter.send(Err(format!("the adapter went away: {why}")));
        }
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    mut input: BufReader<R>,
    peer: &DapPeer,
    listener: &dyn Listener,
) {
    loop {
        let body = match tether_proc::read_frame(&mut input).await {
            Ok(body) => body,
            Err(e) => return peer.close(e.to_string()),
        };
        let Ok(message) = serde_json::from_slice::<Value>(&body) else {
            return peer.close("garbage on the wire: a message that is not JSON".into());
        };
        match message["type"].as_str() {
            Some("response") => {
                let Some(seq) = message["request_seq"].as_i64() else {
                    continue;
                };
                let Some(waiter) = lock(&peer.shared.pending).remove(&seq) else {
                    continue;
                };
                let answer = match message["success"].as_bool() {
                    Some(true) => Ok(message["body"].clone()),
                    _ => Err(failure(&message)),
                };
                let _ = waiter.send(answer);
            }
            Some("event") => listener.event(&message),
            Some("request") => {
                // runInTerminal, startDebugging: tether has no terminal to offer.
                let reply = json!({
                    "seq": peer.shared.seq.fetch_add(1, Ordering::SeqCst),
                    "type": "response",
                    "request_seq": message["seq"],
                    "command": message["command"],
                    "success": false,
                    "message": "tether does not run a terminal or child sessions for the adapter",
                });
                if peer.write(&reply).await.is_err() {
                    return peer.close("the adapter's input closed".into());
                }
            }
            _ => {}
        }
    }
}

/// What a failed response says: its message, and the formatted error when there is one.
fn failure(message: &Value) -> String {
    let command = message["command"].as_str().unwrap_or("request");
    let short = message["message"].as_str().unwrap_or("failed");
    match message["body"]["error"]["format"].as_str() {
        Some(detail) if detail != short => format!("`{command}` failed: {short}: {detail}"),
        _ => format!("`{command}` failed: {short}"),
    }
}
