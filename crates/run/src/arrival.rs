//! The order in which root calls arrived at the front end. A front end that runs each request
//! on its own task loses that order before the gate, so it hands each call a place in line and
//! the gate serves workspace permits by place.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};
use tether_base::lock;

use tokio::sync::Notify;

/// Places handed out in arrival order; a place still in line holds back every later one.
#[derive(Default)]
pub(crate) struct ArrivalOrder {
    line: Mutex<Line>,
    moved: Notify,
}

#[derive(Default)]
struct Line {
    next: u64,
    waiting: BTreeSet<u64>,
}

impl ArrivalOrder {
    /// The next place in line.
    pub(crate) fn arrive(self: &Arc<Self>) -> Arrival {
        let seq = {
            let mut line = self.line();
            let seq = line.next;
            line.next += 1;
            line.waiting.insert(seq);
            seq
        };
        Arrival(Arc::new(Mutex::new(Some(Place {
            seq,
            order: self.clone(),
        }))))
    }

    /// Waits until every place before `seq` has left the line.
    async fn front(&self, seq: u64) {
        loop {
            // Registered before the check, so a place leaving in between still wakes us.
            let moved = self.moved.notified();
            tokio::pin!(moved);
            moved.as_mut().enable();
            if self
                .line()
                .waiting
                .first()
                .is_none_or(|&first| first >= seq)
            {
                return;
            }
            moved.await;
        }
    }

    fn leave(&self, seq: u64) {
        self.line().waiting.remove(&seq);
        self.moved.notify_waiters();
    }

    fn line(&self) -> MutexGuard<'_, Line> {
        lock(&self.line)
    }
}

/// A root call's place in the arrival order. Clones share the one place: the pipeline takes
/// it when the call starts, and a place nobody took leaves the line when the last clone is
/// dropped, so a request that never reached its handler holds up nothing.
#[derive(Clone)]
pub struct Arrival(Arc<Mutex<Option<Place>>>);

impl Arrival {
    /// Takes the place out, once; later takes get nothing.
    pub(crate) fn take(&self) -> Option<Place> {
        lock(&self.0).take()
    }
}

/// A taken place; dropping it leaves the line.
pub(crate) struct Place {
    seq: u64,
    order: Arc<ArrivalOrder>,
}

impl Place {
    /// Waits until this place is at the front of the line.
    pub(crate) async fn front(&self) {
        self.order.front(self.seq).await;
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.order.leave(self.seq);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use std::time::Duration;

    async fn at_front(place: &Place) -> bool {
        tokio::time::timeout(Duration::from_millis(50), place.front())
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn places_reach_the_front_in_arrival_order() {
        let order = Arc::new(ArrivalOrder::default());
        let (a, b, c) = (order.arrive(), order.arrive(), order.arrive());
        let (pc, pb) = (c.take().unwrap(), b.take().unwrap());
        assert!(!at_front(&pc).await && !at_front(&pb).await);
        drop(a.take());
        assert!(at_front(&pb).await && !at_front(&pc).await);
        drop(pb);
        assert!(at_front(&pc).await);
    }

    #[tokio::test]
    async fn an_untaken_place_leaves_with_its_last_clone() {
        let order = Arc::new(ArrivalOrder::default());
        let first = order.arrive();
        let copy = first.clone();
        let second = order.arrive().take().unwrap();
        drop(first);
        assert!(!at_front(&second).await, "a clone still holds the place");
        drop(copy);
        assert!(at_front(&second).await);
    }

    #[tokio::test]
    async fn a_place_is_taken_once() {
        let order = Arc::new(ArrivalOrder::default());
        let a = order.arrive();
        let place = a.take();
        assert!(place.is_some() && a.clone().take().is_none());
    }

    #[tokio::test]
    async fn a_waiter_wakes_when_the_place_ahead_leaves() {
        let order = Arc::new(ArrivalOrder::default());
        let first = order.arrive().take().unwrap();
        let second = order.arrive().take().unwrap();
        let waiter = tokio::spawn(async move { second.front().await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        drop(first);
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("the waiter was not woken")
            .unwrap();
    }
}
