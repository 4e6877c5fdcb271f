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
    #[cfg(feature = "test")]
    "test",
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
            None if opts.servers_on_demand => tools_lsp::family_on_demand(run)?,
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
    #[cfg(feature = "test")]
    {
        // `test`: the project's own runner per language (found at call time).
        if let Some(family) = tools_test::family(run)? {
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

#[cfg(all(test, feature = "lsp"))]
mod tests {
    use tools_core::{Config, Surface};

    use crate::{Toolbox, ToolboxOptions, UserConfig};

    /// The first line of `lsp status` in `toolbox`.
    async fn status_line(toolbox: &Toolbox) -> String {
        let out = match toolbox
            .call(
                Surface::FULL,
                "lsp",
                serde_json::json!({"action": "status"}),
            )
            .await
        {
            Ok(out) => out,
            Err(e) => panic!("lsp status failed: {e}"),
        };
        out.text.lines().next().unwrap_or_default().to_string()
    }

    #[tokio::test]
    async fn a_run_for_one_command_starts_its_servers_only_on_demand() {
        if tools_core::testing::require_binary("pyright", "pyright-langserver").is_none() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[project]\nname = \"w\"\nversion = \"0.1.0\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("main.py"),
            "def add(a: int) -> int:\n    return a\n",
        )
        .unwrap();
        let open = |on_demand: bool| {
            let mut opts = ToolboxOptions::new(dir.path());
            opts.config = Some(
                Config::parse(
                    "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n",
                )
                .unwrap(),
            );
            opts.user_config = Some(UserConfig::default());
            opts.trusted = true;
            opts.servers_on_demand = on_demand;
            Toolbox::open(opts)
        };
        let session = open(false).await.unwrap();
        let one_shot = open(true).await.unwrap();
        // The session's run starts pyright by itself…
        let mut line = String::new();
        for _ in 0..600 {
            line = status_line(&session).await;
            if line == "python: running pyright-langserver for root ." {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(line, "python: running pyright-langserver for root .");
        // …the one-shot command's run, opened at the same time, has not.
        let line = status_line(&one_shot).await;
        assert!(
            line.starts_with("python: not started yet for root .; pyright-langserver resolves at ")
                && line.ends_with(" and starts on the first query"),
            "{line}"
        );
        session.close().await;
        one_shot.close().await;
    }
}
