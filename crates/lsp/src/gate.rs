//! The gate a preview closes on a server. While a change not yet written is shown to a server,
//! nothing else may send it a message, so no query, write or watch is ever answered from the
//! unsaved text. Every message takes a share; a preview takes the gate alone, and its own
//! messages, sent from inside [`Gate::as_preview`], pass. A task never takes a second share
//! while it holds one (see `Server::sync`), so new shares can wait behind a preview that
//! waits: a stream of background pulls cannot keep it out.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tether_base::lock;
use tokio::sync::Notify;

tokio::task_local! {
    /// The gate whose preview the current task runs.
    static PREVIEWING: u64;
}

/// Numbers the gates, so a preview's task passes its own gate and no other.
static GATES: AtomicU64 = AtomicU64::new(1);

/// A gate that shares while no preview holds it or waits for it, and is taken alone once no
/// share is out.
pub(crate) struct Gate {
    id: u64,
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Default)]
struct State {
    shares: usize,
    alone: bool,
    /// Previews waiting for the gate.
    waiting: usize,
}

/// One share of the gate, given back on drop.
pub(crate) struct Share<'a>(&'a Gate);

/// The gate held alone, given back on drop.
pub(crate) struct Alone<'a>(&'a Gate);

/// A preview's place in the queue for the gate, given up on drop.
struct Waiting<'a>(&'a Gate);

impl Default for Gate {
    fn default() -> Self {
        Gate {
            id: GATES.fetch_add(1, Ordering::Relaxed),
            state: Mutex::default(),
            changed: Notify::new(),
        }
    }
}

impl Gate {
    /// A share, once no preview holds or awaits the gate; none needed inside that preview.
    pub(crate) async fn share(&self) -> Option<Share<'_>> {
        if PREVIEWING.try_with(|id| *id == self.id).unwrap_or(false) {
            return None;
        }
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut state = lock(&self.state);
                if !state.alone && state.waiting == 0 {
                    state.shares += 1;
                    return Some(Share(self));
                }
            }
            changed.await;
        }
    }

    /// The gate alone, once every share is back, within `limit`; `None` past it.
    pub(crate) async fn alone(&self, limit: Duration) -> Option<Alone<'_>> {
        let end = tokio::time::Instant::now() + limit;
        lock(&self.state).waiting += 1;
        let _waiting = Waiting(self);
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut state = lock(&self.state);
                if !state.alone && state.shares == 0 {
                    state.alone = true;
                    return Some(Alone(self));
                }
            }
            tokio::time::timeout_at(end, changed).await.ok()?;
        }
    }

    /// Runs `work` as this gate's preview: its messages pass the gate it holds alone.
    pub(crate) async fn as_preview<F: std::future::Future>(&self, work: F) -> F::Output {
        PREVIEWING.scope(self.id, work).await
    }
}

impl Drop for Share<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.0.state);
        state.shares -= 1;
        if state.shares == 0 {
            self.0.changed.notify_waiters();
        }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        lock(&self.0.state).waiting -= 1;
        self.0.changed.notify_waiters();
    }
}

impl Drop for Alone<'_> {
    fn drop(&mut self) {
        lock(&self.0.state).alone = false;
        self.0.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn a_preview_waits_for_shares_and_shares_wait_for_it_but_its_own_messages_pass() {
        let gate = Arc::new(Gate::default());
        let share = gate.share().await;
        assert!(share.is_some());
        // Held by a call, the gate is not taken alone, and a preview that gives up waiting
        // leaves the gate to the shares.
        assert!(gate.alone(Duration::from_millis(50)).await.is_none());
        assert!(gate.share().await.is_some());
        // A new share waits behind a preview that waits, so a stream of them cannot keep it
        // out; once the preview is done, it is given.
        let waiting = {
            let gate = gate.clone();
            tokio::spawn(async move {
                let alone = gate.alone(Duration::from_secs(5)).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                alone.is_some()
            })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        let behind = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.share().await.is_some() })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            !behind.is_finished(),
            "a share went ahead of a waiting preview"
        );
        drop(share);
        assert!(
            waiting.await.unwrap_or(false),
            "the preview never got the gate"
        );
        assert!(
            behind.await.unwrap_or(false),
            "the share never came after it"
        );
        // A share waits while the preview holds the gate, but the preview's own pass.
        let alone = gate.alone(Duration::from_millis(50)).await;
        assert!(alone.is_some());
        let blocked = tokio::time::timeout(Duration::from_millis(50), gate.share()).await;
        assert!(blocked.is_err(), "a share was given during a preview");
        let own = gate
            .as_preview(async { gate.share().await.is_none() })
            .await;
        assert!(own, "the preview's own message waited for itself");
        drop(alone);
        assert!(gate.share().await.is_some());
    }
}
