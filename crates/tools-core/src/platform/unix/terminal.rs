//! A terminal device opened for a conversation: non-blocking reads and writes through
//! tokio's readiness, without becoming this process's controlling terminal.

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use tokio::io::unix::AsyncFd;

/// An open terminal device (the controlling terminal `/dev/tty`, or a pseudo-terminal).
pub struct Terminal(AsyncFd<File>);

impl Terminal {
    /// Opens the terminal device `path` for reading and writing, non-blocking, without
    /// making it the controlling terminal: whether it can be opened now, and a plain file
    /// to write one last line to.
    pub fn open_device(path: &Path) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
    }

    /// Watches a device [`Terminal::open_device`] opened, for a conversation. Must be called
    /// inside a tokio runtime.
    pub fn watch(device: File) -> io::Result<Terminal> {
        // SAFETY: the `File` is owned by the AsyncFd for its whole life and its descriptor
        // never changes, which is what `register` asks of the caller.
        Ok(Terminal(unsafe { AsyncFd::register(device) }?))
    }

    /// Writes all of `bytes`, waiting while the terminal is not ready.
    pub async fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let mut guard = self.0.writable().await?;
            match guard.try_io(|f| f.get_ref().write(bytes)) {
                Ok(Ok(0)) => return Err(ErrorKind::WriteZero.into()),
                Ok(Ok(k)) => bytes = &bytes[k..],
                Ok(Err(e)) if e.kind() == ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
        Ok(())
    }

    /// Reads what was typed into `buf`, waiting until something is: `Some(0)` at end of
    /// input, `None` when the terminal hung up (whatever was typed before is lost with it).
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        loop {
            let mut guard = self.0.readable().await?;
            match guard.try_io(|f| f.get_ref().read(buf)) {
                Ok(Ok(k)) => return Ok(Some(k)),
                Ok(Err(e)) if e.kind() == ErrorKind::Interrupted => {}
                // A pseudo-terminal whose other side closed reads EIO: a hang-up.
                Ok(Err(e)) if e.raw_os_error() == Some(libc::EIO) => return Ok(None),
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
    }

    /// Drops keys typed before now, so they cannot answer what is asked next.
    pub fn discard_typeahead(&self) {
        // SAFETY: tcflush only reads the descriptor number, which the AsyncFd keeps open;
        // it fails harmlessly (ENOTTY) on a non-terminal.
        unsafe {
            libc::tcflush(self.0.get_ref().as_raw_fd(), libc::TCIFLUSH);
        }
    }
}
