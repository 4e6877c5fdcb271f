//! One runner process, start to end: in a process tree of its own (tools-core's
//! [`ChildProcess`]), its stdout and stderr read up to a cap (past it the tree is stopped),
//! progress reported while it runs, and on a timeout or a cancelled call the whole tree
//! killed (the runner, its workers, whatever a test forked), so nothing is left running.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tools_core::process::{ChildProcess, Pipes};
use tools_core::{CallCtx, ToolError};

/// What the runner process left.
#[derive(Debug)]
pub struct Finished {
    /// Its exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Its stdout (up to the cap).
    pub stdout: String,
    /// Its stderr (up to the cap).
    pub stderr: String,
    /// Whether output passed the cap and the tree was stopped.
    pub cut: bool,
    /// Wall time.
    pub elapsed: Duration,
}

/// How a run may end besides finishing.
#[derive(Debug)]
pub enum Stopped {
    /// The time budget ran out; the tree was killed.
    TimedOut(Duration),
    /// The call was cancelled; the tree was killed.
    Cancelled,
}

/// Limits of one run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall-time budget.
    pub timeout: Duration,
    /// Bytes of stdout and of stderr kept each; past either the tree is stopped.
    pub output_cap: usize,
    /// Seconds between progress reports.
    pub progress_every: Duration,
}

/// Runs `cmd` to its end, or until `limits.timeout` or the call's cancellation (then its
/// whole tree is killed). `what` names the runner in progress messages.
pub async fn run_to_end(
    ctx: &CallCtx,
    cmd: tokio::process::Command,
    what: &str,
    limits: Limits,
) -> Result<Result<Finished, Stopped>, ToolError> {
    let started = Instant::now();
    let (err_tx, mut err_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let mut child = ChildProcess::spawn_with_stderr_tee(&ctx.run, cmd, Pipes::StdoutOnly, {
        move |chunk| {
            let _ = err_tx.send(chunk.to_vec());
        }
    })?;
    let mut stdout = child
        .take_stdout()
        .ok_or_else(|| ToolError::internal("the runner's stdout was not piped"))?;
    let cap = limits.output_cap;
    // Past the cap the tree is stopped at once: a runner blocked on a full pipe would
    // otherwise hold the other pipe open until the timeout.
    let pgid = child.pid();
    let cut = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let read_out = {
        let cut = Arc::clone(&cut);
        async move {
            let mut out = Vec::new();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match stdout.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) if out.len() + n > cap => {
                        out.extend_from_slice(&buf[..cap - out.len()]);
                        cut.store(true, std::sync::atomic::Ordering::SeqCst);
                        tools_core::process::kill_group(pgid);
                        break;
                    }
                    Ok(n) => out.extend_from_slice(&buf[..n]),
                }
            }
            out
        }
    };
    let read_err = {
        let cut = Arc::clone(&cut);
        async move {
            let mut err = Vec::new();
            while let Some(chunk) = err_rx.recv().await {
                if err.len() + chunk.len() > cap {
                    cut.store(true, std::sync::atomic::Ordering::SeqCst);
                    tools_core::process::kill_group(pgid);
                    break;
                }
                err.extend_from_slice(&chunk);
            }
            err
        }
    };
    let reading = async { tokio::join!(read_out, read_err) };
    tokio::pin!(reading);
    let deadline = tokio::time::sleep(limits.timeout);
    tokio::pin!(deadline);
    let mut ticks = tokio::time::interval(limits.progress_every);
    ticks.tick().await;
    let (out, err) = loop {
        tokio::select! {
            both = &mut reading => break both,
            _ = &mut deadline => {
                child.kill();
                return Ok(Err(Stopped::TimedOut(limits.timeout)));
            }
            _ = ctx.cancel.cancelled() => {
                child.kill();
                return Ok(Err(Stopped::Cancelled));
            }
            _ = ticks.tick() => {
                let secs = started.elapsed().as_secs_f64();
                ctx.progress.report(secs, None, Some(format!("{what} running for {secs:.0} s")));
            }
        }
    };
    let cut = cut.load(std::sync::atomic::Ordering::SeqCst);
    if cut {
        child.kill();
    }
    // Both pipes are closed: the runner has exited or is about to; a test that forked a
    // child holding no pipe is ended with the tree below.
    let status = tokio::select! {
        s = child.wait() => s.ok(),
        _ = &mut deadline => None,
    };
    child.kill();
    Ok(Ok(Finished {
        code: status.and_then(|s| s.code()),
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
        cut,
        elapsed: started.elapsed(),
    }))
}
