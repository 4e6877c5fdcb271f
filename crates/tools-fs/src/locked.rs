//! The locked section every writing tool of this crate runs its read-plan-write in.
//!
//! The work runs on the blocking pool (it is synchronous file I/O, and waiting for a path
//! lock must not stall the runtime) while holding the run's write locks of every path it
//! may change, so two calls on one file never plan from the same old content.

use std::path::PathBuf;

use tools_core::{CallCtx, PathGuard, PathLocks, ToolError, Workspace};

/// Runs `work` with the write locks of `paths` held.
pub(crate) async fn with_path_locks<T, F>(
    ctx: &CallCtx,
    paths: Vec<PathBuf>,
    work: F,
) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&Workspace, &PathGuard) -> Result<T, ToolError> + Send + 'static,
{
    let run = ctx.run.clone();
    tokio::task::spawn_blocking(move || {
        let guard = PathLocks::for_run(&run).lock(paths)?;
        work(run.workspace(), &guard)
    })
    .await
    .map_err(|e| ToolError::internal(format!("the file task failed: {e}")))?
}

/// Runs `work` (reads that need no lock) on the blocking pool.
pub(crate) async fn off_the_runtime<T, F>(ctx: &CallCtx, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&Workspace) -> Result<T, ToolError> + Send + 'static,
{
    let run = ctx.run.clone();
    tokio::task::spawn_blocking(move || work(run.workspace()))
        .await
        .map_err(|e| ToolError::internal(format!("the file task failed: {e}")))?
}

/// The SHA-256 of `bytes`, lowercase hex.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// The error for a failed write of the file shown as `shown`.
pub(crate) fn write_failed(e: tools_core::safe_write::FileError, shown: &str) -> ToolError {
    match e {
        tools_core::safe_write::FileError::Io(_) => ToolError::internal(format!(
            "cannot write `{shown}`: {e}; the file is unchanged"
        )),
        other => other.for_file(shown),
    }
}
