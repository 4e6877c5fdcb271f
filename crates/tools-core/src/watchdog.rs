//! A watchdog process that ends the runs' processes when this server dies without closing
//! them (SIGKILL, a crash, the OOM killer).
//!
//! `PR_SET_PDEATHSIG` only reaches a server's direct children; a language server's helper,
//! a worker's subprocess or a debuggee are grandchildren and are simply re-parented to
//! init. So a server that wants the whole guarantee has a watchdog: a small process that
//! leaves the server's session (a signal to the server's process group does not reach it),
//! reads a pipe from the server, and learns the session id of every child as it is spawned
//! ([`crate::process`] reports them). When the pipe reaches end of file — the server is
//! gone, however it went — the watchdog kills every process left in those sessions or
//! below them ([`crate::sweep`]) and exits. A server that exits normally has already closed
//! its runs, so the watchdog finds nothing.
//!
//! Two ways to have one. [`start`], first thing in `main` while the process is still
//! single-threaded, forks it (about 1.3 MiB resident, most of it shared with the server):
//! for a process that is sure to start children. [`start_with_first_child`] starts none
//! until the first child is spawned, and then runs the server's own binary again as the
//! watchdog ([`WATCHDOG_ARG`]; that binary's `main` calls [`run_if_asked`] first): about
//! 4.5 MiB resident, 2 MiB of it its own — for a process that may never start one, such as
//! a conversation whose language servers belong to the per-user daemon.
//!
//! Without either (a harness embedding the tools), children still get `PDEATHSIG` and
//! every normal close sweeps their sessions; only the grandchildren of a killed server are
//! not covered.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use crate::platform::Forked;

/// The argument that makes the binary the watchdog of the process that started it (see
/// [`run_if_asked`]). Not for people: it is never listed as a command.
pub const WATCHDOG_ARG: &str = "--watchdog-of-parent";

/// The binary to start as the watchdog with the first child ([`start_with_first_child`]).
static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// The pipe to the watchdog: not started yet, started, or none to be had (not tried again).
enum Reports {
    NotStarted,
    Started(std::fs::File),
    Unavailable,
}

static REPORTS: Mutex<Reports> = Mutex::new(Reports::NotStarted);

fn reports() -> std::sync::MutexGuard<'static, Reports> {
    match REPORTS.lock() {
        Ok(r) => r,
        Err(p) => p.into_inner(),
    }
}

/// Forks the watchdog. Call it before any thread is started (before building the async
/// runtime): the child keeps running Rust code after `fork`, which is only sound in a
/// single-threaded process. Calling it again, or after [`start_with_first_child`] started
/// one, does nothing. On Windows no watchdog is needed (every child tree is in a
/// kill-on-close Job Object) and none is made.
pub fn start() -> std::io::Result<()> {
    let mut reports = reports();
    if !matches!(*reports, Reports::NotStarted) {
        return Ok(());
    }
    match crate::platform::fork_watchdog()? {
        Forked::Watchdog { reports } => watch(std::io::BufReader::new(reports)),
        Forked::Server { pid, reports: pipe } => {
            // The sweep must never take the watchdog for a stray.
            crate::sweep::spare(pid);
            *reports = Reports::Started(pipe);
            Ok(())
        }
        Forked::NotNeeded => {
            *reports = Reports::Unavailable;
            Ok(())
        }
    }
}

/// Asks for a watchdog started with the first child this process spawns: this process's
/// own binary run again with [`WATCHDOG_ARG`], whose `main` must call [`run_if_asked`]
/// before anything else. Safe at any time (nothing is forked).
pub fn start_with_first_child() -> std::io::Result<()> {
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
        match crate::platform::stdin_as_file() {
            Ok(pipe) => watch(std::io::BufReader::new(pipe)),
            Err(_) => crate::platform::exit_watchdog(),
        }
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
    let mut reports = reports();
    // Only a new session needs a watchdog started with it: a forgotten one was reported to
    // the watchdog, if at all.
    if let Some(program) = PROGRAM.get()
        && matches!(*reports, Reports::NotStarted)
        && line.starts_with('+')
    {
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
    // Out of the server's session, and no handle on its standard streams: a client waiting
    // for the server's stdout to close must not wait for the watchdog.
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
