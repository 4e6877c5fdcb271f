//! Starting a kernel process: its command line, the pipes it talks over, and their
//! installation on the child's fds between `fork` and `exec`; and how to say how it ended.
//!
//! The channel is two pipes on fds 3 and 4 of the child; fds 1 and 2 of the child are two
//! more pipes whose read ends the driver itself holds (fds 5 and 6), so a cell's prints, its
//! C code's writes and its subprocesses' output all come back as the cell's streams, in
//! order with everything else, while the protocol stays clean. The child's original stderr
//! (tools-core's bounded log) moves to fd 7: the driver's own diagnostics and Python's fault
//! handler write there, and a crash report quotes it.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use tools_core::process::{ChildProcess, Pipes};
use tools_core::{Run, ToolError};

use crate::Language;
use crate::discover::Interpreter;

/// The Python driver: its parts joined in order into the one program `python -c` runs.
const PYTHON_DRIVER: &str = concat!(
    include_str!("../drivers/python/channel.py"),
    include_str!("../drivers/python/output.py"),
    include_str!("../drivers/python/display.py"),
    include_str!("../drivers/python/bridge.py"),
    include_str!("../drivers/python/magics.py"),
    include_str!("../drivers/python/ipython.py"),
    include_str!("../drivers/python/cell.py"),
    include_str!("../drivers/python/main.py"),
);
const JS_DRIVER: &str = include_str!("../drivers/js_kernel.js");
/// Runs the driver (argv[1]) in its own namespace, so `__main__` stays the user's.
const PYTHON_BOOT: &str = "exec(compile(__import__('sys').argv.pop(1), '<eval-kernel>', 'exec'), {'__name__': '_eval_kernel'})";

/// A started kernel process and the host's ends of its protocol pipes.
pub(super) struct StartedProcess {
    /// The process (its own process group).
    pub child: ChildProcess,
    /// Where the host writes commands (the child's fd 3).
    pub commands: OwnedFd,
    /// Where the host reads messages (the child's fd 4).
    pub messages: OwnedFd,
}

/// A pipe whose two ends are closed on exec (the child gets its copies through
/// [`install_fds`] only).
fn os_pipe() -> Result<(OwnedFd, OwnedFd), ToolError> {
    let (read, write) = std::io::pipe()
        .map_err(|e| ToolError::internal(format!("cannot create a pipe for the kernel: {e}")))?;
    Ok((OwnedFd::from(read), OwnedFd::from(write)))
}

fn set_nonblocking(fd: &OwnedFd) -> Result<(), ToolError> {
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl on an open fd we own.
    let ok = unsafe {
        let flags = libc::fcntl(raw, libc::F_GETFL);
        flags >= 0 && libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
    };
    if ok {
        Ok(())
    } else {
        Err(ToolError::internal(format!(
            "cannot configure the kernel's output pipe: {}",
            std::io::Error::last_os_error()
        )))
    }
}

/// Runs in the child between fork and exec: only async-signal-safe calls (fcntl, dup2).
/// `sources` are, in order, what becomes fds 3, 4, 5, 6, 1 and 2; the child's stderr moves
/// to fd 7 first.
fn install_fds(sources: &[RawFd; 6]) -> std::io::Result<()> {
    const TARGETS: [RawFd; 6] = [3, 4, 5, 6, 1, 2];
    let check = |rc: libc::c_int| {
        if rc < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(rc)
        }
    };
    // Park every source above the targets first, so no dup2 clobbers a source that happens
    // to sit on a target number. The parked copies are close-on-exec.
    // SAFETY: fcntl/dup2 on fds that are open in this (child) process.
    unsafe {
        let log = check(libc::fcntl(2, libc::F_DUPFD_CLOEXEC, 20))?;
        let mut parked = [0 as RawFd; 6];
        for (slot, src) in parked.iter_mut().zip(sources) {
            *slot = check(libc::fcntl(*src, libc::F_DUPFD_CLOEXEC, 20))?;
        }
        check(libc::dup2(log, 7))?;
        for (src, target) in parked.iter().zip(TARGETS) {
            check(libc::dup2(*src, target))?;
        }
    }
    Ok(())
}

/// Starts `interpreter` on the driver of `language`, in the workspace, with its pipes
/// installed.
pub(super) fn spawn(
    run: &Arc<Run>,
    language: Language,
    interpreter: &Interpreter,
) -> Result<StartedProcess, ToolError> {
    let (cmd_r, cmd_w) = os_pipe()?;
    let (msg_r, msg_w) = os_pipe()?;
    let (out_r, out_w) = os_pipe()?;
    let (err_r, err_w) = os_pipe()?;
    set_nonblocking(&out_r)?;
    set_nonblocking(&err_r)?;
    let mut cmd = tools_core::child_command(run, &interpreter.path);
    match language {
        Language::Python => {
            cmd.arg("-c").arg(PYTHON_BOOT).arg(PYTHON_DRIVER);
        }
        Language::Javascript => {
            // --expose-internals: the driver parses cells with Node's bundled parser.
            cmd.arg("--expose-internals").arg("-e").arg(JS_DRIVER);
        }
    }
    cmd.current_dir(run.root())
        .env("MPLBACKEND", "Agg")
        .env("PYTHONUNBUFFERED", "1")
        .env("AGENT_TOOLS_EVAL_ROOT", run.root())
        .env("PYTHONIOENCODING", "utf-8");
    let sources = [
        cmd_r.as_raw_fd(),
        msg_w.as_raw_fd(),
        out_r.as_raw_fd(),
        err_r.as_raw_fd(),
        out_w.as_raw_fd(),
        err_w.as_raw_fd(),
    ];
    // SAFETY: the closure only calls async-signal-safe functions (fcntl, dup2) on fds
    // that stay open until `spawn` returns (they are dropped below, after it).
    unsafe {
        cmd.pre_exec(move || install_fds(&sources));
    }
    let child = ChildProcess::spawn(run, cmd, Pipes::None).map_err(|e| {
        ToolError::not_available(format!(
            "cannot start the {} kernel with {} ({}): {e}",
            language.name(),
            interpreter.path.display(),
            interpreter.why
        ))
    })?;
    drop((cmd_r, msg_w, out_r, err_r, out_w, err_w));
    Ok(StartedProcess {
        child,
        commands: cmd_w,
        messages: msg_r,
    })
}

/// How a kernel process ended, in words (`None`: it could not be reaped).
pub(super) fn describe_exit(status: Option<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => {
            if let Some(code) = s.code() {
                format!("exited with code {code}")
            } else if let Some(sig) = s.signal() {
                let name = match sig {
                    libc::SIGSEGV => " (SIGSEGV: a segmentation fault)",
                    libc::SIGABRT => " (SIGABRT: the interpreter aborted)",
                    libc::SIGKILL => " (SIGKILL: killed from outside, perhaps out of memory)",
                    libc::SIGBUS => " (SIGBUS)",
                    libc::SIGFPE => " (SIGFPE)",
                    libc::SIGTERM => " (SIGTERM)",
                    _ => "",
                };
                format!("was killed by signal {sig}{name}")
            } else {
                format!("stopped ({s})")
            }
        }
        None => "stopped answering".into(),
    }
}

/// The end of a kernel's log, as a suffix for an error message (empty when there is none).
pub(super) fn log_suffix(log: &str) -> String {
    let log = log.trim();
    if log.is_empty() {
        String::new()
    } else {
        format!("; its log ends with:\n{log}")
    }
}
