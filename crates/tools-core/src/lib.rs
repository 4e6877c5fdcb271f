//! # tools-core
//!
//! The contracts every agent-tools tool crate builds on. No tool lives here.
//!
//! - [`Tier`] and [`Surface`]: which tools a surface sees at all.
//! - [`Tool`], [`ToolOutput`], [`ToolError`]: what a tool is, what it returns, how it fails.
//! - [`Run`]: one conversation's workspace, configuration, cancellation and child processes.
//! - [`Registry`]: the registration rule, per-surface listing, per-run serialisation of tools
//!   that are not parallel-safe, and the guard chain (validate → approve → call → write observers).
//!   A write observer can also *preview* a change: predict what writing proposed contents
//!   would report, with nothing written.
//! - [`Workspace`]: the path jail.
//! - [`safe_write`] and [`PathLocks`]: the one file reader/writer every writing tool uses
//!   (jailed opens, regular files only, atomic replacement keeping metadata, all-or-nothing
//!   multi-file changes) and the per-path locks that serialise writes within a run.
//! - The journal ([`journal_dir`]): the write-ahead record that makes a multi-file change
//!   all or nothing across a crash, recovered by the next run that opens the workspace.
//! - [`framing`], [`transport`], [`process`]: the `Content-Length` framing, the request/response
//!   transport and the child-process lifecycle that the LSP and DAP clients share.
//! - [`PreviewReport`] and [`StagedChanges`]: a change checked before it is written (write
//!   observers predict what it would do) and the run's store of staged changes that
//!   `resolve` accepts or discards, all or nothing.
//! - [`text`]: capped lists and visibly cut text; [`whole_words`]: where a name stands whole
//!   on a line, not inside a longer identifier.
//! - [`SymbolSources`] and [`resolve_symbol`]: a file's symbols as the families that read
//!   them report them (language servers, grammars), and a name path such as `Greeter.greet`
//!   resolved to one of them, so tools address code by name without depending on each other.
//! - [`platform`]: what differs between Linux, macOS and Windows, for every crate.
//! - [`trust`], [`discovery`], [`child_env`]: workspace trust, where a program may be found,
//!   and the environment every child process gets.
//!
//! What this crate is not for: protocol specifics (LSP, DAP, MCP) and tool logic.

pub mod child_env;
mod client;
mod config;
pub mod discovery;
mod error;
mod file_watch;
pub mod framing;
#[cfg(feature = "testing")]
pub mod fuzzing;
mod journal;
pub mod json_unicode;
mod name_path;
mod output;
mod path_locks;
pub mod platform;
mod pre_write;
mod preview;
pub mod process;
mod process_group;
mod random_name;
mod recovery;
mod references;
mod registry;
mod run;
pub mod safe_write;
mod staged_changes;
pub mod sweep;
mod symbols;
mod sync;
pub mod testing;
pub mod text;
mod tier;
mod tool;
pub mod transport;
pub mod trust;
pub mod watchdog;
mod words;
mod workspace;
mod write_pass;

pub use child_env::{child_command, worker_command};
pub use client::{ElicitOutcome, Elicitor};
pub use config::Config;
pub use error::ToolError;
pub use file_watch::{FileChange, FolderWatch, merge_change};
pub use journal::{CRASH_AT_ENV, journal_dir};
pub use name_path::{MAX_CANDIDATES, NamePath, ResolvedSymbol, pick_symbol, resolve_symbol};
pub use output::{Image, Section, ToolOutput};
pub use path_locks::{LOCK_WAIT_LIMIT, PathGuard, PathLocks};
pub use pre_write::{
    MAX_PRE_IMAGE_BYTES, MAX_PRE_IMAGES_TOTAL, PreImage, PreImageHold, PreWriteImages,
};
pub use preview::{MAX_PREVIEW_FILE_BYTES, PreviewReport, ProposedFile};
pub use references::{ReferenceSource, ReferenceSources, RelatedTest, SymbolUse};
pub use registry::{
    Approval, ApprovalRequest, Approver, AutoApprove, CallError, CallOptions, DoctorEntry, Invoker,
    Registry, RegistryBuilder, ToolFamily, ToolInfo, WriteObserver,
};
pub use run::{KEEP_STATE_ENV, Run, RunOptions};
pub use staged_changes::{
    Accepted, DEFAULT_MAX_BYTES, DEFAULT_MAX_PENDING, NoWriteFaults, StagedChange, StagedChanges,
    StagedFile, WriteFaults, content_hash,
};
pub use symbols::{
    FileSymbols, SourceSymbol, SymbolSource, SymbolSourceKind, SymbolSources, indent_at,
    line_number, line_prefix,
};
pub use sync::lock_unpoisoned;
pub use tier::{Surface, Tier};
pub use tool::{CallCtx, Progress, ProgressSink, Tool, parse_args, schema_for};
pub use words::{first_whole_word, is_ident_char, whole_words};
pub use workspace::{Workspace, display_relative, normalize_lexically};
pub use write_pass::{SyncShare, WritePass};

/// Re-exported so tool crates implement [`Tool`] with the same macro version.
pub use async_trait::async_trait;
