//! Handing memory back to the system once a burst of sessions is over.
//!
//! A server that hosts many agents sees bursts: hundreds of sessions open, call and close.
//! glibc's allocator keeps what those sessions freed in its per-thread arenas, so the
//! process stays at the burst's size long after the burst (in the soak, 1,000 sessions opened
//! and closed left it 10–15% above its size before them, for good). Once sessions have closed
//! and no request is being answered, the freed pages are returned (glibc's `malloc_trim` on
//! Linux, the platform's own elsewhere: `tools_core::platform::return_freed_memory`); a
//! server that is busy or has closed nothing lately is left alone, so the cost (a walk of the
//! arenas, a few milliseconds) is paid only on quiet ticks after closes.

use std::sync::atomic::{AtomicU8, Ordering};

/// How many quiet ticks after a close return memory: a closed session's run is torn down
/// in the background (its servers and kernels are stopped first), so what it held may be
/// freed only after the first quiet tick.
const QUIET_TICKS_AFTER_A_CLOSE: u8 = 2;

/// Remembers whether sessions closed lately and freed memory is still to be returned.
#[derive(Debug, Default)]
pub(crate) struct FreedMemory {
    pending_trims: AtomicU8,
}

impl FreedMemory {
    /// Notes that a session closed: what it held may now be free.
    pub(crate) fn session_closed(&self) {
        self.pending_trims
            .store(QUIET_TICKS_AFTER_A_CLOSE, Ordering::Relaxed);
    }

    /// Returns freed memory to the system when sessions closed lately and `answering`
    /// requests are none. Says whether it did.
    pub(crate) fn return_if_quiet(&self, answering: usize) -> bool {
        if answering > 0 {
            return false;
        }
        let took = self
            .pending_trims
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        if took.is_err() {
            return false;
        }
        tools_core::platform::return_freed_memory();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_returned_on_the_quiet_ticks_after_a_close() {
        let freed = FreedMemory::default();
        assert!(!freed.return_if_quiet(0), "nothing closed yet");
        freed.session_closed();
        assert!(!freed.return_if_quiet(1), "a request is being answered");
        assert!(freed.return_if_quiet(0));
        assert!(
            freed.return_if_quiet(0),
            "the run of the closed session may free late"
        );
        assert!(!freed.return_if_quiet(0), "already returned");
    }
}
