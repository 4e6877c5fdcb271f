//! The process behind a client: a child of this process, or a server the per-user daemon
//! holds for every conversation that shares it (see the `tools-daemon` crate). A served
//! server is not this conversation's to wait for or kill: closing the connection is all
//! this side does, and the daemon keeps the server warm for the next conversation.

use std::time::Duration;

use tools_core::process::ChildProcess;
use tools_daemon::Serving;

/// Where a client's server runs.
pub(crate) enum ServerProcess {
    /// Our own child.
    Own(Box<ChildProcess>),
    /// Served by the daemon.
    Daemon(Serving),
}

impl ServerProcess {
    /// The exit status if our own child exited.
    pub(crate) fn try_status(&mut self) -> Option<std::process::ExitStatus> {
        match self {
            ServerProcess::Own(c) => c.try_status(),
            ServerProcess::Daemon(_) => None,
        }
    }

    /// Waits at most `within` for our own child's exit status.
    pub(crate) async fn status_within(
        &mut self,
        within: Duration,
    ) -> Option<std::process::ExitStatus> {
        match self {
            ServerProcess::Own(c) => tokio::time::timeout(within, c.wait())
                .await
                .ok()
                .and_then(|r| r.ok()),
            ServerProcess::Daemon(_) => None,
        }
    }

    /// The last `n` lines our own child wrote to stderr (the daemon keeps a served
    /// server's).
    pub(crate) fn stderr_tail(&self, n: usize) -> String {
        match self {
            ServerProcess::Own(c) => c.stderr().last_lines(n),
            ServerProcess::Daemon(_) => String::new(),
        }
    }

    /// Waits up to `grace` for our own child's exit, then kills its tree.
    pub(crate) async fn shutdown(&mut self, grace: Duration) {
        if let ServerProcess::Own(c) = self {
            c.shutdown(grace).await;
        }
    }

    /// Kills our own child's tree now.
    pub(crate) fn kill(&mut self) {
        if let ServerProcess::Own(c) = self {
            c.kill();
        }
    }

    /// How the daemon serves it, when it does.
    pub(crate) fn serving(&self) -> Option<&Serving> {
        match self {
            ServerProcess::Daemon(s) => Some(s),
            ServerProcess::Own(_) => None,
        }
    }
}
