//! A real pseudo-terminal for the terminal gate's tests (Unix: Windows has none).

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A real pseudo-terminal: the test plays the human on the master side; gates open the
/// slave by its path, as they would open `/dev/tty`.
pub struct Pty {
    pub slave_path: PathBuf,
    _slave: File,
    master: File,
    seen: Arc<Mutex<String>>,
}

/// A new pseudo-terminal: its master and slave ends, and the slave's path.
pub fn open_pair() -> (OwnedFd, OwnedFd, PathBuf) {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    // SAFETY: openpty writes two descriptors into the out-parameters; name, termios and
    // winsize are optional and passed as null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            // Mutable on macOS, `const` on Linux: a null of either kind fits both.
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(rc, 0, "openpty failed: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just returned by openpty and are owned here.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let slave_path = std::fs::read_link(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&slave)
    ))
    .unwrap();
    (master, slave, slave_path)
}

impl Pty {
    pub fn open() -> Pty {
        let (master, slave, slave_path) = open_pair();
        let master = File::from(master);
        let seen = Arc::new(Mutex::new(String::new()));
        let mut reader = master.try_clone().unwrap();
        let sink = seen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Pty {
            slave_path,
            _slave: File::from(slave),
            master,
            seen,
        }
    }

    /// Everything the terminal showed so far.
    pub fn screen(&self) -> String {
        self.seen.lock().unwrap().clone()
    }

    /// Waits until the screen contains `needle` `count` times (bounded, so a broken gate
    /// fails the test instead of hanging it).
    pub async fn wait_for(&self, needle: &str, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.screen().matches(needle).count() < count {
            assert!(
                Instant::now() < deadline,
                "terminal never showed {needle:?}; screen:\n{}",
                self.screen()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Types a line, as a human at the keyboard.
    pub fn type_line(&self, line: &str) {
        let mut m = &self.master;
        m.write_all(format!("{line}\n").as_bytes()).unwrap();
    }
}
