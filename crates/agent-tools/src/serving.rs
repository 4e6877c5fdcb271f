//! How an MCP server (stdio or HTTP) gets its runs: the registry of a [`Toolbox`] opened
//! once the client is known, so both transports build runs the same way.

use std::sync::Arc;

use crate::{Toolbox, ToolboxOptions};

/// A factory that opens a [`Toolbox`] from `opts` — with the client's elicitor, when it can
/// show forms — and hands its registry to the MCP server.
pub fn mcp_registry_factory(opts: ToolboxOptions) -> tools_mcp::RegistryFactory {
    Arc::new(move |elicitor| {
        let mut opts = opts.clone();
        opts.elicitor = elicitor;
        Box::pin(async move { Ok(Arc::clone(Toolbox::open(opts).await?.registry())) })
    })
}

/// The run factory for `tools-serve`: each session of a workspace opens a toolbox from
/// `base` at that workspace's root (with a fresh conversation id), trusted when `base` or
/// the workspace is.
#[cfg(feature = "serve")]
pub fn serve_run_factory(base: ToolboxOptions) -> tools_serve::RunFactory {
    Arc::new(move |workspace| {
        let mut opts = base.clone();
        opts.root = workspace.root.clone();
        opts.conversation_id = None;
        opts.trusted = base.trusted || workspace.trusted;
        mcp_registry_factory(opts)
    })
}
