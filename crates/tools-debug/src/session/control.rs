//! Operating a started session: breakpoints per file, waiting for a stop, choosing the
//! thread, continue and the steps, pause, and reading the stack, scopes, variables, an
//! expression and the exception of a stopped thread.

use std::path::Path;
use std::time::Duration;

use dap_types::requests as rq;

use crate::adapters::AdapterId;
use crate::error::{Error, Result};
use crate::protocol::Phase;

use super::{
    BreakpointResult, BreakpointSpec, Requested, Resume, Session, WaitOutcome, breakpoint_results,
    breakpoints_arguments,
};

impl Session {
    /// Sends the breakpoints of one file (an empty list clears it).
    pub async fn set_breakpoints(
        &self,
        file: &Path,
        specs: &[BreakpointSpec],
    ) -> Result<Vec<BreakpointResult>> {
        let resp = self
            .client
            .request::<rq::SetBreakpoints>(&breakpoints_arguments(file, specs))
            .await?;
        Ok(breakpoint_results(specs, &resp))
    }

    /// Why this adapter cannot take `specs` as asked (a condition, hit condition or log
    /// message it did not declare in `initialize`), or `None`.
    pub fn unsupported(&self, file: &Path, specs: &[BreakpointSpec]) -> Option<String> {
        super::unsupported(self.adapter.as_str(), file, specs, &self.caps)
    }

    /// Waits up to `bound` for the debuggee to stop or end.
    pub async fn wait_for_stop(&mut self, bound: Duration) -> WaitOutcome {
        self.client
            .wait_for(bound, |s| {
                !matches!(s.phase, Phase::Running | Phase::Starting)
            })
            .await;
        match self.client.phase() {
            Phase::Stopped(stop) => {
                if stop.thread_id.is_some() {
                    self.last_thread = stop.thread_id;
                }
                WaitOutcome::Stopped(stop)
            }
            Phase::Terminated => {
                // `exited` normally precedes `terminated`; allow a straggler a moment.
                let quick = self
                    .client
                    .wait_for(Duration::from_millis(200), |s| s.exit_code.is_some())
                    .await;
                if !quick && !self.client.transport().is_closed() {
                    // delve tells the exit status only when the client disconnects; the
                    // program has ended, so nothing is lost by disconnecting now.
                    let args = dap_types::DisconnectArguments {
                        restart: None,
                        terminate_debuggee: Some(true),
                        suspend_debuggee: None,
                    };
                    let _ = self
                        .client
                        .request_within::<rq::Disconnect>(&args, Duration::from_secs(2))
                        .await;
                    self.client
                        .wait_for(Duration::from_millis(300), |s| s.exit_code.is_some())
                        .await;
                }
                WaitOutcome::Terminated {
                    exit_code: self.client.with(|s| s.exit_code).flatten(),
                }
            }
            Phase::AdapterGone => WaitOutcome::AdapterGone,
            Phase::Running | Phase::Starting => WaitOutcome::StillRunning,
        }
    }

    /// The thread to act on: the given one, the last stopped one, or the first thread.
    pub async fn thread(&mut self, given: Option<u64>) -> Result<u64> {
        if let Some(t) = given {
            return Ok(t);
        }
        if let Some(t) = self.last_thread {
            return Ok(t);
        }
        let threads = self.client.request::<rq::Threads>(&()).await?;
        threads
            .threads
            .first()
            .map(|t| t.id)
            .ok_or_else(|| Error::Other("the adapter reports no threads".into()))
    }

