//! Ends every process a run started, including the ones that tried to get away.
//!
//! Each child of a run starts in a session of its own (`setsid`), so its session id is its
//! pid. A grandchild that double-forks, or calls `setpgid`, leaves its parent's process
//! group and is re-parented to init, but it stays in the session unless it calls `setsid`
//! itself. On close the run kills every process whose session id or process group is one it
//! started, and every descendant of those (a debuggee that an adapter put in a session of
//! its own is still the adapter's child) — found in the OS's process listing (`/proc` on
//! Linux, libproc on macOS). Windows has no sessions: the sweep ends the groups only, and
//! there each group is a kill-on-close Job Object, which holds the whole tree anyway.
//!
//! Covered: children, their process groups, anything left in their sessions (double forks,
//! `nohup`, `disown`), and descendants still attached to any of those. A process that both
//! calls `setsid` and is orphaned (`setsid` plus a double fork) has left every handle above;
//! a server that calls [`adopt_orphans`] (the binary does) becomes the child subreaper of
//! its descendants, so such a process is re-parented to the server instead of init, and the
//! sweep also ends these strays: children of this process that are in none of the live
//! runs' sessions, nor in the server's own session. With several runs in one process, a
//! stray cannot be told apart by run, so it is ended when any run closes.
//!
//! A session id or process-group id is never reused by Linux while a member of the session
//! or group exists, so a match always belongs to the run.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

pub use crate::platform::{ProcStat, parse_stat};

/// Sessions of children that are still owned by some run (any run of this process).
static LIVE_SESSIONS: Mutex<Option<HashSet<i32>>> = Mutex::new(None);
/// Whether this process adopts orphaned descendants ([`adopt_orphans`]).
static ADOPTING: AtomicBool = AtomicBool::new(false);
/// A process of this server's own the sweep never ends (the watchdog), once recorded.
static SPARED: OnceLock<i32> = OnceLock::new();
/// Held from a child's fork until its session is recorded, and while strays are picked: a
/// child that exists but is not yet recorded would look like a stray.
static SPAWNING: Mutex<()> = Mutex::new(());

/// Records `pid`, a process of this server's own (the watchdog), as never a stray: it is
/// a child of this process in no run's session, which is what a stray looks like.
pub(crate) fn spare(pid: i32) {
    let _ = SPARED.set(pid);
}

/// Holds off the stray sweep while a child is spawned and its session recorded.
pub(crate) fn spawning() -> std::sync::MutexGuard<'static, ()> {
    SPAWNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes this process the child subreaper of its descendants (`PR_SET_CHILD_SUBREAPER`), so
/// orphans of the runs' processes are re-parented here and swept with the run. A
/// process-wide choice: the binary makes it; an embedding harness may.
pub fn adopt_orphans() -> std::io::Result<()> {
    crate::platform::become_subreaper()?;
    ADOPTING.store(true, Ordering::SeqCst);
    Ok(())
}

/// Records a child's session as owned by a run.
pub(crate) fn session_started(sid: i32) {
    if let Ok(mut s) = LIVE_SESSIONS.lock() {
        s.get_or_insert_with(HashSet::new).insert(sid);
    }
}

/// Forgets a session its owner ended.
pub(crate) fn session_ended(sid: i32) {
    if let Ok(mut s) = LIVE_SESSIONS.lock()
        && let Some(set) = s.as_mut()
    {
        set.remove(&sid);
    }
}

fn live_sessions() -> HashSet<i32> {
    LIVE_SESSIONS
        .lock()
        .ok()
        .and_then(|s| s.clone())
        .unwrap_or_default()
}

/// Every process the OS lists (`/proc` on Linux, libproc on macOS; those that vanish while
/// being read are skipped). Empty where the OS has no such listing (Windows).
pub fn all_processes() -> Vec<ProcStat> {
    crate::platform::all_processes().unwrap_or_default()
}

/// Orphans this server adopted: its children that are in none of `live` sessions and not
/// in the server's own session, except `keep` (the watchdog).
pub fn strays(procs: &[ProcStat], me: i32, live: &HashSet<i32>, keep: &[i32]) -> Vec<i32> {
    let my_session = procs.iter().find(|p| p.pid == me).map(|p| p.session);
    procs
        .iter()
        .filter(|p| p.ppid == me && Some(p.session) != my_session)
        .filter(|p| !live.contains(&p.session) && !keep.contains(&p.pid))
        .map(|p| p.pid)
        .collect()
}

