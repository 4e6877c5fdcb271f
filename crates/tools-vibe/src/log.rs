//! Worker logs: one file per worker in the run's own folder, created so that nothing planted
//! there is followed or reused (`O_EXCL|O_NOFOLLOW`, a private 0700 folder, 0600 files), and
//! written so that a full disk never stops a worker.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tools_core::{Run, ToolError};

/// The run's worker-log folder: `vibe/` in the run's state folder, created private (0700 on
/// Unix).
/// A symlink or a folder of someone else planted there is refused, so logs never land
/// outside the run's own folder.
pub(crate) fn private_log_dir(run: &Run) -> Result<PathBuf, ToolError> {
    let dir = run.state_dir()?.join("vibe");
    if !tools_core::platform::make_own_private_dir(&dir).map_err(|e| log_error(&dir, e))? {
        return Err(ToolError::internal(format!(
            "the worker-log folder {} is not a folder of ours (a link or another user's folder); refusing to write logs there",
            dir.display()
        )));
    }
    Ok(dir)
}

/// Creates a worker's log in `dir`: a new file (`O_EXCL`), never through a link
/// (`O_NOFOLLOW` on Unix), readable by the user only. `w1.log`, or `w1-2.log`, … when a name is
/// taken (a worker that failed to start, an earlier run with the same conversation id).
pub(crate) fn create_log(dir: &Path, id: &str) -> Result<PathBuf, ToolError> {
    let mut last = None;
    for n in 1..=64 {
        let path = if n == 1 {
            dir.join(format!("{id}.log"))
        } else {
            dir.join(format!("{id}-{n}.log"))
        };
        match tools_core::platform::private_file_options()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some((path, e)),
            Err(e) => return Err(log_error(&path, e)),
        }
    }
    match last {
        Some((path, e)) => Err(log_error(&path, e)),
        None => Err(ToolError::internal("no worker log name was tried")),
    }
}

fn log_error(path: &Path, e: std::io::Error) -> ToolError {
    ToolError::internal(format!(
        "cannot open the worker log {}: {e} (a file or link already there is never followed or reused)",
        path.display()
    ))
}

/// A shared handle to the log file; a write error is logged once and then ignored, so a full
/// disk never stops a worker.
#[derive(Clone)]
pub(crate) struct LogFile(Arc<Mutex<Option<std::fs::File>>>);

impl LogFile {
    /// Opens the log [`create_log`] made; a link planted in its place is not followed.
    pub(crate) fn open(path: &Path) -> Result<Self, ToolError> {
        let f = tools_core::platform::private_file_options()
            .append(true)
            .open(path)
            .map_err(|e| log_error(path, e))?;
        Ok(LogFile(Arc::new(Mutex::new(Some(f)))))
    }
    pub(crate) fn write(&self, bytes: &[u8]) {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = g.as_mut()
            && let Err(e) = f.write_all(bytes)
        {
            tracing::warn!("worker log write failed, no more log for this round: {e}");
            *g = None;
        }
    }
}
