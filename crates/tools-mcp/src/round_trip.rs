//! The newest protocol's tool call (2026-07-28): the call runs in the background, a question
//! it asks ends the `tools/call` round with `input_required` and an opaque `requestState`,
//! and the client's retry carrying `inputResponses` resumes it.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ElicitRequestParams};
use serde_json::Value;
use tools_core::{CallError, ElicitOutcome, Registry, ToolError, ToolOutput};

use crate::elicit::{QUESTIONS, Question, parse_answer};
use crate::results::{cancelled_error, finish};
use crate::{CANCEL_WIND_DOWN, MAX_PENDING_CALLS, McpServer};

/// The calls waiting on an answer, by handle.
#[derive(Default)]
pub(crate) struct PendingCalls {
    next: u64,
    calls: std::collections::VecDeque<(String, PendingCall)>,
}

/// A tool call running in the background while its question is out with the client.
struct PendingCall {
    task: tokio::task::JoinHandle<Result<ToolOutput, CallError>>,
    /// The call's own token: cancelled when the client cancels any round of it.
    cancel: tokio_util::sync::CancellationToken,
    questions: tokio::sync::mpsc::UnboundedReceiver<Question>,
    awaiting: Option<tokio::sync::oneshot::Sender<ElicitOutcome>>,
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl McpServer {
    /// The newest protocol's call: run the tool in the background; a question it asks ends
    /// this round with `input_required`, and the client's retry resumes it.
    pub(crate) async fn call_round_trip(
        &self,
        reg: &Arc<Registry>,
        request: CallToolRequestParams,
        args: Value,
        opts: tools_core::CallOptions,
        tool_cancel: tokio_util::sync::CancellationToken,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<CallToolResponse, McpError> {
        let mut call = match &request.request_state {
            Some(handle) => {
                let found = self.pending.lock().ok().and_then(|mut p| {
                    let at = p.calls.iter().position(|(h, _)| h == handle)?;
                    p.calls.remove(at).map(|(_, c)| c)
                });
                let Some(mut call) = found else {
                    return Err(McpError::invalid_params(
                        "unknown or expired requestState; call the tool again without it",
                        None,
                    ));
                };
                let answer = request
                    .input_responses
                    .as_ref()
                    .and_then(|r| r.get("question"))
                    .map(parse_answer)
                    .unwrap_or(ElicitOutcome::Cancel);
                if let Some(tx) = call.awaiting.take() {
                    let _ = tx.send(answer);
                }
                call
            }
            None => {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                let reg = Arc::clone(reg);
                let surface = self.surface;
                let name = request.name.to_string();
                let task = tokio::spawn(QUESTIONS.scope(tx, async move {
                    reg.call_with(surface, &name, args, opts).await
                }));
                PendingCall {
                    task,
                    cancel: tool_cancel,
                    questions: rx,
                    awaiting: None,
                }
            }
        };
        let outcome = tokio::select! {
            r = &mut call.task => Ok(r),
            q = call.questions.recv() => Err(q),
            _ = cancel.cancelled() => {
                call.cancel.cancel();
                let _ = tokio::time::timeout(CANCEL_WIND_DOWN, &mut call.task).await;
                return finish(Err(CallError::Tool(cancelled_error())));
            }
        };
        match outcome {
            Ok(joined) => finish(joined.unwrap_or_else(|e| {
                Err(CallError::Tool(ToolError::internal(format!(
                    "the tool call failed: {e}"
                ))))
            })),
            // The task ended (dropping its question channel) before its result was polled.
            Err(None) => finish((&mut call.task).await.unwrap_or_else(|e| {
                Err(CallError::Tool(ToolError::internal(format!(
                    "the tool call failed: {e}"
                ))))
            })),
            Err(Some(question)) => {
                call.awaiting = Some(question.answer);
                let elicit =
                    rmcp::model::ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
                        meta: None,
                        message: question.message,
                        requested_schema: question.schema,
                    });
                let mut requests = rmcp::model::InputRequests::new();
                requests.insert(
                    "question".to_string(),
                    rmcp::model::InputRequest::Elicitation(elicit),
                );
                let handle = {
                    let mut pending = self.pending.lock().map_err(|_| {
                        McpError::internal_error("pending-call table poisoned", None)
                    })?;
                    pending.next += 1;
                    let handle = format!("call-{}", pending.next);
                    pending.calls.push_back((handle.clone(), call));
                    while pending.calls.len() > MAX_PENDING_CALLS {
                        pending.calls.pop_front();
                    }
                    handle
                };
                Ok(rmcp::model::InputRequiredResult::new(Some(requests), Some(handle)).into())
            }
        }
    }
}
