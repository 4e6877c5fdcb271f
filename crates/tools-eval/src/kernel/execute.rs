//! Running one cell on a kernel: the loop that carries its output, answers its bridged
//! `tool()` calls, enforces the idle budget and honours a cancel; and settling a cell whose
//! caller went away, so its output and completion are never taken for the next cell's.
//!
//! The idle budget: no output and no bridge call for the budget → interrupt (SIGINT to the
//! kernel's process group on Unix, a byte on its interrupts pipe on Windows), then kill
//! after a grace period. The budget is paused while a bridge call is pending.

use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use tools_core::{CallCtx, ToolError, ToolOutput};

use super::KernelProcess;
use crate::cell::{BridgeCall, CellEnd, CellRun, CellSettings, MAX_BRIDGE_LISTED};
use crate::protocol::{FromKernel, ToKernel};

type BridgeFuture = BoxFuture<'static, (u64, String, Result<ToolOutput, ToolError>)>;

enum StopReason {
    Idle(Duration),
    Cancel,
}

impl KernelProcess {
    /// Whether a cell is still running on the kernel (its caller went away before the
    /// cell's `done` came back).
    pub fn cell_in_flight(&self) -> bool {
        self.in_flight.is_some()
    }

    /// Ends a cell left running by a caller that went away: interrupts it, answers its
    /// bridged calls as cancelled and discards what it prints, until its `done` arrives.
    /// `Err` when it did not stop within `grace` (the kernel is then killed).
    pub async fn settle(&mut self, grace: Duration) -> Result<(), String> {
        let Some(id) = self.in_flight else {
            return Ok(());
        };
        for call in std::mem::take(&mut self.bridge_waiting) {
            let _ = self.channel.send(&cancelled_result(call)).await;
        }
        self.interrupter.interrupt();
        let deadline = tokio::time::Instant::now() + grace;
        let mut again = self.repeat_interrupt_at();
        loop {
            let wait_until = again.map_or(deadline, |t| t.min(deadline));
            let received = tokio::time::timeout_at(wait_until, self.channel.recv()).await;
            if received.is_err() && tokio::time::Instant::now() < deadline {
                self.interrupter.interrupt();
                again = self.repeat_interrupt_at();
                continue;
            }
            match received {
                Ok(Some(Ok(FromKernel::Done { id: done, .. }))) if done.is_none_or(|d| d == id) => {
                    self.in_flight = None;
                    return Ok(());
                }
                Ok(Some(Ok(FromKernel::ToolCall { id: call, .. }))) => {
                    let _ = self.channel.send(&cancelled_result(call)).await;
                }
                Ok(Some(Ok(_))) => {}
                Ok(Some(Err(e))) => {
                    self.child.kill();
                    return Err(format!("broke the protocol ({e})"));
                }
                Ok(None) => return Err("exited".into()),
                Err(_) => {
                    self.child.kill();
                    return Err(format!(
                        "was killed: an abandoned cell did not stop within {:.1} s of the interrupt",
                        grace.as_secs_f64()
                    ));
                }
            }
        }
    }

