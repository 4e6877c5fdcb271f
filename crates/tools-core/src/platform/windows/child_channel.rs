//! A private channel to a child we start (the `eval` kernels), on Windows: three named
//! pipes whose names the child finds in its environment ([`CHANNEL_ENV`]), each opened
//! by the child once.
//!
//! Windows has no inherited descriptor numbers a Python or Node program can pick up, and
//! no signals, so: the child opens the commands pipe for reading and the messages pipe for
//! writing (two pipes, as a synchronous handle serialises a read and a write on it), and
//! the interrupts pipe for reading, on which each byte is an interrupt request. The pipes
//! are made for this user only, refuse remote clients, are first instances (no other
//! process can have made one of the same name first) and have unpredictable names; the
//! process that connects to each must be the child itself, or the channel is refused. The
//! child makes its own pipes for what it prints, where it can (Python: `os.dup2`).

use std::io;

use tokio::net::windows::named_pipe::NamedPipeServer;

use super::local_socket::{client_pid, create_instance};
use crate::platform::{CHANNEL_ENV, ChannelEnds};

/// The pipes of a channel, made before the child starts.
pub struct ChildChannel {
    commands: NamedPipeServer,
    messages: NamedPipeServer,
    interrupts: NamedPipeServer,
}

impl ChildChannel {
    /// Makes the pipes and puts their names in `cmd`'s environment.
    pub fn install(cmd: &mut tokio::process::Command) -> io::Result<ChildChannel> {
        let stem = format!(
            r"\\.\pipe\agent-tools-channel-{}-{}",
            std::process::id(),
            crate::random_name::random_hex()
        );
        let [commands_env, messages_env, interrupts_env] = CHANNEL_ENV;
        let mut make = |env: &str, part: &str| {
            let name = format!("{stem}-{part}");
            cmd.env(env, &name);
            create_instance(&name, true)
        };
        Ok(ChildChannel {
            commands: make(commands_env, "commands")?,
            messages: make(messages_env, "messages")?,
            interrupts: make(interrupts_env, "interrupts")?,
        })
    }

    /// Our ends, once the child `pid` has opened all three pipes (this waits for it: race
    /// it against the child's exit and a deadline). A pipe opened by any other process is
    /// refused.
    pub async fn connect(self, pid: i32) -> io::Result<ChannelEnds> {
        for pipe in [&self.commands, &self.messages, &self.interrupts] {
            pipe.connect().await?;
            let client = client_pid(pipe)?;
            if i64::from(client) != i64::from(pid) {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("process {client} opened the channel of process {pid}"),
                ));
            }
        }
        Ok(ChannelEnds {
            commands: Box::pin(self.commands),
            messages: Box::pin(self.messages),
            interrupter: Interrupter {
                pipe: self.interrupts,
            },
        })
    }
}

/// Interrupts the child: a byte on its interrupts pipe, which a thread of the child turns
/// into the same interrupt a Ctrl-C would be.
#[derive(Debug)]
pub struct Interrupter {
    pipe: NamedPipeServer,
}

impl Interrupter {
    /// Sends the interrupt; a child that is gone, or has not read the ones before, is left
    /// alone (one pending interrupt is as good as several).
    pub fn interrupt(&mut self) {
        if let Err(e) = self.pipe.try_write(b"!") {
            tracing::debug!(error = %e, "could not send an interrupt to a child");
        }
    }
}
