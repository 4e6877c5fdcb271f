//! What plugs into the registry: a tool family (its tools, write observers and doctor
//! entries), the write observer contract, the approver a host supplies and its requests, and
//! how a tool is listed.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::preview::{PreviewReport, ProposedFile};
use crate::{CallCtx, Section, Surface, Tier, Tool, WritePass};

/// A tool as a surface lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// Name.
    pub name: String,
    /// Tier.
    pub tier: Tier,
    /// Description for the model.
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: Value,
    /// Whether calls may overlap.
    pub parallel_safe: bool,
}

/// Runs after any call that reports `touched` files; its sections are appended to that
/// call's output, in the order the observers were added. Diagnostics on write is one such
/// observer. A write's observers run side by side (see [`WritePass`]).
#[async_trait::async_trait]
pub trait WriteObserver: Send + Sync {
    /// Inspects the files just written and returns sections to append (often none).
    async fn after_write(&self, ctx: &CallCtx, touched: &[PathBuf]) -> Vec<Section>;

    /// [`WriteObserver::after_write`] within the registry's pass over a write's observers:
    /// `pass` orders it against the others (an observer that asks the servers about the
    /// written text waits with [`WritePass::wait_servers_synced`]). The default ignores it.
    async fn after_write_in(
        &self,
        ctx: &CallCtx,
        touched: &[PathBuf],
        pass: &WritePass,
    ) -> Vec<Section> {
        let _ = pass;
        self.after_write(ctx, touched).await
    }

    /// Whether this observer brings the language servers to the written text after first
    /// showing them the text from before (the others' questions about the written text
    /// wait for it: [`WritePass::servers_synced`]). The default is no.
    fn syncs_servers(&self) -> bool {
        false
    }

    /// Predicts what writing `proposed` would make [`WriteObserver::after_write`] report,
    /// without anything touching the disk, and names what the prediction cannot cover.
    /// Must leave the observer's own state (a diagnostics ledger, a server's view of the
    /// files) as it was. The default predicts nothing.
    async fn preview(&self, ctx: &CallCtx, proposed: &[ProposedFile]) -> PreviewReport {
        let _ = (ctx, proposed);
        PreviewReport::default()
    }
}

/// A request for permission to run a write or exec tool.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// The tool.
    pub tool: String,
    /// Its tier.
    pub tier: Tier,
    /// The arguments as given.
    pub args: Value,
    /// The surface the call came through.
    pub surface: Surface,
}

/// An approver's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Go ahead.
    Approved,
    /// Refused, with a reason for the model.
    Denied(String),
}

/// Decides whether write and exec calls may run. Read tools never ask.
#[async_trait::async_trait]
pub trait Approver: Send + Sync {
    /// Decides one call.
    async fn approve(&self, request: &ApprovalRequest) -> Approval;
}

/// Approves everything (the default: the surface already caps what is visible).
#[derive(Debug, Clone, Copy, Default)]
pub struct AutoApprove;

#[async_trait::async_trait]
impl Approver for AutoApprove {
    async fn approve(&self, _request: &ApprovalRequest) -> Approval {
        Approval::Approved
    }
}

/// One line of `agent-tools doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoctorEntry {
    /// The family, e.g. `lsp`.
    pub family: String,
    /// The resource, e.g. `python: pyright-langserver`.
    pub resource: String,
    /// Whether it is usable here.
    pub ok: bool,
    /// Why or why not (which marker, which binary, where looked).
    pub detail: String,
}

/// A tool family wired into a run: its tools, its write observers and its doctor report.
/// Each tool crate exposes one, constructed per run.
#[async_trait::async_trait]
pub trait ToolFamily: Send + Sync {
    /// The family name (`fs`, `lsp`, `ast`, …).
    fn name(&self) -> &str;
    /// The tools it registers.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
    /// Write observers it contributes.
    fn observers(&self) -> Vec<Arc<dyn WriteObserver>> {
        Vec::new()
    }
    /// What it would use here and whether it can (the same discovery the tools use).
    async fn doctor(&self) -> Vec<DoctorEntry> {
        Vec::new()
    }
}
