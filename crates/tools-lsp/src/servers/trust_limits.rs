//! The line an answer leads with when the run's trust keeps a server from seeing what a
//! trusted run would show it: rust-analyzer without its check on save (`cargo check` runs
//! the project's build scripts), a Python type checker on the interpreter from `PATH`
//! instead of the project's virtual environment (trusted runs put its `bin` first on the
//! server's `PATH`). Each line names the limit, what it hides and how to trust.

use std::path::Path;

use tools_core::Run;
use tools_core::discovery::ProgramSearch;
use tools_core::trust::skipped_line;

use crate::client::LspClient;

/// What an untrusted run's diagnostics of `path` from `client` leave out, as the answer's
/// first line; `None` in a trusted run or when nothing is left out.
pub fn diagnostics_limit(client: &LspClient, run: &Run, path: &Path) -> Option<String> {
    if run.trusted() {
        return None;
    }
    if client.server.starts_with("rust-analyzer")
        && client.setting("rust-analyzer.checkOnSave") == serde_json::Value::Bool(false)
    {
        return Some(skipped_line(
            "rust-analyzer's check on save (cargo check) is off, so these are only \
             rust-analyzer's own diagnostics — the compiler's errors and warnings (borrow \
             checking, most type errors, lints) are not among them",
        ));
    }
    if client.language == "python" {
        return unused_project_python(run, path).map(|venv| {
            skipped_line(&format!(
                "{} resolves imports with the Python on PATH, not the project's {venv}, so a \
                 package installed only there shows as unresolved",
                client.server
            ))
        });
    }
    None
}

/// The project's own interpreter (`.venv/bin/python`, `venv/bin/python`, from `path`'s
/// folder up to the workspace root) that a trusted run would use, shown relative to the
/// workspace; `None` when the project has none.
pub fn unused_project_python(run: &Run, path: &Path) -> Option<String> {
    let dir = if path.is_dir() { path } else { path.parent()? };
    ProgramSearch::new(run.root(), true)
        .with_server_cache(None)
        .project_pythons(dir)
        .into_iter()
        .next()
        .map(|p| p.shown)
}
