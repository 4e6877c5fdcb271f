//! What a write or a preview found, as its answer shows it: each new diagnostic as a line
//! and its structured form, each gone one by file and message, tagged with the server
//! that reported it when several served the files, and the caps on how many are listed.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::answer::format::{Renderer, diagnostic_code, diagnostic_line, severity_name};
use crate::diagnostics::state_diff::FileChange;

/// Most new diagnostics listed after one write.
pub const ON_WRITE_CAP: usize = 50;
/// Most gone diagnostics listed after one write.
pub const GONE_CAP: usize = 10;

/// One rendered diagnostic: its line and its structured form.
pub(crate) fn render(r: &mut Renderer, path: &Path, d: &lsp_types::Diagnostic) -> (String, Value) {
    let (pt, line) = r.diagnostic(path, d);
    let j = json!({"path": pt.path, "line": pt.line, "col": pt.col,
        "severity": severity_name(d.severity), "code": diagnostic_code(d), "message": d.message});
    (line, j)
}

/// A gone diagnostic: its file and message (its old position may no longer exist).
pub(crate) fn render_gone(r: &Renderer, path: &Path, d: &lsp_types::Diagnostic) -> (String, Value) {
    let disp = r.display(path);
    let line = diagnostic_line(&format!("{disp}:{}", d.range.start.line + 1), d);
    (
        line,
        json!({"path": disp, "line": d.range.start.line + 1, "severity": severity_name(d.severity),
            "code": diagnostic_code(d), "message": d.message}),
    )
}

/// One finding: the file it is in, its line in the answer and its structured form.
#[derive(Debug, Clone)]
pub(crate) struct Finding {
    /// The file (absolute), to group and order by.
    pub file: PathBuf,
    /// The line as the answer shows it.
    pub line: String,
    /// Its structured form.
    pub json: Value,
}

/// What a write (or a preview) found.
#[derive(Default)]
pub(crate) struct Findings {
    /// New diagnostics.
    pub new: Vec<Finding>,
    /// Diagnostics that went away.
    pub gone: Vec<Finding>,
    /// Diagnostics no longer reported while the change's new errors stand (not fixed).
    pub hidden: Vec<Finding>,
}

impl Findings {
    /// Adds one server's `changes`; each finding's JSON names `server`, and its line does
    /// too when `several` servers served the files (a type checker and its linter).
    pub(crate) fn add(
        &mut self,
        r: &mut Renderer,
        changes: &[FileChange],
        server: &str,
        several: bool,
    ) {
        let tag = |(line, mut json): (String, Value)| {
            json["source"] = json!(server);
            match several {
                true => (format!("{line} ({server})"), json),
                false => (line, json),
            }
        };
        let finding = |file: &Path, (line, json): (String, Value)| Finding {
            file: file.to_path_buf(),
            line,
            json,
        };
        for ch in changes {
            for d in &ch.new {
                self.new
                    .push(finding(&ch.path, tag(render(r, &ch.path, d))));
            }
            for d in &ch.gone {
                self.gone
                    .push(finding(&ch.path, tag(render_gone(r, &ch.path, d))));
            }
            for d in &ch.hidden {
                self.hidden
                    .push(finding(&ch.path, tag(render_gone(r, &ch.path, d))));
            }
        }
    }
}
