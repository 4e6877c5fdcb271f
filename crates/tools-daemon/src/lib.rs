//! The per-user daemon: one long-lived process of the user's holds the language servers
//! every stdio conversation (`agent-tools mcp`) uses, so a conversation's first question is
//! answered by a server that is already warm.
//!
//! Only servers are shared. Each conversation keeps its own run (kernels, debug session,
//! staged changes, diagnostics ledger, approvals) and its own LSP client; the daemon
//! multiplexes each server's one stream between those clients (`mux`), keeping what one
//! conversation shows the server (a preview's unsaved text) out of every other's answers
//! (`views`). Servers are keyed by everything that starts them — program, arguments,
//! root, environment, settings and trust — so an untrusted conversation never shares a
//! server with a trusted one.
//!
//! - `wire`: the first line each way ([`Hello`], [`Welcome`]), and the daemon's build
//!   ([`build_id`]).
//! - `paths`: the socket, lock and log in the user's runtime folder ([`DaemonPaths`]).
//! - `host` and `hosted`: the daemon process (`agent-tools daemon serve`, [`serve`]) and
//!   each server it holds; `outgoing`: what they write to a conversation, batched.
//! - `changes`: the files changed under a server's root, one set per conversation, asked
//!   for with [`TakeFileChanges`] instead of a watch of the conversation's own.
//! - `replay`: the diagnostics published before a conversation joined, asked for with
//!   [`ReplayDiagnostics`] when it first reads diagnostics.
//! - `client`: a conversation's side ([`DaemonClient`]): find or start the daemon, ask for a
//!   server.
//!
//! On Unix a socket in the user's runtime folder (the peer's uid checked); on Windows a named
//! pipe whose DACL admits only the user (the client process's user checked), run under Wine
//! here, never yet on a real Windows.

mod changes;
mod client;
mod history;
mod host;
mod hosted;
mod mux;
mod outgoing;
mod paths;
mod replay;
mod views;
mod wire;

pub use changes::{FileChangesTaken, TakeFileChanges, TakeFileChangesParams};
pub use client::{DaemonClient, DaemonError, DaemonLink};
pub use host::{DaemonOptions, ServeEnd, serve};
pub use paths::DaemonPaths;
pub use replay::{DiagnosticsReplayed, ReplayDiagnostics};
pub use wire::{
    DaemonStatus, Hello, HostedStatus, ServerSpec, Serving, Welcome, build_id, setting_at,
};

pub(crate) use tools_core::lock_unpoisoned as lock;

/// The daemon a run's language servers come from: installed into the run's state by the
/// binary that opened it (`agent-tools mcp`); absent, servers start in-process.
#[derive(Debug, Clone, Default)]
pub struct DaemonChoice(pub Option<DaemonClient>);
