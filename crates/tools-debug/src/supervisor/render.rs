//! Rendering what the program did: the first stop, a stop after a step or `continue`, a
//! program still running or ended — the text the agent reads and its structured twin.

use std::time::Duration;

use serde_json::{Value, json};
use tools_core::text::cut_text;
use tools_core::{ToolError, ToolOutput};

use super::inspect::frames_total;
use super::{DebugSupervisor, Inner};
use crate::error::Error;
use crate::protocol::StopEvent;
use crate::report::{self, STACK_CAP, STOP_FRAMES, VALUE_CAP};
use crate::session::{Session, WaitOutcome, normalise_reason};

impl DebugSupervisor {
    /// Waits for the next stop (or end) and reports it, prefixed by `head`.
    pub(super) async fn wait_and_report(
        &self,
        inner: &mut Inner,
        bound: Duration,
        mut head: Vec<String>,
        attached_quick: bool,
    ) -> Result<ToolOutput, ToolError> {
        let Some(s) = inner.session.as_mut() else {
            return Err(ToolError::internal("the session vanished"));
        };
        let outcome = s.wait_for_stop(bound).await;
        match outcome {
            WaitOutcome::Stopped(stop) => {
                let (text, structured) = match self.describe_stop(s, stop).await {
                    Ok(v) => v,
                    Err(e) => return Err(self.fail(inner, e).await),
                };
                head.push(text);
                Ok(ToolOutput::text(head.join("\n")).with_structured(structured))
            }
            WaitOutcome::StillRunning => {
                let tail = s.client.with(|st| st.output.to_text()).unwrap_or_default();
                let mut text = if attached_quick {
                    "attached; the program is running (breakpoints are set). `continue` waits for the next stop, \
                     `pause` stops it where it is."
                        .to_string()
                } else {
                    format!(
                        "still running after {} (no stop yet). `pause` stops it where it is, `continue` keeps waiting, \
                         `output` shows what it printed.",
                        report::human(bound)
                    )
                };
                if let Some(t) = report::output_tail(&tail) {
                    text.push_str(&format!("\noutput so far:\n{t}"));
                }
                head.push(text);
                Ok(ToolOutput::text(head.join("\n")).with_structured(json!({"state": "running"})))
            }
            WaitOutcome::Terminated { exit_code } => {
                let tail = s.client.with(|st| st.output.to_text()).unwrap_or_default();
                let mut text = match exit_code {
                    Some(c) => format!("terminated: the program exited with code {c}"),
                    None => "terminated: the program ended (the adapter reported no exit code)"
                        .to_string(),
                };
                if let Some(t) = report::output_tail(&tail) {
                    text.push_str(&format!("\noutput:\n{t}"));
                }
                text.push_str("\n(`launch` starts it again; breakpoints are kept)");
                head.push(text);
                Ok(ToolOutput::text(head.join("\n")).with_structured(json!({
                    "state": "terminated", "exit_code": exit_code, "output_tail": report::output_tail(&tail),
                })))
            }
            WaitOutcome::AdapterGone => {
                let err = self.crash_error(s, None);
                self.clear(inner, err.to_string()).await;
                Err(err)
            }
        }
    }

    async fn describe_stop(
        &self,
        s: &mut Session,
        stop: StopEvent,
    ) -> Result<(String, Value), Error> {
        let run = self.run().map_err(|e| Error::Other(e.to_string()))?;
        let ws = run.workspace();
        let reason = normalise_reason(&stop.raw_reason, &stop.hit_breakpoint_ids, s.requested);
        let thread = match stop.thread_id {
            Some(t) => t,
            None => s.thread(None).await?,
        };
        s.last_thread = Some(thread);
        let trace = s.stack(thread, STOP_FRAMES as u64 + 1).await?;
        let top = trace.stack_frames.first();
        let mut text = String::from("stopped: ");
        text.push_str(&reason);
        if reason != stop.raw_reason {
            text.push_str(&format!(" (adapter said \"{}\")", stop.raw_reason));
        }
        let mut exception = None;
        if reason == "exception" {
            exception = match s.exception_info(thread).await {
                Some(e) => Some(e),
                None => stop.text.clone().or(stop.description.clone()),
            };
        }
        if let Some(f) = top {
            text.push_str(&format!(" in {}", f.name));
            if let Some(loc) = report::frame_location(ws, f) {
                text.push_str(&format!(" at {loc}"));
            }
        }
        text.push_str(&format!(" (thread {thread})"));
        if let Some(e) = &exception {
            text.push_str(&format!("\nexception: {}", cut_text(e, VALUE_CAP)));
        }
        let src = top.and_then(report::source_line);
        if let (Some(f), Some(l)) = (top, &src) {
            text.push_str(&format!("\n{:>5} | {l}", f.line));
        }
        let total = frames_total(&trace, STOP_FRAMES);
        text.push_str("\nframes:");
        for (i, f) in trace.stack_frames.iter().take(STOP_FRAMES).enumerate() {
            text.push_str(&format!("\n  {}", report::frame_line(ws, i, f)));
        }
        if total > STOP_FRAMES {
            text.push_str(&format!(
                "\n  … {} more not shown (`stack` lists up to {STACK_CAP})",
                total - STOP_FRAMES
            ));
        }
        let structured = json!({
            "state": "stopped",
            "reason": reason,
            "adapter_reason": stop.raw_reason,
            "thread_id": thread,
            "exception": exception,
            "location": top.map(|f| report::frame_json(ws, f)),
            "source_line": src,
            "frames": trace.stack_frames.iter().take(STOP_FRAMES).map(|f| report::frame_json(ws, f)).collect::<Vec<_>>(),
        });
        Ok((text, structured))
    }
}
