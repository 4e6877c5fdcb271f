//! `lsp_rename`: a project-wide rename through the language server, applied all or nothing
//! (`tool`): the server's edit planned in memory and committed all or nothing (`plan`). The
//! new name is checked before any server is asked (`new_name`); references the
//! server reports under the old name that its edit misses are added or the rename is refused
//! (`references`); after the write the references under the new name are compared with
//! those from before (`check`); importers in files a narrowed pyright program leaves out
//! are renamed with it (`outside`) — both run as one task after the write
//! (`after`), which the answer waits for only until it is due; `preview: true` stages the rename instead of writing it and
//! answers with the diagnostics it would bring (`preview`). A Vue component's template uses
//! its servers cannot link are renamed with the binding they use (`template`).
//!
//! The top of the crate: it may use everything below it — `queries` (a prepared position),
//! `diagnostics` (the write observer), `servers`, `client`, `answer` and `error`.

mod after;
mod check;
mod new_name;
mod outside;
mod plan;
mod preview;
mod references;
mod template;
mod tool;

#[cfg(feature = "testing")]
pub use plan::InjectWriteFailure;
pub use tool::{LspRenameTool, RENAME_OPEN_CAP, RenameArgs};
