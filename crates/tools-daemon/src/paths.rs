//! Where a daemon of one build keeps its socket, its lock and its log: the user's runtime
//! folder ([`tools_core::platform::runtime_folder`]), made private to the user.

use std::path::{Path, PathBuf};

/// The files of the daemon of one build.
#[derive(Debug, Clone)]
pub struct DaemonPaths {
    /// The folder (private to the user).
    pub folder: PathBuf,
    /// The socket conversations connect to.
    pub socket: PathBuf,
    /// Held (an exclusive lock) by the daemon that serves the socket.
    pub lock: PathBuf,
    /// Where the daemon writes what it logs.
    pub log: PathBuf,
}

/// The prefix of every daemon's socket name in the folder.
pub const SOCKET_PREFIX: &str = "daemon-";

/// A log this big is set aside when a daemon starts (see [`DaemonPaths::set_log_aside_if_over`]).
pub const LOG_KEPT_BYTES: u64 = 8 << 20;

impl DaemonPaths {
    /// The files of the daemon of `build` in `folder`.
    pub fn in_folder(folder: &Path, build: &str) -> DaemonPaths {
        DaemonPaths {
            folder: folder.to_path_buf(),
            socket: folder.join(format!("{SOCKET_PREFIX}{build}.sock")),
            lock: folder.join(format!("{SOCKET_PREFIX}{build}.lock")),
            log: folder.join("daemon.log"),
        }
    }

    /// The files of the daemon of `build` in the user's runtime folder; `None` when no such
    /// folder can be named.
    pub fn for_user(build: &str) -> Option<DaemonPaths> {
        Some(Self::in_folder(
            &tools_core::platform::runtime_folder()?,
            build,
        ))
    }

    /// Makes the folder (and the folders above it) if missing; an error when what is there
    /// is not a folder of this user's alone.
    pub fn make_folder(&self) -> std::io::Result<()> {
        if let Some(parent) = self.folder.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if !tools_core::platform::make_own_private_dir(&self.folder)? {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not a folder of this user's: the daemon's socket is not put there",
                    self.folder.display()
                ),
            ));
        }
        Ok(())
    }

    /// Moves the log to `daemon.log.1` (replacing the one set aside before) when it has
    /// grown past `limit`: a daemon starts again after each idle exit and each new build, so
    /// the two files stay near `limit` each, however long the user keeps the tools. A log
    /// another process still writes (Windows refuses to move an open file) stays as it is.
    pub fn set_log_aside_if_over(&self, limit: u64) {
        let big = std::fs::metadata(&self.log).is_ok_and(|m| m.len() > limit);
        if big && let Err(e) = std::fs::rename(&self.log, self.log.with_extension("log.1")) {
            tracing::debug!("the daemon's log stays where it is: {e}");
        }
    }

    /// The sockets of daemons of other builds in the folder.
    pub fn other_builds(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(&self.folder) else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                *p != self.socket
                    && p.extension().is_some_and(|x| x == "sock")
                    && p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(SOCKET_PREFIX))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_past_the_limit_is_set_aside_once_and_a_small_one_stays() {
        let dir = tempfile::tempdir().unwrap();
        let paths = DaemonPaths::in_folder(dir.path(), "b1");
        let aside = dir.path().join("daemon.log.1");
        paths.set_log_aside_if_over(10);
        assert!(
            !paths.log.exists() && !aside.exists(),
            "no log: nothing to do"
        );
        std::fs::write(&paths.log, "0123456789").unwrap();
        paths.set_log_aside_if_over(10);
        assert_eq!(std::fs::read_to_string(&paths.log).unwrap(), "0123456789");
        std::fs::write(&aside, "older").unwrap();
        std::fs::write(&paths.log, "0123456789A").unwrap();
        paths.set_log_aside_if_over(10);
        assert!(!paths.log.exists());
        assert_eq!(std::fs::read_to_string(&aside).unwrap(), "0123456789A");
    }
}
