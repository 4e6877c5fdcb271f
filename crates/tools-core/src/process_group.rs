//! Signals to a whole process group: each child of a run leads a group (and a session) of
//! its own, so a signal to the group reaches what it started too. The floor under spawning
//! (`process`) and the sweep (`sweep`); uses nothing else of the crate.

/// Sends SIGKILL to a whole process group. Harmless if the group is gone.
pub fn kill_group(pgid: i32) {
    if pgid > 1 {
        // SAFETY: killpg takes plain integers and has no memory-safety preconditions.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

/// Sends `signal` to a whole process group.
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: as above.
        unsafe {
            libc::killpg(pgid, signal);
        }
    }
}

/// Whether any process of group `pgid` still exists.
pub fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    pgid > 1 && unsafe { libc::killpg(pgid, 0) } == 0
}
