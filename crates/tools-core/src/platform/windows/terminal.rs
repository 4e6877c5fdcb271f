//! Terminal conversations on Windows: not available yet. The console is not a device
//! opened by path as a Unix terminal is, so every call answers `Unsupported` naming that.

use std::fs::File;
use std::io;
use std::path::Path;

/// A terminal device for a conversation; none can be opened on this OS yet.
pub struct Terminal(());

/// Why every call fails.
fn unavailable() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "asking on the terminal is not available on this OS yet",
    )
}

impl Terminal {
    /// Answers that asking on the terminal is not available on this OS yet.
    pub fn open_device(_path: &Path) -> io::Result<File> {
        Err(unavailable())
    }

    /// Answers that asking on the terminal is not available on this OS yet.
    pub fn watch(_device: File) -> io::Result<Terminal> {
        Err(unavailable())
    }

    /// Never reached: no terminal is opened on this OS.
    pub async fn write_all(&self, _bytes: &[u8]) -> io::Result<()> {
        Err(unavailable())
    }

    /// Never reached: no terminal is opened on this OS.
    pub async fn read(&self, _buf: &mut [u8]) -> io::Result<Option<usize>> {
        Err(unavailable())
    }

    /// Never reached: no terminal is opened on this OS.
    pub fn discard_typeahead(&self) {}
}