    /// Runs one cell under `settings`: its magics already rewritten, or, with
    /// `ipython_syntax`, left for the driver's IPython to transform. The kernel must not have
    /// a cell in flight ([`KernelProcess::settle`] first).
    pub async fn execute(
        &mut self,
        code: String,
        ipython_syntax: bool,
        cell: u64,
        ctx: &CallCtx,
        settings: &CellSettings,
    ) -> CellRun {
        let started = Instant::now();
        let mut run = CellRun::new(settings);
        let id = self.next_id;
        self.next_id += 1;
        // Stale messages from an earlier cell (output that arrived after its `done`) are
        // shown with this one, like a notebook does.
        while let Some(msg) = self.channel.try_recv() {
            if let Ok(m) = msg {
                run.absorb(m);
            }
        }
        if let Err(e) = self
            .channel
            .send(&ToKernel::Execute {
                id,
                cell,
                code,
                ipython: ipython_syntax,
                head: settings.head,
                tail: settings.tail,
            })
            .await
        {
            tracing::debug!("sending the cell failed: {e}");
            run.end = self.died().await;
            run.elapsed = started.elapsed();
            return run;
        }
        // Until its `done` arrives, the cell is in flight: if this future is dropped (the
        // caller went away), the next cell settles it first.
        self.in_flight = Some(id);
        let mut bridge: FuturesUnordered<BridgeFuture> = FuturesUnordered::new();
        self.bridge_waiting.clear();
        let mut last_activity = Instant::now();
        let mut stopping: Option<(Instant, StopReason)> = None;
        // After a cancel, when the interrupt follows the cancelled answers.
        let mut interrupt_at: Option<tokio::time::Instant> = None;
        let mut progress = tokio::time::interval(settings.progress_every);
        progress.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        progress.tick().await;
        let far = tokio::time::Instant::now() + Duration::from_secs(86_400 * 365);
        loop {
            let idle_deadline = tokio::time::Instant::from_std(last_activity + settings.idle);
            let grace_deadline = stopping
                .as_ref()
                .map(|(t, _)| tokio::time::Instant::from_std(*t + settings.grace))
                .unwrap_or(far);
            tokio::select! {
                // The cancel is looked at first: a bridged call that ends because of the
                // same cancel must be answered as cancelled, not with its own error.
                biased;
                _ = ctx.cancel.cancelled(), if stopping.is_none() => {
                    // Dropping the futures cancels the bridged calls themselves; the cell
                    // gets each one answered as cancelled (a ToolError it may catch), and
                    // the interrupt follows shortly, so it stops even if it catches that.
                    bridge = FuturesUnordered::new();
                    let waiting = std::mem::take(&mut self.bridge_waiting);
                    for call_id in &waiting {
                        let _ = self.channel.send(&cancelled_result(*call_id)).await;
                    }
                    let delay = if waiting.is_empty() { Duration::ZERO } else { CANCELLED_CALL_HEAD_START };
                    interrupt_at = Some(tokio::time::Instant::now() + delay);
                    stopping = Some((Instant::now(), StopReason::Cancel));
                }
                msg = self.channel.recv() => match msg {
                    None => {
                        run.end = self.died().await;
                        break;
                    }
                    Some(Err(e)) => {
                        self.child.kill();
                        run.end = CellEnd::Crashed {
                            how: format!("broke the protocol ({e}) and was stopped"),
                            log: self.child.stderr().last_lines(20),
                        };
                        break;
                    }
                    Some(Ok(FromKernel::Done { id: done, .. })) if done.is_some_and(|d| d != id) => {
                        tracing::debug!("discarding the late completion of cell request {done:?}");
                    }
                    Some(Ok(FromKernel::Done { status, output_chars, cut_chars, .. })) => {
                        self.in_flight = None;
                        run.output_chars = output_chars;
                        run.cut_chars = cut_chars;
                        run.end = match (&stopping, status.as_str()) {
                            (Some((_, StopReason::Idle(idle))), _) => CellEnd::Interrupted { idle: *idle },
                            (Some((_, StopReason::Cancel)), _) => CellEnd::Cancelled { killed: false },
                            _ => CellEnd::Finished,
                        };
                        break;
                    }
                    Some(Ok(FromKernel::ToolCall { id: call_id, .. })) if matches!(stopping, Some((_, StopReason::Cancel))) => {
                        let _ = self.channel.send(&cancelled_result(call_id)).await;
                    }
                    Some(Ok(FromKernel::ToolCall { id: call_id, name, args })) => {
                        last_activity = Instant::now();
                        self.bridge_waiting.push(call_id);
                        let invoker = ctx.invoker.clone();
                        let progress = ctx.progress.clone();
                        let cancel = ctx.cancel.child_token();
                        bridge.push(Box::pin(async move {
                            let res = invoker.call_cancellable(&name, args, progress, cancel).await;
                            (call_id, name, res)
                        }));
                    }
                    Some(Ok(other)) => {
                        last_activity = Instant::now();
                        run.absorb(other);
                    }
                },
                Some((call_id, name, res)) = bridge.next(), if !bridge.is_empty() => {
                    last_activity = Instant::now();
                    self.bridge_waiting.retain(|p| *p != call_id);
                    run.bridge_total += 1;
                    if run.bridge.len() < MAX_BRIDGE_LISTED {
                        run.bridge.push(BridgeCall { name, ok: res.is_ok() });
                    }
                    let reply = match res {
                        Ok(out) => ToKernel::ToolResult {
                            id: call_id,
                            ok: true,
                            text: Some(out.full_text()),
                            structured: out.full_structured(),
                            images: Some(out.images.len()),
                            error: None,
                            kind: None,
                        },
                        Err(e) => ToKernel::ToolResult {
                            id: call_id,
                            ok: false,
                            text: None,
                            structured: None,
                            images: None,
                            error: Some(e.to_string()),
                            kind: Some(e.kind().to_string()),
                        },
                    };
                    if let Err(e) = self.channel.send(&reply).await {
                        // The kernel is gone; the next message read reports how.
                        tracing::debug!("sending a tool result failed: {e}");
                    }
                }
                _ = tokio::time::sleep_until(idle_deadline), if bridge.is_empty() && stopping.is_none() => {
                    let idle = last_activity.elapsed();
                    self.interrupter.interrupt();
                    interrupt_at = self.repeat_interrupt_at();
                    stopping = Some((Instant::now(), StopReason::Idle(idle)));
                }
                _ = tokio::time::sleep_until(interrupt_at.unwrap_or(far)), if interrupt_at.is_some() => {
                    self.interrupter.interrupt();
                    interrupt_at = self.repeat_interrupt_at();
                }
                _ = tokio::time::sleep_until(grace_deadline), if stopping.is_some() => {
                    self.child.kill();
                    self.in_flight = None;
                    let _ = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
                    run.end = match &stopping {
                        Some((_, StopReason::Idle(idle))) => CellEnd::Killed { idle: *idle, grace: settings.grace },
                        _ => CellEnd::Cancelled { killed: true },
                    };
                    break;
                }
                _ = progress.tick() => {
                    let secs = started.elapsed().as_secs_f64();
                    let msg = if bridge.is_empty() {
                        format!("{} cell running for {secs:.0} s", self.language.name())
                    } else {
                        format!("{} cell running for {secs:.0} s, waiting on {} bridged tool call(s)", self.language.name(), bridge.len())
                    };
                    ctx.progress.report(secs, None, Some(msg));
                }
            }
        }
        run.elapsed = started.elapsed();
        run
    }
}

