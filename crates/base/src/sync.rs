//! The one way tether takes a `std::sync::Mutex`: no state guarded by one is left half-changed
//! by a panic, so a poisoned lock is taken as it is rather than spreading the panic.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, also when a thread panicked while holding it.
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
