//! The `agent-tools` binary: `mcp` (the main job), `tools`, `call`, `doctor`, `servers`.

#![deny(clippy::print_stdout)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use agent_tools::{ApproveMode, Toolbox, ToolboxOptions, WorkspaceLanguages, render_doctor};
use clap::{Parser, Subcommand};
use tools_core::{CallError, Surface, ToolError};

#[cfg(feature = "serve")]
#[path = "cli/json_log.rs"]
mod json_log;
#[cfg(feature = "serve")]
#[path = "cli/serve.rs"]
mod serve;

#[cfg(feature = "lsp")]
#[path = "cli/servers.rs"]
mod servers;

#[cfg(feature = "lsp")]
#[path = "cli/daemon.rs"]
mod daemon;

#[derive(Parser)]
#[command(
    name = "agent-tools",
    version,
    about = "Server-bound tools for coding agents, over MCP or one call at a time."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone)]
struct RunArgs {
    /// Workspace root (default: the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Configuration file (default: agent-tools.toml at the root, if present).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Trust this workspace: let its agent-tools.toml name programs and let its own
    /// binaries, interpreters and build scripts run (default: only when the root is listed
    /// under [trust] roots in the user's configuration: ~/.config/agent-tools/config.toml,
    /// %APPDATA%\agent-tools\config.toml on Windows).
    #[arg(long)]
    trust: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Serve one run over MCP on stdin/stdout.
    Mcp {
        #[command(flatten)]
        run: RunArgs,
        /// Which tools the client sees: full, plan or read-only.
        #[arg(long, default_value = "full", value_parser = parse_surface)]
        surface: Surface,
        /// Where `ask_user` questions go besides the client's elicitation: `tty` draws them
        /// on the controlling terminal.
        #[arg(long, value_parser = ["tty"])]
        ask: Option<String>,
        /// Write and exec calls: `auto` runs them, `deny` refuses them, `ask` shows a yes/no
        /// card through the question gate (refused when no human is attached).
        #[arg(long, default_value = "auto", value_parser = parse_approve)]
        approve: ApproveMode,
        /// Start this conversation's language servers in this process instead of taking
        /// them from the per-user daemon (which keeps them warm between conversations; off
        /// for good with `[daemon] enabled = false` in the user's configuration).
        #[arg(long)]
        no_daemon: bool,
    },
    /// The per-user daemon that keeps language servers warm between conversations:
    /// `status` shows its servers and who shares them, `stop` stops it.
    #[cfg(feature = "lsp")]
    Daemon {
        #[command(subcommand)]
        action: daemon::DaemonAction,
    },
    /// Serve many MCP clients over streamable HTTP, one run per session.
    #[cfg(feature = "serve")]
    #[command(after_help = serve::UNTRUSTED_HELP)]
    Serve(Box<serve::ServeArgs>),
    /// List the tools a surface sees, with tiers and schemas, as JSON.
    Tools {
        #[command(flatten)]
        run: RunArgs,
        /// full, plan or read-only.
        #[arg(long, default_value = "full", value_parser = parse_surface)]
        surface: Surface,
    },
    /// Open a run, make one call, print the result, close the run.
    Call {
        /// The tool name.
        tool: String,
        /// The arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        #[command(flatten)]
        run: RunArgs,
        /// full, plan or read-only.
        #[arg(long, default_value = "full", value_parser = parse_surface)]
        surface: Surface,
        /// Print the structured result as JSON instead of the text.
        #[arg(long)]
        json: bool,
    },
    /// Report the backing resources: wired or not, and whether they can be used here. Those
    /// for this workspace's languages come first; the rest are folded into one line per
    /// family unless `--all` is given.
    Doctor {
        #[command(flatten)]
        run: RunArgs,
        /// List every resource in full, including those for languages the workspace does not
        /// hold.
        #[arg(long)]
        all: bool,
    },
    /// List the language servers of the table with their state here (needed? where is each
    /// program: project, PATH, the server cache, missing?), or install them with
    /// `servers install NAME…` / `servers install --needed`.
    #[cfg(feature = "lsp")]
    Servers {
        #[command(flatten)]
        run: RunArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(subcommand)]
        action: Option<servers::ServersAction>,
    },
}

