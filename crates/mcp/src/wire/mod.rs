//! The wire guard between the client and rmcp. It reads raw lines itself, so it can bound
//! them, and answers every line rmcp would drop or answer without an id; rmcp gets only
//! messages it parses as we do. It also gives each `tools/call` its place in the run's
//! arrival order before rmcp runs the request on a task of its own.

mod check;
mod lines;
mod scan;
mod transport;

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetExtensions};
use rmcp::service::ServerInitializeError;
use tether_run::Runtime;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use crate::{ServeError, TetherServer};
use check::{INVALID_REQUEST, Verdict, check_line, error_reply};
use lines::{Line, LineReader};
use transport::{WireTransport, write_lines};

/// The longest line read, as rmcp's own transport allows: 16 MiB.
const MAX_LINE: usize = 16 * 1024 * 1024;
/// Checked messages waiting for rmcp; when full, we stop reading the client.
const INBOX: usize = 64;
/// Lines waiting for stdout; when full, rmcp and the guard wait for the client to read.
const OUTBOX: usize = 256;
/// How long output still queued when the session ends may take to reach the client.
const DRAIN: Duration = Duration::from_secs(10);

/// Serves `server` over `input` and `output` until the client closes its input.
pub(crate) async fn serve<R, W>(server: TetherServer, input: R, output: W) -> Result<(), ServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let gone = server.shutdown.clone();
    let (out, out_rx) = mpsc::channel(OUTBOX);
    let writer = tokio::spawn(write_lines(out_rx, output, gone.clone()));
    let (inbox, inbox_rx) = mpsc::channel(INBOX);
    let runtime = server.run.runtime().clone();
    let reader = tokio::spawn(read_lines(input, inbox, out.clone(), runtime, gone.clone()));
    let result = sessions(server, Arc::new(Mutex::new(inbox_rx)), out).await;
    // Whatever ended the session, calls still running have no one to answer to.
    gone.cancel();
    reader.abort();
    if tokio::time::timeout(DRAIN, writer).await.is_err() {
        tracing::warn!(
            "the client did not read the last replies within {} s; they are dropped",
            DRAIN.as_secs()
        );
    }
    result
}

/// Runs rmcp sessions over the shared inbox. A handshake that fails (a notification before
/// `initialize`, say) only ends that attempt: the next one picks up the following lines.
async fn sessions(
    server: TetherServer,
    inbox: Arc<Mutex<mpsc::Receiver<ClientJsonRpcMessage>>>,
    out: mpsc::Sender<String>,
) -> Result<(), ServeError> {
    loop {
        let transport = WireTransport {
            inbox: inbox.clone(),
            out: out.clone(),
        };
        match server.clone().serve(transport).await {
            Ok(service) => {
                return service
                    .waiting()
                    .await
                    .map(drop)
                    .map_err(|e| ServeError::Task(e.to_string()));
            }
            Err(e @ ServerInitializeError::ConnectionClosed(_)) => {
                return Err(ServeError::Handshake(Box::new(e)));
            }
            Err(e) if server.shutdown.is_cancelled() => {
                return Err(ServeError::Handshake(Box::new(e)));
            }
            Err(e) => tracing::warn!("MCP handshake failed ({e}); waiting for `initialize`"),
        }
    }
}

/// Reads the client's lines in order: checked messages go to rmcp, faulty ones get our
/// reply. At end of input the client is gone, so `gone` stops what still runs for it.
async fn read_lines<R: AsyncRead + Unpin>(
    input: R,
    inbox: mpsc::Sender<ClientJsonRpcMessage>,
    out: mpsc::Sender<String>,
    runtime: Runtime,
    gone: CancellationToken,
) {
    let mut lines = LineReader::new(BufReader::with_capacity(64 * 1024, input), MAX_LINE);
    loop {
        let line = match lines.next().await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                tracing::warn!("cannot read stdin ({e}); treating it as the client leaving");
                break;
            }
        };
        let verdict = match line {
            Line::Text(bytes) => check_line(&bytes),
            Line::TooLong { len, id } => Verdict::Reply(error_reply(
                &id,
                INVALID_REQUEST,
                &format!(
                    "invalid request: the message is {len} bytes, over the limit of 16 MiB \
                     ({MAX_LINE} bytes) for one line, so it was dropped unread; keep each \
                     message under 16 MiB, e.g. split a large write into smaller files or edits"
                ),
            )),
        };
        match verdict {
            Verdict::Forward(mut msg) => {
                if let ClientJsonRpcMessage::Request(req) = msg.as_mut()
                    && matches!(req.request, ClientRequest::CallToolRequest(_))
                {
                    // Taken here, in wire order; rmcp's task per request cannot keep it.
                    req.request.extensions_mut().insert(runtime.arrive());
                }
                if inbox.send(*msg).await.is_err() {
                    break;
                }
            }
            Verdict::Reply(text) => {
                if out.send(text).await.is_err() {
                    break;
                }
            }
            Verdict::Ignore(why) => tracing::warn!("ignored a message from the client: {why}"),
            Verdict::Blank => {}
        }
    }
    gone.cancel();
}
