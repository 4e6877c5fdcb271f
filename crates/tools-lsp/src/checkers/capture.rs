//! A compiler or configure step run for what it prints on stderr: stdout discarded, stderr
//! read up to a cap (the process is stopped past it), bounded in time. Shared by the C
//! checker's syntax pass and the CMake configure; uses nothing else of the crate.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tools_core::process::{ChildProcess, Pipes};
use tools_core::{Run, ToolError};

/// Output bytes read from one compile; past this the compiler is stopped.
const COMPILE_OUTPUT_CAP: usize = 256 * 1024;

/// Runs `cmd` with stdout discarded, reading at most [`COMPILE_OUTPUT_CAP`] bytes of its
/// stderr (the compiler is stopped past that). `None` when it did not finish within
/// `timeout` (it is killed).
pub(crate) async fn run_capturing_stderr(
    run: &Arc<Run>,
    mut cmd: tokio::process::Command,
    timeout: Duration,
) -> Result<Option<(Option<i32>, String)>, ToolError> {
    cmd.env("NO_COLOR", "1");
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
    // The sender lives in the drain task, so the channel closes exactly when stderr does:
    // everything the compiler wrote has been read once `recv` returns `None`.
    let mut child = ChildProcess::spawn_with_stderr_tee(run, cmd, Pipes::None, move |chunk| {
        let _ = tx.send(chunk.to_vec());
    })?;
    let read = async {
        let mut buf = Vec::new();
        while let Some(chunk) = rx.recv().await {
            buf.extend_from_slice(&chunk);
            if buf.len() > COMPILE_OUTPUT_CAP {
                buf.truncate(COMPILE_OUTPUT_CAP);
                child.kill();
                break;
            }
        }
        let status = child.wait().await.ok();
        (status, buf)
    };
    let outcome = tokio::time::timeout(timeout, read).await;
    child.kill();
    Ok(outcome.ok().map(|(status, buf)| {
        (
            status.and_then(|s| s.code()),
            String::from_utf8_lossy(&buf).into_owned(),
        )
    }))
}
