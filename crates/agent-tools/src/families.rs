//! Wiring of each enabled family into a run's registry: one block per feature.

use std::sync::Arc;

use tools_core::{RegistryBuilder, Run, ToolError};

use crate::ToolboxOptions;

/// The families compiled in.
pub(crate) const COMPILED: &[&str] = &[
    // One line per family feature, in wiring order.
    #[cfg(feature = "fs")]
    "fs",
    #[cfg(feature = "vibe")]
    "vibe",
    #[cfg(feature = "ask")]
    "ask",
    #[cfg(feature = "lsp")]
    "lsp",
    #[cfg(feature = "eval")]
    "eval",
    #[cfg(feature = "debug")]
    "debug",
    #[cfg(feature = "ast")]
    "ast",
];

/// Adds every enabled family to `builder`. A family whose registration rule says no (no
/// worker CLIs configured, no question gate) adds nothing.
#[allow(unused_mut, unused_variables)]
pub(crate) fn wire(
    mut builder: RegistryBuilder,
    run: &Arc<Run>,
    opts: &ToolboxOptions,
) -> Result<RegistryBuilder, ToolError> {
    // One block per family feature (and a line in COMPILED above).
    #[cfg(feature = "fs")]
    {
        builder = builder.family(tools_fs::family(run));
    }
    #[cfg(feature = "vibe")]
    {
        if let Some(family) = tools_vibe::family(run)? {
            builder = builder.family(family);
        }
    }
    #[cfg(feature = "ask")]
    {
        // The gate: the harness's own, else the terminal when asked for, else the MCP
        // client's elicitation when it declared the capability. None: no ask_user, and
        // `--approve ask` denies (fail-closed).
        let gate: Option<Arc<dyn tools_ask::QuestionGate>> =
            match (&opts.question_gate, &opts.elicitor) {
                (Some(g), _) => Some(Arc::clone(g)),
                (None, _) if opts.ask_tty => Some(Arc::new(tools_ask::TerminalGate::new())),
                (None, Some(e)) => Some(Arc::new(tools_ask::ElicitationGate::new(Arc::clone(e)))),
                (None, None) => None,
            };
        let mode = match opts.approve {
            crate::ApproveMode::Auto => None,
            crate::ApproveMode::Ask => Some(tools_ask::ApproveMode::Ask),
            crate::ApproveMode::Deny => Some(tools_ask::ApproveMode::Deny),
        };
        if let Some(mode) = mode {
            builder = builder.approver(Arc::new(tools_ask::approver(run, mode, gate.clone())?));
        }
        if let Some(family) = tools_ask::family(run, gate)? {
            builder = builder.family(family);
        }
    }
    #[cfg(feature = "lsp")]
    {
        // `lsp`, `lsp_rename`, and the diagnostics-on-write observer that every tool
        // reporting `touched` gets. On a pool, the servers are shared with its other runs.
        let family = match &opts.lsp_pool {
            Some(pool) => tools_lsp::family_with_pool(run, Arc::clone(pool))?,
            None => tools_lsp::family(run)?,
        };
        if let Some(family) = family {
            builder = builder.family(family);
        }
    }
    #[cfg(feature = "eval")]
    {
        // `eval`: the kernel factory (Python and JavaScript kernels start on first use).
        if let Some(family) = tools_eval::family(run)? {
            builder = builder.family(family);
        }
    }
    #[cfg(feature = "debug")]
    {
        // `debug`: the debug-session supervisor (one session per conversation; adapters
        // are found at call time).
        if let Some(family) = tools_debug::family(run)? {
            builder = builder.family(family);
        }
    }
    #[cfg(feature = "ast")]
    {
        // `ast_grep`, `ast_edit`, `resolve`: the bundled tree-sitter grammars.
        if let Some(family) = tools_ast::family(run)? {
            builder = builder.family(family);
        }
    }
    #[cfg(not(feature = "ask"))]
    if opts.approve != crate::ApproveMode::Auto {
        // Without the ask family there is no permission card; refuse rather than approve.
        builder = builder.approver(Arc::new(DenyAll));
    }
    Ok(builder)
}

/// Refuses every write and exec call (`--approve` other than `auto` in a build without `ask`).
#[cfg(not(feature = "ask"))]
struct DenyAll;

#[cfg(not(feature = "ask"))]
#[tools_core::async_trait]
impl tools_core::Approver for DenyAll {
    async fn approve(&self, _request: &tools_core::ApprovalRequest) -> tools_core::Approval {
        tools_core::Approval::Denied(
            "this build has no permission cards (feature `ask` is off), so write and exec calls are refused".into(),
        )
    }
}
