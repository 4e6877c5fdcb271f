//! How a running tool's question reaches the human: over the client connection
//! (`elicitation/create`) on handshake protocols, or back through the call's own
//! `tools/call` round (`input_required`) on the newest protocol, where the server cannot
//! send requests of its own.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, ProtocolVersion,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::Value;
use tools_core::{ElicitOutcome, Elicitor, ToolError};

/// One question a running call put to the client (newest protocol).
pub(crate) struct Question {
    pub(crate) message: String,
    pub(crate) schema: ElicitationSchema,
    pub(crate) answer: tokio::sync::oneshot::Sender<ElicitOutcome>,
    /// How long the asker waits for the answer: the question's deadline.
    pub(crate) timeout: Duration,
}

tokio::task_local! {
    /// Where a call running under the newest protocol sends its questions.
    pub(crate) static QUESTIONS: tokio::sync::mpsc::UnboundedSender<Question>;
}

/// [`Elicitor`] for the newest protocol: the question goes back to the call's own
/// `tools/call` handler, which answers the client with `input_required`.
struct RoundTripElicitor {
    version: String,
}

#[async_trait::async_trait]
impl Elicitor for RoundTripElicitor {
    fn protocol_version(&self) -> String {
        self.version.clone()
    }
    async fn elicit(
        &self,
        message: String,
        requested_schema: Value,
        timeout: Duration,
    ) -> Result<ElicitOutcome, ToolError> {
        let schema = form_schema(requested_schema)?;
        let questions = QUESTIONS.try_with(|q| q.clone()).map_err(|_| {
            ToolError::not_available("this question is not part of a client's tool call")
        })?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        questions
            .send(Question {
                message,
                schema,
                answer: tx,
                timeout,
            })
            .map_err(|_| ToolError::not_available("the client's call is gone"))?;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(outcome)) => Ok(outcome),
            Ok(Err(_)) => Err(ToolError::not_available(
                "the client abandoned the question",
            )),
            Err(_) => Err(ToolError::timed_out(format!(
                "nobody answered within {} s",
                timeout.as_secs()
            ))),
        }
    }
}

pub(crate) fn client_elicitor(ctx: &RequestContext<RoleServer>) -> Option<Arc<dyn Elicitor>> {
    let caps = ctx.client_capabilities()?;
    let elicitation = caps.elicitation.as_ref()?;
    // Form mode is what questions need; a client declaring only URL mode cannot answer them.
    if elicitation.form.is_none() && elicitation.url.is_some() {
        return None;
    }
    let version = ctx
        .protocol_version()
        .unwrap_or(ProtocolVersion::V_2025_06_18);
    if is_round_trip_protocol(&version) {
        return Some(Arc::new(RoundTripElicitor {
            version: version.as_str().to_string(),
        }));
    }
    Some(Arc::new(PeerElicitor {
        peer: ctx.peer.clone(),
        version: version.as_str().to_string(),
    }))
}

/// The form a gate built, as the elicitation schema both elicitors send.
fn form_schema(requested_schema: Value) -> Result<ElicitationSchema, ToolError> {
    serde_json::from_value(requested_schema).map_err(|e| {
        ToolError::internal(format!(
            "the question form is not a valid elicitation schema: {e}"
        ))
    })
}

pub(crate) fn is_round_trip_protocol(version: &ProtocolVersion) -> bool {
    version.as_str() >= ProtocolVersion::V_2026_07_28.as_str()
}

/// The client's answer in `inputResponses` (an `ElicitResult`); anything else cancels.
pub(crate) fn parse_answer(answer: &Value) -> ElicitOutcome {
    match serde_json::from_value::<ElicitResult>(answer.clone()) {
        Ok(r) => elicit_outcome(r),
        Err(_) => ElicitOutcome::Cancel,
    }
}

/// What the human did, from the client's typed answer.
fn elicit_outcome(result: ElicitResult) -> ElicitOutcome {
    match result.action {
        ElicitationAction::Accept => ElicitOutcome::Accept(result.content.unwrap_or(Value::Null)),
        ElicitationAction::Decline => ElicitOutcome::Decline,
        _ => ElicitOutcome::Cancel,
    }
}

/// [`Elicitor`] over the client connection: `elicitation/create` form requests.
struct PeerElicitor {
    peer: Peer<RoleServer>,
    version: String,
}

#[async_trait::async_trait]
impl Elicitor for PeerElicitor {
    fn protocol_version(&self) -> String {
        self.version.clone()
    }
    async fn elicit(
        &self,
        message: String,
        requested_schema: Value,
        timeout: Duration,
    ) -> Result<ElicitOutcome, ToolError> {
        let schema = form_schema(requested_schema)?;
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: schema,
        };
        let result = self
            .peer
            .create_elicitation_with_timeout(params, Some(timeout))
            .await
            .map_err(|e| match e {
                rmcp::ServiceError::Timeout { .. } => {
                    ToolError::timed_out(format!("nobody answered within {} s", timeout.as_secs()))
                }
                other => ToolError::not_available(format!(
                    "the client could not show the question: {other}"
                )),
            })?;
        Ok(elicit_outcome(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_answer_that_is_not_an_elicit_result_cancels() {
        assert!(matches!(
            parse_answer(&json!({"action": "accept", "content": {"x": 1}})),
            ElicitOutcome::Accept(v) if v == json!({"x": 1})
        ));
        assert!(matches!(
            parse_answer(&json!({"action": "decline"})),
            ElicitOutcome::Decline
        ));
        assert!(matches!(
            parse_answer(&json!({"action": "shrug"})),
            ElicitOutcome::Cancel
        ));
        assert!(matches!(parse_answer(&json!(7)), ElicitOutcome::Cancel));
    }
}
