//! Locks that outlive a panic.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// `m`'s guard, also after another holder panicked: the state the tools keep behind a
/// mutex is whole between statements, and one tool call that panicked must not take every
/// later call of the run (or every conversation of the daemon) down with it.
pub fn lock_unpoisoned<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
