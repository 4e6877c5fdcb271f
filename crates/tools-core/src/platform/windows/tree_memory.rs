//! What a child's process tree holds in memory on Windows: not read yet (the tree's Job
//! Object lists its processes; reading each one's working set is still to do).

use std::io;

use crate::platform::ProcessMemory;

/// Not supported on Windows yet; the answer says so.
pub fn tree_processes(_sid: i32) -> io::Result<Vec<ProcessMemory>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "reading a process tree's memory is not supported on Windows yet",
    ))
}
