use std::sync::Arc;

use tether_tool::ProgressPort;
use tokio_util::sync::CancellationToken;

use crate::arrival::{Arrival, Place};

/// How a front end starts a root call: its cancellation, its place in arrival order (writes
/// then run in the order their requests arrived), and where its progress goes.
#[derive(Default)]
pub struct CallOptions {
    pub(crate) cancel: CancellationToken,
    pub(crate) place: Option<Place>,
    pub(crate) progress: Option<Arc<dyn ProgressPort>>,
}

impl CallOptions {
    /// Cancelled by `cancel`.
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Takes the place `arrival` holds in the run's arrival order.
    pub fn in_order(mut self, arrival: &Arrival) -> Self {
        self.place = arrival.take();
        self
    }

    /// Sends the call's progress reports to `port`.
    pub fn progress(mut self, port: Arc<dyn ProgressPort>) -> Self {
        self.progress = Some(port);
        self
    }
}
