//! What a tool may ask of the client that is driving the run (in `mcp` mode, the MCP
//! client): a form for the human behind it. tools-mcp implements [`Elicitor`] over the
//! client connection; tools-ask turns questions into forms through it. Keeping the trait
//! here lets both depend on tools-core alone.

use std::time::Duration;

use serde_json::Value;

use crate::ToolError;

/// How the human answered a form.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitOutcome {
    /// Submitted, with the form's content (an object matching the requested schema).
    Accept(Value),
    /// Explicitly declined.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// A channel to the human behind the client.
#[async_trait::async_trait]
pub trait Elicitor: Send + Sync {
    /// The protocol version the client negotiated (e.g. `2025-06-18`); decides which form
    /// schemas it understands (multi-select needs `2025-11-25`).
    fn protocol_version(&self) -> String;
    /// Shows a form (`requested_schema` is a flat object schema of primitive properties)
    /// and waits up to `timeout` for the answer.
    async fn elicit(
        &self,
        message: String,
        requested_schema: Value,
        timeout: Duration,
    ) -> Result<ElicitOutcome, ToolError>;
}
