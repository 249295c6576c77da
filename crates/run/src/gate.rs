use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tether_base::lock;

use tether_tool::{Concurrency, PermitKey};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use crate::arrival::{ArrivalOrder, Place};

/// Permits for concurrency classes: one workspace writer, one caller per session key.
/// tokio's mutex queues waiters in order, which gives first come, first served; a call with a
/// place in the arrival order queues for the workspace only once every earlier place has.
#[derive(Default)]
pub(crate) struct Gate {
    workspace: Arc<AsyncMutex<()>>,
    sessions: Mutex<HashMap<String, Arc<AsyncMutex<()>>>>,
    pub(crate) arrivals: Arc<ArrivalOrder>,
}

/// A held permit; dropping it releases the gate.
pub(crate) struct Permit {
    pub(crate) key: Option<PermitKey>,
    _guard: Option<OwnedMutexGuard<()>>,
}

impl Gate {
    /// Waits for the permit `concurrency` needs, unless `held` already has it. A workspace
    /// permit with a `place` waits for the place to reach the front first, and leaves the line
    /// once it holds the permit, so the next place queues behind it.
    pub(crate) async fn acquire(
        &self,
        concurrency: &Concurrency,
        held: &[PermitKey],
        place: Option<Place>,
    ) -> Permit {
        let key = match concurrency {
            Concurrency::Workspace => PermitKey::Workspace,
            Concurrency::Session(k) => PermitKey::Session(k.clone()),
            _ => return Permit::none(),
        };
        if held.contains(&key) {
            return Permit::none();
        }
        let lock = match &key {
            PermitKey::Session(k) => self.session_lock(k),
            _ => self.workspace.clone(),
        };
        if let (PermitKey::Workspace, Some(place)) = (&key, &place) {
            place.front().await;
        }
        let guard = lock.lock_owned().await;
        drop(place);
        Permit {
            key: Some(key),
            _guard: Some(guard),
        }
    }

    fn session_lock(&self, key: &str) -> Arc<AsyncMutex<()>> {
        let mut map = lock(&self.sessions);
        map.entry(key.to_string()).or_default().clone()
    }
}

impl Permit {
    fn none() -> Self {
        Permit {
            key: None,
            _guard: None,
        }
    }
}
