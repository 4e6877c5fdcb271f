//! What a child's process tree holds in memory on Unix: every process of the session the
//! child leads, with its command name and resident size. `/proc` on Linux; libproc on
//! macOS (the process listing of [`super::procs`], `proc_name` and the task info).

use std::io;

use crate::platform::ProcessMemory;

/// Every process in session `sid` (the child's pid), the leader first, then by pid.
#[cfg(target_os = "linux")]
pub fn tree_processes(sid: i32) -> io::Result<Vec<ProcessMemory>> {
    use std::path::Path;
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc")?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let dir = entry.path();
        if pid != sid && session_of(&dir) != Some(sid) {
            continue;
        }
        let Some(rss) = rss_of(&dir) else { continue };
        let name = std::fs::read_to_string(dir.join("comm"))
            .map(|n| n.trim_end().to_string())
            .unwrap_or_default();
        out.push(ProcessMemory { pid, name, rss });
    }
    out.sort_by_key(|p| (p.pid != sid, p.pid));
    return Ok(out);

    /// The session of the process at `/proc/PID` (its `stat`, parsed past the name).
    fn session_of(proc_dir: &Path) -> Option<i32> {
        let stat = std::fs::read_to_string(proc_dir.join("stat")).ok()?;
        Some(crate::platform::parse_stat(&stat)?.session)
    }

    /// `VmRSS` of the process at `/proc/PID`, in bytes (0 for a zombie, which has none).
    fn rss_of(proc_dir: &Path) -> Option<u64> {
        let status = std::fs::read_to_string(proc_dir.join("status")).ok()?;
        let kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
        Some(kib * 1024)
    }
}

/// Every process in session `sid` (the child's pid), the leader first, then by pid.
#[cfg(target_os = "macos")]
pub fn tree_processes(sid: i32) -> io::Result<Vec<ProcessMemory>> {
    let mut out: Vec<ProcessMemory> = super::procs::all_processes()?
        .into_iter()
        .filter(|p| p.pid == sid || p.session == sid)
        .filter_map(|p| {
            Some(ProcessMemory {
                pid: p.pid,
                name: name_of(p.pid),
                rss: super::memory::resident_bytes_of(p.pid)?,
            })
        })
        .collect();
    out.sort_by_key(|p| (p.pid != sid, p.pid));
    return Ok(out);

    /// The process's command name, empty when it cannot be read.
    fn name_of(pid: i32) -> String {
        let mut buf = [0u8; 256];
        // SAFETY: `buf` is valid for writes of its length.
        let got = unsafe { libc::proc_name(pid, buf.as_mut_ptr().cast(), 256) };
        let len = usize::try_from(got).unwrap_or(0).min(buf.len());
        String::from_utf8_lossy(&buf[..len]).into_owned()
    }
}

/// This OS has no process listing to read a tree's memory from.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub fn tree_processes(_sid: i32) -> io::Result<Vec<ProcessMemory>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "reading a process tree's memory is not supported on this OS",
    ))
}
