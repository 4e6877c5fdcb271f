//! A seam for the crash tests: the process kills itself with SIGKILL at a chosen step of a
//! multi-file change, exactly as the OOM killer or a client's kill would, so the tests can
//! reach every point between "journal flushed" and "journal removed" without timing luck.
//!
//! Steps are counted over the whole process from 1: the journal flushed, then for each file
//! its new content flushed beside it (a file with several names: the first half of it written
//! in place) and then in place, then the journal about to
//! be removed. Unset (the normal case), nothing is counted; release builds never look.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Set to a step number `N` (see the module docs) to be killed at that step.
pub const CRASH_AT_ENV: &str = "AGENT_TOOLS_TEST_CRASH_AT_STEP";

static TARGET: OnceLock<Option<u64>> = OnceLock::new();
static PASSED: AtomicU64 = AtomicU64::new(0);

/// Marks one step of a multi-file change; the process dies here when it is the chosen one.
pub fn crash_point() {
    if !cfg!(debug_assertions) {
        return;
    }
    let target = TARGET.get_or_init(|| {
        std::env::var(CRASH_AT_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok())
    });
    let Some(target) = *target else { return };
    if PASSED.fetch_add(1, Ordering::SeqCst) + 1 == target {
        crate::platform::kill_self_now();
    }
}
