//! The newest protocol's tool call (2026-07-28): the call runs in the background, a question
//! it asks ends the `tools/call` round with `input_required` and an opaque `requestState`,
//! and the client's retry carrying `inputResponses` and that state resumes it. Waiting calls
//! live in the server's [`ParkedCalls`](crate::ParkedCalls) table, which says what a state is
//! bound to.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResponse, ElicitRequest, ElicitRequestParams, InputRequest, InputRequests,
    InputRequiredResult, JsonObject, MetaObject,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tools_core::{CallError, CallOptions, ElicitOutcome, Registry, ToolError};

use crate::elicit::{QUESTIONS, parse_answer};
use crate::parked::{CallKey, Caller, PendingCall};
use crate::results::{cancelled_error, finish};
use crate::{CANCEL_WIND_DOWN, McpServer};

/// The key under which a question travels in `inputRequests` and its answer comes back in
/// `inputResponses`.
const QUESTION_KEY: &str = "question";

/// The caller of the request behind `ctx` (empty when no front named one: stdio).
pub(crate) fn caller(ctx: &RequestContext<RoleServer>) -> Caller {
    ctx.extensions
        .get::<Caller>()
        .cloned()
        .unwrap_or_else(|| Caller(String::new()))
}

impl McpServer {
    /// Starts a call of `tool` in the background and answers this round with its result,
    /// or with `input_required` when it asks a question first.
    pub(crate) async fn start_round_trip(
        &self,
        reg: &Arc<Registry>,
        key: CallKey,
        opts: CallOptions,
        cancel: CancellationToken,
    ) -> Result<CallToolResponse, McpError> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let tool_cancel = opts.cancel.clone().unwrap_or_default();
        let task = {
            let reg = Arc::clone(reg);
            let surface = self.surface;
            let name = key.tool.clone();
            let args = key.args.clone();
            tokio::spawn(QUESTIONS.scope(tx, async move {
                reg.call_with(surface, &name, args, opts).await
            }))
        };
        // A request's own run outlives the request while its call waits on an answer.
        let run = self.runs_per_request.then(|| {
            self.handed_off.store(true, Ordering::SeqCst);
            Arc::clone(reg)
        });
        let call = PendingCall {
            task,
            cancel: tool_cancel,
            questions: rx,
            awaiting: None,
            run,
        };
        self.drive(call, key, cancel).await
    }

    /// The retry that answers the question parked under `handle`: delivers the answer and
    /// answers this round as [`McpServer::start_round_trip`] does. A state that does not
    /// name a question of this caller's same call is refused, changing nothing.
    pub(crate) async fn resume_round_trip(
        &self,
        handle: &str,
        input_responses: Option<&std::collections::BTreeMap<String, Value>>,
        key: CallKey,
        cancel: CancellationToken,
    ) -> Result<CallToolResponse, McpError> {
        let mut call = self.parked.take(handle, &key)?;
        let answer = input_responses
            .and_then(|r| r.get(QUESTION_KEY))
            .map(parse_answer)
            .unwrap_or(ElicitOutcome::Cancel);
        if let Some(tx) = call.awaiting.take() {
            let _ = tx.send(answer);
        }
        self.drive(call, key, cancel).await
    }

    /// Waits for the call's result, its next question, or the client's cancel.
    async fn drive(
        &self,
        mut call: PendingCall,
        key: CallKey,
        cancel: CancellationToken,
    ) -> Result<CallToolResponse, McpError> {
        let outcome = tokio::select! {
            r = &mut call.task => Ok(r),
            q = call.questions.recv() => Err(q),
            _ = cancel.cancelled() => {
                call.cancel.cancel();
                let _ = tokio::time::timeout(CANCEL_WIND_DOWN, &mut call.task).await;
                return finish(Err(CallError::Tool(cancelled_error())));
            }
        };
        let failed = |e: tokio::task::JoinError| {
            Err(CallError::Tool(ToolError::internal(format!(
                "the tool call failed: {e}"
            ))))
        };
        match outcome {
            Ok(joined) => finish(joined.unwrap_or_else(failed)),
            // The task ended (dropping its question channel) before its result was polled.
            Err(None) => finish((&mut call.task).await.unwrap_or_else(failed)),
            Err(Some(question)) => {
                call.awaiting = Some(question.answer);
                let elicit = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: question.message,
                    requested_schema: question.schema,
                });
                let mut requests = InputRequests::new();
                requests.insert(QUESTION_KEY.to_string(), InputRequest::Elicitation(elicit));
                let handle = self.parked.park(call, key, question.timeout)?;
                let mut result = InputRequiredResult::new(Some(requests), Some(handle));
                // The deadline, stated: after it the state is refused as expired.
                let mut meta = JsonObject::new();
                meta.insert(
                    "agent-tools/answerWithinSeconds".into(),
                    Value::from(question.timeout.as_secs()),
                );
                result.meta = Some(MetaObject(meta));
                Ok(result.into())
            }
        }
    }
}
