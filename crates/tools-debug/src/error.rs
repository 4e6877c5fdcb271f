//! The crate's internal error: what can go wrong talking to a debug adapter. Tool code turns
//! it into a [`tools_core::ToolError`] written for the model.

use std::time::Duration;

/// Why a DAP exchange failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The adapter did not answer a request in time.
    #[error("the adapter did not answer `{command}` within {}s", .timeout.as_secs_f64())]
    Timeout {
        /// The request's command.
        command: String,
        /// How long we waited.
        timeout: Duration,
    },
    /// The adapter closed the connection (or died).
    #[error("the connection to the adapter closed")]
    StreamClosed,
    /// The adapter answered `success: false`.
    #[error("the adapter refused `{command}`: {message}")]
    Failed {
        /// The request's command.
        command: String,
        /// The adapter's message.
        message: String,
    },
    /// Anything else (encoding, decoding, writing).
    #[error("{0}")]
    Other(String),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Whether the error means the adapter is gone or hung, so the session must be cleared.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Error::Timeout { .. } | Error::StreamClosed)
    }
}
