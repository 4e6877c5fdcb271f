//! Calls that may outlast a client's or a proxy's timeout (`eval`, `debug`, `vibe_wait`) run
//! as tasks of the MCP tasks extension (`io.modelcontextprotocol/tasks`) when the client
//! declared it: `tools/call` answers at once with the task's id, the client polls
//! `tasks/get` until the task holds the call's result, and `tasks/cancel` cancels the call
//! as `notifications/cancelled` would. A question the tool asks on the newest protocol
//! becomes the task's `input_required` state, answered with `tasks/update`.
//!
//! Clients without the extension get the ordinary answer, with progress notifications.
//!
//! A server that gives each request a run of its own shares one task table across its
//! handlers (in [`ParkedCalls`](crate::ParkedCalls)), so a later request's `tasks/get`
//! finds the task; each task answers only to the caller that started it, and any other sees
//! it as unknown.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, CreateTaskResult, ElicitRequest, ElicitRequestParams, InputRequest,
};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tools_core::{CallError, CallOptions, ElicitOutcome, Progress, Registry, Surface};

use crate::elicit::{QUESTIONS, Question, parse_answer};
use crate::{CANCEL_WIND_DOWN, to_call_result};

/// Tools whose calls may run for minutes: a cell, a debugger run to the next stop, a wait
/// for a worker.
const TASK_TOOLS: &[&str] = &["eval", "debug", "vibe_wait"];

/// How long a finished or abandoned task stays observable.
pub const TASK_TTL: Duration = Duration::from_secs(30 * 60);

/// How often a client is asked to poll.
pub const TASK_POLL_INTERVAL: Duration = Duration::from_millis(250);

/// Whether a call to `tool` runs as a task for a client that declared the extension.
pub fn runs_as_task(tool: &str) -> bool {
    TASK_TOOLS.contains(&tool)
}

/// Starts `tool` as a task on `tasks` and returns its handle for the `tools/call` answer.
/// The call's own cancellation token is cancelled by `tasks/cancel` (the tool then gets
/// [`CANCEL_WIND_DOWN`] to stop on its own terms). With `close_run` the task owns its run
/// (a request's own, on sessionless HTTP) and closes it when the call ends.
pub fn start(
    tasks: &TaskManager,
    reg: Arc<Registry>,
    surface: Surface,
    tool: String,
    args: Value,
    cancel: CancellationToken,
    close_run: bool,
) -> CreateTaskResult {
    let owned_run = close_run.then(|| Arc::clone(&reg));
    let options = TaskOptions::new()
        .with_ttl_ms(TASK_TTL.as_millis() as u64)
        .with_poll_interval_ms(TASK_POLL_INTERVAL.as_millis() as u64)
        .with_status_message(format!("{tool} is running"));
    let task = tasks.spawn(options, move |ctx| {
        Box::pin(async move {
            let ended = async move {
            let (tx, mut questions) = tokio::sync::mpsc::unbounded_channel::<Question>();
            let opts = CallOptions {
                progress: Progress::none(),
                cancel: Some(cancel.clone()),
                stack: Vec::new(),
            };
            let call = QUESTIONS.scope(tx, async move {
                reg.call_with(surface, &tool, args, opts).await
            });
            tokio::pin!(call);
            let mut asked = 0u32;
            loop {
                tokio::select! {
                    result = &mut call => {
                        ctx.set_status_message("finished");
                        return task_result(result);
                    }
                    Some(question) = questions.recv() => {
                        asked += 1;
                        let elicit = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
                            meta: None,
                            message: question.message,
                            requested_schema: question.schema,
                        });
                        // A cancel drops the pending input: the question is then cancelled
                        // and the next turn of the loop sees the cancel itself.
                        let answer = match ctx
                            .request_input(format!("question-{asked}"), InputRequest::Elicitation(elicit))
                            .await
                        {
                            Ok(value) => parse_answer(&value),
                            Err(_) => ElicitOutcome::Cancel,
                        };
                        let _ = question.answer.send(answer);
                    }
                    _ = ctx.cancelled() => {
                        cancel.cancel();
                        if tokio::time::timeout(CANCEL_WIND_DOWN, &mut call).await.is_err() {
                            tracing::warn!("a cancelled task did not stop within {CANCEL_WIND_DOWN:?}; dropping it");
                        }
                        ctx.set_status_message("cancelled by the client");
                        return Err(TaskExit::Cancelled);
                    }
                }
            }
            }
            .await;
            // A task in a request's own run (sessionless HTTP) held the run open until now.
            if let Some(registry) = owned_run {
                registry.run().close().await;
            }
            ended
        })
    });
    CreateTaskResult::new(task)
}

/// The task's terminal payload: a tool's answer or its error as a tool result (`isError`);
/// an unknown tool fails the task.
fn task_result(
    result: Result<tools_core::ToolOutput, CallError>,
) -> Result<CallToolResult, TaskExit> {
    match result {
        Ok(out) => Ok(to_call_result(Ok(out))),
        Err(CallError::Tool(e)) => Ok(to_call_result(Err(e))),
        Err(e @ CallError::UnknownTool { .. }) => Err(TaskExit::Error(McpError::invalid_params(
            e.to_string(),
            None,
        ))),
    }
}