fn parse_approve(s: &str) -> Result<ApproveMode, String> {
    match s {
        "auto" => Ok(ApproveMode::Auto),
        "ask" => Ok(ApproveMode::Ask),
        "deny" => Ok(ApproveMode::Deny),
        other => Err(format!(
            "unknown approval mode `{other}`; use ask, auto or deny"
        )),
    }
}

fn parse_surface(s: &str) -> Result<Surface, String> {
    Surface::parse(s).ok_or_else(|| format!("unknown surface `{s}`; use full, plan or read-only"))
}

fn options(run: &RunArgs) -> Result<ToolboxOptions, ToolError> {
    let root = match &run.root {
        Some(r) => r.clone(),
        None => std::env::current_dir()
            .map_err(|e| ToolError::internal(format!("no current directory: {e}")))?,
    };
    let mut opts = ToolboxOptions::new(root);
    opts.config_path = run.config.clone();
    opts.trusted = run.trust;
    Ok(opts)
}

/// Options for the one-shot commands: questions are drawn on the controlling terminal (a
/// call without one fails at once); a language server starts only for a call that needs it.
fn cli_options(run: &RunArgs) -> Result<ToolboxOptions, ToolError> {
    let mut opts = options(run)?;
    opts.ask_tty = true;
    opts.servers_on_demand = true;
    Ok(opts)
}

fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
}

