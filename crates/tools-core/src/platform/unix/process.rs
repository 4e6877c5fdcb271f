//! Child process trees on Unix: each child leads a session (so a process group) of its own,
//! dies with this process where the kernel offers that (`PR_SET_PDEATHSIG` on Linux), and a
//! signal to its group reaches everything it started that stayed in it.

use std::fs::File;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::platform::Forked;

/// Runs in the child between fork and exec: a new session (so a new process group), and on
/// Linux SIGKILL when the parent dies. If the parent died before the `prctl`, the signal
/// would never come, so the child ends itself.
fn own_session_dying_with(parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: plain system calls without pointers, async-signal-safe.
    unsafe {
        if libc::setsid() < 0 {
            return Err(io::Error::last_os_error());
        }
        #[cfg(target_os = "linux")]
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            libc::raise(libc::SIGKILL);
        }
    }
    Ok(())
}

/// Makes `cmd` start its child in a session of its own that dies with this process (on
/// Linux; elsewhere the watchdog and the run's close end it).
pub(crate) fn own_tree_dying_with_us(cmd: &mut tokio::process::Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure only makes async-signal-safe calls (setsid, prctl, getppid,
    // raise) in the forked child.
    unsafe {
        cmd.pre_exec(move || own_session_dying_with(parent));
    }
}

/// Called once the child of [`own_tree_dying_with_us`] runs: its session was made before
/// exec, so nothing is left to do on Unix.
pub(crate) fn tree_started(_child: &tokio::process::Child) -> io::Result<()> {
    Ok(())
}

/// Called when the owner of a tree forgot it: groups hold no resource on Unix.
pub(crate) fn tree_forgotten(_pgid: i32) {}

/// Sends SIGKILL to a whole process group. Harmless if the group is gone.
pub(crate) fn kill_group(pgid: i32) {
    if pgid > 1 {
        // SAFETY: killpg takes plain integers and has no memory-safety preconditions.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

/// Sends `signal` to a whole process group.
pub(crate) fn signal_group(pgid: i32, signal: i32) -> io::Result<()> {
    if pgid > 1 {
        // SAFETY: as above.
        unsafe {
            libc::killpg(pgid, signal);
        }
    }
    Ok(())
}

/// Asks a whole process group to stop (SIGTERM), leaving it time to finish cleanly.
pub(crate) fn ask_group_to_stop(pgid: i32) -> io::Result<()> {
    signal_group(pgid, libc::SIGTERM)
}

/// The signal that ended a process, when a signal did.
pub fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

/// What the signal `sig` that ended a child usually means, for an error message; `None`
/// for the ones without a useful word.
pub fn signal_meaning(sig: i32) -> Option<&'static str> {
    Some(match sig {
        libc::SIGSEGV => "SIGSEGV: a segmentation fault",
        libc::SIGABRT => "SIGABRT: the program aborted",
        libc::SIGKILL => "SIGKILL: killed from outside, perhaps out of memory",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGTERM => "SIGTERM",
        _ => return None,
    })
}

/// Whether any process of group `pgid` still exists.
pub(crate) fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    pgid > 1 && unsafe { libc::killpg(pgid, 0) } == 0
}

/// Sends SIGKILL to the one process `pid`.
pub(crate) fn kill_process(pid: i32) {
    // SAFETY: kill takes plain integers and has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Reaps `pid`, a child of this process that exited, without waiting.
pub(crate) fn reap_exited(pid: i32) {
    // SAFETY: waitpid on a specific child pid with a null status pointer.
    unsafe {
        libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
    }
}

/// Ends this process at once, as a crash would (SIGKILL: no handler, no destructor).
pub(crate) fn kill_self_now() {
    // SAFETY: kill and getpid have no preconditions; SIGKILL cannot be caught.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
}

/// Forks a watchdog joined to this process by a pipe. Only sound while this process is
/// single-threaded (the child keeps running Rust code).
pub(crate) fn fork_watchdog() -> io::Result<Forked> {
    let (read_end, write_end) = std::io::pipe()?;
    // SAFETY: the caller guarantees a single-threaded process, so the child may run
    // ordinary code.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            drop(write_end);
            Ok(Forked::Watchdog {
                reports: File::from(std::os::fd::OwnedFd::from(read_end)),
            })
        }
        child => {
            drop(read_end);
            let file = File::from(std::os::fd::OwnedFd::from(write_end));
            set_nonblocking(&file);
            Ok(Forked::Server {
                pid: child,
                reports: file,
            })
        }
    }
}

/// A stuck watchdog must never block a spawn: reports to it are best effort.
fn set_nonblocking(file: &File) {
    // SAFETY: fcntl on an fd we own.
    unsafe {
        let fd = std::os::fd::AsRawFd::as_raw_fd(file);
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// Starts `program arg` as this process's watchdog: its standard input the read end of a
/// pipe whose write end (returned, non-blocking: a stuck watchdog must never hold up a
/// spawn) only this process holds, its output nowhere. Where the kernel shows this
/// process's own executable (`/proc/self/exe`), that is what starts, so a binary replaced
/// on disk since (an upgrade) still starts its own watchdog.
pub(crate) fn spawn_watchdog(program: &Path, arg: &str) -> io::Result<Option<(i32, File)>> {
    let own = Path::new("/proc/self/exe");
    let shown = program.as_os_str();
    let program = if cfg!(target_os = "linux") && own.exists() {
        own
    } else {
        program
    };
    // Named as the server's binary in a process listing, whichever path started it.
    let mut child = Command::new(program)
        .arg0(shown)
        .arg(arg)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let Some(stdin) = child.stdin.take() else {
        return Err(io::Error::other(
            "the watchdog's standard input was not piped",
        ));
    };
    let file = File::from(std::os::fd::OwnedFd::from(stdin));
    set_nonblocking(&file);
    let pid = i32::try_from(child.id()).map_err(io::Error::other)?;
    // The watchdog outlives this process by design: its handle is not waited on here (the
    // subreaper, or init, reaps it).
    drop(child);
    Ok(Some((pid, file)))
}

/// In a watchdog started by [`spawn_watchdog`]: its standard input (the pipe from the
/// server) as a file of its own, so [`detach_watchdog`] may close the standard streams.
pub(crate) fn stdin_as_file() -> io::Result<File> {
    use std::os::fd::AsFd;
    Ok(File::from(std::io::stdin().as_fd().try_clone_to_owned()?))
}

/// In the watchdog: leaves the server's session (a signal to the server's group does not
/// reach it) and lets go of the standard streams (a client waiting for the server's stdout
/// to close must not wait for the watchdog, which a fork shares them with).
pub(crate) fn detach_watchdog() {
    // SAFETY: plain system calls without pointers (and a path we own).
    unsafe {
        libc::setsid();
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
        }
    }
}

/// Ends the watchdog without running the server's atexit handlers or destructors.
pub(crate) fn exit_watchdog() -> ! {
    // SAFETY: `_exit` has no preconditions.
    unsafe { libc::_exit(0) }
}

/// Ends `pid` for good: when it leads a process group of its own, the whole group (a
/// debuggee an adapter started in a group of its own takes its children with it), else the
/// one process. A pid that is gone, or in no group, is left alone.
pub fn kill_leftover(pid: i32) {
    // SAFETY: getpgid and kill take plain integers and have no memory-safety preconditions.
    unsafe {
        let pgid = libc::getpgid(pid);
        if pgid == pid {
            libc::killpg(pgid, libc::SIGKILL);
        } else if pgid > 0 {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}
