//! # tools-fs
//!
//! The file tools every agent needs, and the write surface that diagnostics on write wraps:
//!
//! - `read` (tier read): line-numbered text, `offset`/`limit`, long lines and large reads capped.
//! - `write` (tier write): the whole file, atomically (temp file + rename in the same folder);
//!   with `expected_sha256`, only if the file is still the version that was read.
//! - `edit` (tier write): exact old → new string; refuses when the old string is absent or
//!   occurs more than once (unless `replace_all`), saying how many times it occurs.
//!   With `symbol` (a name path such as `Greeter.greet`) instead, it replaces that symbol's
//!   whole text or body, or inserts before or after it, re-indented to the symbol's own
//!   indentation; the name resolves through the run's symbol sources (a language server's
//!   document symbols, else the bundled grammars), and an ambiguous or unknown one is refused
//!   naming at most 10 candidates, with nothing changed.
//! - `apply_patch` (tier write): the `*** Begin Patch` envelope, **all or nothing** — every
//!   hunk of every file is verified before the first byte is written, and a failure half-way
//!   through the writes restores what was already written.
//!
//! Every write goes through [`tools_core::safe_write`] (jailed `O_NOFOLLOW` opens, regular
//! files only, mode/owner kept, hard links kept, read-only files refused) and holds the run's
//! [`tools_core::PathLocks`] from the read it plans from to the last byte written, so
//! concurrent calls on one file are applied one after another and none is lost. `edit` and
//! `apply_patch` keep a file's CRLF line endings and BOM.
//!
//! With `preview: true`, `write`, `edit` and `apply_patch` write nothing: the change is
//! staged in the run's store of staged changes under a `change_id`, the answer leads with
//! the diagnostics the run's write observers predict for it, and `resolve` (the ast
//! family's tool) accepts it — all files or none, refused whole if any file changed since —
//! or discards it.
//!
//! Every writing tool reports the files it wrote in
//! [`ToolOutput::touched`](tools_core::ToolOutput::touched), so the registry's write
//! observers (diagnostics on write) see them.
//!
//! ## Use this crate on its own
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use tools_core::{RegistryBuilder, Run, RunOptions, Surface};
//! let dir = tempfile::tempdir().unwrap();
//! let run = Run::new(RunOptions::at(dir.path()).unwrap()).unwrap();
//! let registry = RegistryBuilder::new(run.clone()).family(tools_fs::family(&run)).build().unwrap();
//! registry.call(Surface::FULL, "write", serde_json::json!({"path": "a.txt", "content": "hi\n"})).await.unwrap();
//! let out = registry.call(Surface::FULL, "read", serde_json::json!({"path": "a.txt"})).await.unwrap();
//! assert!(out.text.contains("hi"));
//! # }
//! ```

mod edit;
mod hunks;
mod locked;
mod own_declaration;
mod patch;
mod patch_plan;
mod patch_text;
mod preview;
mod read;
mod symbol_edit;
mod text_style;
mod write;

use std::sync::Arc;

use tools_core::{Run, Tool, ToolFamily};

pub use patch_text::{Hunk, PatchOp, parse_patch};

/// The `fs` family: `read`, `write`, `edit`, `apply_patch`. Always registered: its only
/// resource is the workspace.
pub struct FsFamily {
    tools: Vec<Arc<dyn Tool>>,
}

/// Wires the file tools for `run`.
pub fn family(run: &Arc<Run>) -> Arc<dyn ToolFamily> {
    let _ = run;
    Arc::new(FsFamily {
        tools: vec![
            Arc::new(read::ReadTool),
            Arc::new(write::WriteTool),
            Arc::new(edit::EditTool),
            Arc::new(patch::ApplyPatchTool),
        ],
    })
}

#[tools_core::async_trait]
impl ToolFamily for FsFamily {
    fn name(&self) -> &str {
        "fs"
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }
    async fn doctor(&self) -> Vec<tools_core::DoctorEntry> {
        vec![tools_core::DoctorEntry {
            family: "fs".into(),
            resource: "read, write, edit, apply_patch".into(),
            ok: true,
            detail: "wired; paths are jailed to the workspace root".into(),
        }]
    }
}
