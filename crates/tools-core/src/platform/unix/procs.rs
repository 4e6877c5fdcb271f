//! The process listing the sweep reads, and adopting orphans: Linux has both (`/proc`,
//! `PR_SET_CHILD_SUBREAPER`); other Unixes answer that they are unsupported, and the sweep
//! there ends the runs' process groups only.

use std::io;

use crate::platform::ProcStat;

/// Every process visible in `/proc` (those that vanish while being read are skipped).
#[cfg(target_os = "linux")]
pub(crate) fn all_processes() -> io::Result<Vec<ProcStat>> {
    let dir = std::fs::read_dir("/proc")?;
    Ok(dir
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .filter_map(|t| crate::platform::parse_stat(&t))
        .collect())
}

/// The process listing is read from `/proc`, which this OS does not have.
#[cfg(not(target_os = "linux"))]
pub(crate) fn all_processes() -> io::Result<Vec<ProcStat>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "listing processes by session (/proc) is not supported on this OS",
    ))
}

/// One process's `/proc/PID/stat` facts, `None` when it is gone.
#[cfg(target_os = "linux")]
#[cfg(test)]
pub(crate) fn process(pid: i32) -> Option<ProcStat> {
    crate::platform::parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The process listing is read from `/proc`, which this OS does not have.
#[cfg(not(target_os = "linux"))]
#[cfg(test)]
pub(crate) fn process(_pid: i32) -> Option<ProcStat> {
    None
}

/// Makes this process the child subreaper of its descendants (`PR_SET_CHILD_SUBREAPER`).
#[cfg(target_os = "linux")]
pub(crate) fn become_subreaper() -> io::Result<()> {
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Adopting orphaned descendants is a Linux facility.
#[cfg(not(target_os = "linux"))]
pub(crate) fn become_subreaper() -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "adopting orphaned descendants (a child subreaper) is not supported on this OS",
    ))
}
