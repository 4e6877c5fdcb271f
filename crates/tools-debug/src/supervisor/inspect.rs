//! Inspecting a stopped program: threads, stack, scopes, variables, evaluate, and the
//! debuggee's output. Each answer is capped (the `report` caps) and needs a live session;
//! `scopes` and `evaluate` default to the top frame of the stopped thread.

use serde_json::json;
use tools_core::text::{cap_list, cut_text};
use tools_core::{ToolError, ToolOutput};

use super::DebugSupervisor;
use crate::error::Error;
use crate::protocol::Phase;
use crate::report::{self, STACK_CAP, THREADS_CAP, VALUE_CAP, VARIABLES_CAP};
use crate::session::Session;

/// Why the top frame could not be found: a plain answer, or a failed DAP exchange (which
/// may clear the session).
enum FrameError {
    Tool(ToolError),
    Dap(Error),
}

/// How many frames a thread has, from a trace asked for `cap + 1` levels. Adapters'
/// `totalFrames` is only an estimate (lldb-dap adds a margin for lazy loading), so it is
/// believed only when more than `cap` frames really came back.
pub(super) fn frames_total(trace: &dap_types::StackTraceResponse, cap: usize) -> usize {
    let got = trace.stack_frames.len();
    if got <= cap {
        return got;
    }
    trace.total_frames.map(|t| t as usize).unwrap_or(0).max(got)
}

impl DebugSupervisor {
    /// The id of the top frame of the stopped thread (the one `scopes` and `evaluate` use
    /// when no `frame_id` is given). `what` completes "the stopped thread has no frames to …".
    async fn top_frame(s: &mut Session, what: &str) -> Result<u64, FrameError> {
        let thread = s.thread(None).await.map_err(FrameError::Dap)?;
        let trace = s.stack(thread, 1).await.map_err(FrameError::Dap)?;
        match trace.stack_frames.first() {
            Some(f) => Ok(f.id),
            None => Err(FrameError::Tool(ToolError::rejected(format!(
                "the stopped thread has no frames to {what}"
            )))),
        }
    }

    /// `threads`.
    pub async fn threads(&self) -> Result<ToolOutput, ToolError> {
        let mut inner = self.inner.lock().await;
        self.require(&mut inner).await?;
        let Some(s) = inner.session.as_ref() else {
            return Err(ToolError::internal("no session"));
        };
        if s.client.phase() == Phase::Terminated {
            Self::require_stopped(s)?;
        }
        let threads = match s.threads().await {
            Ok(t) => t,
            Err(e) => return Err(self.fail(&mut inner, e).await),
        };
        let capped = cap_list(threads, THREADS_CAP);
        let mut lines: Vec<String> = capped
            .shown
            .iter()
            .map(|t| format!("thread {}: {}", t.id, t.name))
            .collect();
        if let Some(m) = capped.more_line() {
            lines.push(m);
        }
        if lines.is_empty() {
            lines.push("no threads".into());
        }
        Ok(ToolOutput::text(lines.join("\n")).with_structured(json!({
            "threads": capped.shown.iter().map(|t| json!({"id": t.id, "name": t.name})).collect::<Vec<_>>(),
            "total": capped.total,
        })))
    }

    /// `stack`: up to 30 frames from `offset`, as many as fit the answer budget.
    pub async fn stack(
        &self,
        thread_id: Option<u64>,
        offset: usize,
    ) -> Result<ToolOutput, ToolError> {
        let mut inner = self.inner.lock().await;
        self.require(&mut inner).await?;
        let run = self.run()?;
        let Some(s) = inner.session.as_mut() else {
            return Err(ToolError::internal("no session"));
        };
        Self::require_stopped(s)?;
        let thread = match s.thread(thread_id).await {
            Ok(t) => t,
            Err(e) => return Err(self.fail(&mut inner, e).await),
        };
        let wanted = offset.saturating_add(STACK_CAP);
        let trace = match s.stack(thread, wanted as u64 + 1).await {
            Ok(t) => t,
            Err(e) => return Err(self.fail(&mut inner, e).await),
        };
        let total = frames_total(&trace, wanted);
        let window: Vec<_> = trace
            .stack_frames
            .iter()
            .enumerate()
            .skip(offset)
            .take(STACK_CAP)
            .collect();
        let lines: Vec<String> = window
            .iter()
            .map(|(i, f)| format!("  {}", report::frame_line(run.workspace(), *i, f)))
            .collect();
        let (mut text, shown) = report::fill_lines(&format!("thread {thread}:"), &lines);
        if lines.is_empty() && total > 0 {
            text.push_str(&format!(
                "\n  `offset` {offset} is past the last frame (there are {total})"
            ));
        }
        let next = offset + shown;
        if let Some(more) = report::more_line("frames", next, total) {
            text.push_str(&format!("\n  {more}"));
        }
        Ok(ToolOutput::text(text).with_structured(json!({
            "thread_id": thread,
            "frames": window.iter().take(shown).map(|(_, f)| report::frame_json(run.workspace(), f)).collect::<Vec<_>>(),
            "offset": offset,
            "next_offset": (next < total).then_some(next),
            "total": total,
        })))
    }

