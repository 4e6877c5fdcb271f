//! `agent-tools servers`: every language-server entry of the table with its state for this
//! workspace (needed here? where is each program: project, PATH, the server cache, missing?),
//! and `servers install NAME… | --needed`, which installs servers into the user's cache with
//! their ecosystem's package manager. Progress goes to stderr, the listing and the summary
//! to stdout.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agent_tools::{Toolbox, ToolboxOptions};
use tools_core::ToolError;
use tools_lsp::acquire::{Chosen, InstallOutcome, Servers, render_states, states_json};

/// What `servers` does besides listing.
#[derive(clap::Subcommand)]
pub enum ServersAction {
    /// Install servers into the user's cache ($XDG_CACHE_HOME/agent-tools/servers), each at
    /// the version the table pins. NAME is a package (`pyright`), a program
    /// (`pyright-langserver`) or an entry (`python`: its first installable server).
    Install {
        /// The servers to install.
        names: Vec<String>,
        /// Install a server for every language present in the workspace that has none.
        #[arg(long)]
        needed: bool,
        /// Seconds one install may take (default: install_timeout_ms of [lsp], 300 s).
        #[arg(long)]
        timeout: Option<u64>,
        #[command(flatten)]
        run: super::RunArgs,
    },
}

fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", text.trim_end());
    let _ = stdout.flush();
}

fn progress(line: &str) {
    eprintln!("{line}");
}

/// Runs `servers` for the workspace of `run` (or of the run flags given after `install`).
pub async fn servers(
    run: &super::RunArgs,
    json: bool,
    action: Option<ServersAction>,
) -> Result<ExitCode, ToolError> {
    let run_args = match &action {
        Some(ServersAction::Install { run: inner, .. }) => merged(run, inner),
        None => run.clone(),
    };
    let opts: ToolboxOptions = super::cli_options(&run_args)?;
    let toolbox = Toolbox::open(opts).await?;
    let result = match action {
        None => list(toolbox.run(), json),
        Some(ServersAction::Install {
            names,
            needed,
            timeout,
            ..
        }) => install(toolbox.run(), names, needed, timeout, json).await,
    };
    toolbox.close().await;
    result
}

/// The run flags given after `install` win over those given before it.
fn merged(outer: &super::RunArgs, inner: &super::RunArgs) -> super::RunArgs {
    super::RunArgs {
        root: inner.root.clone().or_else(|| outer.root.clone()),
        config: inner.config.clone().or_else(|| outer.config.clone()),
        trust: inner.trust || outer.trust,
    }
}

fn list(run: &Arc<tools_core::Run>, json: bool) -> Result<ExitCode, ToolError> {
    let servers = Servers::for_run(run)?;
    let states = servers.states();
    let cache = Some(servers.cache().root());
    if json {
        out(&serde_json::to_string_pretty(&states_json(&states, cache)).unwrap_or_default());
    } else {
        out(&render_states(&states, cache));
    }
    Ok(ExitCode::SUCCESS)
}

async fn install(
    run: &Arc<tools_core::Run>,
    names: Vec<String>,
    needed: bool,
    timeout: Option<u64>,
    json: bool,
) -> Result<ExitCode, ToolError> {
    let mut servers = Servers::for_run(run)?;
    if let Some(secs) = timeout {
        servers = servers.with_timeout(Duration::from_secs(secs.max(1)));
    }
    if names.is_empty() && !needed {
        return Err(ToolError::invalid_args(
            "name the servers to install (e.g. `agent-tools servers install pyright`), or give --needed",
        ));
    }
    let mut chosen: Vec<Chosen> = Vec::new();
    let mut summary: Vec<String> = Vec::new();
    let mut results: Vec<serde_json::Value> = Vec::new();
    let mut failed = false;
    for name in &names {
        chosen.push(servers.choose(name)?);
    }
    if needed {
        for c in servers.needed() {
            match c {
                Ok(c) => chosen.push(c),
                Err(line) => {
                    summary.push(line.clone());
                    results.push(serde_json::json!({"state": "not_installable", "detail": line}));
                    failed = true;
                }
            }
        }
        if chosen.is_empty() && summary.is_empty() {
            summary.push(
                "nothing to install: every language present in the workspace has a server".into(),
            );
        }
    }
    chosen.dedup_by(|a, b| a.recipe() == b.recipe());
    let total = chosen.len();
    for (i, c) in chosen.iter().enumerate() {
        let Some(recipe) = c.recipe() else { continue };
        let tag = format!("[{}/{total}] {}", i + 1, recipe.package);
        let note = |line: &str| progress(&format!("{tag}: {line}"));
        match servers.install(recipe, &note).await {
            Ok(report) => {
                let program = c.candidate.program();
                let found = servers.search().find(program, run.root());
                let where_now = match &found {
                    Ok(f) => format!(
                        "{program} now resolves from {} ({})",
                        f.origin,
                        f.path.display()
                    ),
                    Err(e) => format!("but {e}"),
                };
                let what = match report.outcome {
                    InstallOutcome::Installed => {
                        format!("installed in {:.1} s", report.elapsed.as_secs_f64())
                    }
                    InstallOutcome::AlreadyInstalled => "already installed".to_string(),
                };
                progress(&format!("{tag}: {what}"));
                summary.push(format!("{}: {recipe} {what}; {where_now}", c.language));
                results.push(serde_json::json!({
                    "entry": c.language, "package": recipe.package, "version": recipe.version,
                    "manager": recipe.manager.name(),
                    "state": match report.outcome { InstallOutcome::Installed => "installed", InstallOutcome::AlreadyInstalled => "already_installed" },
                    "seconds": report.elapsed.as_secs_f64(),
                    "dir": report.dir.display().to_string(),
                    "programs": report.programs,
                }));
            }
            Err(e) => {
                progress(&format!("{tag}: failed"));
                summary.push(format!("{}: {e}", c.language));
                results.push(serde_json::json!({
                    "entry": c.language, "package": recipe.package, "version": recipe.version,
                    "state": "failed", "detail": e.to_string(),
                }));
                failed = true;
            }
        }
    }
    if json {
        out(&serde_json::to_string_pretty(&serde_json::json!({
            "cache": servers.cache().root().display().to_string(),
            "results": results,
        }))
        .unwrap_or_default());
    } else {
        out(&summary.join("\n"));
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
