//! The rmcp side of the wire: rmcp reads checked messages from a queue and writes its own
//! messages as lines into the one queue that also carries our error replies, so a single
//! writer puts whole lines on stdout and none can interleave.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

/// A transport over the checked-message queue and the output line queue. Transports made
/// for successive rmcp sessions share the one queue, so a session that ends before its
/// handshake loses nothing queued behind the line that ended it.
pub(crate) struct WireTransport {
    pub(crate) inbox: Arc<Mutex<mpsc::Receiver<ClientJsonRpcMessage>>>,
    pub(crate) out: mpsc::Sender<String>,
}

impl Transport<RoleServer> for WireTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        let line = serde_json::to_string(&item);
        async move {
            out.send(line?).await.map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed")
            })
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.inbox.lock().await.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Writes each queued line whole, flushing whenever the queue runs dry. A write that fails
/// means the client is gone, so `gone` is cancelled and what is left is dropped.
pub(crate) async fn write_lines<W: AsyncWrite + Unpin>(
    mut lines: mpsc::Receiver<String>,
    mut out: W,
    gone: CancellationToken,
) {
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        let mut result = out.write_all(line.as_bytes()).await;
        if result.is_ok() && lines.is_empty() {
            result = out.flush().await;
        }
        if let Err(e) = result {
            tracing::warn!("cannot write to stdout ({e}); the client is gone");
            gone.cancel();
            return;
        }
    }
    let _ = out.flush().await;
}