    /// `scopes` of `frame_id`, or of the top frame of the stopped thread.
    pub async fn scopes(&self, frame_id: Option<u64>) -> Result<ToolOutput, ToolError> {
        let mut inner = self.inner.lock().await;
        self.require(&mut inner).await?;
        let Some(s) = inner.session.as_mut() else {
            return Err(ToolError::internal("no session"));
        };
        Self::require_stopped(s)?;
        let frame_id = match frame_id {
            Some(f) => f,
            None => match Self::top_frame(s, "list scopes of").await {
                Ok(f) => f,
                Err(FrameError::Tool(e)) => return Err(e),
                Err(FrameError::Dap(e)) => return Err(self.fail(&mut inner, e).await),
            },
        };
        let Some(s) = inner.session.as_ref() else {
            return Err(ToolError::internal("no session"));
        };
        let scopes = match s.scopes(frame_id).await {
            Ok(v) => v,
            Err(e) => return Err(self.fail(&mut inner, e).await),
        };
        let mut lines: Vec<String> = scopes
            .iter()
            .map(|sc| {
                format!(
                    "{} (reference {}){}",
                    sc.name,
                    sc.variables_reference,
                    if sc.expensive {
                        " — expensive to expand"
                    } else {
                        ""
                    }
                )
            })
            .collect();
        if lines.is_empty() {
            lines.push(format!("frame {frame_id} has no scopes"));
        }
        Ok(ToolOutput::text(lines.join("\n")).with_structured(json!({
            "frame_id": frame_id,
            "scopes": scopes.iter().map(|sc| json!({"name": sc.name, "reference": sc.variables_reference, "expensive": sc.expensive})).collect::<Vec<_>>(),
        })))
    }

    /// `variables`: up to 50 children from `offset`, as many as fit the
    /// answer budget.
    pub async fn variables(&self, reference: u64, offset: usize) -> Result<ToolOutput, ToolError> {
        let mut inner = self.inner.lock().await;
        self.require(&mut inner).await?;
        let Some(s) = inner.session.as_ref() else {
            return Err(ToolError::internal("no session"));
        };
        Self::require_stopped(s)?;
        let vars = match s.variables(reference).await {
            Ok(v) => v,
            Err(e) => return Err(self.fail(&mut inner, e).await),
        };
        let total = vars.len();
        let window: Vec<_> = vars.iter().skip(offset).take(VARIABLES_CAP).collect();
        let lines: Vec<String> = window.iter().map(|v| report::variable_line(v)).collect();
        let (mut text, shown) = report::fill_lines("", &lines);
        if lines.is_empty() {
            text = if total == 0 {
                format!("reference {reference} has no children")
            } else {
                format!(
                    "`offset` {offset} is past the last child (reference {reference} has {total})"
                )
            };
        }
        let next = offset + shown;
        if let Some(more) = report::more_line("variables", next, total) {
            text.push_str(&format!("\n{more}"));
        }
        Ok(ToolOutput::text(text).with_structured(json!({
            "reference": reference,
            "variables": window.iter().take(shown).map(|v| report::variable_json(v)).collect::<Vec<_>>(),
            "offset": offset,
            "next_offset": (next < total).then_some(next),
            "total": total,
        })))
    }

    /// `evaluate`, in `frame_id` or the top frame of the stopped thread.
    pub async fn evaluate(
        &self,
        expression: &str,
        frame_id: Option<u64>,
    ) -> Result<ToolOutput, ToolError> {
        let mut inner = self.inner.lock().await;
        self.require(&mut inner).await?;
        let Some(s) = inner.session.as_mut() else {
            return Err(ToolError::internal("no session"));
        };
        Self::require_stopped(s)?;
        let frame = match frame_id {
            Some(f) => f,
            None => match Self::top_frame(s, "evaluate in").await {
                Ok(f) => f,
                Err(FrameError::Tool(e)) => return Err(e),
                Err(FrameError::Dap(e)) => return Err(self.fail(&mut inner, e).await),
            },
        };
        let Some(s) = inner.session.as_ref() else {
            return Err(ToolError::internal("no session"));
        };
        let r = match s.evaluate(expression, Some(frame)).await {
            Ok(r) => r,
            Err(e) => return Err(self.fail(&mut inner, e).await),
        };
        let mut text = cut_text(&r.result, VALUE_CAP);
        if let Some(t) = r.type_.as_ref().filter(|t| !t.is_empty()) {
            text = format!("{text}  ({t})");
        }
        if r.variables_reference > 0 {
            text.push_str(&format!(
                "  (reference {}; expand with `variables`)",
                r.variables_reference
            ));
        }
        Ok(ToolOutput::text(text).with_structured(json!({
            "result": cut_text(&r.result, VALUE_CAP), "type": r.type_, "reference": r.variables_reference, "frame_id": frame,
        })))
    }

    /// `output`: the debuggee's stdout/stderr so far (or of the last session): its last
    /// part by default, or the part from character `offset`, within the answer budget.
    pub async fn output(&self, offset: Option<usize>) -> Result<ToolOutput, ToolError> {
        let mut inner = self.inner.lock().await;
        let _ = self.check_session(&mut inner).await;
        let (text, whose) = match inner.session.as_ref() {
            Some(s) => (
                s.client.with(|st| st.output.to_text()).unwrap_or_default(),
                "the running session",
            ),
            None => match &inner.last_output {
                Some(t) => (t.clone(), "the last session"),
                None => return Ok(ToolOutput::text("no output: no debug session has run yet")),
            },
        };
        if text.is_empty() {
            return Ok(ToolOutput::text(format!("no output yet from {whose}")));
        }
        let page = report::output_page(&text, offset);
        Ok(
            ToolOutput::text(format!("output of {whose}:\n{}", page.text)).with_structured(json!({
                "output": page.shown,
                "offset": page.start,
                "next_offset": page.next,
                "chars": page.total,
            })),
        )
    }
}
