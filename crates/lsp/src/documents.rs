//! Our own writes reach the language servers at once: a write hook that, after each write,
//! gives every server holding a written file open its new text (one version up, and only if
//! the text changed), and closes a file deleted or moved away. The save is announced once, by
//! the diagnostics hook, which waits for what a save starts (cargo check). Files changed
//! outside the run are caught before each request instead, by
//! [`crate::server::Server::sync`] comparing content hashes.

use std::sync::Arc;
use std::time::Duration;

use tether_fs::{ChangeKind, FileReceipt, WritePath};
use tether_tool::{Baseline, BoxFuture, FileReport, HookBudgets, WriteHook};

use crate::supervisor::Supervisor;

/// The write hook that keeps open documents in step with our writes.
pub struct Documents {
    pub(crate) servers: Arc<Supervisor>,
}

impl WriteHook for Documents {
    fn name(&self) -> &str {
        "language-server documents"
    }

    fn budgets(&self) -> HookBudgets {
        HookBudgets {
            before: Duration::from_millis(100),
            after: Duration::from_secs(5),
        }
    }

    fn before<'a>(&'a self, _: &'a [WritePath]) -> BoxFuture<'a, Baseline> {
        Box::pin(async { Box::new(()) as Baseline })
    }

    fn after<'a>(
        &'a self,
        _: Option<Baseline>,
        receipts: &'a [FileReceipt],
    ) -> BoxFuture<'a, Vec<FileReport>> {
        Box::pin(async move {
            let servers = self.servers.running().await;
            for receipt in receipts {
                // A file deleted or moved away is closed where it was open.
                let gone = match &receipt.kind {
                    ChangeKind::Deleted => Some(receipt.path.abs()),
                    ChangeKind::Renamed { from } => Some(from.abs()),
                    _ => None,
                };
                if let Some(gone) = gone {
                    for server in &servers {
                        server.tell_gone(gone).await;
                    }
                }
                let path = receipt.path.abs();
                // The receipt's bytes: the file may have changed again since the write.
                let Ok(text) = receipt.text() else {
                    continue;
                };
                for server in &servers {
                    if !server.has_open(path).await {
                        continue;
                    }
                    if let Err(why) = server.sync(path, text).await {
                        tracing::warn!("keeping {} in step: {why}", receipt.path.rel());
                    }
                    server.unstamp(path).await;
                }
            }
            Vec::new()
        })
    }
}