    /// Resumes with `continue` or a step, marking the debuggee running first.
    pub async fn resume(&mut self, op: Resume, thread: u64) -> Result<()> {
        self.requested = if op == Resume::Continue {
            Requested::Run
        } else {
            Requested::Step
        };
        self.client.update(|s| {
            if matches!(s.phase, Phase::Stopped(_)) {
                s.phase = Phase::Running;
            }
        });
        let answered = match op {
            Resume::Continue => self
                .client
                .request::<rq::Continue>(&dap_types::ContinueArguments {
                    thread_id: thread,
                    single_thread: None,
                })
                .await
                .map(|_| ()),
            Resume::StepOver => {
                self.client
                    .request::<rq::Next>(&dap_types::NextArguments {
                        thread_id: thread,
                        single_thread: None,
                        granularity: None,
                    })
                    .await
            }
            Resume::StepIn => {
                self.client
                    .request::<rq::StepIn>(&dap_types::StepInArguments {
                        thread_id: thread,
                        single_thread: None,
                        target_id: None,
                        granularity: None,
                    })
                    .await
            }
            Resume::StepOut => {
                self.client
                    .request::<rq::StepOut>(&dap_types::StepOutArguments {
                        thread_id: thread,
                        single_thread: None,
                        granularity: None,
                    })
                    .await
            }
        };
        if let Err(e) = &answered
            && !e.is_fatal()
        {
            // The adapter refused: the debuggee did not move.
            self.client.update(|s| {
                if s.phase == Phase::Running {
                    s.phase = Phase::Starting;
                }
            });
        }
        // A debuggee that ran to its end may close the connection with the response.
        match answered {
            Err(Error::StreamClosed) if self.client.phase() == Phase::Terminated => Ok(()),
            other => other,
        }
    }

    /// Asks the adapter to pause `thread`.
    pub async fn pause(&mut self, thread: u64) -> Result<()> {
        self.requested = Requested::Pause;
        self.client
            .request::<rq::Pause>(&dap_types::PauseArguments { thread_id: thread })
            .await
    }

    /// Frames of `thread`, up to `levels`.
    pub async fn stack(&self, thread: u64, levels: u64) -> Result<dap_types::StackTraceResponse> {
        self.client
            .request::<rq::StackTrace>(&dap_types::StackTraceArguments {
                thread_id: thread,
                start_frame: Some(0),
                levels: Some(levels),
                format: None,
            })
            .await
    }

    /// Threads.
    pub async fn threads(&self) -> Result<Vec<dap_types::Thread>> {
        Ok(self.client.request::<rq::Threads>(&()).await?.threads)
    }

    /// Scopes of a frame.
    pub async fn scopes(&self, frame_id: u64) -> Result<Vec<dap_types::Scope>> {
        Ok(self
            .client
            .request::<rq::Scopes>(&dap_types::ScopesArguments { frame_id })
            .await?
            .scopes)
    }

    /// Children of a variables reference.
    pub async fn variables(&self, reference: u64) -> Result<Vec<dap_types::Variable>> {
        Ok(self
            .client
            .request::<rq::Variables>(&dap_types::VariablesArguments {
                variables_reference: reference,
                filter: None,
                start: None,
                count: None,
                format: None,
            })
            .await?
            .variables)
    }

    /// Evaluates `expression` in `frame_id`'s scope.
    pub async fn evaluate(
        &self,
        expression: &str,
        frame_id: Option<u64>,
    ) -> Result<dap_types::EvaluateResponse> {
        // lldb-dap reads a `repl` line as a debugger command; `watch` is an expression.
        let context = if self.adapter == AdapterId::Lldb {
            dap_types::EvaluateArgumentsContext::Watch
        } else {
            dap_types::EvaluateArgumentsContext::Repl
        };
        self.client
            .request::<rq::Evaluate>(&dap_types::EvaluateArguments {
                expression: expression.to_string(),
                frame_id,
                context: Some(context),
                format: None,
            })
            .await
    }

    /// The exception's id and message when the adapter supports `exceptionInfo`.
    pub async fn exception_info(&self, thread: u64) -> Option<String> {
        if self.caps.supports_exception_info_request != Some(true) {
            return None;
        }
        let info = self
            .client
            .request::<rq::ExceptionInfo>(&dap_types::ExceptionInfoArguments { thread_id: thread })
            .await
            .ok()?;
        let mut summary = info.exception_id;
        if let Some(description) = info.description.filter(|d| !d.is_empty()) {
            summary.push_str(": ");
            summary.push_str(&description);
        }
        Some(summary)
    }
}
