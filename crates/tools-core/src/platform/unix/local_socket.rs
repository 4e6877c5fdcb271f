//! The per-user daemon's local socket on Unix: a Unix socket in a folder only the user can
//! enter, the socket itself readable and writable by the user alone, and every connection's
//! peer checked to be the same user (the folder's mode is the first fence, the peer's
//! credentials the second: a socket passed through another route is still refused).

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

/// A connection to or from the daemon.
pub type LocalStream = tokio::net::UnixStream;

/// The daemon's listening socket.
#[derive(Debug)]
pub struct LocalListener {
    inner: tokio::net::UnixListener,
    path: PathBuf,
}

impl LocalListener {
    /// Listens at `path` (whose folder the caller made private). A file already there is an
    /// error: whoever binds must first hold the daemon's lock and remove a stale socket.
    pub fn bind(path: &Path) -> io::Result<LocalListener> {
        let inner = tokio::net::UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        Ok(LocalListener {
            inner,
            path: path.to_path_buf(),
        })
    }

    /// The next connection, and whether its peer is this user (a connection of another
    /// user is the caller's to refuse).
    pub async fn accept(&self) -> io::Result<(LocalStream, bool)> {
        let (stream, _) = self.inner.accept().await?;
        let same_user = stream
            .peer_cred()
            .map(|c| c.uid() == super::fs::effective_ids().0)
            .unwrap_or(false);
        Ok((stream, same_user))
    }

    /// Where it listens.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Connects to the daemon's socket at `path`.
pub async fn connect_local(path: &Path) -> io::Result<LocalStream> {
    LocalStream::connect(path).await
}

/// Whether the daemon's local sockets exist on this OS.
pub const LOCAL_SOCKETS: bool = true;

/// Makes `cmd` start in a process group of its own, so that a signal to the group of the
/// process that started it (a terminal's Ctrl-C, an MCP client stopping its server) does
/// not reach it: for the daemon, which outlives the conversation that started it.
pub fn detach_from_our_group(cmd: &mut std::process::Command) {
    cmd.process_group(0);
}
