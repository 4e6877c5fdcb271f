//! A watchdog process that ends the runs' processes when this server dies without closing
//! them (SIGKILL, a crash, the OOM killer).
//!
//! `PR_SET_PDEATHSIG` only reaches a server's direct children; a language server's helper,
//! a worker's subprocess or a debuggee are grandchildren and are simply re-parented to
//! init. So a server that wants the whole guarantee calls [`start`] once, first thing in
//! `main`, while it is still single-threaded: it forks a small watchdog that leaves the
//! server's session (a signal to the server's process group does not reach it), holds the
//! read end of a pipe, and learns the session id of every child as it is spawned
//! ([`crate::process`] reports them). When the pipe reaches end of file — the server is
//! gone, however it went — the watchdog kills every process left in those sessions or
//! below them ([`crate::sweep`]) and exits. A server that exits normally has already
//! closed its runs, so the watchdog finds nothing.
//!
//! Without [`start`] (a harness embedding the tools), children still get `PDEATHSIG` and
//! every normal close sweeps their sessions; only the grandchildren of a killed server are
//! not covered.

use std::io::{BufRead, Write};
use std::sync::{Mutex, OnceLock};

use crate::platform::Forked;

static REPORTS: OnceLock<Mutex<std::fs::File>> = OnceLock::new();

/// Forks the watchdog. Call it before any thread is started (before building the async
/// runtime): the child keeps running Rust code after `fork`, which is only sound in a
/// single-threaded process. Calling it twice does nothing the second time. On Windows no
/// watchdog is needed (every child tree is in a kill-on-close Job Object) and none is made.
pub fn start() -> std::io::Result<()> {
    if REPORTS.get().is_some() {
        return Ok(());
    }
    match crate::platform::fork_watchdog()? {
        Forked::Watchdog { reports } => watch(reports),
        Forked::Server { pid, reports } => {
            // The sweep must never take the watchdog for a stray.
            crate::sweep::spare(pid);
            let _ = REPORTS.set(Mutex::new(reports));
            Ok(())
        }
        Forked::NotNeeded => Ok(()),
    }
}
/// Tells the watchdog (if one runs) about a child's session.
pub(crate) fn watch_session(sid: i32) {
    report(&format!("+{sid}\n"));
}

/// Tells the watchdog a session was ended by its owner.
pub(crate) fn forget_session(sid: i32) {
    report(&format!("-{sid}\n"));
}

fn report(line: &str) {
    if let Some(m) = REPORTS.get()
        && let Ok(mut f) = m.lock()
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// The watchdog's whole life: follow the reports until the server is gone, then sweep.
fn watch(reports: std::fs::File) -> ! {
    // Out of the server's session, and no handle on its standard streams: a client waiting
    // for the server's stdout to close must not wait for the watchdog.
    crate::platform::detach_watchdog();
    let mut sessions = std::collections::HashSet::new();
    let reader = std::io::BufReader::new(reports);
    for line in reader.lines() {
        let Ok(line) = line else { break };
        let (sign, rest) = line.split_at(line.len().min(1));
        if let Ok(sid) = rest.parse::<i32>() {
            match sign {
                "+" => {
                    sessions.insert(sid);
                }
                "-" => {
                    sessions.remove(&sid);
                }
                _ => {}
            }
        }
    }
    crate::sweep::kill_all(&sessions);
    // Without the parent's atexit handlers or destructors, which belong to the server.
    crate::platform::exit_watchdog()
}
