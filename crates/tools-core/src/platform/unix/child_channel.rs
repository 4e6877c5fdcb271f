//! A private channel to a child we start (the `eval` kernels), on Unix: inherited pipes on
//! fixed descriptor numbers, and SIGINT to the child's group as the interrupt.
//!
//! The child finds, installed between `fork` and `exec`:
//!   3  the commands from us (read end)
//!   4  its messages to us (write end)
//!   5  the non-blocking read end of the pipe that is its fd 1
//!   6  the non-blocking read end of the pipe that is its fd 2
//!   7  its original stderr (the bounded log [`crate::process::ChildProcess`] keeps)
//! So whatever the child's own code, C libraries or subprocesses write to fds 1 and 2, the
//! child itself reads back and can frame in order with everything else, and the protocol
//! stays clean.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use tokio::net::unix::pipe;

use crate::platform::ChannelEnds;

/// The pipes of a channel, made before the child starts.
pub struct ChildChannel {
    commands: OwnedFd,
    messages: OwnedFd,
    /// The child's ends (and the read ends of its output pipes), closed here once it runs.
    childs: [OwnedFd; 6],
}

/// A pipe whose two ends are closed on exec (the child gets its copies through
/// [`install_fds`] only).
fn os_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = std::io::pipe()?;
    Ok((OwnedFd::from(read), OwnedFd::from(write)))
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl on an open fd we own.
    let ok = unsafe {
        let flags = libc::fcntl(raw, libc::F_GETFL);
        flags >= 0 && libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
    };
    if ok {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Runs in the child between fork and exec: only async-signal-safe calls (fcntl, dup2).
/// `sources` are, in order, what becomes fds 3, 4, 5, 6, 1 and 2; the child's stderr moves
/// to fd 7 first.
fn install_fds(sources: &[RawFd; 6]) -> io::Result<()> {
    const TARGETS: [RawFd; 6] = [3, 4, 5, 6, 1, 2];
    let check = |rc: libc::c_int| {
        if rc < 0 {
            Err(io::Error::last_os_error())
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

impl ChildChannel {
    /// Makes the pipes and arranges for `cmd`'s child to find them on its descriptors.
    pub fn install(cmd: &mut tokio::process::Command) -> io::Result<ChildChannel> {
        let (cmd_r, cmd_w) = os_pipe()?;
        let (msg_r, msg_w) = os_pipe()?;
        let (out_r, out_w) = os_pipe()?;
        let (err_r, err_w) = os_pipe()?;
        set_nonblocking(&out_r)?;
        set_nonblocking(&err_r)?;
        let sources = [
            cmd_r.as_raw_fd(),
            msg_w.as_raw_fd(),
            out_r.as_raw_fd(),
            err_r.as_raw_fd(),
            out_w.as_raw_fd(),
            err_w.as_raw_fd(),
        ];
        // SAFETY: the closure only calls async-signal-safe functions (fcntl, dup2) on fds
        // that stay open until the child has started (the channel holds them until
        // `connect`).
        unsafe {
            cmd.pre_exec(move || install_fds(&sources));
        }
        Ok(ChildChannel {
            commands: cmd_w,
            messages: msg_r,
            childs: [cmd_r, msg_w, out_r, err_r, out_w, err_w],
        })
    }

    /// Our ends, once the child `pid` has started: the child's ends are closed here, so
    /// its exit reads as the end of its messages. Never waits on Unix.
    pub async fn connect(self, pid: i32) -> io::Result<ChannelEnds> {
        drop(self.childs);
        Ok(ChannelEnds {
            commands: Box::pin(pipe::Sender::from_owned_fd(self.commands)?),
            messages: Box::pin(pipe::Receiver::from_owned_fd(self.messages)?),
            interrupter: Interrupter { pid },
        })
    }
}

/// Interrupts the child: SIGINT to its whole group (its subprocesses get it too, as from
/// a terminal's Ctrl-C).
#[derive(Debug)]
pub struct Interrupter {
    pid: i32,
}

impl Interrupter {
    /// Sends the interrupt; a child that is gone is left alone.
    pub fn interrupt(&mut self) {
        if let Err(e) = super::process::signal_group(self.pid, libc::SIGINT) {
            tracing::debug!(pid = self.pid, error = %e, "could not interrupt a child");
        }
    }
}
