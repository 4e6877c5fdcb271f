//! The per-user daemon's local socket on Windows: not built yet. A named pipe with the
//! user's own ACL is what it needs; until then every call answers `Unsupported`, and
//! `agent-tools mcp` serves its conversation in-process (as with `--no-daemon`).

use std::io;
use std::path::{Path, PathBuf};

/// A connection to or from the daemon (none exist on Windows yet).
#[derive(Debug)]
pub enum LocalStream {}

impl tokio::io::AsyncRead for LocalStream {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        _: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        match *self {}
    }
}

impl tokio::io::AsyncWrite for LocalStream {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        _: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        match *self {}
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        match *self {}
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        match *self {}
    }
}

/// The daemon's listening socket (none on Windows yet).
#[derive(Debug)]
pub struct LocalListener {
    path: PathBuf,
}

fn unsupported() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "the per-user daemon has no named pipe on Windows yet",
    )
}

impl LocalListener {
    /// Always `Unsupported` on Windows.
    pub fn bind(_path: &Path) -> io::Result<LocalListener> {
        Err(unsupported())
    }

    /// Never answers: no listener can be made.
    pub async fn accept(&self) -> io::Result<(LocalStream, bool)> {
        Err(unsupported())
    }

    /// Where it would listen.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Always `Unsupported` on Windows.
pub async fn connect_local(_path: &Path) -> io::Result<LocalStream> {
    Err(unsupported())
}

/// Whether the daemon's local sockets exist on this OS.
pub const LOCAL_SOCKETS: bool = false;

/// Nothing to do: a Windows process started by another is not in its console group unless
/// it shares the console, and the daemon is started without one.
pub fn detach_from_our_group(_cmd: &mut std::process::Command) {}
