//! The crate's internal error: what went wrong talking to a server, turned into a
//! [`ToolError`] written for the model at the boundary.

use std::time::Duration;

use tools_core::ToolError;

/// Why a server interaction failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LspError {
    /// The server did not answer in time; the request was cancelled with `$/cancelRequest`.
    #[error("{server} did not answer `{method}` within {}s (the request was cancelled); it may be overloaded or hung — try again, or `reload` it", after.as_secs_f64())]
    Timeout {
        /// The server's name.
        server: String,
        /// The request method.
        method: String,
        /// How long we waited.
        after: Duration,
    },
    /// The server did not answer `initialize` within its start bound and was stopped; the
    /// message is whole (server, root, bound, stderr tail).
    #[error("{0}")]
    StartTimeout(String),
    /// The server process exited or closed its output.
    #[error("{server} exited while answering `{method}`{detail}; the next call restarts it")]
    Died {
        /// The server's name.
        server: String,
        /// The request method.
        method: String,
        /// Exit status and last stderr lines.
        detail: String,
    },
    /// The server answered with an error.
    #[error("{server} refused `{method}`: {message} (code {code})")]
    Server {
        /// The server's name.
        server: String,
        /// The request method.
        method: String,
        /// The JSON-RPC error code.
        code: i64,
        /// The server's message.
        message: String,
    },
    /// The answer could not be decoded.
    #[error("{server} sent an answer to `{method}` that could not be read: {message}")]
    Decode {
        /// The server's name.
        server: String,
        /// The request method.
        method: String,
        /// The decode error.
        message: String,
    },
    /// Anything else (a failed write, a failed start).
    #[error("{0}")]
    Other(String),
}

/// `Result` with [`LspError`].
pub type Result<T, E = LspError> = std::result::Result<T, E>;

impl From<LspError> for ToolError {
    fn from(e: LspError) -> Self {
        match &e {
            LspError::Timeout { .. } | LspError::StartTimeout(_) => {
                ToolError::timed_out(e.to_string())
            }
            LspError::Died { .. } => ToolError::not_available(e.to_string()),
            LspError::Server { .. } => ToolError::rejected(e.to_string()),
            LspError::Decode { .. } | LspError::Other(_) => ToolError::internal(e.to_string()),
        }
    }
}
