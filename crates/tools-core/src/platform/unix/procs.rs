//! The process listing the sweep reads, and adopting orphans. Linux has both (`/proc`,
//! `PR_SET_CHILD_SUBREAPER`); macOS has the listing (libproc, with `getsid` for the
//! session) but no subreaper; other Unixes answer that they are unsupported, and the sweep
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
        .filter_map(process)
        .collect())
}

/// One process's `/proc/PID/stat` facts, `None` when it is gone.
#[cfg(target_os = "linux")]
pub(crate) fn process(pid: i32) -> Option<ProcStat> {
    crate::platform::parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Every process libproc lists (those that vanish while being read are skipped).
#[cfg(target_os = "macos")]
pub(crate) fn all_processes() -> io::Result<Vec<ProcStat>> {
    // SAFETY: a null buffer asks only for the count.
    let count = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
    if count < 0 {
        return Err(io::Error::last_os_error());
    }
    // Room for processes started between the two calls.
    let mut pids = vec![0 as libc::pid_t; usize::try_from(count).unwrap_or(0) + 64];
    let bytes = libc::c_int::try_from(std::mem::size_of_val(pids.as_slice()))
        .map_err(|_| io::Error::other("too many processes to list"))?;
    // SAFETY: `pids` is valid for writes of `bytes` bytes.
    let got = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast(), bytes) };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    pids.truncate(usize::try_from(got).unwrap_or(0));
    Ok(pids
        .into_iter()
        .filter(|p| *p > 0)
        .filter_map(process)
        .collect())
}

/// One process's parent, group, session and state from libproc, `None` when it is gone.
#[cfg(target_os = "macos")]
pub(crate) fn process(pid: i32) -> Option<ProcStat> {
    let info: libc::proc_bsdinfo = pid_info(pid, libc::PROC_PIDTBSDINFO)?;
    // SAFETY: getsid takes a plain integer.
    let session = unsafe { libc::getsid(pid) };
    Some(ProcStat {
        pid,
        ppid: i32::try_from(info.pbi_ppid).ok()?,
        pgrp: i32::try_from(info.pbi_pgid).ok()?,
        session,
        zombie: info.pbi_status == libc::SZOMB,
    })
}

/// This OS has no process listing the sweep can read.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub(crate) fn all_processes() -> io::Result<Vec<ProcStat>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "listing processes by session is not supported on this OS",
    ))
}

/// Never known on this OS (see [`all_processes`]).
#[cfg(all(test, not(any(target_os = "linux", target_os = "macos"))))]
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

/// libproc's answer of kind `flavor` about the process `pid` (its BSD info, its task info),
/// `None` when the process is gone or the answer is short.
#[cfg(target_os = "macos")]
pub(crate) fn pid_info<T: Copy>(pid: i32, flavor: libc::c_int) -> Option<T> {
    let mut info = std::mem::MaybeUninit::<T>::zeroed();
    let size = libc::c_int::try_from(std::mem::size_of::<T>()).ok()?;
    // SAFETY: `info` is valid for writes of `size` bytes; read only after a full answer.
    let got = unsafe { libc::proc_pidinfo(pid, flavor, 0, info.as_mut_ptr().cast(), size) };
    if got != size {
        return None;
    }
    // SAFETY: proc_pidinfo filled the whole struct, a plain C record.
    Some(unsafe { info.assume_init() })
}
