//! The closed set of ways a tool call fails, each with a message written for the model.

/// Why a tool call failed. Every message says what happened and what to do next.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments are wrong: which field (if one) and why.
    #[error("invalid arguments{}: {message}", field.as_ref().map(|f| format!(" (`{f}`)")).unwrap_or_default())]
    InvalidArguments {
        /// The offending field, dotted path for nested ones.
        field: Option<String>,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The backing resource cannot be used here; the message says which half is missing
    /// (root marker, binary, gate, …).
    #[error("not available here: {0}")]
    NotAvailable(String),
    /// A bounded wait ran out.
    #[error("timed out: {0}")]
    TimedOut(String),
    /// The request was refused: a stale staged edit, a denied approval, a second session.
    #[error("rejected: {0}")]
    Rejected(String),
    /// Something broke that the model cannot fix by changing its arguments.
    #[error("internal error: {0}")]
    Internal(String),
    /// `error`, answered as the first answer after the run recovered what a killed run left
    /// half done: the line saying what was recovered leads, so it reaches the user even when
    /// that answer is an error.
    #[error("{notice}\n{error}")]
    AfterRecovery {
        /// The one line saying what was recovered.
        notice: String,
        /// The error itself; its kind is the kind of the whole.
        error: Box<ToolError>,
    },
}

impl ToolError {
    /// Invalid arguments naming a field.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        ToolError::InvalidArguments {
            field: Some(field.into()),
            message: message.into(),
        }
    }
    /// Invalid arguments not tied to one field.
    pub fn invalid_args(message: impl Into<String>) -> Self {
        ToolError::InvalidArguments {
            field: None,
            message: message.into(),
        }
    }
    /// The resource is not available here.
    pub fn not_available(message: impl Into<String>) -> Self {
        ToolError::NotAvailable(message.into())
    }
    /// A bounded wait ran out.
    pub fn timed_out(message: impl Into<String>) -> Self {
        ToolError::TimedOut(message.into())
    }
    /// The request was refused.
    pub fn rejected(message: impl Into<String>) -> Self {
        ToolError::Rejected(message.into())
    }
    /// An internal failure.
    pub fn internal(message: impl Into<String>) -> Self {
        ToolError::Internal(message.into())
    }
    /// A short machine-readable kind: `invalid_arguments`, `not_available`, `timed_out`,
    /// `rejected`, `internal`.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolError::InvalidArguments { .. } => "invalid_arguments",
            ToolError::NotAvailable(_) => "not_available",
            ToolError::TimedOut(_) => "timed_out",
            ToolError::Rejected(_) => "rejected",
            ToolError::Internal(_) => "internal",
            ToolError::AfterRecovery { error, .. } => error.kind(),
        }
    }

    /// This error with `notice` (when there is one) leading its text; see
    /// [`ToolError::AfterRecovery`].
    pub fn lead_with(self, notice: Option<String>) -> Self {
        match notice {
            Some(notice) => ToolError::AfterRecovery {
                notice,
                error: Box::new(self),
            },
            None => self,
        }
    }
}

impl From<std::io::Error> for ToolError {
    fn from(e: std::io::Error) -> Self {
        ToolError::Internal(format!("I/O error: {e}"))
    }
}