/// The processes of `procs` that belong to `roots` (session or process-group ids the run
/// started) or are listed in `extra`, plus all their descendants. Never includes `exclude`
/// (this server).
pub fn members(procs: &[ProcStat], roots: &HashSet<i32>, exclude: i32) -> Vec<i32> {
    members_with(procs, roots, &[], exclude)
}

fn members_with(procs: &[ProcStat], roots: &HashSet<i32>, extra: &[i32], exclude: i32) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for p in procs {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut found: HashSet<i32> = procs
        .iter()
        .filter(|p| roots.contains(&p.session) || roots.contains(&p.pgrp))
        .map(|p| p.pid)
        .chain(extra.iter().copied())
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
    sweep(roots, false)
}

/// [`kill_all`] for a closing run: also ends (and reaps) the adopted strays, when this
/// process adopts orphans.
pub fn kill_run(roots: &HashSet<i32>) -> usize {
    sweep(roots, ADOPTING.load(Ordering::SeqCst))
}

fn sweep(roots: &HashSet<i32>, adopting: bool) -> usize {
    let _no_spawns = adopting.then(spawning);
    if roots.is_empty() && !adopting {
        return 0;
    }
    for &pgid in roots {
        crate::process_group::kill_group(pgid);
    }
    let me = std::process::id() as i32;
    let keep: Vec<i32> = SPARED.get().copied().into_iter().collect();
    let mut total = 0;
    for _ in 0..4 {
        let Some(procs) = listed_processes() else {
            break;
        };
        let extra = if adopting {
            strays(&procs, me, &live_sessions(), &keep)
        } else {
            Vec::new()
        };
        reap_zombies(&procs, &extra, me);
        let live: Vec<i32> = procs.iter().filter(|p| !p.zombie).map(|p| p.pid).collect();
        let found: Vec<i32> = members_with(&procs, roots, &extra, me)
            .into_iter()
            .filter(|p| live.contains(p) && !keep.contains(p))
            .collect();
        if found.is_empty() {
            break;
        }
        total += found.len();
        for pid in found {
            crate::platform::kill_process(pid);
        }
    }
    if adopting {
        // Give the kernel a moment to turn the killed strays into zombies, then reap them.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let procs = listed_processes().unwrap_or_default();
        let extra = strays(&procs, me, &live_sessions(), &keep);
        reap_zombies(&procs, &extra, me);
    }
    total
}

/// The OS's process listing; `None` where it has none, said once in the log: the sweep
/// then ends the runs' process groups only (on Windows each is a Job Object holding the
/// whole tree).
fn listed_processes() -> Option<Vec<ProcStat>> {
    static SAID: std::sync::Once = std::sync::Once::new();
    match crate::platform::all_processes() {
        Ok(procs) => Some(procs),
        Err(e) => {
            SAID.call_once(|| {
                tracing::info!(error = %e, "the sweep ends process groups only on this OS");
            });
            None
        }
    }
}

/// Reaps the zombies among `strays` (adopted children nobody else waits for).
fn reap_zombies(procs: &[ProcStat], strays: &[i32], me: i32) {
    for p in procs {
        if p.zombie && p.ppid == me && strays.contains(&p.pid) {
            crate::platform::reap_exited(p.pid);
        }
    }
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
                session: 4100,
                zombie: false,
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
            zombie: false,
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

    #[test]
    fn strays_are_adopted_children_outside_every_live_session() {
        let p = |pid, ppid, session| ProcStat {
            pid,
            ppid,
            pgrp: pid,
            session,
            zombie: false,
        };
        let procs = [
            p(99, 1, 50),  // this server, in the session it was started in
            p(10, 99, 10), // a run's child (live session)
            p(30, 99, 30), // an orphan that called setsid, adopted
            p(31, 30, 30), // its child
            p(40, 99, 50), // a helper of the server itself (its own session)
            p(60, 99, 60), // the watchdog
        ];
        let live: HashSet<i32> = [10].into_iter().collect();
        assert_eq!(strays(&procs, 99, &live, &[60]), vec![30]);
        let none = HashSet::new();
        assert_eq!(members_with(&procs, &none, &[30], 99), vec![30, 31]);
    }
}
