//! This process's memory on Unix: its resident size, and freed memory handed back to the
//! system where the allocator keeps it (glibc's arenas).

/// This process's resident memory in bytes (`/proc/self/statm` on Linux, the task info of
/// libproc on macOS); `None` where neither exists or the read fails.
pub fn resident_bytes() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        Some(pages * u64::try_from(page).ok()?)
    }
    #[cfg(target_os = "macos")]
    {
        resident_bytes_of(i32::try_from(std::process::id()).ok()?)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        None
    }
}

/// Hands memory this process freed back to the system. glibc keeps freed memory in its
/// per-thread arenas until `malloc_trim` walks them; macOS's allocator and musl's give free
/// pages back on their own, so there is nothing to do there.
pub fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim only walks the allocator's own arenas under their locks; it
        // takes no pointer from us and is safe to call from any thread at any time.
        let _ = unsafe { libc::malloc_trim(0) };
    }
}

/// The resident size in bytes of the process `pid`, from libproc's task info; `None` when
/// it is gone or the answer is short.
#[cfg(target_os = "macos")]
pub(crate) fn resident_bytes_of(pid: i32) -> Option<u64> {
    let info: libc::proc_taskinfo = super::procs::pid_info(pid, libc::PROC_PIDTASKINFO)?;
    Some(info.pti_resident_size)
}