impl KernelProcess {
    /// When to send the interrupt again, for a kernel that may lose one. Node drops a
    /// SIGINT that arrives while the driver is busy just before it runs a script with
    /// `breakOnSigint` (Node detaches the process's SIGINT listeners for that run, and a
    /// signal not yet dispatched goes with them); the driver ignores an interrupt when no
    /// cell runs, so sending it again until the cell's `done` arrives is safe. Python keeps
    /// a pending signal, and a second one could break its cleanup: it gets one.
    fn repeat_interrupt_at(&self) -> Option<tokio::time::Instant> {
        (self.language == crate::Language::Javascript)
            .then(|| tokio::time::Instant::now() + REPEAT_INTERRUPT_EVERY)
    }
}

/// How often a JavaScript cell being stopped is interrupted again.
const REPEAT_INTERRUPT_EVERY: Duration = Duration::from_millis(500);

/// How long a cell blocked in `tool()` has to see its call answered as cancelled before the
/// interrupt arrives (an interrupt first would pre-empt that answer).
const CANCELLED_CALL_HEAD_START: Duration = Duration::from_millis(200);

/// The answer to a bridged call the host gave up on.
fn cancelled_result(id: u64) -> ToKernel {
    ToKernel::ToolResult {
        id,
        ok: false,
        text: None,
        structured: None,
        images: None,
        error: Some(
            "the tool call was cancelled: the eval call that ran this cell was cancelled".into(),
        ),
        kind: Some("cancelled".into()),
    }
}
