//! How much memory a language server holds: the resident set of every process in its
//! session, read through the platform layer. A server is started as the leader of a session
//! of its own, and what it starts (rust-analyzer's `cargo check` and proc-macro servers,
//! tsserver's Node processes) stays in that session, so the session is what the server costs.
//!
//! Where the OS's process tree cannot be read (Windows, for now) the answer is `None`, and
//! the pool's cap by memory does not apply (the cap by count still does).

pub use tools_core::platform::ProcessMemory;

/// The resident memory, in bytes, of every process in session `sid` (the server's pid),
/// `None` when it cannot be read (not on this OS, or the server is gone).
pub fn session_rss(sid: i32) -> Option<u64> {
    let processes = session_processes(sid);
    (processes.first()?.pid == sid).then(|| processes.iter().map(|p| p.rss).sum())
}

/// Every process in session `sid` (the server first, then the others by pid) with its
/// resident memory; empty when none can be read (not on this OS, or the server is gone).
pub fn session_processes(sid: i32) -> Vec<ProcessMemory> {
    if sid <= 1 {
        return Vec::new();
    }
    tools_core::platform::tree_processes(sid).unwrap_or_default()
}

/// Processes named per server in the text of `lsp status`, at most (the rest are counted).
pub const PROCESSES_NAMED: usize = 6;

/// What a server's processes hold, for a reader: `447 MiB in 3 processes — rust-analyzer
/// 412 MiB, cargo 20 MiB, rustc 15 MiB` (the largest first, at most [`PROCESSES_NAMED`]).
pub fn processes_line(processes: &[ProcessMemory]) -> String {
    let total: u64 = processes.iter().map(|p| p.rss).sum();
    let mut largest: Vec<&ProcessMemory> = processes.iter().collect();
    largest.sort_by_key(|p| std::cmp::Reverse(p.rss));
    let mut named: Vec<String> = largest
        .iter()
        .take(PROCESSES_NAMED)
        .map(|p| format!("{} {}", p.name, mib(p.rss)))
        .collect();
    if processes.len() > PROCESSES_NAMED {
        named.push(format!("{} more", processes.len() - PROCESSES_NAMED));
    }
    let count = match processes.len() {
        1 => "1 process".to_string(),
        n => format!("{n} processes"),
    };
    format!("{} in {count} — {}", mib(total), named.join(", "))
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
        let mut members = Vec::new();
        for _ in 0..50 {
            members = session_processes(sid);
            if members.len() >= 3 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(members.len(), 3, "sh and its two sleeps share the session");
        let leader = members[0].rss;
        let total = session_rss(sid).unwrap();
        assert!(total > leader, "{total} should add the sleeps to {leader}");
        let _ = std::process::Command::new("kill")
            .args(["-9", "--", &format!("-{sid}")])
            .status();
        let _ = child.wait();
    }

    #[test]
    fn each_process_of_a_session_is_listed_with_its_memory_leader_first() {
        let mut child = std::process::Command::new("setsid")
            .args(["sh", "-c", "sleep 20 & sleep 20"])
            .spawn()
            .unwrap();
        let sid = child.id() as i32;
        let mut listed = Vec::new();
        for _ in 0..50 {
            listed = session_processes(sid);
            if listed.len() >= 3 && listed.iter().filter(|p| p.name == "sleep").count() == 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let names: Vec<&str> = listed.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["sh", "sleep", "sleep"], "{listed:?}");
        assert_eq!(listed[0].pid, sid);
        assert!(listed.iter().all(|p| p.rss > 0), "{listed:?}");
        let _ = std::process::Command::new("kill")
            .args(["-9", "--", &format!("-{sid}")])
            .status();
        let _ = child.wait();
        assert_eq!(session_processes(0), Vec::new());
    }

    #[test]
    fn a_servers_processes_read_largest_first() {
        let p = |pid, name: &str, mib: u64| ProcessMemory {
            pid,
            name: name.into(),
            rss: mib * 1024 * 1024,
        };
        assert_eq!(
            processes_line(&[
                p(10, "rust-analyzer", 412),
                p(11, "cargo", 20),
                p(12, "rustc", 35)
            ]),
            "467 MiB in 3 processes — rust-analyzer 412 MiB, rustc 35 MiB, cargo 20 MiB"
        );
        assert_eq!(
            processes_line(&[p(10, "node", 90)]),
            "90 MiB in 1 process — node 90 MiB"
        );
        let many: Vec<ProcessMemory> = (0..8).map(|i| p(i, "w", 1)).collect();
        assert_eq!(
            processes_line(&many),
            "8 MiB in 8 processes — w 1 MiB, w 1 MiB, w 1 MiB, w 1 MiB, w 1 MiB, w 1 MiB, 2 more"
        );
    }

    #[test]
    fn no_process_no_figure() {
        assert_eq!(session_rss(0), None);
        assert_eq!(session_rss(i32::MAX), None);
        assert_eq!(mib(1), "1 MiB");
        assert_eq!(mib(930 * 1024 * 1024), "930 MiB");
    }
}
