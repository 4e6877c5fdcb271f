//! The diagnostics a warm server published before a conversation joined, sent to that
//! conversation when it first reads diagnostics — not when it joins: on a large project
//! they are thousands of publications (Django: 2,816 files, 12 MB), and a conversation
//! whose first question is a definition or a search would get its answer only after
//! its client had read them all.
//!
//! The conversation's client sends [`ReplayDiagnostics`] before it reads diagnostics (the
//! state before a write, a file's diagnostics); the daemon answers with the latest
//! publication of every document it has not sent that conversation yet, then
//! [`DiagnosticsReplayed`]. Once per conversation.

/// A conversation's client to the daemon: send me the diagnostics published before I
/// joined (never reaches the server).
#[derive(Debug)]
pub enum ReplayDiagnostics {}

impl lsp_types::notification::Notification for ReplayDiagnostics {
    type Params = ();
    const METHOD: &'static str = "agentTools/replayDiagnostics";
}

/// The daemon to a conversation's client: every publication asked for with
/// [`ReplayDiagnostics`] has been sent, ahead of this.
#[derive(Debug)]
pub enum DiagnosticsReplayed {}

impl lsp_types::notification::Notification for DiagnosticsReplayed {
    type Params = ();
    const METHOD: &'static str = "agentTools/diagnosticsReplayed";
}
