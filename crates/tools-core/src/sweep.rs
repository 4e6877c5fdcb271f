//! Ends every process a run started, including the ones that tried to get away.
//!
//! Each child of a run starts in a session of its own (`setsid`), so its session id is its
//! pid. A grandchild that double-forks, or calls `setpgid`, leaves its parent's process
//! group and is re-parented to init, but it stays in the session unless it calls `setsid`
//! itself. On close the run kills every process whose session id or process group is one it
//! started, and every descendant of those (a debuggee that an adapter put in a session of
//! its own is still the adapter's child) — found by scanning `/proc`.
//!
//! Covered: children, their process groups, anything left in their sessions (double forks,
//! `nohup`, `disown`), and descendants still attached to any of those. Not covered: a
//! process that both calls `setsid` and is re-parented away from the tree before the sweep
//! (it has left every handle the kernel gives us without a cgroup); such a process is
//! outside what an unprivileged tool server can track.
//!
//! A session id or process-group id is never reused by Linux while a member of the session
//! or group exists, so a match always belongs to the run.

use std::collections::{HashMap, HashSet};

/// One line of `/proc/PID/stat`, the fields the sweep needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// The process id.
    pub pid: i32,
    /// Its parent.
    pub ppid: i32,
    /// Its process group.
    pub pgrp: i32,
    /// Its session.
    pub session: i32,
}

/// Parses the text of `/proc/PID/stat`. The command name may hold spaces and parentheses,
/// so the fields are counted from its last `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let (head, rest) = text.rsplit_once(')')?;
    let pid = head.split_once('(')?.0.trim().parse().ok()?;
    let mut fields = rest.split_whitespace();
    let _state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some(ProcStat {
        pid,
        ppid,
        pgrp,
        session,
    })
}

/// Every process visible in `/proc` (those that vanish while being read are skipped).
pub fn all_processes() -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .filter_map(|t| parse_stat(&t))
        .collect()
}

/// The processes of `procs` that belong to `roots` (session or process-group ids the run
/// started), plus all their descendants. Never includes `exclude` (this server).
pub fn members(procs: &[ProcStat], roots: &HashSet<i32>, exclude: i32) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for p in procs {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut found: HashSet<i32> = procs
        .iter()
        .filter(|p| roots.contains(&p.session) || roots.contains(&p.pgrp))
        .map(|p| p.pid)
        .collect();
    let mut stack: Vec<i32> = found.iter().copied().collect();
    while let Some(pid) = stack.pop() {
        for &c in children.get(&pid).map(Vec::as_slice).unwrap_or(&[]) {
            if found.insert(c) {
                stack.push(c);
            }
        }
    }
    found.remove(&exclude);
    found.retain(|p| *p > 1);
    let mut out: Vec<i32> = found.into_iter().collect();
    out.sort_unstable();
    out
}

/// Kills (SIGKILL) every process group in `roots` and then every process the scan of
/// `/proc` finds in those sessions or groups or below them. A few rounds, since a process
/// may fork while it is being swept. Returns how many processes the scans found.
pub fn kill_all(roots: &HashSet<i32>) -> usize {
    if roots.is_empty() {
        return 0;
    }
    for &pgid in roots {
        crate::process::kill_group(pgid);
    }
    let me = std::process::id() as i32;
    let mut total = 0;
    for _ in 0..4 {
        let found = members(&all_processes(), roots, me);
        if found.is_empty() {
            break;
        }
        total += found.len();
        for pid in found {
            // SAFETY: kill takes plain integers and has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_with_spaces_and_parentheses() {
        let s = parse_stat("4242 (my (odd) name) S 1 4240 4100 0 -1 4194560 0").unwrap();
        assert_eq!(
            s,
            ProcStat {
                pid: 4242,
                ppid: 1,
                pgrp: 4240,
                session: 4100
            }
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn members_are_the_sessions_groups_and_their_descendants() {
        let p = |pid, ppid, pgrp, session| ProcStat {
            pid,
            ppid,
            pgrp,
            session,
        };
        let procs = [
            p(10, 1, 10, 10),  // a child of the run: session leader
            p(11, 10, 10, 10), // its child
            p(12, 1, 12, 10),  // double-forked into its own group, same session
            p(13, 11, 13, 13), // setsid, but still a descendant
            p(14, 13, 14, 13), // its child
            p(20, 1, 20, 20),  // someone else's
            p(99, 1, 99, 10),  // this server (never killed)
        ];
        let roots: HashSet<i32> = [10].into_iter().collect();
        assert_eq!(members(&procs, &roots, 99), vec![10, 11, 12, 13, 14]);
    }
}
