//! A watchdog process that ends the runs' processes when this server dies without closing
//! them (SIGKILL, a crash, the OOM killer).
//!
//! `PR_SET_PDEATHSIG` only reaches a server's direct children; a language server's helper,
//! a worker's subprocess or a debuggee are grandchildren and are simply re-parented to
//! init. So a server that wants the whole guarantee calls [`start`] once, and its `main`
//! calls [`run_if_asked`] first thing: when the server starts its first child, its own
//! binary is started again as the watchdog ([`WATCHDOG_ARG`]), which leaves the server's
//! session (a signal to the server's process group does not reach it), reads a pipe from
//! the server on its standard input, and learns the session id of every child as it is
//! spawned ([`crate::process`] reports them). When the pipe reaches end of file — the
//! server is gone, however it went — the watchdog kills every process left in those
//! sessions or below them ([`crate::sweep`]) and exits. A server that exits normally has
//! already closed its runs, so the watchdog finds nothing.
//!
//! Started with the first child, not with the server: a conversation whose language
//! servers belong to the per-user daemon, and which starts nothing of its own, has no
//! watchdog to hold in memory.
//!
//! Without [`start`] (a harness embedding the tools), children still get `PDEATHSIG` and
//! every normal close sweeps their sessions; only the grandchildren of a killed server are
//! not covered.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// The argument that makes the binary the watchdog of the process that started it (see
/// [`run_if_asked`]). Not for people: it is never listed as a command.
pub const WATCHDOG_ARG: &str = "--watchdog-of-parent";

/// The binary to start as the watchdog, once [`start`] asked for one.
static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// The pipe to the watchdog: not started yet, started, or failed to start (not tried again).
enum Reports {
    NotStarted,
    Started(std::fs::File),
    Unavailable,
}

static REPORTS: Mutex<Reports> = Mutex::new(Reports::NotStarted);

/// Asks for a watchdog, started from this process's own binary with [`WATCHDOG_ARG`] when
/// the first child is spawned; that binary's `main` must call [`run_if_asked`] before
/// anything else. Calling it twice does nothing the second time. On Windows no watchdog is
/// needed (every child tree is in a kill-on-close Job Object) and none is started.
pub fn start() -> std::io::Result<()> {
    if PROGRAM.get().is_none() {
        let _ = PROGRAM.set(std::env::current_exe()?);
    }
    Ok(())
}

/// When this process was started as a watchdog (its first argument [`WATCHDOG_ARG`]):
/// watches its parent until the parent is gone, sweeps, and exits — it never returns then.
/// Otherwise returns at once.
pub fn run_if_asked() {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == WATCHDOG_ARG)
    {
        watch(std::io::stdin().lock())
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
    let Some(program) = PROGRAM.get() else {
        return;
    };
    let mut reports = match REPORTS.lock() {
        Ok(r) => r,
        Err(p) => p.into_inner(),
    };
    // Only a new session needs a watchdog: a forgotten one was reported to it, if at all.
    if matches!(*reports, Reports::NotStarted) && line.starts_with('+') {
        *reports = match crate::platform::spawn_watchdog(program, WATCHDOG_ARG) {
            Ok(Some((pid, pipe))) => {
                // The sweep must never take the watchdog for a stray.
                crate::sweep::spare(pid);
                Reports::Started(pipe)
            }
            Ok(None) => Reports::Unavailable,
            Err(e) => {
                tracing::warn!("no watchdog for the run's processes: {e}");
                Reports::Unavailable
            }
        };
    }
    if let Reports::Started(pipe) = &mut *reports {
        let _ = pipe.write_all(line.as_bytes());
    }
}

/// The watchdog's whole life: follow the reports until the server is gone, then sweep.
fn watch(reports: impl BufRead) -> ! {
    // Out of the server's session (it was started with no handle on the server's standard
    // streams: a client waiting for the server's stdout to close must not wait for it).
    crate::platform::detach_watchdog();
    let mut sessions = std::collections::HashSet::new();
    for line in reports.lines() {
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
