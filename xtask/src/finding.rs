//! A tidy finding: one thing to fix, at a place. The tidy checks and the module-circle rule
//! both report them, so the type sits below both.

use std::path::{Path, PathBuf};

/// One thing to fix, at a place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file, relative to the repository root.
    pub path: PathBuf,
    /// The 1-based line, when the finding is about one line.
    pub line: Option<usize>,
    /// What is wrong and what to do.
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

/// A finding at `path` (and `line`, when it is about one line) saying `message`.
pub(crate) fn finding(path: &Path, line: Option<usize>, message: impl Into<String>) -> Finding {
    Finding {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}
