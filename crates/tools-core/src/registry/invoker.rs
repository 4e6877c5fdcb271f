//! Calls from inside a tool to other tools of the same run, as the same surface, through
//! the registry's whole guard chain (the eval bridge uses it).

use std::sync::Weak;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::preview::{PreviewReport, ProposedFile};
use crate::tool::Progress;
use crate::{CallCtx, Surface, ToolError, ToolOutput};

use super::{CallError, CallOptions, Registry};

/// Calls other tools of the same run **as the same surface**, through the whole guard chain
/// (approval and write observers included). The eval bridge uses it.
#[derive(Clone)]
pub struct Invoker {
    pub(super) registry: Weak<Registry>,
    pub(super) surface: Surface,
    pub(super) stack: Vec<String>,
}

impl std::fmt::Debug for Invoker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Invoker")
            .field("surface", &self.surface)
            .field("stack", &self.stack)
            .finish()
    }
}

impl Invoker {
    /// An invoker bound to nothing; every call fails (for tools called outside a registry).
    pub fn detached(surface: Surface) -> Self {
        Invoker {
            registry: Weak::new(),
            surface,
            stack: Vec::new(),
        }
    }
    /// The surface calls go through.
    pub fn surface(&self) -> Surface {
        self.surface
    }
    /// Calls `name`. An unknown (or hidden) tool is a [`ToolError::NotAvailable`] here.
    pub async fn call(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        self.call_with_progress(name, args, Progress::none()).await
    }
    /// [`Invoker::call`] forwarding progress.
    pub async fn call_with_progress(
        &self,
        name: &str,
        args: Value,
        progress: Progress,
    ) -> Result<ToolOutput, ToolError> {
        self.call_inner(name, args, progress, None).await
    }
    /// [`Invoker::call_with_progress`] whose call sees `cancel` as its cancellation token
    /// (a child of the calling tool's token, so cancelling the outer call reaches it).
    pub async fn call_cancellable(
        &self,
        name: &str,
        args: Value,
        progress: Progress,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        self.call_inner(name, args, progress, Some(cancel)).await
    }
    /// What the run's write observers predict for `proposed` (see [`Registry::preview`]);
    /// an empty report when no registry is attached.
    pub async fn preview(&self, ctx: &CallCtx, proposed: &[ProposedFile]) -> PreviewReport {
        match self.registry.upgrade() {
            Some(reg) => reg.preview(ctx, proposed).await,
            None => PreviewReport::default(),
        }
    }
    async fn call_inner(
        &self,
        name: &str,
        args: Value,
        progress: Progress,
        cancel: Option<CancellationToken>,
    ) -> Result<ToolOutput, ToolError> {
        let Some(reg) = self.registry.upgrade() else {
            return Err(ToolError::not_available(
                "no tool registry is attached to this call",
            ));
        };
        let opts = CallOptions {
            progress,
            cancel,
            stack: self.stack.clone(),
        };
        match reg.call_with(self.surface, name, args, opts).await {
            Ok(o) => Ok(o),
            Err(CallError::Tool(e)) => Err(e),
            Err(e @ CallError::UnknownTool { .. }) => Err(ToolError::not_available(e.to_string())),
        }
    }
}
