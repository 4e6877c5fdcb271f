//! How much memory a language server holds: the resident set of every process in its
//! session, read from `/proc`. A server is started as the leader of a session of its own,
//! and what it starts (rust-analyzer's `cargo check` and proc-macro servers, tsserver's
//! Node processes) stays in that session, so the session is what the server costs.
//!
//! Elsewhere than Linux there is no `/proc`: the answer is `None`, and the pool's cap by
//! memory does not apply (the cap by count still does).

use std::path::Path;

/// The resident memory, in bytes, of every process in session `sid` (the server's pid),
/// `None` when it cannot be read (no `/proc`, or the server is gone).
pub fn session_rss(sid: i32) -> Option<u64> {
    if sid <= 1 {
        return None;
    }
    let leader = rss_of(&Path::new("/proc").join(sid.to_string()))?;
    let mut total = leader;
    let entries = std::fs::read_dir("/proc").ok()?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if pid == sid || session_of(&entry.path()) != Some(sid) {
            continue;
        }
        total += rss_of(&entry.path()).unwrap_or(0);
    }
    Some(total)
}

/// The session id of the process at `/proc/PID`: the sixth field of its `stat`, counted
/// after the command name (which may itself hold spaces and parentheses).
fn session_of(proc_dir: &Path) -> Option<i32> {
    let stat = std::fs::read_to_string(proc_dir.join("stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    // state, ppid, pgrp, session
    after_name.split_whitespace().nth(3)?.parse().ok()
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

/// `bytes` as MiB for a reader (`930 MiB`).
pub fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes.div_ceil(1024 * 1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_of_two_processes_counts_both() {
        // `sh` leads a session of its own and starts a `sleep` that stays in it.
        let mut child = std::process::Command::new("setsid")
            .args(["sh", "-c", "sleep 20 & sleep 20"])
            .spawn()
            .unwrap();
        let sid = child.id() as i32;
        let mut members = 0;
        for _ in 0..50 {
            members = std::fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter(|e| session_of(&e.path()) == Some(sid))
                .count();
            if members >= 3 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(members, 3, "sh and its two sleeps share the session");
        let leader = rss_of(&Path::new("/proc").join(sid.to_string())).unwrap();
        let total = session_rss(sid).unwrap();
        assert!(total > leader, "{total} should add the sleeps to {leader}");
        let _ = std::process::Command::new("kill")
            .args(["-9", "--", &format!("-{sid}")])
            .status();
        let _ = child.wait();
    }

    #[test]
    fn no_process_no_figure() {
        assert_eq!(session_rss(0), None);
        assert_eq!(session_rss(i32::MAX), None);
        assert_eq!(mib(1), "1 MiB");
        assert_eq!(mib(930 * 1024 * 1024), "930 MiB");
    }
}
