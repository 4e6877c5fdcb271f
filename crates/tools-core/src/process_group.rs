//! Signals to a whole process tree: each child of a run leads a group (and a session) of its
//! own on Unix, and is in a Job Object of its own on Windows, so ending the group reaches
//! what it started too. The floor under spawning (`process`) and the sweep (`sweep`).

/// Kills a child's whole tree (SIGKILL to its process group). Harmless if it is gone.
pub fn kill_group(pgid: i32) {
    crate::platform::kill_group(pgid);
}

/// Sends `signal` to a whole process group. Where signals do not exist (Windows) nothing
/// is sent, and the refusal is logged with what was asked.
pub fn signal_group(pgid: i32, signal: i32) {
    if let Err(e) = crate::platform::signal_group(pgid, signal) {
        tracing::warn!(pgid, signal, error = %e, "could not signal a process tree");
    }
}

/// Asks a whole process tree to stop cleanly (SIGTERM to its group on Unix). Where there is
/// no such request (Windows) nothing is sent and that is logged: the caller's grace period
/// then passes and the tree is ended.
pub fn ask_group_to_stop(pgid: i32) {
    if let Err(e) = crate::platform::ask_group_to_stop(pgid) {
        tracing::debug!(pgid, error = %e, "could not ask a process tree to stop");
    }
}

/// Whether any process of group `pgid` still exists.
pub fn group_alive(pgid: i32) -> bool {
    crate::platform::group_alive(pgid)
}
