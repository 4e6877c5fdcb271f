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
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::{Mutex, OnceLock};

static REPORTS: OnceLock<Mutex<std::fs::File>> = OnceLock::new();

/// Forks the watchdog. Call it before any thread is started (before building the async
/// runtime): the child keeps running Rust code after `fork`, which is only sound in a
/// single-threaded process. Calling it twice does nothing the second time.
pub fn start() -> std::io::Result<()> {
    if REPORTS.get().is_some() {
        return Ok(());
    }
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded: both fds are open and owned by nobody else.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: the caller guarantees a single-threaded process, so the child may run
    // ordinary code; it never returns from `watch`.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()),
        0 => {
            drop(write_end);
            watch(read_end)
        }
        child => {
            // The sweep must never take the watchdog for a stray.
            crate::sweep::spare(child);
            drop(read_end);
            let file = std::fs::File::from(write_end);
            // A stuck watchdog must never block a spawn: reports are best effort.
            // SAFETY: fcntl on an fd we own.
            unsafe {
                let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
                let flags = libc::fcntl(fd, libc::F_GETFL);
                libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
            }
            let _ = REPORTS.set(Mutex::new(file));
            Ok(())
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
    if let Some(m) = REPORTS.get()
        && let Ok(mut f) = m.lock()
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// The watchdog's whole life: follow the reports until the server is gone, then sweep.
fn watch(reports: OwnedFd) -> ! {
    // SAFETY: plain system calls without pointers (and a path we own).
    unsafe {
        libc::setsid();
        // Keep no handle on the server's standard streams: a client waiting for the
        // server's stdout to close must not wait for the watchdog.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
        }
    }
    let mut sessions = std::collections::HashSet::new();
    let reader = std::io::BufReader::new(std::fs::File::from(reports));
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
    // SAFETY: ends this process without running the parent's atexit handlers or
    // destructors, which belong to the server.
    unsafe { libc::_exit(0) }
}
