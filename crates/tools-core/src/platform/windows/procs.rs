//! The process listing and adopting orphans on Windows: neither exists in the Unix sense;
//! a run's child trees are ended through their Job Objects instead.

use std::io;

use crate::platform::ProcStat;

/// Sessions and process groups are Unix notions; the jobs hold the trees here.
pub(crate) fn all_processes() -> io::Result<Vec<ProcStat>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "listing processes by session is not supported on Windows (child trees are ended \
         through their Job Objects)",
    ))
}

/// Orphans cannot be adopted on Windows; the Job Objects keep them in their tree instead.
pub(crate) fn become_subreaper() -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "adopting orphaned descendants is not supported on Windows (each child tree is in a \
         kill-on-close Job Object instead)",
    ))
}