async fn main_async(cli: Cli) -> Result<ExitCode, ToolError> {
    match cli.command {
        Command::Mcp {
            run,
            surface,
            ask,
            approve,
            no_daemon,
        } => {
            let mut opts = options(&run)?;
            opts.ask_tty = ask.as_deref() == Some("tty");
            opts.approve = approve;
            #[cfg(feature = "lsp")]
            if !no_daemon {
                opts.daemon = Some(Arc::new(daemon::client_for));
            }
            #[cfg(not(feature = "lsp"))]
            let _ = no_daemon;
            // Fail fast on a bad root or configuration, before the client connects.
            tools_core::Workspace::new(&opts.root)?;
            tools_core::Config::load(&opts.root, opts.config_path.as_deref())?;
            let factory: tools_mcp::RegistryFactory = Arc::new(move |elicitor| {
                let mut opts = opts.clone();
                opts.elicitor = elicitor;
                Box::pin(async move { Ok(Arc::clone(Toolbox::open(opts).await?.registry())) })
            });
            let signal = Arc::new(std::sync::atomic::AtomicI32::new(0));
            let seen = Arc::clone(&signal);
            let shutdown = async move {
                let sig = termination_signal().await;
                seen.store(sig, std::sync::atomic::Ordering::SeqCst);
            };
            tools_mcp::McpServer::new(surface, factory)
                .serve_stdio_until(shutdown)
                .await?;
            Ok(exit_code_for(
                signal.load(std::sync::atomic::Ordering::SeqCst),
            ))
        }
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::serve(*args).await,
        Command::Tools { run, surface } => {
            let toolbox = Toolbox::open(cli_options(&run)?).await?;
            let list: Vec<_> = toolbox
                .tools(surface)
                .into_iter()
                .map(|t| {
                    serde_json::json!({
                        "name": t.name, "tier": t.tier, "parallel_safe": t.parallel_safe,
                        "description": t.description, "input_schema": t.input_schema,
                    })
                })
                .collect();
            toolbox.close().await;
            out(&serde_json::to_string_pretty(&list).unwrap_or_default());
            Ok(ExitCode::SUCCESS)
        }
        Command::Call {
            tool,
            args,
            run,
            surface,
            json,
        } => {
            let args: serde_json::Value = serde_json::from_str(&args).map_err(|e| {
                ToolError::invalid("args", format!("--args is not valid JSON: {e}"))
            })?;
            let toolbox = Toolbox::open(cli_options(&run)?).await?;
            let result = tokio::select! {
                r = toolbox.call(surface, &tool, args) => r,
                sig = termination_signal() => {
                    toolbox.close().await;
                    return Ok(exit_code_for(sig));
                }
            };
            toolbox.close().await;
            match result {
                Ok(o) => {
                    if json {
                        out(&serde_json::to_string_pretty(
                            &o.full_structured().unwrap_or_default(),
                        )
                        .unwrap_or_default());
                    } else {
                        out(&o.full_text());
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Err(CallError::Tool(e)) => {
                    eprintln!("{e}");
                    Ok(ExitCode::from(1))
                }
                Err(e) => {
                    eprintln!("{e}");
                    Ok(ExitCode::from(2))
                }
            }
        }
        #[cfg(feature = "lsp")]
        Command::Servers { run, json, action } => servers::servers(&run, json, action).await,
        #[cfg(feature = "lsp")]
        Command::Daemon { action } => daemon::daemon(action).await,
        Command::Doctor { run, all } => {
            let toolbox = Toolbox::open(cli_options(&run)?).await?;
            let mut text = format!(
                "agent-tools {} at {}\nfamilies compiled in: {}\nconfiguration: {}\n",
                env!("CARGO_PKG_VERSION"),
                toolbox.run().root().display(),
                agent_tools::COMPILED_FAMILIES.join(", "),
                toolbox
                    .run()
                    .config()
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "defaults (no agent-tools.toml)".into()),
            );
            let wired: Vec<&str> = toolbox
                .registry()
                .families()
                .iter()
                .map(|f| f.name())
                .collect();
            for fam in agent_tools::COMPILED_FAMILIES {
                if !wired.contains(fam) {
                    text.push_str(&format!(
                        "[{fam}] not wired for this run (its registration rule says no)\n"
                    ));
                }
            }
            let tools: Vec<String> = toolbox
                .tools(Surface::FULL)
                .into_iter()
                .map(|t| format!("{} ({})", t.name, t.tier))
                .collect();
            text.push_str(&format!(
                "tools on the full surface: {}\n",
                tools.join(", ")
            ));
            #[cfg(feature = "lsp")]
            {
                text.push_str(&daemon::doctor_line().await);
                text.push('\n');
            }
            let languages = WorkspaceLanguages::scan(toolbox.run().root());
            text.push_str(&render_doctor(&toolbox.doctor().await, &languages, all));
            toolbox.close().await;
            out(&text);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Resolves with the signal number when SIGTERM, SIGINT or SIGHUP arrives (on Windows the
/// console's Ctrl-C, Ctrl-Break or closing, under the same numbers). The caller then closes
/// its run (every process tree it started is killed) and exits. If the handlers cannot be
/// installed, it never resolves (the default actions stay in place).
async fn termination_signal() -> i32 {
    let number = tools_core::platform::StopRequests::install(true)
        .recv()
        .await;
    tracing::info!("signal {number} received: closing the run");
    number
}

/// The shell convention: 128 + the signal number; success when no signal ended the run.
fn exit_code_for(signal: i32) -> ExitCode {
    if signal == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(u8::try_from(128 + signal).unwrap_or(1))
    }
}

fn main() -> ExitCode {
    // Started again as the watchdog of a server (see `run`): that is all this process does.
    tools_core::watchdog::run_if_asked();
    let cli = Cli::parse();
    #[cfg(feature = "serve")]
    if let Command::Serve(args) = &cli.command
        && args.json_logs()
    {
        json_log::init();
        return run(cli);
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("AGENT_TOOLS_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp=error")),
        )
        .init();
    run(cli)
}

/// Runs the command once logging is set up.
fn run(cli: Cli) -> ExitCode {
    // A watchdog ends the run's processes even if this server is killed with SIGKILL. A
    // conversation served by the daemon may never start a process of its own: its watchdog
    // starts with its first child. Any other command forks one now, before any thread.
    let started = match &cli.command {
        Command::Mcp {
            no_daemon: false, ..
        } => tools_core::watchdog::start_with_first_child(),
        _ => tools_core::watchdog::start(),
    };
    if let Err(e) = started {
        tracing::warn!("no watchdog for the run's processes: {e}");
    }
    // Orphans of the run's processes (a cell's `setsid` double fork) come back here, so
    // closing the run ends them too.
    if let Err(e) = tools_core::sweep::adopt_orphans() {
        tracing::warn!("detached grandchildren cannot be adopted: {e}");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = match runtime.block_on(main_async(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("agent-tools: {e}");
            ExitCode::FAILURE
        }
    };
    // A read of a standard input that is not a pipe cannot be cancelled; do not wait on it.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    code
}
